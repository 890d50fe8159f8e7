package sandbox

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The cases follow the examples in Chrome's match-pattern documentation.
func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{"https://*/*", []string{"https://www.google.com/", "https://example.org/foo/bar.html"},
			[]string{"http://www.google.com/"}},
		{"https://*/foo*", []string{"https://example.com/foo/bar.html", "https://www.google.com/foo", "https://example.com/foo?x=1"},
			[]string{"https://example.com/bar/foo", "https://example.com/#foo"}},
		{"https://*.google.com/foo*bar", []string{"https://www.google.com/foo/baz/bar", "https://docs.google.com/foobar", "https://google.com/foobar"},
			[]string{"https://www.google.com/foo/baz", "https://notgoogle.com/foobar", "https://google.com.evil.test/foobar"}},
		{"http://127.0.0.1/*", []string{"http://127.0.0.1/", "http://127.0.0.1/foo/bar.html", "http://127.0.0.1:8080/x"},
			[]string{"https://127.0.0.1/"}},
		{"http://localhost/*", []string{"http://localhost:3000", "http://localhost:8080/foo.html"}, nil},
		{"*://mail.google.com/", []string{"http://mail.google.com/", "https://mail.google.com/"},
			[]string{"https://mail.google.com/mail", "ftp://mail.google.com/"}},
		{"<all_urls>", []string{"http://example.org/foo/bar.html", "https://x.test/"},
			[]string{"file:///bar/baz.html", "ftp://example.org/", "javascript:alert(1)"}},
		{"https://example.com:8443/*", []string{"https://example.com:8443/a"}, []string{"https://example.com/a", "https://example.com:8444/"}},
		{"https://EXAMPLE.com/*", []string{"https://example.com/a", "https://Example.COM/a"}, nil},
		{"*://*/*", []string{"http://a.test/", "https://b.test/x?y"}, []string{"file:///x"}},
		// IPv6 (OPEN-ITEMS 105): the pattern's host is written in brackets, net/url's Hostname
		// has none; a port is allowed after the brackets.
		{"https://[::1]/*", []string{"https://[::1]/", "https://[::1]:8443/a", "https://[0:0::1]/a"}, []string{"https://[::2]/", "https://localhost/"}},
		{"http://[2001:db8::1]:8080/*", []string{"http://[2001:DB8::1]:8080/x"}, []string{"http://[2001:db8::1]/x", "http://[2001:db8::1]:8081/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			p, err := ParsePattern(tt.pattern)
			if err != nil {
				t.Fatalf("ParsePattern: %v", err)
			}
			for _, s := range tt.match {
				if !p.Match(mustURL(t, s)) {
					t.Errorf("%s does not match %s, want it to", tt.pattern, s)
				}
			}
			for _, s := range tt.noMatch {
				if p.Match(mustURL(t, s)) {
					t.Errorf("%s matches %s, want it not to", tt.pattern, s)
				}
			}
		})
	}
}

func TestParsePatternErrors(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"https://www.google.com", "missing path"},
		{"https://*foo/bar", `"*" in the host`},
		{"https://foo.*.bar/baz", `"*" in the host`},
		{"http:/bar", `missing "://"`},
		{"foo://*/*", `scheme "foo" is not supported`},
		{"file:///foo*", `scheme "file" is not supported`},
		{"urn:*", `missing "://"`},
		{"://x/*", "missing scheme"},
		{"https:///*", "missing host"},
		{"https://*./*", "missing host"},
		{"https://exa mple.com/*", "space"},
		{"https://a..b/*", "empty label"},
		{"https://a.com:99999/*", "port"},
		{"https://ex%61mple.com/*", "only letters"},
		{"https://127.1/*", "is 127.0.0.1 to a browser"},
		{"https://*.0x7f.1/*", "is 127.0.0.1 to a browser"},
		{"https://xn--zz.example.com/*", "not a host a browser can read"},
		{"https://[0:0::1]/*", "is [::1] to a browser"},
		{"https://[::1/*", "not an IPv6 address"},
		{"https://[::1]x/*", "not an IPv6 address"},
		{"https://[::1]:x/*", "port"},
		{"https://*.[::1]/*", "port"},
		{"", `missing "://"`},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			_, err := ParsePattern(tt.pattern)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestManifestMatchesURL(t *testing.T) {
	m := &Manifest{Matches: []string{"https://*.example.com/*"}, ExcludeMatches: []string{"https://admin.example.com/*", "*://*/*/private/*"}}
	tests := []struct {
		url  string
		want bool
	}{
		{"https://www.example.com/feed", true},
		{"https://example.com/", true},
		{"https://admin.example.com/feed", false},
		{"https://www.example.com/a/private/b", false},
		{"https://other.test/", false},
		{"http://www.example.com/", false},
	}
	for _, tt := range tests {
		if got := m.MatchesURL(mustURL(t, tt.url)); got != tt.want {
			t.Errorf("MatchesURL(%s) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

func TestManifestSites(t *testing.T) {
	tests := []struct {
		name    string
		matches []string
		every   bool
		hosts   []string
	}{
		{"one host", []string{"https://example.com/*"}, false, []string{"example.com"}},
		{"subdomains absorb hosts", []string{"https://www.example.com/a*", "*://*.example.com/*", "http://b.test/"}, false, []string{"*.example.com", "b.test"}},
		{"all urls", []string{"https://a.test/*", "<all_urls>"}, true, nil},
		{"star host", []string{"*://*/*"}, true, nil},
		{"star host https only", []string{"https://*/*"}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := (&Manifest{Matches: tt.matches}).Sites()
			if s.Every != tt.every || !slices.Equal(s.Hosts, tt.hosts) {
				t.Errorf("got %+v, want every=%v hosts=%v", s, tt.every, tt.hosts)
			}
		})
	}
}

func TestSitesCovers(t *testing.T) {
	tests := []struct {
		a, b []string
		want bool
	}{
		{[]string{"*.example.com"}, []string{"www.example.com", "example.com"}, true},
		{[]string{"example.com"}, []string{"*.example.com"}, false},
		{[]string{"example.com"}, []string{"example.com", "b.test"}, false},
		{[]string{"*.example.com"}, []string{"*.a.example.com"}, true},
		{[]string{"*.example.com"}, []string{"badexample.com"}, false},
	}
	for _, tt := range tests {
		if got := (Sites{Hosts: tt.a}).Covers(Sites{Hosts: tt.b}); got != tt.want {
			t.Errorf("%v covers %v = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if (Sites{Hosts: []string{"a.test"}}).Covers(Sites{Every: true}) {
		t.Error("a host list covers every site, want not")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
