package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// tokenFrom extracts the page token of the bootstrap in an injected page.
func tokenFrom(t *testing.T, body []byte) string {
	t.Helper()
	_, tag := stripTag(t, body)
	rest := tag[len(`<script data-remixproxy="`):]
	return rest[:strings.IndexByte(rest, '"')]
}

func (f *fixture) dialWS(rawURL, origin string) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rawURL, protocols := agentProtocol(rawURL)
	c, _, err := websocket.Dial(ctx, rawURL, &websocket.DialOptions{
		HTTPClient:   f.client,
		HTTPHeader:   http.Header{"Origin": {origin}},
		Subprotocols: protocols,
	})
	return c, err
}

// agentProtocol moves a page token (t) and resume key (k) from the page agent socket's address
// rawURL into the subprotocol the page agent offers, as it sends them (the proxy refuses them
// in the address). Other addresses are returned as they are.
func agentProtocol(rawURL string) (string, []string) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Path != "/agent/ws" || !u.Query().Has(panel.TokenParam) {
		return rawURL, nil
	}
	q := u.Query()
	p := panel.AgentProtocolPrefix + q.Get(panel.TokenParam)
	if k := q.Get("k"); k != "" {
		p += "~" + k
	}
	q.Del(panel.TokenParam)
	q.Del("k")
	u.RawQuery = q.Encode()
	return u.String(), []string{p}
}

func readMsg(t *testing.T, c *websocket.Conn) (map[string]any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("message %q is not JSON: %v", b, err)
	}
	return m, nil
}

func send(t *testing.T, c *websocket.Conn, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := c.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func TestAgentChannel(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	_, body := f.get("https://" + siteHost + "/start?x=1")
	token := tokenFrom(t, body)
	wsURL := "wss://remix.proxy/agent/ws?t=" + url.QueryEscape(token)

	c, err := f.dialWS(wsURL, "https://"+siteHost)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.CloseNow()
	m, err := readMsg(t, c)
	if err != nil {
		t.Fatalf("welcome: %v", err)
	}
	if m["type"] != "welcome" || m["url"] != "https://"+siteHost+"/start?x=1" || m["panel"] == "" {
		t.Fatalf("welcome = %v", m)
	}
	panelToken, _ := m["panel"].(string)
	send(t, c, map[string]string{"type": "hello", "url": "https://evil.test/", "title": "T"})
	send(t, c, map[string]string{"type": "nav", "url": "https://" + siteHost + "/next", "kind": "pushState"})
	send(t, c, map[string]string{"type": "nav", "url": "https://evil.test/x", "kind": "pushState"})
	m, err = readMsg(t, c)
	if err != nil || m["type"] != "error" {
		t.Fatalf("cross-origin nav answered %v (%v), want an error message", m, err)
	}
	// A user name in the address: refused too (pushState cannot write one; a page writing to
	// its own session could).
	send(t, c, map[string]string{"type": "nav", "url": "https://ada:pw@" + siteHost + "/creds", "kind": "pushState"})
	m, err = readMsg(t, c)
	if err != nil || m["type"] != "error" {
		t.Fatalf("nav with credentials answered %v (%v), want an error message", m, err)
	}
	st := f.srv.Status()
	if len(st.Sessions) != 1 || st.Sessions[0].URL != "https://"+siteHost+"/next" || st.Sessions[0].Title != "T" {
		t.Errorf("sessions = %+v, want one at /next titled T (the page's claimed hello URL ignored)", st.Sessions)
	}
	if st.AgentConnections != 1 || st.Injected != 1 {
		t.Errorf("counts: connections %d injected %d, want 1 and 1", st.AgentConnections, st.Injected)
	}

	// The panel of the session, shown inside a page of another origin (or of none) than the
	// session's, is refused: the panel names the origin that frames it (panel.FrameOriginParam).
	for _, shownIn := range []string{"", "&for=https://evil.test", "&for=https://www." + siteHost} {
		other, err := f.dialWS("wss://remix.proxy/panel/ws?t="+url.QueryEscape(panelToken)+shownIn, "https://remix.proxy")
		if err != nil {
			t.Fatalf("panel dial %q: %v", shownIn, err)
		}
		if m, err := readMsg(t, other); websocket.CloseStatus(err) != page.CloseRefused {
			t.Errorf("panel shown in %q: got %v (%v), want closed with %d", shownIn, m, err, page.CloseRefused)
		}
		other.CloseNow()
	}

	// The panel follows the session.
	panel, err := f.dialWS("wss://remix.proxy/panel/ws?t="+url.QueryEscape(panelToken)+"&for=https://"+siteHost, "https://remix.proxy")
	if err != nil {
		t.Fatalf("panel dial: %v", err)
	}
	defer panel.CloseNow()
	pm, err := readMsg(t, panel)
	if err != nil || pm["type"] != "state" || pm["connected"] != true || pm["url"] != "https://"+siteHost+"/next" {
		t.Fatalf("panel state = %v (%v)", pm, err)
	}
	c.Close(websocket.StatusNormalClosure, "bye")
	pm, err = readMsg(t, panel)
	if err != nil || pm["connected"] != false {
		t.Fatalf("panel after page left = %v (%v), want connected false", pm, err)
	}
}

func TestAgentChannelRefusals(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	_, body := f.get("https://" + siteHost + "/")
	token := tokenFrom(t, body)
	forged := token[:len(token)-2] + "AA"
	cases := []struct {
		name, url, origin string
		code              websocket.StatusCode
	}{
		{"wrong origin", "wss://remix.proxy/agent/ws?t=" + url.QueryEscape(token), "https://evil.test", page.CloseRefused},
		{"forged token", "wss://remix.proxy/agent/ws?t=" + url.QueryEscape(forged), "https://" + siteHost, page.CloseBadToken},
		{"no token", "wss://remix.proxy/agent/ws", "https://" + siteHost, page.CloseBadToken},
		{"panel from a page", "wss://remix.proxy/panel/ws?t=x", "https://" + siteHost, page.CloseRefused},
		{"panel bad token", "wss://remix.proxy/panel/ws?t=x", "https://remix.proxy", page.CloseBadToken},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := f.dialWS(c.url, c.origin)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer conn.CloseNow()
			_, err = readMsg(t, conn)
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != c.code {
				t.Errorf("got %v, want close %d", err, c.code)
			}
		})
	}
	if n := len(f.srv.Status().Sessions); n != 0 {
		t.Errorf("%d sessions opened by refused connections", n)
	}
}

