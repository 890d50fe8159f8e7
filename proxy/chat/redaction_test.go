package chat

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/proxy/fetch"
	"github.com/remixproxy/remixproxy/proxy/internal/redact"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// The redaction stage's sources and the chat's own checks of what the agent sends, on a hub
// with real page sessions (page.Hub's channel) and a real fetch client; the whole proxy's
// tests (proxy/redact_chat_test.go) check the same through the model.

const (
	redSite     = "example.com" // httptest's certificate names it
	redPassword = "Pw-hunter2-planted"
	redCookie   = "ck-7f3a9b2c4d5e6f"
	redAuth     = "au-9x8y7z6w5v4u"
)

// redFixture is a chat in Act mode on a page of redSite, with the page agent's socket.
type redFixture struct {
	h    *Hub
	c    *chat
	env  *chatEnv
	page *websocket.Conn
	site *redSiteLog
}

// redSiteLog records the requests for /collect that reach the site.
type redSiteLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *redSiteLog) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.seen, "\n")
}

func newRedFixture(t *testing.T) *redFixture {
	t.Helper()
	log := &redSiteLog{}
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "collect") {
			log.mu.Lock()
			log.seen = append(log.seen, r.Method+" "+r.URL.String())
			log.mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	}))
	t.Cleanup(ts.Close)
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())
	var d net.Dialer
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	h := newHub(nil, ctx)
	h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	h.pages = page.New(page.Config{Secret: []byte("k"), Logger: h.log})
	h.fetch = fetch.New(fetch.Config{Roots: roots, OnlyResolved: true,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, ts.Listener.Addr().String())
		}})
	ws := httptest.NewServer(http.HandlerFunc(h.pages.ServeAgentWS))
	t.Cleanup(ws.Close)

	pageURL, _ := url.Parse("https://" + redSite + "/")
	conn, session := dialPageAgent(t, ctx, h.pages, ws.URL, pageURL)
	// The page agent answers every page tool (report_secrets among them) with an empty result.
	go func() {
		for {
			_, raw, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var call struct {
				Type string
				ID   uint64
			}
			if json.Unmarshal(raw, &call) == nil && call.Type == "tool" {
				b, _ := json.Marshal(map[string]any{"type": "toolResult", "id": call.ID, "ok": true, "value": map[string]any{}})
				conn.Write(ctx, websocket.MessageText, b)
			}
		}
	}()
	c := &chat{hub: h, sessionID: session, origin: "https://" + redSite, host: redSite}
	c.rec.Mode = string(agent.ModeAct)
	return &redFixture{h: h, c: c, env: &chatEnv{c: c}, page: conn, site: log}
}

// send writes one message of the page agent.
func (f *redFixture) send(t *testing.T, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := f.page.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

// moveTo makes the page's session move to u by a same-origin navigation, as the page agent
// reports one, and waits until the session has it.
func (f *redFixture) moveTo(t *testing.T, u string) {
	t.Helper()
	f.send(t, map[string]string{"type": "nav", "url": u, "kind": "pushState"})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if sess, ok := f.h.pages.Get(f.c.sessionID); ok && sess.URL == u {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session did not move to %s", u)
		}
	}
}

// plant makes each kind of secret known as in use: the page reports the password, the site
// sets the cookie, the browser sends the bearer token.
func (f *redFixture) plant(t *testing.T) {
	t.Helper()
	u, _ := url.Parse("https://" + redSite + "/")
	f.h.fetch.Cookies().Observe(&http.Response{Request: &http.Request{Method: "GET", URL: u, Header: http.Header{}},
		Header: http.Header{"Set-Cookie": {"sid=" + redCookie + "; Path=/; Secure; HttpOnly"}}})
	f.h.fetch.Credentials().Observe(&http.Response{Request: &http.Request{Method: "GET", URL: u,
		Header: http.Header{"Authorization": {"Bearer " + redAuth}}}, Header: http.Header{}})
	f.send(t, map[string]any{"type": "secrets", "fields": []map[string]any{{"id": 1, "value": redPassword}}})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if pw, _ := f.h.pages.Secrets(redSite, ""); len(pw) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the page's password report did not arrive")
		}
	}
}

