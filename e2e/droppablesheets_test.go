package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/store"
)

// The pointer channel (OPEN-ITEMS 118). A remixlet sheet keyed on page state (body:has(#wrap.s3)
// .rx-p3 { display: block }) shows one of several full-page elements of the remixlet; the
// person's click after typing a password (on "Sign in") lands on the one the page's strength
// class chose, and the remixlet's dom.on('click') learns the level: no layout read, no load, no
// network permission. Since secret8 every remixlet sheet is in two: the rules as written
// ("droppable") and a copy of each whose every compound selector is restricted to elements the
// remixlet made ("own", rewrite/ownsheet.go). At the first key of a secret on the page the page
// agent empties the droppable sheets for the rest of the document (rx_sheets.js
// dropPageSheets): the remixlet's own UI keeps its styles, its rules on the page go.

// strengthSite serves /strength and /strength-id: a sign-in form whose page writes the typed
// password's strength into #wrap's class (s0 ... s4) and into the class of the element it finds
// by the id lvl, a banner a remixlet may hide, and n status paragraphs.
func strengthSite(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/strength" && r.URL.Path != "/strength-id" {
			http.NotFound(w, r)
			return
		}
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in</h1>
<div id="banner">Try our app</div>
<form id="form" onsubmit="return false">
<div id="wrap" class="meter s0"><input id="pw" type="password" name="pw"></div>
<button id="signin" type="button" onclick="document.body.dataset.signin = 'clicked'">Sign in</button>
</form>
<div id="lvl" class="s0"></div>
`+statusParagraphs(n)+`
<script>
// The site shows the strength with a class on the field's wrapper, and on #lvl.
const pw = document.getElementById('pw'), wrap = document.getElementById('wrap');
pw.addEventListener('input', () => {
  const s = 's' + Math.min(4, Math.floor(pw.value.length / 2));
  wrap.className = 'meter ' + s;
  document.getElementById('lvl').className = s;
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
	})
}

// strengthProbeSheet shows probe n while the element that rule names has the class sn.
func strengthProbeSheet(rule string) string {
	var b strings.Builder
	b.WriteString(".rx-probe { display: none; position: fixed; inset: 0; z-index: 2147483647 }\n")
	for n := range 5 {
		fmt.Fprintf(&b, rule+" { display: block }\n", n, n)
	}
	return b.String()
}

// probesShown lists the classes of the probes shown.
const probesShown = `[...document.querySelectorAll('.rx-probe')].filter((e) => getComputedStyle(e).display !== 'none').map((e) => e.className).join(',')`

// openStrength opens path of strengthSite and waits until rx said "ready".
func openStrength(t *testing.T, h *hostileWorld, path string, rx store.Remixlet) {
	t.Helper()
	h.tab.Navigate("https://fields.test" + path)
	h.tab.WaitConnected()
	h.tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	if v := h.waitStored(rx, "ready", "yes", 20*time.Second); v != "yes" {
		t.Fatalf("the remixlet did not get ready on %s\n%s", path, h.diagnose(rx))
	}
}

