package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// What the model's read_page_data and inspect_styles show while a typed password is held
// (OPEN-ITEMS 111, mirrors8). A sign-in page's benign script keeps the typed password's length
// and strength in its globals (pwLen, pwStrength, a store of the form's state) and in a meter's
// width and a custom property. The page agent's capture_page, outline and query show what the
// page writes then as "[hidden while a password is typed]" (mirrors7); read_page_data's globals
// and inspect_styles' computed values are withheld while the password is held, and the styles
// of the elements the page changed meanwhile stay withheld for their life.

// agentOnPage starts the model playing script and the site handler at host, loads url, waits for
// the page's script and opens the panel; waitRequests(n) waits until the model got n requests.
func agentOnPage(t *testing.T, script, host string, handler http.Handler, url string) (aw *agentWorld, pf *frameEval, waitRequests func(n int)) {
	t.Helper()
	aw = newAgentWorld(t, script, map[string]http.Handler{host: handler})
	aw.tab.Navigate(url)
	aw.tab.WaitConnected()
	aw.tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	pf, _ = openPanel(t, aw.tab)
	waitRequests = func(n int) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); len(aw.model.Requests()) < n; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the model got %d requests, want %d\n%s", len(aw.model.Requests()), n, aw.diagnose())
			}
		}
	}
	return aw, pf, waitRequests
}

// personKeys focuses the element with id and presses keys as the person (DevTools key events,
// trusted).
func personKeys(t *testing.T, tab *e2etest.Tab, id, keys, what string) {
	t.Helper()
	e2etest.Eval[any](tab, `document.getElementById('`+id+`').focus()`)
	ctx, cancel := context.WithTimeout(tab.Context(), 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.KeyEvent(keys)); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// heldMeterSite serves /meter: the sign-in page above.
func heldMeterSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/meter" {
			http.NotFound(w, r)
			return
		}
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title>
<style>#meter { height: 6px; background: #c33; width: 0px; } h1 { font-size: 30px; }</style></head>
<body><h1 id="title">Sign in</h1>
<form id="form" onsubmit="return false">
<input id="user" name="user" value="alice">
<input id="pw" type="password" name="pw">
<div id="meter"></div>
</form>
<script>
window.greeting = 'Welcome back';
window.pwLen = 0;
window.pwStrength = 0;
window.signinStore = { form: { user: 'alice', pwLength: 0, strength: 'empty' } };
const pw = document.getElementById('pw'), meter = document.getElementById('meter');
pw.addEventListener('input', () => {
  const n = pw.value.length;
  window.pwLen = n;
  window.pwStrength = Math.min(4, Math.floor(n / 2));
  window.signinStore.form.pwLength = n;
  window.signinStore.form.strength = n === 0 ? 'empty' : n < 8 ? 'weak' : 'strong';
  meter.style.width = (n * 10) + 'px';
  meter.style.setProperty('--pw-len', String(n));
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
	})
}

