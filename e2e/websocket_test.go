package e2e

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/mccutchen/go-httpbin/v2/httpbin"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// wsSite is go-httpbin (its /websocket/echo) with a test page at /.
func wsSite() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", httpbin.New().Handler())
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>WebSocket echo</title></head><body>
<p>WebSocket echo through go-httpbin.</p>
<script>
document.body.dataset.pageScript = 'ran';
// echo sends each message and resolves with what came back, in order.
window.echo = (url, messages) => new Promise((resolve) => {
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  const got = [];
  ws.onopen = () => messages.forEach((m) => ws.send(m));
  ws.onmessage = (e) => {
    got.push(typeof e.data === 'string' ? e.data : 'binary:' + new Uint8Array(e.data).join(','));
    if (got.length === messages.length) { ws.close(); resolve(got); }
  };
  ws.onerror = () => resolve(['error after ' + got.length + ' messages']);
  ws.onclose = (e) => { if (got.length < messages.length) resolve(['closed ' + e.code + ' after ' + got.length + ' messages']); };
});
</script>
</body></html>
`)
	})
	return mux
}

func TestWebSocketEcho(t *testing.T) {
	const script = `(async () => {
		const big = 'x'.repeat(200000);
		const got = await window.echo('wss://ws.test/websocket/echo', ['hello remix', big, new Uint8Array([0, 1, 2, 255]).buffer]);
		return got.map((m) => m.length > 100 ? 'long:' + m.length : m);
	})()`
	want := []string{"hello remix", "long:200000", "binary:0,1,2,255"}
	for _, mode := range []string{"direct", "proxied"} {
		t.Run(mode, func(t *testing.T) {
			var tab *e2etest.Tab
			if mode == "direct" {
				tab = world.DirectTab(t)
				loadPage(t, tab, "https://ws.test/", false)
			} else {
				tab = world.ProxiedTab(t)
				l := loadPage(t, tab, "https://ws.test/", true)
				if !l.scriptRan {
					t.Errorf("the page's own script did not run through the proxy")
				}
			}
			got := e2etest.EvalWithin[[]string](tab, 30*time.Second, script)
			if !slices.Equal(got, want) {
				t.Errorf("echoed %q, want %q\nconsole:\n%s", got, want, tab.ConsoleLog())
			}
			if ps := tab.Problems(); len(ps) > 0 {
				t.Errorf("problems:\n%s", joinProblems(ps))
			}
		})
	}
}
