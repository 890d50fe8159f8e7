package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/remixproxy/remixproxy/agent/scripted"
	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/store"
)

// What the page writes while a typed password is held (mirrors7, OPEN-ITEMS 107 and 111). A
// sign-in page writes the typed password's length and strength 300 ms after the last key (a
// debounce, later than the key's task the fields6 watch looked at): into data-dlen and
// aria-label of #deb, a "7 / 64" counter and a strength label. While the password is in its
// field (and a grace after it is emptied) the page agent counts every attribute (but class) and
// text the page writes as a mirror: a remixlet's dom.attr and dom.text read it blank, and the
// agent's capture_page, outline and query show it to the model as "[hidden while a password is
// typed]" (panel/pageagent/rx_mirrors.js).

// lateMirrorsSite serves /late: the sign-in page above, with a greeting its script writes at
// load (before any typing) and n status paragraphs.
func lateMirrorsSite(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/late" {
			http.NotFound(w, r)
			return
		}
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in</h1>
<p id="intro"></p>
<form id="form" onsubmit="return false" data-testid="login">
<input id="user" name="user" value="alice">
<input id="pw" type="password" name="pw">
<div id="meterbox"><span id="counter">0 / 64</span> <span id="strength">Empty</span></div>
</form>
<div id="deb" data-dlen="0" aria-label="0 characters">length</div>
<input id="lenbox" readonly value="0">
<p id="was"></p>
`+statusParagraphs(n)+`
<script>
const intro = document.getElementById('intro');
intro.textContent = 'Welcome back, alice';
intro.dataset.greeted = 'yes';
// The length and strength, shown 300 ms after the last key.
const pw = document.getElementById('pw'), deb = document.getElementById('deb');
let timer = 0;
pw.addEventListener('input', () => {
  clearTimeout(timer);
  const n = pw.value.length;
  timer = setTimeout(() => {
    deb.dataset.dlen = String(n);
    deb.setAttribute('aria-label', n + ' characters');
    document.getElementById('counter').textContent = n + ' / 64';
    document.getElementById('strength').textContent = n < 8 ? 'Weak' : 'Strong';
    document.getElementById('lenbox').value = String(n);
    document.body.dataset.debounced = String(n);
  }, 300);
});
// After a reset (which fires no input event), a note with the length, 300 ms later.
document.getElementById('form').addEventListener('reset', () => {
  const n = pw.value.length;
  setTimeout(() => { document.getElementById('was').dataset.n = String(n); document.getElementById('was').textContent = 'You had typed ' + n + ' characters'; }, 300);
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
	})
}

// openLateMirrors opens /late (lateMirrorsSite) with cases' remixlets on it, its script run.
func openLateMirrors(t *testing.T, cases []policyCase) (*hostileWorld, []store.Remixlet) {
	return openWithRemixlets(t, "fields.test", lateMirrorsSite(1), "/late", cases)
}

// openWithRemixlets opens https://host+path (served by handler) with cases' remixlets on it, its
// script run.
func openWithRemixlets(t *testing.T, host string, handler http.Handler, path string, cases []policyCase) (*hostileWorld, []store.Remixlet) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{host: handler, "witness.test": wit})
	rxs := h.addPolicy(cases, "https://"+host+path+"*")
	h.tab.Navigate("https://" + host + path)
	h.tab.WaitConnected()
	h.tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	return h, rxs
}

// lateMirrorsReader reads the page's late mirrors before and after the typing, and, after it,
// what the page wrote before the typing and what it wrote itself while the password was held.
var lateMirrorsReader = policyCase{name: "reads the late mirrors", body: `const q = (s) => dom.query(s);
const reads = async () => {
  const deb = await q('#deb');
  return [await dom.attr(deb, 'data-dlen'), await dom.attr(deb, 'aria-label'), await dom.text(await q('#counter')),
    await dom.text(await q('#strength')), (await dom.text(await q('#meterbox'))).trim(), (await dom.text(await dom.clone(await q('#meterbox'), true))).trim()];
};
await rmx.storage.set('before', JSON.stringify(await reads()));
await dom.waitFor('#go', { timeout: 60000 });
const after = await reads();
const mine = await dom.create({ tag: 'span', text: 'mine' });
await dom.insert(await q('#intro'), mine, 'after');
await dom.setText(mine, 'mine, rewritten');
await dom.setAttr(await q('#user'), 'data-note', 'noted');
const control = [await dom.text(await q('#intro')), await dom.attr(await q('#intro'), 'data-greeted'), await dom.text(mine), await dom.attr(await q('#user'), 'data-note')];
await rmx.storage.set('read', JSON.stringify({ after, control }));
await dom.waitFor('#go2', { timeout: 60000 });
const deb = await q('#deb');
await rmx.storage.set('reset', JSON.stringify([await dom.attr(deb, 'data-dlen'), await dom.text(await q('#counter')),
  await dom.text(await q('#was')), await dom.attr(await q('#was'), 'data-n'), await dom.text(await q('#later')), await dom.attr(await q('#user'), 'data-x')]));`}

