package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// channelPage is a page whose script tries to reach a remixlet through the page-agent channel:
// it looks for the page token, opens its own sockets to remix.proxy with forged tokens and sends
// forged results and events on them, and posts forged messages to itself. It records what it saw
// in window.attempts.
func channelPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Channel</title></head><body>
<button id="b">b</button>
<script>
window.attempts = {closes: [], tokenTags: document.querySelectorAll('script[data-remixproxy]').length};
const forged = [
  {type: 'event', listener: 1, event: {type: 'click'}},
  {type: 'result', id: 1, ok: true, value: null},
  {type: 'toolResult', id: 1, ok: true, value: {}},
  {type: 'mutated'},
];
window.tryChannel = () => new Promise((resolve) => {
  let left = 3;
  const done = () => { if (--left === 0) resolve(JSON.stringify(window.attempts)); };
  for (const url of ['wss://remix.proxy/agent/ws?t=forged', 'wss://remix.proxy/agent/ws',
                     'wss://remix.proxy/panel/ws?t=forged']) {
    let ws;
    try { ws = new WebSocket(url); } catch (e) { window.attempts.closes.push('throw ' + e); done(); continue; }
    ws.onopen = () => { for (const m of forged) ws.send(JSON.stringify(m)); };
    ws.onclose = (ev) => { window.attempts.closes.push(url + ' ' + ev.code); done(); };
  }
  for (const m of forged) window.postMessage(m, '*');
});
document.body.dataset.pageScript = 'ran';
</script></body></html>`)
	})
}

// TestHostilePageCannotUseThePageAgentChannel: a page script cannot find the page token, cannot
// open the page-agent or panel channel with a forged one, and nothing it posts reaches the
// remixlet: its dom.on listener (which writes storage) never fires from a forgery.
func TestHostilePageCannotUseThePageAgentChannel(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"channel.test": channelPage()}, e2etest.WithStore())
	st := p.Store
	rx := saveAndActivate(t, st, "listener", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "listener", "description": "counts clicks", "api": 1,
			"matches": ["https://channel.test/*"], "permissions": [{"name": "storage", "reason": "count"}]}`),
		sandbox.ScriptFile: []byte(`const b = await dom.query('#b');
await dom.on(b, 'click', async () => { await rmx.storage.set('clicked', true); });
await rmx.storage.set('ready', true);`),
	})
	tab.Navigate("https://channel.test/")
	tab.WaitConnected()
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, ok, _ := st.StorageGet(ctx, rx.ID, "ready"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the remixlet did not start:\n%s", remixletLog(t, st, rx.ID))
		}
	}

	got := e2etest.Eval[string](tab, `window.tryChannel()`)
	if !strings.Contains(got, `"tokenTags":0`) {
		t.Errorf("the page found the bootstrap tag with its token: %s", got)
	}
	for _, want := range []string{"agent/ws?t=forged 4401", "agent/ws 4401", "panel/ws?t=forged 4403"} {
		if !strings.Contains(got, want) {
			t.Errorf("the page's own socket was not refused as %q: %s", want, got)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if _, ok, _ := st.StorageGet(ctx, rx.ID, "clicked"); ok {
		t.Fatal("a forged message reached the remixlet's listener")
	}
	// The listener itself works: a real click (not a forgery of the channel) reaches it.
	e2etest.Eval[bool](tab, `(document.getElementById('b').click(), true)`)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, ok, _ := st.StorageGet(ctx, rx.ID, "clicked"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a click on the button did not reach the listener (so the test above proves nothing):\n%s", remixletLog(t, st, rx.ID))
		}
	}
}
