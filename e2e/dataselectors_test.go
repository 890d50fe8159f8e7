package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/store"
)

// data-* value selectors (datasel7). React, Radix and shadcn sites key their widgets on
// data-state, data-side, data-orientation; a remixlet's dom.query, dom.queryAll and dom.waitFor
// may compare those values until a password (or other secret) is typed on the page, and not
// after, for the rest of the document: a page may copy what is typed, or its length, into a
// data-* attribute (rewrite/fieldselectors.go, rx_policy.js fieldSelectorProblem, rx_mirrors.js
// secretOnPage). Stylesheets follow the same rule (secret8, OPEN-ITEMS 120): their rules as
// written are dropped at the first key of a secret, for the rest of the document
// (rx_sheets.js dropPageSheets).

// dataSelSite serves /radix (a Radix-like menu whose trigger and content say data-state="open"
// or "closed", and a sign-in field), /len and /len-control (a sign-in form whose page copies the
// typed password's length into data-len, at once and after a debounce, and its strength into
// data-strength) and
// /filled (a password field the page fills itself at load, as a browser's autofill would, with
// its length copied into data-len); n status paragraphs each.
func dataSelSite(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/radix":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>App</title></head>
<body><h1>App</h1>
<div id="bar" data-orientation="horizontal">
<button id="trigger" type="button" aria-haspopup="menu" aria-expanded="false" data-state="closed">Menu</button>
<div id="menu" role="menu" data-state="closed" data-side="bottom" data-align="start" hidden><div role="menuitem">Settings</div></div>
</div>
<form id="form" onsubmit="return false"><input id="pw" type="password" name="password"></form>
`+statusParagraphs(n)+`
<script>
// As Radix does: the trigger and the content carry data-state, toggled on the person's click.
const trigger = document.getElementById('trigger'), menu = document.getElementById('menu');
trigger.addEventListener('click', () => {
  const open = trigger.dataset.state !== 'open';
  for (const el of [trigger, menu]) el.dataset.state = open ? 'open' : 'closed';
  trigger.setAttribute('aria-expanded', String(open));
  menu.hidden = !open;
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
		case "/len", "/len-control":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in</h1>
<form id="form" onsubmit="return false" data-testid="login">
<input id="user" name="user" value="alice">
<div id="wrap" data-filled="no"><input id="pw" type="password" name="pw"></div>
<span id="meter" data-strength="none"></span>
<button id="signin" type="button" onclick="document.body.dataset.signin = 'clicked'">Sign in</button>
</form>
<div id="pwlen" data-len="0"></div>
<div id="deb" data-dlen="0"></div>
`+statusParagraphs(n)+`
<script>
// The site keeps the typed password's length and strength in data attributes for its styles;
// and, for a preview, a copy of the length written after a debounce (later than the key's task).
const pw = document.getElementById('pw');
pw.addEventListener('input', () => {
  document.getElementById('pwlen').dataset.len = String(pw.value.length);
  document.getElementById('wrap').dataset.filled = pw.value ? 'yes' : 'no';
  document.getElementById('meter').dataset.strength = pw.value.length < 8 ? 'weak' : 'strong';
});
let timer = 0;
pw.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => { document.getElementById('deb').dataset.dlen = String(pw.value.length); }, 300); });
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
		case "/filled":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in</h1>
<form id="form" onsubmit="return false"><input id="pw" type="password" name="pw"></form>
<div id="pwlen" data-len="0"></div>
`+statusParagraphs(n)+`
<script>
// Filled without a key typed (as a password manager does), its length copied at once.
const pw = document.getElementById('pw');
pw.value = 'hunter2';
document.getElementById('pwlen').dataset.len = String(pw.value.length);
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
}

