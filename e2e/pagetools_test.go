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
	"github.com/remixproxy/remixproxy/proxy"
)

// The agent's page tools (proxy/pagetools.go, panel/pageagent/tool_*.js) in real Chromium
// through the real proxy: what each returns on a page with headings, a labelled form with a
// password field, a dialog, links within and out of the site, page globals and a fetched JSON
// document; that the password never appears in any answer; and that clicks and open_page that
// would leave the site are refused with nothing reaching the witness site.

const toolsPassword = "hunter2-Secret!"

const toolsPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>Tools page</title>
<style>body { margin: 8px; font: 14px/1.3 sans-serif; } #cover { position: absolute; left: 0; top: 0; width: 300px; height: 40px; background: #eee; }
#covered-box { position: relative; height: 40px; } h1, h2 { margin: 4px 0; } p { margin: 2px 0; }</style></head>
<body>
<header><nav aria-label="Main"><a href="/docs">Docs</a> <a id="away" href="https://witness.test/steal">Elsewhere</a> <a id="pinger" href="/docs" ping="https://witness.test/ping">Pinged docs</a></nav></header>
<main>
<h1>Account</h1>
<p>Welcome back, reader.</p>
<form id="login" action="/login" method="post">
<label for="email">Email</label> <input id="email" name="email" type="email" value="a@b.test" required>
<label>Password <input id="pw" name="password" type="password"></label>
<label><input type="checkbox" name="remember" checked> Remember me</label>
<input type="hidden" name="csrf" value="tok123">
<button type="submit">Sign in</button>
</form>
<form id="away-form" action="https://witness.test/collect" method="post"><button id="away-submit">Send elsewhere</button></form>
<button id="ok-main" onclick="document.body.dataset.main = 'clicked'">OK</button>
<div id="covered-box"><button id="covered" onclick="document.body.dataset.covered = 'clicked'">Covered action</button><div id="cover">Cookie banner</div></div>
<h2>Pictures</h2>
<img alt="A red square" width="20" height="20" src="data:image/gif;base64,R0lGODlhAQABAIAAAP8AAAAAACH5BAAAAAAALAAAAAABAAEAAAICRAEAOw==">
<ul><li>First item</li><li>Second item</li></ul>
<shadow-box id="sb"><span>light text</span></shadow-box>
</main>
<dialog id="dlg" aria-label="Confirm"><p>Are you sure?</p><button onclick="document.getElementById('dlg').close(); document.body.dataset.dialog = 'ok'">OK</button><button>Cancel</button></dialog>
<script>
window.appState = {user: {name: 'Reader', id: 7}, items: [1, 2, 3], fn: function () {}, deep: {a: {b: {c: {d: {e: 1}}}}}};
window.selfRef = {name: 'loop'};
selfRef.me = selfRef;
const sr = document.getElementById('sb').attachShadow({mode: 'open'});
const inner = document.createElement('button');
inner.textContent = 'Shadow button';
inner.addEventListener('click', () => { document.body.dataset.shadow = 'clicked'; });
sr.append(document.createElement('slot'), inner);
fetch('/api/profile.json').then((r) => r.json()).then((j) => { document.body.dataset.profile = j.plan; });
// Another origin's JSON (CORS), loaded before the page agent connects: its Referer is only this
// page's origin (the default referrer policy).
fetch('https://api.tools-cdn.test/prices.json').then((r) => r.json()).then((j) => { document.body.dataset.prices = j.currency; });
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`

const toolsDocs = `<!doctype html><html><head><meta charset="utf-8"><title>Docs page</title></head>
<body><h1>Docs page</h1><p>Read the manual.</p><a href="/">Home</a>
<form><input type="password" value="in-the-html"></form>
<script>document.body.dataset.pageScript = 'ran';</script></body></html>`

func toolsSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { htmlPage(w, toolsPage) })
	mux.HandleFunc("/docs", func(w http.ResponseWriter, r *http.Request) { htmlPage(w, toolsDocs) })
	mux.HandleFunc("/api/profile.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, `{"plan":"gold","quota":12}`)
	})
	return mux
}

// toolsCDN is another origin's API the tools page reads with CORS.
func toolsCDN() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, `{"currency":"EUR","basket":31}`)
	})
}

// TestPageDataOtherOriginBeforeConnect: another origin's JSON a page loads while it loads, before
// its page agent connects, carries only the page's origin as Referer (the default referrer
// policy); read_page_data of a page deeper than "/" shows it.
func TestPageDataOtherOriginBeforeConnect(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"tools.test": toolsSite(), "api.tools-cdn.test": toolsCDN()})
	tab.Navigate("https://tools.test/shop/cart")
	tab.WaitConnected()
	tab.WaitFor(10*time.Second, "the page's fetches of its JSON", `document.body.dataset.profile === 'gold' && document.body.dataset.prices === 'EUR'`)
	c := &toolCaller{t: t, srv: p.Server, session: sessionFor(t, p, "https://tools.test/shop/cart")}
	v := c.ok("read_page_data", `{}`)
	if got := fmt.Sprint(v["responses"]); !strings.Contains(got, "https://api.tools-cdn.test/prices.json") || !strings.Contains(got, "https://tools.test/api/profile.json") {
		t.Errorf("read_page_data lacks the JSON the page loaded before its agent connected: %s", got)
	}
}

// toolCaller calls page tools on one session and keeps every answer and error, so the test
// can check at the end that the password appears in none.
type toolCaller struct {
	t       *testing.T
	srv     *proxy.Server
	session string
	seen    []string
}

func (c *toolCaller) call(tool, args string) (map[string]any, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := c.srv.PageTool(ctx, c.session, tool, json.RawMessage(args))
	if err != nil {
		c.seen = append(c.seen, err.Error())
		return nil, err
	}
	c.seen = append(c.seen, string(out))
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		c.t.Fatalf("%s %s: the result is not a JSON object: %s", tool, args, out)
	}
	return v, nil
}

func (c *toolCaller) ok(tool, args string) map[string]any {
	c.t.Helper()
	v, err := c.call(tool, args)
	if err != nil {
		c.t.Fatalf("%s %s: %v", tool, args, err)
	}
	return v
}

func (c *toolCaller) refused(tool, args, want string) {
	c.t.Helper()
	v, err := c.call(tool, args)
	if err == nil {
		c.t.Errorf("%s %s was not refused: %v", tool, args, v)
		return
	}
	if !strings.Contains(err.Error(), want) {
		c.t.Errorf("%s %s: error %q, want it to contain %q", tool, args, err, want)
	}
}

// sessionFor waits for the page session whose URL is url.
func sessionFor(t *testing.T, p *e2etest.Proxy, url string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, s := range p.Server.Status().Sessions {
			if s.URL == url && s.Connected {
				return s.ID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session for %s in %+v", url, p.Server.Status().Sessions)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// refOf finds the ref at the end of the first outline line containing part.
// hasLine reports whether one of the outline's lines is line, apart from its indentation.
func hasLine(outline, line string) bool {
	for _, l := range strings.Split(outline, "\n") {
		if strings.TrimLeft(l, " ") == line {
			return true
		}
	}
	return false
}

// hasTextLine reports whether the outline has a text line (a quoted string).
func hasTextLine(outline string) bool {
	for _, l := range strings.Split(outline, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), `"`) {
			return true
		}
	}
	return false
}

