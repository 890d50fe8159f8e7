package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// BenchmarkServeProxiedSmallPage is one request through serveProxied in process, as
// `remixproxy run` serves it (a store, injection on), with no network: the upstream is a
// RoundTripper that answers e2e/bench's small page at once. So what it measures is the pipeline
// itself — the request guards (navigation, remixlet page requests, network rules, send guard,
// local network), Rewrite, the response taps and the injection — without TLS, sockets or the
// upstream's own work, which BenchmarkSmallPage and e2e/bench include. Profile it with
// -cpuprofile; the "navigation" case is e2e/bench's request (a top-level GET), "link" a link the
// person followed within the site (a Referer, as browsing sends), the "post" case a
// page's POST to its own site (the send guard's kind of request); "remixlet-on" has a remixlet
// on for the site (benchRemixletOn), as e2e/bench --live.
func BenchmarkServeProxiedSmallPage(b *testing.B) {
	page := smallPage
	for _, c := range []struct {
		name string
		req  func() *http.Request
	}{
		{"navigation", func() *http.Request {
			r := httptest.NewRequest("GET", "https://"+siteHost+"/small", nil)
			r.Header.Set("Sec-Fetch-Dest", "document")
			r.Header.Set("Sec-Fetch-Mode", "navigate")
			r.Header.Set("Upgrade-Insecure-Requests", "1")
			return r
		}},
		{"link", func() *http.Request { // a link followed within the site: Referer and Sec-Fetch-Site
			r := httptest.NewRequest("GET", "https://"+siteHost+"/small", nil)
			r.Header.Set("Sec-Fetch-Dest", "document")
			r.Header.Set("Sec-Fetch-Mode", "navigate")
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			r.Header.Set("Sec-Fetch-User", "?1")
			r.Header.Set("Upgrade-Insecure-Requests", "1")
			r.Header.Set("Referer", "https://"+siteHost+"/")
			return r
		}},
		{"post", func() *http.Request {
			r := httptest.NewRequest("POST", "https://"+siteHost+"/api/save", strings.NewReader("a=1"))
			r.Header.Set("Sec-Fetch-Dest", "empty")
			r.Header.Set("Sec-Fetch-Mode", "cors")
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			r.Header.Set("Origin", "https://"+siteHost)
			r.Header.Set("Referer", "https://"+siteHost+"/small")
			return r
		}},
	} {
		for _, on := range []bool{false, true} {
			name := c.name
			if on {
				name += "/remixlet-on"
			}
			b.Run(name, func(b *testing.B) {
				s := benchServer(b, false)
				if on {
					benchRemixletOn(b, s)
				}
				s.rp.Transport = cannedUpstream(page)
				// The site was dialed at a public address (as the first request of a real run
				// would note it: localnet.go), so the page's requests ask no resolver.
				s.spaces.note(siteHost, true)
				w := &discardWriter{h: http.Header{}}
				b.ReportAllocs()
				for b.Loop() {
					clear(w.h)
					w.status = 0
					s.serveProxied(w, c.req())
					if w.status != http.StatusOK {
						b.Fatalf("status %d, want 200: the benchmark would measure a refusal", w.status)
					}
				}
			})
		}
	}
}

// benchRemixletOn stores and activates a remixlet for the bench's site, as e2e/bench --live
// does for its pages: a stylesheet (the first frame), a script, and 50 network rules that block
// nothing the benchmark asks for.
func benchRemixletOn(b *testing.B, s *Server) {
	var rules []string
	for i := 1; i <= 50; i++ {
		rules = append(rules, fmt.Sprintf(`{"id": %d, "action": {"type": "block"}, "condition": {"urlFilter": "/never-asked-%d/"}}`, i, i))
	}
	storetest.Create(b, s.cfg.Store, "bench-live", store.Files{
		"manifest.json": []byte(`{"name": "bench-live", "api": 1, "matches": ["https://` + siteHost + `/*"], "permissions": [{"name": "netrules", "reason": "r"}]}`),
		"style.css":     []byte("p { margin: 0 0 .5em; }\n"),
		"script.js":     []byte(testScript),
		"rules.json":    []byte("[" + strings.Join(rules, ",") + "]"),
	})
	s.InvalidateNetRules()
}

// cannedUpstream answers every request with page as text/html, with a Content-Length.
type cannedUpstream string

func (p cannedUpstream) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{
			"Content-Type":   {"text/html; charset=utf-8"},
			"Content-Length": {strconv.Itoa(len(p))},
		},
		Body: io.NopCloser(strings.NewReader(string(p))), ContentLength: int64(len(p)), Request: req,
	}, nil
}

// discardWriter is a ResponseWriter that keeps the status and drops the body.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