// clickTellsNothing types the password, then clicks Sign in as the person, and fails t if a probe
// of rx is shown or takes the click.
func clickTellsNothing(t *testing.T, h *hostileWorld, rx store.Remixlet) {
	t.Helper()
	tab := h.tab
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('wrap').className === 'meter s3'`)
	if got := e2etest.Eval[string](tab, probesShown); got != "" {
		t.Errorf("after the typing the remixlet's probes %q are shown: its rules on the page's state outlived the first key", got)
	}
	personClick(t, tab, "#signin")
	if err := waitTrue(tab, 10*time.Second, `document.body.dataset.signin === 'clicked'`); err != nil {
		t.Errorf("the person's click on Sign in did not reach the page's button: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	if v := h.storedString(rx, "clicked"); v != "" {
		t.Errorf("the person's click landed on probe %q: the remixlet's sheet told it the password's strength", v)
	}
}

// TestRedteamSheetOnAClassMirrorTakesNoClickAfterTheFirstKey: the remixlet's sheet keyed on the
// page's strength class shows its probe before anything is typed (the rule applies to page state
// then: the control); once the person typed a password, no probe is shown and the person's click
// on Sign in reaches the page's button, not the remixlet. A remixlet that makes its own #lvl
// before the page's, so that the page writes the strength into the remixlet's element, gets
// nothing either: the element loses its own mark when the page writes into it.
func TestRedteamSheetOnAClassMirrorTakesNoClickAfterTheFirstKey(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": strengthSite(1), "witness.test": wit})
	attack := h.addPolicy([]policyCase{{name: "probe on the strength class", body: dataSelProbes,
		style: strengthProbeSheet("body:has(#wrap.s%d) .rx-p%d")}}, "https://fields.test/strength")
	byID := h.addPolicy([]policyCase{{name: "probe on its own element the page writes", body: `const lvl = await dom.create({ tag: 'div', attrs: { id: 'lvl' } });
await dom.insert(await dom.query('body'), lvl, 'prepend');
` + dataSelProbes, style: strengthProbeSheet("#lvl.s%d ~ .rx-p%d")}}, "https://fields.test/strength-id")
	tab := h.tab
	openStrength(t, h, "/strength", attack[0])
	if err := waitTrue(tab, 10*time.Second, probesShown+` === 'rx-probe rx-p0'`); err != nil {
		t.Fatalf("control: before any typing the sheet's rule on the page's class shows %q, want probe 0: the channel below is not shown\n%s",
			e2etest.Eval[string](tab, probesShown), h.diagnose(attack[0]))
	}
	clickTellsNothing(t, h, attack[0])

	openStrength(t, h, "/strength-id", byID[0])
	clickTellsNothing(t, h, byID[0])
	if got := e2etest.Eval[string](tab, `document.body.firstElementChild.id + ' ' + document.body.firstElementChild.className`); got != "lvl s3" {
		t.Errorf("the page wrote its strength into %q, want the remixlet's #lvl (\"lvl s3\"): the case above proves nothing", got)
	}
}

// ownStylesBody builds a small UI of the remixlet's own (a bar, a button, HTML set into a span of
// its own) and adds two pieces of style: one on its own elements, one keyed on the page's
// strength class.
const ownStylesBody = `const bar = await dom.create({ tag: 'div', attrs: { class: 'rx-bar', id: 'rxbar' }, children: [
  { tag: 'button', attrs: { class: 'rx-btn', id: 'rxbtn', type: 'button' }, text: 'Go' },
  { tag: 'span', attrs: { id: 'rxhtml' } }] });
await dom.insert(await dom.query('body'), bar);
await dom.setHTML(await dom.query('#rxhtml'), '<b class="deep"><i id="rxdeep">deep</i></b>');
const copy = await dom.clone(await dom.query('h1'), true);
await dom.setAttr(copy, 'id', 'rxclone');
await dom.insert(bar, copy);
await dom.addStyle('.rx-bar .rx-btn { text-decoration-line: underline }');
await dom.addStyle('body:has(#wrap.s3) .rx-bar { outline-color: rgb(99, 0, 0) }');
await rmx.storage.set('ready', 'yes');
await dom.waitFor('#end', { timeout: 60000 });`

// ownStylesSheet styles the remixlet's own elements, and hides the page's banner.
const ownStylesSheet = `.rx-bar { outline: 3px solid rgb(1, 2, 3) }
.rx-bar > .rx-btn { color: rgb(4, 5, 6) }
.rx-bar .deep i { color: rgb(7, 8, 9) }
.rx-bar > h1 { color: rgb(16, 17, 18) }
.rx-bar:has(> .rx-btn:not(:active)) { border-top: 2px solid rgb(10, 11, 12) }
@media (min-width: 1px) { .rx-btn { background-color: rgb(13, 14, 15) } }
#banner { display: none }
`

// ownStylesRead reads the styles the sheet above and the pieces decide.
const ownStylesRead = `JSON.stringify([
  getComputedStyle(document.getElementById('rxbar')).outlineColor,
  getComputedStyle(document.getElementById('rxbtn')).color,
  getComputedStyle(document.getElementById('rxdeep')).color,
  getComputedStyle(document.getElementById('rxbar')).borderTopColor,
  getComputedStyle(document.getElementById('rxbtn')).backgroundColor,
  getComputedStyle(document.getElementById('rxbtn')).textDecorationLine,
  getComputedStyle(document.getElementById('rxclone')).color,
  getComputedStyle(document.getElementById('banner')).display])`

// TestRemixletOwnStylesOutliveTheFirstKey: a remixlet's rules on its own elements (descendants,
// :has() of its own, @media, HTML it set, a clone of a page element, a dom.addStyle piece) style them before and after the
// person types a password; its rules on the page (the banner it hides, a piece keyed on the
// page's class) are dropped at the first key (the cost: the banner shows again until a reload).
func TestRemixletOwnStylesOutliveTheFirstKey(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": strengthSite(1), "witness.test": wit})
	rx := h.addPolicy([]policyCase{{name: "own UI", body: ownStylesBody, style: ownStylesSheet}}, "https://fields.test/strength")
	tab := h.tab
	openStrength(t, h, "/strength", rx[0])
	own := `["rgb(1, 2, 3)","rgb(4, 5, 6)","rgb(7, 8, 9)","rgb(10, 11, 12)","rgb(13, 14, 15)","underline","rgb(16, 17, 18)",`
	if err := waitTrue(tab, 10*time.Second, ownStylesRead+` === '`+own+`"none"]'`); err != nil {
		t.Fatalf("before the typing: styles %s, want %s\"none\"]\n%s", e2etest.Eval[string](tab, ownStylesRead), own, h.diagnose(rx[0]))
	}
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('wrap').className === 'meter s3'`)
	if got, want := e2etest.Eval[string](tab, ownStylesRead), own+`"block"]`; got != want {
		t.Errorf("after the typing: styles %s, want %s (the remixlet's own UI styled as before, the page's banner shown again, the piece keyed on the page's class dropped)", got, want)
	}
}

