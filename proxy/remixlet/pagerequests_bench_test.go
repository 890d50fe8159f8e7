package remixlet

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// BenchmarkRemixletGuards is what the remixlet guards cost a proxied request and its answer, as
// the pipeline runs them: GuardPageRequests before it leaves (opened documents, named sites),
// then the response taps GuardRedirect and NoteOpenedDocument on a 200 HTML answer. "quiet":
// no remixlet wrote anything (each guard's first check is one atomic load); "live": 20 page
// sessions, each with a remixlet that wrote 20 addresses and named 50 sites, and one document
// an address of its opened, so every slow path is reachable. The requests: a navigation on one
// of those pages' sites, and a subresource to a site nobody named.
func BenchmarkRemixletGuards(b *testing.B) {
	requests := []struct {
		name, url string
		hdr       []string
	}{
		{"navigation", "https://shop3.test/next", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", "same-origin", "Referer", "https://shop3.test/p"}},
		{"subresource", "https://static.cdn-provider.example.com/app.js", []string{"Sec-Fetch-Dest", "script", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Site", "cross-site", "Referer", "https://shop3.test/p"}},
	}
	for _, state := range []string{"quiet", "live"} {
		for _, rq := range requests {
			b.Run(state+"/"+rq.name, func(b *testing.B) {
				r := &Runner{}
				if state == "live" {
					liveGuards(b, r)
				}
				req := httptest.NewRequest(http.MethodGet, rq.url, nil)
				req.RequestURI = req.URL.RequestURI()
				for i := 0; i+1 < len(rq.hdr); i += 2 {
					req.Header.Set(rq.hdr[i], rq.hdr[i+1])
				}
				w := httptest.NewRecorder()
				// The taps change a 200 answer only to refuse it, which the loop checks.
				resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}},
					Body: io.NopCloser(strings.NewReader("")), Request: req}
				b.ReportAllocs()
				for b.Loop() {
					if r.GuardPageRequests(w, req) {
						b.Fatalf("%s was refused: the benchmark would measure a refusal", rq.name)
					}
					r.GuardRedirect(resp)
					r.NoteOpenedDocument(resp)
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("%s's answer was replaced (%d)", rq.name, resp.StatusCode)
					}
				}
			})
		}
	}
}

// liveGuards fills r's guards as 20 pages with a remixlet each would (see BenchmarkRemixletGuards).
func liveGuards(b *testing.B, r *Runner) {
	for s := 0; s < 20; s++ {
		session, page := fmt.Sprintf("s%d", s), fmt.Sprintf("https://shop%d.test/p", s)
		sites := make([]string, 50)
		addrs := make([]string, 20)
		for i := range sites {
			sites[i] = fmt.Sprintf("named%d-%d.test", s, i)
		}
		for i := range addrs {
			addrs[i] = fmt.Sprintf("https://shop%d.test/go/%d?to=https://elsewhere.test/%d", s, i, i)
		}
		if err := r.guard.add(session, page, "rx", nil, addrs); err != nil {
			b.Fatal(err)
		}
		if err := r.guard.addNamed(session, page, "rx", nil, sites); err != nil {
			b.Fatal(err)
		}
		opened, err := weburl.Parse(addrs[0])
		if err != nil {
			b.Fatal(err)
		}
		if !r.opened.opened(opened, []guardHit{{remixlet: "rx", session: session, pageURL: page}}, "", false) {
			b.Fatal("the opened document was not held")
		}
		r.opened.sessionStarted(fmt.Sprintf("o%d", s), addrs[0])
	}
}
