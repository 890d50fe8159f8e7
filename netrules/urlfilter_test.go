package netrules

import (
	"net/http"
	"testing"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

func mustReq(t testing.TB, method, raw string, h http.Header) *Request {
	t.Helper()
	u, err := weburl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		h = http.Header{}
	}
	return NewRequest(method, u, h)
}

// The examples are Chrome's, from the declarativeNetRequest reference (urlFilter section).
func TestURLFilterChromeExamples(t *testing.T) {
	cases := []struct {
		filter string
		url    string
		want   bool
	}{
		{"abc", "https://abcd.com", true},
		{"abc", "https://example.com/abcd", true},
		{"abc", "https://ab.com", false},
		{"abc*d", "https://abcd.com", true},
		{"abc*d", "https://example.com/abcxyzd", true},
		{"abc*d", "https://abc.com", false},
		{"||a.example.com", "https://a.example.com/", true},
		{"||a.example.com", "https://b.a.example.com/xyz", true},
		{"||a.example.com", "https://a.example.company", true},
		{"||a.example.com", "https://example.com/", false},
		{"|https*", "https://example.com", true},
		{"|https*", "http://example.com/", false},
		{"|https*", "http://https.com", false},
		{"example*^123|", "https://example.com/123", true},
		{"example*^123|", "http://abc.com/example?123", true},
		{"example*^123|", "https://example.com/1234", false},
		{"example*^123|", "https://abc.com/example0123", false},
		// More: separators, the end of the URL as a separator, case.
		{"||ads.test^", "https://ads.test/x.png", true},
		{"||ads.test^", "https://cdn.ads.test:8443/x.png", true},
		{"||ads.test^", "https://ads.testing/x.png", false},
		{"||ads.test^", "https://notads.test/x.png", false},
		{"||ads.test/banner^", "https://ads.test/banner", true},
		{"/BANNER.", "https://x.test/banner.png", true},
		{"|http://x.test/|", "http://x.test/", true},
		{"|http://x.test/|", "http://x.test/a", false},
		{"a^", "https://x.test/a", true},
		{"a^b", "https://x.test/a", false},
		{"*", "https://x.test/", true},
		{"x.test/*/img", "https://x.test/a/b/img.png", true},
		{"?q=1", "https://x.test/p?q=1", true},
	}
	for _, c := range cases {
		f, err := compileURLFilter(c.filter, false)
		if err != nil {
			t.Fatalf("compile %q: %v", c.filter, err)
		}
		r := mustReq(t, "GET", c.url, nil)
		if got := f.match(r.url, r.lower, r.hostStart, r.hostEnd); got != c.want {
			t.Errorf("urlFilter %q on %s: got %v, want %v", c.filter, c.url, got, c.want)
		}
	}
}

func TestURLFilterCaseSensitive(t *testing.T) {
	f, _ := compileURLFilter("/Banner", true)
	r := mustReq(t, "GET", "https://x.test/banner", nil)
	if f.match(r.url, r.lower, r.hostStart, r.hostEnd) {
		t.Error("case-sensitive /Banner matched /banner")
	}
	r = mustReq(t, "GET", "https://x.test/Banner", nil)
	if !f.match(r.url, r.lower, r.hostStart, r.hostEnd) {
		t.Error("case-sensitive /Banner did not match /Banner")
	}
}

func TestAnchorHost(t *testing.T) {
	cases := map[string]string{
		"||ads.test^":      "ads.test",
		"||Ads.Test/x":     "ads.test",
		"||ads.test:8080":  "ads.test",
		"||ads.test|":      "ads.test",
		"||ads.test":       "", // also matches ads.testing
		"||ads.test*":      "",
		"|https://a.test/": "",
		"ads.test^":        "",
	}
	for f, want := range cases {
		got, _ := anchorHost(f)
		if got != want {
			t.Errorf("anchorHost(%q) = %q, want %q", f, got, want)
		}
	}
}

func TestURLFilterInvalid(t *testing.T) {
	for _, f := range []string{"", "||*x", "caf\u00e9"} {
		if _, err := compileURLFilter(f, false); err == nil {
			t.Errorf("urlFilter %q compiled; want an error", f)
		}
	}
}