// TestRedteamLateMirrorsReadBlank: a remixlet reads the page's debounced length and strength
// mirrors before the typing (the markup's values) and blank after it, also through a clone and
// the element around them; what the page wrote before the typing, and what the remixlet wrote
// itself while the password was held, still read back. A length written after a form reset
// emptied the field (no input event) still reads blank; what the page writes once the field has
// been empty for the grace reads back.
func TestRedteamLateMirrorsReadBlank(t *testing.T) {
	cases := []policyCase{lateMirrorsReader}
	h, rxs := openLateMirrors(t, cases)
	v := h.waitStored(rxs[0], "before", "", 20*time.Second)
	if want := `["0","0 characters","0 / 64","Empty","0 / 64 Empty","0 / 64 Empty"]`; v != want {
		t.Fatalf("before the typing the remixlet read %s, want %s (the oracle must answer then, or the test proves nothing)\n%s", v, want, h.diagnose(rxs[0]))
	}
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pw').value === '`+rtFieldsPassword+`'`)
	if err := waitTrue(h.tab, 10*time.Second, `document.body.dataset.debounced === '7' && document.getElementById('counter').textContent === '7 / 64'`); err != nil {
		t.Fatalf("the page's debounced mirrors were never written: %v", err)
	}
	e2etest.Eval[any](h.tab, `document.body.append(Object.assign(document.createElement('i'), { id: 'go' }))`)
	h.waitStored(rxs[0], "read", "", 20*time.Second)
	// One more key, and the form reset before the page's debounce writes the new length (8):
	// the field is empty (no input event), the copy is written after; the watch ends only
	// after a grace. What the page writes later reads back.
	ctx, cancel := context.WithTimeout(h.tab.Context(), 15*time.Second)
	err := chromedp.Do(ctx, chromedp.KeyEvent("x"))
	cancel()
	if err != nil {
		t.Fatalf("the last key: %v", err)
	}
	e2etest.Eval[any](h.tab, `document.getElementById('form').reset()`)
	if err := waitTrue(h.tab, 10*time.Second, `document.body.dataset.debounced === '8' && document.getElementById('was').dataset.n === '8' && document.getElementById('pw').value === ''`); err != nil {
		t.Fatalf("the page's debounced copy after the reset was never written: %v", err)
	}
	time.Sleep(3500 * time.Millisecond) // past the grace (2 s) and the look at the fields (every 0.5 s)
	e2etest.Eval[any](h.tab, `document.body.append(Object.assign(document.createElement('p'), { id: 'later', textContent: 'Signed out' })),
document.getElementById('user').dataset.x = 'later',
document.body.append(Object.assign(document.createElement('i'), { id: 'go2' }))`)
	h.rtFieldsGo(cases, rxs)
	if v := h.storedString(rxs[0], "reset"); v != `["","","","","Signed out","later"]` {
		t.Errorf("after the reset the remixlet read %s, want [\"\",\"\",\"\",\"\",\"Signed out\",\"later\"]: the lengths written before and after the reset read blank, what the page wrote after the grace reads back", v)
	}
	var got struct{ After, Control []string }
	if s := h.storedString(rxs[0], "read"); json.Unmarshal([]byte(s), &got) != nil {
		t.Fatalf("the remixlet stored %q\n%s", s, h.diagnose(rxs[0]))
	}
	for i, what := range []string{"dom.attr data-dlen", "dom.attr aria-label", "dom.text of the counter", "dom.text of the strength label", "dom.text of the element around them", "dom.text of its clone"} {
		if i >= len(got.After) || got.After[i] != "" {
			t.Errorf("after the typing %s read %q, want \"\": the page wrote it while the password was held", what, got.After)
		}
	}
	if want := []string{"Welcome back, alice", "yes", "mine, rewritten", "noted"}; strings.Join(got.Control, "|") != strings.Join(want, "|") {
		t.Errorf("controls after the typing: %q, want %q (what the page wrote before the typing, and the remixlet's own writes, read back)", got.Control, want)
	}
}

