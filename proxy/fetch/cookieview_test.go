package fetch

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// viewTraffic is one request the browser made and what its response said.
type viewTraffic struct {
	url        string
	cookie     string   // the Cookie header the browser sent
	navigate   bool     // a same-origin navigation (it sends every cookie the browser has)
	crossSite  bool     // a cross-site request
	setCookies []string // on the response
}

func feedView(v *CookieView, traffic ...viewTraffic) {
	for _, tr := range traffic {
		u, _ := url.Parse(tr.url)
		req := &http.Request{URL: u, Header: http.Header{}}
		if tr.cookie != "" {
			req.Header.Set("Cookie", tr.cookie)
		}
		if tr.navigate {
			req.Header.Set("Sec-Fetch-Mode", "navigate")
			req.Header.Set("Sec-Fetch-Dest", "document")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		if tr.crossSite {
			req.Header.Set("Sec-Fetch-Site", "cross-site")
		}
		resp := &http.Response{Request: req, Header: http.Header{}}
		for _, sc := range tr.setCookies {
			resp.Header.Add("Set-Cookie", sc)
		}
		v.Observe(resp)
	}
}

func TestCookieViewSendsWhatTheBrowserWould(t *testing.T) {
	tests := []struct {
		name    string
		traffic []viewTraffic
		fetch   string
		want    string
	}{
		{"set by the site, Domain covers the API host",
			[]viewTraffic{{url: "https://www.shop.test/", setCookies: []string{"sid=abc; Domain=shop.test; Path=/; Secure; HttpOnly"}}},
			"https://api.shop.test/cart", "sid=abc"},
		{"host-only cookie stays on its host",
			[]viewTraffic{{url: "https://www.shop.test/", setCookies: []string{"sid=abc; Path=/"}}},
			"https://api.shop.test/cart", ""},
		{"Secure cookie not sent over http",
			[]viewTraffic{{url: "https://shop.test/", setCookies: []string{"sid=abc; Secure"}}},
			"http://shop.test/", ""},
		{"Secure cookie from http is refused",
			[]viewTraffic{{url: "http://shop.test/", setCookies: []string{"sid=abc; Secure"}}},
			"https://shop.test/", ""},
		{"Path scopes the cookie",
			[]viewTraffic{{url: "https://shop.test/a/page", setCookies: []string{"p=1; Path=/account"}}},
			"https://shop.test/accounts", ""},
		{"Path prefix on a segment boundary",
			[]viewTraffic{{url: "https://shop.test/a/page", setCookies: []string{"p=1; Path=/account"}}},
			"https://shop.test/account/x", "p=1"},
		{"default path is the request's directory",
			[]viewTraffic{{url: "https://shop.test/a/page", setCookies: []string{"p=1"}}},
			"https://shop.test/b", ""},
		{"public suffix as Domain is refused",
			[]viewTraffic{{url: "https://evil.test/", setCookies: []string{"x=1; Domain=test"}}},
			"https://shop.test/", ""},
		{"Domain the host is not in is refused",
			[]viewTraffic{{url: "https://evil.test/", setCookies: []string{"x=1; Domain=shop.test"}}},
			"https://shop.test/", ""},
		{"Max-Age=0 deletes",
			[]viewTraffic{
				{url: "https://shop.test/", setCookies: []string{"sid=abc"}},
				{url: "https://shop.test/logout", setCookies: []string{"sid=; Max-Age=0"}},
			},
			"https://shop.test/", ""},
		{"expired Expires deletes a cookie only the header knew",
			[]viewTraffic{
				{url: "https://shop.test/", cookie: "sid=abc"},
				{url: "https://shop.test/logout", setCookies: []string{"sid=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT"}},
			},
			"https://shop.test/", ""},
		{"Cookie header is the ground truth for cookies set by script",
			[]viewTraffic{{url: "https://shop.test/x", cookie: "theme=dark; sid=abc"}},
			"https://shop.test/y", "theme=dark; sid=abc"},
		{"a newer Cookie header wins over an older Set-Cookie",
			[]viewTraffic{
				{url: "https://shop.test/", setCookies: []string{"theme=light; Path=/"}},
				{url: "https://shop.test/x", cookie: "theme=dark"},
			},
			"https://shop.test/y", "theme=dark"},
		{"a newer Set-Cookie wins over an older Cookie header",
			[]viewTraffic{
				{url: "https://shop.test/x", cookie: "theme=dark"},
				{url: "https://shop.test/", setCookies: []string{"theme=light; Path=/"}},
			},
			"https://shop.test/y", "theme=light"},
		{"a same-origin navigation without the cookie means the browser lost it",
			[]viewTraffic{
				{url: "https://shop.test/", setCookies: []string{"sid=abc; Path=/"}},
				{url: "https://shop.test/next", cookie: "other=1", navigate: true},
			},
			"https://shop.test/", "other=1"},
		{"a subresource without the cookie proves nothing",
			[]viewTraffic{
				{url: "https://shop.test/", setCookies: []string{"sid=abc; Path=/"}},
				{url: "https://shop.test/pixel.gif", cookie: "other=1"},
			},
			"https://shop.test/", "sid=abc; other=1"},
		{"a cross-site request's Cookie header is not taken (it may hold partitioned cookies)",
			[]viewTraffic{{url: "https://shop.test/pixel.gif", cookie: "partitioned=1", crossSite: true}},
			"https://shop.test/", ""},
		{"a header seen over https is not sent over http",
			[]viewTraffic{{url: "https://shop.test/", cookie: "sid=abc"}},
			"http://shop.test/", ""},
		{"__Host- needs Secure, no Domain and Path=/",
			[]viewTraffic{{url: "https://www.shop.test/", setCookies: []string{"__Host-a=1; Secure; Domain=shop.test; Path=/", "__Host-b=2; Secure; Path=/"}}},
			"https://www.shop.test/", "__Host-b=2"},
		{"uppercase and trailing-dot hosts are the same host",
			[]viewTraffic{{url: "https://SHOP.test./", setCookies: []string{"sid=abc; Path=/"}}},
			"https://shop.test/", "sid=abc"},
		{"more specific path first",
			[]viewTraffic{{url: "https://shop.test/", setCookies: []string{"a=root; Path=/", "a=deep; Path=/x"}}},
			"https://shop.test/x/y", "a=deep; a=root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewCookieView()
			clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			v.now = func() time.Time { clock = clock.Add(time.Second); return clock }
			feedView(v, tt.traffic...)
			u, _ := url.Parse(tt.fetch)
			if got := v.CookieHeader(u); got != tt.want {
				t.Errorf("cookies for %s = %q, want %q", tt.fetch, got, tt.want)
			}
		})
	}
}