func refOf(t *testing.T, outline, part string) string {
	t.Helper()
	for _, line := range strings.Split(outline, "\n") {
		if strings.Contains(line, part) {
			i := strings.LastIndex(line, "[e")
			if i < 0 {
				t.Fatalf("line %q has no ref", line)
			}
			return strings.TrimSuffix(line[i+1:], "]")
		}
	}
	t.Fatalf("no line with %q in the outline:\n%s", part, outline)
	return ""
}

func TestPageTools(t *testing.T) {
	w := &witness{}
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"tools.test": toolsSite(), "witness.test": w, "api.tools-cdn.test": toolsCDN()})

	tab.Navigate("https://tools.test/")
	tab.WaitConnected()
	tab.WaitFor(10*time.Second, "the page's fetches of its JSON", `document.body.dataset.profile === 'gold' && document.body.dataset.prices === 'EUR'`)
	c := &toolCaller{t: t, srv: p.Server, session: sessionFor(t, p, "https://tools.test/")}
	// The person types a password; the page copies it into a global of its own.
	e2etest.Eval[bool](tab, `document.getElementById('pw').value = '`+toolsPassword+`', window.draft = {pass: document.getElementById('pw').value}, true`)

	t.Run("capture_page", func(t *testing.T) {
		v := c.ok("capture_page", `{}`)
		vp, _ := v["viewport"].(map[string]any)
		if v["url"] != "https://tools.test/" || v["title"] != "Tools page" || !strings.Contains(fmt.Sprint(v["text"]), "Welcome back, reader.") ||
			vp == nil || vp["width"].(float64) <= 0 || vp["height"].(float64) <= 0 || vp["pageHeight"].(float64) <= 0 || v["truncated"] != false {
			t.Errorf("capture_page = %v", v)
		}
		v = c.ok("capture_page", `{"maxChars":100}`)
		if len([]rune(fmt.Sprint(v["text"]))) != 100 || v["truncated"] != true {
			t.Errorf("capture_page maxChars 100: %d characters, truncated %v", len([]rune(fmt.Sprint(v["text"]))), v["truncated"])
		}
		c.refused("capture_page", `{"maxChars":"lots"}`, "maxChars must be a whole number")
		c.refused("capture_page", `{"color":1}`, `unknown argument "color"`)
	})

	var outline string
	t.Run("outline", func(t *testing.T) {
		v := c.ok("outline", `{}`)
		outline = fmt.Sprint(v["outline"])
		t.Logf("outline:\n%s", outline)
		for _, want := range []string{
			`navigation "Main" [e`,
			`link "Docs" -> /docs [e`,
			`link "Elsewhere" -> https://witness.test/… [e`,
			`main [e`,
			`heading "Account" [level=1] [e`,
			`"Welcome back, reader."`,
			`form [e`,
			`textbox "Email" [required] value="a@b.test" [e`,
			`textbox "Password" [password] [e`,
			`checkbox "Remember me" [checked] [e`,
			`"Cookie banner"`,
			`button "Sign in" [e`,
			`button "Covered action" [e`,
			`heading "Pictures" [level=2] [e`,
			`img "A red square" [e`,
			`listitem "First item" [e`,
			`"light text"`,
			`button "Shadow button" [e`,
		} {
			if !strings.Contains(outline, want) {
				t.Errorf("the outline lacks %q", want)
			}
		}
		if hasLine(outline, `"Email"`) || hasLine(outline, `"Remember me"`) {
			t.Errorf("the outline repeats labels as text")
		}
		if strings.Contains(outline, "Are you sure") || strings.Contains(outline, "tok123") || strings.Contains(outline, "# open overlays") {
			t.Errorf("the outline shows the closed dialog or a hidden field")
		}
		if v["truncated"] != false || v["refs"].(float64) < 10 {
			t.Errorf("truncated %v, refs %v", v["truncated"], v["refs"])
		}
		// Refs are stable: a second outline names the same elements the same way.
		again := fmt.Sprint(c.ok("outline", `{}`)["outline"])
		if refOf(t, again, `heading "Account"`) != refOf(t, outline, `heading "Account"`) {
			t.Errorf("the heading's ref changed between two outlines")
		}
		// A small budget is cut with the marker.
		v = c.ok("outline", `{"budget":300}`)
		if v["truncated"] != true || !strings.Contains(fmt.Sprint(v["outline"]), "\u2026 (truncated: ") || len(fmt.Sprint(v["outline"])) > 500 {
			t.Errorf("outline budget 300 = %v", v)
		}
		// A subtree by ref, and the interactive filter.
		form := refOf(t, outline, "form [")
		sub := fmt.Sprint(c.ok("outline", `{"ref":"`+form+`"}`)["outline"])
		if !strings.HasPrefix(sub, "form [") || !strings.Contains(sub, `textbox "Email"`) || strings.Contains(sub, "Account") {
			t.Errorf("outline of the form:\n%s", sub)
		}
		inter := fmt.Sprint(c.ok("outline", `{"filter":"interactive"}`)["outline"])
		if !strings.Contains(inter, `button "Sign in"`) || strings.Contains(inter, "heading") || hasTextLine(inter) {
			t.Errorf("interactive outline:\n%s", inter)
		}
		c.refused("outline", `{"filter":"everything"}`, `filter must be`)
		c.refused("outline", `{"ref":"e99999"}`, `element e99999 is no longer on the page`)
		c.refused("outline", `{"ref":"body"}`, `is not an element ref`)
	})

	t.Run("query", func(t *testing.T) {
		v := c.ok("query", `{"selector":"#login input"}`)
		ms, _ := v["matches"].([]any)
		if v["total"] != float64(4) || len(ms) != 4 {
			t.Fatalf("query #login input = %v", v)
		}
		email := ms[0].(map[string]any)
		attrs := email["attrs"].(map[string]any)
		if email["tag"] != "input" || attrs["id"] != "email" || attrs["value"] != "a@b.test" || email["value"] != "a@b.test" || !strings.HasPrefix(fmt.Sprint(email["ref"]), "e") {
			t.Errorf("the email field: %v", email)
		}
		pw := ms[1].(map[string]any)
		if _, has := pw["value"]; has || pw["attrs"].(map[string]any)["type"] != "password" {
			t.Errorf("the password field: %v", pw)
		}
		if v := c.ok("query", `{"selector":"li","limit":1}`); v["total"] != float64(2) || len(v["matches"].([]any)) != 1 {
			t.Errorf("query li limit 1 = %v", v)
		}
		c.refused("query", `{"selector":"input[value^=h]"}`, "refused while the page has a password field")
		c.refused("query", `{"selector":"a[\\68ref]"}`, "refused while the page has a password field")
		c.refused("query", `{"selector":"<<<"}`, "invalid selector")
		c.refused("query", `{"selector":"li","limit":500}`, "limit must be a whole number from 1 to 200")
		c.refused("query", `{}`, "selector is required")
	})

	t.Run("inspect_styles", func(t *testing.T) {
		h1 := refOf(t, outline, `heading "Account"`)
		v := c.ok("inspect_styles", `{"ref":"`+h1+`"}`)
		st, _ := v["styles"].(map[string]any)
		if st["display"] != "block" || st["font-weight"] != "700" || st["visibility"] != "visible" || v["ref"] != h1 {
			t.Errorf("inspect_styles %s = %v", h1, v)
		}
		v = c.ok("inspect_styles", `{"ref":"`+h1+`","properties":["marginTop","--x"]}`)
		if st, _ := v["styles"].(map[string]any); st["margin-top"] != "4px" {
			t.Errorf("inspect_styles marginTop = %v", v)
		}
		c.refused("inspect_styles", `{"ref":"`+h1+`","properties":["color;x"]}`, "is not a CSS property name")
	})

	t.Run("read_page_data", func(t *testing.T) {
		v := c.ok("read_page_data", `{}`)
		g, _ := v["globals"].(map[string]any)
		app, _ := g["appState"].(map[string]any)
		user, _ := app["user"].(map[string]any)
		if user["name"] != "Reader" || fmt.Sprint(app["items"]) != "[1 2 3]" {
			t.Errorf("globals.appState = %v", app)
		}
		if _, has := app["fn"]; has {
			t.Errorf("a function was included: %v", app)
		}
		if fmt.Sprint(app["deep"]) != "map[a:map[b:map[c:[deeper]]]]" {
			t.Errorf("appState.deep = %v, want it cut at depth 4", app["deep"])
		}
		if self, _ := g["selfRef"].(map[string]any); self["me"] != "[cycle]" || self["name"] != "loop" {
			t.Errorf("globals.selfRef = %v", g["selfRef"])
		}
		for _, builtin := range []string{"document", "location", "localStorage", "fetch", "window", "navigator"} {
			if _, has := g[builtin]; has {
				t.Errorf("globals include the built-in %s", builtin)
			}
		}
		if draft, _ := g["draft"].(map[string]any); draft["pass"] != "[redacted]" {
			t.Errorf("the page's copy of the password was not redacted: %v", g["draft"])
		}
		forms, _ := v["forms"].([]any)
		if len(forms) != 2 {
			t.Fatalf("forms = %v", v["forms"])
		}
		login := forms[0].(map[string]any)
		if login["action"] != "https://tools.test/login" || login["method"] != "post" {
			t.Errorf("the login form: %v", login)
		}
		fields := map[string]map[string]any{}
		for _, f := range login["fields"].([]any) {
			m := f.(map[string]any)
			fields[fmt.Sprint(m["name"])] = m
		}
		if fields["email"]["value"] != "a@b.test" || fields["email"]["label"] != "Email" || fields["csrf"]["value"] != "tok123" ||
			fields["remember"]["checked"] != true || fields["password"]["password"] != true {
			t.Errorf("the login form's fields: %v", fields)
		}
		if _, has := fields["password"]["value"]; has {
			t.Errorf("the password field has a value: %v", fields["password"])
		}
		rs, _ := v["responses"].([]any)
		found := false
		for _, r := range rs {
			m := r.(map[string]any)
			if m["url"] == "https://tools.test/api/profile.json" && m["body"] == `{"plan":"gold","quota":12}` && m["status"] == float64(200) && m["method"] == "GET" {
				found = true
			}
		}
		if !found {
			t.Errorf("read_page_data lacks the page's JSON response: %v", v["responses"])
		}

		c.refused("read_page_data", `{"all":true}`, `unknown argument "all"`)
	})

	t.Run("click refusals", func(t *testing.T) {
		c.refused("click", `{"text":"Elsewhere"}`, "the link goes to https://witness.test, another site than this page (https://tools.test); clicking it is refused")
		c.refused("click", `{"selector":"#away"}`, "another site")
		c.refused("click", `{"selector":"#away-submit"}`, "the form submits to https://witness.test")
		c.refused("click", `{"selector":"#pinger"}`, "pings other addresses")
		c.refused("click", `{"selector":"#covered"}`, `another element is on top of button "Covered action"`)
		c.refused("click", `{"selector":"#covered"}`, `div "Cookie banner"`)
		c.refused("click", `{"text":"Nothing like this"}`, `no visible clickable element is named "Nothing like this"`)
		c.refused("click", `{"selector":"button"}`, `elements match button; click one by ref`)
		c.refused("click", `{"text":"OK","ref":"e1"}`, "give exactly one of ref, selector or text")
		c.refused("click", `{"selector":"#dlg button:last-child"}`, "is not visible")
		if got := e2etest.Eval[string](tab, `document.body.dataset.covered || ''`); got != "" {
			t.Errorf("the covered button was clicked")
		}
	})

	t.Run("fetch_page", func(t *testing.T) {
		c.refused("fetch_page", `{"url":"https://witness.test/page"}`, "open_page opens only pages of this site (https://tools.test)")
		c.refused("fetch_page", `{"url":"//witness.test/page"}`, "open_page opens only pages of this site")
		v := c.ok("fetch_page", `{"url":"/docs"}`)
		o := fmt.Sprint(v["outline"])
		if v["url"] != "https://tools.test/docs" || v["title"] != "Docs page" || v["status"] != float64(200) ||
			!strings.Contains(o, `heading "Docs page" [level=1]`) || !strings.Contains(o, `link "Home" -> /`) || strings.Contains(o, "[e") {
			t.Errorf("fetch_page /docs = %v", v)
		}
		if strings.Contains(fmt.Sprint(v), "in-the-html") {
			t.Errorf("fetch_page showed a password field's value: %v", v)
		}
	})

	t.Run("shadow DOM", func(t *testing.T) {
		// An open shadow root's button is outlined and clicked by ref (the hit test sees its host).
		v := c.ok("click", `{"ref":"`+refOf(t, outline, `button "Shadow button"`)+`"}`)
		if !strings.HasPrefix(fmt.Sprint(v["clicked"]), `button "Shadow button"`) {
			t.Errorf("click the shadow button = %v", v)
		}
		tab.WaitFor(5*time.Second, "the shadow button's listener", `document.body.dataset.shadow === 'clicked'`)
	})

	t.Run("dialog", func(t *testing.T) {
		e2etest.Eval[bool](tab, `document.getElementById('dlg').showModal(), true`)
		o := fmt.Sprint(c.ok("outline", `{}`)["outline"])
		if !strings.HasPrefix(o, "# open overlays\n dialog \"Confirm\" [e") || !strings.Contains(o, "\n# page\n") ||
			strings.Index(o, "Are you sure?") > strings.Index(o, "# page") {
			t.Errorf("outline with an open dialog:\n%s", o)
		}
		// Text clicks are scoped to the modal: its OK, not the page's.
		v := c.ok("click", `{"text":"OK"}`)
		if !strings.HasPrefix(fmt.Sprint(v["clicked"]), `button "OK" [e`) {
			t.Errorf("click OK = %v", v)
		}
		tab.WaitFor(5*time.Second, "the dialog's OK to run", `document.body.dataset.dialog === 'ok' && !document.getElementById('dlg').open`)
		if got := e2etest.Eval[string](tab, `document.body.dataset.main || ''`); got != "" {
			t.Errorf("the page's OK was clicked instead of the dialog's")
		}
		// With the dialog closed, the page's OK is the only one.
		c.ok("click", `{"text":"OK"}`)
		tab.WaitFor(5*time.Second, "the page's OK to run", `document.body.dataset.main === 'clicked'`)
	})

	t.Run("click a link of the site", func(t *testing.T) {
		docs := refOf(t, outline, `link "Docs"`)
		v := c.ok("click", `{"ref":"`+docs+`"}`)
		if v["clicked"] != `link "Docs" [`+docs+`]` || v["link"] != "/docs" || v["mayLeave"] != true {
			t.Errorf("click %s = %v", docs, v)
		}
		tab.WaitFor(10*time.Second, "the link to load /docs", `location.href === 'https://tools.test/docs' && document.readyState === 'complete'`)
		// The old page is gone: its session answers no more.
		_, err := c.call("outline", `{}`)
		for deadline := time.Now().Add(5 * time.Second); err == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			_, err = c.call("outline", `{}`)
		}
		if err == nil || !strings.Contains(err.Error(), "the page was closed or navigated") {
			t.Errorf("a tool call on the page that left: %v", err)
		}
	})

	for i, s := range c.seen {
		if strings.Contains(s, toolsPassword) || strings.Contains(s, "in-the-html") {
			t.Errorf("answer %d carries a password: %s", i, s)
		}
	}
	if n := sites.HostRequests("witness.test"); n != 0 || len(w.requests()) != 0 {
		t.Errorf("the witness site got %d requests: %q", n, w.requests())
	}
}

