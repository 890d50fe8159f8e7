package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// The person's own posts to a sibling host during the send guard's window (eleventh session,
// person9; proxy/chat/sendguard_person.go). An app on www.shop.test saves through its API on
// api.shop.test. Under the browsers' default Referrer-Policy (strict-origin-when-cross-origin)
// that post's Referer is the origin alone, "https://www.shop.test/", which names no page: since
// person8 the person's own click on "Save" within an agent action's 30 s was carded. Now the
// origin alone names the page when it is its origin's only open page; with a second tab of
// www.shop.test open, either tab could have sent it, and it is carded.

const siblingAppPage = `<!doctype html><html><head><meta charset="utf-8"><title>Shop notes</title></head><body>
<p><button type="button" id="save">Save</button> <button type="button" id="details">Show details</button></p>
<p id="status">Nothing saved</p>
<p id="more" hidden>Details here</p>
<script>
let n = 0;
document.getElementById('save').onclick = () => {
  n++;
  fetch('https://api.shop.test/v1/save', {method: 'POST', body: 'mine ' + n}).then((r) => {
    if (r.ok) { document.getElementById('status').textContent = 'Saved ' + n; }
  }, () => {});
};
document.getElementById('details').onclick = () => { document.getElementById('more').hidden = false; };
document.body.dataset.pageScript = 'ran';
</script></body></html>`

// siblingApp serves the app's page on www.shop.test and its API on api.shop.test, which
// answers the page's CORS requests and records every one that is not a GET or an OPTIONS.
func siblingApp(rec *shopRecord) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "api.shop.test" {
			htmlPage(w, siblingAppPage)
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", "https://www.shop.test")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if !recordSend(rec, w, r) {
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

// TestPersonPostsToTheSiblingAPI: the agent clicks "Show details" (which posts nothing) in tab A
// on www.shop.test; in that action's window the person clicks "Save", whose post to
// api.shop.test carries the origin alone as Referer: it reaches the API with no card. Then a
// second tab of www.shop.test opens; the agent clicks "Show details" again, and the person's
// click on "Save" in tab A is carded (declined: the API gets nothing more).
func TestPersonPostsToTheSiblingAPI(t *testing.T) {
	rec := &shopRecord{}
	app := siblingApp(rec)
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"text": "Show details"}}]},
		{"tool_calls": [{"name": "wait_for", "arguments": {"text": "Saved 1", "timeoutMs": 10000}}]},
		{"tool_calls": [{"name": "wait_for", "arguments": {"text": "Tab B is open", "timeoutMs": 10000}}]},
		{"tool_calls": [{"name": "click", "arguments": {"text": "Show details", "resubmit": true}}]},
		{"tool_calls": [{"name": "wait_for", "arguments": {"text": "Saved 2", "timeoutMs": 5000}}]},
		{"text": "Done."}
	]}`, map[string]http.Handler{"www.shop.test": app, "api.shop.test": app})
	tabA := aw.tab
	hc := actChatHeld(t, tabA, "https://www.shop.test/notes", "show the details")
	pending := func() bool {
		return hc.pf.eval(t, `String(!!document.querySelector('.card[data-card=submit][data-state=pending]'))`) == "true"
	}

	// 1. Tab A is www.shop.test's only page: the person's "Save" reaches the API uncarded.
	waitModelRequests(t, aw, 2)
	time.Sleep(300 * time.Millisecond)
	personClick(t, tabA, "#save")
	reachesSiteUncarded(t, aw, rec, pending, "/v1/save", "click on “Save” (a post to api.shop.test)")

	// 2. A second tab of www.shop.test: the same click of the person's is carded.
	tabB := tabA.Browser().NewTab(t)
	tabB.Navigate("https://www.shop.test/other")
	tabB.WaitConnected()
	tabB.WaitFor(5*time.Second, "tab B's script", pageScriptRan)
	e2etest.Eval[string](tabA, `document.getElementById('more').textContent = 'Tab B is open'`)
	waitModelRequests(t, aw, 5)
	time.Sleep(300 * time.Millisecond)
	personClick(t, tabA, "#save")
	declineSubmitCard(t, aw, hc, "During or after the agent's click “Show details”, the page's script sent POST https://api.shop.test/v1/save")
	waitModelRequests(t, aw, 6)
	if got := rec.all(); got != "POST api.shop.test/v1/save mine 1" {
		t.Errorf("the API got %q, want only the person's first save", got)
	}
}
