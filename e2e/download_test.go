package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// dlSize is the size of the large download: far more than any buffer a proxy should hold.
const dlSize = 256 << 20

// writeDownload writes the download's dlSize deterministic bytes (ChaCha8 from a fixed seed) in
// 64 KiB writes.
func writeDownload(w io.Writer) error {
	r := rand.NewChaCha8([32]byte{'r', 'e', 'm', 'i', 'x', 'p', 'r', 'o', 'x', 'y'})
	buf := make([]byte, 64<<10)
	for n := 0; n < dlSize; n += len(buf) {
		r.Read(buf)
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// downloadDigests are the SHA-256 and FNV-1a (32-bit, the page's rolling checksum) of the download.
var downloadDigests = sync.OnceValues(func() (sha, fnv32a string) {
	s, f := sha256.New(), fnv.New32a()
	writeDownload(io.MultiWriter(s, f))
	return hex.EncodeToString(s.Sum(nil)), fmt.Sprintf("%x", f.Sum32())
})

func dlSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Download</title></head><body>
<p>A large streamed download.</p>
<script>
document.body.dataset.pageScript = 'ran';
// download streams url and computes its length and FNV-1a checksum as the bytes arrive.
window.download = async (url) => {
  const r = await fetch(url);
  const reader = r.body.getReader();
  let h = 0x811c9dc5, n = 0;
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    for (let i = 0; i < value.length; i++) h = Math.imul(h ^ value[i], 0x01000193);
    n += value.length;
  }
  return {status: r.status, length: n, contentLength: r.headers.get('content-length') || '', fnv: (h >>> 0).toString(16)};
};
</script>
</body></html>
`)
	})
	mux.HandleFunc("/big.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(dlSize))
		w.Header().Set("Cache-Control", "no-store")
		writeDownload(w)
	})
	return mux
}

func TestLargeDownload(t *testing.T) {
	wantSHA, wantFNV := downloadDigests()

	t.Run("chromium fetch", func(t *testing.T) {
		tab := world.ProxiedTab(t)
		loadPage(t, tab, "https://dl.test/", true)
		type result struct {
			Status        int    `json:"status"`
			Length        int    `json:"length"`
			ContentLength string `json:"contentLength"`
			FNV           string `json:"fnv"`
		}
		got := e2etest.EvalWithin[result](tab, 3*time.Minute, `window.download('/big.bin')`)
		want := result{Status: 200, Length: dlSize, ContentLength: strconv.Itoa(dlSize), FNV: wantFNV}
		if got != want {
			t.Errorf("fetch through the proxy: got %+v, want %+v", got, want)
		}
	})

	for _, scheme := range []string{"https", "http"} {
		t.Run("go client "+scheme, func(t *testing.T) {
			c := world.Proxy(t).Client()
			defer c.CloseIdleConnections()
			resp, err := c.Get(scheme + "://dl.test/big.bin")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %s, want 200", resp.Status)
			}
			if got := resp.Header.Get("Content-Length"); got != strconv.Itoa(dlSize) {
				t.Errorf("Content-Length %q, want %d (the proxy must preserve it); Transfer-Encoding %v", got, dlSize, resp.TransferEncoding)
			}
			h := sha256.New()
			n, err := io.Copy(h, resp.Body)
			if err != nil {
				t.Fatalf("reading the body after %d bytes: %v", n, err)
			}
			if n != dlSize {
				t.Errorf("read %d bytes, want %d", n, dlSize)
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != wantSHA {
				t.Errorf("sha256 %s, want %s", got, wantSHA)
			}
		})
	}
}
