package remixlet

import (
	"slices"
	"testing"

	"github.com/remixproxy/remixproxy/sandbox"
)

// A remixlet's sites are where it runs, not where it may send (OPEN-ITEMS 99): on a page of one
// site, its other sites are like any other host; fetch: hosts (the person's grant) count on
// every page.
func TestMayLoadOn(t *testing.T) {
	manifest := func(matches, perms string) *sandbox.Manifest {
		m, problems := sandbox.ParseManifest([]byte(`{"name": "s", "description": "test", "api": 1, "matches": [` + matches + `], "permissions": [` + perms + `]}`))
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		return m
	}
	two := manifest(`"https://bank.test/*", "https://evil.test/*"`, "")
	every := manifest(`"<all_urls>"`, "")
	pages := manifest(`"https://*.github.io/*"`, "")
	subs := manifest(`"https://www.example.com/*", "https://*.img.example.com/*", "https://example-cdn.com/*"`, `{"name": "fetch:api.partner.test", "reason": "prices"}`)
	tests := []struct {
		name     string
		m        *sandbox.Manifest
		pageSite string
		host     string
		want     bool
		sites    []string // sitesOnPage, when checked
	}{
		{"two sites: the page's", two, "bank.test", "bank.test", true, []string{"bank.test"}},
		{"two sites: the other, from the first", two, "bank.test", "evil.test", false, nil},
		{"two sites: the first, from the other", two, "evil.test", "bank.test", false, nil},
		{"two sites: a host of the page's site it does not run on", two, "bank.test", "cdn.bank.test", false, nil},
		{"every site: the page's site", every, "bank.test", "static.bank.test", true, []string{"*.bank.test"}},
		{"every site: another site", every, "bank.test", "evil.test", false, nil},
		{"github.io: the page's user", pages, "alice.github.io", "alice.github.io", true, []string{"*.alice.github.io"}},
		{"github.io: another user", pages, "alice.github.io", "mallory.github.io", false, nil},
		{"subdomains within the page's site", subs, "example.com", "a.img.example.com", true, []string{"*.img.example.com", "www.example.com"}},
		{"the remixlet's CDN site (the cost)", subs, "example.com", "example-cdn.com", false, nil},
		{"a fetch: host on any page", subs, "example.com", "API.partner.test.", true, nil},
		{"no page site", two, "", "bank.test", false, nil},
		{"no manifest", nil, "bank.test", "bank.test", false, nil},
	}
	for _, tt := range tests {
		if got := mayLoadOn(tt.m, tt.pageSite, tt.host); got != tt.want {
			t.Errorf("%s: mayLoadOn(%q, %q) = %v, want %v", tt.name, tt.pageSite, tt.host, got, tt.want)
		}
		if tt.sites != nil {
			if got := sitesOnPage(tt.m, tt.pageSite); !slices.Equal(got, tt.sites) {
				t.Errorf("%s: sitesOnPage = %q, want %q", tt.name, got, tt.sites)
			}
		}
	}
}
