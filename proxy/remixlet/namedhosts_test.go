package remixlet

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/sandbox"
)

func TestSitesIn(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"see https://witness.test/x", []string{"witness.test"}},
		{"witness.test", []string{"witness.test"}},
		{"a.b.witness.test", []string{"witness.test"}},
		{"ｗｉｔｎｅｓｓ。test", []string{"witness.test"}},
		// As written, the escape's digits run into the name: a site more, harmless (nothing asks it).
		{"https%3A%2F%2Fwitness.test%2Fx", []string{"2fwitness.test", "witness.test"}},
		{"https://wítness.test/x", []string{"xn--wtness-3va.test"}},
		{"WITNESS.TEST", []string{"witness.test"}},
		{"no host here", nil},
		{"version 1", nil},
		// Review of 6d, item 3: dotted tokens that name no site (before the fix each was one).
		{"see file.txt, e.g. v1.2 and index.html", nil},
		{"co.uk", nil},
		{"https://shop.example.co.uk/x", []string{"example.co.uk"}},
		{"fonts.gstatic.com", []string{"gstatic.com"}},
		{"load from 203.0.113.7 now", []string{"203.0.113.7"}},
		{"a.localhost", []string{"a.localhost"}},
	}
	for _, tt := range tests {
		got := sitesIn(tt.in)
		slices.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("sitesIn(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := namedSites("setText", []byte(`[{"$h":1}, "mail me at x@witness.test"]`)); !slices.Contains(got, "witness.test") {
		t.Errorf("namedSites(setText) = %q, want witness.test among them", got)
	}
	// A page full of dotted tokens (copied text) names no site, so it cannot reach
	// maxNamedSitesPerOwner and have the remixlet's writes refused.
	var text strings.Builder
	for i := 0; i <= maxNamedSitesPerOwner; i++ {
		fmt.Fprintf(&text, "see part%d.txt or v%d.2, ", i, i)
	}
	arg, _ := json.Marshal([]any{map[string]int{"$h": 1}, text.String()})
	if got := namedSites("setText", arg); len(got) != 0 {
		t.Errorf("namedSites of %d dotted tokens = %d sites (%q...), want none", 2*(maxNamedSitesPerOwner+1), len(got), got[0])
	}
	if got := namedSites("query", []byte(`["a[href*=witness.test]"]`)); got != nil {
		t.Errorf("namedSites(query) = %q: a call that writes nothing names nothing", got)
	}
}

func TestNamedHostsGuard(t *testing.T) {
	g := newGuardTest(t)
	req := func(address string, kv ...string) bool {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, address, nil)
		r.RequestURI = r.URL.RequestURI()
		for i := 0; i+1 < len(kv); i += 2 {
			r.Header.Set(kv[i], kv[i+1])
		}
		w := httptest.NewRecorder()
		return g.r.GuardPageRequests(w, r)
	}
	if req("https://witness.test/x", "Referer", "https://shop.test/") {
		t.Fatal("a request was refused before anything was named")
	}
	if err := g.r.guard.addNamed("s1", "https://shop.test/list", g.id, g.m, []string{"witness.test", "shop.test", "own.test"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		address string
		kv      []string
		refused bool
	}{
		{"an image of the page", "https://witness.test/x", []string{"Sec-Fetch-Dest", "image", "Sec-Fetch-Site", "cross-site", "Referer", "https://shop.test/"}, true},
		{"a subdomain of the named site", "https://a.witness.test/x", []string{"Sec-Fetch-Site", "cross-site", "Referer", "https://shop.test/"}, true},
		{"no Referer", "https://witness.test/x", []string{"Sec-Fetch-Site", "cross-site"}, true},
		{"a navigation without the person", "https://witness.test/x", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", "cross-site", "Referer", "https://shop.test/"}, true},
		{"the person's click", "https://witness.test/x", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-User", "?1", "Referer", "https://shop.test/"}, false},
		{"the page's own site", "https://cdn.shop.test/x", []string{"Sec-Fetch-Site", "same-site", "Referer", "https://shop.test/"}, false},
		// Another of the remixlet's sites is like any other host from a page of shop.test
		// (OPEN-ITEMS 99); its subdomain of the page's site is the page's own site.
		{"another of the remixlet's sites", "https://cdn.own.test/x", []string{"Sec-Fetch-Site", "cross-site", "Referer", "https://shop.test/"}, true},
		{"another site's page", "https://witness.test/x", []string{"Sec-Fetch-Site", "cross-site", "Referer", "https://other.test/"}, false},
		{"the named site's own page", "https://witness.test/x", []string{"Sec-Fetch-Site", "same-origin", "Referer", "https://witness.test/"}, false},
		{"the address bar", "https://witness.test/x", []string{"Sec-Fetch-Site", "none"}, false},
		{"a site not named", "https://elsewhere.test/x", []string{"Sec-Fetch-Site", "cross-site", "Referer", "https://shop.test/"}, false},
	}
	for _, tt := range tests {
		if got := req(tt.address, tt.kv...); got != tt.refused {
			t.Errorf("%s: refused = %v, want %v", tt.name, got, tt.refused)
		}
	}
	// The page goes: after openedAfterEnd its named sites are free again, and the count drops
	// when the owner is swept.
	g.r.guard.sessionEnded("s1", "https://shop.test/list")
}

// A remixlet granted fetch:granted.test loads the image it wrote from there, even when another
// remixlet on the same page named granted.test (TestRedteamLoadsCorpus, path htmlg: the
// ungranted remixlet's refused <img src> named the site, and the granted one's image got the
// 403). Any other address on the site stays refused.
func TestNamedHostsGuardLetsAGrantedRemixletLoadWhatItWrote(t *testing.T) {
	g := newGuardTest(t)
	granted, err := sandbox.ParseManifest([]byte(`{"name": "gg", "description": "test", "api": 1, "matches": ["https://shop.test/*"], "permissions": [{"name": "fetch:granted.test", "reason": "its images"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	const page = "https://shop.test/list"
	// The ungranted remixlet names granted.test; the granted one writes its image.
	if err := g.r.guard.addNamed("s1", page, g.id, g.m, []string{"granted.test"}); err != nil {
		t.Fatal(err)
	}
	if err := g.r.guard.add("s1", page, "granted-rx", granted, []string{"https://granted.test/img/ok"}); err != nil {
		t.Fatal(err)
	}
	if err := g.r.guard.addNamed("s1", page, "granted-rx", granted, []string{"granted.test"}); err != nil {
		t.Fatal(err)
	}
	req := func(address, referer string) bool {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, address, nil)
		r.RequestURI = r.URL.RequestURI()
		r.Header.Set("Sec-Fetch-Dest", "image")
		r.Header.Set("Sec-Fetch-Site", "cross-site")
		r.Header.Set("Referer", referer)
		return g.r.GuardPageRequests(httptest.NewRecorder(), r)
	}
	if req("https://granted.test/img/ok", "https://shop.test/") {
		t.Error("the granted remixlet's own image from its fetch: host was refused (a false refusal)")
	}
	if !req("https://granted.test/img/ok?leak=1", "https://shop.test/") {
		t.Error("another address on the named site was let through")
	}
	if !req("https://granted.test/other", "https://shop.test/") {
		t.Error("an address on the named site no granted remixlet wrote was let through")
	}
	if req("https://granted.test/img/ok", "https://other.test/") {
		t.Error("a request from another site's page was refused")
	}
}
