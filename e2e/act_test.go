package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/store"
)

// Act mode's page actions (issue 6) in real Chromium through the real proxy, driven through
// Server.PageTool like e2e/pagetools_test.go: type into a React-style controlled input, a
// Stripe-like combobox committed with set_field, select, press_keys, hover, scroll on an
// infinite list, wait_for and wait_for_stable, find, page_state, navigate and back; and the
// refusals: password fields, other sites, a click the proxy says was just made.
// TestActChatSafety runs the per-chat rules (duplicate submit, done, navigation) through a
// whole chat with the scripted model.

const actPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>Act page</title>
<style>body { margin: 8px; font: 14px/1.3 sans-serif; } #menu { display: none; } #menu.open { display: block; }
#feed { height: 120px; overflow: auto; border: 1px solid #ccc; } #feed div { height: 20px; }
[role=option][aria-selected=true] { background: #ddf; } #spacer { height: 2500px; }</style></head>
<body>
<main>
<h1>Act page</h1>
<form id="profile" action="/saved" method="post">
<label for="name">Name</label> <input id="name" name="name">
<p id="echo">Hello</p>
<label for="pw">Password</label> <input id="pw" type="password" name="pw">
<label for="plan">Plan</label> <select id="plan" name="plan"><option>Free</option><option value="g">Gold</option><option>Platinum</option></select>
<label for="notes">Notes</label> <textarea id="notes" name="notes">old notes</textarea>
<button id="save" type="submit">Save profile</button>
</form>
<form id="away" action="https://witness.test/collect" method="post"><label for="q">Query</label> <input id="q" name="q"></form>
<label for="currency">Currency</label> <input id="currency" role="combobox" aria-controls="cur-list" aria-expanded="false" autocomplete="off">
<button id="menu-btn" type="button">Account menu</button><div id="menu" role="menu"><a role="menuitem" href="/settings">Settings</a></div>
<div id="feed" aria-label="Feed" role="feed"></div>
<p id="late"></p>
<button id="later-btn" type="button">Load later</button>
<button id="create" type="button">Create product</button>
<section aria-label="Results"><h2>Results</h2><ul><li>Alpha result <a href="/alpha">Open alpha</a></li><li>Beta result</li></ul></section>
<a id="next" href="/next">Next page</a>
<shadow-field id="sf"></shadow-field>
<dialog id="dlg" aria-label="Add a product"><form method="dialog"><label for="pname">Product name</label> <input id="pname"><button>Close</button></form></dialog>
</main>
<div id="spacer"></div>
<div id="portal"></div>
<script>
// A controlled input as React makes it: the element's own value property tracks what the
// framework set, and an input event whose value equals the tracked one is ignored.
const inp = document.getElementById('name');
const valueDesc = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
let tracked = '';
Object.defineProperty(inp, 'value', {configurable: true, get() { return valueDesc.get.call(this); }, set(v) { tracked = '' + v; valueDesc.set.call(this, v); }});
inp.addEventListener('input', (e) => {
  document.body.dataset.nameInput = (e.isTrusted ? 'trusted ' : 'synthetic ') + e.inputType;
  const v = valueDesc.get.call(inp);
  if (v === tracked) return;
  tracked = v;
  document.getElementById('echo').textContent = 'Hello ' + v;
});
document.getElementById('plan').addEventListener('change', (e) => { document.body.dataset.plan = e.target.value; });
// A Stripe-like combobox: a listbox rendered in a portal, filtered as one types; ArrowDown
// highlights the first option, Enter commits the highlighted one.
const cur = document.getElementById('currency');
const names = ['United States dollar (USD)', 'Chinese yuan (CNY)', 'Euro (EUR)'];
let active = -1, shown = [];
function render() {
  const portal = document.getElementById('portal');
  portal.textContent = '';
  cur.setAttribute('aria-expanded', shown.length ? 'true' : 'false');
  if (!shown.length) return;
  const lb = document.createElement('div');
  lb.id = 'cur-list'; lb.setAttribute('role', 'listbox');
  shown.forEach((n, i) => { const o = document.createElement('div'); o.setAttribute('role', 'option'); o.textContent = n; if (i === active) o.setAttribute('aria-selected', 'true'); lb.append(o); });
  portal.append(lb);
}
cur.addEventListener('input', () => { const q = cur.value.toLowerCase(); shown = names.filter((n) => n.toLowerCase().includes(q)); active = -1; render(); });
cur.addEventListener('keydown', (e) => {
  if (e.key === 'ArrowDown' && shown.length) { active = Math.min(active + 1, shown.length - 1); render(); e.preventDefault(); }
  if (e.key === 'Enter' && active >= 0) { cur.value = shown[active]; document.body.dataset.currency = shown[active]; shown = []; render(); e.preventDefault(); }
});
// Hover reveals the menu; Escape closes it.
document.getElementById('menu-btn').addEventListener('mouseenter', () => document.getElementById('menu').classList.add('open'));
document.addEventListener('keydown', (e) => { document.body.dataset.lastKey = e.key; if (e.key === 'Escape') document.getElementById('menu').classList.remove('open'); });
// An infinite list: ten more items shortly after it is scrolled to the end.
const feed = document.getElementById('feed');
let count = 0;
function more(n) { for (let i = 0; i < n; i++) { count++; const d = document.createElement('div'); d.textContent = 'Item ' + count; feed.append(d); } }
more(20);
let loading = false;
feed.addEventListener('scroll', () => {
  if (loading || feed.scrollTop + feed.clientHeight < feed.scrollHeight - 10) return;
  loading = true;
  setTimeout(() => { more(10); loading = false; }, 150);
});
document.getElementById('later-btn').addEventListener('click', () => setTimeout(() => { document.getElementById('late').textContent = 'Loaded later'; }, 400));
document.getElementById('create').addEventListener('click', () => { document.body.dataset.created = String(Number(document.body.dataset.created || 0) + 1); });
document.getElementById('profile').addEventListener('submit', (e) => { e.preventDefault(); document.body.dataset.saved = new FormData(e.target).get('name'); });
// An input inside an open shadow root, as web components render them.
const sroot = document.getElementById('sf').attachShadow({mode: 'open'});
const sin = document.createElement('input');
sin.setAttribute('aria-label', 'Shadow field');
sin.addEventListener('input', () => { document.body.dataset.shadow = sin.value; });
sroot.append(sin);
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`

func actSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { htmlPage(w, actPage) })
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Next</title></head><body><h1>Next page</h1><script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
	})
	return mux
}

func TestActPageActions(t *testing.T) {
	w := &witness{}
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"act.test": actSite(), "witness.test": w})

	tab.Navigate("https://act.test/")
	tab.WaitConnected()
	tab.WaitFor(5*time.Second, "the page's script", pageScriptRan)
	c := &toolCaller{t: t, srv: p.Server, session: sessionFor(t, p, "https://act.test/")}
	outline := fmt.Sprint(c.ok("outline", `{"filter":"all","budget":20000}`)["outline"])
	ref := func(part string) string { return refOf(t, outline, part) }

	t.Run("type into a React-style controlled input", func(t *testing.T) {
		// The page is a faithful model: setting the value the ordinary way is not seen.
		e2etest.Eval[bool](tab, `(() => { const i = document.getElementById('name'); i.value = 'Naive'; i.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`)
		if got := e2etest.Eval[string](tab, `document.getElementById('echo').textContent`); got != "Hello" {
			t.Fatalf("the page's controlled input saw a plain value set: %q", got)
		}
		v := c.ok("type", `{"ref":"`+ref(`textbox "Name"`)+`","text":"Ann"}`)
		if v["verified"] != true || v["value"] != "Ann" {
			t.Errorf("type = %v", v)
		}
		if got := e2etest.Eval[string](tab, `document.getElementById('echo').textContent`); got != "Hello Ann" {
			t.Errorf("the page saw %q after type, want Hello Ann", got)
		}
		// Typed as the browser's own editing: the page's input event is a trusted one.
		if got := e2etest.Eval[string](tab, `document.body.dataset.nameInput || ''`); got != "trusted insertText" || v["events"] == nil {
			t.Errorf("the page's input event was %q (type answered %v), want a trusted insertText", got, v)
		}
		c.ok("type", `{"ref":"`+ref(`textbox "Name"`)+`","text":" Lee","clear":false}`)
		if got := e2etest.Eval[string](tab, `document.getElementById('echo').textContent`); got != "Hello Ann Lee" {
			t.Errorf("after appending: %q", got)
		}
		c.refused("type", `{"ref":"`+ref(`textbox "Password"`)+`","text":"hunter2"}`, "is a password field; the agent never types passwords")
		if got := e2etest.Eval[string](tab, `document.getElementById('pw').value`); got != "" {
			t.Errorf("the password field holds %q", got)
		}
		c.refused("type", `{"ref":"`+ref(`combobox "Plan"`)+`","text":"x"}`, "use select")
		c.refused("type", `{"ref":"`+ref(`button "Save profile"`)+`","text":"x"}`, "is not a text field")
		v = c.ok("type", `{"ref":"`+ref(`textbox "Notes"`)+`","text":"new notes"}`)
		if v["value"] != "new notes" {
			t.Errorf("type into the text area = %v", v)
		}
		c.ok("type", `{"ref":"`+ref(`textbox "Shadow field"`)+`","text":"in the shadow"}`)
		if got := e2etest.Eval[string](tab, `document.body.dataset.shadow || ''`); got != "in the shadow" {
			t.Errorf("the shadow field's input handler saw %q", got)
		}
	})

	t.Run("set_field commits the first option of a combobox", func(t *testing.T) {
		v := c.ok("set_field", `{"ref":"`+ref(`combobox "Currency"`)+`","text":"yuan","submit":true}`)
		if v["combobox"] != true {
			t.Errorf("set_field = %v", v)
		}
		if got := e2etest.Eval[string](tab, `document.body.dataset.currency || ''`); got != "Chinese yuan (CNY)" {
			t.Errorf("the combobox committed %q, want Chinese yuan (CNY)", got)
		}
		// submit on a form that posts to another site is refused before anything is typed.
		c.refused("set_field", `{"ref":"`+ref(`textbox "Query"`)+`","text":"secret","submit":true}`, "the form submits to https://witness.test")
		if got := e2etest.Eval[string](tab, `document.getElementById('q').value`); got != "" {
			t.Errorf("the field was typed into: %q", got)
		}
		// A plain field with submit: Enter, then the form's own submission (handled by the page).
		c.ok("set_field", `{"ref":"`+ref(`textbox "Name"`)+`","text":"Zoe","submit":true}`)
		if got := e2etest.Eval[string](tab, `document.body.dataset.saved || ''`); got != "Zoe" {
			t.Errorf("the form was submitted with %q, want Zoe", got)
		}
	})

	t.Run("select", func(t *testing.T) {
		v := c.ok("select", `{"ref":"`+ref(`combobox "Plan"`)+`","option":"gold"}`)
		if v["selected"] != "Gold" || v["value"] != "g" {
			t.Errorf("select = %v", v)
		}
		if got := e2etest.Eval[string](tab, `document.body.dataset.plan || ''`); got != "g" {
			t.Errorf("the page's change handler saw %q", got)
		}
		c.refused("select", `{"ref":"`+ref(`combobox "Plan"`)+`","option":"Diamond"}`, `has no option "Diamond". Its options: "Free", "Gold", "Platinum"`)
		c.refused("select", `{"ref":"`+ref(`textbox "Notes"`)+`","option":"x"}`, "is not a drop-down list")
	})

	t.Run("hover and press_keys", func(t *testing.T) {
		c.ok("hover", `{"ref":"`+ref(`button "Account menu"`)+`"}`)
		if !e2etest.Eval[bool](tab, `document.getElementById('menu').classList.contains('open')`) {
			t.Errorf("hover did not open the menu")
		}
		v := c.ok("press_keys", `{"keys":["Escape"]}`)
		if e2etest.Eval[bool](tab, `document.getElementById('menu').classList.contains('open')`) {
			t.Errorf("Escape did not close the menu: %v", v)
		}
		e2etest.Eval[bool](tab, `document.getElementById('name').focus(), true`)
		v = c.ok("press_keys", `{"keys":["Tab"]}`)
		if f := fmt.Sprint(v["focused"]); !strings.HasPrefix(f, `textbox "Password"`) {
			t.Errorf("Tab from Name focused %s", f)
		}
		v = c.ok("press_keys", `{"keys":["Shift+Tab", "Backspace"]}`)
		if got := e2etest.Eval[string](tab, `document.getElementById('name').value`); got != "Zo" {
			t.Errorf("Shift+Tab then Backspace left %q in Name (%v)", got, v)
		}
		c.refused("press_keys", `{"keys":["Control+a"]}`, "is not one the agent may press")
		c.refused("press_keys", `{"keys":[]}`, "keys must be a list of 1 to 20")
	})

	t.Run("scroll, wait_for_stable, wait_for and find on an infinite list", func(t *testing.T) {
		v := c.ok("scroll", `{"direction":"down"}`)
		if v["moved"] != true || v["scrollY"].(float64) <= 0 {
			t.Errorf("scroll down = %v", v)
		}
		c.ok("scroll", `{"direction":"top"}`)
		feed := ref(`feed "Feed"`)
		v = c.ok("scroll", `{"ref":"`+feed+`","direction":"bottom"}`)
		if v["moved"] != true {
			t.Errorf("scroll the feed = %v", v)
		}
		v = c.ok("wait_for", `{"text":"Item 30","timeoutMs":5000}`)
		if v["found"] != true {
			t.Errorf("wait_for Item 30 = %v", v)
		}
		if v := c.ok("wait_for_stable", `{"ms":300}`); v["stable"] != true {
			t.Errorf("wait_for_stable = %v", v)
		}
		f := c.ok("find", `{"text":"item 27"}`)
		o := fmt.Sprint(f["outline"])
		if f["matches"] != float64(1) || !strings.Contains(o, `feed "Feed"`) || !strings.Contains(o, "Item 27") || strings.Contains(o, "Item 26") {
			t.Errorf("find item 27 = %v", f)
		}
		f = c.ok("find", `{"text":"alpha"}`)
		o = fmt.Sprint(f["outline"])
		if !strings.Contains(o, `region "Results"`) || !strings.Contains(o, `link "Open alpha" -> /alpha [e`) || strings.Contains(o, "Beta") {
			t.Errorf("find alpha:\n%s", o)
		}
		c.ok("click", `{"text":"Load later"}`)
		if v := c.ok("wait_for", `{"text":"Loaded later"}`); v["waitedMs"].(float64) < 100 {
			t.Errorf("wait_for Loaded later = %v", v)
		}
		c.refused("wait_for", `{"text":"Never there","timeoutMs":300}`, `"Never there" did not appear after 300 ms`)
		c.refused("wait_for", `{"text":"x","timeoutMs":20000}`, "timeoutMs must be a whole number from 0 to 10000")
	})

	t.Run("page_state sees an open dialog with unsaved input", func(t *testing.T) {
		e2etest.Eval[bool](tab, `document.getElementById('dlg').showModal(), true`)
		o := fmt.Sprint(c.ok("outline", `{}`)["outline"])
		c.ok("type", `{"ref":"`+refOf(t, o, `textbox "Product name"`)+`","text":"namaz"}`)
		v := c.ok("page_state", `{}`)
		if fmt.Sprint(v["dialogs"]) == "[]" || !strings.Contains(fmt.Sprint(v["dialogs"]), `dialog "Add a product"`) ||
			!strings.Contains(fmt.Sprint(v["forms"]), `textbox "Product name"`) {
			t.Errorf("page_state = %v", v)
		}
		e2etest.Eval[bool](tab, `document.getElementById('dlg').close(), document.getElementById('pname').value = '', true`)
		v = c.ok("page_state", `{}`)
		if fmt.Sprint(v["dialogs"]) != "[]" || strings.Contains(fmt.Sprint(v["forms"]), "Product name") {
			t.Errorf("page_state after closing = %v", v)
		}
	})

	t.Run("a click the proxy says was just made is refused", func(t *testing.T) {
		c.refused("click", `{"text":"Create product","recent":[{"name":"create product","seconds":3}]}`, "was already clicked on this page 3 seconds ago")
		if got := e2etest.Eval[string](tab, `document.body.dataset.created || ''`); got != "" {
			t.Errorf("the button was clicked: %q", got)
		}
		if v := c.ok("click", `{"text":"Create product"}`); v["name"] != "create product" {
			t.Errorf("click = %v", v)
		}
	})

	t.Run("navigate stays on the site; back returns", func(t *testing.T) {
		c.refused("navigate", `{"url":"https://witness.test/steal"}`, "navigate goes only to pages of this site (https://act.test)")
		c.refused("navigate", `{"url":"javascript:alert(1)"}`, "navigate goes only to pages of this site")
		c.refused("back", `{}`, "there is no previous page of this site")
		v := c.ok("navigate", `{"url":"/next"}`)
		if v["navigating"] != "/next" || v["mayLeave"] != true {
			t.Errorf("navigate = %v", v)
		}
		tab.WaitFor(10*time.Second, "the tab to load /next", `location.pathname === '/next'`)
		next := &toolCaller{t: t, srv: p.Server, session: sessionFor(t, p, "https://act.test/next")}
		if v := next.ok("back", `{}`); v["going"] != "/" {
			t.Errorf("back = %v", v)
		}
		tab.WaitFor(10*time.Second, "the tab to go back", `location.pathname === '/'`)
		c.seen = append(c.seen, next.seen...)
	})

	if n := sites.HostRequests("witness.test"); n != 0 || len(w.requests()) != 0 {
		t.Errorf("the witness site got %d requests: %q", n, w.requests())
	}
}

// TestActChatSafety: the rules kept per chat in Go (proxy/chat/act.go), through a whole chat with
// the scripted model: a second click on "Create product" within 45 seconds is refused until the
// model passes resubmit; done is refused while a dialog with unsaved input is open; and a click
// that unexpectedly loads a new page is reported as such (the chat then follows the tab there).
func TestActChatSafety(t *testing.T) {
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"text": "Create product"}}]},
		{"tool_calls": [{"name": "click", "arguments": {"text": "Create product"}}]},
		{"tool_calls": [{"name": "click", "arguments": {"text": "Create product", "resubmit": true}}]},
		{"tool_calls": [{"name": "click", "arguments": {"text": "Open dialog"}}]},
		{"tool_calls": [{"name": "done", "arguments": {"summary": "Created the product namaz."}}]},
		{"tool_calls": [{"name": "click", "arguments": {"text": "Jump"}}]},
		{"text": "went on on the next page"}
	]}`, map[string]http.Handler{"act.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			htmlPage(w, `<!doctype html><title>Elsewhere</title><h1>Elsewhere</h1>`)
			return
		}
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Shop admin</title></head><body>
<h1>Products</h1>
<button id="create" type="button">Create product</button>
<button id="open" type="button">Open dialog</button>
<dialog id="dlg" aria-label="Add a product"><form method="dialog"><label for="pname">Product name</label> <input id="pname"><button>Add</button></form>
<button id="jump" type="button">Jump</button></dialog>
<script>
document.getElementById('create').onclick = () => { document.body.dataset.created = String(Number(document.body.dataset.created || 0) + 1); };
document.getElementById('open').onclick = () => { document.getElementById('dlg').showModal(); document.getElementById('pname').value = 'namaz'; };
document.getElementById('jump').onclick = () => { location.assign('/elsewhere'); };
document.body.dataset.pageScript = 'ran';
</script></body></html>`)
	})})
	tab := aw.tab
	actChat(t, tab, "https://act.test/", "create the product namaz")
	if err := waitTrue(tab, 30*time.Second, `location.pathname === '/elsewhere'`); err != nil {
		t.Fatalf("the tab did not leave: %v\nstored results: %q\n%s", err, storedToolResults(t, aw.proxy.Store), aw.diagnose())
	}

	// The conversation as stored: every tool result in order.
	var results []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		results = storedToolResults(t, aw.proxy.Store)
		if len(results) >= 6 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(results) < 6 {
		t.Fatalf("%d tool results stored, want 6: %q\n%s", len(results), results, aw.diagnose())
	}
	for i, want := range []string{
		`"name":"create product"`,
		"was already clicked on this page",
		`"name":"create product"`,
		`"name":"open dialog"`,
		`done refused (1 of at most 2)`,
		"unexpected: the click made the tab load a new page",
	} {
		if !strings.Contains(results[i], want) {
			t.Errorf("tool result %d = %s\nwant it to contain %q", i, head(results[i], 600), want)
		}
	}
	if !strings.Contains(results[4], `dialog "Add a product"`) || !strings.Contains(results[4], `textbox "Product name"`) {
		t.Errorf("done's refusal does not name the dialog and its field: %s", results[4])
	}

	// The turn's trace, from the manager: each call with its timing and the page's address
	// around it.
	var traces []struct {
		Turns []struct {
			End   string `json:"end"`
			Steps []struct {
				Kind, Tool string
				URLBefore  string `json:"url_before"`
				IsError    bool   `json:"is_error"`
			} `json:"steps"`
		} `json:"turns"`
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		resp, err := aw.proxy.Client().Get("https://remix.proxy/manager/traces.json")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&traces)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(traces) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(traces) != 1 || len(traces[0].Turns) != 1 {
		t.Fatalf("traces = %+v", traces)
	}
	var tools []string
	for _, s := range traces[0].Turns[0].Steps {
		if s.Kind == "tool" {
			tools = append(tools, fmt.Sprintf("%s %v %s", s.Tool, s.IsError, s.URLBefore))
		}
	}
	if got := strings.Join(tools, "|"); !strings.HasPrefix(got, "click false https://act.test/|click true https://act.test/|click false https://act.test/|click false https://act.test/|done true https://act.test/|click false https://act.test/") {
		t.Errorf("traced tool calls: %s", got)
	}
	// The new page is of the same site and its request named the old page as Referer: the
	// chat followed the tab there and the turn went on (proxy/chat/follow.go).
	if end := traces[0].Turns[0].End; end != "answer" {
		t.Errorf("the turn ended %q, want answer (the chat follows the tab within the site)", end)
	}
}

// storedToolResults returns the tool results of the newest stored chat, oldest first.
func storedToolResults(t *testing.T, st *store.Store) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	chats, err := st.ListChats(ctx, 10)
	if err != nil || len(chats) == 0 {
		return nil
	}
	bodies, err := st.ChatMessages(ctx, chats[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range bodies {
		var m struct{ Role, Text string }
		if json.Unmarshal(b, &m) == nil && m.Role == "tool" {
			out = append(out, m.Text)
		}
	}
	return out
}

// TestActSubmitGuardCoversSetFieldAndEnter: a form's submission by set_field (submit) or by
// Enter in one of its fields counts, for the duplicate-submit guard, as a click on the form's
// default button — in real Chromium, with a page whose key handler submits on Enter.
func TestActSubmitGuardCoversSetFieldAndEnter(t *testing.T) {
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "find", "arguments": {"text": "Comment"}}]},
		{"tool_calls": [{"name": "set_field", "arguments": {"ref": "{{grab:Comment[^\\[]*\\[(e\\d+)\\]}}", "text": "first", "submit": true}}]},
		{"tool_calls": [{"name": "find", "arguments": {"text": "Comment"}}]},
		{"tool_calls": [{"name": "set_field", "arguments": {"ref": "{{grab:Comment[^\\[]*\\[(e\\d+)\\]}}", "text": "again", "submit": true}}]},
		{"tool_calls": [{"name": "press_keys", "arguments": {"keys": ["Enter"]}}]},
		{"tool_calls": [{"name": "press_keys", "arguments": {"keys": ["Enter"], "resubmit": true}}]},
		{"text": "posted twice, as asked"}
	]}`, map[string]http.Handler{"guard.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Discussion</title></head><body>
<h1>Discussion</h1>
<form id="f" action="/comments" method="post"><label for="c">Comment</label> <input id="c" name="c"><button>Post comment</button></form>
<script>
const f = document.getElementById('f');
f.addEventListener('submit', (e) => { e.preventDefault(); document.body.dataset.posts = String(Number(document.body.dataset.posts || 0) + 1); });
document.getElementById('c').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); f.requestSubmit(); } });
document.body.dataset.pageScript = 'ran';
</script></body></html>`)
	})})
	tab := aw.tab
	actChatSubmitting(t, tab, "https://guard.test/", "post the comment") // the person lets Act submit forms (containment_act_test.go)

	var results []string
	for deadline := time.Now().Add(30 * time.Second); len(results) < 6 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		results = storedToolResults(t, aw.proxy.Store)
	}
	if len(results) < 6 {
		t.Fatalf("%d tool results stored, want 6: %q\n%s", len(results), results, aw.diagnose())
	}
	for i, want := range []string{
		`Comment`,
		`"name":"post comment"`,
		`Comment`,
		"the form's submission (post comment) was already clicked on this page",
		"(the form's submission, post comment) was already clicked on this page",
		`"name":"post comment"`,
	} {
		if !strings.Contains(results[i], want) {
			t.Errorf("tool result %d = %s\nwant it to contain %q", i, head(results[i], 600), want)
		}
	}
	// Two submissions reached the page: set_field's, and the Enter passed with resubmit.
	if got := e2etest.Eval[string](tab, `document.body.dataset.posts || '0'`); got != "2" {
		t.Errorf("the page saw %s submissions, want 2", got)
	}
	if got := e2etest.Eval[string](tab, `document.getElementById('c').value`); got != "first" {
		t.Errorf("the refused set_field typed into the field: %q", got)
	}
}
