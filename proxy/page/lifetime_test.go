package page

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestTokenLifetime: a token opens a session without the resume key only within tokenLifetime
// of its response (OPEN-ITEMS 5: Verify ignored the issue time, so a token read once opened its
// page's session at any later time); a live tab's reconnection with its key is not bound by it.
func TestTokenLifetime(t *testing.T) {
	clock := &testClock{t: time.Unix(1_800_000_000, 0)}
	h := New(Config{Secret: []byte("install secret"), Now: clock.now})
	srv := httptest.NewServer(http.HandlerFunc(h.ServeAgentWS))
	t.Cleanup(srv.Close)
	f := &claimFixture{t: t, h: h, srv: srv}
	mint := func(raw string) string {
		u, _ := url.Parse(raw)
		return h.Mint(u, clock.now())
	}
	waitLive := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); f.live() != n; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d live sessions, want %d", f.live(), n)
			}
		}
	}

	// An old token, never used: refused, with a reason that says to reload.
	old := mint("https://shop.test/old")
	clock.advance(tokenLifetime + time.Second)
	if _, m, ce := f.dial(old, ""); m != nil || ce.Code != CloseRefused || !strings.Contains(ce.Reason, "reload this tab") {
		t.Fatalf("a token older than its lifetime: %v %v, want refused (%d) with a reason to reload", m, ce, CloseRefused)
	}
	if f.live() != 0 {
		t.Fatalf("%d live sessions after an expired token", f.live())
	}

	// A token within its lifetime opens its session; the tab lives for hours, then reconnects
	// with its key (a dropped socket, the back/forward cache): still welcomed, without the key not.
	tok := mint("https://shop.test/long")
	clock.advance(tokenLifetime - time.Second)
	c, welcome, ce := f.dial(tok, "")
	if welcome["type"] != "welcome" {
		t.Fatalf("a token within its lifetime: %v %v, want a welcome", welcome, ce)
	}
	clock.advance(5 * time.Hour)
	c.Close(websocket.StatusNormalClosure, "pagehide")
	waitLive(0)
	clock.advance(time.Minute)
	if _, m, ce := f.dial(tok, ""); m != nil || ce.Code != CloseRefused {
		t.Errorf("the long-lived tab's token without the key, hours later: %v %v, want refused", m, ce)
	}
	c2, m, ce := f.dial(tok, welcome["resume"])
	if m["type"] != "welcome" {
		t.Fatalf("the long-lived tab's reconnection with its key: %v %v, want a welcome", m, ce)
	}
	// And while that session is live, a reconnection with the key replaces it, as before.
	if _, m, ce := f.dial(tok, welcome["resume"]); m["type"] != "welcome" {
		t.Fatalf("a second reconnection with the key: %v %v, want a welcome", m, ce)
	}
	if ce := closedWith(t, c2); ce.Code != websocket.StatusNormalClosure {
		t.Errorf("the replaced socket: %v, want a normal closure", ce)
	}
}

// TestResumeKeyBound (OPEN-ITEMS 1b): the resume key reopened its token's session at any time,
// so a page that once read a welcome kept that session for good. Now a key reopens it only
// within resumeGrace of its last session's end, or of the hub's start (a proxy restart).
func TestResumeKeyBound(t *testing.T) {
	clock := &testClock{t: time.Unix(1_800_000_000, 0)}
	secret := []byte("install secret")
	h := New(Config{Secret: secret, Now: clock.now})
	srv := httptest.NewServer(http.HandlerFunc(h.ServeAgentWS))
	t.Cleanup(srv.Close)
	f := &claimFixture{t: t, h: h, srv: srv}
	waitLive := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); f.live() != n; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d live sessions, want %d", f.live(), n)
			}
		}
	}
	u, _ := url.Parse("https://shop.test/held")
	tok := h.Mint(u, clock.now())
	c, welcome, ce := f.dial(tok, "")
	if welcome["type"] != "welcome" {
		t.Fatalf("a fresh token: %v %v, want a welcome", welcome, ce)
	}
	key := welcome["resume"]

	// Within the grace after the session ended: the key reopens it.
	c.Close(websocket.StatusNormalClosure, "pagehide")
	waitLive(0)
	clock.advance(resumeGrace - time.Second)
	c, m, ce := f.dial(tok, key)
	if m["type"] != "welcome" {
		t.Fatalf("the key within its grace: %v %v, want a welcome", m, ce)
	}

	// Past the grace after the session ended: refused, with a reason to reload.
	c.Close(websocket.StatusNormalClosure, "the holder lets go")
	waitLive(0)
	clock.advance(resumeGrace + time.Second)
	if _, m, ce := f.dial(tok, key); m != nil || ce.Code != CloseRefused || !strings.Contains(ce.Reason, "reload this tab") {
		t.Fatalf("the key past its grace: %v %v, want refused (%d) with a reason to reload", m, ce, CloseRefused)
	}

	// A proxy restart: a new hub with the same install secret knows of no end. Within the grace
	// after its start a live tab's key reconnects; past it the key is refused.
	h2 := New(Config{Secret: secret, Now: clock.now})
	srv2 := httptest.NewServer(http.HandlerFunc(h2.ServeAgentWS))
	t.Cleanup(srv2.Close)
	f2 := &claimFixture{t: t, h: h2, srv: srv2}
	clock.advance(time.Minute)
	c2, m, ce := f2.dial(tok, key)
	if m["type"] != "welcome" {
		t.Fatalf("the key right after a restart: %v %v, want a welcome", m, ce)
	}
	c2.Close(websocket.StatusNormalClosure, "gone")
	h3 := New(Config{Secret: secret, Now: clock.now})
	srv3 := httptest.NewServer(http.HandlerFunc(h3.ServeAgentWS))
	t.Cleanup(srv3.Close)
	f3 := &claimFixture{t: t, h: h3, srv: srv3}
	clock.advance(resumeGrace + time.Second)
	if _, m, ce := f3.dial(tok, key); m != nil || ce.Code != CloseRefused {
		t.Fatalf("the key long after a restart: %v %v, want refused (%d)", m, ce, CloseRefused)
	}
}

// TestEndedTableBounded: the table of ended sessions never holds more than maxEnded entries.
func TestEndedTableBounded(t *testing.T) {
	clock := &testClock{t: time.Unix(1_800_000_000, 0)}
	h := New(Config{Secret: []byte("s"), Now: clock.now})
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := 0; i < maxEnded+100; i++ {
		h.noteEndedLocked(strconv.Itoa(i), clock.now())
	}
	if n := len(h.claims.ended); n > maxEnded {
		t.Fatalf("%d entries, want at most %d", n, maxEnded)
	}
	if _, ok := h.claims.ended[strconv.Itoa(maxEnded+99)]; !ok {
		t.Error("the last end noted was dropped")
	}
	clock.advance(resumeGrace + time.Second)
	h.noteEndedLocked("late", clock.now())
	if n := len(h.claims.ended); n != 1 {
		t.Errorf("%d entries after the grace, want the expired ones dropped (1 left)", n)
	}
}
