package e2e

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// The bodies bytes.test serves. Several contain HTML-looking text that a careless injector would
// touch.
var (
	pngBytes    = makePNG()
	fontBytes   = randomBytes(1, 30_000)
	rangeBytes  = randomBytes(2, 100_000)
	trailerBody = bytes.Repeat([]byte("trailer body line\n"), 5000)
	gzJSON      = gzipBytes([]byte(`{"html":"<html><head><title>not a page</title></head><body></body></html>","n":[1,2,3]}`))
)

var bytesResources = map[string]struct{ contentType, body string }{
	"/img.png":       {"image/png", string(pngBytes)},
	"/font.woff2":    {"font/woff2", string(fontBytes)},
	"/app.js":        {"text/javascript; charset=utf-8", `window.appHTML = "<html><head></head><body>"; document.body.dataset.appJs = 'ran';` + "\n"},
	"/data.json":     {"application/json", `{"html":"<!doctype html><html><head><title>x</title></head><body></body></html>","n":[1,2,3]}`},
	"/style.css":     {"text/css", "/* <head> */ #styled { color: rgb(1, 2, 3); }\n"},
	"/page.txt":      {"text/plain; charset=utf-8", "<!doctype html><html><head><title>plain text</title></head><body>not html</body></html>\n"},
	"/download.html": {"application/octet-stream", "<!doctype html><html><head><title>a file</title></head><body>saved, not shown</body></html>\n"},
	"/feed.xml":      {"application/xml", `<?xml version="1.0"?><feed><entry><content type="html">&lt;head&gt;</content></entry></feed>` + "\n"},
}

