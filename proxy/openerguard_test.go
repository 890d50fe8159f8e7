package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestSeverOpener: a chat's next page gets a Window of its own only where the browser could
// have reused one, a same-origin navigation; other documents keep their opener.
func TestSeverOpener(t *testing.T) {
	for _, tc := range []struct {
		name     string
		url      string
		headers  map[string]string
		followed bool
		want     string
	}{
		{"same-origin, a chat follows", "https://shop.test/b", map[string]string{"Sec-Fetch-Site": "same-origin", "Referer": "https://shop.test/a"}, true, openerPolicy},
		{"the site's own policy is replaced", "https://shop.test/b", map[string]string{"Sec-Fetch-Site": "same-origin", "Referer": "https://shop.test/a"}, true, openerPolicy},
		{"no chat on the page it came from", "https://shop.test/b", map[string]string{"Sec-Fetch-Site": "same-origin", "Referer": "https://shop.test/a"}, false, ""},
		{"another origin of the site", "https://www.shop.test/b", map[string]string{"Sec-Fetch-Site": "same-site", "Referer": "https://shop.test/a"}, true, ""},
		{"through a same-site redirect, Referer of the origin", "https://shop.test/b", map[string]string{"Sec-Fetch-Site": "same-site", "Referer": "https://shop.test/a"}, true, openerPolicy},
		{"back from another site (a sign-in popup)", "https://shop.test/callback", map[string]string{"Sec-Fetch-Site": "cross-site", "Referer": "https://idp.test/"}, true, ""},
		{"no fetch metadata, Referer of the origin", "https://shop.test/b", map[string]string{"Referer": "https://shop.test/a"}, true, openerPolicy},
		{"no fetch metadata, Referer of another origin", "https://shop.test/b", map[string]string{"Referer": "https://www.shop.test/a"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.url, nil)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			h := http.Header{}
			if tc.name == "the site's own policy is replaced" {
				h.Set("Cross-Origin-Opener-Policy", "same-origin")
			}
			severOpener(h, req, tc.followed)
			if got := h.Get("Cross-Origin-Opener-Policy"); got != tc.want {
				t.Errorf("Cross-Origin-Opener-Policy = %q, want %q", got, tc.want)
			}
		})
	}
}
