package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// sseAckTimeout is how long the SSE endpoint waits for the page to acknowledge the first event
// before giving up (a bound, not a measurement).
const sseAckTimeout = 15 * time.Second

// sseSite streams two server-sent events. It sends the second only after the page has told it
// (GET /ack) that the first arrived, so a proxy that buffers the stream makes the page wait for
// ever instead of making a timing assertion fail.
type sseSite struct {
	mu   sync.Mutex
	acks map[string]chan struct{}
}

func newSSESite() http.Handler {
	s := &sseSite{acks: map[string]chan struct{}{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Server-sent events</title></head><body>
<p>Server-sent events, acknowledged one by one.</p>
<script>
document.body.dataset.pageScript = 'ran';
window.sse = () => new Promise((resolve) => {
  const id = Math.random().toString(36).slice(2);
  const log = [];
  let ack = Promise.resolve('no first event');
  const es = new EventSource('/events?id=' + id);
  es.addEventListener('first', (e) => {
    log.push('first:' + e.data);
    ack = fetch('/ack?id=' + id).then((r) => r.text());
  });
  es.addEventListener('second', async (e) => {
    log.push('second:' + e.data);
    es.close();
    log.push('ack:' + await ack);
    resolve(log);
  });
  es.onerror = async () => { log.push('error'); es.close(); log.push('ack:' + await ack); resolve(log); };
});
</script>
</body></html>
`)
	})
	mux.HandleFunc("/events", s.events)
	mux.HandleFunc("/ack", s.ack)
	return mux
}

func (s *sseSite) events(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	ch := make(chan struct{})
	s.mu.Lock()
	s.acks[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.acks, id)
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fmt.Fprint(w, "event: first\ndata: one\n\n")
	http.NewResponseController(w).Flush()
	select {
	case <-ch:
		fmt.Fprint(w, "event: second\ndata: two\n\n")
		http.NewResponseController(w).Flush()
	case <-time.After(sseAckTimeout):
		// Give up without the second event: the page reports an error.
	case <-r.Context().Done():
	}
}

func (s *sseSite) ack(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ch, ok := s.acks[r.URL.Query().Get("id")]
	if ok {
		delete(s.acks, r.URL.Query().Get("id"))
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "late", http.StatusGone)
		return
	}
	close(ch)
	fmt.Fprint(w, "acked")
}

func TestSSEIsStreamed(t *testing.T) {
	want := []string{"first:one", "second:two", "ack:acked"}
	for _, mode := range []string{"direct", "proxied"} {
		t.Run(mode, func(t *testing.T) {
			var tab *e2etest.Tab
			if mode == "direct" {
				tab = world.DirectTab(t)
				loadPage(t, tab, "https://sse.test/", false)
			} else {
				tab = world.ProxiedTab(t)
				loadPage(t, tab, "https://sse.test/", true)
			}
			got := e2etest.EvalWithin[[]string](tab, sseAckTimeout+10*time.Second, `window.sse()`)
			if !slices.Equal(got, want) {
				t.Errorf("event log %q, want %q: the first event must reach the page while the stream is open "+
					"(the server sends the second only after the page acknowledged the first)\nconsole:\n%s", got, want, tab.ConsoleLog())
			}
		})
	}
}