func bytesSite() http.Handler {
	mux := http.NewServeMux()
	for path, res := range bytesResources {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", res.contentType)
			w.Header().Set("Cache-Control", "public, max-age=60")
			w.Header().Set("ETag", fmt.Sprintf(`"%x"`, sha256.Sum256([]byte(res.body))))
			w.Header().Set("X-Custom", "kept as is")
			w.Header().Set("Content-Length", fmt.Sprint(len(res.body)))
			io.WriteString(w, res.body)
		})
	}
	mux.HandleFunc("/range.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("ETag", `"range-v1"`)
		http.ServeContent(w, r, "", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), bytes.NewReader(rangeBytes))
	})
	mux.HandleFunc("/trailers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Trailer", "X-Body-Sha256")
		w.Write(trailerBody)
		sum := sha256.Sum256(trailerBody)
		w.Header().Set("X-Body-Sha256", hex.EncodeToString(sum[:]))
	})
	mux.HandleFunc("/gz.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Vary", "Accept-Encoding")
		w.Header().Set("Content-Length", fmt.Sprint(len(gzJSON)))
		w.Write(gzJSON)
	})
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Subresources</title>
<link rel="stylesheet" href="/style.css">
<script src="/app.js" defer></script>
</head><body>
<p id="styled">An image, a script, a stylesheet and JSON.</p>
<img id="img" src="/img.png" alt="">
<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>
`)
	})
	return mux
}

func TestNonHTMLBodiesUnchanged(t *testing.T) {
	sites, p := world.Sites(t), world.Proxy(t)
	direct, proxied := sites.Client(), p.Client()
	defer direct.CloseIdleConnections()
	defer proxied.CloseIdleConnections()

	type exchange struct {
		name, path string
		header     http.Header
		wantStatus int
	}
	var cases []exchange
	for _, path := range slices.Sorted(maps.Keys(bytesResources)) {
		cases = append(cases, exchange{name: path, path: path, wantStatus: 200})
	}
	cases = append(cases,
		exchange{name: "range", path: "/range.bin", header: http.Header{"Range": {"bytes=1000-1999"}}, wantStatus: 206},
		exchange{name: "range suffix", path: "/range.bin", header: http.Header{"Range": {"bytes=-500"}}, wantStatus: 206},
		exchange{name: "conditional", path: "/range.bin", header: http.Header{"If-None-Match": {`"range-v1"`}}, wantStatus: 304},
		exchange{name: "trailers", path: "/trailers", wantStatus: 200},
		exchange{name: "gzip json stays gzip", path: "/gz.json", header: http.Header{"Accept-Encoding": {"gzip, br"}}, wantStatus: 200},
	)
	for _, scheme := range []string{"https", "http"} {
		for _, tc := range cases {
			t.Run(scheme+" "+tc.name, func(t *testing.T) {
				url := scheme + "://bytes.test" + tc.path
				want := fetchRaw(t, direct, url, tc.header)
				got := fetchRaw(t, proxied, url, tc.header)
				if want.status != tc.wantStatus {
					t.Fatalf("direct status %d, want %d (fix the site)", want.status, tc.wantStatus)
				}
				if got.status != want.status {
					t.Errorf("status: proxied %d, direct %d\nbody: %s", got.status, want.status, head(string(got.body), 300))
				}
				if !bytes.Equal(got.body, want.body) {
					t.Errorf("body differs: proxied %d bytes (sha256 %x), direct %d bytes (sha256 %x); proxied starts %q",
						len(got.body), sha256.Sum256(got.body), len(want.body), sha256.Sum256(want.body), head(string(got.body), 120))
				}
				checkHeadersKept(t, "header", want.header, got.header)
				checkHeadersKept(t, "trailer", want.trailer, got.trailer)
				if tc.path == "/trailers" && want.trailer.Get("X-Body-Sha256") == "" {
					t.Errorf("no trailer directly (fix the site)")
				}
				if tc.path == "/gz.json" && !bytes.Equal(got.body, gzJSON) {
					t.Errorf("the gzip'd JSON did not stay gzip'd on the wire: Content-Encoding %q", got.header.Get("Content-Encoding"))
				}
				if tc.name == "range" && got.header.Get("Content-Range") != "bytes 1000-1999/100000" {
					t.Errorf("Content-Range %q, want %q", got.header.Get("Content-Range"), "bytes 1000-1999/100000")
				}
			})
		}
	}

	t.Run("in chromium", func(t *testing.T) {
		d, pr := loadBoth(t, "https://bytes.test/page.html")
		checkLikeDirect(t, d, pr)
		const check = `({img: document.getElementById('img').naturalWidth, js: document.body.dataset.appJs || '',
			css: getComputedStyle(document.getElementById('styled')).color})`
		want := e2etest.Eval[map[string]any](d.tab, check)
		got := e2etest.Eval[map[string]any](pr.tab, check)
		if fmt.Sprint(got) != fmt.Sprint(want) || want["img"] != float64(64) {
			t.Errorf("subresources through the proxy: %v, direct %v (want image width 64, script ran, style applied)", got, want)
		}
		type res struct {
			Status int    `json:"status"`
			Type   string `json:"type"`
			Text   string `json:"text"`
		}
		const fetchJSON = `fetch('/data.json').then(async (r) => ({status: r.status, type: r.headers.get('content-type'), text: await r.text()}))`
		if w, g := e2etest.Eval[res](d.tab, fetchJSON), e2etest.Eval[res](pr.tab, fetchJSON); g != w {
			t.Errorf("fetch('/data.json') through the proxy: %+v, direct %+v", g, w)
		}
	})
}

type rawResponse struct {
	status          int
	header, trailer http.Header
	body            []byte
}

func fetchRaw(t *testing.T, c *http.Client, url string, h http.Header) rawResponse {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, trailer: resp.Trailer, body: body}
}

// checkHeadersKept reports headers of want that got lacks or changed (Date and hop-by-hop
// headers excepted), and logs headers the proxy added.
func checkHeadersKept(t *testing.T, what string, want, got http.Header) {
	t.Helper()
	skip := map[string]bool{"Date": true, "Connection": true, "Keep-Alive": true, "Proxy-Connection": true}
	for k, v := range want {
		if skip[k] {
			continue
		}
		if g, ok := got[k]; !ok {
			t.Errorf("%s %s: %q directly, missing through the proxy", what, k, v)
		} else if !slices.Equal(g, v) {
			t.Errorf("%s %s: %q through the proxy, %q directly", what, k, g, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && !skip[k] {
			t.Logf("%s %s: %q added by the proxy", what, k, v)
		}
	}
}

func makePNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 4), 128, 255})
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}
