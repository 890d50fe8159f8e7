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
