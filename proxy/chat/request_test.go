package chat

import (
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// TestSameSiteRequestURL: http_request's and open_page's address is read against the page as
// the browser reads it, checked in that reading, and sent as that reading.
func TestSameSiteRequestURL(t *testing.T) {
	page := mustWebURL(t, "https://www.shop.co.uk/cart/")
	for _, tt := range []struct {
		raw, want, err string
	}{
		{"/api/cart", "https://www.shop.co.uk/api/cart", ""},
		{"https://api.shop.co.uk/v1#frag", "https://api.shop.co.uk/v1", ""},
		{"https://SHOP.co.uk./x", "https://shop.co.uk/x", ""},
		{"https://www.shop.co.uk:443/x", "https://www.shop.co.uk/x", ""},
		{"https://\uff41\uff50\uff49.shop.co.uk/x", "https://api.shop.co.uk/x", ""},
		{"https://api\u3002shop\u3002co.uk/x", "https://api.shop.co.uk/x", ""},
		{"/a/../%2e%2e/x", "https://www.shop.co.uk/x", ""},
		{"x/%2E./y", "https://www.shop.co.uk/cart/y", ""},
		{"\\\\api.shop.co.uk\\v1", "https://api.shop.co.uk/v1", ""},
		{"/v1\t/ca\nrt", "https://www.shop.co.uk/v1/cart", ""},
		{"https:v1", "https://www.shop.co.uk/cart/v1", ""}, // no "//", same scheme: a path
		{"https://www.shop.co.uk\\@witness.test/", "https://www.shop.co.uk/@witness.test/", ""},
		{"https://witness.test\\@www.shop.co.uk/", "", "witness.test is not on this page's site"},
		{"/\\witness.test/", "", "witness.test is not on this page's site"},
		{"https:///witness.test/", "", "witness.test is not on this page's site"},
		{"https://www.shop.co.uk\u3002witness.test/", "", "not on this page's site"},
		{"https://\uff57itness.test/", "", "witness.test is not on this page's site"},
		{"https://other.co.uk/x", "", "not on this page's site"},
		{"https://co.uk/x", "", "not on this page's site"},
		{"http://www.shop.co.uk/x", "", "not on this page's site"},
		{"http:witness.test/x", "", "not on this page's site"},
		{"https://0x7f.1/", "", "127.0.0.1 is not on this page's site"},
		{"https://www.shop.co.uk:8443/x", "", "port 8443 refused"},
		{"https://user:pw@www.shop.co.uk/x", "", "user name or password"},
		{"https://www.shop.co.uk@witness.test/x", "", "user name or password"},
		{"javascript:alert(1)", "", "only http and https"},
		{"https://remix.proxy/x", "", "proxy's own host"},
		{"https://REMIX.PROXY./x", "", "proxy's own host"},
		{"https://sh op.co.uk/", "", "is not an address"},
	} {
		u, err := sameSiteRequestURL(page, tt.raw)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: %v, %v; want an error with %q", tt.raw, u, err, tt.err)
		case tt.err == "" && (err != nil || u.String() != tt.want):
			t.Errorf("%q: %v, %v; want %s", tt.raw, u, err, tt.want)
		}
	}
	ip := mustWebURL(t, "https://192.0.2.1/")
	if _, err := sameSiteRequestURL(ip, "https://192.0.2.2/"); err == nil {
		t.Error("another IP address counted as the same site")
	}
	if u, err := sameSiteRequestURL(ip, "https://3221225985/x"); err != nil || u.String() != "https://192.0.2.1/x" {
		t.Errorf("the page's IP address as one number: %v, %v; want https://192.0.2.1/x", u, err)
	}
}

func mustWebURL(t *testing.T, raw string) *weburl.URL {
	t.Helper()
	u, err := weburl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
