package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkSmallPage is one keep-alive HTTPS request for a small HTML page through the proxy,
// injected. For profiling the proxy's per-request cost; the side-by-side figures come from
// e2e/bench.
func BenchmarkSmallPage(b *testing.B) {
	small := "<!doctype html><html><head><meta charset=utf-8><title>small</title></head><body>" +
		strings.Repeat("<p>A small page with a little text.</p>", 40) + "</body></html>"
	t := &testing.T{}
	resolve, roots := tlsSite(t, siteHost, htmlHandler(small))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
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

var _ = http.StatusOK

func BenchmarkSmallNonHTML(b *testing.B) {
	small := strings.Repeat("<p>A small page with a little text.</p>", 40)
	t := &testing.T{}
	resolve, roots := tlsSite(t, siteHost, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, small)
	}))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
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
