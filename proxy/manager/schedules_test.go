package manager

import (
	"testing"
	"time"
)

func TestInterval(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "1 minute", 5 * time.Minute: "5 minutes", time.Hour: "1 hour", 90 * time.Minute: "90 minutes",
		48 * time.Hour: "2 days", 25 * time.Hour: "25 hours",
	} {
		if got := interval(d); got != want {
			t.Errorf("interval(%v) = %q, want %q", d, got, want)
		}
	}
}
