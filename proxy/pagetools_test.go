package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// toolPage is a page agent stand-in connected to the proxy for a page of siteHost.
type toolPage struct {
	t       *testing.T
	c       *websocket.Conn
	session string
	pageURL string
}

// connectToolPage loads pageURL through the proxy and connects a page agent with its token.
func connectToolPage(t *testing.T, f *fixture, pageURL string) *toolPage {
	t.Helper()
	_, body := f.get(pageURL)
	token := tokenFrom(t, body)
	c, err := f.dialWS("wss://remix.proxy/agent/ws?t="+url.QueryEscape(token), "https://"+siteHost)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	m, err := readMsg(t, c)
	if err != nil || m["type"] != "welcome" {
		t.Fatalf("welcome: %v %v", m, err)
	}
	return &toolPage{t: t, c: c, session: m["session"].(string), pageURL: pageURL}
}

// pageToolCall is what the fake page received.
type pageToolCall struct {
	Type string          `json:"type"`
	ID   uint64          `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

func (p *toolPage) nextCall() pageToolCall {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, b, err := p.c.Read(ctx)
		if err != nil {
			p.t.Fatalf("reading a tool call: %v", err)
		}
		var m pageToolCall
		if err := json.Unmarshal(b, &m); err != nil {
			p.t.Fatalf("message %q: %v", b, err)
		}
		if m.Type == "tool" {
			return m
		}
	}
}

func (p *toolPage) answer(v any) {
	p.t.Helper()
	b, _ := json.Marshal(v)
	if err := p.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

type pageCallResult struct {
	out json.RawMessage
	err error
}

func startPageCall(s *Server, ctx context.Context, session, tool, args string) chan pageCallResult {
	ch := make(chan pageCallResult, 1)
	go func() {
		out, err := s.PageTool(ctx, session, tool, json.RawMessage(args))
		ch <- pageCallResult{out, err}
	}()
	return ch
}

func waitPageCall(t *testing.T, ch chan pageCallResult) pageCallResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(15 * time.Second):
		t.Fatal("the call did not return")
		return pageCallResult{}
	}
}

func TestPageToolRoundTrip(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	p := connectToolPage(t, f, "https://"+siteHost+"/start")

	ch := startPageCall(f.srv, context.Background(), p.session, "outline", `{"filter":"all"}`)
	call := p.nextCall()
	if call.Tool != "outline" || string(call.Args) != `{"filter":"all"}` || call.ID == 0 {
		t.Fatalf("the page got %+v", call)
	}
	// An answer to another call (made up by the page) is ignored; the right one is taken.
	p.answer(map[string]any{"type": "toolResult", "id": call.ID + 1000, "ok": true, "value": "forged"})
	p.answer(map[string]any{"type": "toolResult", "id": call.ID, "ok": true, "value": map[string]any{"outline": "- heading \"x\" [e1]", "truncated": false, "refs": 1}})
	r := waitPageCall(t, ch)
	if r.err != nil || !strings.Contains(string(r.out), `heading \"x\"`) {
		t.Fatalf("outline = %s, %v", r.out, r.err)
	}

	// A refusal comes back as an error naming the tool.
	ch = startPageCall(f.srv, context.Background(), p.session, "click", `{"ref":"e9"}`)
	call = p.nextCall()
	p.answer(map[string]any{"type": "toolResult", "id": call.ID, "ok": false, "error": "element e9 is no longer on the page"})
	r = waitPageCall(t, ch)
	if r.err == nil || r.err.Error() != "click: element e9 is no longer on the page" {
		t.Fatalf("refused click: %v", r.err)
	}

	// No arguments is an empty object.
	ch = startPageCall(f.srv, context.Background(), p.session, "capture_page", ``)
	call = p.nextCall()
	if string(call.Args) != `{}` {
		t.Errorf("capture_page without arguments sent args %s, want {}", call.Args)
	}
	p.answer(map[string]any{"type": "toolResult", "id": call.ID, "ok": true, "value": map[string]any{"url": p.pageURL}})
	if r = waitPageCall(t, ch); r.err != nil {
		t.Fatal(r.err)
	}

	// read_page_data through PageTool gets the recorded responses (none here).
	ch = startPageCall(f.srv, context.Background(), p.session, "read_page_data", `{}`)
	call = p.nextCall()
	p.answer(map[string]any{"type": "toolResult", "id": call.ID, "ok": true, "value": map[string]any{"globals": map[string]any{}}})
	r = waitPageCall(t, ch)
	var data map[string]json.RawMessage
	if r.err != nil || json.Unmarshal(r.out, &data) != nil || string(data["responses"]) != "[]" || string(data["globals"]) != "{}" {
		t.Fatalf("read_page_data = %s, %v", r.out, r.err)
	}
}

