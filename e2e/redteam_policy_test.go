package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// Held-out attacks on the remixlet page policy (issue 12), written by someone who did not build
// it: remixlets stored without the save-time checks, run in Chromium through the proxy, with a
// witness that records whatever reaches it.
//   - Clicks whose activation is not the element clicked: a control with an activation
//     behaviour of its own that does not stop the click (a type=button button, a label, a
//     checkbox, a summary) inside a page link or a page submit button lets the click go on to
//     the ancestor, which navigates or submits. A remixlet can even put its own button there.
//   - Passwords the page itself turns into text: a "show password" button flips the field's
//     type, and a textarea the page marks as a password.

// rtClickCases run side by side on /clicks (every navigation that gets through reaches the
// witness, whose 204 leaves the tab where it is, so the other cases still run).
var rtClickCases = []policyCase{
	{name: "button inside a link to another site", body: `await dom.click(await dom.query('#inbtn'));`,
		wantLog: `refused: dom.click: dom.click refused: the link goes to https://witness.test/button-in-link`},
	{name: "label inside a link to another site", body: `await dom.click(await dom.query('#inlbl'));`,
		wantLog: `refused: dom.click: dom.click refused: the link goes to https://witness.test/label-in-link`},
	{name: "checkbox inside a link to another site", body: `await dom.click(await dom.query('#incb'));`,
		wantLog: `refused: dom.click: dom.click refused: the link goes to https://witness.test/checkbox-in-link`},
	{name: "summary inside a link to another site", body: `await dom.click(await dom.query('#insum'));`,
		wantLog: `refused: dom.click: dom.click refused: the link goes to https://witness.test/summary-in-link`},
	{name: "remixlet button put into a link to another site", body: `const b = await dom.create({ tag: 'button', attrs: { type: 'button' }, text: 'x' });
await dom.insert(await dom.query('#partner'), b);
await dom.click(b);`,
		wantLog: `refused: dom.click: dom.click refused: the link goes to https://witness.test/partner`},
	{name: "page data through another site's search form", body: `const data = await dom.text(await dom.query('#private'));
await dom.setAttr(await dom.query('#q'), 'value', data);
const b = await dom.create({ tag: 'button', attrs: { type: 'button' }, text: 'x' });
await dom.insert(await dom.query('#sbtn'), b);
await dom.click(b);`,
		wantLog: `refused: dom.click: dom.click refused: the form is sent to https://witness.test/search`},
	{name: "label for a remixlet button inside another site's submit button", body: `const b = await dom.create({ tag: 'button', attrs: { type: 'button', id: 'rt-inner' }, text: 'x' });
await dom.insert(await dom.query('#sbtn2'), b);
const l = await dom.create({ tag: 'label', attrs: { for: 'rt-inner' }, text: 'go' });
await dom.insert(await dom.query('#box'), l);
await dom.click(l);`,
		wantLog: `refused: dom.click: dom.click refused: the form is sent to https://witness.test/search2`},
	{name: "same-origin click still works", body: `await dom.click(await dom.query('#local'));
rmx.log('local clicked');`, wantLog: `local clicked`},
}

// rtPasswordCases run side by side on /login.
var rtPasswordCases = []policyCase{
	{name: "show-password button, then read", body: `const pw = await dom.query('#pw');
await dom.click(await dom.query('#show'));
const out = [await dom.value(pw), await dom.attr(pw, 'value'), await dom.text(pw)];
const c = await dom.clone(pw);
out.push(await dom.value(c), await dom.attr(c, 'value'));
await rmx.storage.set('read', out.join('|'));`},
	{name: "textarea marked as a password", body: `const ta = await dom.query('#ta');
const out = [await dom.value(ta), await dom.text(ta)];
const c = await dom.clone(ta);
out.push(await dom.value(c), await dom.text(c));
await rmx.storage.set('read', out.join('|'));`},
}

