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
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 5b: what the person approved is exactly what runs. A hostile page steers the
// scripted model into saving code the person must approve; the tests check what the person is
// shown against what the sandbox would run, and what activates against what was shown.

// hiddenCalls are ways to write a POST under the prices remixlet's fetch:api.shop.test that a
// line diff could show as something else: after a line comment, ended by a line terminator
// JavaScript has and a "\n" split has not (CR, LINE SEPARATOR, PARAGRAPH SEPARATOR), and after
// a long run of spaces on a line a card cuts. Each call's address is its marker.
var hiddenCalls = []struct{ name, before string }{
	{"carriage return", "// show the price with tax\r"},
	{"line separator", "// show the price with tax\u2028"},
	{"paragraph separator", "// show the price with tax\u2029"},
	{"long line", "await dom.setText(await dom.query('h1'), 'Shop with tax');" + strings.Repeat(" ", 400)},
	{"long line of code", "const tax = [" + strings.Repeat("0.2, ", 80) + "0.2];"},
}

func hiddenCallMarker(i int) string {
	return fmt.Sprintf("rmx.fetch('https://api.shop.test/orders?n=%d'", i)
}

// TestRedteamApproveDiffShowsWhatRuns: the confirmation window where Allow is taken shows the
// code the agent wrote line by line; every statement the sandbox would run must be on a shown
// "+" line, in full, and not after a "//" on that line (where a reader takes it for a comment).
func TestRedteamApproveDiffShowsWhatRuns(t *testing.T) {
	var script strings.Builder
	for i, h := range hiddenCalls {
		script.WriteString(h.before)
		fmt.Fprintf(&script, "await %s, {method: 'POST', body: 'x'});\n", hiddenCallMarker(i))
	}
	script.WriteString("await dom.setText(await dom.query('h1'), 'Shop with tax');\n")
	args, err := json.Marshal(map[string]any{"name": "prices", "manifest": json.RawMessage(pricesManifest),
		"script": script.String(), "note": "tax"})
	if err != nil {
		t.Fatal(err)
	}
	// The script really runs those calls: checked here so that the test cannot pass on code the
	// sandbox would not run either.
	if probs := sandbox.CheckScript([]byte(script.String())); len(probs) > 0 {
		t.Fatalf("the test's script does not pass the save-time checks: %v", probs)
	}
	api := &shopAPIRecorder{}
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "write_remixlet", "arguments": `+string(args)+`}]},
		{"text": "Changed the prices remixlet."}
	]}`, map[string]http.Handler{"shop.test": shopPage(), "api.shop.test": api})
	tab := aw.tab
	st := aw.proxy.Store
	saveAndActivate(t, st, "prices", store.Files{sandbox.ManifestFile: []byte(pricesManifest),
		sandbox.ScriptFile: []byte("const r = await rmx.fetch('https://api.shop.test/prices', {as: 'json'});\nawait dom.setText(await dom.query('h1'), 'Shop ' + r.json.price);")})

	pf, f := askChat(t, tab, "https://shop.test/", "show the price with tax")
	pf.waitFor(t, 30*time.Second, "a pending activation card", `!!document.querySelector('.card[data-card=activation][data-state=pending]')`)
	pf.waitFor(t, 5*time.Second, "the card to arm", `document.querySelector('.card').getAttribute('data-armed') === 'true'`)
	x, y := pointAt(t, tab, pf, f, ".card button.allow")
	clickAt(t, tab, x, y)
	confirm := waitConfirmWindow(t, tab)
	cw := &frameEval{tab: tab, ctx: confirm}
	cw.waitFor(t, 10*time.Second, "the card's diff in the confirmation window", `!document.getElementById('card-diff').hidden`)
	var shown []string
	if err := json.Unmarshal([]byte(cw.eval(t, `JSON.stringify(Array.from(document.querySelectorAll('#card-diff .diff-add')).map((e) => e.textContent))`)), &shown); err != nil {
		t.Fatal(err)
	}
	for i, h := range hiddenCalls {
		marker := hiddenCallMarker(i)
		found := false
		for _, l := range shown {
			before, _, ok := strings.Cut(l, marker)
			if !ok {
				continue
			}
			found = true
			if strings.Contains(before, "//") {
				t.Errorf("%s: the call shows after a line comment: %q", h.name, l)
			}
		}
		if !found {
			t.Errorf("%s: no added line shows the call to %s", h.name, marker)
		}
	}
	if t.Failed() {
		t.Logf("the added lines shown:\n%s", strings.Join(shown, "\n"))
	}
	cw.waitFor(t, 10*time.Second, "the confirmation to arm", `document.getElementById('card').getAttribute('data-armed') === 'true'`)
	clickInWindow(t, confirm, cw, "deny")
	pf.waitFor(t, 20*time.Second, "the agent's last reply", `document.getElementById('log').innerText.includes('Changed the prices remixlet.')`)
	for _, r := range api.requests() {
		if r != "GET /prices" {
			t.Errorf("the API saw %s", r)
		}
	}
}

const clipManifest = `{"name": "notes", "description": "Notes.", "api": 1, "matches": ["https://bank.test/*"], "permissions": [{"name": "storage", "reason": "keep notes"}, {"name": "clipboard", "reason": "copy notes"}]}`

// TestRedteamApproveCardOutlivesTheVersionItWasFor (time of check, time of use): the card for a
// version is worked out against the version running when it was saved. A chat on the shop
// changes the person's notes remixlet, which runs on the bank; while its card is open the person
// takes the clipboard permission away in the manager (which reloads the bank's tabs, not the
// shop's). Then they allow the card, which named the bank and help.bank.test but not the
// clipboard: what they allowed was the change from the old running version, and applying it now
// would give back the permission they had just removed, with no card naming it. It must not
// apply.
func TestRedteamApproveCardOutlivesTheVersionItWasFor(t *testing.T) {
	next := `{"name": "notes", "description": "Notes.", "api": 1, "matches": ["https://bank.test/*", "https://help.bank.test/*"], "permissions": [{"name": "storage", "reason": "keep notes"}, {"name": "clipboard", "reason": "copy notes"}]}`
	args, err := json.Marshal(map[string]any{"name": "notes", "manifest": json.RawMessage(next),
		"script": "await rmx.clipboard.write('from the page');", "note": "help pages too"})
	if err != nil {
		t.Fatal(err)
	}
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "write_remixlet", "arguments": `+string(args)+`}]},
		{"text": "Done with notes."}
	]}`, map[string]http.Handler{"shop.test": shopPage()})
	tab := aw.tab
	st := aw.proxy.Store
	rx := saveAndActivate(t, st, "notes", store.Files{sandbox.ManifestFile: []byte(clipManifest),
		sandbox.ScriptFile: []byte("rmx.log('v1');")})

	pf, f := askChat(t, tab, "https://shop.test/", "let notes run on the help pages")
	pf.waitFor(t, 30*time.Second, "a pending activation card", `!!document.querySelector('.card[data-card=activation][data-state=pending]')`)
	if rows := pf.eval(t, `document.querySelector('.card .card-rows').innerText`); !strings.Contains(rows, "help.bank.test") || strings.Contains(strings.ToLower(rows), "clipboard") {
		t.Fatalf("the card's rows = %q", rows)
	}

	// The person, in the manager, takes the clipboard away while the card is open.
	mt := e2etest.Browser(t, e2etest.ThroughProxy(aw.proxy)).NewTab(t)
	mt.Navigate("https://remix.proxy/manager/r/" + rx.ID + "/edit")
	e2etest.Eval[bool](mt, fmt.Sprintf(`(() => { document.getElementById('manifest').value = %q; return true; })()`,
		strings.Replace(clipManifest, `, {"name": "clipboard", "reason": "copy notes"}`, "", 1)))
	managerClick(t, mt, `#edit button[type=submit]`) // the manager takes a click once armed (manager_arm.js)
	mt.WaitFor(managerWait, "the person's change applied", `location.pathname === '/manager/r/`+rx.ID+`'`)
	if v, _, _ := st.Active(context.Background(), rx.ID); v.Author != store.AuthorPerson || v.Number != 3 {
		t.Fatalf("the active version is %d by %s, want the person's version 3", v.Number, v.Author)
	}

	confirmAllow(t, tab, pf, f, `.card[data-card=activation]`)
	pf.waitFor(t, 20*time.Second, "the agent's last reply", `document.getElementById('log').innerText.includes('Done with notes.')`)
	if s := pf.eval(t, `document.querySelector('.card[data-card=activation]').getAttribute('data-state')`); s != "stale" {
		t.Errorf("the card's state = %s, want stale (allowed, not applied)", s)
	}
	v, _, _ := st.Active(context.Background(), rx.ID)
	m, _ := sandbox.ParseManifest(v.Files[sandbox.ManifestFile])
	for _, p := range m.Permissions {
		if p.Name == sandbox.PermClipboard {
			t.Errorf("version %d by %s is active, with the clipboard permission the person removed after the card was shown; the card never named it", v.Number, v.Author)
		}
	}
	if v.Number != 3 {
		t.Errorf("the active version is %d, want the person's 3", v.Number)
	}
	reqs := aw.model.Requests()
	if last := reqs[len(reqs)-1].Messages; !strings.Contains(string(last[len(last)-1].Raw), "another version of it became active while the person was deciding") {
		t.Errorf("the model was told %s", head(string(last[len(last)-1].Raw), 400))
	}
}