func TestPageToolRefusesBeforeThePage(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	p := connectToolPage(t, f, "https://"+siteHost+"/dir/start")
	ctx := context.Background()
	for _, tt := range []struct{ tool, args, want string }{
		{"eval", `{}`, `the page has no tool "eval"`},
		{"outline", `[1]`, `the arguments must be a JSON object`},
		{"outline", `"x"`, `the arguments must be a JSON object`},
		{"outline", `{"budget": 1` + strings.Repeat(" ", 70<<10) + `}`, `over the 65536-byte limit`},
		{"fetch_page", `{}`, `url is required`},
		{"fetch_page", `{"url":"https://evil.test/x"}`, `open_page opens only pages of this site (https://example.com)`},
		{"fetch_page", `{"url":"//evil.test/x"}`, `is not one`},
		{"fetch_page", `{"url":"http://example.com/x"}`, `is not one`},
		{"fetch_page", `{"url":"https://example.com:8443/x"}`, `is not one`},
		{"fetch_page", `{"url":"javascript:alert(1)"}`, `is not one`},
		{"fetch_page", `{"url":"data:text/html,hi"}`, `is not one`},
	} {
		_, err := f.srv.PageTool(ctx, p.session, tt.tool, json.RawMessage(tt.args))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s: error %v, want %q", tt.tool, tt.args[:min(len(tt.args), 60)], err, tt.want)
		}
	}
	if _, err := f.srv.PageTool(ctx, "no-such-session", "outline", nil); !errors.Is(err, page.ErrGone) {
		t.Errorf("unknown session: %v", err)
	}

	// A same-origin address is resolved against the page and sent absolute, fragment removed.
	ch := startPageCall(f.srv, ctx, p.session, "fetch_page", `{"url":"../other?q=1#frag","budget":500}`)
	call := p.nextCall()
	var args map[string]any
	json.Unmarshal(call.Args, &args)
	if args["url"] != "https://example.com/other?q=1" || args["budget"] != float64(500) {
		t.Errorf("fetch_page sent %s", call.Args)
	}
	p.answer(map[string]any{"type": "toolResult", "id": call.ID, "ok": true, "value": map[string]any{"url": args["url"]}})
	if r := waitPageCall(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
}

func TestPageToolEndsWithThePage(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	p := connectToolPage(t, f, "https://"+siteHost+"/start")

	// A flood: maxPageToolsInFlight wait, the next is refused at once.
	const maxPageToolsInFlight = 16 // the page package's bound
	var chans []chan pageCallResult
	for i := 0; i < maxPageToolsInFlight; i++ {
		chans = append(chans, startPageCall(f.srv, context.Background(), p.session, "capture_page", `{}`))
	}
	for i := 0; i < maxPageToolsInFlight; i++ {
		p.nextCall()
	}
	_, err := f.srv.PageTool(context.Background(), p.session, "capture_page", nil)
	if err == nil || !strings.Contains(err.Error(), "too many page tool calls at once") {
		t.Errorf("call %d: %v, want too many", maxPageToolsInFlight+1, err)
	}

	// The page goes: every waiting call fails with page.ErrGone.
	p.c.Close(websocket.StatusNormalClosure, "pagehide")
	for _, ch := range chans {
		if r := waitPageCall(t, ch); !errors.Is(r.err, page.ErrGone) || r.err.Error() != "the page was closed or navigated" {
			t.Errorf("waiting call after the page left: %v", r.err)
		}
	}
	if _, err := f.srv.PageTool(context.Background(), p.session, "outline", nil); !errors.Is(err, page.ErrGone) {
		t.Errorf("after the page left: %v", err)
	}
}

func TestPageToolTimesOut(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	p := connectToolPage(t, f, "https://"+siteHost+"/start")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { p.nextCall() }) // read it, never answer
	_, err := f.srv.PageTool(ctx, p.session, "query", json.RawMessage(`{"selector":"p"}`))
	if err == nil || err.Error() != "query: the page did not answer in time" {
		t.Errorf("unanswered call: %v", err)
	}
	wg.Wait()
	// A late answer is dropped quietly.
	p.answer(map[string]any{"type": "toolResult", "id": 1, "ok": true, "value": 1})
}

// The recorded responses reach read_page_data; checked against a real handler in
// pagedata_test.go. Here: an HTTP handler for JSON, shared by those tests.
func jsonHandler(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "sid=secret-cookie-value")
		w.Write([]byte(body))
	}
}
