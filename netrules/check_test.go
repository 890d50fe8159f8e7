package netrules

import "testing"

// A remixlet's sites name an IPv6 host in brackets ("[::1]", as a match pattern writes it);
// requests name it without (Request.Host). Both are the same host (OPEN-ITEMS 105).
func TestSitesCoverIPv6(t *testing.T) {
	s := Sites{Hosts: []string{"[::1]", "example.com"}}
	for host, want := range map[string]bool{"::1": true, "[::1]": true, "::2": false, "example.com": true} {
		if got := s.Covers(host); got != want {
			t.Errorf("Covers(%q) = %v, want %v", host, got, want)
		}
	}
}