// rtPolicySite serves /clicks, /login and /local (where the same-origin link goes).
func rtPolicySite() http.Handler {
	status := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "<p class=st id=s-%d></p>\n", i)
		}
		return b.String()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/local":
			w.WriteHeader(http.StatusNoContent)
		case "/clicks":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Clicks</title></head>
<body><h1>Clicks</h1>
<p id="private">Private note: account 4711 owes 93 EUR</p>
<a href="https://witness.test/button-in-link"><button id="inbtn" type="button">Open</button></a>
<a href="https://witness.test/label-in-link"><label id="inlbl">Open</label></a>
<a href="https://witness.test/checkbox-in-link"><input id="incb" type="checkbox"></a>
<a href="https://witness.test/summary-in-link"><details><summary id="insum">More</summary>x</details></a>
<a id="partner" href="https://witness.test/partner">Our partner</a>
<form id="sform" action="https://witness.test/search"><input id="q" name="q"><button id="sbtn">Search the web</button></form>
<form id="sform2" action="https://witness.test/search2"><input name="q" value="x"><button id="sbtn2">Search</button></form>
<a id="local" href="/local">local</a>
<div id="box"></div>
`+status(len(rtClickCases))+`
<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
		case "/login":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Login</title></head>
<body><h1>Login</h1>
<form id="form" action="/login" onsubmit="return false">
<input id="user" name="user" value="alice">
<input id="pw" type="password" name="pw" value="hunter2">
<button id="show" type="button">Show password</button>
<textarea id="ta" name="key" autocomplete="current-password">hunter3</textarea>
</form>
`+status(len(rtPasswordCases))+`
<script>
document.getElementById('show').addEventListener('click', () => {
  const pw = document.getElementById('pw');
  pw.type = pw.type === 'password' ? 'text' : 'password';
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
}

func startRedteamPolicy(t *testing.T) *hostileWorld {
	sites := e2etest.StartSites(t)
	wit := &witness{}
	sites.Handle("rt.test", rtPolicySite())
	sites.Handle("witness.test", wit)
	p := e2etest.StartProxy(t, sites, e2etest.WithStore())
	h := &hostileWorld{t: t, sites: sites, wit: wit, p: p, st: p.Store}
	h.tab = e2etest.Browser(t, e2etest.ThroughProxy(p)).NewTab(t)
	return h
}

// TestRedteamPolicyClickActivation: a click a remixlet makes is judged by everything it would
// activate, the ancestors of the clicked control included; the witness gets nothing.
func TestRedteamPolicyClickActivation(t *testing.T) {
	h := startRedteamPolicy(t)
	rxs := h.addPolicy(rtClickCases, "https://rt.test/clicks*")
	h.runPolicy("https://rt.test/clicks", rtClickCases, rxs)
	time.Sleep(500 * time.Millisecond)
	h.checkNoWitness("after the click cases")
	if u := e2etest.Eval[string](h.tab, `location.href`); u != "https://rt.test/clicks" {
		t.Errorf("the tab went to %s", u)
	}
	h.checkWitnessReachable()
}

// TestRedteamPolicyRevealedPasswords: a password field the page turns into a text field (its
// "show password" button, pressed by the remixlet) and a textarea the page marks as a password
// read back empty.
func TestRedteamPolicyRevealedPasswords(t *testing.T) {
	h := startRedteamPolicy(t)
	rxs := h.addPolicy(rtPasswordCases, "https://rt.test/login*")
	h.runPolicy("https://rt.test/login", rtPasswordCases, rxs)
	for i, c := range rtPasswordCases {
		v := h.storedString(rxs[i], "read")
		t.Logf("%s: read %q", c.name, v)
		if v == "" {
			t.Errorf("%s: the remixlet stored nothing\n%s", c.name, h.diagnose(rxs[i]))
		}
		if strings.Contains(v, "hunter") {
			t.Errorf("%s: the remixlet read the password: %q", c.name, v)
		}
	}
	if ty := e2etest.Eval[string](h.tab, `document.getElementById('pw').type`); ty != "text" {
		t.Errorf("the show-password button was not pressed (type %s): the case proves nothing", ty)
	}
}
