package proxy

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// An injected page whose upstream sent a Content-Length is written through the server's buffer
// (one write for a small page: net/http gives it a Content-Length of its own); a streamed one
// (chunked upstream) still reaches the browser piece by piece as the upstream flushes.
func TestInjectedBodyFlushing(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/known", htmlHandler(plainPage))
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><head><title>t</title></head><body><p>first</p>\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, "<p>second</p></body></html>")
	})
	resolve, roots := tlsSite(t, siteHost, mux)
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})

	resp, body := f.get("https://" + siteHost + "/known")
	if rest, _ := stripTag(t, body); string(rest) != plainPage {
		t.Errorf("known length: page minus tag = %q", rest)
	}
	if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
		t.Errorf("known length: Content-Length %d, Transfer-Encoding %v for %d bytes; want the small page written at once, with a length",
			resp.ContentLength, resp.TransferEncoding, len(body))
	}

	resp, err := f.client.Get("https://" + siteHost + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		first <- line
	}()
	select {
	case line := <-first:
		if !strings.Contains(line, "<p>first</p>") || !strings.Contains(line, "data-remixproxy") {
			t.Errorf("first piece of the stream = %q, want the injected head and the first paragraph", line)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the first piece of a streamed page did not reach the browser while the upstream waited")
	}
	close(release)
}