// TestAgentToolsHideLateMirrors: the model's capture_page shows the page's counter and strength
// label before the typing; after the person typed a password, capture_page, outline and query
// show what the page wrote meanwhile (the "7 / 64" counter, "Weak", "7 characters", and query the
// length written into #lenbox's value) as "[hidden while a password is typed]", and still the greeting the page wrote before the typing;
// the model's query #deb[data-dlen="7"] finds nothing (its control, "0" before the typing, one).
func TestAgentToolsHideLateMirrors(t *testing.T) {
	script := `{"turns": [
		{"tool_calls": [{"name": "capture_page"}]},
		{"tool_calls": [{"name": "query", "arguments": {"selector": "#deb[data-dlen=\"0\"]"}}]},
		{"text": "I read the page."},
		{"tool_calls": [{"name": "capture_page"}]},
		{"tool_calls": [{"name": "outline", "arguments": {"filter": "all"}}]},
		{"tool_calls": [{"name": "query", "arguments": {"selector": "#deb, #counter, #strength, #meterbox, #lenbox"}}]},
		{"tool_calls": [{"name": "query", "arguments": {"selector": "#deb[data-dlen=\"7\"]"}}]},
		{"tool_calls": [{"name": "query", "arguments": {"selector": "body:has(#deb[data-dlen=\"7\"]) h1"}}]},
		{"text": "Done."}
	]}`
	aw, pf, waitRequests := agentOnPage(t, script, "fields.test", lateMirrorsSite(0), "https://fields.test/late") // heldreads_test.go
	tab, model := aw.tab, aw.model
	chat(t, pf, "read this page")
	waitRequests(3)
	time.Sleep(500 * time.Millisecond) // the answer is shown; the chat is idle
	typePassword(t, tab)
	tab.WaitFor(10*time.Second, "the page's debounced mirrors", `document.body.dataset.debounced === '7' && document.getElementById('counter').textContent === '7 / 64'`)
	chat(t, pf, "read it again")
	waitRequests(9)
	reqs := model.Requests()
	result := func(i int) string { return callResult(reqs, i) }
	if got := result(0); !strings.Contains(got, "0 / 64") || !strings.Contains(got, "Empty") {
		t.Fatalf("capture_page before the typing lacks the counter and the label (the test would prove nothing): %s", head(got, 2000))
	}
	if got := result(1); !strings.Contains(got, `"total":1`) {
		t.Fatalf("query #deb[data-dlen=\"0\"] before the typing found nothing (the test would prove nothing): %s", head(got, 2000))
	}
	if got := result(6); !strings.Contains(got, `"total":0`) {
		t.Errorf("query #deb[data-dlen=\"7\"] after the typing: %s, want nothing found: the page wrote the length while the password was held", head(got, 2000))
	}
	if got := result(7); !strings.Contains(got, "query refused: the selector matches the value of [data-dlen] on an element other than the ones it selects") {
		t.Errorf("query body:has(#deb[data-dlen=\"7\"]) h1 after the typing: %s, want refused (the attribute holds what the model may not be told)", head(got, 2000))
	}
	const hidden = "[hidden while a password is typed]"
	for _, c := range []struct {
		name string
		req  int
		want []string
	}{
		{"capture_page", 3, []string{hidden, "Welcome back, alice"}},
		{"outline", 4, []string{hidden, "Welcome back, alice"}},
		{"query", 5, []string{hidden, `"value":"` + hidden + `"`}},
	} {
		got := result(c.req)
		t.Logf("%s after the typing: %s", c.name, head(got, 1500))
		for _, leak := range []string{"7 / 64", "Weak", "7 characters", `"value":"7"`} {
			if strings.Contains(got, leak) {
				t.Errorf("%s after the typing shows %q, written by the page while the password was held: %s", c.name, leak, head(got, 2000))
			}
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s after the typing lacks %q: %s", c.name, w, head(got, 2000))
			}
		}
	}
}

