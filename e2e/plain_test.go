package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// plainSite is an ordinary page with an inline and an external script, over https and http.
func plainSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		htmlPage(w, fmt.Sprintf(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Plain page</title>
<link rel="stylesheet" href="/style.css">
</head>
<body>
<h1>Plain page</h1>
<p>Served over %s by %s.</p>
<p id="ext">external script has not run</p>
<script>document.body.dataset.pageScript = 'ran';</script>
<script src="/app.js"></script>
</body>
</html>
`, scheme, r.Host))
	})
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `document.getElementById('ext').textContent = 'external script ran';`)
	})
	mux.HandleFunc("/style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, `h1 { color: rgb(10, 20, 30); }`)
	})
	mux.HandleFunc("/landing", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Landing</title></head>
<body><p>Landed.</p><script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
	})
	return mux
}

func TestPlainPage(t *testing.T) {
	for _, url := range []string{"https://plain.test/", "http://plain.test/"} {
		t.Run(url, func(t *testing.T) {
			direct, proxied := loadBoth(t, url)
			checkLikeDirect(t, direct, proxied)
			if want := "external script ran"; !strings.Contains(proxied.text, want) {
				t.Errorf("proxied text %q lacks %q", proxied.text, want)
			}
			// Chromium speaks HTTP/2 to the proxy for https pages (ALPN on the intercepted
			// connection) and HTTP/1.1 for http pages.
			want := "h2"
			if strings.HasPrefix(url, "http:") {
				want = "http/1.1"
			}
			if got := e2etest.Eval[string](proxied.tab, `performance.getEntriesByType('navigation')[0].nextHopProtocol`); got != want {
				t.Errorf("protocol to the proxy = %q, want %q", got, want)
			}
		})
	}
}
