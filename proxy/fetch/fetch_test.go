package fetch

import (
	"errors"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// TestApprovedURL: a fetch's address (and each redirect's) is read as the browser reads
// it and allowed or refused on that reading; the request goes to the address that was checked.
func TestApprovedURL(t *testing.T) {
	hosts := []string{"api.shop.test", "93.184.216.34", "[2606:2800:220:1::1]", "xn--bcher-kva.example", "remix.proxy"}
	tests := []struct {
		in, want, refused string
	}{
		{in: "https://api.shop.test/v1/cart?x=1#frag", want: "https://api.shop.test/v1/cart?x=1"},
		{in: "HTTP://API.SHOP.TEST./v1", want: "http://api.shop.test/v1"},
		{in: "https://api.shop.test:443/", want: "https://api.shop.test/"},
		{in: "https://b\u00fccher.example/", want: "https://xn--bcher-kva.example/"},
		{in: "https://93.184.216.34/", want: "https://93.184.216.34/"},
		{in: "https://[2606:2800:220:1:0::1]/", want: "https://[2606:2800:220:1::1]/"},
		{in: "https://\uff41\uff50\uff49.shop.test/", want: "https://api.shop.test/"},
		{in: "https://api\u3002shop\uff0etest/", want: "https://api.shop.test/"},
		{in: "https://api.%73hop.test/", want: "https://api.shop.test/"},
		{in: "https://api.shop.test/a/../%2e%2e/v1/./%2E/cart", want: "https://api.shop.test/v1/cart"},
		{in: "https:\\\\api.shop.test\\v1", want: "https://api.shop.test/v1"},
		{in: "https:api.shop.test/v1", want: "https://api.shop.test/v1"},
		{in: " https://api.shop.\ttest/v\n1 ", want: "https://api.shop.test/v1"},
		{in: "https://api.shop.test\\@witness.test/", want: "https://api.shop.test/@witness.test/"},
		{in: "http://1572395042/", want: "http://93.184.216.34/"}, // 93.184.216.34 as one number: that host
		{in: "http://0x5d.0xb8.0xd8.0x22/", want: "http://93.184.216.34/"},
		{in: "https://shop.test/", refused: "shop.test is not an approved host"},
		{in: "https://evil.api.shop.test/", refused: "not an approved host"},
		{in: "https://api.shop.test.evil.test/", refused: "not an approved host"},
		{in: "https://witness.test\\@api.shop.test/", refused: "witness.test is not an approved host"},
		{in: "https://api.shop.test\u3002witness.test/", refused: "api.shop.test.witness.test is not an approved host"},
		{in: "https://\u0430pi.shop.test/", refused: "xn--pi-6kc.shop.test is not an approved host"},
		{in: "https://127.0.0.1/", refused: "127.0.0.1 is not an approved host"},
		{in: "http://2130706433/", refused: "127.0.0.1 is not an approved host"},
		{in: "http://0x7f.1/", refused: "127.0.0.1 is not an approved host"},
		{in: "https://[::1]/", refused: "not an approved host"},
		{in: "https://api.shop.test:8443/", refused: "port 8443"},
		{in: "https://user:pw@api.shop.test/", refused: "user name"},
		{in: "https://api.shop.test@witness.test/", refused: "user name"},
		{in: "ftp://api.shop.test/", refused: "only http and https"},
		{in: "javascript:alert(1)", refused: "only http and https"},
		{in: "/relative", refused: "only absolute http and https"},
		{in: "https://api.shop.test/%zz", refused: "cannot be sent as the browser reads it"},
		{in: "https://REMIX.proxy./manager", refused: "the proxy's own host"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := ApprovedURL(hosts, tt.in)
			if tt.refused != "" {
				var ref *httpx.Refusal
				if !errors.As(err, &ref) || !strings.Contains(ref.Why, tt.refused) {
					t.Errorf("ApprovedURL(%q) = %v, %v; want a refusal with %q", tt.in, u, err, tt.refused)
				}
				return
			}
			if err != nil || u.String() != tt.want {
				t.Errorf("ApprovedURL(%q) = %v, %v; want %q", tt.in, u, err, tt.want)
			}
		})
	}
}