// clonedMirrorSheet shows probe n while an element before the probes has data-len n.
func clonedMirrorSheet() string {
	var b strings.Builder
	b.WriteString(".rx-probe { display: none; position: fixed; inset: 0; z-index: 2147483647 }\n")
	for n := range 13 {
		fmt.Fprintf(&b, "[data-len=\"%d\"] ~ .rx-p%d { display: block }\n", n, n)
	}
	return b.String()
}

// TestRedteamSheetOnAClonedMirrorTakesNoClick: a remixlet that clones the page's length mirror
// (#pwlen, data-len written at each key) into an element of its own, again and again, must not
// get the clone's data-len into its own sheet's copy: a query may not compare a data-* value once
// a secret is typed and dom.attr reads the clone's mirror empty, so the own copy's
// [data-len="7"] ~ .rx-p7 would tell the length by the person's click. Before the typing probe 0
// is shown (the droppable sheet, on the page's own #pwlen: the control).
func TestRedteamSheetOnAClonedMirrorTakesNoClick(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": dataSelSite(1), "witness.test": wit})
	rx := h.addPolicy([]policyCase{{name: "probe on a clone of the mirror", body: `const src = await dom.query('#pwlen');
(async () => {
  let last = null;
  for (let i = 0; i < 300; i++) {
    const copy = await dom.clone(src);
    await dom.insert(src, copy, 'after');
    if (last) { await dom.remove(last); }
    last = copy;
    await new Promise((r) => setTimeout(r, 100));
  }
})();
` + dataSelProbes, style: clonedMirrorSheet()}}, "https://fields.test/len")
	h.tab.Navigate("https://fields.test/len")
	h.tab.WaitConnected()
	h.tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	if v := h.waitStored(rx[0], "ready", "yes", 20*time.Second); v != "yes" {
		t.Fatalf("the probes were not put on the page\n%s", h.diagnose(rx[0]))
	}
	if err := waitTrue(h.tab, 10*time.Second, probesShown+` === 'rx-probe rx-p0'`); err != nil {
		t.Fatalf("control: before the typing the sheet shows %q, want probe 0\n%s", e2etest.Eval[string](h.tab, probesShown), h.diagnose(rx[0]))
	}
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pwlen').dataset.len === '7'`)
	if err := waitTrue(h.tab, 5*time.Second, `[...document.querySelectorAll('[data-len="7"]')].length === 2`); err != nil {
		t.Fatalf("no clone of the mirror holding the length next to the page's: the case proves nothing: %v", err)
	}
	if got := e2etest.Eval[string](h.tab, probesShown); got != "" {
		t.Errorf("after the typing the remixlet's probes %q are shown: its own sheet read the clone of the page's mirror", got)
	}
	personClick(t, h.tab, "#signin")
	if err := waitTrue(h.tab, 10*time.Second, `document.body.dataset.signin === 'clicked'`); err != nil {
		t.Errorf("the person's click on Sign in did not reach the page's button: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	if v := h.storedString(rx[0], "clicked"); v != "" {
		t.Errorf("the person's click landed on probe %q: the remixlet's own sheet told it the password's length", v)
	}
}
