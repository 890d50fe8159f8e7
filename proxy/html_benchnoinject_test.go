package proxy

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// TestBenchNoInject: with Config.BenchNoInject (the benchmark-only `--bench-no-inject`) an HTML
// document goes through the pipeline untouched — same bytes, same encoding, same CSP, no marker —
// while the same server without it injects; e2e/bench's "injection off" figures rely on both.
func TestBenchNoInject(t *testing.T) {
	const csp = "script-src 'self'"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(plainPage))
	zw.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/plain", htmlHandler(plainPage, "Content-Security-Policy", csp))
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz.Bytes())
	})
	resolve, roots := tlsSite(t, siteHost, mux)

	cases := []struct {
		name         string
		noInject     bool
		path         string
		wantBody     []byte // nil: the page with the bootstrap in it
		wantEncoding string
		wantCSP      string // "": changed from csp
		wantMarker   string
	}{
		{"injecting, plain", false, "/plain", nil, "", "", "injected"},
		{"injection off, plain", true, "/plain", []byte(plainPage), "", csp, ""},
		{"injecting, gzip", false, "/gzip", nil, "", "", "injected"},
		{"injection off, gzip", true, "/gzip", gz.Bytes(), "gzip", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client := newFixture(t, fixtureOpts{resolve: resolve, roots: roots, benchNoInject: c.noInject}).client
			req, _ := http.NewRequest("GET", "https://"+siteHost+c.path, nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("GET %s: %v", c.path, err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("reading %s: %v", c.path, err)
			}
			if c.wantBody == nil {
				if rest, _ := stripTag(t, body); string(rest) != plainPage {
					t.Errorf("body minus tag = %q, want %q", rest, plainPage)
				}
			} else if !bytes.Equal(body, c.wantBody) {
				t.Errorf("body = %q, want the upstream's %q", httpx.Clip(string(body), 200), httpx.Clip(string(c.wantBody), 200))
			}
			if got := resp.Header.Get("Content-Encoding"); got != c.wantEncoding {
				t.Errorf("Content-Encoding = %q, want %q", got, c.wantEncoding)
			}
			if got := resp.Header.Get(httpx.MarkerHeader); got != c.wantMarker {
				t.Errorf("%s = %q, want %q", httpx.MarkerHeader, got, c.wantMarker)
			}
			if c.path == "/plain" {
				got := resp.Header.Get("Content-Security-Policy")
				if c.wantCSP != "" && got != c.wantCSP {
					t.Errorf("Content-Security-Policy = %q, want the upstream's %q", got, c.wantCSP)
				}
				if c.wantCSP == "" && got == csp {
					t.Errorf("Content-Security-Policy = %q, unchanged; want it to allow the bootstrap", got)
				}
			}
		})
	}
}