// TestAgentReadToolsWithheldWhilePasswordHeld: before the typing the model's read_page_data shows
// pwLen 0 and inspect_styles the meter's width 0px (controls: the oracle answers); while the
// typed password is held both are withheld with a line saying so (no "pwLen":7, no 70px); once
// the person has emptied the field and the grace passed, the globals and the heading's styles
// read again, the meter's (changed while the password was held) stay withheld. query's rect and
// scroll's box are withheld alike.
func TestAgentReadToolsWithheldWhilePasswordHeld(t *testing.T) {
	script := `{"turns": [
		{"tool_calls": [{"name": "query", "arguments": {"selector": "#meter, #title"}}]},
		{"tool_calls": [{"name": "read_page_data"}]},
		{"tool_calls": [{"name": "inspect_styles", "arguments": {"ref": "e2", "properties": ["width", "--pw-len"]}}]},
		{"text": "I read the page."},
		{"tool_calls": [{"name": "read_page_data"}]},
		{"tool_calls": [{"name": "inspect_styles", "arguments": {"ref": "e2", "properties": ["width", "--pw-len"]}}]},
		{"tool_calls": [{"name": "inspect_styles", "arguments": {"ref": "e1", "properties": ["font-size"]}}]},
		{"tool_calls": [{"name": "query", "arguments": {"selector": "#meter, #title"}}]},
		{"tool_calls": [{"name": "scroll", "arguments": {"ref": "e2"}}]},
		{"text": "Read again."},
		{"tool_calls": [{"name": "read_page_data"}]},
		{"tool_calls": [{"name": "inspect_styles", "arguments": {"ref": "e1", "properties": ["font-size"]}}]},
		{"tool_calls": [{"name": "inspect_styles", "arguments": {"ref": "e2", "properties": ["width", "--pw-len"]}}]},
		{"tool_calls": [{"name": "query", "arguments": {"selector": "#meter, #title"}}]},
		{"text": "Done."}
	]}`
	aw, pf, waitRequests := agentOnPage(t, script, "fields.test", heldMeterSite(), "https://fields.test/meter")
	tab, model := aw.tab, aw.model
	actMode(t, pf) // scroll is an action
	chat(t, pf, "read this page")
	waitRequests(4)
	time.Sleep(500 * time.Millisecond) // the answer is shown; the chat is idle
	typePassword(t, tab)
	tab.WaitFor(10*time.Second, "the page's mirrors", `window.pwLen === 7 && document.getElementById('meter').style.width === '70px'`)
	chat(t, pf, "read it again")
	waitRequests(10)
	time.Sleep(500 * time.Millisecond)
	// The person empties the field with their own keys; the watch ends after its grace.
	personKeys(t, tab, "pw", strings.Repeat(kb.Backspace, len(rtFieldsPassword)), "emptying the field")
	tab.WaitFor(10*time.Second, "the emptied field", `document.getElementById('pw').value === '' && window.pwLen === 0`)
	time.Sleep(3500 * time.Millisecond) // past the grace (2 s) and the look at the fields (every 0.5 s)
	chat(t, pf, "and once more")
	waitRequests(15)
	reqs := model.Requests()
	result := func(i int) string { return callResult(reqs, i) }

	// Controls before the typing: the refs are the ones the script uses, and both tools answer.
	if got := result(0); !strings.Contains(got, `"ref":"e1","tag":"h1"`) || !strings.Contains(got, `"ref":"e2","tag":"div"`) || !strings.Contains(got, `"width":0,"height":6`) {
		t.Fatalf("query before the typing did not give #title e1 and #meter e2 (the script's refs) with the meter's size: %s", head(got, 2000))
	}
	if got := result(1); !strings.Contains(got, `"pwLen":0`) || !strings.Contains(got, `"pwLength":0`) {
		t.Fatalf("read_page_data before the typing lacks pwLen 0 (the test would prove nothing): %s", head(got, 2000))
	}
	if got := result(2); !strings.Contains(got, `"width":"0px"`) || !strings.Contains(got, `"--pw-len":""`) {
		t.Fatalf("inspect_styles of the meter before the typing: %s, want width 0px (the test would prove nothing)", head(got, 2000))
	}

	// While the password is held.
	const withheldData = "the page's script data is withheld while a password is typed on this page; ask again after signing in"
	got := result(4)
	t.Logf("read_page_data while held: %s", head(got, 1500))
	for _, leak := range []string{`"pwLen":7`, `"pwStrength":3`, `"pwLength":7`, `"weak"`, `Welcome back`} {
		if strings.Contains(got, leak) {
			t.Errorf("read_page_data while the password is held shows %s: %s", leak, head(got, 2000))
		}
	}
	if !strings.Contains(got, withheldData) {
		t.Errorf("read_page_data while the password is held lacks the line %q: %s", withheldData, head(got, 2000))
	}
	if !strings.Contains(got, `"value":"alice"`) {
		t.Errorf("read_page_data while the password is held lacks the form's user name (forms are still read): %s", head(got, 2000))
	}
	const withheldStyles = "computed styles are withheld while a password is typed on this page; ask again after signing in"
	const rectsWithheld = "sizes and positions are withheld while a password is typed on this page"
	for _, i := range []int{5, 6} {
		got := result(i)
		t.Logf("inspect_styles %d while held: %s", i, head(got, 1000))
		if strings.Contains(got, "70px") || strings.Contains(got, `"--pw-len":"7"`) || strings.Contains(got, `"font-size":"30px"`) {
			t.Errorf("inspect_styles while the password is held shows a computed value: %s", head(got, 2000))
		}
		if !strings.Contains(got, withheldStyles) {
			t.Errorf("inspect_styles while the password is held lacks the line %q: %s", withheldStyles, head(got, 2000))
		}
	}

	got = result(7)
	t.Logf("query while held: %s", head(got, 1000))
	if strings.Contains(got, `"width":70`) || strings.Contains(got, `"rect"`) || !strings.Contains(got, rectsWithheld) {
		t.Errorf("query while the password is held: %s, want no sizes (the meter's width, and what it moves), and the line %q", head(got, 2000), rectsWithheld)
	}

	if got := result(8); strings.Contains(got, `"box"`) || !strings.Contains(got, "scrolledTo") {
		t.Errorf("scroll to the meter while the password is held: %s, want it scrolled to and no box (its width)", head(got, 2000))
	}

	// After the person emptied the field and the grace passed.
	if got := result(10); !strings.Contains(got, `"pwLen":0`) || !strings.Contains(got, `Welcome back`) || strings.Contains(got, withheldData) {
		t.Errorf("read_page_data after the field was emptied: %s, want the globals again", head(got, 2000))
	}
	if got := result(11); !strings.Contains(got, `"font-size":"30px"`) {
		t.Errorf("inspect_styles of the heading after the field was emptied: %s, want its font-size", head(got, 2000))
	}
	if got := result(12); strings.Contains(got, `"width":`) || !strings.Contains(got, "the page changed this element while a password was typed") {
		t.Errorf("inspect_styles of the meter after the field was emptied: %s, want withheld (the page wrote its style while the password was held)", head(got, 2000))
	}
	// The heading's box reads again; the meter's (the page changed it meanwhile) stays withheld.
	if got := result(13); !strings.Contains(got, `"ref":"e1","tag":"h1"`) || strings.Count(got, `"rect"`) != 1 || !strings.Contains(got, "the page changed them while a password was typed") {
		t.Errorf("query after the field was emptied: %s, want the heading's box and not the meter's", head(got, 2000))
	}
}

