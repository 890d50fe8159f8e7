package chat

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// guardPipeline is the part of the proxy's pipeline the agent's navigation guard lives in: its
// request side (GuardNavigation) before a request leaves, its response side (GuardRedirect) on
// the answer, around a reverse proxy to a test site that answers for example.com and its
// subdomains.
type guardPipeline struct {
	h  *Hub
	rp *httputil.ReverseProxy
	t  *testing.T

	mu     sync.Mutex
	tokens map[string]string // the page token minted for each address's last top-level document (its TokenID)
	serial int
}

func newGuardPipeline(t *testing.T, site http.Handler) *guardPipeline {
	t.Helper()
	ts := httptest.NewUnstartedServer(site)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes of hosts it has no certificate for
	ts.StartTLS()
	t.Cleanup(ts.Close)
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())
	var d net.Dialer
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, ts.Listener.Addr().String())
		}}
	t.Cleanup(tr.CloseIdleConnections)
	h := newHub(nil, context.Background())
	h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	p := &guardPipeline{h: h, t: t, tokens: map[string]string{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = "https", pr.In.Host, pr.In.Host
		},
		Transport:      tr,
		ModifyResponse: func(resp *http.Response) error { h.GuardRedirect(resp); p.mint(resp); return nil },
		ErrorLog:       log.New(io.Discard, "", 0),
	}
	return p
}

// mint is the injection tap's part in the guard: a 2xx answer to a top-level navigation gets a
// page token of its own, of which the hub is told (DocumentMinted).
func (p *guardPipeline) mint(resp *http.Response) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 || resp.Request.Header.Get("Sec-Fetch-Dest") != "document" {
		return
	}
	p.mu.Lock()
	p.serial++
	token := fmt.Sprintf("v1.page%d.mac%d", p.serial, p.serial)
	p.tokens["https://"+resp.Request.Host+resp.Request.URL.RequestURI()] = page.TokenID(token)
	p.mu.Unlock()
	p.h.DocumentMinted(resp.Request.Context(), token)
}

// token is the TokenID of the page token minted for the last document from rawURL.
func (p *guardPipeline) token(rawURL string) string {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.tokens[rawURL]
	if !ok {
		p.t.Fatalf("no page token was minted for %s", rawURL)
	}
	return id
}

// get sends a GET for rawURL with the headers hdr (name, value, …) as the browser sends it in
// an intercepted connection, and returns the answer.
func (p *guardPipeline) get(rawURL string, hdr ...string) (*http.Response, []byte) {
	p.t.Helper()
	return p.do("GET", rawURL, nil, hdr...)
}

// post sends a form's submission to rawURL as Chromium does for a navigation (hdr: the
// navigation's headers), and returns the answer.
func (p *guardPipeline) post(rawURL string, hdr ...string) (*http.Response, string) {
	p.t.Helper()
	resp, body := p.do("POST", rawURL, strings.NewReader("do=delete"), append([]string{"Content-Type", "application/x-www-form-urlencoded"}, hdr...)...)
	return resp, string(body)
}

