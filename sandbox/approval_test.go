package sandbox

import (
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

func TestNeedsApproval(t *testing.T) {
	one := []string{"https://www.example.com/*"}
	two := []string{"https://www.example.com/*", "https://shop.test/*"}
	tests := []struct {
		name         string
		active, next *Manifest
		chatHost     string
		rulesChanged bool
		want         []string // a part of each expected reason; none means no approval
	}{
		// New remixlets: the chat's page vouches for its own host only.
		{"new on chat host", nil, manifest(one), "www.example.com", false, nil},
		{"new on chat host paths only", nil, manifest([]string{"https://www.example.com/feed/*", "http://www.example.com/x"}), "www.example.com", false, nil},
		{"new on other site", nil, manifest([]string{"https://shop.test/*"}), "www.example.com", false, []string{"other than this page's: shop.test"}},
		{"new on subdomains", nil, manifest([]string{"https://*.example.com/*"}), "www.example.com", false, []string{"other than this page's: *.example.com"}},
		{"new on every site", nil, manifest([]string{"<all_urls>"}), "www.example.com", false, []string{"every site"}},
		{"new from manager", nil, manifest(one), "", false, []string{"other than this page's: www.example.com"}},
		{"new with permission", nil, manifest(one, "storage"), "www.example.com", false, []string{"New permission: Keep its own data"}},
		{"new with rules", nil, manifest(one, "netrules"), "www.example.com", true, []string{"New permission: Change what pages load", "network rules changed"}},

		// Updates: compared with the running version.
		{"same everything", manifest(one, "storage"), manifest(one, "storage"), "www.example.com", false, nil},
		{"same sites from another chat host", manifest(two, "storage"), manifest(two, "storage"), "shop.test", false, nil},
		{"fewer permissions", manifest(one, "storage", "menu"), manifest(one, "menu"), "www.example.com", false, nil},
		{"fewer sites without permissions", manifest(two), manifest(one), "www.example.com", false, nil},
		{"narrower host under wildcard", manifest([]string{"*://*.example.com/*"}), manifest([]string{"https://a.example.com/*", "https://b.example.com/*"}), "a.example.com", false, nil},
		{"more sites", manifest(one), manifest(two), "www.example.com", false, []string{"more sites: shop.test"}},
		{"wider host", manifest(one), manifest([]string{"https://*.example.com/*"}), "www.example.com", false, []string{"more sites: *.example.com"}},
		{"every site", manifest(two), manifest([]string{"*://*/*"}), "www.example.com", false, []string{"every site"}},
		{"every site stays every site", manifest([]string{"<all_urls>"}, "menu"), manifest([]string{"*://*/*"}, "menu"), "www.example.com", false, nil},
		{"new permission", manifest(one, "storage"), manifest(one, "storage", "fetch:api.example.com"), "www.example.com", false,
			[]string{"New permission: Send requests to api.example.com as you, with your cookies"}},
		{"permission host changed", manifest(one, "fetch:api.example.com"), manifest(one, "fetch:api.evil.test"), "www.example.com", false,
			[]string{"Send requests to api.evil.test"}},
		{"rules changed", manifest(one, "netrules"), manifest(one, "netrules"), "www.example.com", true, []string{"network rules changed"}},
		{"multi-site onto one with permissions", manifest(two, "fetch:api.example.com"), manifest(one, "fetch:api.example.com"), "www.example.com", false,
			[]string{"onto just www.example.com, keeping its permissions"}},
		{"every site onto one with permissions", manifest([]string{"<all_urls>"}, "storage"), manifest(one, "storage"), "www.example.com", false,
			[]string{"onto just www.example.com"}},
		{"one site onto one with permissions", manifest(one, "storage"), manifest([]string{"https://www.example.com/feed/*"}, "storage"), "www.example.com", false, nil},
		{"several reasons", manifest(one), manifest([]string{"<all_urls>"}, "clipboard"), "www.example.com", true,
			[]string{"every site", "New permission: Write text to your clipboard", "network rules changed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need, reasons := NeedsApproval(tt.active, tt.next, tt.chatHost, tt.rulesChanged)
			if need != (len(tt.want) > 0) {
				t.Fatalf("got need=%v %q, want need=%v", need, reasons, len(tt.want) > 0)
			}
			if len(reasons) != len(tt.want) {
				t.Fatalf("got reasons %q, want %d matching %q", reasons, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(reasons[i], w) {
					t.Errorf("reason %d = %q, want it to contain %q", i, reasons[i], w)
				}
			}
		})
	}
}
