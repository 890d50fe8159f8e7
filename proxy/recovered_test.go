package proxy

import (
	"log/slog"
	"strings"
	"testing"
)

func TestRecoveredLogsAndGoesOn(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer recovered(log, "a test goroutine")
		var m map[string]int
		m["boom"] = 1 // a nil-map write panics
	}()
	<-done
	if s := buf.String(); !strings.Contains(s, "recovered from a panic") || !strings.Contains(s, "a test goroutine") {
		t.Errorf("log = %q", s)
	}
}
