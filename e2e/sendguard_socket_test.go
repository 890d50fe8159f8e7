package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mccutchen/go-httpbin/v2/httpbin"
)

// WebSocket messages during the send guard's window (OPEN-ITEMS 19; proxy/chat/
// sendguard_socket.go): not held, by the lead's decision — the send guard's card says so, and the
// proxy's log says when a page's socket carried messages during an agent action.

const socketReplyPage = `<!doctype html><html><head><meta charset="utf-8"><title>Thread</title></head><body>
<p><span role="button" tabindex="0" id="reply">Post reply</span></p>
<p id="status">Nothing yet</p>
<script>
const ws = new WebSocket('wss://' + location.host + '/websocket/echo');
ws.onopen = () => { document.body.dataset.socket = 'open'; };
ws.onmessage = (e) => { document.getElementById('status').textContent = 'Echoed ' + e.data; };
document.getElementById('reply').onclick = () => {
  ws.send('reply over the socket');
  fetch('/api/reply', {method: 'POST', body: 'reply'}).catch(() => {});
};
document.body.dataset.pageScript = 'ran';
</script></body></html>`

// socketReplySite is the thread page, go-httpbin's WebSocket echo, and a recorder of every
// request that is not a GET.
func socketReplySite(rec *shopRecord) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/websocket/", httpbin.New().Handler())
	mux.Handle("/", recordedPage(rec, socketReplyPage))
	return mux
}

// TestSendGuardSaysSocketsAreNotHeld: the agent clicks "Post reply", whose handler sends a
// message on the page's open WebSocket and posts. The post is carded, and the card says that
// messages on open connections are not held; the socket's message reaches the site (the echo
// comes back), and the proxy's log says the page sent messages on a WebSocket during the action.
func TestSendGuardSaysSocketsAreNotHeld(t *testing.T) {
	rec := &shopRecord{}
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"text": "Post reply"}}]},
		{"text": "Done."}
	]}`, map[string]http.Handler{"thread.test": socketReplySite(rec)})
	tab := aw.tab
	pf, f := openActPanel(t, tab, "https://thread.test/")
	tab.WaitFor(10*time.Second, "the page's WebSocket", `document.body.dataset.socket === 'open'`)
	fx, fy := frameOrigin(t, tab, f)
	chat(t, pf, "post the reply")
	hc := heldChat{pf: pf, fx: fx, fy: fy}
	declineSubmitCard(t, aw, hc, "the page's script sent POST https://thread.test/api/reply",
		"Messages the page sends on open connections (WebSocket) are not held.")
	waitToolResult(t, aw, "the person chose “Not now”")
	tab.WaitFor(10*time.Second, "the socket's echo", `document.getElementById('status').textContent === 'Echoed reply over the socket'`)
	const logged = "the page sent messages on a WebSocket during an agent action's window; they are not held"
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(aw.proxy.Logs(), logged); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the proxy's log does not say %q\n%s", logged, aw.diagnose())
		}
	}
	if got := rec.all(); got != "" {
		t.Errorf("the site got %q, want nothing: the post was declined", got)
	}
}