// TestRemixletDataStateQueriesWorkUntilASecretIsTyped: on a Radix-like page a remixlet finds the
// open menu by [data-state="open"] (dom.query, dom.queryAll, and a dom.waitFor the person's click
// answers); once the person typed a password on the page, such a query is refused with words that
// say why, while presence tests and test ids still work. Its style.css rule on [data-state="open"]
// outlines the open menu until the typing, and not after it (the sheet as written is dropped at
// the first key).
func TestRemixletDataStateQueriesWorkUntilASecretIsTyped(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"app.test": dataSelSite(1), "witness.test": wit})
	c := []policyCase{{name: "radix menu", style: `[data-state="open"][role="menu"] { outline: 1px solid rgb(1, 2, 3) }`,
		body: `const before = [];
before.push(!!(await dom.query('#trigger[data-state="closed"]')));
before.push((await dom.queryAll('[data-orientation="horizontal"] [data-state^="clo"]')).length);
const open = await dom.waitFor('[role="menu"][data-state="open"][data-side="bottom"]', { timeout: 60000 });
before.push(!!open, (await dom.queryAll('[data-state="open"]')).length);
await rmx.storage.set('before', JSON.stringify(before));
await dom.waitFor('#go', { timeout: 60000 });
const after = [];
for (const sel of ['[data-state="open"]', '[data-state]', '#bar[data-orientation]']) {
  try { after.push(String((await dom.queryAll(sel)).length)); } catch (e) { after.push('refused: ' + e.message); }
}
await rmx.storage.set('after', JSON.stringify(after));`}}
	rxs := h.addPolicy(c, "https://app.test/radix*")
	tab := h.tab
	tab.Navigate("https://app.test/radix")
	tab.WaitConnected()
	tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	time.Sleep(1500 * time.Millisecond) // the remixlet reaches its wait
	personClick(t, tab, "#trigger")
	var before []any
	if v := h.waitStored(rxs[0], "before", "", 20*time.Second); json.Unmarshal([]byte(v), &before) != nil || len(before) != 4 {
		t.Fatalf("the remixlet stored %q before the typing\n%s", v, h.diagnose(rxs[0]))
	}
	if got, want := jsonText(before), `[true,2,true,2]`; got != want {
		t.Errorf("data-state queries before anything was typed: %s, want %s (closed trigger, two closed parts of the horizontal bar, the open menu waited for, two open parts)\n%s", got, want, h.diagnose(rxs[0]))
	}
	outline := `getComputedStyle(document.getElementById('menu')).outlineColor`
	if col := e2etest.Eval[string](tab, outline); col != "rgb(1, 2, 3)" {
		t.Errorf("before the typing the style.css rule on [data-state=\"open\"] did not apply to the open menu (outline %s)\n%s", col, h.diagnose(rxs[0]))
	}
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pw').value === '`+rtFieldsPassword+`'`)
	h.rtFieldsGo(c, rxs)
	var after []string
	if v := h.storedString(rxs[0], "after"); json.Unmarshal([]byte(v), &after) != nil || len(after) != 3 {
		t.Fatalf("the remixlet stored %q after the typing\n%s", v, h.diagnose(rxs[0]))
	}
	if !regexp.MustCompile(`^refused: .*may not compare the value of attribute data-state .*only until a password or other secret is typed on the page`).MatchString(after[0]) {
		t.Errorf(`[data-state="open"] after a password was typed: %q, want refused, saying why`, after[0])
	}
	if after[1] != "2" || after[2] != "1" {
		t.Errorf("presence tests after the typing: %q, %q, want 2 and 1", after[1], after[2])
	}
	if col := e2etest.Eval[string](tab, outline); col == "rgb(1, 2, 3)" {
		t.Errorf("the style.css rule on [data-state=\"open\"] still applies after the typing: the sheet as written must be dropped at the first key")
	}
}

// dataSelAttackCases try to learn the typed password's length from the page's data-* copies of
// it; each stores what its calls received under "read".
var dataSelAttackCases = []policyCase{
	// Started before the typing, with a control that the same oracle answers then.
	{name: "a wait on the length pending when typing starts", body: `const before = !!(await dom.query('#pwlen[data-len="0"]'));
const got = [];
for (const sel of ['#pwlen[data-len="7"]', '#meter[data-strength="weak"]', '#wrap[data-filled="yes"]', '#deb[data-dlen="7"]']) {
  got.push(dom.waitFor(sel, { timeout: 60000 }).then(() => 'matched ' + sel, (e) => 'refused: ' + e.message));
}
await rmx.storage.set('read', JSON.stringify([String(before)].concat(await Promise.all(got))));`},
	// After the typing: every length from 0 to 12, in every spelling.
	{name: "the length by dom.query after the typing", body: `await dom.waitFor('#go', { timeout: 60000 });
const out = [];
for (const tpl of ['#pwlen[data-len="%"]', 'body:has(#pwlen[data-len="%"]) h1', ':is(#pwlen)[DATA-LEN="%" i]', '[*|data-len="%"]', '#deb[data-dlen="%"]', '#deb[data-dlen^="%"]']) {
  for (let n = 0; n <= 12; n++) {
    const sel = tpl.split('%').join(String(n));
    try { out.push([sel, (await dom.queryAll(sel)).length > 0 ? 'hit' : 'miss']); } catch (e) { out.push([sel, 'refused: ' + e.message.split(sel).join('SEL')]); }
  }
}
try { out.push(['waitFor', 'matched ' + !!(await dom.waitFor('#pwlen[data-len="7"]', { timeout: 2000 }))]); } catch (e) { out.push(['waitFor', 'refused: ' + e.message]); }
await rmx.storage.set('read', JSON.stringify(out));`},
	// What a legitimate remixlet does on the page still works after the typing.
	{name: "a legitimate remixlet", body: `const out = [!!(await dom.query('#pwlen[data-len="0"]'))];
await dom.waitFor('#go', { timeout: 60000 });
out.push(!!(await dom.query('form[data-testid="login"] input[name^="us"]')), await dom.attr(await dom.query('#user'), 'name'));
await rmx.storage.set('read', JSON.stringify(out));`},
}