// TestChatRefusesResolvedSecretAddresses: the chat's own check refuses an address that carries
// a secret only once resolved against the page (the page's address carries it and the model's
// address is relative to it), or only as the browser reads it (DESIGN invariant 9: a tab or
// newline inside it is removed, upper case or fullwidth letters in a host are folded), and a
// header or a JSON-escaped body that carries one; the site gets nothing.
func TestChatRefusesResolvedSecretAddresses(t *testing.T) {
	f := newRedFixture(t)
	f.plant(t)
	ctx := context.Background()

	f.moveTo(t, "https://"+redSite+"/collect?sid="+redCookie)
	for _, tool := range []string{"navigate", "open_page"} {
		_, err := f.env.PageTool(ctx, tool, json.RawMessage(`{"url": "#top"}`))
		if err == nil || !strings.Contains(err.Error(), "a secret was in the address (a cookie value") {
			t.Errorf("%s to #top on a page whose address carries the cookie: err = %v", tool, err)
		}
	}
	if _, err := f.env.HTTPRequest(ctx, agent.HTTPRequest{Method: "GET", URL: "/api/ping"}); err != nil {
		t.Errorf("an address without a secret was refused: %v", err)
	}
	_, err := f.env.HTTPRequest(ctx, agent.HTTPRequest{Method: "GET", URL: "/collect",
		Headers: map[string]string{"X-Token": "Bearer " + redAuth}})
	if err == nil || !strings.Contains(err.Error(), "a secret was in the header X-Token (an authorization value") {
		t.Errorf("http_request with the token in a header: err = %v", err)
	}
	body := `{"note": "` + strings.ReplaceAll(redPassword, "-", `\u002d`) + `"}`
	_, err = f.env.HTTPRequest(ctx, agent.HTTPRequest{Method: "POST", URL: "/collect", Body: &body})
	if err == nil || !strings.Contains(err.Error(), "a secret was in the body (a password value") {
		t.Errorf("http_request with the password in its body, JSON-escaped: err = %v", err)
	}

	f.moveTo(t, "https://"+redSite+"/")
	upper := strings.ToUpper(redCookie)
	fullwidth := strings.Map(func(r rune) rune {
		if r >= '!' && r <= '~' && r != '-' {
			return r + 0xFEE0
		}
		return r
	}, redCookie)
	for _, tt := range []struct{ name, tool, url string }{
		{"a tab inside", "navigate", "/collect?c=" + redCookie[:6] + "\t" + redCookie[6:]},
		{"a newline inside", "open_page", "/collect?c=" + redCookie[:6] + "\n" + redCookie[6:]},
		{"upper case in the host", "open_page", "https://" + upper + "." + redSite + "/"},
		{"fullwidth letters in the host", "open_page", "https://" + fullwidth + "." + redSite + "/"},
		{"upper case, http_request", "http_request", "https://" + upper + "." + redSite + "/ping"},
		{"fullwidth letters, http_request", "http_request", "https://" + fullwidth + "." + redSite + "/ping"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.tool == "http_request" {
				_, err = f.env.HTTPRequest(ctx, agent.HTTPRequest{Method: "GET", URL: tt.url})
			} else {
				args, _ := json.Marshal(map[string]string{"url": tt.url})
				_, err = f.env.PageTool(ctx, tt.tool, args)
			}
			if err == nil || !strings.Contains(err.Error(), "a secret was in the address (a cookie value") {
				t.Errorf("%s to %q: err = %v, want the address refused for the cookie it carries", tt.tool, tt.url, err)
			}
		})
	}
	if got := f.site.all(); got != "" {
		t.Errorf("the site got: %s", got)
	}
}

// TestChatRedactorFollowsTheSecrets: a value reported after the redactor was made is removed
// at its next use (the set is compiled again when it changed), and only then.
func TestChatRedactorFollowsTheSecrets(t *testing.T) {
	f := newRedFixture(t)
	red := f.c.newRedactor(nil)
	if got := red.Redact("pw later-typed-9"); got != "pw later-typed-9" {
		t.Errorf("before the report: %q", got)
	}
	first := red.current()
	if red.current() != first {
		t.Error("the set was compiled again without a change")
	}
	// The page agent reports the value on its channel; the next use after it arrived removes it.
	f.send(t, map[string]any{"type": "secrets", "fields": []map[string]any{{"id": 1, "value": "later-typed-9"}}})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got := red.Redact("pw later-typed-9")
		if got == "pw [redacted: password]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the report: %q, want the password redacted", got)
		}
	}
	if got := red.Secret(`{"url":"/x?p=later-typed-9"}`); got != redact.KindPassword {
		t.Errorf("Secret = %q, want password", got)
	}
	// A cookie the proxy sees later, in the view and in the headers.
	u, _ := url.Parse("https://" + redSite + "/later")
	f.h.fetch.Cookies().Observe(&http.Response{Request: &http.Request{Method: "GET", URL: u, Header: http.Header{}},
		Header: http.Header{"Set-Cookie": {"late=late-cookie-42; Path=/; Secure"}}})
	if got := red.Redact("c late-cookie-42"); got != "c [redacted: cookie]" {
		t.Errorf("after a cookie in the view: %q", got)
	}
	f.h.fetch.Credentials().Observe(&http.Response{Request: &http.Request{Method: "GET", URL: u,
		Header: http.Header{"Authorization": {"Bearer hdr-token-77"}}}, Header: http.Header{}})
	if got := red.Redact("t hdr-token-77"); got != "t [redacted: authorization]" {
		t.Errorf("after an authorization header: %q", got)
	}
}

// TestWithArticle: the kind of a secret is named with its article in the refusals.
func TestWithArticle(t *testing.T) {
	for kind, want := range map[string]string{"password": "a password", "cookie": "a cookie",
		"authorization": "an authorization", "key": "a key"} {
		if got := withArticle(kind); got != want {
			t.Errorf("withArticle(%q) = %q, want %q", kind, got, want)
		}
	}
}
