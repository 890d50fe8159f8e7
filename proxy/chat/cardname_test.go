package chat

import (
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/store"
)

func TestMadeText(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		author store.Author
		ago    time.Duration
		want   string
	}{
		{store.AuthorAgent, 10 * time.Second, "made by the agent just now"},
		{store.AuthorAgent, 3 * time.Minute, "made by the agent 3 min ago"},
		{store.AuthorPerson, 5 * time.Hour, "made by you 5 h ago"},
		{store.AuthorPerson, 40 * 24 * time.Hour, "made by you on 24 Oct 2026"},
	} {
		if got := madeText(tt.author, now.Add(-tt.ago), now); got != tt.want {
			t.Errorf("madeText(%s, %v ago) = %q, want %q", tt.author, tt.ago, got, tt.want)
		}
	}
}