// typePassword types rtFieldsPassword into #pw as the person would (DevTools key events).
func typePassword(t *testing.T, tab *e2etest.Tab) {
	t.Helper()
	e2etest.Eval[any](tab, `document.getElementById('pw').focus()`)
	ctx, cancel := context.WithTimeout(tab.Context(), 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.KeyEvent(rtFieldsPassword)); err != nil {
		t.Fatalf("typing the password: %v", err)
	}
	if !e2etest.Eval[bool](tab, `document.getElementById('pw').value === '`+rtFieldsPassword+`'`) {
		t.Fatalf("the password is not in its field: typing did not work")
	}
}

// callResult is what the model was shown of the call it made in reply to request i of reqs (the
// one tool result of request i+1), or "".
func callResult(reqs []scripted.RecordedRequest, i int) string {
	if i+1 >= len(reqs) {
		return ""
	}
	msgs := reqs[i+1].Messages
	m := msgs[len(msgs)-1]
	if len(m.ToolResults) != 1 {
		return ""
	}
	return m.ToolResults[0].Text
}

// lateValueReader reads the readonly #lenbox's value (the page writes the length into its value
// property, which no observer sees) and #user's before and after the typing.
var lateValueReader = policyCase{name: "reads a value mirror", body: `const reads = async () => [await dom.value(await dom.query('#lenbox')), await dom.value(await dom.query('#user'))];
await rmx.storage.set('before', JSON.stringify(await reads()));
await dom.waitFor('#go', { timeout: 60000 });
await rmx.storage.set('read', JSON.stringify(await reads()));`}

// TestRedteamLateValueMirrorReadsBlank: a sign-in page writes the typed password's length, on a
// debounce, into a readonly input's value property (no attribute changes, so the mirror watch's
// observer sees nothing); a remixlet's dom.value reads it "0" before the typing and blank after,
// while the user name the markup holds still reads back.
func TestRedteamLateValueMirrorReadsBlank(t *testing.T) {
	cases := []policyCase{lateValueReader}
	h, rxs := openLateMirrors(t, cases)
	if v := h.waitStored(rxs[0], "before", "", 20*time.Second); v != `["0","alice"]` {
		t.Fatalf("before the typing the remixlet read %s, want [\"0\",\"alice\"] (the oracle must answer then, or the test proves nothing)\n%s", v, h.diagnose(rxs[0]))
	}
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pw').value === '`+rtFieldsPassword+`'`)
	if err := waitTrue(h.tab, 10*time.Second, `document.getElementById('lenbox').value === '7'`); err != nil {
		t.Fatalf("the page's debounced value mirror was never written: %v", err)
	}
	e2etest.Eval[any](h.tab, `document.body.append(Object.assign(document.createElement('i'), { id: 'go' }))`)
	if v := h.waitStored(rxs[0], "read", "", 20*time.Second); v != `["","alice"]` {
		t.Errorf("after the typing the remixlet read %s, want [\"\",\"alice\"]: the length the page wrote into #lenbox while the password was held reads blank, the user name back\n%s", v, h.diagnose(rxs[0]))
	}
}

