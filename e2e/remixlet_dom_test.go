package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// The rest of the dom surface (create, insert, clone, rect, style, focus, scrollIntoView,
// click, setHTML, addStyle) used the way a remixlet would, in Chromium through the proxy: each
// step's outcome is collected by the remixlet and written into the page as JSON, and the test
// checks both that and the DOM.

func domSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pic.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(onePixelPNG)
			return
		case "/dom":
		default:
			http.NotFound(w, r)
			return
		}
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>DOM</title></head>
<body style="margin: 0">
<h1 id="title" style="color: rgb(0, 128, 0); width: 200px">Title</h1>
<div id="box" style="width: 120px; height: 30px">box</div>
<ul id="list"><li id="first">first</li></ul>
<div id="card"><b>card</b> <input id="pw" type="password" value="hunter2"><input id="nm" name="nm" value="alice"><img id="pic" src="/pic.png" alt="p"><span onclick="window.__cardClicked = 1">click me</span></div>
<input id="field">
<button id="btn" type="button">button</button>
<label id="lbl">check <input id="chk" type="checkbox"></label>
<a id="hash" href="#there">hash</a>
<p id="out"></p>
<div id="there" style="margin-top: 3000px">there</div>
<script>
document.getElementById('btn').addEventListener('click', () => { document.body.dataset.btn = 'clicked'; });
document.getElementById('field').addEventListener('focus', () => { document.body.dataset.focused = 'yes'; });
</script>
</body></html>`)
	})
}

const domManifest = `{"name": "dom surface", "description": "Uses the whole dom surface.", "api": 1,
  "matches": ["https://dom.test/*"], "permissions": []}`

const domScript = `const R = {};
const step = async (name, fn) => {
  try { R[name] = await fn(); if (R[name] === undefined) R[name] = 'ok'; }
  catch (e) { R[name] = 'ERR ' + e.message; }
};
const out = await dom.query('#out');
const box = await dom.query('#box');
const list = await dom.query('#list');
const first = await dom.query('#first');
await step('create', async () => {
  const el = await dom.create({ tag: 'div', attrs: { id: 'made', class: 'made' }, children: [
    { tag: 'span', text: 'made ' },
    { tag: 'a', attrs: { href: '/other?x=1#f', id: 'madelink' }, text: 'link' },
    { tag: 'img', attrs: { src: 'pic.png', id: 'madeimg', alt: '' } },
    { tag: 'img', attrs: { src: 'data:image/png;base64,iVBORw0KGgo=', id: 'dataimg', alt: '' } },
    { tag: 'svg', attrs: { width: '10', height: '10', viewBox: '0 0 10 10' }, children: [{ tag: 'circle', attrs: { cx: '5', cy: '5', r: '4' } }] },
  ] });
  await dom.insert(box, el, 'after');
  return 'ok';
});
await step('createRefused', async () => { await dom.create({ tag: 'script', text: 'window.__pwned = 1' }); return 'created'; });
await step('createIframe', async () => { await dom.create({ tag: 'iframe' }); return 'created'; });
await step('createOnclick', async () => { await dom.create({ tag: 'div', attrs: { onclick: 'x()' } }); return 'created'; });
await step('createClobber', async () => { await dom.create({ tag: 'img', attrs: { name: 'cookie' } }); return 'created'; });
await step('insert', async () => {
  await dom.insert(list, await dom.create({ tag: 'li', text: 'last' }), 'append');
  await dom.insert(list, await dom.create({ tag: 'li', text: 'zeroth' }), 'prepend');
  await dom.insert(first, await dom.create({ tag: 'li', text: 'before first' }), 'before');
  await dom.insert(first, await dom.create({ tag: 'li', text: 'after first' }), 'after');
});
await step('clone', async () => {
  const c = await dom.clone(await dom.query('#card'), true);
  await dom.setAttr(c, 'id', 'cardcopy');
  await dom.insert(out, c, 'after');
});
await step('clonePassword', async () => {
  const c = await dom.clone(await dom.query('#pw'));
  await dom.setAttr(c, 'id', 'pwcopy');
  await dom.insert(out, c, 'after');
  return [await dom.value(c), await dom.attr(c, 'value')];
});
await step('rect', async () => dom.rect(box));
await step('style', async () => dom.style(await dom.query('#title'), ['color', 'width']));
await step('styleOne', async () => dom.style(await dom.query('#title'), 'color'));
await step('focus', async () => dom.focus(await dom.query('#field')));
await step('scroll', async () => dom.scrollIntoView(await dom.query('#there')));
await step('clickButton', async () => dom.click(await dom.query('#btn')));
await step('clickLabel', async () => dom.click(await dom.query('#lbl')));
await step('clickHash', async () => dom.click(await dom.query('#hash')));
await step('setHTML', async () => dom.setHTML(await dom.query('#box'),
  '<b id="bold">Sale</b> ends <a href="/sale" onclick="window.__pwned=1">today</a><img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script><i style="color:red">i</i>'));