// TestRedteamDataSelectorsTellNothingAfterTyping: the page copies the typed password's length
// (and strength, and a debounced copy the page agent's watch does not see) into data-*
// attributes; a remixlet that compared data-* values freely before the typing learns nothing of
// the length after it: a wait pending when the person starts typing ends refused, and every
// query of every length, in every spelling, is refused with the same words whatever the length.
// A page that fills the field itself (no key typed) is covered as well.
func TestRedteamDataSelectorsTellNothingAfterTyping(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": dataSelSite(len(dataSelAttackCases)), "witness.test": wit})
	rxs := h.addPolicy(dataSelAttackCases, "https://fields.test/len*")
	filled := h.addPolicy([]policyCase{{name: "a length the page filled in", body: `const out = [];
for (const sel of ['#pwlen[data-len="7"]', '#pwlen[data-len="0"]']) {
  try { out.push(String(!!(await dom.query(sel)))); } catch (e) { out.push('refused: ' + e.message.split(sel).join('SEL')); }
}
await rmx.storage.set('read', JSON.stringify(out));`}}, "https://fields.test/filled*")
	h.tab.Navigate("https://fields.test/len")
	h.tab.WaitConnected()
	h.tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	time.Sleep(1500 * time.Millisecond) // the waits are pending
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pwlen').dataset.len === '7'`)
	// The debounced copy is written 300 ms after the last key, later than the watch looks.
	if err := waitTrue(h.tab, 10*time.Second, `document.getElementById('deb').dataset.dlen === '7'`); err != nil {
		t.Fatalf("the page's debounced copy never held the length: %v", err)
	}
	h.rtFieldsGo(dataSelAttackCases, rxs)
	read := func(rx store.Remixlet, name string, into any) {
		v := h.storedString(rx, "read")
		t.Logf("%s: read %s", name, head(v, 600))
		if err := json.Unmarshal([]byte(v), into); err != nil {
			t.Fatalf("%s: stored %q\n%s", name, v, h.diagnose(rx))
		}
	}
	var waits []string
	read(rxs[0], dataSelAttackCases[0].name, &waits)
	if len(waits) != 5 || waits[0] != "true" {
		t.Fatalf("%s: %q, want the control true (the oracle answered before the typing) and four waits", dataSelAttackCases[0].name, waits)
	}
	for _, w := range waits[1:] {
		if !strings.HasPrefix(w, "refused: ") || !strings.Contains(w, "until a password or other secret is typed") {
			t.Errorf("%s: %q, want the wait refused when the typing started", dataSelAttackCases[0].name, w)
		}
	}
	var queries [][2]string
	read(rxs[1], dataSelAttackCases[1].name, &queries)
	if len(queries) != 6*13+1 {
		t.Fatalf("%s: %d results, want %d", dataSelAttackCases[1].name, len(queries), 6*13+1)
	}
	answers := map[string]bool{}
	for _, q := range queries {
		if !strings.HasPrefix(q[1], "refused: ") {
			t.Errorf("%s: %s answered %q: the query is an oracle of the typed password's length", dataSelAttackCases[1].name, q[0], q[1])
		}
		answers[q[1]] = true
	}
	// One refusal per attribute (data-len, data-dlen) and one for the wait: the words do not
	// change with the length asked about.
	if len(answers) > 3 {
		t.Errorf("%s: %d different answers, want at most 3 (they must not depend on the length): %v", dataSelAttackCases[1].name, len(answers), answers)
	}
	var legit []any
	read(rxs[2], dataSelAttackCases[2].name, &legit)
	if got, want := jsonText(legit), `[true,true,"user"]`; got != want {
		t.Errorf("%s: %s, want %s: the rule stopped a legitimate remixlet\n%s", dataSelAttackCases[2].name, got, want, h.diagnose(rxs[2]))
	}
	if log := remixletLog(t, h.st, rxs[1].ID); strings.Contains(log, "hit") {
		t.Errorf("the attacking remixlet's log mentions a hit:\n%s", head(log, 2000))
	}

	// A password the page filled in itself, no key typed: no data-* value may be compared while
	// the field holds it.
	h.tab.Navigate("https://fields.test/filled")
	h.tab.WaitConnected()
	if err := waitTrue(h.tab, 20*time.Second, `document.getElementById('s-0').textContent === 'done'`); err != nil {
		t.Fatalf("the remixlet on the filled page did not finish: %v\n%s", err, h.diagnose(filled[0]))
	}
	var got []string
	read(filled[0], "a length the page filled in", &got)
	if len(got) != 2 || !strings.HasPrefix(got[0], "refused: ") || got[0] != got[1] {
		t.Errorf("queries on a length the page filled in: %q, want both refused alike", got)
	}
}

