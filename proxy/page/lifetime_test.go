package page

import (
	"net/http"
	"net/http/httptest"
	"net/url"
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

	// A token within its lifetime opens its session; the tab lives for hours and reconnects with
	// its key (a dropped socket, the back/forward cache): still welcomed, without the key not.
	tok := mint("https://shop.test/long")
	clock.advance(tokenLifetime - time.Second)
	c, welcome, ce := f.dial(tok, "")
	if welcome["type"] != "welcome" {
		t.Fatalf("a token within its lifetime: %v %v, want a welcome", welcome, ce)
	}
	c.Close(websocket.StatusNormalClosure, "pagehide")
	waitLive(0)
	clock.advance(5 * time.Hour)
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
