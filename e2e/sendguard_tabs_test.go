package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// Which input of the person's releases a late post in the send guard's window (eleventh
// session, OPEN-ITEMS 122; proxy/chat/sendguard_person.go). The agent's click on "Queue note"
// makes the page post 4 s later (an undo window). Before, the person's input on any page of the
// origin within 2 s before that post released it: their click in another tab of the site, or
// their typing in a field of the chat's own page. Now a report releases only its own page's
// posts (paired by Referer), and typing reports nothing.

const queuePage = `<!doctype html><html><head><meta charset="utf-8"><title>Queue</title></head><body>
<p><span role="button" tabindex="0" id="queue">Queue note</span> <button type="button" id="details">Show details</button></p>
<p><label for="draft">Draft</label> <input id="draft"></p>
<p id="status">Nothing queued</p>
<p id="more" hidden>Details here</p>
<script>
let n = 0;
document.getElementById('queue').onclick = () => {
  n++;
  document.body.dataset.queuedAt = String(Date.now());
  document.body.dataset.queued = String(n);
  setTimeout(() => fetch('/api/queue', {method: 'POST', body: 'note ' + n}).then((r) => {
    if (r.ok) { document.getElementById('status').textContent = 'Queued ' + n; }
  }, () => {}), 4000);
};
document.getElementById('details').onclick = () => { document.getElementById('more').hidden = false; };
document.body.dataset.pageScript = 'ran';
</script></body></html>`

// recordedPage serves page at every path and records every request that is not a GET or HEAD
// (recordSend): a site for the send guard's tests.
func recordedPage(rec *shopRecord, page string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !recordSend(rec, w, r) {
			htmlPage(w, page)
		}
	})
}

// TestPersonInputReleasesOnlyItsPage: the agent clicks "Queue note" in tab A (the chat's); while
// its post waits out the page's 4 s, the person clicks a control in tab B, another page of the
// same origin: tab A's post is carded (declined: nothing reaches the site). The agent clicks it
// again; this time the person types in tab A's draft field, no Enter: carded too. The third
// time the person types a line and Enter in tab B: carded.
func TestPersonInputReleasesOnlyItsPage(t *testing.T) {
	rec := &shopRecord{}
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"text": "Queue note"}}]},
		{"tool_calls": [{"name": "wait_for", "arguments": {"text": "Queued 1", "timeoutMs": 10000}}]},
		{"tool_calls": [{"name": "click", "arguments": {"text": "Queue note", "resubmit": true}}]},
		{"tool_calls": [{"name": "wait_for", "arguments": {"text": "Queued 2", "timeoutMs": 10000}}]},
		{"tool_calls": [{"name": "click", "arguments": {"text": "Queue note", "resubmit": true}}]},
		{"tool_calls": [{"name": "wait_for", "arguments": {"text": "Queued 3", "timeoutMs": 10000}}]},
		{"text": "Done."}
	]}`, map[string]http.Handler{"tabs.test": recordedPage(rec, queuePage)})
	tabA := aw.tab
	tabB := tabA.Browser().NewTab(t)
	tabB.Navigate("https://tabs.test/notes")
	tabB.WaitConnected()
	tabB.WaitFor(5*time.Second, "tab B's script", pageScriptRan)
	hc := actChatHeld(t, tabA, "https://tabs.test/inbox", "queue the note")
	const words = "During or after the agent's click “Queue note”, the page's script sent POST https://tabs.test/api/queue"

	// atQueued waits until the agent's click number n ran the page's handler and answered, then
	// until 2.5 s after the handler: the post is 1.5 s away, within 2 s of the person's input.
	atQueued := func(n string, answered int) {
		t.Helper()
		tabA.WaitFor(20*time.Second, "the agent's click on “Queue note”", `document.body.dataset.queued === '`+n+`'`)
		waitModelRequests(t, aw, answered)
		elapsed := e2etest.Eval[float64](tabA, `Date.now() - Number(document.body.dataset.queuedAt)`)
		if wait := 2500*time.Millisecond - time.Duration(elapsed)*time.Millisecond; wait > 0 {
			time.Sleep(wait)
		} else if wait < -time.Second {
			t.Fatalf("the click answered %v after its handler ran: too late for the test's timing", 2500*time.Millisecond-wait)
		}
	}
	// carded waits for the post's card (and declines it); the post reaching the site first fails.
	carded := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); hc.pf.eval(t, `String(!!document.querySelector('.card[data-card=submit][data-state=pending]'))`) != "true"; time.Sleep(50 * time.Millisecond) {
			if strings.Contains(rec.all(), "/api/queue") {
				t.Fatalf("%s released tab A's late post: the site got %q\n%s", what, rec.all(), aw.diagnose())
			}
			if time.Now().After(deadline) {
				t.Fatalf("no card for tab A's late post after %s; the site got %q\n%s", what, rec.all(), aw.diagnose())
			}
		}
		declineSubmitCard(t, aw, hc, words)
	}

	// 1. The person's click on a control in tab B.
	atQueued("1", 2)
	personClick(t, tabB, "#details")
	carded("the person's click in tab B")

	// 2. The person's typing in tab A's own field, without Enter.
	atQueued("2", 4)
	ctx, cancel := context.WithTimeout(tabA.Context(), 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.SendKeys("#draft", "a draft of mine", chromedp.NodeVisible)); err != nil {
		t.Fatalf("typing in the draft: %v", err)
	}
	carded("the person's typing in tab A")

	// 3. The person's typing and Enter in tab B's field: deliberate, but tab B's.
	atQueued("3", 6)
	ctxB, cancelB := context.WithTimeout(tabB.Context(), 20*time.Second)
	defer cancelB()
	if _, err := chromedp.Run(ctxB, chromedp.SendKeys("#draft", "in tab B"+kb.Enter, chromedp.NodeVisible)); err != nil {
		t.Fatalf("typing in tab B: %v", err)
	}
	carded("the person's Enter in tab B")

	waitModelRequests(t, aw, 7)
	if got := rec.all(); got != "" {
		t.Errorf("the site got %q, want nothing: the posts were the agent's and declined", got)
	}
}
