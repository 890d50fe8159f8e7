package httpx

import (
	"net/http"
	"testing"
)

func TestIsNavigation(t *testing.T) {
	for _, c := range []struct {
		hdr  []string
		want bool
	}{
		{[]string{"Sec-Fetch-Dest", "document"}, true},
		{[]string{"Sec-Fetch-Dest", "document", "Upgrade-Insecure-Requests", "1"}, true},
		{[]string{"Upgrade-Insecure-Requests", "1"}, true}, // http: no fetch metadata
		{[]string{"Sec-Fetch-Dest", "empty", "Upgrade-Insecure-Requests", "1"}, false},
		{[]string{"Sec-Fetch-Dest", "iframe", "Upgrade-Insecure-Requests", "1"}, false},
		{[]string{"Sec-Fetch-Dest", "serviceworker"}, false},
		{nil, false},
		{[]string{"Upgrade-Insecure-Requests", "0"}, false},
	} {
		req, _ := http.NewRequest("GET", "https://site.test/", nil)
		for i := 0; i+1 < len(c.hdr); i += 2 {
			req.Header.Set(c.hdr[i], c.hdr[i+1])
		}
		if got := IsNavigation(req); got != c.want {
			t.Errorf("IsNavigation(%v) = %v, want %v", c.hdr, got, c.want)
		}
	}
}

func TestNavigationKind(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		h          map[string]string
		top, frame bool
	}{
		{"document", "GET", map[string]string{"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"}, true, false},
		{"iframe", "GET", map[string]string{"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Mode": "navigate"}, false, true},
		{"form post", "POST", map[string]string{"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"}, true, false},
		{"image", "GET", map[string]string{"Sec-Fetch-Dest": "image", "Sec-Fetch-Mode": "no-cors"}, false, false},
		{"fetch of a document type", "GET", map[string]string{"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "cors"}, false, false},
		{"plain http", "GET", map[string]string{"Upgrade-Insecure-Requests": "1"}, true, false},
		{"plain http, html accept", "GET", map[string]string{"Accept": "text/html,*/*"}, true, false},
		{"put", "PUT", map[string]string{"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"}, false, false},
	}
	for _, tt := range tests {
		r, _ := http.NewRequest(tt.method, "https://a.test/", nil)
		for k, v := range tt.h {
			r.Header.Set(k, v)
		}
		if top, frame := NavigationKind(r); top != tt.top || frame != tt.frame {
			t.Errorf("%s: NavigationKind = %v, %v; want %v, %v", tt.name, top, frame, tt.top, tt.frame)
		}
	}
}
