package remixlet

import (
	"testing"
	"time"
)

// holdsAddresses, the response taps' fast path (NoteOpenedDocument), says true exactly while the
// guard's table holds an address: after a write, a followed hop and a session's adoption of
// another's addresses, and no longer once the last owner's grace period is over.
func TestHoldsAddressesFollowsTheTable(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	g := &redirectGuard{now: func() time.Time { return now }, grace: time.Minute}
	check := func(step string, want bool) {
		t.Helper()
		g.mu.Lock()
		n := len(g.byKey)
		g.mu.Unlock()
		if got := g.holdsAddresses(); got != want || (n > 0) != want {
			t.Errorf("%s: holdsAddresses() = %v with %d addresses in the table, want %v", step, got, n, want)
		}
	}
	check("empty", false)
	if err := g.add("s1", "https://shop.test/", "rx", nil, []string{"https://shop.test/go?to=a"}); err != nil {
		t.Fatal(err)
	}
	check("after a write", true)
	if err := g.addHop("s2", "https://shop.test/b", "rx", nil, "https://shop.test/next"); err != nil {
		t.Fatal(err)
	}
	check("after a hop of another session", true)
	g.sessionEnded("s1", "https://shop.test/")
	g.sessionStarted("s3", "https://shop.test/") // the same page back: s3 adopts s1's addresses
	check("after an adoption", true)
	g.sessionEnded("s2", "")
	g.sessionEnded("s3", "")
	now = now.Add(2 * time.Minute)
	g.mu.Lock()
	g.sweepLocked(true)
	g.mu.Unlock()
	check("after every grace period", false)
}
