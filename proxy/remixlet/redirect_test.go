package remixlet

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// guardTest is a remixlet runner, one stored remixlet and its manifest.
type guardTest struct {
	r  *Runner
	id string
	m  *sandbox.Manifest
}

func newGuardTest(t *testing.T) *guardTest {
	st := openTestStore(t)
	r := newRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(r.Close)
	m, _ := sandbox.ParseManifest([]byte(`{"name": "g", "description": "test", "api": 1, "matches": ["https://shop.test/*", "https://img.shop.test/*", "https://cdn.own.test/*"], "permissions": []}`))
	rx := addTestRemixlet(t, st, "g", `"https://shop.test/*"`, ``, rxTestScript)
	return &guardTest{r: r, id: rx.id, m: m}
}

// respond runs the guard on a redirect answered to a request for target (the request-target as
// the browser sent it, origin form) on host, and reports whether it was refused.
func (g *guardTest) respond(t *testing.T, host, target string, header http.Header, status int) bool {
	t.Helper()
	u, err := url.ParseRequestURI(target)
	if err != nil {
		t.Fatalf("request target %q: %v", target, err)
	}
	u.Scheme, u.Host = "https", host
	resp := &http.Response{StatusCode: status, Status: fmt.Sprint(status), Header: header,
		Body: io.NopCloser(strings.NewReader("")), Request: &http.Request{URL: u, Host: host, RequestURI: target}}
	g.r.GuardRedirect(resp)
	refused := resp.StatusCode == http.StatusForbidden
	if refused && (resp.Header.Get("Location") != "" || resp.Header.Get("Refresh") != "") {
		t.Errorf("%s%s: the refused answer still redirects: %v", host, target, resp.Header)
	}
	return refused
}

func (g *guardTest) redirect(t *testing.T, host, target, loc string) bool {
	t.Helper()
	return g.respond(t, host, target, http.Header{"Location": {loc}}, http.StatusFound)
}

