package remixlet

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// openDocument answers a navigation for https://shop.test+target (dest: document or iframe) with
// a 200 page, through the opened-documents tap.
func (g *guardTest) openDocument(t *testing.T, target, dest, referer string) {
	t.Helper()
	u, err := url.ParseRequestURI(target)
	if err != nil {
		t.Fatal(err)
	}
	u.Scheme, u.Host = "https", "shop.test"
	req := &http.Request{Method: http.MethodGet, URL: u, Host: "shop.test", RequestURI: target, Header: http.Header{
		"Sec-Fetch-Dest": {dest}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Site": {"same-origin"}}}
	if referer != "" {
		req.Header.Set("Referer", referer)
	}
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/html"}},
		Body: io.NopCloser(strings.NewReader("<p>forwarding</p>")), Request: req}
	g.r.NoteOpenedDocument(resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("opening %s: the document was refused (%d)", target, resp.StatusCode)
	}
}

// navigate sends a navigation request for address with the headers h through the request side,
// and reports whether the proxy refused it.
func (g *guardTest) navigate(t *testing.T, address string, h http.Header) bool {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, address, nil)
	req.RequestURI = req.URL.RequestURI()
	for k, v := range h {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	refused := g.r.GuardClientRedirect(w, req)
	if refused != (w.Code == http.StatusForbidden) {
		t.Errorf("%s: GuardClientRedirect said %v, but answered %d", address, refused, w.Code)
	}
	return refused
}

func navHeader(dest, site, user, referer string) http.Header {
	h := http.Header{"Sec-Fetch-Dest": {dest}, "Sec-Fetch-Mode": {"navigate"}}
	if site != "" {
		h.Set("Sec-Fetch-Site", site)
	}
	if user != "" {
		h.Set("Sec-Fetch-User", user)
	}
	if referer != "" {
		h.Set("Referer", referer)
	}
	return h
}

func TestClientRedirectGuard(t *testing.T) {
	g := newGuardTest(t)
	now := time.Unix(1_000_000, 0)
	g.r.opened.now = func() time.Time { return now }
	const written = "https://shop.test/go?to=https://witness.test/x"
	if err := g.r.guard.add("s1", "https://shop.test/", g.id, g.m, []string{written}); err != nil {
		t.Fatal(err)
	}
	// Nothing is opened yet: the witness is not the proxy's business.
	if g.navigate(t, "https://witness.test/x", navHeader("document", "cross-site", "", "https://shop.test/")) {
		t.Fatal("a navigation was refused before any document was opened")
	}
	// An address nobody wrote opens nothing.
	g.openDocument(t, "/go?to=https://elsewhere.test/", "document", "")
	if g.r.opened.live.Load() != 0 {
		t.Fatal("a document the remixlet's address did not open was recorded")
	}
	g.openDocument(t, "/go?to=https://witness.test/x", "document", "")

	tests := []struct {
		name    string
		address string
		h       http.Header
		refused bool
	}{
		{"script, origin-only Referer", "https://witness.test/x", navHeader("document", "cross-site", "", "https://shop.test/"), true},
		{"full Referer of the document", "https://witness.test/x", navHeader("document", "cross-site", "", written), true},
		{"no Referer (no-referrer policy)", "https://witness.test/x", navHeader("document", "cross-site", "", ""), true},
		{"a frame's navigation", "https://witness.test/x", navHeader("iframe", "cross-site", "", "https://shop.test/"), true},
		{"plain http, no Fetch metadata", "http://witness.test/x", http.Header{"Upgrade-Insecure-Requests": {"1"}}, true},
		// A top-level document borrows no activation from the click that opened it
		// (TestActivationOfAnOpenedDocument): its ?1 is the person's click in it, at once too.
		{"the person's click right after the answer", "https://witness.test/x", navHeader("document", "cross-site", "?1", "https://shop.test/"), false},
		{"the remixlet's site within the page's site (followed, guarded in turn)", "https://img.shop.test/x", navHeader("document", "cross-site", "", "https://shop.test/"), false},
		// Another of its sites is like any other host (OPEN-ITEMS 99): this one is not in the
		// document's address, so it carries nothing the remixlet wrote (offSiteCarries).
		{"another of the remixlet's sites, not in the document's address", "https://cdn.own.test/x", navHeader("document", "cross-site", "", "https://shop.test/"), false},
		{"same origin (followed, guarded in turn)", "https://shop.test/next?d=1", navHeader("document", "same-origin", "", written), false},
		{"the address bar", "https://witness.test/x", navHeader("document", "none", "", ""), false},
		{"a full Referer of another page of the origin", "https://witness.test/x", navHeader("document", "cross-site", "", "https://shop.test/other"), false},
		{"a Referer of another origin", "https://witness.test/x", navHeader("document", "cross-site", "", "https://other.test/"), false},
		{"no Referer, same-origin elsewhere", "https://other.test/x", navHeader("document", "same-origin", "", ""), false},
		{"a subresource", "https://witness.test/x", http.Header{"Sec-Fetch-Dest": {"image"}, "Sec-Fetch-Mode": {"no-cors"}}, false},
	}
	for _, tt := range tests {
		if got := g.navigate(t, tt.address, tt.h); got != tt.refused {
			t.Errorf("%s: refused = %v, want %v", tt.name, got, tt.refused)
		}
	}
	// The followed same-origin hop is guarded in turn: the document it opens is opened too.
	if hits := g.r.guard.lookup(guardKeyOf(t, "https://shop.test/next?d=1"), requester{none: true}); len(hits) == 0 {
		t.Error("the followed same-origin navigation's address is not guarded")
	}

	// A document opened in a frame: within activationBorrowed of its answer, ?1 may be the
	// opening click's, borrowed by the frame's script (the ninth session measured it once); after
	// it, the person's click in the frame goes where it goes.
	now = now.Add(activationBorrowed)
	g.openDocument(t, "/go?to=https://witness.test/x", "iframe", "https://shop.test/")
	if !g.navigate(t, "https://witness.test/x", navHeader("document", "cross-site", "?1", "https://shop.test/")) {
		t.Error("a frame's top navigation with ?1 right after the frame's document was answered was let through")
	}
	now = now.Add(activationBorrowed)
	if g.navigate(t, "https://witness.test/x", navHeader("document", "cross-site", "?1", "https://shop.test/")) {
		t.Error("the person's own click in a frame, after the borrowed activation, was refused")
	}
	// Unbound, the document is taken to be gone after openedLoading.
	now = now.Add(openedLoading)
	if g.navigate(t, "https://witness.test/x", navHeader("document", "cross-site", "", "https://shop.test/")) {
		t.Error("a document that never connected still pairs after openedLoading")
	}

	// Bound to its page session, it lives as long as the session, and openedAfterEnd after.
	g.openDocument(t, "/go?to=https://witness.test/x", "document", "")
	g.r.opened.sessionStarted("s2", written)
	now = now.Add(time.Hour)
	if !g.navigate(t, "https://witness.test/x", navHeader("document", "cross-site", "", "https://shop.test/")) {
		t.Error("a document whose session is open stopped pairing")
	}
	g.r.opened.sessionEnded("s2")
	now = now.Add(openedAfterEnd)
	if g.navigate(t, "https://witness.test/x", navHeader("document", "cross-site", "", "https://shop.test/")) {
		t.Error("a document whose session ended still pairs")
	}
	// Back from the back/forward cache: the session that starts on its address takes it up.
	g.r.opened.sessionStarted("s3", written)
	if !g.navigate(t, "https://witness.test/x", navHeader("document", "cross-site", "", "https://shop.test/")) {
		t.Error("a document back from the back/forward cache does not pair")
	}
}

func guardKeyOf(t *testing.T, a string) string {
	t.Helper()
	keys, _, err := guardKeys([]string{a})
	if err != nil || len(keys) != 1 {
		t.Fatalf("guardKeys(%q) = %v, %v", a, keys, err)
	}
	return keys[0]
}

func TestMayNavigate(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/html; charset=utf-8": true, "application/xhtml+xml": true, "image/svg+xml": true, "": true,
		"application/rss+xml": true, "TEXT/HTML": true, "text/plain; charset=utf-8": false, "image/png": false,
		"application/json": false, "application/pdf": false, "text/html;;;": true,
	} {
		if got := mayNavigate(ct); got != want {
			t.Errorf("mayNavigate(%q) = %v, want %v", ct, got, want)
		}
	}
}

