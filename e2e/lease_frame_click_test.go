package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// OPEN-ITEMS 96 (tenth session): on a page the agent loaded, the person's own click on a link in
// a frame of the page's origin was held — a frame has no page agent, so no one reported the
// click. Now the page agent listens in its same-origin frames (person_nav.js) and the link goes.

func rtFramedSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>App</title></head><body><h1>App</h1>
<script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
	})
	mux.HandleFunc("/help", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Help</title></head><body><h1>Help</h1>
<iframe id="faq" src="/faq" width="500" height="150"></iframe>
<script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
	})
	mux.HandleFunc("/faq", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>FAQ</title></head><body>
<p><a id="ext" href="https://witness.test/framelink">The provider's help</a></p></body></html>`)
	})
	return mux
}

// TestLeaseFrameLinkPersonClick: the agent opens the help page, which frames a page of its own
// origin; past the action's window the person clicks a link to another site in that frame: the
// frame goes there.
func TestLeaseFrameLinkPersonClick(t *testing.T) {
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "/help"}}]},
		{"text": "Opened."}
	]}`, map[string]http.Handler{"app.test": rtFramedSite()})
	tab := aw.tab
	actChat(t, tab, "https://app.test/", "open the help")
	if err := waitTrue(tab, 20*time.Second, `location.pathname === '/help' && document.body && document.body.dataset.pageScript === 'ran' &&
		!!document.getElementById('faq').contentDocument && !!document.getElementById('faq').contentDocument.getElementById('ext')`); err != nil {
		t.Fatalf("the agent's navigate did not load /help and its frame: %v\n%s", err, aw.diagnose())
	}
	time.Sleep(4 * time.Second) // the navigate's own window is over; the lease holds
	var x, y float64
	fmt.Sscan(e2etest.Eval[string](tab, `(() => { const f = document.getElementById('faq').getBoundingClientRect();
		const b = document.getElementById('faq').contentDocument.getElementById('ext').getBoundingClientRect();
		return (f.left + 2 + b.left + b.width / 2) + " " + (f.top + 2 + b.top + b.height / 2); })()`), &x, &y)
	clickAt(t, tab, x, y)
	waitWitness(t, aw, "GET https://witness.test/framelink")
}
