package remixlet

import (
	"encoding/base64"
	"net/url"
	"slices"
	"testing"
)

// TestCarriedSites: the sites a query or fragment carries, in the shapes a page script may load
// (OPEN-ITEMS 14; proxy/chat/navguard_carried.go).
func TestCarriedSites(t *testing.T) {
	addr := "https://witness.test/img?d=4711"
	for _, tt := range []struct {
		name, part string
		want       []string
	}{
		{"an address as written", "doc=" + addr, []string{"witness.test"}},
		{"percent-encoded", "doc=" + url.QueryEscape(addr), []string{"witness.test"}},
		{"percent-encoded twice", "to=" + url.QueryEscape("/viewer?img="+url.QueryEscape(addr)), []string{"witness.test"}},
		{"percent-encoded three times", "a=" + url.QueryEscape(url.QueryEscape(url.QueryEscape(addr))), []string{"witness.test"}},
		{"base64", "doc=" + base64.StdEncoding.EncodeToString([]byte(addr)), []string{"witness.test"}},
		{"base64, URL alphabet, percent-encoded", "doc=" + url.QueryEscape(base64.URLEncoding.EncodeToString([]byte(addr))), []string{"witness.test"}},
		{"scheme-relative", "img=//witness.test/i?d=1", []string{"witness.test"}},
		{"a host name with a path", "img=witness.test/i?d=4711", []string{"witness.test"}},
		{"a subdomain carrying the data", "img=d4711.witness.test", []string{"witness.test"}},
		{"a host with a port", "img=witness.test:8443/x", []string{"witness.test"}},
		{"an IPv4 address", "img=203.0.113.9/x", []string{"203.0.113.9"}},
		{"nested in a fragment's query", "/view?doc=witness.test/x", []string{"witness.test"}},
		{"a real TLD", "q=github.com", []string{"github.com"}},
		{"two sites", "a=https://one.example/&b=www.two.example", []string{"one.example", "two.example"}},
		{"full-width dots", "img=https://witness\uff0etest/x", []string{"witness.test"}},
		{"a tab escaped inside the scheme", "doc=ht%09tps://witness.test/x", []string{"witness.test"}},
		{"a newline escaped twice inside the scheme", "doc=ht%250Atps://witness.test/x", []string{"witness.test"}},
		{"a tab escaped inside a host field", "img=witness%09.test/x", []string{"witness.test"}},
		{"an IPv6 address", "doc=http://[2001:db8::7]/x", []string{"[2001:db8::7]"}},
		{"a scheme-relative IPv6 address", "doc=//[2001:db8::7]/x", []string{"[2001:db8::7]"}},
		{"a host field with an escaped ideographic full stop", "img=witness%E3%80%82test/x", []string{"witness.test"}},
		{"a host field in escaped full-width letters", "img=" + url.QueryEscape("\uff57\uff49\uff54\uff4e\uff45\uff53\uff53.test"), []string{"witness.test"}},
		{"https: with one slash, as new URL reads it", "doc=https:/witness.test/x", []string{"witness.test"}},
		{"an IPv4 address in hex", "img=0xcb.0.113.9/x", []string{"203.0.113.9"}},
		{"an IPv4 address in octal", "img=0313.0.0161.011", []string{"203.0.113.9"}},
		{"a two-part version number", "v=2.05", nil},
		{"a user name before a host with a path", "img=d4711@witness.test/i", []string{"witness.test"}},
		{"a user name and password before a host", "img=d:4711@witness.test", []string{"witness.test"}},
		{"an @ in the path", "u=mastodon.social/@alice", []string{"mastodon.social"}},
		{"a mail address in a list", "to=alice@example.com&cc=bob@example.org", nil},
		{"a plain search", "q=door+code&page=2", nil},
		{"a word in a sentence is not a field", "q=see+github.com+for+it", nil},
		{"a version number", "v=1.2.3", nil},
		{"a file name", "f=report.pdf&g=notes.txt", nil},
		{"a mail address", "to=alice@example.com", nil},
		{"a slash pair in a search", "q=a//b", nil},
		{"a path of the site", "next=/account/settings", nil},
		{"nothing", "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) { sameSites(t, "CarriedSites", CarriedSites, tt.part, tt.want) })
	}
}

// TestCarriedInPath: the sites a path carries — scheme-ful addresses only, as written,
// percent-encoded, in a base64 segment — and the host-looking segments it does not read
// (OPEN-ITEMS 14; proxy/chat/navguard_carried.go).
func TestCarriedInPath(t *testing.T) {
	addr := "https://witness.test/img?d=4711"
	for _, tt := range []struct {
		name, path string
		want       []string
	}{
		{"an address as written", "/viewer/https://witness.test/i/4711", []string{"witness.test"}},
		{"a web archive's path", "/web/2020/https://witness.test/", []string{"witness.test"}},
		{"https: with one slash", "/https:/witness.test", []string{"witness.test"}},
		{"https: with no slash", "/viewer/https:witness.test/x", []string{"witness.test"}},
		{"the scheme in capitals", "/viewer/HTTPS://witness.test/x", []string{"witness.test"}},
		{"a WebSocket address", "/viewer/wss://witness.test/s", []string{"witness.test"}},
		{"a dotless host after two slashes", "/viewer/http://intranet:8080/x", []string{"intranet"}},
		{"percent-encoded", "/viewer/" + url.QueryEscape(addr), []string{"witness.test"}},
		{"percent-encoded twice", "/viewer/" + url.QueryEscape(url.QueryEscape(addr)), []string{"witness.test"}},
		{"percent-encoded three times", "/viewer/" + url.QueryEscape(url.QueryEscape(url.QueryEscape(addr))), []string{"witness.test"}},
		{"an escaped tab inside the scheme", "/viewer/ht%09tps%3A%2F%2Fwitness.test%2Fx", []string{"witness.test"}},
		{"a base64 segment, URL alphabet", "/b/" + base64.RawURLEncoding.EncodeToString([]byte(addr)) + "/view", []string{"witness.test"}},
		{"a base64 segment, standard alphabet, percent-encoded", "/b/" + url.PathEscape(base64.StdEncoding.EncodeToString([]byte(addr))), []string{"witness.test"}},
		{"a base64 segment after a segment of any length", "/view/" + base64.RawURLEncoding.EncodeToString([]byte(addr)), []string{"witness.test"}},
		{"an IPv6 address", "/viewer/http://[2001:db8::7]/x", []string{"[2001:db8::7]"}},
		{"two sites", "/a/https://one.example/b/http%3A%2F%2Ftwo.example%2F", []string{"one.example", "two.example"}},
		{"a host-looking segment is not read", "/witness.test/i/4711", nil},
		{"a domain page", "/domain/example.com", nil},
		{"a wiki page named for a host", "/wiki/Example.com", nil},
		{"a scheme-relative address", "/a//witness.test/x", []string{"witness.test"}},
		{"a scheme-relative address after a viewer's prefix", "/v///witness.test/i/4711", []string{"witness.test"}},
		{"a scheme-relative address percent-encoded", "/v/%2F%2Fwitness.test%2Fi", []string{"witness.test"}},
		{"a doubled slash before a name on a real TLD (a cost)", "/docs//readme.md", []string{"readme.md"}},
		{"a doubled slash before a file name", "/frame/images//forground.gif", nil},
		{"a doubled slash before a script", "/ab//shared-991cd5a3.js", nil},
		{"a doubled slash before a dotless name", "/a//b/c", nil},
		{"a title with a colon", "/wiki/HTTP:_The_Definitive_Guide", nil},
		{"a word after http:", "/docs/http:get", nil},
		{"a plain path", "/account/settings/2", nil},
		{"a base64 id", "/p/" + base64.RawURLEncoding.EncodeToString([]byte("order 12345 of alice")), nil},
		{"a file name", "/files/report.pdf", nil},
		{"the root", "/", nil},
	} {
		t.Run(tt.name, func(t *testing.T) { sameSites(t, "CarriedInPath", CarriedInPath, tt.path, tt.want) })
	}
}

// TestCarriedAddresses: the sites CarriedSites reads from addresses (with a scheme, or
// scheme-relative), in every shape, and not from fields that only read as a host name.
func TestCarriedAddresses(t *testing.T) {
	for _, tt := range []struct {
		name, part string
		want       []string
	}{
		{"as written", "img=https://witness.test/i?d=4711", []string{"witness.test"}},
		{"percent-encoded", "img=https%3A%2F%2Fwitness.test%2Fi", []string{"witness.test"}},
		{"base64", "img=" + base64.RawURLEncoding.EncodeToString([]byte("https://witness.test/i")), []string{"witness.test"}},
		{"scheme-relative", "img=//witness.test/i", []string{"witness.test"}},
		{"one slash", "https:/witness.test", []string{"witness.test"}},
		{"a host field", "doc=witness.test/i?d=4711", nil},
		{"an anchor", "setup.py", nil},
		{"a host field beside an address", "a=witness.test&b=https://other.test/", []string{"other.test"}},
	} {
		t.Run(tt.name, func(t *testing.T) { sameSites(t, "CarriedAddresses", CarriedAddresses, tt.part, tt.want) })
	}
}

// sameSites checks that read(in) is want, in any order.
func sameSites(t *testing.T, name string, read func(string) []string, in string, want []string) {
	t.Helper()
	got := read(in)
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s(%q) = %q, want %q", name, in, got, want)
	}
}