// do sends a request for rawURL with the payload and the headers hdr (name, value, …) as the
// browser sends it in an intercepted connection, and returns the answer.
func (p *guardPipeline) do(method, rawURL string, payload io.Reader, hdr ...string) (*http.Response, []byte) {
	p.t.Helper()
	req := httptest.NewRequest(method, rawURL, payload)
	req.RequestURI = req.URL.RequestURI()
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	r, w, done, answered := p.h.GuardNavigation(rec, req)
	if !answered {
		p.rp.ServeHTTP(w, r)
		done()
	}
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// TestAgentNavigationGuard: through the guard's two sides in a pipeline as the proxy's (its whole
// wiring is tested in proxy/chat_navguard_test.go and e2e), with an expectation armed as the chat arms
// it before an action: the site's open redirect off the site is replaced by the refusal page, and
// so is a same-site redirect into it, a Refresh header off the site and a first hop off the site
// (answered without going upstream); a redirect within the site goes through. The person's own
// navigation (Sec-Fetch-Site: none) and any navigation once the window is over are left alone.
func TestAgentNavigationGuard(t *testing.T) {
	site := &testsite.NavSite{}
	cf := newGuardPipeline(t, site)
	g := &cf.h.nav
	var mu sync.Mutex
	var told []string
	arm := func() *navExpect {
		return g.arm("click", "https://example.com/", "https://example.com", nil, func(why string) {
			mu.Lock()
			told = append(told, why)
			mu.Unlock()
		})
	}
	pageURL := "https://example.com/"
	exfil := url.QueryEscape("https://witness.test/?d=secret")

	// The open redirect's address in the query: refused before it goes upstream
	// (navguard_carried.go).
	x := arm()
	resp, body := cf.get("https://example.com/out?to="+exfil, testsite.NavHeaders("same-origin", pageURL)...)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" || strings.Contains(string(body), "secret") {
		t.Errorf("open redirect carrying the address: %d %q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if why := x.refusal(); !strings.Contains(why, "carried an address of witness.test") {
		t.Errorf("refusal = %q", why)
	}
	x.settle()

	// An address the query does not show (assembled from pieces): the redirect is refused.
	pieces := "/outpieces?host=witness&d=secret"
	x = arm()
	resp, body = cf.get("https://example.com"+pieces, testsite.NavHeaders("same-origin", pageURL)...)
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
	resp, _ = cf.get("https://example.com/hop?to="+url.QueryEscape(pieces), testsite.NavHeaders("same-origin", pageURL)...)
	if resp.StatusCode != http.StatusMovedPermanently || !strings.HasPrefix(resp.Header.Get("Location"), "https://www.example.com/out?") {
		t.Fatalf("same-site redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	x.settle()
	resp, _ = cf.get(resp.Header.Get("Location"), testsite.NavHeaders("same-site", pageURL)...)
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/outpieces?") {
		t.Fatalf("the hop's redirect within the site: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = cf.get("https://www.example.com"+resp.Header.Get("Location"), testsite.NavHeaders("same-origin", pageURL)...)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the hop's own redirect off the site: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if x.refusal() == "" {
		t.Error("the hop's refusal was not recorded")
	}

	// A Refresh header off the site, and a first hop off the site.
	x = arm()
	if resp, _ := cf.get("https://example.com/refresh", testsite.NavHeaders("same-origin", pageURL)...); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Refresh") != "" {
		t.Errorf("Refresh off the site: %d %q", resp.StatusCode, resp.Header.Get("Refresh"))
	}
	if resp, body := cf.get("https://witness.test/?d=secret", testsite.NavHeaders("cross-site", pageURL)...); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(string(body), "would have left the site example.com for https://witness.test/?…") {
		t.Errorf("first hop off the site: %d\n%s", resp.StatusCode, body)
	}
	x.settle()

	// A frame of the page: loading another site is its own (a widget); a redirect off the site
	// of a frame's address on the site is held like the tab's.
	// (Once a frame of the site was loaded, a frame off the site from that origin is held:
	// navguard_frames.go, TestNavFrameLease.)
	x = arm()
	frameHdr := []string{"Sec-Fetch-Dest", "iframe", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", "cross-site", "Referer", pageURL}
	if resp, body := cf.get("https://witness.test/widget", frameHdr...); resp.StatusCode == http.StatusForbidden {
		t.Errorf("a frame loading another site was refused: %d\n%s", resp.StatusCode, body)
	}
	frameHdr[5] = "same-origin"
	if resp, _ := cf.get("https://example.com"+pieces, frameHdr...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a frame's redirect off the site: %d, want 403", resp.StatusCode)
	}
	x.settle()

	// Not the agent's: the address bar, and another site's page.
	if resp, _ := cf.get("https://example.com/out?to="+exfil, testsite.NavHeaders("none", "")...); resp.StatusCode != http.StatusFound {
		t.Errorf("the person's own navigation through the open redirect: %d, want 302", resp.StatusCode)
	}
	if resp, _ := cf.get("https://example.com/out?to="+exfil, testsite.NavHeaders("cross-site", "https://news.test/")...); resp.StatusCode != http.StatusFound {
		t.Errorf("another site's navigation: %d, want 302", resp.StatusCode)
	}
	// A subresource is never a navigation.
	if resp, _ := cf.get("https://example.com/out?to="+exfil, "Sec-Fetch-Dest", "image", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Site", "same-origin", "Referer", pageURL); resp.StatusCode != http.StatusFound {
		t.Errorf("an image through the open redirect: %d, want 302 (not the guard's)", resp.StatusCode)
	}

	// After the window, the page's own navigations are its own.
	g.mu.Lock()
	for _, e := range g.xs {
		e.until = time.Now().Add(-time.Second)
		e.pending = 0
	}
	g.mu.Unlock()
	if resp, _ := cf.get("https://example.com/out?to="+exfil, testsite.NavHeaders("same-origin", pageURL)...); resp.StatusCode != http.StatusFound {
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

// newLeasePipeline is newGuardPipeline over testsite.NavSite, its guard's clock one the test
// moves on.
func newLeasePipeline(t *testing.T) (*guardPipeline, *navGuard, *leaseClock) {
	t.Helper()
	cf := newGuardPipeline(t, &testsite.NavSite{})
	g := &cf.h.nav
	clk := &leaseClock{}
	g.mu.Lock()
	g.now = clk.now
	g.mu.Unlock()
	return cf, g, clk
}

// agentNavigated is a navigate of owner's agent from page to `to`, answered with a document,
// its action's window then over: the document at `to` is leased (and its page token minted).
func (p *guardPipeline) agentNavigated(clk *leaseClock, owner any, page, to string) {
	p.t.Helper()
	x := p.h.nav.armAs(navOwner{owner: owner}, "navigate", page, "https://example.com", []string{to}, nil)
	if resp, _ := p.get(to, testsite.NavHeaders("same-origin", page)...); resp.StatusCode != http.StatusOK {
		p.t.Fatalf("the agent's navigate to %s: %d", to, resp.StatusCode)
	}
	x.settle()
	clk.skip(navWindow + time.Second)
}

// leaseClock is a navGuard clock a test moves on.
type leaseClock struct{ off atomic.Int64 }

func (c *leaseClock) now() time.Time       { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *leaseClock) skip(d time.Duration) { c.off.Add(int64(d)) }

// TestNavDocLease: through the guard's two sides in a pipeline as the proxy's (the whole wiring:
// e2e's TestRedteamAgentLeavingPage*). The agent's navigate loads a page of the site; once
// the action's window is over, that document's own navigations off the site (a meta refresh, a
// timer's location assignment: no user activation, with or without a Referer) are still held,
// and so are those of a page of the site it went on to by itself, and a Refresh header there.
// The person's own click on a link (Sec-Fetch-User: ?1, and the page agent's report of the
// click to that address) goes where it goes; activation alone does not. When the tab leaves the document (its
// page session goes), the lease ends; a document whose page agent never connects keeps it for
// navDocLoading.
func TestNavDocLease(t *testing.T) {
	cf, g, clk := newLeasePipeline(t)
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
		if resp, _ := cf.get(to, testsite.NavHeaders("same-origin", page)...); resp.StatusCode != http.StatusOK {
			t.Fatalf("the agent's navigate to %s: %d", to, resp.StatusCode)
		}
		x.settle()
		clk.skip(navWindow + time.Second) // the action's own window is over
		return x
	}
	var alive1, alive2, alive3 atomic.Bool
	leaving := "https://example.com/leaving?to=x"
	navigate(leaving)
	alive1.Store(true)
	g.docOpened(cf.token(leaving), "s1", alive1.Load)

	// witness.test is dialed to the test site, whose certificate is not for it: a navigation the
	// guard lets go is answered by the reverse proxy's error (502), one it holds by its refusal
	// (403).
	const passed = http.StatusBadGateway
	user := func(h []string) []string { return append(h, "Sec-Fetch-User", "?1") }
	personClicks(t, g, "https://example.com", "https://witness.test/meta?d=4711") // the page agent's report
	clk.skip(personNavFresh)                                                      // without ?1 only a fresher one would count
	for _, tt := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"meta refresh with data in the address", testsite.NavHeaders("cross-site", page), http.StatusForbidden},
		{"a timer's location, no-referrer policy", testsite.NavHeaders("cross-site", ""), http.StatusForbidden},
		{"plain http: no Fetch metadata", []string{"Upgrade-Insecure-Requests", "1", "Referer", page}, http.StatusForbidden},
		{"the person's own click", user(testsite.NavHeaders("cross-site", page)), passed},
		{"the address bar", testsite.NavHeaders("none", ""), passed},
		{"another site's tab", testsite.NavHeaders("cross-site", "https://news.test/"), passed},
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

	// The person's activation, but no click of theirs to this address (typing in the panel, a
	// click elsewhere on the page): held (navguard_person.go, TestNavPersonClicks).
	if resp, _ := cf.get("https://witness.test/typed", user(testsite.NavHeaders("cross-site", page))...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a navigation with activation and no click to it: %d, want 403", resp.StatusCode)
	}

	// The tab left the document (the person's own navigation): the lease ends.
	alive1.Store(false)
	if resp, _ := cf.get("https://witness.test/later", testsite.NavHeaders("cross-site", page)...); resp.StatusCode != passed {
		t.Errorf("after the agent's document went: %d, want 502 (let go)", resp.StatusCode)
	}
	if n := g.live.Load(); n != 0 {
		t.Errorf("%d expectations live after the document went, want 0", n)
	}

	// A chain: the document goes on to a page of the site by itself; that page is held too,
	// and so is its Refresh header.
	navigate(leaving)
	alive2.Store(true)
	g.docOpened(cf.token(leaving), "s2", alive2.Load)
	if resp, _ := cf.get("https://example.com/next", testsite.NavHeaders("same-origin", leaving)...); resp.StatusCode != http.StatusOK {
		t.Fatalf("the document's own navigation within the site: %d", resp.StatusCode)
	}
	alive2.Store(false)
	alive3.Store(true)
	g.docOpened(cf.token("https://example.com/next"), "s3", alive3.Load)
	if resp, _ := cf.get("https://witness.test/chain", testsite.NavHeaders("cross-site", "https://example.com/next")...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the next page's forward off the site: %d, want 403", resp.StatusCode)
	}
	if resp, _ := cf.get("https://example.com/refresh", testsite.NavHeaders("same-origin", "https://example.com/next")...); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Refresh") != "" {
		t.Errorf("a Refresh header off the site: %d %q", resp.StatusCode, resp.Header.Get("Refresh"))
	}
	alive3.Store(false)

	// A document whose page agent never connects keeps the lease for navDocLoading.
	navigate("https://example.com/plain")
	if resp, _ := cf.get("https://witness.test/unconnected", testsite.NavHeaders("cross-site", page)...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an unconnected document's forward: %d, want 403", resp.StatusCode)
	}
	clk.skip(navDocLoading)
	if resp, _ := cf.get("https://witness.test/unconnected2", testsite.NavHeaders("cross-site", page)...); resp.StatusCode != passed {
		t.Errorf("after navDocLoading: %d, want 502 (let go)", resp.StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) < 3 {
		t.Errorf("the chat was told of %d refusals, want at least 3: %q", len(told), told)
	}
}

// TestNavDocLeaseBindsItsOwnSession (OPEN-ITEMS 6): the lease on a document the agent loaded is
// bound to the session its own page token opens, not to the first page of the same address
// that connects. A popup (or a second tab) of the same address, opened by the page and then
// closed, leaves the lease as it was: the document's later forward off the site is still held.
// The document's own session binds it, and a reconnection of that session (the back/forward
// cache: the same token) keeps it; once that session goes, the lease goes. (Before the fix,
// docOpened took the first session with the document's address, and the popup's closing ended
// the lease.)
func TestNavDocLeaseBindsItsOwnSession(t *testing.T) {
	cf, g, clk := newLeasePipeline(t)
	page := "https://example.com/"
	leaving := "https://example.com/leaving?to=x"
	cf.agentNavigated(clk, new(int), page, leaving)
	ownToken := cf.token(leaving)
	const passed = http.StatusBadGateway
	forward := func(want int, what string) {
		t.Helper()
		if resp, _ := cf.get("https://witness.test/meta?d=4711", testsite.NavHeaders("cross-site", leaving)...); resp.StatusCode != want && (want != passed || resp.StatusCode == http.StatusForbidden) {
			t.Errorf("%s: the document's forward: %d, want %d", what, resp.StatusCode, want)
		}
	}

	// A popup of the same address: the page's own request, so a token of its own.
	if resp, _ := cf.get(leaving, testsite.NavHeaders("same-origin", leaving)...); resp.StatusCode != http.StatusOK {
		t.Fatalf("the popup's load: %d", resp.StatusCode)
	}
	popupToken := cf.token(leaving)
	var popup, own, again atomic.Bool
	popup.Store(true)
	g.docOpened(popupToken, "popup", popup.Load) // its page agent connects first
	popup.Store(false)                           // and the page closes it
	forward(http.StatusForbidden, "after the popup closed")
	g.docOpened("", "notoken", func() bool { return false }) // a page served without a token

	// (The popup's load was the document's own navigation, paired: it had a lease too, which
	// its closing ended.) The agent's document's own session now connects.
	if popupToken == ownToken {
		t.Fatal("the popup's document got the agent's document's token")
	}
	own.Store(true)
	g.docOpened(ownToken, "own", own.Load)
	forward(http.StatusForbidden, "bound to its own session")
	own.Store(false)
	again.Store(true)
	g.docOpened(ownToken, "own-again", again.Load) // the same document, reconnected
	forward(http.StatusForbidden, "its session reconnected")
	again.Store(false)
	forward(passed, "after its session went")
}

// TestNavLeasesPerChatBounded: a page the agent loaded that loads page after page of its site by
// itself (each document a lease, none connecting) keeps maxLeasesPerChat of them, the open
// document's among them; another chat's lease (on another origin) stays. (Without the bound the flood filled the table,
// and its eviction of the oldest took the other chat's lease.)
func TestNavLeasesPerChatBounded(t *testing.T) {
	cf, g, clk := newLeasePipeline(t)
	other, flooder := new(int), new(int)
	cf.agentNavigated(clk, other, "https://example.com/", "https://www.example.com/leaving?to=x") // another origin: not paired by the flood
	cf.agentNavigated(clk, flooder, "https://example.com/", "https://example.com/a")
	var open atomic.Bool // the flooding chat's first document is open (its page agent connected)
	open.Store(true)
	g.docOpened(cf.token("https://example.com/a"), "a", open.Load)
	for i := 0; i < 2*maxNavExpects; i++ {
		next := fmt.Sprintf("https://example.com/p%d", i)
		if resp, _ := cf.get(next, testsite.NavHeaders("same-origin", "https://example.com/a")...); resp.StatusCode != http.StatusOK {
			t.Fatalf("the page's own navigation %d: %d", i, resp.StatusCode)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	leases := map[any]int{}
	for _, x := range g.xs {
		if x.doc != nil {
			leases[x.owner]++
		}
	}
	if leases[flooder] > maxLeasesPerChat || leases[other] != 1 {
		t.Errorf("leases: the flooding chat's %d (want at most %d), the other chat's %d (want 1)", leases[flooder], maxLeasesPerChat, leases[other])
	}
	kept := false
	for _, x := range g.xs {
		kept = kept || x.doc != nil && x.doc.session == "a"
	}
	if !kept {
		t.Error("the open document's lease was dropped for ones that never connected")
	}
}
