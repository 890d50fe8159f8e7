package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func manifest(matches []string, perms ...string) *Manifest {
	m := &Manifest{Name: "x", API: 1, Matches: matches}
	for _, p := range perms {
		m.Permissions = append(m.Permissions, Permission{Name: p, Reason: "because"})
	}
	return m
}

// described returns a copy of m with another description.
func described(m *Manifest, d string) *Manifest {
	c := *m
	c.Description = d
	return &c
}

// want is one expected reason: its kind and a part of its text.
type want struct {
	kind ReasonKind
	text string
}

func TestNeedsApproval(t *testing.T) {
	one := []string{"https://www.example.com/*"}
	two := []string{"https://www.example.com/*", "https://shop.test/*"}
	forumBank := []string{"https://forum.test/*", "https://bank.test/*"}
	forum := []string{"https://forum.test/*"}
	shop := []string{"https://www.shop.test/*", "https://shop.test/*"}
	every := []string{"<all_urls>"}
	tests := []struct {
		name         string
		active, next *Manifest
		chatHost     string
		rules, code  bool // Change.RulesChanged, Change.CodeChanged
		want         []want
	}{
		// New remixlets: the chat's page vouches for its own host only.
		{"new on chat host", nil, manifest(one), "www.example.com", false, true, nil},
		{"new on chat host paths only", nil, manifest([]string{"https://www.example.com/feed/*", "http://www.example.com/x"}), "www.example.com", false, true, nil},
		{"new on other site", nil, manifest([]string{"https://shop.test/*"}), "www.example.com", false, true, []want{{ReasonMoreSites, "other than this page's: shop.test"}}},
		{"new on subdomains", nil, manifest([]string{"https://*.example.com/*"}), "www.example.com", false, true, []want{{ReasonMoreSites, "other than this page's: *.example.com"}}},
		{"new on every site", nil, manifest(every), "www.example.com", false, true, []want{{ReasonEverySite, "every site"}}},
		{"new from manager", nil, manifest(one), "", false, true, []want{{ReasonMoreSites, "other than this page's: www.example.com"}}},
		{"new with permission", nil, manifest(one, "storage"), "www.example.com", false, true, []want{{ReasonNewPermission, "New permission: Keep its own data"}}},
		{"new with fetch", nil, manifest(one, "fetch:api.example.com"), "www.example.com", false, true,
			[]want{{ReasonNewPermission, "New permission: Send requests to api.example.com as you"}}},
		{"new with rules", nil, manifest(one, "netrules"), "www.example.com", true, true,
			[]want{{ReasonNewPermission, "New permission: Change what pages load"}, {ReasonRules, "network rules changed"}}},

		// Updates: compared with the running version.
		{"same everything", manifest(one, "storage"), manifest(one, "storage"), "www.example.com", false, false, nil},
		{"new code, same site, no network permission", manifest(one, "storage", "menu"), manifest(one, "storage", "menu"), "www.example.com", false, true, nil},
		{"same sites from another chat host", manifest(two, "storage"), manifest(two, "storage"), "shop.test", false, false, nil},
		{"fewer permissions", manifest(one, "storage", "menu"), manifest(one, "menu"), "www.example.com", false, false, nil},
		{"narrower host under wildcard", manifest([]string{"*://*.example.com/*"}), manifest([]string{"https://a.example.com/*", "https://b.example.com/*"}), "a.example.com", false, false, nil},
		{"more sites", manifest(one), manifest(two), "www.example.com", false, false,
			[]want{{ReasonMoreSites, "more sites: shop.test"}, {ReasonOtherSites, "other sites than this page's (example.com): shop.test"}}},
		{"more sites from the manager", manifest(one), manifest(two), "", false, false, []want{{ReasonMoreSites, "more sites: shop.test"}}},
		{"wider host", manifest(one), manifest([]string{"https://*.example.com/*"}), "www.example.com", false, false, []want{{ReasonMoreSites, "more sites: *.example.com"}}},
		{"every site", manifest(two), manifest([]string{"*://*/*"}), "www.example.com", false, false,
			[]want{{ReasonEverySite, "every site"}, {ReasonOtherSites, "runs on every site, not only on this page's (example.com)"}}},
		{"every site stays every site, from the manager", manifest(every, "menu"), manifest([]string{"*://*/*"}, "menu"), "", false, true, nil},
		{"new permission", manifest(one, "storage"), manifest(one, "storage", "fetch:api.example.com"), "www.example.com", false, false,
			[]want{{ReasonNewPermission, "New permission: Send requests to api.example.com as you, with your cookies"}}},
		{"permission host changed", manifest(one, "fetch:api.example.com"), manifest(one, "fetch:api.evil.test"), "www.example.com", false, false,
			[]want{{ReasonNewPermission, "Send requests to api.evil.test"}}},
		{"rules changed from the manager", manifest(one, "netrules"), manifest(one, "netrules"), "", true, true, []want{{ReasonRules, "network rules changed"}}},
		{"multi-site onto one with permissions, from the manager", manifest(two, "fetch:api.example.com"), manifest(one, "fetch:api.example.com"), "", false, false,
			[]want{{ReasonNarrowed, "onto just www.example.com, keeping its permissions"}}},
		{"every site onto one with permissions, from the manager", manifest(every, "storage"), manifest(one, "storage"), "", false, false,
			[]want{{ReasonNarrowed, "onto just www.example.com"}}},
		{"one site onto one with permissions", manifest(one, "storage"), manifest([]string{"https://www.example.com/feed/*"}, "storage"), "www.example.com", false, false, nil},
		{"several reasons", manifest(one), manifest(every, "clipboard"), "www.example.com", true, true,
			[]want{{ReasonEverySite, "every site"}, {ReasonOtherSites, "every site"}, {ReasonNewPermission, "New permission: Write text to your clipboard"}, {ReasonRules, "network rules changed"}}},

		// Issue 11, hole 1: an agent's change to a remixlet that runs on another site.
		{"agent code change on two sites", manifest(forumBank, "storage"), manifest(forumBank, "storage"), "forum.test", false, true,
			[]want{{ReasonOtherSites, "Change code that also runs on other sites than this page's (forum.test): bank.test"}}},
		{"agent code change on a remixlet of another site only", manifest([]string{"https://bank.test/*"}, "storage"), manifest([]string{"https://bank.test/*"}, "storage"), "forum.test", false, true,
			[]want{{ReasonOtherSites, "(forum.test): bank.test"}}},
		{"agent code change from a subdomain of one of them", manifest(forumBank, "storage"), manifest(forumBank, "storage"), "www.forum.test", false, true,
			[]want{{ReasonOtherSites, "(forum.test): bank.test"}}},
		{"agent manifest change on two sites", manifest(forumBank, "storage"), manifest(forumBank, "storage", "menu"), "forum.test", false, false,
			[]want{{ReasonOtherSites, "bank.test"}, {ReasonNewPermission, "Add commands"}}},
		{"agent excludes fewer pages on two sites", manifest(forumBank), &Manifest{Name: "x", API: 1, Matches: forumBank, ExcludeMatches: []string{"https://bank.test/login"}}, "forum.test", false, false,
			[]want{{ReasonOtherSites, "bank.test"}}},
		{"agent description change on two sites", manifest(forumBank, "storage"), described(manifest(forumBank, "storage"), "new words"), "forum.test", false, false, nil},
		{"agent same files on two sites", manifest(forumBank, "storage"), manifest([]string{"https://bank.test/*", "https://forum.test/*"}, "storage"), "forum.test", false, false, nil},
		{"agent moves it off the bank", manifest(forumBank, "storage"), manifest(forum, "storage"), "forum.test", false, false,
			[]want{{ReasonOtherSites, "ran on other sites than this page's (forum.test), keeping what it stored there: bank.test"}, {ReasonNarrowed, "onto just forum.test"}}},
		{"agent moves it off the bank, no permissions", manifest(forumBank), manifest(forum), "forum.test", false, false,
			[]want{{ReasonOtherSites, "ran on other sites"}}},
		{"agent moves it from the bank to the forum", manifest([]string{"https://bank.test/*"}), manifest(forum), "forum.test", false, true,
			[]want{{ReasonMoreSites, "more sites: forum.test"}, {ReasonOtherSites, "ran on other sites than this page's (forum.test), keeping what it stored there: bank.test"}}},
		{"agent code change under another site's wildcard", manifest([]string{"https://forum.test/*", "https://*.bank.test/*"}), manifest([]string{"https://forum.test/*", "https://*.bank.test/*"}), "forum.test", false, true,
			[]want{{ReasonOtherSites, ": *.bank.test"}}},
		{"agent code change on an every-site remixlet", manifest(every), manifest(every), "forum.test", false, true,
			[]want{{ReasonOtherSites, "Change code that runs on every site, not only on this page's (forum.test)"}}},
		{"agent code change on www and apex of one site", manifest(shop, "storage"), manifest(shop, "storage"), "www.shop.test", false, true, nil},
		{"agent code change on the chat's site under a wildcard", manifest([]string{"https://*.shop.test/*"}, "storage"), manifest([]string{"https://*.shop.test/*"}, "storage"), "api.shop.test", false, true, nil},
		{"agent code change on a public suffix wildcard", manifest([]string{"https://*.github.io/*"}), manifest([]string{"https://*.github.io/*"}), "me.github.io", false, true,
			[]want{{ReasonOtherSites, "(me.github.io): every site under .github.io"}}},
		{"person code change on two sites", manifest(forumBank, "storage"), manifest(forumBank, "storage"), "", false, true, nil},

		// Issue 11, hole 4: an agent's new code under a network permission held before.
		{"agent new code under fetch", manifest(shop, "fetch:api.shop.test"), manifest(shop, "fetch:api.shop.test"), "shop.test", false, true,
			[]want{{ReasonNetworkCode, "Run new code with a permission you allowed for its old code: Send requests to api.shop.test as you, with your cookies"}}},
		{"agent new code under observe and storage", manifest(shop, "storage", "network:observe:api.shop.test"), manifest(shop, "storage", "network:observe:api.shop.test"), "shop.test", false, true,
			[]want{{ReasonNetworkCode, "Read the responses pages receive from api.shop.test"}}},
		{"agent new script under netrules", manifest(shop, "netrules"), manifest(shop, "netrules"), "shop.test", false, true,
			[]want{{ReasonNetworkCode, "Change what pages load"}}},
		{"agent new rules under netrules", manifest(shop, "netrules"), manifest(shop, "netrules"), "shop.test", true, true,
			[]want{{ReasonNetworkCode, "Change what pages load"}, {ReasonRules, "network rules changed"}}},
		{"agent new code and a new fetch host", manifest(shop, "storage"), manifest(shop, "storage", "fetch:api.shop.test"), "shop.test", false, true,
			[]want{{ReasonNewPermission, "Send requests to api.shop.test"}}},
		{"agent new code dropping fetch", manifest(shop, "fetch:api.shop.test"), manifest(shop), "shop.test", false, true, nil},
		{"agent manifest change under fetch", manifest(shop, "fetch:api.shop.test"), described(manifest(shop, "fetch:api.shop.test"), "new words"), "shop.test", false, false, nil},
		{"person new code under fetch", manifest(shop, "fetch:api.shop.test"), manifest(shop, "fetch:api.shop.test"), "", false, true, nil},
		{"agent new code under fetch on two sites", manifest(forumBank, "fetch:api.bank.test"), manifest(forumBank, "fetch:api.bank.test"), "forum.test", false, true,
			[]want{{ReasonOtherSites, "bank.test"}, {ReasonNetworkCode, "Send requests to api.bank.test"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need, reasons := NeedsApproval(Change{Active: tt.active, Next: tt.next, ChatHost: tt.chatHost, RulesChanged: tt.rules, CodeChanged: tt.code})
			if need != (len(tt.want) > 0) {
				t.Fatalf("got need=%v %+v, want need=%v", need, reasons, len(tt.want) > 0)
			}
			if len(reasons) != len(tt.want) {
				t.Fatalf("got reasons %+v, want %d matching %+v", reasons, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if reasons[i].Kind != w.kind || !strings.Contains(reasons[i].Text, w.text) {
					t.Errorf("reason %d = %s %q, want %s containing %q", i, reasons[i].Kind, reasons[i].Text, w.kind, w.text)
				}
			}
		})
	}
}

// TestNeedsApprovalNamesWhatIsAtStake: the structured parts of a reason (what a grant may cover
// and what a card names) match its words.
func TestNeedsApprovalNamesWhatIsAtStake(t *testing.T) {
	_, reasons := NeedsApproval(Change{Active: manifest([]string{"https://forum.test/*", "https://bank.test/*", "https://*.news.test/*"}, "storage", "fetch:api.forum.test"),
		Next: manifest([]string{"https://forum.test/*", "https://bank.test/*", "https://*.news.test/*"}, "storage", "fetch:api.forum.test", "menu"), ChatHost: "www.forum.test", CodeChanged: true})
	var kinds []ReasonKind
	for _, r := range reasons {
		kinds = append(kinds, r.Kind)
	}
	if wantKinds := []ReasonKind{ReasonOtherSites, ReasonNewPermission, ReasonNetworkCode}; !slices.Equal(kinds, wantKinds) {
		t.Fatalf("got kinds %v, want %v (%+v)", kinds, wantKinds, reasons)
	}
	if got := reasons[0].Sites; !slices.Equal(got, []string{"*.news.test", "bank.test"}) {
		t.Errorf("got other sites %q, want *.news.test and bank.test", got)
	}
	if reasons[1].Permission != "menu" || reasons[2].Permission != "fetch:api.forum.test" {
		t.Errorf("got permissions %q and %q, want menu and fetch:api.forum.test", reasons[1].Permission, reasons[2].Permission)
	}
}

func TestIsNetworkPermission(t *testing.T) {
	for name, want := range map[string]bool{
		"fetch:api.shop.test": true, "network:observe:api.shop.test": true, "netrules": true,
		"storage": false, "clipboard": false, "notifications": false, "menu": false, "schedule": false,
	} {
		if got := IsNetworkPermission(name); got != want {
			t.Errorf("IsNetworkPermission(%q) = %v, want %v", name, got, want)
		}
	}
}