// heldFieldsSite serves /fields: a sign-in page whose benign script, 300 ms after the last key
// of the password, sets a strength <select> (by its value property: no attribute changes) and,
// the first time, adds two read-only fields holding the length (one by its value property, one
// by its value attribute, both written before the field is in the document). A language
// <select> the person chooses themselves and a plan <select> nobody touches are the controls.
func heldFieldsSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/fields" {
			http.NotFound(w, r)
			return
		}
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in</h1>
<form id="form" onsubmit="return false">
<label>User <input id="user" name="user" value="alice"></label>
<label>Language <select id="lang" name="lang"><option>English</option><option>Esperanto</option></select></label>
<label>Plan <select id="plan" name="plan"><option>Free</option><option selected>Gold</option></select></label>
<label>Password <input id="pw" type="password" name="pw"></label>
<label>Strength <select id="level" name="level"><option value="none">None</option><option value="weak">Weakish</option><option value="strong">Strongish</option></select></label>
<div id="extra"></div>
</form>
<script>
const pw = document.getElementById('pw');
let timer = 0;
pw.addEventListener('input', () => {
  clearTimeout(timer);
  const n = pw.value.length;
  timer = setTimeout(() => {
    document.getElementById('level').value = n === 0 ? 'none' : n < 8 ? 'weak' : 'strong';
    let made = document.getElementById('made');
    if (!made) {
      made = document.createElement('input');
      made.id = 'made';
      made.readOnly = true;
      made.setAttribute('aria-label', 'Count');
      made.value = String(n);
      const made2 = document.createElement('input');
      made2.id = 'made2';
      made2.setAttribute('aria-label', 'Count 2');
      made2.setAttribute('value', n + ' chars');
      document.getElementById('extra').append(made, made2);
    }
    document.body.dataset.debounced = String(n);
  }, 300);
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
	})
}

