package fetch

import (
	"net/http"
	"net/url"
	"slices"
	"sort"
	"testing"
)

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func TestCredentialHeaderValues(t *testing.T) {
	ss := NewCredentials()
	req, _ := http.NewRequest("GET", "https://api.shop.test/v1/me", nil)
	req.Header.Set("Authorization", "Bearer tok-abcdef123")
	req.Header.Set("Cookie", "sid=s-12345678; theme=dark")
	resp := &http.Response{Request: req, Header: http.Header{"Set-Cookie": {"fresh=f-87654321; Path=/; HttpOnly"}}}
	ss.Observe(resp)
	auth, cookies := ss.Site("shop.test")
	if want := []string{"Bearer tok-abcdef123", "tok-abcdef123"}; !slices.Equal(sorted(auth), want) {
		t.Errorf("authorization values %q, want %q", auth, want)
	}
	if want := []string{"dark", "f-87654321", "s-12345678"}; !slices.Equal(sorted(cookies), want) {
		t.Errorf("cookie values %q, want %q", cookies, want)
	}
	if a, c := ss.Site("other.test"); len(c)+len(a) != 0 {
		t.Errorf("another site has values: %q %q", c, a)
	}
}

func TestCookieViewSiteValues(t *testing.T) {
	v := NewCookieView()
	u, _ := url.Parse("https://www.shop.test/")
	req := &http.Request{Method: "GET", URL: u, Header: http.Header{"Cookie": {"seen=seen-1234567"}}}
	v.Observe(&http.Response{Request: req, Header: http.Header{"Set-Cookie": {"set=set-7654321; Domain=shop.test; Path=/; Secure"}}})
	other, _ := url.Parse("https://other.test/")
	v.Observe(&http.Response{Request: &http.Request{Method: "GET", URL: other, Header: http.Header{"Cookie": {"o=other-123456"}}}, Header: http.Header{}})
	if got, want := sorted(v.SiteValues("shop.test")), []string{"seen-1234567", "set-7654321"}; !slices.Equal(got, want) {
		t.Errorf("SiteValues(shop.test) = %q, want %q", got, want)
	}
}