// jsonText is v as JSON.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// dataSelProbes is a remixlet script that puts 13 full-page probes on the page (.rx-p0 ...
// .rx-p12, and .rx-pc), each storing its name under "clicked" when the person's click lands on
// it; its style.css decides which, if any, is shown.
const dataSelProbes = `for (const n of ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', 'c']) {
  const el = await dom.create({ tag: 'div', attrs: { class: 'rx-probe rx-p' + n } });
  await dom.insert(await dom.query('body'), el);
  await dom.on(el, 'click', () => { rmx.storage.set('clicked', n); });
}
await rmx.storage.set('ready', 'yes');
await dom.waitFor('#end', { timeout: 60000 });`

// dataSelProbeSheet shows probe n when the page's length mirror says n: rules that load nothing,
// so a stylesheet rule allowing data-* comparisons "when nothing loads" would keep them.
func dataSelProbeSheet(control string) string {
	var b strings.Builder
	b.WriteString(".rx-probe { display: none; position: fixed; inset: 0; z-index: 2147483647 }\n")
	for n := range 13 {
		fmt.Fprintf(&b, "body:has(#pwlen[data-len=\"%d\"]) .rx-p%d { display: block }\n", n, n)
	}
	b.WriteString(control)
	return b.String()
}

// TestRedteamSheetOnAMirrorTakesNoClick: why a stylesheet's rules on data-* values are dropped at
// the first key of a secret (secret8; datasel7 refused them). A sheet rule keyed on the page's
// length mirror can show one of thirteen full-page elements of the remixlet, and the person's
// next click (on "Sign in") lands on it: its dom.on('click') learns the length, with no layout
// read and no load. The control shows the channel with a comparable attribute (the form's
// data-testid): the person's click reaches the remixlet's probe. On the mirror the rules apply
// before the typing (probe 0 is shown) and are gone after its first key: the click reaches the
// page's button.
func TestRedteamSheetOnAMirrorTakesNoClick(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": dataSelSite(1), "witness.test": wit})
	control := h.addPolicy([]policyCase{{name: "probe on a test id", body: dataSelProbes,
		style: dataSelProbeSheet(`form[data-testid="login"] ~ .rx-pc, body:has(form[data-testid="login"]) .rx-pc { display: block }`)}}, "https://fields.test/len-control*")
	attack := h.addPolicy([]policyCase{{name: "probe on the length mirror", body: dataSelProbes, style: dataSelProbeSheet("")}}, "https://fields.test/len")
	clickSignIn := func(rx store.Remixlet) {
		t.Helper()
		if v := h.waitStored(rx, "ready", "yes", 20*time.Second); v != "yes" {
			t.Fatalf("the probes were not put on the page\n%s", h.diagnose(rx))
		}
		personClick(t, h.tab, "#signin")
	}
	h.tab.Navigate("https://fields.test/len-control")
	h.tab.WaitConnected()
	h.tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	clickSignIn(control[0])
	if v := h.waitStored(control[0], "clicked", "c", 10*time.Second); v != "c" {
		t.Fatalf("control: the person's click reached probe %q, want c (the sheet's rule on the test id): the channel below is not shown\n%s", v, h.diagnose(control[0]))
	}

	if v := h.storedString(attack[0], "ready"); v != "" {
		t.Fatalf("the attacking remixlet ran on the control's page: the control proves nothing")
	}

	h.tab.Navigate("https://fields.test/len")
	h.tab.WaitConnected()
	h.tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	if v := h.waitStored(attack[0], "ready", "yes", 20*time.Second); v != "yes" {
		t.Fatalf("the probes were not put on the page\n%s", h.diagnose(attack[0]))
	}
	shown := `[...document.querySelectorAll('.rx-probe')].filter((e) => getComputedStyle(e).display !== 'none').map((e) => e.className).join(',')`
	if err := waitTrue(h.tab, 10*time.Second, shown+` === 'rx-probe rx-p0'`); err != nil {
		t.Fatalf("before the typing the sheet's rules on data-len show %q, want probe 0 (the rules are kept until a secret is typed)\n%s",
			e2etest.Eval[string](h.tab, shown), h.diagnose(attack[0]))
	}
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pwlen').dataset.len === '7'`)
	clickSignIn(attack[0])
	if err := waitTrue(h.tab, 10*time.Second, `document.body.dataset.signin === 'clicked'`); err != nil {
		t.Errorf("the person's click on Sign in did not reach the page's button: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	if v := h.storedString(attack[0], "clicked"); v != "" {
		t.Errorf("the person's click landed on probe %q: the remixlet's sheet told it the password's length", v)
	}
}
