package e2etest

import (
	"net/http/httptest"
	"testing"
)

// TestBrowserOwn: only the browser's own background requests are left uncounted; every request a
// page, a remixlet or the proxy can make is counted.
func TestBrowserOwn(t *testing.T) {
	for _, c := range []struct {
		name       string
		site, mode string
		want       bool
	}{
		{"the browser's background fetch", "none", "no-cors", true},
		{"the same, other case", "None", "cors", true},
		{"a navigation the harness or the person started", "none", "navigate", false},
		{"a page's cross-site request", "cross-site", "no-cors", false},
		{"a page's same-origin fetch", "same-origin", "cors", false},
		{"a page's navigation of its tab", "cross-site", "navigate", false},
		{"no fetch metadata (the proxy's own, a plain http page's)", "", "", false},
	} {
		r := httptest.NewRequest("GET", "https://www.google.com/async/folae", nil)
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		if c.mode != "" {
			r.Header.Set("Sec-Fetch-Mode", c.mode)
		}
		if got := BrowserOwn(r); got != c.want {
			t.Errorf("%s: BrowserOwn = %v, want %v", c.name, got, c.want)
		}
	}
}
