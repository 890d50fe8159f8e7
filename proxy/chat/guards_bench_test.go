package chat

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkChatGuards is the request side of the chat's guards as serveProxied runs them on
// every request — GuardNavigation, then GuardSend — with no action of the agent live ("quiet":
// each is one atomic load) and with one action running on https://example.com/ ("action"),
// whose card allows ("Allow": a request it already allowed goes at once, the state a page's
// repeated POSTs reach). The requests: the page's own navigation on the site, a script's GET, a
// POST of the page to its site, and a POST to another site. Nothing goes upstream: what is
// measured is the guards' decision only.
func BenchmarkChatGuards(b *testing.B) {
	page, origin := "https://example.com/thread/1", "https://example.com"
	hdr := func(r *http.Request, kv ...string) *http.Request {
		r.RequestURI = r.URL.RequestURI()
		for i := 0; i+1 < len(kv); i += 2 {
			r.Header.Set(kv[i], kv[i+1])
		}
		return r
	}
	requests := []struct {
		name string
		req  func() *http.Request
	}{
		{"navigation", func() *http.Request {
			return hdr(httptest.NewRequest("GET", "https://example.com/thread/2", nil),
				"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", "same-origin", "Referer", page)
		}},
		{"script GET", func() *http.Request {
			return hdr(httptest.NewRequest("GET", "https://example.com/api/feed", nil),
				"Sec-Fetch-Dest", "empty", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Site", "same-origin", "Referer", page)
		}},
		{"script POST to the site", func() *http.Request {
			return hdr(httptest.NewRequest("POST", "https://example.com/api/reply", strings.NewReader("a=1")),
				"Sec-Fetch-Dest", "empty", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Site", "same-origin", "Origin", origin, "Referer", page)
		}},
		{"script POST to another site", func() *http.Request {
			return hdr(httptest.NewRequest("POST", "https://collector.test/collect", strings.NewReader("a=1")),
				"Sec-Fetch-Dest", "empty", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Site", "cross-site", "Origin", origin, "Referer", page)
		}},
	}
	for _, state := range []string{"quiet", "action"} {
		for _, rq := range requests {
			b.Run(state+"/"+rq.name, func(b *testing.B) {
				h := newHub(nil, context.Background())
				h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
				if state == "action" {
					allow := func(context.Context, postAsk) (bool, error) { return true, nil }
					h.nav.armAs(navOwner{owner: h, control: `click “Post reply”`, confirmPost: allow}, "click", page, origin, nil, nil)
				}
				w := httptest.NewRecorder()
				req := rq.req() // the guards read a request, never change it
				b.ReportAllocs()
				for b.Loop() {
					r, rw, done, answered := h.GuardNavigation(w, req)
					if answered || h.GuardSend(rw, r) {
						b.Fatalf("%s was answered by the guards: the benchmark would measure a refusal", rq.name)
					}
					done()
				}
			})
		}
	}
}