// TestAgentFieldsThePageSetsWhileHeld (OPEN-ITEMS 107): after the person chose a language and
// typed a password, the model's query, outline and read_page_data show neither the strength
// the page selected nor the length in the fields it added meanwhile; the person's own choice,
// the user name and the plan the markup selects still show.
func TestAgentFieldsThePageSetsWhileHeld(t *testing.T) {
	script := `{"turns": [
		{"tool_calls": [{"name": "query", "arguments": {"selector": "#level, #lang, #plan, #made, #made2, #user"}}]},
		{"tool_calls": [{"name": "outline", "arguments": {"filter": "all"}}]},
		{"tool_calls": [{"name": "read_page_data"}]},
		{"text": "Done."}
	]}`
	aw, pf, waitRequests := agentOnPage(t, script, "fields.test", heldFieldsSite(), "https://fields.test/fields")
	tab, model := aw.tab, aw.model
	// The person chooses Esperanto with the keyboard, then types the password.
	personKeys(t, tab, "lang", kb.ArrowDown, "choosing the language")
	tab.WaitFor(5*time.Second, "the person's choice", `document.getElementById('lang').value === 'Esperanto'`)
	typePassword(t, tab)
	tab.WaitFor(10*time.Second, "the page's fields", `document.body.dataset.debounced === '7' && document.getElementById('level').value === 'weak' && document.getElementById('made').value === '7'`)
	chat(t, pf, "read the form")
	waitRequests(4)
	reqs := model.Requests()
	for i, name := range []string{"query", "outline", "read_page_data"} {
		got := callResult(reqs, i)
		t.Logf("%s: %s", name, head(got, 2500))
		for _, leak := range []string{`"value":"Weakish"`, `value=\"Weakish\"`, `"value":"7"`, `value=\"7\"`, `7 chars`} {
			if strings.Contains(got, leak) {
				t.Errorf("%s shows %s, which the page set while the password was held: %s", name, leak, head(got, 3000))
			}
		}
		for _, want := range []string{"Esperanto", "alice", "Gold"} {
			if !strings.Contains(got, `"value":"`+want+`"`) && !strings.Contains(got, `value=\"`+want+`\"`) {
				t.Errorf("%s lacks %q (the person's own input, the markup's choice): %s", name, want, head(got, 3000))
			}
		}
	}
}

// heldFieldsReader reads, before and after the typing, the values of the /fields page's selects
// and of the fields the page adds while the password is held.
var heldFieldsReader = policyCase{name: "reads the fields the page set", body: `const v = async (s) => { const el = await dom.query(s); return el ? await dom.value(el) : 'absent'; };
const reads = async () => [await v('#level'), await v('#made'), await v('#made2'), await v('#lang'), await v('#plan'), await v('#user')];
await rmx.storage.set('before', JSON.stringify(await reads()));
await dom.waitFor('#go', { timeout: 60000 });
await rmx.storage.set('read', JSON.stringify(await reads()));`}

// TestRedteamFieldsThePageSetsReadBlank (OPEN-ITEMS 107): a remixlet's dom.value reads the
// strength the page selected and the length in the fields it added while the password was held
// blank; the person's own choice, the markup's and the user name read back.
func TestRedteamFieldsThePageSetsReadBlank(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": heldFieldsSite(), "witness.test": wit})
	rxs := h.addPolicy([]policyCase{heldFieldsReader}, "https://fields.test/fields*")
	h.tab.Navigate("https://fields.test/fields")
	h.tab.WaitConnected()
	h.tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	if v := h.waitStored(rxs[0], "before", "", 20*time.Second); v != `["none","absent","absent","English","Gold","alice"]` {
		t.Fatalf("before the typing the remixlet read %s, want [\"none\",\"absent\",\"absent\",\"English\",\"Gold\",\"alice\"] (the oracle must answer then, or the test proves nothing)\n%s", v, h.diagnose(rxs[0]))
	}
	personKeys(t, h.tab, "lang", kb.ArrowDown, "choosing the language")
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pw').value === '`+rtFieldsPassword+`'`)
	if err := waitTrue(h.tab, 10*time.Second, `document.body.dataset.debounced === '7' && document.getElementById('level').value === 'weak' && document.getElementById('lang').value === 'Esperanto'`); err != nil {
		t.Fatalf("the page's fields were never set: %v", err)
	}
	e2etest.Eval[any](h.tab, `document.body.append(Object.assign(document.createElement('i'), { id: 'go' }))`)
	if v := h.waitStored(rxs[0], "read", "", 20*time.Second); v != `["","","","Esperanto","Gold","alice"]` {
		t.Errorf("after the typing the remixlet read %s, want [\"\",\"\",\"\",\"Esperanto\",\"Gold\",\"alice\"]: what the page set while the password was held reads blank, the person's choice, the markup's and the user name back\n%s", v, h.diagnose(rxs[0]))
	}
}
