package rewrite

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// BenchmarkInjectCorpus streams every corpus page through the injector (MB/s over the pages'
// bytes), without and with a MetaCSP hook, against a plain copy as the baseline.
func BenchmarkInjectCorpus(b *testing.B) {
	pages := corpusPages(b)
	var total int64
	for _, p := range pages {
		total += int64(len(p))
	}
	needs := CSPNeeds{ScriptHash: ScriptHash([]byte("boot()")), Connect: []string{"wss://remix.proxy"}}
	cases := []struct {
		name string
		run  func(page []byte) (int64, error)
	}{
		{"copy-baseline", func(page []byte) (int64, error) {
			return io.Copy(io.Discard, struct{ io.Reader }{bytes.NewReader(page)})
		}},
		{"inject", func(page []byte) (int64, error) {
			return io.Copy(io.Discard, NewInjector(bytes.NewReader(page), Options{Tag: []byte(testTag)}))
		}},
		{"inject-metacsp", func(page []byte) (int64, error) {
			opt := Options{Tag: []byte(testTag), MetaCSP: func(s string) string { return AdjustCSP(s, needs) }}
			return io.Copy(io.Discard, NewInjector(bytes.NewReader(page), opt))
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range pages {
					if _, err := c.run(p); err != nil {
						b.Fatalf("copying a page: %v", err)
					}
				}
			}
		})
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// benchPage is a 200 KB document whose head holds a <meta charset> (or not) after a few
// links, so the injector has to scan part of the head before the first byte can go out.
func benchPage(withCharset bool) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<title>Benchmark page</title>\n")
	for i := range 12 {
		fmt.Fprintf(&b, "<link rel=\"stylesheet\" href=\"/static/css/part-%02d.css\">\n", i)
	}
	if withCharset {
		b.WriteString("<meta charset=\"utf-8\">\n")
	}
	b.WriteString("<script src=\"/static/app.js\"></script>\n</head>\n<body>\n")
	for b.Len() < 200_000 {
		b.WriteString("<p class=\"post\">Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod.</p>\n")
	}
	b.WriteString("</body>\n</html>\n")
	return b.Bytes()
}

// BenchmarkInjectFirstByte measures the time until the first output byte of a 200 KB page is
// readable, and how many source bytes had been read by then (src-bytes/op).
func BenchmarkInjectFirstByte(b *testing.B) {
	for _, withCharset := range []bool{true, false} {
		name := "meta-charset"
		if !withCharset {
			name = "no-meta-charset"
		}
		b.Run(name, func(b *testing.B) {
			page := benchPage(withCharset)
			var one [1]byte
			var read int
			b.ReportAllocs()
			for b.Loop() {
				src := &countingReader{r: bytes.NewReader(page)}
				in := NewInjector(src, Options{Tag: []byte(testTag)})
				if n, err := in.Read(one[:]); n != 1 || err != nil {
					b.Fatalf("first read: got %d, %v, want 1 byte", n, err)
				}
				read = src.n
			}
			b.ReportMetric(float64(read), "src-bytes/op")
		})
	}
}

// BenchmarkAdjustCSP adjusts a long real-world-shaped header and a strict nonce policy.
func BenchmarkAdjustCSP(b *testing.B) {
	needs := CSPNeeds{
		ScriptHash: ScriptHash([]byte("boot()")),
		Connect:    []string{"https://remix.proxy", "wss://remix.proxy"},
		Frame:      []string{"https://remix.proxy"},
	}
	headers := map[string]string{
		"long": "default-src 'none'; base-uri 'self'; child-src github.com/assets-cdn/worker/ gist.github.com/assets-cdn/worker/; " +
			"connect-src 'self' uploads.github.com www.githubstatus.com collector.github.com raw.githubusercontent.com api.github.com " +
			"github-cloud.s3.amazonaws.com wss://alive.github.com; font-src github.githubassets.com; form-action 'self' github.com gist.github.com; " +
			"frame-ancestors 'none'; frame-src viewscreen.githubusercontent.com notebooks.githubusercontent.com; " +
			"img-src 'self' data: github.githubassets.com media.githubusercontent.com camo.githubusercontent.com; " +
			"manifest-src 'self'; media-src github.com user-images.githubusercontent.com; " +
			"script-src github.githubassets.com; style-src 'unsafe-inline' github.githubassets.com; upgrade-insecure-requests; worker-src github.com/assets-cdn/worker/",
		"strict-nonce": "script-src 'nonce-r4nd0mN0nc3' 'strict-dynamic' https: 'unsafe-inline'; object-src 'none'; base-uri 'none'; report-uri /csp",
	}
	for name, h := range headers {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if AdjustCSP(h, needs) == h {
					b.Fatal("AdjustCSP changed nothing")
				}
			}
		})
	}
}

// smallPage is e2e/bench's small page: a plain head, then 40 short paragraphs.
var smallPage = []byte("<!doctype html><html><head><meta charset=utf-8><title>small</title></head><body>" +
	strings.Repeat("<p>A small page with a little text.</p>", 40) + "</body></html>")

// BenchmarkInjectSmall streams the small page through the injector as the proxy does (MetaCSP
// set, charset known from the header), read to the end with io.Copy.
func BenchmarkInjectSmall(b *testing.B) { benchInjectAsTheProxy(b, smallPage) }

// benchInjectAsTheProxy streams page through the injector as the proxy does (MetaCSP set,
// charset known from the header), read to the end with io.Copy.
func benchInjectAsTheProxy(b *testing.B, page []byte) {
	needs := CSPNeeds{ScriptHash: ScriptHash([]byte("boot()")), Connect: []string{"wss://remix.proxy"}}
	opt := Options{Tag: []byte(testTag), MetaCSP: func(s string) string { return AdjustCSP(s, needs) }, CharsetKnown: true}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		in := NewInjector(bytes.NewReader(page), opt)
		if _, err := io.Copy(io.Discard, in); err != nil {
			b.Fatalf("copying the page: %v", err)
		}
	}
}

// bigHeadScriptPage is a page whose head carries a large inline script before </head> (a
// framework's state or bundle inlined: 100 KB), then a short body (OPEN-ITEMS 67).
var bigHeadScriptPage = []byte("<!doctype html><html><head><meta charset=utf-8><title>app</title><script>window.__STATE__=" +
	strings.Repeat(`{"id":12345,"name":"a product name","tags":["x","y"]},`, 1850) + "0;</script></head><body>" +
	strings.Repeat("<p>A small page with a little text.</p>", 40) + "</body></html>")

// BenchmarkInjectBigHeadScript streams bigHeadScriptPage through the injector as the proxy does.
func BenchmarkInjectBigHeadScript(b *testing.B) { benchInjectAsTheProxy(b, bigHeadScriptPage) }