// insertedMirrorsSite serves /inserted: a sign-in page whose benign script, on each key of the
// password, puts into #box a new button built before it is in the document (its aria-label "n
// characters", data-len n, class "len", and a child span titled "n chars"), and 300 ms after
// the last key the same into #later. The observer sees only the insertion, no attribute record
// (mirrors8). #ctlbox gets one at load, before any typing: the control.
func insertedMirrorsSite() http.Handler {
	return pageAt("/inserted", `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in</h1>
<form id="form" onsubmit="return false">
<input id="user" name="user" value="alice">
<input id="pw" type="password" name="pw">
<div id="ctlbox"></div>
<div id="box"></div>
<div id="later"></div>
</form>
<div id="afterbox"></div>
<script>
// made builds, before it is in the document, a button telling the length n.
window.made = (n) => {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'len';
  b.setAttribute('aria-label', n + ' characters');
  b.dataset.len = String(n);
  const s = document.createElement('span');
  s.title = n + ' chars';
  s.textContent = 'Length';
  b.append(s);
  return b;
};
document.getElementById('ctlbox').append(made(0));
const pw = document.getElementById('pw');
let timer = 0;
pw.addEventListener('input', () => {
  const n = pw.value.length;
  document.getElementById('box').replaceChildren(made(n));
  clearTimeout(timer);
  timer = setTimeout(() => { document.getElementById('later').replaceChildren(made(n)); document.body.dataset.debounced = String(n); }, 300);
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
}

// insertedMirrorsReader reads, for the buttons in #ctlbox, #box and #later, aria-label,
// data-len, the span's title and class, before the typing, after it, and once the password was
// emptied and the grace passed (then also #afterbox's, which the page fills after the grace).
var insertedMirrorsReader = policyCase{name: "reads what the page inserted", body: `const rd = async (sel) => {
  const b = await dom.query(sel + ' button');
  if (!b) return 'absent';
  return [await dom.attr(b, 'aria-label'), await dom.attr(b, 'data-len'), await dom.attr(await dom.query(sel + ' span'), 'title'), await dom.attr(b, 'class')].join('|');
};
const reads = async () => [await rd('#ctlbox'), await rd('#box'), await rd('#later')];
const found = async (sel) => { try { return String(!!(await dom.query(sel))); } catch (e) { return String(e.message || e); } };
await rmx.storage.set('selBefore', JSON.stringify([await found('#ctlbox span[title="0 chars"]'), await found('#ctlbox button[aria-label="0 characters"]')]));
await rmx.storage.set('before', JSON.stringify(await reads()));
await dom.waitFor('#go', { timeout: 60000 });
const after = await reads();
after.push(await dom.attr(await dom.clone(await dom.query('#box button'), true), 'aria-label'));
await rmx.storage.set('read', JSON.stringify(after));
await rmx.storage.set('selAfter', JSON.stringify([await found('#box span[title="7 chars"]'), await found('#later button[aria-label="7 characters"]'), await found('#box button[data-len]')]));
await dom.waitFor('#go2', { timeout: 60000 });
await rmx.storage.set('grace', JSON.stringify([await rd('#ctlbox'), await rd('#box'), await rd('#afterbox')]));`}

// TestRedteamInsertedMirrorsReadBlank (OPEN-ITEMS 107): the attributes of elements the page
// built and then inserted while the typed password was held (in the key's task and on a
// debounce) read blank to a remixlet's dom.attr, also a child's and a clone's, class excepted;
// the button inserted at load reads back; once the person emptied the field and the grace
// passed, what the page inserts reads back, and what it inserted during the hold stays blank.
func TestRedteamInsertedMirrorsReadBlank(t *testing.T) {
	h, rxs := openWithRemixlets(t, "fields.test", insertedMirrorsSite(), "/inserted", []policyCase{insertedMirrorsReader})
	const control = "0 characters|0|0 chars|len"
	if v := h.waitStored(rxs[0], "before", "", 20*time.Second); v != `["`+control+`","absent","absent"]` {
		t.Fatalf("before the typing the remixlet read %s, want the control's attributes (the oracle must answer then, or the test proves nothing)\n%s", v, h.diagnose(rxs[0]))
	}
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pw').value === '`+rtFieldsPassword+`'`)
	if err := waitTrue(h.tab, 10*time.Second, `document.body.dataset.debounced === '7' && document.querySelector('#box button').dataset.len === '7'`); err != nil {
		t.Fatalf("the page never inserted its length buttons: %v", err)
	}
	e2etest.Eval[any](h.tab, `document.body.append(Object.assign(document.createElement('i'), { id: 'go' }))`)
	if v := h.waitStored(rxs[0], "read", "", 20*time.Second); v != `["`+control+`","|||len","|||len",""]` {
		t.Errorf("after the typing the remixlet read %s, want [%q,\"|||len\",\"|||len\",\"\"]: the attributes of what the page inserted while the password was held read blank (but class), also through a clone\n%s", v, control, h.diagnose(rxs[0]))
	}
	if v := h.waitStored(rxs[0], "selBefore", "", 20*time.Second); v != `["true","true"]` {
		t.Errorf("before the typing the remixlet's selectors on the control's title and aria-label found %s, want [\"true\",\"true\"]", v)
	}
	v := h.waitStored(rxs[0], "selAfter", "", 20*time.Second)
	if want := `["dom.query: selectors may not compare the value of attribute title: the page wrote it while a password was typed"`; !strings.HasPrefix(v, want) ||
		!strings.Contains(v, `selectors may not compare the value of attribute aria-label`) || !strings.HasSuffix(v, `,"true"]`) {
		t.Errorf("after the typing the remixlet's selectors on the inserted elements' title and aria-label found %s, want both refused (they would tell the length) and a presence test [data-len] answered", v)
	}
	personKeys(t, h.tab, "pw", strings.Repeat(kb.Backspace, len(rtFieldsPassword)), "emptying the field")
	if err := waitTrue(h.tab, 10*time.Second, `document.getElementById('pw').value === '' && document.body.dataset.debounced === '0'`); err != nil {
		t.Fatalf("the field was not emptied: %v", err)
	}
	time.Sleep(3500 * time.Millisecond) // past the grace (2 s) and the look at the fields (every 0.5 s)
	e2etest.Eval[any](h.tab, `document.getElementById('afterbox').append(made(5)),
document.body.append(Object.assign(document.createElement('i'), { id: 'go2' }))`)
	if v := h.waitStored(rxs[0], "grace", "", 20*time.Second); v != `["`+control+`","|||len","5 characters|5|5 chars|len"]` {
		t.Errorf("after the grace the remixlet read %s, want [%q,\"|||len\",\"5 characters|5|5 chars|len\"]: what the page inserts after the hold reads back, what it inserted during it stays blank\n%s", v, control, h.diagnose(rxs[0]))
	}
}