func TestRedirectGuard(t *testing.T) {
	g := newGuardTest(t)
	if err := g.r.guard.add("s1", "https://shop.test/", g.id, g.m, []string{
		"https://shop.test/go?to=https://witness.test/", "https://shop.test/hop", "https://shop.test/refresh",
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, host, target, loc string
		refused                 bool
	}{
		{"the address written, off to the witness", "shop.test", "/go?to=https://witness.test/", "https://witness.test/x", true},
		{"the browser's spelling of it", "SHOP.test:443", "/go?to=https:%2F%2Fwitness.test%2F", "//witness.test/x", true},
		{"backslash location", "shop.test", "/hop", `/\witness.test/x`, true},
		{"ideographic full stop in the location", "shop.test", "/hop", "https://witness\u3002test/x", true},
		{"user name in the location", "shop.test", "/hop", "https://shop.test@witness.test/x", true},
		{"javascript location", "shop.test", "/hop", "javascript:alert(1)", true},
		{"another origin that is one of the remixlet's sites", "shop.test", "/hop", "http://shop.test/x", false},
		{"the remixlet's site within the page's site", "shop.test", "/hop", "https://img.shop.test/a.png", false},
		// Another of its sites is like any other host from a page of shop.test (OPEN-ITEMS 99).
		{"another of the remixlet's sites", "shop.test", "/hop", "https://cdn.own.test/a.png", true},
		{"same origin", "shop.test", "/hop", "/same-origin", false},
		{"the followed hop is guarded too", "shop.test", "/same-origin", "https://witness.test/second-hop", true},
		// The page's own use of its redirect, with any other query, is left alone.
		{"the same path with another query", "shop.test", "/go?to=https://cdn.partner.test/", "https://cdn.partner.test/", false},
		{"the same path without a query", "shop.test", "/go", "https://witness.test/x", false},
		{"an address no remixlet wrote", "shop.test", "/not-written", "https://witness.test/x", false},
	}
	for _, tt := range tests {
		if got := g.redirect(t, tt.host, tt.target, tt.loc); got != tt.refused {
			t.Errorf("%s: %s%s -> %s: refused %v, want %v", tt.name, tt.host, tt.target, tt.loc, got, tt.refused)
		}
	}
	// A Refresh header is a redirect too; a 200 without one is not.
	if !g.respond(t, "shop.test", "/refresh", http.Header{"Refresh": {"0; url=https://witness.test/r"}}, http.StatusOK) {
		t.Errorf("a Refresh header to the witness was not refused")
	}
	if g.respond(t, "shop.test", "/refresh", http.Header{"Refresh": {"5"}}, http.StatusOK) {
		t.Errorf("a Refresh header without an address was refused")
	}
	waitLog(t, g.r.st, g.id, "redirects to https://witness.test/x")
}

// Every spelling the issue found getting past the guard, written by a remixlet through the
// policy (setAttr, create and setHTML) while the browser requests its normalised form: each
// redirect to the witness is refused.
func TestRedirectGuardSeesEverySpelling(t *testing.T) {
	g := newGuardTest(t)
	pol := testPolicy(t, "https://shop.test/dir/page", ``)
	const want = "/redirect?to=https://witness.test/"
	spellings := []string{
		"https://shop.test/redirect?to=https://witness.test/",
		"/x/../redirect?to=https://witness.test/",
		"/x/%2e%2e/redirect?to=https://witness.test/",
		"/x/%2E./redirect?to=https://witness.test/",
		`\redirect?to=https://witness.test/`,
		`https:\\shop.test\redirect?to=https://witness.test/`,
		"https://shop\u3002test/redirect?to=https://witness.test/",
		"https://\uff53\uff48\uff4f\uff50.test/redirect?to=https://witness.test/",
		"HTTPS://SHOP.TEST:443/redirect?to=https://witness.test/",
		"https://shop.test./redirect?to=https://witness.test/",
		"../redirect?to=https://witness.test/",
		"/re\tdirect?to=https://witness.test/",
	}
	calls := []struct {
		op   string
		args func(v string) string
	}{
		{"setAttr", func(v string) string { j, _ := json.Marshal(v); return `[{"$h":1}, "src", ` + string(j) + `]` }},
		{"create", func(v string) string {
			j, _ := json.Marshal(v)
			return `[{"tag": "a", "attrs": {"href": ` + string(j) + `}}]`
		}},
		{"setHTML", func(v string) string {
			j, _ := json.Marshal(`<svg><style><img src="` + v + `"></style></svg>`)
			return `[{"$h":1}, ` + string(j) + `]`
		}},
	}
	session := 0
	for _, c := range calls {
		for _, v := range spellings {
			session++
			sess := fmt.Sprint("s", session)
			g.r.guard = redirectGuard{} // each spelling alone
			call, err := checkDOMCall(pol, c.op, json.RawMessage(c.args(v)))
			if err != nil {
				t.Errorf("%s %q: refused: %v", c.op, v, err)
				continue
			}
			if err := g.r.guard.add(sess, "https://shop.test/dir/page", g.id, g.m, call.addresses); err != nil {
				t.Fatal(err)
			}
			host := "shop.test"
			if strings.Contains(v, "shop.test.") {
				host = "shop.test."
			}
			if !g.redirect(t, host, want, "https://witness.test/x") {
				t.Errorf("%s %q (relayed as %v): the browser's request for %s was not guarded", c.op, v, call.opAddrs(), want)
			}
		}
	}
}

// The guard has no count limit that lets anything through: setHTML with far more than the old
// 256 recorded addresses has each of them guarded; past the guard's bound the op is refused.
func TestRedirectGuardHasNoCountLimit(t *testing.T) {
	g := newGuardTest(t)
	pol := testPolicy(t, "https://shop.test/", ``)
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, `<a href="/r?to=https://witness.test/%d">x</a>`, i)
	}
	j, _ := json.Marshal(b.String())
	call, err := checkDOMCall(pol, "setHTML", json.RawMessage(`[{"$h":1}, `+string(j)+`]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(call.opAddrs()); got != 1000 {
		t.Fatalf("setHTML found %d addresses, want 1000", got)
	}
	if err := g.r.guard.add("s1", "https://shop.test/", g.id, g.m, call.addresses); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 255, 256, 999} {
		if !g.redirect(t, "shop.test", fmt.Sprintf("/r?to=https://witness.test/%d", i), "https://witness.test/") {
			t.Errorf("address %d of 1000 is not guarded", i)
		}
	}

	// Over the per-page bound: the op is refused and nothing of it is remembered.
	small := &redirectGuard{maxOwner: 10, maxTotal: 15}
	addrs := func(from, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("https://shop.test/r?i=%d", from+i))
		}
		return out
	}
	if err := small.add("s1", "", g.id, g.m, addrs(0, 8)); err != nil {
		t.Fatal(err)
	}
	err = small.add("s1", "", g.id, g.m, addrs(100, 3))
	if !errors.Is(err, errGuardFull) || !strings.Contains(err.Error(), "at most 10 per page") {
		t.Errorf("9th to 11th address: got %v, want the per-page bound", err)
	}
	if hits := small.lookup(keyOf(t, "https://shop.test/r?i=100"), requester{none: true}); len(hits) != 0 {
		t.Errorf("a refused op's address is remembered")
	}
	if err := small.add("s1", "", g.id, g.m, addrs(0, 8)); err != nil {
		t.Errorf("addresses already held count once: %v", err)
	}
	if err := small.add("s2", "", g.id, g.m, addrs(200, 8)); !errors.Is(err, errGuardFull) || !strings.Contains(err.Error(), "all open pages") {
		t.Errorf("over the total: got %v, want the total bound", err)
	}
	// Past a page's grace period, its room is given back.
	now := time.Now()
	small.now = func() time.Time { return now }
	small.sessionEnded("s1", "")
	now = now.Add(redirectGuardGrace + time.Second)
	if err := small.add("s2", "", g.id, g.m, addrs(200, 8)); err != nil {
		t.Errorf("after the first page's grace period: %v", err)
	}
}

func keyOf(t *testing.T, s string) string {
	t.Helper()
	u, err := httpx.RequestedAddress(&http.Request{URL: &url.URL{Scheme: "https"}, RequestURI: s})
	if err != nil {
		t.Fatal(err)
	}
	return weburl.Key(u)
}

// How long an address stays guarded: while its page is open, for the grace period after, and
// again as long as the same page comes back (the back/forward cache).
func TestRedirectGuardLifetime(t *testing.T) {
	g := newGuardTest(t)
	now := time.Now()
	g.r.guard.now = func() time.Time { return now }
	const page = "https://shop.test/list"
	if err := g.r.guard.add("s1", page, g.id, g.m, []string{"https://shop.test/r?to=https://witness.test/a"}); err != nil {
		t.Fatal(err)
	}
	guarded := func() bool {
		return g.redirect(t, "shop.test", "/r?to=https://witness.test/a", "https://witness.test/a")
	}
	now = now.Add(time.Hour)
	if !guarded() {
		t.Fatal("not guarded an hour later while the page is open")
	}
	g.r.guard.sessionEnded("s1", page)
	now = now.Add(redirectGuardGrace - time.Second)
	if !guarded() {
		t.Fatal("not guarded within the grace period after the page went away")
	}
	// The page comes back from the back/forward cache as a new session on the same URL.
	g.r.guard.sessionStarted("s2", page)
	now = now.Add(time.Hour)
	if !guarded() {
		t.Fatal("not guarded while the page that came back is open")
	}
	g.r.guard.sessionEnded("s2", page)
	now = now.Add(redirectGuardGrace + time.Second)
	if guarded() {
		t.Fatal("still guarded after the grace period")
	}
	// Another page's session does not adopt it.
	if err := g.r.guard.add("s3", page, g.id, g.m, []string{"https://shop.test/r?to=https://witness.test/b"}); err != nil {
		t.Fatal(err)
	}
	g.r.guard.sessionEnded("s3", page)
	g.r.guard.sessionStarted("s4", "https://shop.test/other")
	now = now.Add(redirectGuardGrace + time.Second)
	if g.redirect(t, "shop.test", "/r?to=https://witness.test/b", "https://witness.test/b") {
		t.Fatal("a session on another URL kept the addresses")
	}
	g.r.guard.mu.Lock()
	g.r.guard.sweepLocked(true)
	left := len(g.r.guard.owners)
	g.r.guard.mu.Unlock()
	if left != 0 {
		t.Errorf("%d owners left after every grace period ended, want 0", left)
	}
}

// The guard is for the page that wrote the address (guardrequester.go, OPEN-ITEMS 36): another
// page of the site asking for the same address, or the person typing it, is not refused.
func TestRedirectGuardIsForThePageThatWrote(t *testing.T) {
	g := newGuardTest(t)
	if err := g.r.guard.add("s1", "https://shop.test/list", g.id, g.m, []string{"https://shop.test/go?to=https://witness.test/"}); err != nil {
		t.Fatal(err)
	}
	from := func(h http.Header) bool {
		t.Helper()
		target := "/go?to=https://witness.test/"
		u, _ := url.ParseRequestURI(target)
		u.Scheme, u.Host = "https", "shop.test"
		resp := &http.Response{StatusCode: http.StatusFound, Header: http.Header{"Location": {"https://witness.test/x"}},
			Body: io.NopCloser(strings.NewReader("")), Request: &http.Request{URL: u, Host: "shop.test", RequestURI: target, Header: h}}
		g.r.GuardRedirect(resp)
		return resp.StatusCode == http.StatusForbidden
	}
	loc := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name    string
		h       http.Header
		refused bool
	}{
		{"the page that wrote it", loc("Referer", "https://shop.test/list"), true},
		{"its origin only", loc("Referer", "https://shop.test/"), true},
		{"no Referer", loc(), true},
		{"another page of the site", loc("Referer", "https://shop.test/other"), false},
		{"another site's page", loc("Referer", "https://other.test/list"), false},
		{"the address bar", loc("Sec-Fetch-Site", "none"), false},
	}
	for _, tt := range tests {
		if got := from(tt.h); got != tt.refused {
			t.Errorf("%s: refused = %v, want %v", tt.name, got, tt.refused)
		}
	}
	// The page moves (an SPA navigation): its requests name the new address.
	g.r.guard.sessionMoved("s1", "https://shop.test/list?page=2")
	if !from(loc("Referer", "https://shop.test/list?page=2")) {
		t.Error("after an SPA navigation the page's own requests are not guarded")
	}
	// Past maxOwnerPages, every page is the owner's (fail safe).
	for i := range maxOwnerPages {
		g.r.guard.addPage("s1", g.id, fmt.Sprintf("https://shop.test/p%d", i))
	}
	if !from(loc("Referer", "https://shop.test/unknown")) {
		t.Error("an owner past maxOwnerPages pages lets another page's request through")
	}
}