func TestCookieViewExpiry(t *testing.T) {
	v := NewCookieView()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v.now = func() time.Time { return clock }
	feedView(v, viewTraffic{url: "https://shop.test/", setCookies: []string{"short=1; Max-Age=60; Path=/", "long=2; Max-Age=3600; Path=/"}})
	u, _ := url.Parse("https://shop.test/")
	if got := v.CookieHeader(u); got != "short=1; long=2" && got != "long=2; short=1" {
		t.Fatalf("cookies = %q, want both", got)
	}
	clock = clock.Add(2 * time.Minute)
	if got := v.CookieHeader(u); got != "long=2" {
		t.Errorf("after Max-Age ran out, cookies = %q, want %q", got, "long=2")
	}
}

func TestCookieViewIsBounded(t *testing.T) {
	v := NewCookieView()
	for i := range maxViewCookies + 500 {
		feedView(v, viewTraffic{url: "https://shop.test/", setCookies: []string{"c" + strconv.Itoa(i) + "=v; Max-Age=3600"}})
	}
	for i := range maxViewHosts + 50 {
		feedView(v, viewTraffic{url: "https://h" + strconv.Itoa(i) + ".test/", cookie: "a=1"})
	}
	if len(v.stored) > maxViewCookies || len(v.hosts) > maxViewHosts {
		t.Errorf("view holds %d cookies and %d hosts, limits %d and %d", len(v.stored), len(v.hosts), maxViewCookies, maxViewHosts)
	}
}

func TestCookieViewNeverChangesTraffic(t *testing.T) {
	v := NewCookieView()
	u, _ := url.Parse("https://shop.test/")
	req := &http.Request{URL: u, Header: http.Header{"Cookie": {"a=1"}}}
	resp := &http.Response{Request: req, Header: http.Header{"Set-Cookie": {"b=2; Path=/"}}}
	v.Observe(resp)
	if req.Header.Get("Cookie") != "a=1" || resp.Header.Get("Set-Cookie") != "b=2; Path=/" || len(req.Header) != 1 || len(resp.Header) != 1 {
		t.Errorf("observe changed the traffic: %v %v", req.Header, resp.Header)
	}
}
