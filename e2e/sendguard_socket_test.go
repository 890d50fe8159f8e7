package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mccutchen/go-httpbin/v2/httpbin"
)

// WebSocket messages during the send guard's window (OPEN-ITEMS 19; proxy/chat/
// sendguard_socket.go): not held, by the lead's decision — the send guard's card says so, the
// proxy's log says when a page's socket carried messages during an agent action, and the chat
// tells the person how many.

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

// socketSite is page, go-httpbin's WebSocket echo, and a recorder of every request that is
// not a GET.
func socketSite(rec *shopRecord, page string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/websocket/", httpbin.New().Handler())
	mux.Handle("/", recordedPage(rec, page))
	return mux
}

// TestSendGuardSaysSocketsAreNotHeld: the agent clicks "Post reply", whose handler sends a
// message on the page's open WebSocket and posts. The post is carded, and the card says that
// messages on open connections are not held; the socket's message reaches the site (the echo
// comes back), the proxy's log says the page sent messages on a WebSocket during the action, and
// the chat says so to the person.
func TestSendGuardSaysSocketsAreNotHeld(t *testing.T) {
	rec := &shopRecord{}
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"text": "Post reply"}}]},
		{"text": "Done."}
	]}`, map[string]http.Handler{"thread.test": socketSite(rec, socketReplyPage)})
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
	pf.waitFor(t, 10*time.Second, "the chat's note of the socket's message",
		`[...document.querySelectorAll('.item.notice')].some((e) => e.textContent.includes('the page sent 1 message on an open connection (WebSocket)'))`)
	if got := rec.all(); got != "" {
		t.Errorf("the site got %q, want nothing: the post was declined", got)
	}
}

const socketWavePage = `<!doctype html><html><head><meta charset="utf-8"><title>Room</title></head><body>
<p><span role="button" tabindex="0" id="wave">Wave to the room</span></p>
<p id="status">Nothing yet</p>
<script>
const ws = new WebSocket('wss://' + location.host + '/websocket/echo');
ws.onopen = () => { document.body.dataset.socket = 'open'; };
ws.onmessage = (e) => { document.getElementById('status').textContent = 'Echoed ' + e.data; };
document.getElementById('wave').onclick = () => { ws.send('wave'); ws.send('wave again'); };
document.body.dataset.pageScript = 'ran';
</script></body></html>`

// TestSocketMessagesShownInTheChat: the agent clicks "Wave to the room", whose handler sends two
// messages on the page's open WebSocket and posts nothing (no card). After the action the chat
// shows one note for the person with the count; the messages reach the site (the echo comes
// back).
func TestSocketMessagesShownInTheChat(t *testing.T) {
	rec := &shopRecord{}
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"text": "Wave to the room"}}]},
		{"text": "Waved."}
	]}`, map[string]http.Handler{"room.test": socketSite(rec, socketWavePage)})
	tab := aw.tab
	pf, _ := openActPanel(t, tab, "https://room.test/")
	tab.WaitFor(10*time.Second, "the page's WebSocket", `document.body.dataset.socket === 'open'`)
	chat(t, pf, "wave to the room")
	tab.WaitFor(10*time.Second, "the socket's echo", `document.getElementById('status').textContent === 'Echoed wave again'`)
	const note = "the page sent 2 messages on an open connection (WebSocket); such messages are not held."
	notes := `[...document.querySelectorAll('.item.notice')].map((e) => e.textContent).join('\n')`
	pf.waitFor(t, 15*time.Second, "the note of the socket's messages", notes+`.includes(`+jsString(note)+`)`)
	waitModelRequests(t, aw, 2)
	time.Sleep(2 * time.Second) // a second note, or an update of it, would come by now
	got := pf.eval(t, notes)
	if strings.Count(got, "(WebSocket)") != 1 || !strings.Contains(got, "During or after the agent's click") {
		t.Errorf("the chat's notes are %q, want one saying the agent's click and %q", got, note)
	}
	if got := rec.all(); got != "" {
		t.Errorf("the site got %q, want no request", got)
	}
}
