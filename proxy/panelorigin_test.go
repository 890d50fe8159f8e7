package proxy

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestPanelFrameCSP: the panel page may be framed only by the origin its address names, written
// as location.origin writes it; anything else, or nothing, frames it nowhere.
func TestPanelFrameCSP(t *testing.T) {
	tests := []struct {
		name, for_, want string
	}{
		{"https origin", "https://shop.test", "frame-ancestors https://shop.test"},
		{"with a port", "http://plain.test:8080", "frame-ancestors http://plain.test:8080"},
		{"none named (opened by hand)", "", "frame-ancestors 'none'"},
		{"a wildcard", "*", "frame-ancestors 'none'"},
		{"a second source", "https://a.test https://evil.test", "frame-ancestors 'none'"},
		{"a directive smuggled", "https://a.test; frame-ancestors *", "frame-ancestors 'none'"},
		{"a path", "https://a.test/", "frame-ancestors 'none'"},
		{"upper case", "https://A.test", "frame-ancestors 'none'"},
		{"the default port written", "https://a.test:443", "frame-ancestors 'none'"},
		{"an opaque origin", "null", "frame-ancestors 'none'"},
		{"another scheme", "javascript://a.test", "frame-ancestors 'none'"},
		{"an IPv6 literal", "http://[::1]:8080", "frame-ancestors 'none'"},
		{"userinfo", "https://u@a.test", "frame-ancestors 'none'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "https://remix.proxy/panel?for="+url.QueryEscape(tt.for_), nil)
			got := panelFrameCSP(r)
			if !strings.HasSuffix(got, tt.want) || strings.Count(got, "frame-ancestors") != 1 {
				t.Errorf("for=%q: got %q, want it to end in %q", tt.for_, got, tt.want)
			}
		})
	}
}

// TestPanelPageServedForItsOrigin: the panel page's answer carries the policy for its address.
func TestPanelPageServedForItsOrigin(t *testing.T) {
	w := httptest.NewRecorder()
	panelHTML.ServeHTTP(w, httptest.NewRequest("GET", "https://remix.proxy/panel?for=https://shop.test", nil))
	if got := w.Header().Get("Content-Security-Policy"); !strings.HasSuffix(got, "frame-ancestors https://shop.test") {
		t.Errorf("policy %q, want frame-ancestors https://shop.test", got)
	}
	if got := w.Header().Values("Content-Security-Policy"); len(got) != 1 {
		t.Errorf("%d policies, want one: %q", len(got), got)
	}
}
