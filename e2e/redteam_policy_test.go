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
		wantLog: `refused: dom.setAttr: attribute value refused: the element belongs to a form that is sent to https://witness.test/search`},
	{name: "label for a remixlet button inside another site's submit button", body: `const b = await dom.create({ tag: 'button', attrs: { type: 'button', id: 'rt-inner' }, text: 'x' });
await dom.insert(await dom.query('#sbtn2'), b);
const l = await dom.create({ tag: 'label', attrs: { for: 'rt-inner' }, text: 'go' });
await dom.insert(await dom.query('#box'), l);
await dom.click(l);`,
		wantLog: `refused: dom.insert: nothing can be inserted into a form that is sent to https://witness.test/search2`},
	{name: "page's own button nested in another site's submit button", body: `await dom.click(await dom.query('#pinner'));`,
		wantLog: `refused: dom.click: dom.click refused: the form is sent to https://witness.test/search3`},
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

// rtFormCases run side by side on /form, which has a search form that asks another site (as
// many sites have: "search the web"). Each writes page data into what that form sends; then the
// person, not the remixlet, presses its button. What the form sends is the page's own fields,
// never what a remixlet wrote (the redirect guard's rule: what leaves is what the remixlet wrote,
// whoever clicks).
var rtFormCases = []policyCase{
	{name: "value of another site's search field", body: `const d = await dom.text(await dom.query('#private'));
await dom.setAttr(await dom.query('#q'), 'value', 'F1 ' + d);`,
		wantLog: `refused: dom.setAttr: attribute value refused: the element belongs to a form that is sent to https://witness.test/search`},
	{name: "hidden field put into another site's form", body: `const d = await dom.text(await dom.query('#private'));
await dom.insert(await dom.query('#sform'), await dom.create({ tag: 'input', attrs: { type: 'hidden', name: 'f2', value: 'F2 ' + d } }));`,
		wantLog: `refused: dom.insert: nothing can be inserted into a form that is sent to https://witness.test/search`},
	{name: "text of an option of another site's form", body: `const d = await dom.text(await dom.query('#private'));
await dom.setText(await dom.query('#opt'), 'F3 ' + d);`,
		wantLog: `refused: dom.setText: the element belongs to a form that is sent to https://witness.test/search`},
	{name: "the page's own field moved into another site's form", body: `await dom.insert(await dom.query('#sform'), await dom.query('#addr'));`,
		wantLog: `refused: dom.insert: nothing can be inserted into a form that is sent to https://witness.test/search`},
	{name: "field owned by another site's form through its form attribute", body: `const d = await dom.text(await dom.query('#private'));
await dom.setAttr(await dom.query('#outside'), 'value', 'F5 ' + d);`,
		wantLog: `refused: dom.setAttr: attribute value refused: the element belongs to a form that is sent to https://witness.test/search`},
	{name: "setHTML inside another site's form", body: `const d = await dom.text(await dom.query('#private'));
await dom.setHTML(await dom.query('#inform'), '<input name="f6" value="F6 ' + d + '">');`,
		wantLog: `refused: dom.setHTML: the element belongs to a form that is sent to https://witness.test/search`},
	{name: "the page's own form still takes writes", body: `await dom.setAttr(await dom.query('#addr'), 'placeholder', 'Street');
await dom.insert(await dom.query('#home'), await dom.create({ tag: 'input', attrs: { type: 'hidden', name: 'ok', value: '1' } }));
rmx.log('own form ok');`, wantLog: `own form ok`},
}

// rtPolicySite serves /clicks, /login, /form and /local (where the same-origin link goes).
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
<form id="sform3" action="https://witness.test/search3"><input name="q" value="y"><button id="sbtn3">Search</button></form>
<a id="local" href="/local">local</a>
<div id="box"></div>
`+status(len(rtClickCases))+`
<script>
// A widget that nests a plain button in the submit button (the parser cannot, a script can).
const inner = document.createElement('button');
inner.type = 'button';
inner.id = 'pinner';
inner.textContent = 'go';
document.getElementById('sbtn3').appendChild(inner);
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
		case "/form":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Form</title></head>
<body><h1>Form</h1>
<p id="private">Private note: account 4711 owes 93 EUR</p>
<form id="home" action="/save" method="post"><input id="addr" name="addr" value="Secret street 1"></form>
<form id="sform" action="https://witness.test/search"><input id="q" name="q"><select name="in"><option id="opt">web</option></select><div id="inform"></div><button id="sbtn">Search the web</button></form>
<input id="outside" name="f5" form="sform">
`+status(len(rtFormCases))+`
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
	wit := &witness{}
	return startHostileWorld(t, wit, map[string]http.Handler{"rt.test": rtPolicySite(), "witness.test": wit})
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

// TestRedteamPolicyOffsiteForm: a remixlet cannot put page data into a form that is sent to
// another site; the person's own search through that form sends only the page's fields.
func TestRedteamPolicyOffsiteForm(t *testing.T) {
	h := startRedteamPolicy(t)
	rxs := h.addPolicy(rtFormCases, "https://rt.test/form*")
	h.runPolicy("https://rt.test/form", rtFormCases, rxs)
	h.checkNoWitness("before the person's search")
	var x, y float64
	fmt.Sscan(e2etest.Eval[string](h.tab, `(() => { const b = document.getElementById('sbtn').getBoundingClientRect(); return (b.left + b.width / 2) + ' ' + (b.top + b.height / 2); })()`), &x, &y)
	clickAt(t, h.tab, x, y)
	var got []string
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		_, got = h.witnessed()
	}
	if len(got) != 1 {
		t.Fatalf("the person's search reached the witness %d times: %q", len(got), got)
	}
	if !strings.HasPrefix(got[0], "GET https://witness.test/search?q=&in=web&f5= ") {
		t.Errorf("the person's search sent %s, want only the page's own fields (q=&in=web&f5=)", got[0])
	}
}
