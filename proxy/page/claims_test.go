package page

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/remixproxy/remixproxy/panel"
)

// claimFixture serves a hub's page-agent channel and dials it as page agents do.
type claimFixture struct {
	t   *testing.T
	h   *Hub
	srv *httptest.Server
}

func newClaimFixture(t *testing.T) *claimFixture {
	h := New(Config{Secret: []byte("install secret")})
	srv := httptest.NewServer(http.HandlerFunc(h.ServeAgentWS))
	t.Cleanup(srv.Close)
	return &claimFixture{t: t, h: h, srv: srv}
}

func (f *claimFixture) mint(pageURL string) string {
	u, _ := url.Parse(pageURL)
	return f.h.Mint(u, time.Now())
}

// agentConn is a dialled page agent that keeps reading (so it answers pings, as a browser's
// socket does); closed receives how the hub closed it.
type agentConn struct {
	*websocket.Conn
	closed chan websocket.CloseError
}

// dial opens a socket with token and resume key (may be "") from the token's origin and
// returns it with the first message (welcome) or the close that refused it.
func (f *claimFixture) dial(token, resume string) (*agentConn, map[string]string, websocket.CloseError) {
	f.t.Helper()
	u, err := f.h.Verify(token)
	if err != nil {
		f.t.Fatal(err)
	}
	protocol := panel.AgentProtocolPrefix + token
	if resume != "" {
		protocol += "~" + resume
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.srv.URL, "http")+"/agent/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {u.Scheme + "://" + u.Host}}, Subprotocols: []string{protocol}})
	if err != nil {
		f.t.Fatalf("dial: %v", err)
	}
	f.t.Cleanup(func() { c.CloseNow() })
	a := &agentConn{Conn: c, closed: make(chan websocket.CloseError, 1)}
	first := make(chan map[string]string, 1)
	go func() {
		for n := 0; ; n++ {
			_, b, err := c.Read(context.Background())
			if err != nil {
				var ce websocket.CloseError
				errors.As(err, &ce)
				if n == 0 {
					first <- nil
				}
				a.closed <- ce
				return
			}
			if n == 0 {
				var m map[string]string
				json.Unmarshal(b, &m)
				first <- m
			}
		}
	}()
	select {
	case m := <-first:
		if m == nil {
			return a, nil, <-a.closed
		}
		return a, m, websocket.CloseError{}
	case <-time.After(5 * time.Second):
		f.t.Fatal("no first message within 5s")
		return nil, nil, websocket.CloseError{}
	}
}

// closedWith waits for c to be closed by the hub and returns the close.
func closedWith(t *testing.T, c *agentConn) websocket.CloseError {
	t.Helper()
	select {
	case ce := <-c.closed:
		return ce
	case <-time.After(5 * time.Second):
		t.Fatal("the socket was not closed by the hub within 5s")
		return websocket.CloseError{}
	}
}

func (f *claimFixture) live() int { return len(f.h.List()) }

// TestTokenOpensOneSession: the first socket with a page token gets a session and a resume key;
// a second socket without the key while that session is live is refused, and the first stays; a
// wrong key is refused as a forgery; once the first has gone, the token opens again.
func TestTokenOpensOneSession(t *testing.T) {
	f := newClaimFixture(t)
	tok := f.mint("https://shop.test/cart")
	first, welcome, ce := f.dial(tok, "")
	if welcome["type"] != "welcome" || welcome["resume"] == "" {
		t.Fatalf("first socket: %v %v, want a welcome with a resume key", welcome, ce)
	}
	if welcome["resume"] != f.h.ResumeKey(tok) {
		t.Fatalf("resume key %q, want the hub's ResumeKey", welcome["resume"])
	}

	if _, m, ce := f.dial(tok, "not the key"); m != nil || ce.Code != CloseBadToken {
		t.Errorf("a wrong resume key: %v %v, want close %d", m, ce, CloseBadToken)
	}
	_, m, ce := f.dial(tok, "")
	if m != nil || ce.Code != CloseRefused || !strings.Contains(ce.Reason, "reload this tab") {
		t.Fatalf("a second socket with the token: %v %v, want refused (%d) with a reason to reload", m, ce, CloseRefused)
	}
	select {
	case ce := <-first.closed:
		t.Fatalf("the first session was closed (%v) by the second socket", ce)
	case <-time.After(300 * time.Millisecond):
	}
	if f.live() != 1 {
		t.Fatalf("%d live sessions, want the first one still", f.live())
	}

	first.Close(websocket.StatusNormalClosure, "pagehide")
	for deadline := time.Now().Add(5 * time.Second); f.live() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first session did not end")
		}
	}
	if _, m, ce := f.dial(tok, ""); m["type"] != "welcome" {
		t.Errorf("the token after its session went: %v %v, want a welcome", m, ce)
	}
}

