package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// nav7's decision 2 (tenth session): Chromium sends a window.open into a named window that is
// already open without Sec-Fetch-User. On a page the agent loaded, the agent's click on a
// "Sign in with …" button left the popup named "signin" open on the proxy's refusal page; the
// person's own retry on the same button navigated that window without ?1, and the lease held it
// though the page agent had reported the click's window.open. Now a report of exactly that
// address from the navigation's Referer origin, at most personNavFresh (1 s) old, stands in for
// ?1.

const namedSigninPage = `<!doctype html><html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Sign in</h1>
<p id="txt">Click here when you are ready.</p>
<p id="ready" hidden>Ready to sign in</p>
<button type="button" id="signin">Sign in with Witness</button>
<script>
document.getElementById('txt').addEventListener('click', () => { document.getElementById('ready').hidden = false; });
document.getElementById('signin').addEventListener('click', () => {
  window.open('https://witness.test/oauth?client=named', 'signin', 'width=500,height=600');
});
document.body.dataset.pageScript = 'ran';
</script></body></html>`

func namedSigninSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>App</title></head><body><h1>App</h1>
<script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
	})
	mux.HandleFunc("/signin", func(w http.ResponseWriter, r *http.Request) { htmlPage(w, namedSigninPage) })
	return mux
}

// TestLeaseNamedPopupRetry: the agent opens the sign-in page (leased) and clicks the button
// itself once the person has clicked on the page: the named popup's navigation is held, the
// witness gets nothing. Then the person clicks the same button while that popup is open: the
// popup goes to the provider.
func TestLeaseNamedPopupRetry(t *testing.T) {
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "/signin"}}]},
		{"tool_calls": [{"name": "wait_for", "arguments": {"text": "Ready to sign in", "timeoutMs": 10000}}]},
		{"tool_calls": [{"name": "click", "arguments": {"text": "Sign in with Witness"}}]},
		{"text": "Clicked."}
	]}`, map[string]http.Handler{"app.test": namedSigninSite()})
	tab := aw.tab
	actChat(t, tab, "https://app.test/", "sign me in")
	if err := waitTrue(tab, 20*time.Second, `location.pathname === '/signin' && document.body && document.body.dataset.pageScript === 'ran'`); err != nil {
		t.Fatalf("the agent's navigate did not load /signin: %v\n%s", err, aw.diagnose())
	}
	time.Sleep(500 * time.Millisecond) // the page agent of /signin is connected and waiting
	personClick(t, tab, "#txt")

	// The agent's click: the popup opens, and its navigation off the site is held.
	waitRefusalLogged(t, aw)
	time.Sleep(time.Second)
	noWitness(t, aw)

	// The person's retry, the popup still open: window.open into it carries no ?1.
	time.Sleep(4 * time.Second)
	personClick(t, tab, "#signin")
	waitWitness(t, aw, "GET https://witness.test/oauth?client=named")
	if got := aw.witness.requests(); len(got) != 1 || !strings.Contains(got[0], `Referer "https://app.test/`) {
		t.Errorf("the witness got %q, want the person's popup only", got)
	}
}
