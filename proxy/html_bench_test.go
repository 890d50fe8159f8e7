package proxy

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/certs"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// BenchmarkInjectHTMLSmall is the injection tap alone on a small page, as the relay meets it
// (a store with no remixlet, no CSP; e2e/bench's small page): the response taken over and its
// body read to the end, against the same response relayed untouched (injection off). The
// difference per op is what injection, CSP and the bootstrap add to a small page.
func BenchmarkInjectHTMLSmall(b *testing.B) {
	page := smallPage
	for _, c := range []struct {
		name     string
		noInject bool
		csp      string
	}{
		{"injection-off", true, ""},
		{"inject", false, ""},
		{"inject-csp", false, "default-src 'self'; script-src 'self' 'nonce-abc123'; img-src *"},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := benchServer(b, c.noInject)
			req := httptest.NewRequest("GET", "https://"+siteHost+"/small", nil)
			req.Header.Set("Sec-Fetch-Dest", "document") // a navigation: the only requests injected
			b.ReportAllocs()
			for b.Loop() {
				resp := &http.Response{
					StatusCode: 200, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}},
					Body: io.NopCloser(strings.NewReader(page)), ContentLength: int64(len(page)), Request: req,
				}
				if c.csp != "" {
					resp.Header.Set("Content-Security-Policy", c.csp)
				}
				s.injectHTML(resp)
				if injected := resp.Header.Get(httpx.MarkerHeader) == "injected"; injected == c.noInject {
					b.Fatalf("injected %v, want %v: the benchmark would measure the other path", injected, !c.noInject)
				}
				if _, err := io.Copy(io.Discard, resp.Body); err != nil {
					b.Fatalf("reading the body: %v", err)
				}
				resp.Body.Close()
			}
		})
	}
}

// benchServer is a Server with a store, as `remixproxy run` starts it, not serving.
func benchServer(b *testing.B, noInject bool) *Server {
	b.Helper()
	dir := b.TempDir()
	ca, _, err := certs.LoadOrCreate(dir)
	if err != nil {
		b.Fatalf("LoadOrCreate: %v", err)
	}
	st, err := store.Open(filepath.Join(dir, "remixproxy.db"), store.Options{
		NeedsApproval: func(active, next store.Files, chatHost string) (bool, string) {
			return sandbox.FilesNeedApproval(active, next, chatHost)
		},
	})
	if err != nil {
		b.Fatalf("store.Open: %v", err)
	}
	b.Cleanup(func() { st.Close() })
	srv, err := New(Config{
		Listen: "127.0.0.1:0", DataDir: dir, CA: ca, Store: st, Version: "test", BenchNoInject: noInject,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatalf("New: %v", err)
	}
	b.Cleanup(func() { srv.Close() })
	return srv
}
