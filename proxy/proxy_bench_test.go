package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The proxy's per-request cost, for profiling (go test -bench . -cpuprofile); the side-by-side
// figures against a direct connection come from e2e/bench.

var smallBody = strings.Repeat("<p>A small page with a little text.</p>", 40)

// smallPage is e2e/bench's small page.
var smallPage = "<!doctype html><html><head><meta charset=utf-8><title>small</title></head><body>" + smallBody + "</body></html>"

// BenchmarkSmallPage is one keep-alive HTTPS request for a small HTML page, injected.
func BenchmarkSmallPage(b *testing.B) {
	benchGet(b, htmlHandler(smallPage))
}

// BenchmarkSmallPageNoInject is BenchmarkSmallPage with injection switched off
// (--bench-no-inject): the difference is what injection adds to the whole request.
func BenchmarkSmallPageNoInject(b *testing.B) {
	benchGetWith(b, fixtureOpts{benchNoInject: true}, htmlHandler(smallPage))
}

// BenchmarkSmallNonHTML is the same request for a body that passes through untouched.
func BenchmarkSmallNonHTML(b *testing.B) {
	benchGet(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, smallBody)
	}))
}

func benchGet(b *testing.B, h http.Handler) { benchGetWith(b, fixtureOpts{}, h) }

func benchGetWith(b *testing.B, o fixtureOpts, h http.Handler) {
	resolve, roots := tlsSite(b, siteHost, h)
	o.resolve, o.roots = resolve, roots
	f := newFixture(b, o)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := f.client.Get("https://" + siteHost + "/")
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