// TestTokenReconnects: the page agent reconnects with its resume key while the hub still holds
// its old socket (the new session replaces it, with no burn), and a token whose session has gone
// opens a new one without the key (a document restored from the HTTP cache on a history
// navigation). Two tokens minted for one URL in the same second are two tokens (two tabs).
func TestTokenReconnects(t *testing.T) {
	f := newClaimFixture(t)
	tok := f.mint("https://shop.test/")
	old, welcome, _ := f.dial(tok, "")
	if welcome == nil {
		t.Fatal("no welcome")
	}
	_, again, ce := f.dial(tok, welcome["resume"])
	if again["type"] != "welcome" {
		t.Fatalf("reconnection with the key: %v %v, want a welcome", again, ce)
	}
	if ce := closedWith(t, old); ce.Code != websocket.StatusNormalClosure {
		t.Errorf("the replaced socket: %v, want a normal closure", ce)
	}
	if n := f.live(); n != 1 {
		t.Fatalf("%d live sessions after the reconnection, want 1", n)
	}

	// The session goes; the same token, without the key, opens a new one.
	c, _, _ := f.dial(f.mint("https://shop.test/other"), "")
	c.Close(websocket.StatusNormalClosure, "pagehide")
	tok2 := f.mint("https://shop.test/other")
	c2, w2, _ := f.dial(tok2, "")
	c2.Close(websocket.StatusNormalClosure, "pagehide")
	for deadline := time.Now().Add(5 * time.Second); f.live() != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d live sessions, want 1 after two closed", f.live())
		}
	}
	if _, m, ce := f.dial(tok2, ""); m["type"] != "welcome" || m["resume"] != w2["resume"] {
		t.Errorf("a token whose session went, without the key: %v %v, want a welcome with the same resume key", m, ce)
	}

	if a, b := f.mint("https://shop.test/"), f.mint("https://shop.test/"); a == b {
		t.Errorf("two tokens for one URL in one second are equal: %s", a)
	}
}

// TestTokenAfterLostWelcome: a page agent whose first socket died unnoticed (it answers no ping)
// reconnects without the key it never got; the hub replaces the dead session instead of burning
// the token.
func TestTokenAfterLostWelcome(t *testing.T) {
	f := newClaimFixture(t)
	tok := f.mint("https://shop.test/")
	u, _ := f.h.Verify(tok)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A socket that never reads again after its handshake: to the hub, a dead page agent.
	dead, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.srv.URL, "http")+"/agent/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {u.Scheme + "://" + u.Host}}, Subprotocols: []string{panel.AgentProtocolPrefix + tok}})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.CloseNow()
	for deadline := time.Now().Add(5 * time.Second); f.live() != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first socket opened no session")
		}
	}
	_, m, ce := f.dial(tok, "")
	if m["type"] != "welcome" {
		t.Fatalf("reconnection without the key after a dead socket: %v %v, want a welcome", m, ce)
	}
	if n := f.live(); n != 1 {
		t.Errorf("%d live sessions, want 1 (the dead one replaced)", n)
	}
}

// TestSessionsPerOriginBounded: an origin holds at most maxSessionsPerOrigin live sessions (a
// page minting tokens for itself cannot start its site's remixlets without bound); another
// origin is not affected, and a place frees when a session goes.
func TestSessionsPerOriginBounded(t *testing.T) {
	f := newClaimFixture(t)
	var conns []*agentConn
	for i := 0; i < maxSessionsPerOrigin; i++ {
		c, m, ce := f.dial(f.mint("http://flood.test/"), "")
		if m == nil {
			t.Fatalf("session %d refused: %v", i, ce)
		}
		conns = append(conns, c)
	}
	if _, m, ce := f.dial(f.mint("http://flood.test/"), ""); m != nil || ce.Code != CloseRefused || !strings.Contains(ce.Reason, "too many") {
		t.Fatalf("session %d of one origin: %v %v, want refused as too many", maxSessionsPerOrigin+1, m, ce)
	}
	if _, m, ce := f.dial(f.mint("https://flood.test/"), ""); m == nil {
		t.Fatalf("another origin (https) was refused: %v", ce)
	}
	conns[0].Close(websocket.StatusNormalClosure, "gone")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, m, _ := f.dial(f.mint("http://flood.test/"), ""); m != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a place did not free when a session went")
		}
	}
}

// TestSessionsPerSiteBounded: a site holds at most maxSessionsPerSite live sessions however
// many origins (subdomains) its pages mint tokens on, so what sessions hold is bounded by the
// proxy, not by the browser's WebSocket limit; another site is not affected.
func TestSessionsPerSiteBounded(t *testing.T) {
	f := newClaimFixture(t)
	for i := 0; i < maxSessionsPerSite; i++ {
		if _, m, ce := f.dial(f.mint(fmt.Sprintf("http://s%d.flood.test/", i)), ""); m == nil {
			t.Fatalf("session %d of the site refused: %v", i, ce)
		}
	}
	if _, m, ce := f.dial(f.mint("http://another.flood.test/"), ""); m != nil || ce.Code != CloseRefused || !strings.Contains(ce.Reason, "too many") {
		t.Fatalf("session %d of one site: %v %v, want refused as too many", maxSessionsPerSite+1, m, ce)
	}
	if _, m, ce := f.dial(f.mint("http://shop.test/"), ""); m == nil {
		t.Fatalf("another site was refused: %v", ce)
	}
}