// lookalikeNames spell the person's remixlet "notes" so that a card shows "notes": invisible
// characters (zero width, a bidirectional mark, a word joiner) and a Cyrillic letter.
var lookalikeNames = []string{"notes\u200b", "notes\u200e", "no\u2060tes", "n\u043etes"}

// TestRedteamApproveCardNamesTheRemixletItIsFor: the page has the agent ask for permissions, and
// save a remixlet, under names that look like the person's own "notes". A card must not let the
// person take a new remixlet for the one they know: such a name is refused, or the card says in
// its own words that the remixlet is new.
func TestRedteamApproveCardNamesTheRemixletItIsFor(t *testing.T) {
	var calls []string
	for _, n := range lookalikeNames {
		calls = append(calls, fmt.Sprintf(`{"tool_calls": [{"name": "request_permissions", "arguments": {"remixlet": %q, "permissions": ["clipboard"]}}]}`, n))
	}
	manifest, _ := json.Marshal(map[string]any{"name": lookalikeNames[3], "description": "Notes.", "api": 1,
		"matches": []string{"https://shop.test/*"}, "permissions": []map[string]string{{"name": "clipboard", "reason": "copy"}}})
	calls = append(calls, fmt.Sprintf(`{"tool_calls": [{"name": "write_remixlet", "arguments": {"manifest": %s, "script": "rmx.log('x');", "note": "n"}}]}`, manifest))
	aw := newAgentWorld(t, `{"turns": [`+strings.Join(calls, ",\n")+`, {"text": "All asked."}]}`,
		map[string]http.Handler{"shop.test": shopPage()})
	tab := aw.tab
	st := aw.proxy.Store
	saveAndActivate(t, st, "notes", store.Files{sandbox.ManifestFile: []byte(`{"name": "notes", "description": "Notes.", "api": 1, "matches": ["https://shop.test/*"], "permissions": [{"name": "storage", "reason": "keep"}]}`),
		sandbox.ScriptFile: []byte("rmx.log('v1');")})

	pf, f := askChat(t, tab, "https://shop.test/", "copy my notes")
	seen := 0
	for {
		pf.waitFor(t, 30*time.Second, "a pending card or the last reply", `!!document.querySelector('.card[data-state=pending]') || document.getElementById('log').innerText.includes('All asked.')`)
		if pf.eval(t, `String(!!document.querySelector('.card[data-state=pending]'))`) != "true" {
			break
		}
		seen++
		line := pf.eval(t, `document.querySelector('.card[data-state=pending] .card-remixlet').textContent`)
		kind := pf.eval(t, `document.querySelector('.card[data-state=pending]').getAttribute('data-card')`)
		if !strings.HasPrefix(line, "New remixlet ") {
			t.Errorf("the %s card for a remixlet that does not exist reads %q: nothing tells it from the person's \"notes\"", kind, line)
		}
		pf.waitFor(t, 5*time.Second, "the card to arm", `document.querySelector('.card[data-state=pending]').getAttribute('data-armed') === 'true'`)
		x, y := pointAt(t, tab, pf, f, ".card[data-state=pending] button.deny")
		clickAt(t, tab, x, y)
		pf.waitFor(t, 10*time.Second, "the card declined", fmt.Sprintf(`document.querySelectorAll('.card')[%d].getAttribute('data-state') === 'denied'`, seen-1))
	}
	// Every call was answered: by a card, or by a refusal of the name the model was told of.
	refused := 0
	for _, r := range aw.model.Requests() {
		if n := len(r.Messages); n > 0 && strings.Contains(string(r.Messages[n-1].Raw), "use plain text") {
			refused++
		}
	}
	if seen+refused != len(lookalikeNames)+1 {
		t.Errorf("%d cards and %d refusals for %d calls", seen, refused, len(lookalikeNames)+1)
	}
	t.Logf("%d cards shown and %d names refused for %d calls", seen, refused, len(lookalikeNames)+1)
}

