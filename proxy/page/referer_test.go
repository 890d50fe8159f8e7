package page

import (
	"net/url"
	"testing"
)

// TestRefererSession: which page session a response's Referer names.
func TestRefererSession(t *testing.T) {
	sessions := []Info{ // oldest first
		{ID: "old-cart", URL: "https://shop.test/cart", Origin: "https://shop.test"},
		{ID: "list", URL: "https://shop.test/list?page=2#top", Origin: "https://shop.test"},
		{ID: "new-cart", URL: "https://shop.test/cart", Origin: "https://shop.test"},
		{ID: "news", URL: "https://news.test/", Origin: "https://news.test"},
	}
	tests := []struct {
		name, referer, want string
	}{
		{"exact address, newest wins", "https://shop.test/cart", "new-cart"},
		{"fragments aside", "https://shop.test/list?page=2", "list"},
		{"the referer's fragment aside", "https://shop.test/cart#x", "new-cart"},
		{"bare origin: newest of the origin", "https://shop.test/", "new-cart"},
		{"bare origin without a slash", "https://shop.test", "new-cart"},
		{"bare origin that is also a page's address", "https://news.test/", "news"},
		{"another path of the origin names none", "https://shop.test/other", ""},
		{"a query is not a bare origin", "https://shop.test/?q=1", ""},
		{"another origin", "https://mail.test/", ""},
		{"another scheme is another origin", "http://shop.test/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, err := url.Parse(tt.referer)
			if err != nil {
				t.Fatal(err)
			}
			if got := RefererSession(ref, sessions); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
