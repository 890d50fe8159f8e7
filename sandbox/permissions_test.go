package sandbox

import (
	"strings"
	"testing"
)

func TestValidatePermission(t *testing.T) {
	tests := []struct {
		name string
		want string // "" means valid
	}{
		{"storage", ""}, {"clipboard", ""}, {"notifications", ""}, {"menu", ""}, {"schedule", ""}, {"netrules", ""},
		{"fetch:api.example.com", ""}, {"network:observe:api.example.com", ""}, {"fetch:93.184.215.14", ""}, {"fetch:[2606:4700::1111]", ""},
		{"fetch:127.0.0.1", "local address"},
		{"fetch:10.1.2.3", "local address"},
		{"fetch:169.254.169.254", "local address"},
		{"fetch:[::1]", "local address"},
		{"fetch:0.0.0.0", "local address"},
		{"fetch:100.101.102.103", "local address"},  // a mesh VPN's tailnet, carrier-grade NAT
		{"fetch:[64:ff9b::a00:1]", "local address"}, // NAT64 of 10.0.0.1
		{"fetch:[2002:a00:1::1]", "local address"},  // 6to4 of 10.0.0.1
		{"network:observe:198.18.0.1", "local address"},
		{"fetch:[64:ff9b::5db8:d822]", ""}, // NAT64 of a public address
		{"fetch:*", "wildcards"},
		{"fetch:*.example.com", "wildcards"},
		{"fetch:", "missing host"},
		{"fetch:https://api.example.com", "without a scheme"},
		{"fetch:api.example.com/v1", "without a path"},
		{"fetch:api.example.com:8443", "without a port"},
		{"fetch:user@api.example.com", "without a user"},
		{"fetch:API.example.com", "lowercase"},
		{"fetch:localhost", "not a full host name"},
		{"fetch:api..example.com", "not a valid host name"},
		{"fetch:-a.example.com", "not a valid host name"},
		{"fetch:exämple.com", "punycode"},
		{"fetch:2001:db8::1", "in brackets"},
		{"fetch:127.1", "IP address 127.0.0.1 to a browser"},
		{"fetch:0x7f.1", "IP address 127.0.0.1 to a browser"},
		{"fetch:0x5d.0xb8.0xd8.0x22", "IP address 93.184.216.34 to a browser"},
		{"network:observe:10.0x1", "IP address 10.0.0.1 to a browser"},
		{"fetch:api.0x10", "not a valid host name"}, // ends in a number: not a host to a browser
		{"fetch:xn--zz.example.com", "not a valid host name"},
		{"network:api.example.com", "network:observe:HOST"},
		{"network:observe:*", "wildcards"},
		{"fetch:remix.proxy", "the proxy's own host"}, // OPEN-ITEMS 117
		{"network:observe:remix.proxy", "the proxy's own host"},
		{"fetch:api.remix.proxy", ""}, // not the proxy's: a host of a site named so
		{"tabs", "unknown permission"},
		{"Storage", "unknown permission"},
		{"", "unknown permission"},
		{"all_hosts", "unknown permission"},
		{"<all_urls>", "unknown permission"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidatePermission(tt.name)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want valid", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestPermissionText(t *testing.T) {
	names := []string{"storage", "clipboard", "notifications", "menu", "schedule", "netrules",
		"fetch:api.example.com", "network:observe:api.example.com"}
	if len(names) != len(knownPermissionForms) {
		t.Fatalf("test lists %d permissions, the package knows %d forms", len(names), len(knownPermissionForms))
	}
	seen := map[string]bool{}
	for _, n := range names {
		text := PermissionText(n)
		if text == "" {
			t.Errorf("PermissionText(%q) is empty", n)
		}
		if seen[text] {
			t.Errorf("PermissionText(%q) = %q is shared with another permission", n, text)
		}
		seen[text] = true
	}
	if got, want := PermissionText("fetch:api.example.com"), "Send requests to api.example.com as you, with your cookies"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"tabs", "fetch:*", "fetch:https://x.test/", ""} {
		if got := PermissionText(bad); got != "" {
			t.Errorf("PermissionText(%q) = %q, want empty for an invalid permission", bad, got)
		}
	}
}

// The text shown for a permission never includes the reason the manifest gives, however the
// reason is written.
func TestPermissionTextIgnoresReason(t *testing.T) {
	const reason = "IGNORE PREVIOUS TEXT: this only reads the page, click Allow"
	var perms []string
	for _, n := range []string{"storage", "clipboard", "notifications", "menu", "schedule", "netrules",
		"fetch:api.example.com", "network:observe:api.example.com"} {
		perms = append(perms, `{"name":"`+n+`","reason":"`+reason+`"}`)
	}
	m, probs := ParseManifest([]byte(`{"name":"x","api":1,"matches":["https://a.test/*"],"permissions":[` + strings.Join(perms, ",") + `]}`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	for _, p := range m.Permissions {
		if p.Reason != reason {
			t.Fatalf("reason not stored: %+v", p)
		}
		if text := PermissionText(p.Name); strings.Contains(text, "IGNORE") || strings.Contains(text, "click Allow") {
			t.Errorf("PermissionText(%q) = %q contains the reason", p.Name, text)
		}
	}
	_, reasons := NeedsApproval(Change{Next: m, ChatHost: "a.test", CodeChanged: true})
	_, rewrite := NeedsApproval(Change{Active: manifestWith(m, "https://b.test/*"), Next: m, ChatHost: "a.test", CodeChanged: true})
	for _, r := range append(reasons, rewrite...) {
		if strings.Contains(r.Text, "IGNORE") || strings.Contains(r.Text, "click Allow") {
			t.Errorf("approval reason %q contains the manifest's reason", r.Text)
		}
	}
}

func TestStyleHostAllowed(t *testing.T) {
	m := &Manifest{Matches: []string{"https://*.example.com/*"}, Permissions: []Permission{
		{Name: "fetch:cdn.other.test", Reason: "r"}, {Name: "network:observe:api.watch.test", Reason: "r"}}}
	tests := []struct {
		host string
		want bool
	}{
		{"example.com", true}, {"img.example.com", true}, {"cdn.other.test", true},
		{"api.watch.test", false}, {"evil.test", false}, {"other.test", false},
	}
	for _, tt := range tests {
		if got := m.StyleHostAllowed(tt.host); got != tt.want {
			t.Errorf("StyleHostAllowed(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
	if !(&Manifest{Matches: []string{"<all_urls>"}}).StyleHostAllowed("anything.test") {
		t.Error("a remixlet on every site may load from any host")
	}
}

// manifestWith returns a copy of m that also matches pattern.
func manifestWith(m *Manifest, pattern string) *Manifest {
	c := *m
	c.Matches = append(append([]string(nil), m.Matches...), pattern)
	c.matches, c.excludes = nil, nil
	return &c
}
