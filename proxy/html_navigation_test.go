package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// TestInjectsOnlyIntoNavigations: a document is injected for a navigation (Sec-Fetch-Dest:
// document over https; Upgrade-Insecure-Requests: 1 where a client sends no fetch metadata) and
// not for a page's own fetch, an iframe, or a client that says neither. Every HTML answer varies
// by the header that decided (Sec-Fetch-Dest where the client sends fetch metadata), so the
// browser's HTTP cache keeps injected documents and plain copies apart; answers that are not
// HTML do not.
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
		want := "Accept-Encoding, Sec-Fetch-Dest"
		if !strings.Contains(strings.Join(c.hdr, " "), "Sec-Fetch-Dest") {
			want = "Accept-Encoding, Upgrade-Insecure-Requests" // http: no fetch metadata
		}
		if got := strings.Join(resp.Header.Values("Vary"), ", "); got != want {
			t.Errorf("%s: Vary %q, want %q", c.name, got, want)
		}
	}
	resp, _ := f.get("https://"+siteHost+"/style.css", "Sec-Fetch-Dest", "style")
	if v := resp.Header.Values("Vary"); len(v) != 0 {
		t.Errorf("a stylesheet: Vary %q, want none", v)
	}
}

// TestInjectedDocumentsCachedForHistoryOnly: an injected document keeps no validators and is
// revalidated on every new navigation (private, no-cache), unless the upstream said no-store;
// a navigation reaches the upstream without cache validators, a page's fetch with them.
func TestInjectedDocumentsCachedForHistoryOnly(t *testing.T) {
	var seen []string
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("If-None-Match")+"|"+r.Header.Get("If-Modified-Since"))
		htmlHandler(plainPage, "Cache-Control", "public, max-age=600", "ETag", `"v1"`, "Last-Modified", "Mon, 30 Nov 2026 10:00:00 GMT")(w, r)
	})
	mux.Handle("/secret", htmlHandler(plainPage, "Cache-Control", "no-store, private"))
	resolve, roots := tlsSite(t, siteHost, mux)
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	cond := []string{"If-None-Match", `"v1"`, "If-Modified-Since", "Mon, 30 Nov 2026 10:00:00 GMT"}

	resp, _ := f.get("https://"+siteHost+"/", append([]string{"Sec-Fetch-Dest", "document"}, cond...)...)
	if got := resp.Header.Get("Cache-Control"); got != "private, no-cache" {
		t.Errorf("injected document: Cache-Control %q, want private, no-cache", got)
	}
	if resp.Header.Get("ETag") != "" || resp.Header.Get("Last-Modified") != "" {
		t.Errorf("injected document kept the upstream's validators: ETag %q Last-Modified %q", resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"))
	}
	resp, _ = f.get("https://"+siteHost+"/", append([]string{"Sec-Fetch-Dest", "empty"}, cond...)...)
	if resp.Header.Get("ETag") != `"v1"` || resp.Header.Get("Cache-Control") != "public, max-age=600" {
		t.Errorf("a fetch's plain copy: ETag %q Cache-Control %q, want the upstream's", resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"))
	}
	if len(seen) != 2 || seen[0] != "|" || seen[1] != `"v1"|Mon, 30 Nov 2026 10:00:00 GMT` {
		t.Errorf("validators the upstream saw (navigation, fetch) = %q, want none for the navigation", seen)
	}
	resp, _ = f.get("https://"+siteHost+"/secret", "Sec-Fetch-Dest", "document")
	if got := resp.Header.Get("Cache-Control"); got != "no-store, private" {
		t.Errorf("no-store document: Cache-Control %q, want the upstream's", got)
	}
}