// An opened document's navigation off the remixlet's sites is refused only when it may carry
// what the remixlet wrote: its destination is in the document's own address (in any shape the
// guard reads) or a site the remixlet named on the page (review of 6d, item 4). Before the fix
// the site's own sign-in redirect from a "/login" the remixlet wrote (a path guarded by pathsIn)
// got the 403.
func TestOpenedDocumentLeavesOnlyForWhatItWasTold(t *testing.T) {
	g := newGuardTest(t)
	now := time.Unix(1_000_000, 0)
	g.r.opened.now = func() time.Time { return now }
	const forward = "/go?to=https%3A%2F%2Fwitness.test%2Fx"
	if err := g.r.guard.add("s1", "https://shop.test/", g.id, g.m, []string{
		"https://shop.test/login", "https://shop.test" + forward, "https://shop.test/b64?d=aHR0cHM6Ly93aXRuZXNzLnRlc3QveA"}); err != nil {
		t.Fatal(err)
	}
	if err := g.r.guard.addNamed("s1", "https://shop.test/", g.id, g.m, []string{"named.test"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, doc, to string
		refused       bool
	}{
		{"the site's sign-in from /login", "/login", "https://accounts.example-idp.test/auth?client=shop", false},
		{"the destination percent-encoded in the address", forward, "https://witness.test/x", true},
		{"a subdomain of the destination in the address", forward, "https://a.witness.test/x", true},
		{"the destination base64-encoded in the address", "/b64?d=aHR0cHM6Ly93aXRuZXNzLnRlc3QveA", "https://witness.test/x", true},
		{"a site the remixlet named on the page", "/login", "https://named.test/x", true},
		{"an IP address", "/login", "https://203.0.113.7/x", true},
	}
	for _, tt := range tests {
		g.openDocument(t, tt.doc, "document", "")
		ref := "https://shop.test" + tt.doc
		if got := g.navigate(t, tt.to, navHeader("document", "cross-site", "", ref)); got != tt.refused {
			t.Errorf("%s: refused = %v, want %v", tt.name, got, tt.refused)
		}
	}
}