// TestAgentToolsHideInsertedMirrors (OPEN-ITEMS 107, 111): the model's query, outline and find
// show the control button's "0 characters" before and after the typing; after the person typed
// a password, the buttons the page built and inserted meanwhile show neither their aria-label
// "7 characters" (their accessible name) nor their span's title "7 chars", and the model's
// selector on that aria-label finds nothing (the control's finds the control).
func TestAgentToolsHideInsertedMirrors(t *testing.T) {
	const sel = `#ctlbox button, #box button, #later button, #ctlbox span, #box span, #later span`
	script := `{"turns": [
		{"tool_calls": [{"name": "query", "arguments": {"selector": "` + sel + `"}}]},
		{"text": "I read the page."},
		{"tool_calls": [{"name": "query", "arguments": {"selector": "` + sel + `"}}]},
		{"tool_calls": [{"name": "outline", "arguments": {"filter": "all"}}]},
		{"tool_calls": [{"name": "find", "arguments": {"text": "characters"}}]},
		{"tool_calls": [{"name": "query", "arguments": {"selector": "button[aria-label=\"7 characters\"]"}}]},
		{"tool_calls": [{"name": "query", "arguments": {"selector": "button[aria-label=\"0 characters\"]"}}]},
		{"text": "Done."}
	]}`
	aw, pf, waitRequests := agentOnPage(t, script, "fields.test", insertedMirrorsSite(), "https://fields.test/inserted")
	tab, model := aw.tab, aw.model
	chat(t, pf, "read this page")
	waitRequests(2)
	time.Sleep(500 * time.Millisecond) // the answer is shown; the chat is idle
	typePassword(t, tab)
	tab.WaitFor(10*time.Second, "the page's length buttons", `document.body.dataset.debounced === '7' && document.querySelector('#box button').dataset.len === '7'`)
	chat(t, pf, "read it again")
	waitRequests(8)
	reqs := model.Requests()
	if got := callResult(reqs, 0); !strings.Contains(got, `"aria-label":"0 characters"`) || !strings.Contains(got, `"title":"0 chars"`) {
		t.Fatalf("query before the typing lacks the control's aria-label and title (the test would prove nothing): %s", head(got, 2000))
	}
	for i, name := range []string{"query", "outline", "find"} {
		got := callResult(reqs, 2+i)
		t.Logf("%s after the typing: %s", name, head(got, 2000))
		for _, leak := range []string{"7 characters", "7 chars", `"data-len":"7"`} {
			if strings.Contains(got, leak) {
				t.Errorf("%s after the typing shows %q, in an element the page inserted while the password was held: %s", name, leak, head(got, 3000))
			}
		}
		if !strings.Contains(got, "0 characters") {
			t.Errorf("%s after the typing lacks the control's \"0 characters\" (inserted before the typing): %s", name, head(got, 3000))
		}
	}
	// The model's selectors: the inserted button's aria-label matches nothing, the control's does.
	if got := callResult(reqs, 5); !strings.Contains(got, `"total":0`) {
		t.Errorf("query button[aria-label=\"7 characters\"] after the typing: %s, want nothing found", head(got, 2000))
	}
	if got := callResult(reqs, 6); !strings.Contains(got, `"total":1`) {
		t.Errorf("query button[aria-label=\"0 characters\"] after the typing: %s, want the control", head(got, 2000))
	}
}

