package chat

import (
	"fmt"
	"testing"
	"time"
)

// TestLeaveNotes: a page's report counts only for a call that started before it, and the
// reports kept are bounded.
func TestLeaveNotes(t *testing.T) {
	var l leaveNotes
	t0 := time.Now()
	l.note("p1", t0)
	if !l.since("p1", t0.Add(-time.Second)) {
		t.Error("a report after the call started was not taken")
	}
	if l.since("p1", t0.Add(time.Second)) || l.since("p2", t0.Add(-time.Second)) {
		t.Error("a report before the call, or of another page, was taken")
	}
	for i := range maxLeaveNotes + 20 {
		l.note(fmt.Sprint("q", i), t0)
	}
	if n := len(l.at); n > maxLeaveNotes {
		t.Errorf("%d reports kept, want at most %d", n, maxLeaveNotes)
	}
}
