package proxy

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// A hostile upstream against the proxy's zstd decoders (pass 5d; noticed in pass 4b): each
// navigation's HTML is decoded as it streams, and a zstd decoder holds the window its frame
// declares (up to the 8 MiB browsers decode) until the body ends. An upstream that declares
// 8 MiB and then sends nothing more held 8 MiB per response in flight, as many as the browser
// has connections to the proxy. The decoders' windows now come from one budget
// (httpx.ZstdBudget): the proxy's memory stays under it and other sites load.

func TestStalledZstdDocumentsStayBounded(t *testing.T) {
	const stalled = 24                            // 192 MiB of windows without the budget
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // one segment of 8 MiB (its content size)
	frame = binary.LittleEndian.AppendUint64(frame, 8<<20)
	frame = append(frame, 15<<3, 0, 0)
	frame = append(frame, "<!doctype html>"...) // a raw block of 15 bytes; no more follows
	var hits atomic.Int32
	release := make(chan struct{})
	evil := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "zstd")
		w.Write(frame)
		w.(http.Flusher).Flush()
		hits.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	resolveEvil, roots := tlsSite(t, "evil."+siteHost, evil)
	resolveOK, _ := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: merge(resolveEvil, resolveOK), roots: roots})
	f.get("https://" + siteHost + "/") // the pools and caches a first answer fills
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	before := heap()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range stalled {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("https://evil.%s/page?%d", siteHost, i), nil)
			req.Header.Set("Sec-Fetch-Dest", "document")
			if resp, err := f.client.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	for deadline := time.Now().Add(20 * time.Second); hits.Load() < stalled; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d stalled documents reached the upstream", hits.Load(), stalled)
		}
	}
	// The proxy decodes what it has: wait for the budget to stop moving.
	used := httpx.ZstdInUse()
	for i := 0; i < 40; i++ {
		time.Sleep(100 * time.Millisecond)
		if u := httpx.ZstdInUse(); u != used {
			used, i = u, 0
		}
	}
	grown := heap() - before
	t.Logf("%d stalled zstd documents: heap %+d MiB, budget %d MiB in use", stalled, grown>>20, used>>20)
	if used > httpx.ZstdBudget {
		t.Errorf("the zstd decoders hold %d MiB, over the budget of %d MiB", used>>20, httpx.ZstdBudget>>20)
	}
	if grown > httpx.ZstdBudget+32<<20 {
		t.Errorf("the heap grew %d MiB with %d stalled zstd documents, want under the %d MiB budget and some", grown>>20, stalled, httpx.ZstdBudget>>20)
	}
	if resp, body := f.get("https://" + siteHost + "/"); resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Errorf("another site while the documents stall: status %d, %d bytes", resp.StatusCode, len(body))
	}
	cancel()
	close(release)
	wg.Wait()
	for deadline := time.Now().Add(10 * time.Second); httpx.ZstdInUse() != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of the zstd budget still held after the documents ended", httpx.ZstdInUse())
		}
	}
}

// TestHugeZstdWindowIsRefused: a document whose zstd frame declares a window of 1 GiB (or a
// single segment of 2 GiB) is not decoded: the answer ends without the page, nothing of the
// window is allocated, and the proxy goes on serving.
func TestHugeZstdWindowIsRefused(t *testing.T) {
	frames := map[string][]byte{
		"window": {0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(30-10) << 3, 15 << 3, 0, 0},
		"single": binary.LittleEndian.AppendUint64([]byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0}, 2<<30),
	}
	frames["window"] = append(frames["window"], "<!doctype html>"...)
	frames["single"] = append(append(frames["single"], 15<<3, 0, 0), "<!doctype html>"...)
	evil := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "zstd")
		w.Write(frames[r.URL.Query().Get("f")])
	})
	resolveEvil, roots := tlsSite(t, "evil."+siteHost, evil)
	resolveOK, _ := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: merge(resolveEvil, resolveOK), roots: roots})
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for name := range frames {
		req, _ := http.NewRequest("GET", "https://evil."+siteHost+"/?f="+name, nil)
		req.Header.Set("Sec-Fetch-Dest", "document")
		resp, err := f.client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), "data-remixproxy") {
				t.Errorf("%s: the document was decoded and injected (%d bytes)", name, len(body))
			}
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 256<<20 {
		t.Errorf("%d MiB allocated for two frames declaring huge windows", grown>>20)
	}
	if resp, body := f.get("https://" + siteHost + "/"); resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Errorf("another site after the frames: status %d, %d bytes", resp.StatusCode, len(body))
	}
	if n := httpx.ZstdInUse(); n != 0 {
		t.Errorf("%d bytes of the zstd budget held after the refusals", n)
	}
}
