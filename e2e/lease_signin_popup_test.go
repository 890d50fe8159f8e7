package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// OPEN-ITEMS 96 (tenth session): on a page the agent loaded, the person's own click on a
// "Sign in with …" button whose handler opens the provider in a popup (window.open off the site)
// was held: the lease lets the person's activation through only to an address the page agent saw
// them click, and a button shows none. Now the page agent reports the address window.open gets
// during the person's trusted click on a button (person_nav.js), and the popup opens; the
// agent's synthetic click on the same button is still held. (The button opens a new window each
// time; a window.open into an existing named window, which Chromium sends without
// Sec-Fetch-User, is TestLeaseNamedPopupRetry's.)

const rtSigninPage = `<!doctype html><html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Sign in</h1>
<p id="txt">Click here when you are ready.</p>
<p id="ready" hidden>Ready to sign in</p>
<button type="button" id="signin">Sign in with Witness</button>
<div role="button" id="signin-tab" tabindex="0">Continue with Witness</div>
<button type="button" id="signin-named">Open the Witness window</button>
<script>
document.getElementById('signin-named').addEventListener('click', () => {
  window.open('https://witness.test/oauth?client=named', 'signin', 'width=500,height=600');
});
document.getElementById('txt').addEventListener('click', () => { document.getElementById('ready').hidden = false; });
document.getElementById('signin').addEventListener('click', () => {
  window.open('https://witness.test/oauth?client=app', '_blank', 'width=500,height=600');
});
document.getElementById('signin-tab').addEventListener('click', async () => {
  await Promise.resolve(); // a handler that awaits first, in the click's task
  location.href = 'https://witness.test/sso?client=app';
});
document.body.dataset.pageScript = 'ran';
</script></body></html>`

func rtSigninSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>App</title></head><body><h1>App</h1>
<script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
	})
	mux.HandleFunc("/signin", func(w http.ResponseWriter, r *http.Request) { htmlPage(w, rtSigninPage) })
	return mux
}

// TestLeaseSigninPopupPersonClick: the agent opens the sign-in page (its document is leased) and,
// once the person has clicked on the page (activation, so the popup is not blocked), clicks the
// button itself: the popup's navigation is held and the witness gets nothing. Later, the person
// clicks the same button: the popup goes to the provider; and their
// click on a "Continue with …" control whose handler sends the tab there goes too.
func TestLeaseSigninPopupPersonClick(t *testing.T) {
	aw := leaseSigninAgentClicks(t, "Sign in with Witness")
	tab := aw.tab

	// The person's click on the button, within the agent's click's navWindow: reported, the popup goes.
	time.Sleep(4 * time.Second)
	personClick(t, tab, "#signin")
	waitWitness(t, aw, "GET https://witness.test/oauth?client=app")
	if got := aw.witness.requests(); len(got) != 1 || !strings.Contains(got[0], `Referer "https://app.test/`) {
		t.Errorf("the witness got %q, want the person's popup only", got)
	}

	// The person's click on a role=button whose handler sends the tab to the provider: it goes.
	personClick(t, tab, "#signin-tab")
	waitWitness(t, aw, "GET https://witness.test/sso?client=app")
}

// leaseSigninAgentClicks has the agent open the sign-in page (its document is leased) and, once
// the person has clicked on the page (activation, so a popup is not blocked), click the button
// named text itself: the popup's navigation is held and the witness gets nothing.
func leaseSigninAgentClicks(t *testing.T, text string) *agentWorld {
	t.Helper()
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "/signin"}}]},
		{"tool_calls": [{"name": "wait_for", "arguments": {"text": "Ready to sign in", "timeoutMs": 10000}}]},
		{"tool_calls": [{"name": "click", "arguments": {"text": "`+text+`"}}]},
		{"text": "Clicked."}
	]}`, map[string]http.Handler{"app.test": rtSigninSite()})
	tab := aw.tab
	actChat(t, tab, "https://app.test/", "sign me in")
	if err := waitTrue(tab, 20*time.Second, `location.pathname === '/signin' && document.body && document.body.dataset.pageScript === 'ran'`); err != nil {
		t.Fatalf("the agent's navigate did not load /signin: %v\n%s", err, aw.diagnose())
	}
	time.Sleep(500 * time.Millisecond) // the page agent of /signin is connected and waiting
	personClick(t, tab, "#txt")

	// The agent's click: the popup's navigation off the site is held.
	waitRefusalLogged(t, aw)
	time.Sleep(time.Second)
	noWitness(t, aw)
	return aw
}
