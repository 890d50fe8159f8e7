package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

// compressedPage is long enough that the compressed stream spans many writes.
func compressedPage(encoding string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html>
<html><head><meta charset="utf-8"><title>Compressed %s</title></head><body>
<h1>Served with Content-Encoding: %s</h1>
`, encoding, encoding)
	for i := range 400 {
		fmt.Fprintf(&b, "<p>Line %d of a page compressed with %s, with some text to compress.</p>\n", i, encoding)
	}
	b.WriteString(`<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>
`)
	return b.String()
}

// encSite serves pages compressed with gzip and br, whatever the request's Accept-Encoding says
// (as some servers do).
func encSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(compressedPage("gzip")))
		zw.Close()
		writeEncoded(w, "gzip", buf.Bytes())
	})
	mux.HandleFunc("/br", func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		zw := brotli.NewWriterLevel(&buf, 5)
		zw.Write([]byte(compressedPage("br")))
		zw.Close()
		writeEncoded(w, "br", buf.Bytes())
	})
	return mux
}

func writeEncoded(w http.ResponseWriter, encoding string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Encoding", encoding)
	h.Set("Vary", "Accept-Encoding")
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.Write(body)
}

func TestCompressedPages(t *testing.T) {
	for _, enc := range []string{"gzip", "br"} {
		t.Run(enc, func(t *testing.T) {
			direct, proxied := loadBoth(t, "https://enc.test/"+enc)
			checkLikeDirect(t, direct, proxied)
			want := fmt.Sprintf("Line 399 of a page compressed with %s", enc)
			if !strings.Contains(proxied.text, want) {
				t.Errorf("proxied page text lacks %q (decoded wrongly or truncated); it starts %q", want, head(proxied.text, 200))
			}
		})
	}
}