// A page that, after the page agent started and before the first tool call, replaces every
// built-in the tools use (those captured at start and those captured at the first tool call)
// and lays traps on Object.prototype and Array.prototype: the tools answer as before, the page's
// replacements are never called with anything of the agent's, and nothing leaves the site.
const hostileToolsPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>Hostile tools page</title></head>
<body>
<h1>Hostile</h1>
<form action="/save"><label for="name">Name</label><input id="name" value="Ann"><label>Secret <input type="password" id="pw"></label><button>Save</button></form>
<a href="https://witness.test/x">Away</a> <a href="/next">Next</a>
<script>
window.caught = '';
window.appState = { ok: true };
const dp = Object.defineProperty;
const np = Object.setPrototypeOf;
const note = (what) => function () { window.caught += what + ' '; throw new Error('trap: ' + what); };
const trapGetter = (what) => np({ get() { window.caught += what + ' '; return undefined; }, configurable: true }, null);
const replace = (obj, names, tag) => { for (const n of names) { dp(obj, n, np({ value: note(tag + '.' + n), configurable: true, writable: true }, null)); } };
replace(Array.prototype, ['push', 'indexOf', 'slice', 'join', 'splice', 'concat', 'map', 'forEach'], 'Array');
replace(String.prototype, ['indexOf', 'slice', 'toLowerCase', 'charCodeAt', 'trim', 'split', 'replace'], 'String');
replace(Map.prototype, ['get', 'set', 'delete', 'forEach'], 'Map');
replace(WeakMap.prototype, ['get', 'set'], 'WeakMap');
replace(WeakRef.prototype, ['deref'], 'WeakRef');
replace(JSON, ['stringify', 'parse'], 'JSON');
replace(Reflect, ['apply'], 'Reflect');
replace(Promise.prototype, ['then'], 'Promise');
replace(Document.prototype, ['querySelectorAll', 'elementFromPoint', 'getElementById'], 'Document');
replace(Element.prototype, ['getAttribute', 'hasAttribute', 'querySelectorAll', 'getBoundingClientRect', 'matches', 'closest', 'scrollIntoView'], 'Element');
replace(Node.prototype, ['contains', 'getRootNode'], 'Node');
replace(HTMLElement.prototype, ['click'], 'HTMLElement');
replace(CSSStyleDeclaration.prototype, ['getPropertyValue'], 'CSSStyleDeclaration');
replace(WebSocket.prototype, ['send'], 'WebSocket');
replace(Response.prototype, ['text'], 'Response');
replace(DOMParser.prototype, ['parseFromString'], 'DOMParser');
replace(window, ['getComputedStyle', 'fetch', 'URL', 'DOMParser', 'WeakRef', 'WeakMap', 'Map'], 'window');
replace(Object, ['keys', 'getOwnPropertyDescriptor', 'create'], 'Object');
// What the tools capture at their first call (from a fresh realm, not from this window):
// replaced here, before any tool call.
replace(Document.prototype, ['createRange'], 'Document');
replace(Range.prototype, ['selectNodeContents', 'getBoundingClientRect'], 'Range');
dp(HTMLElement.prototype, 'innerText', trapGetter('innerText'));
dp(HTMLInputElement.prototype, 'labels', trapGetter('labels'));
dp(HTMLFormElement.prototype, 'action', trapGetter('action'));
dp(Node.prototype, 'previousSibling', trapGetter('previousSibling'));
dp(window, 'innerWidth', trapGetter('innerWidth'));
dp(window, 'scrollY', trapGetter('scrollY'));
// Last: traps any object with the ordinary prototype would run into. (Object.prototype.then
// is left alone: open_page refuses to run on a page that sets it; see below.)
dp(Object.prototype, 'toJSON', trapGetter('toJSON'));
dp(Object.prototype, 'get', trapGetter('get'));
dp(Object.prototype, 'set', trapGetter('set'));
dp(Object.prototype, 'value', trapGetter('value'));
dp(Object.prototype, 'flatten', trapGetter('flatten'));
dp(Object.prototype, 'block', trapGetter('block'));
dp(Object.prototype, 'credentials', trapGetter('credentials'));
dp(Object.prototype, 'redirect', trapGetter('redirect'));
dp(Array.prototype, '0', np({ set(v) { window.caught += 'array-set '; }, configurable: true }, null));
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`

func TestPageToolsOnAHostilePage(t *testing.T) {
	w := &witness{}
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"hostile-tools.test": http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				htmlPage(rw, hostileToolsPage)
			case "/tt":
				rw.Header().Set("Content-Security-Policy", "require-trusted-types-for 'script'")
				htmlPage(rw, `<!doctype html><title>TT</title><h1>Trusted Types</h1><script>document.body.dataset.pageScript = 'ran';</script>`)
			default:
				htmlPage(rw, `<!doctype html><title>Next</title><h1>Next page</h1>`)
			}
		}),
		"witness.test": w,
	})

	tab.Navigate("https://hostile-tools.test/")
	tab.WaitConnected()
	c := &toolCaller{t: t, srv: p.Server, session: sessionFor(t, p, "https://hostile-tools.test/")}
	tab.WaitFor(5*time.Second, "the page's script", pageScriptRan)
	e2etest.Eval[bool](tab, `document.querySelector('#pw').value = '`+toolsPassword+`', true`)

	o := fmt.Sprint(c.ok("outline", `{}`)["outline"])
	for _, want := range []string{`heading "Hostile" [level=1] [e`, `textbox "Name" value="Ann" [e`, `textbox "Secret" [password] [e`, `button "Save" [e`, `link "Next" -> /next [e`} {
		if !strings.Contains(o, want) {
			t.Errorf("the outline lacks %q:\n%s", want, o)
		}
	}
	if v := c.ok("capture_page", `{}`); v["title"] != "Hostile tools page" || !strings.Contains(fmt.Sprint(v["text"]), "Hostile") {
		t.Errorf("capture_page = %v", v)
	}
	if v := c.ok("query", `{"selector":"input"}`); v["total"] != float64(2) {
		t.Errorf("query input = %v", v)
	}
	h1 := refOf(t, o, `heading "Hostile"`)
	if st, _ := c.ok("inspect_styles", `{"ref":"`+h1+`"}`)["styles"].(map[string]any); st["display"] != "block" {
		t.Errorf("inspect_styles = %v", st)
	}
	if g, _ := c.ok("read_page_data", `{}`)["globals"].(map[string]any); fmt.Sprint(g["appState"]) != "map[ok:true]" || g["caught"] != "" {
		t.Errorf("read_page_data globals = %v", g)
	}
	c.refused("click", `{"text":"Away"}`, "another site")
	c.refused("fetch_page", `{"url":"https://witness.test/"}`, "open_page opens only pages of this site")
	if v := c.ok("fetch_page", `{"url":"/next"}`); !strings.Contains(fmt.Sprint(v["outline"]), `heading "Next page"`) {
		t.Errorf("fetch_page /next = %v", v)
	}
	if caught := e2etest.Eval[string](tab, `window.caught`); caught != "" {
		t.Errorf("the page's traps were reached: %q", caught)
	}
	// A page that makes every object thenable would receive the Response of open_page's fetch.
	e2etest.Eval[bool](tab, `dp(Object.prototype, 'then', np({get() { window.caught += 'then '; }, configurable: true}, null)), true`)
	c.refused("fetch_page", `{"url":"/next"}`, `a "then" property on Object.prototype`)
	if caught := e2etest.Eval[string](tab, `window.caught`); caught != "" {
		t.Errorf("the page's then trap was reached: %q", caught)
	}
	e2etest.Eval[bool](tab, `delete Object.prototype.then`)
	v := c.ok("click", `{"text":"Next"}`)
	if v["link"] != "/next" {
		t.Errorf("click Next = %v", v)
	}
	tab.WaitFor(10*time.Second, "the click to load /next", `location.pathname === '/next'`)

	// A page that enforces Trusted Types: the tools that need no HTML parsing work; open_page
	// says why it cannot.
	tab.Navigate("https://hostile-tools.test/tt")
	if err := tab.WaitConnectedErr(10 * time.Second); err != nil {
		t.Logf("the page agent does not connect on a Trusted Types page; skipping that part: %v", err)
	} else {
		tt := &toolCaller{t: t, srv: p.Server, session: sessionFor(t, p, "https://hostile-tools.test/tt")}
		if o := fmt.Sprint(tt.ok("outline", `{}`)["outline"]); !strings.Contains(o, `heading "Trusted Types"`) {
			t.Errorf("outline on the Trusted Types page:\n%s", o)
		}
		tt.refused("fetch_page", `{"url":"/next"}`, "Trusted Types")
		c.seen = append(c.seen, tt.seen...)
	}

	for i, s := range c.seen {
		if strings.Contains(s, toolsPassword) {
			t.Errorf("answer %d carries the password: %s", i, s)
		}
	}
	if n := sites.HostRequests("witness.test"); n != 0 || len(w.requests()) != 0 {
		t.Errorf("the witness site got %d requests: %q", n, w.requests())
	}
}