// signInRemovedSite serves /spa-removed: a single-page app whose click on Sign in takes the
// filled form out of the document and inserts a dashboard built before it is in the document
// (a nav's aria-label, a link's title), and 300 ms later an inbox badge (its data-count).
func signInRemovedSite() http.Handler {
	return pageAt("/spa-removed", `<!doctype html>
<html><head><meta charset="utf-8"><title>App</title></head>
<body><h1>App</h1>
<div id="app"><form id="form" onsubmit="return false">
<input id="user" name="user" value="alice">
<input id="pw" type="password" name="pw">
<button id="signin" type="button">Sign in</button>
</form></div>
<script>
document.getElementById('signin').addEventListener('click', () => {
  const nav = document.createElement('nav');
  nav.id = 'dash';
  nav.setAttribute('aria-label', 'Account of alice');
  const a = document.createElement('a');
  a.href = '/inbox';
  a.title = 'Inbox (3)';
  a.textContent = 'Inbox';
  nav.append(a);
  document.getElementById('app').replaceChildren(nav);
  setTimeout(() => {
    const b = document.createElement('span');
    b.id = 'badge';
    b.dataset.count = '3';
    nav.append(b);
    document.body.dataset.inbox = 'yes';
  }, 300);
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
}

// TestSPADashboardInsertedAfterSignInReadsBack (OPEN-ITEMS 123, 107): after the person typed a
// password and signed in to a single-page app that takes its form out of the document and
// inserts a dashboard, a remixlet reads the dashboard's attributes (the nav's aria-label, the
// link's title, the badge's data-count written 300 ms later): the hold ended with the filled
// field gone, so what the page inserts then is not taken as written while a password was held.
func TestSPADashboardInsertedAfterSignInReadsBack(t *testing.T) {
	h, rxs := openWithRemixlets(t, "app.test", signInRemovedSite(), "/spa-removed", []policyCase{{name: "reads the inserted dashboard", body: `await dom.waitFor('#go', { timeout: 60000 });
await rmx.storage.set('read', JSON.stringify([await dom.attr(await dom.query('#dash'), 'aria-label'), await dom.attr(await dom.query('#dash a'), 'title'),
  await dom.attr(await dom.query('#badge'), 'data-count')]));`}})
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pw').value === '`+rtFieldsPassword+`'`)
	personClick(t, h.tab, "#signin")
	if err := waitTrue(h.tab, 10*time.Second, `document.body.dataset.inbox === 'yes' && !document.getElementById('pw')`); err != nil {
		t.Fatalf("the page did not render its dashboard: %v", err)
	}
	e2etest.Eval[any](h.tab, `document.body.append(Object.assign(document.createElement('i'), { id: 'go' }))`)
	if v := h.waitStored(rxs[0], "read", "", 20*time.Second); v != `["Account of alice","Inbox (3)","3"]` {
		t.Errorf("the remixlet read the dashboard's attributes as %s, want [\"Account of alice\",\"Inbox (3)\",\"3\"]: the filled field left the document with the sign-in, what the page inserts then reads back\n%s", v, h.diagnose(rxs[0]))
	}
}

// pageAt serves html at path, and nothing else.
func pageAt(path, html string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		htmlPage(w, html)
	})
}
