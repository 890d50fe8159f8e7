package httpx

import "testing"

func TestRefreshURL(t *testing.T) {
	for in, want := range map[string]string{
		"0; url=https://witness.test/": "https://witness.test/",
		"5;URL='/next'":                "/next",
		"3, url = /a":                  "/a",
		"0;https://witness.test/x":     "https://witness.test/x",
		"10":                           "",
	} {
		if got := RefreshURL(in); got != want {
			t.Errorf("RefreshURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHostOnly: the host of a Host header or an address's host:port, without port or
// brackets; a host without a port costs no allocation (it is asked on every request).
func TestHostOnly(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"example.com", "example.com"}, {"example.com:443", "example.com"}, {"[::1]:8080", "::1"},
		{"[::1]", "::1"}, {"127.0.0.1:80", "127.0.0.1"}, {"", ""}, {"::1", "::1"}, {"a:b:c", "a:b:c"},
	} {
		if got := HostOnly(tt.in); got != tt.want {
			t.Errorf("HostOnly(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { HostOnly("example.com") }); n != 0 {
		t.Errorf("HostOnly of a host without a port allocates %v times, want 0", n)
	}
}