await step('addStyle', async () => dom.addStyle('#title, #made { text-decoration: underline }'));
await step('addStyleRefused', async () => { await dom.addStyle('#title { background: url(https://witness.test/x) }'); return 'added'; });
await step('setAttrHref', async () => { await dom.setAttr(await dom.query('#hash'), 'href', '/page2'); return dom.attr(await dom.query('#hash'), 'href'); });
await dom.setText(out, JSON.stringify(R));
`

func TestRemixletDOMSurface(t *testing.T) {
	wit := &witness{}
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"dom.test": domSite(), "witness.test": wit}, e2etest.WithStore())
	st := p.Store
	rx := saveUnchecked(t, st, "dom surface", store.Files{
		sandbox.ManifestFile: []byte(domManifest),
		sandbox.ScriptFile:   []byte(domScript),
	})
	diagnose := func() string {
		return fmt.Sprintf("remixlet log:\n%s\nproxy log tail:\n%s\n%s", remixletLog(t, st, rx.ID), tail(p.Logs(), 2000), tab.Diagnose())
	}
	tab.Navigate("https://dom.test/dom")
	tab.WaitConnected()
	if err := waitTrue(tab, 15*time.Second, `document.getElementById('out').textContent !== ''`); err != nil {
		t.Fatalf("the remixlet did not finish: %v\n%s", err, diagnose())
	}
	var R map[string]any
	raw := e2etest.Eval[string](tab, `document.getElementById('out').textContent`)
	if err := json.Unmarshal([]byte(raw), &R); err != nil {
		t.Fatalf("results %q: %v", raw, err)
	}
	t.Logf("results: %s", raw)
	for _, k := range []string{"create", "insert", "clone", "focus", "scroll", "clickButton", "clickLabel", "clickHash", "addStyle"} {
		if R[k] != "ok" && R[k] != nil {
			t.Errorf("%s: %v", k, R[k])
		}
	}
	for k, want := range map[string]string{
		"createRefused": "element <script> refused", "createIframe": "element <iframe> refused",
		"createOnclick": "on*", "createClobber": "shadow document.cookie",
		"addStyleRefused": "the stylesheet is refused",
	} {
		if s, _ := R[k].(string); !strings.Contains(s, want) {
			t.Errorf("%s: got %v, want a refusal containing %q", k, R[k], want)
		}
	}
	if left := fmt.Sprint(R["setHTML"]); !strings.Contains(left, "<a onclick>") || !strings.Contains(left, "<script>") || !strings.Contains(left, "<i style>") {
		t.Errorf("setHTML answered %v, want what it left out", R["setHTML"])
	}
	if v := fmt.Sprint(R["clonePassword"]); v != "[ ]" {
		t.Errorf("clone of the password field reads back %v, want both empty", v)
	}
	if rect, _ := R["rect"].(map[string]any); rect == nil || rect["width"] != 120.0 || rect["height"] != 30.0 {
		t.Errorf("rect: %v", R["rect"])
	}
	if s, _ := R["style"].(map[string]any); s == nil || s["color"] != "rgb(0, 128, 0)" || s["width"] != "200px" {
		t.Errorf("style: %v", R["style"])
	}
	if R["styleOne"] != "rgb(0, 128, 0)" {
		t.Errorf("styleOne: %v", R["styleOne"])
	}
	if R["setAttrHref"] != "https://dom.test/page2" {
		t.Errorf("setAttr href: the element has %v, want the resolved https://dom.test/page2", R["setAttrHref"])
	}

	mark := "data-remixlet-" + strings.TrimPrefix(rx.ID, "rx_")[:8]
	checks := map[string]string{
		"created after box, marked":           `document.getElementById('box').nextElementSibling.id === 'made' && document.getElementById('made').hasAttribute('` + mark + `')`,
		"created link resolved":               `document.getElementById('madelink').getAttribute('href') === 'https://dom.test/other?x=1#f'`,
		"created image resolved":              `document.getElementById('madeimg').getAttribute('src') === 'https://dom.test/pic.png'`,
		"data image kept":                     `document.getElementById('dataimg').getAttribute('src').startsWith('data:image/png')`,
		"svg circle in the SVG namespace":     `document.querySelector('#made svg circle').namespaceURI === 'http://www.w3.org/2000/svg'`,
		"insert positions":                    `[...document.querySelectorAll('#list li')].map((e) => e.textContent).join(',') === 'zeroth,before first,first,after first,last'`,
		"clone blanks the password":           `(() => { const c = document.querySelector('#cardcopy input[type=password]'); return c && c.value === '' && !c.hasAttribute('value'); })()`,
		"clone keeps the text field":          `document.querySelector('#cardcopy input[name=nm]').value === 'alice'`,
		"clone strips onclick":                `!document.querySelector('#cardcopy span').hasAttribute('onclick')`,
		"clone keeps the page's image":        `document.querySelector('#cardcopy img').getAttribute('src') === 'https://dom.test/pic.png'`,
		"password clone blank":                `document.getElementById('pwcopy').value === ''`,
		"original password untouched":         `document.getElementById('pw').value === 'hunter2'`,
		"focus":                               `document.body.dataset.focused === 'yes'`,
		"click button":                        `document.body.dataset.btn === 'clicked'`,
		"click label checks the checkbox":     `document.getElementById('chk').checked`,
		"click hash link":                     `location.hash === '#there'`,
		"scrolled":                            `window.scrollY > 1000`,
		"setHTML kept the allowed part":       `document.querySelector('#box b#bold').textContent === 'Sale' && document.querySelector('#box a').getAttribute('href') === 'https://dom.test/sale'`,
		"setHTML stripped handlers":           `!document.querySelector('#box a').hasAttribute('onclick') && !document.querySelector('#box img').hasAttribute('onerror') && document.querySelector('#box img').getAttribute('src') === 'https://dom.test/x' && !document.querySelector('#box script') && !document.querySelector('#box i').hasAttribute('style')`,
		"setHTML nodes marked":                `document.getElementById('bold').hasAttribute('` + mark + `')`,
		"addStyle applied to its own element": `getComputedStyle(document.getElementById('made')).textDecorationLine === 'underline'`,
		// The page's password field is filled (#pw, value="hunter2"): a sheet's rules on page
		// elements are not adopted there (secret8, rx_sheets.js).
		"addStyle's page rule left out":     `getComputedStyle(document.getElementById('title')).textDecorationLine !== 'underline'`,
		"no script ran":                     `window.__pwned === undefined && window.__cardClicked === undefined`,
		"no style or script element made":   `document.querySelectorAll('style, script:not([src])').length === 1`,
		"refused elements were not created": `!document.querySelector('iframe')`,
	}
	for name, cond := range checks {
		if ok := e2etest.Eval[bool](tab, "!!("+cond+")"); !ok {
			t.Errorf("%s: false: %s", name, cond)
		}
	}
	for _, want := range []string{"refused: dom.create: element <script> refused", "refused: dom.addStyle: the stylesheet is refused"} {
		var log string
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if log = remixletLog(t, st, rx.ID); strings.Contains(log, want) || time.Now().After(deadline) {
				break
			}
		}
		if !strings.Contains(log, want) {
			t.Errorf("the log has no %q:\n%s", want, log)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(wit.requests()); n != 0 || sites.HostRequests("witness.test") != 0 {
		t.Errorf("the witness received requests: %v", wit.requests())
	}
	if t.Failed() {
		t.Log(diagnose())
	}
}