// TestRedteamApproveCardSaysWhatAWildcardCovers: the page has the agent save a remixlet for
// "https://*.test/*" from a chat on shop.test — every site under the suffix .test. The card
// must say so, not show the pattern as if it were one more host.
func TestRedteamApproveCardSaysWhatAWildcardCovers(t *testing.T) {
	manifest := `{"name": "everywhere", "description": "x", "api": 1, "matches": ["https://shop.test/*", "https://*.test/*"], "permissions": []}`
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "write_remixlet", "arguments": {"manifest": `+manifest+`, "script": "rmx.log('x');", "note": "n"}}]},
		{"text": "Saved it."}
	]}`, map[string]http.Handler{"shop.test": shopPage()})
	pf, f := askChat(t, aw.tab, "https://shop.test/", "make it")
	pf.waitFor(t, 30*time.Second, "a pending activation card", `!!document.querySelector('.card[data-card=activation][data-state=pending]')`)
	if rows := pf.eval(t, `document.querySelector('.card .card-rows').innerText`); !strings.Contains(rows, "every site under .test") {
		t.Errorf("the card's rows = %q, want them to say that it runs on every site under .test", rows)
	}
	declineInPanel(t, aw.tab, pf, f)
	pf.waitFor(t, 20*time.Second, "the agent's last reply", `document.getElementById('log').innerText.includes('Saved it.')`)
}

// TestRedteamApproveCardTellsALookalikeThatRuns: the two-step way round "New remixlet". The page
// has the agent first save a lookalike of the person's "notes" (a Cyrillic "о") for this site
// with no permissions — which applies at once, with no card — and then ask for a permission for
// it. That card is about a remixlet that runs, so it is not "new"; it must still tell the person
// whose it is: made by the agent, just now, not their own.
func TestRedteamApproveCardTellsALookalikeThatRuns(t *testing.T) {
	manifest, _ := json.Marshal(map[string]any{"name": lookalikeNames[3], "description": "Notes.", "api": 1,
		"matches": []string{"https://shop.test/*"}})
	aw := newAgentWorld(t, fmt.Sprintf(`{"turns": [
		{"tool_calls": [{"name": "write_remixlet", "arguments": {"manifest": %s, "script": "rmx.log('x');", "note": "n"}}]},
		{"tool_calls": [{"name": "request_permissions", "arguments": {"remixlet": %q, "permissions": ["clipboard"]}}]},
		{"text": "All asked."}
	]}`, manifest, lookalikeNames[3]), map[string]http.Handler{"shop.test": shopPage()})
	tab := aw.tab
	saveAndActivate(t, aw.proxy.Store, "notes", store.Files{sandbox.ManifestFile: []byte(`{"name": "notes", "description": "Notes.", "api": 1, "matches": ["https://shop.test/*"], "permissions": [{"name": "clipboard", "reason": "copy"}]}`),
		sandbox.ScriptFile: []byte("rmx.log('v1');")})

	pf, f := askChat(t, tab, "https://shop.test/", "copy my notes")
	pf.waitFor(t, 30*time.Second, "a pending permission card", `!!document.querySelector('.card[data-card=permissions][data-state=pending]')`)
	line := pf.eval(t, `document.querySelector('.card[data-state=pending] .card-remixlet').textContent`)
	if !strings.Contains(line, "made by the agent") {
		t.Errorf("the card reads %q: nothing tells the agent's lookalike from the person's \"notes\"", line)
	}
	declineInPanel(t, tab, pf, f)
	pf.waitFor(t, 20*time.Second, "the agent's last reply", `document.getElementById('log').innerText.includes('All asked.')`)
}
