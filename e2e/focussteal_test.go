package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// focusStealBody puts an input of the remixlet's own off the screen, focuses it once (the
// control: "own focus ok"), then waits for the person to be in the page's password field and,
// 300 ms later, takes the focus to its input and reads what is typed there (its value, and its
// key events).
const focusStealBody = `const box = await dom.create({ tag: 'input', attrs: { class: 'rx-box' } });
await dom.insert(await dom.query('body'), box);
await dom.focus(box);
await rmx.storage.set('control', (await dom.query('.rx-box:focus')) ? 'own focus ok' : 'no focus');
let keys = '';
await dom.on(box, 'keydown', (e) => { keys += (e && e.key) || '?'; rmx.storage.set('keys', keys); });
await rmx.storage.set('ready', 'yes');
let stolen = false;
for (let i = 0; i < 300; i++) {
  if (!stolen && await dom.query('#pw:focus')) {
    await new Promise((r) => setTimeout(r, 300));
    try { await dom.focus(box); stolen = true; } catch (e) { await rmx.storage.set('clicked', 'refused: ' + e.message); break; }
  }
  const v = await dom.value(box);
  if (v) { await rmx.storage.set('clicked', 'read ' + v); break; }
  await new Promise((r) => setTimeout(r, 50));
}`

// TestRedteamRemixletTakesNoFocusFromAPassword: while the person types a password, a remixlet
// with no permission moves the focus to an input of its own off the screen — by dom.focus, or by
// dom.click on a label of that input — and the rest of the password goes there. It must read
// nothing of it (reviewc8, measured before the fix: "read nter2"): an own input the focus came to
// from a secret field, not by the person, reads back empty, as a password
// (rx_mirrors.js noteFocusArrives). Its dom.focus works elsewhere (the control).
func TestRedteamRemixletTakesNoFocusFromAPassword(t *testing.T) {
	byLabel := strings.NewReplacer("try { await dom.focus(box);", "try { await dom.click(lab);",
		"await dom.insert(await dom.query('body'), box);\n", "await dom.insert(await dom.query('body'), box);\n"+
			"await dom.setAttr(box, 'id', 'rxbox');\n"+
			"const lab = await dom.create({ tag: 'label', attrs: { for: 'rxbox' }, text: 'x' });\n"+
			"await dom.insert(await dom.query('body'), lab);\n").Replace(focusStealBody)
	editable := strings.NewReplacer("dom.create({ tag: 'input', attrs: { class: 'rx-box' } })",
		"dom.create({ tag: 'div', attrs: { class: 'rx-box', contenteditable: 'true' } })",
		"await dom.value(box)", "await dom.text(box)").Replace(focusStealBody)
	for _, tt := range []struct{ name, body string }{{"dom.focus", focusStealBody}, {"a click on its label", byLabel}, {"an editable div of its own", editable}} {
		t.Run(tt.name, func(t *testing.T) {
			wit := &witness{}
			h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": strengthSite(1), "witness.test": wit})
			rx := h.addPolicy([]policyCase{{name: "focus steal", body: tt.body, style: ".rx-box { position: fixed; left: -1000px; width: 50px; height: 20px }"}}, "https://fields.test/strength")
			openStrength(t, h, "/strength", rx[0])
			if v := h.storedString(rx[0], "control"); v != "own focus ok" {
				t.Fatalf("control: the remixlet's dom.focus of its own input gave %q, want \"own focus ok\"\n%s", v, h.diagnose(rx[0]))
			}
			h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, "hu"}}, `document.getElementById('pw').value === 'hu'`)
			time.Sleep(1500 * time.Millisecond)
			h.rtFieldsType([][2]string{{`0`, "nter2"}}, `true`)
			time.Sleep(1500 * time.Millisecond)
			if got := e2etest.Eval[string](h.tab, `document.getElementById('pw').value`); got != rtFieldsPassword {
				t.Errorf("the password field holds %q, want %q: the person's keys went to the remixlet's element", got, rtFieldsPassword)
			}
			if v := h.storedString(rx[0], "clicked"); v != "" {
				t.Errorf("the remixlet stored %q: it read what the person typed after its focus move", v)
			}
			if v := h.storedString(rx[0], "keys"); v != "" {
				t.Errorf("the remixlet's keydown listener got %q: the keys the person typed after its focus move", v)
			}
		})
	}
}
