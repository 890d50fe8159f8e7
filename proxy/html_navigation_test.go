package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// TestInjectsOnlyIntoNavigations: a document is injected for a navigation (Sec-Fetch-Dest:
// document over https; Upgrade-Insecure-Requests: 1 where a client sends no fetch metadata) and
// not for a page's own fetch, an iframe, or a client that says neither. Every HTML answer varies
// by those headers, so the browser's HTTP cache keeps injected documents and plain copies apart;
// answers that are not HTML do not.
func TestInjectsOnlyIntoNavigations(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/", htmlHandler(plainPage, "Cache-Control", "max-age=600", "Vary", "Accept-Encoding"))
	mux.HandleFunc("/style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		w.Write([]byte("p{color:red}"))
	})
	resolve, roots := tlsSite(t, siteHost, mux)
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	for _, c := range []struct {
		name     string
		hdr      []string
		injected bool
	}{
		{"navigation over https", []string{"Sec-Fetch-Dest", "document", "Upgrade-Insecure-Requests", "1"}, true},
		{"navigation without fetch metadata (http)", []string{"Upgrade-Insecure-Requests", "1"}, true},
		{"the page's fetch", []string{"Sec-Fetch-Dest", "empty"}, false},
		{"the page's fetch, navigation's Upgrade-Insecure-Requests forged over https", []string{"Sec-Fetch-Dest", "empty", "Upgrade-Insecure-Requests", "1"}, false},
		{"an iframe", []string{"Sec-Fetch-Dest", "iframe", "Upgrade-Insecure-Requests", "1"}, false},
		{"a fetch without fetch metadata (http)", []string{"Upgrade-Insecure-Requests", ""}, false},
	} {
		resp, body := f.get("https://"+siteHost+"/", c.hdr...)
		if got := strings.Contains(string(body), "data-remixproxy="); got != c.injected {
			t.Errorf("%s: injected %v, want %v", c.name, got, c.injected)
		}
		if got := strings.Join(resp.Header.Values("Vary"), ", "); got != "Accept-Encoding, Sec-Fetch-Dest, Upgrade-Insecure-Requests" {
			t.Errorf("%s: Vary %q, want the upstream's and the navigation headers", c.name, got)
		}
	}
	resp, _ := f.get("https://"+siteHost+"/style.css", "Sec-Fetch-Dest", "style")
	if v := resp.Header.Values("Vary"); len(v) != 0 {
		t.Errorf("a stylesheet: Vary %q, want none", v)
	}
}