// TestAgentChannelTokenInSubprotocol: the page agent's token and resume key travel in the
// socket's subprotocol, not its address (a page reads the address of a socket its own policy
// blocks or reports), and the proxy answers that subprotocol, or the browser fails the socket.
func TestAgentChannelTokenInSubprotocol(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	_, body := f.get("https://" + siteHost + "/start")
	token := tokenFrom(t, body)
	dial := func(protocol string) (*websocket.Conn, map[string]any, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, _, err := websocket.Dial(ctx, "wss://remix.proxy/agent/ws", &websocket.DialOptions{
			HTTPClient:   f.client,
			HTTPHeader:   http.Header{"Origin": {"https://" + siteHost}},
			Subprotocols: []string{protocol},
		})
		if err != nil {
			return nil, nil, err
		}
		if got := c.Subprotocol(); got != protocol {
			c.CloseNow()
			return nil, nil, fmt.Errorf("answered subprotocol %q, want %q", got, protocol)
		}
		m, err := readMsg(t, c)
		return c, m, err
	}
	c, m, err := dial(panel.AgentProtocolPrefix + token)
	if err != nil || m["type"] != "welcome" {
		t.Fatalf("first socket: %v, %v; want a welcome", m, err)
	}
	key, _ := m["resume"].(string)
	// The session is live: a second socket needs the resume key, which replaces it.
	c2, m, err := dial(panel.AgentProtocolPrefix + token + "~" + key)
	if err != nil || m["type"] != "welcome" {
		t.Fatalf("socket with the resume key: %v, %v; want a welcome", m, err)
	}
	c.CloseNow()
	c2.CloseNow()
	c3, _, err := dial(panel.AgentProtocolPrefix + "v1.forged.x")
	if err == nil {
		defer c3.CloseNow()
		if _, err = readMsg(t, c3); websocket.CloseStatus(err) != page.CloseBadToken {
			t.Errorf("a forged token in the subprotocol: %v, want close %d", err, page.CloseBadToken)
		}
	}
}

// TestAgentChannelRefusesATokenInTheAddress: a page token (or resume key) in the page agent
// socket's address is refused, even a valid one and even with the subprotocol beside it: no
// client sends it there any more, and a browser hands a page the address of a socket its own
// policy blocks or reports (pass 4a). The session opens with the subprotocol alone.
func TestAgentChannelRefusesATokenInTheAddress(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	_, body := f.get("https://" + siteHost + "/start")
	token := tokenFrom(t, body)
	dial := func(address string, protocols ...string) (map[string]any, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, _, err := websocket.Dial(ctx, address, &websocket.DialOptions{
			HTTPClient:   f.client,
			HTTPHeader:   http.Header{"Origin": {"https://" + siteHost}},
			Subprotocols: protocols,
		})
		if err != nil {
			return nil, err
		}
		defer c.CloseNow()
		return readMsg(t, c)
	}
	for name, tc := range map[string]struct {
		address  string
		protocol []string
	}{
		"the token in the address":                  {"wss://remix.proxy/agent/ws?t=" + url.QueryEscape(token), nil},
		"the token in the address and the protocol": {"wss://remix.proxy/agent/ws?t=" + url.QueryEscape(token), []string{panel.AgentProtocolPrefix + token}},
		"a resume key in the address":               {"wss://remix.proxy/agent/ws?k=x", []string{panel.AgentProtocolPrefix + token}},
	} {
		if m, err := dial(tc.address, tc.protocol...); websocket.CloseStatus(err) != page.CloseBadToken {
			t.Errorf("%s: %v, %v; want close %d", name, m, err, page.CloseBadToken)
		}
	}
	if m, err := dial("wss://remix.proxy/agent/ws", panel.AgentProtocolPrefix+token); err != nil || m["type"] != "welcome" {
		t.Errorf("the token in the subprotocol: %v, %v; want a welcome", m, err)
	}
}
