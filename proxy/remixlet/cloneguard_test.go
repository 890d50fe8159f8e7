package remixlet

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestCloneGuard(t *testing.T) {
	g := newGuardTest(t)
	image := func(target string, h http.Header) bool {
		t.Helper()
		u, _ := url.ParseRequestURI(target)
		u.Scheme, u.Host = "https", "shop.test"
		resp := &http.Response{StatusCode: http.StatusFound, Header: http.Header{"Location": {"https://witness.test/0"}},
			Body: io.NopCloser(strings.NewReader("")), Request: &http.Request{URL: u, Host: "shop.test", RequestURI: target, Header: h}}
		g.r.GuardRedirect(resp)
		return resp.StatusCode == http.StatusForbidden
	}
	img := func(referer string) http.Header {
		h := http.Header{"Sec-Fetch-Dest": {"image"}, "Sec-Fetch-Site": {"same-origin"}}
		if referer != "" {
			h.Set("Referer", referer)
		}
		return h
	}
	if image("/redirect?to=w", img("https://shop.test/thread")) {
		t.Fatal("a page's own image was refused before any clone")
	}
	if err := g.r.guard.addClone("s1", "https://shop.test/thread", g.id, g.m); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		h       http.Header
		refused bool
	}{
		{"the cloning page's image", img("https://shop.test/thread"), true},
		{"no Referer, same-origin", img(""), true},
		{"another page of the origin", img("https://shop.test/other"), false},
		{"a script, not an image", http.Header{"Sec-Fetch-Dest": {"script"}, "Referer": {"https://shop.test/thread"}}, false},
		{"a navigation", http.Header{"Sec-Fetch-Dest": {"document"}, "Referer": {"https://shop.test/thread"}}, false},
		{"plain http image", http.Header{"Accept": {"image/avif,image/webp,*/*"}, "Referer": {"https://shop.test/thread"}}, true},
	}
	for _, tt := range tests {
		if got := image("/redirect?to=w", tt.h); got != tt.refused {
			t.Errorf("%s: refused = %v, want %v", tt.name, got, tt.refused)
		}
	}
	// The session ends; after the grace the page's images go again.
	g.r.guard.sessionEnded("s1", "https://shop.test/thread")
	if !image("/redirect?to=w", img("https://shop.test/thread")) {
		t.Error("within the grace period the clone's page is no longer guarded")
	}
}
