package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// After an in-page sign-in (OPEN-ITEMS 123). While a typed password is in its field, what the
// page writes reads blank to remixlets and the model (rx_mirrors.js, mirrors7). A single-page app
// that signs in without a page load often keeps the filled form in the DOM, hidden: the hold then
// lasted until the next load, and the dashboard it rendered read blank. Since secret8 a field
// that is no longer rendered (display: none, or inside such an element) ends the hold.

// signInSPASite serves /spa (the form is hidden at sign-in, its field still filled) and /spa-shown (the
// form stays on the page): after the click on Sign in the page renders a dashboard at once and its
// inbox count 300 ms later.
func signInSPASite(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hide := "true"
		switch r.URL.Path {
		case "/spa":
		case "/spa-shown":
			hide = "false"
		default:
			http.NotFound(w, r)
			return
		}
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>App</title></head>
<body><h1>App</h1>
<form id="form" onsubmit="return false">
<input id="user" name="user" value="alice">
<input id="pw" type="password" name="pw">
<button id="signin" type="button">Sign in</button>
</form>
<div id="dash" hidden><p id="welcome"></p><p id="inbox"></p></div>
`+statusParagraphs(n)+`
<script>
document.getElementById('signin').addEventListener('click', () => {
  // As many single-page apps do: the form stays in the DOM, filled; the dashboard is rendered.
  if (`+hide+`) document.getElementById('form').style.display = 'none';
  const dash = document.getElementById('dash');
  dash.hidden = false;
  document.getElementById('welcome').textContent = 'Welcome back, alice';
  setTimeout(() => { document.getElementById('inbox').textContent = '3 new messages'; document.body.dataset.inbox = 'yes'; }, 300);
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
	})
}

// spaReader reads the dashboard's texts once the test says go.
const spaReader = `await dom.waitFor('#go', { timeout: 60000 });
const out = [];
for (const sel of ['#welcome', '#inbox']) out.push(await dom.text(await dom.query(sel)));
await rmx.storage.set('read', JSON.stringify(out));`

// TestSPADashboardReadsAfterSignIn: a remixlet reads the dashboard an SPA renders after the person
// typed a password and signed in, when the filled form is hidden; on the same page with the form
// still shown it reads blank, as before.
func TestSPADashboardReadsAfterSignIn(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"app.test": signInSPASite(1), "witness.test": wit})
	for _, tc := range []struct {
		path, want, why string
	}{
		{"/spa", `["Welcome back, alice","3 new messages"]`, "the filled field is no longer rendered: what the page writes after it reads normally"},
		{"/spa-shown", `["",""]`, "the filled field is still shown: what the page writes while it holds the password reads blank"},
	} {
		cases := []policyCase{{name: "reads the dashboard of " + tc.path, body: spaReader}}
		rxs := h.addPolicy(cases, "https://app.test"+tc.path)
		h.tab.Navigate("https://app.test" + tc.path)
		h.tab.WaitConnected()
		h.tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
		h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pw').value === '`+rtFieldsPassword+`'`)
		personClick(t, h.tab, "#signin")
		if err := waitTrue(h.tab, 10*time.Second, `document.body.dataset.inbox === 'yes'`); err != nil {
			t.Fatalf("%s: the page did not render its dashboard: %v", tc.path, err)
		}
		h.rtFieldsGo(cases, rxs)
		var got []string
		v := h.storedString(rxs[0], "read")
		if err := json.Unmarshal([]byte(v), &got); err != nil {
			t.Fatalf("%s: stored %q\n%s", tc.path, v, h.diagnose(rxs[0]))
		}
		if g := jsonText(got); g != tc.want {
			t.Errorf("%s: the remixlet read %s, want %s (%s)", tc.path, g, tc.want, tc.why)
		}
	}
}

// TestAgentToolsReadTheDashboardAfterSignIn: the model's capture_page shows the dashboard an SPA
// rendered after the person signed in with its filled form hidden; with the form still shown it
// is hidden, as before.
func TestAgentToolsReadTheDashboardAfterSignIn(t *testing.T) {
	script := `{"turns": [
		{"tool_calls": [{"name": "capture_page"}]},
		{"text": "I read the page."},
		{"tool_calls": [{"name": "capture_page"}]},
		{"text": "Done."}
	]}`
	aw := newAgentWorld(t, script, map[string]http.Handler{"app.test": signInSPASite(0)})
	tab, model := aw.tab, aw.model
	waitRequests := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); len(model.Requests()) < n; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the model got %d requests, want %d\n%s", len(model.Requests()), n, aw.diagnose())
			}
		}
	}
	for i, tc := range []struct {
		path  string
		shown bool
	}{{"/spa", true}, {"/spa-shown", false}} {
		tab.Navigate("https://app.test" + tc.path)
		tab.WaitConnected()
		tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
		typePassword(t, tab)
		personClick(t, tab, "#signin")
		tab.WaitFor(10*time.Second, "the dashboard", `document.body.dataset.inbox === 'yes'`)
		pf, _ := openPanel(t, tab)
		chat(t, pf, "read this page")
		waitRequests(2*i + 2)
		got := callResult(model.Requests(), 2*i)
		t.Logf("%s: capture_page: %s", tc.path, head(got, 1500))
		if read := strings.Contains(got, "Welcome back, alice") && strings.Contains(got, "3 new messages"); read != tc.shown {
			t.Errorf("%s: capture_page shows the dashboard: %v, want %v", tc.path, read, tc.shown)
		}
	}
}
