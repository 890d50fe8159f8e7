package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// focusStealBody puts an input of the remixlet's own off the screen, focuses it once (the
// control: "own focus ok"), then waits for the person to be in the page's password field and,
// 300 ms later, takes the focus to its input and reads what is typed there.
const focusStealBody = `const box = await dom.create({ tag: 'input', attrs: { class: 'rx-box' } });
await dom.insert(await dom.query('body'), box);
await dom.focus(box);
await rmx.storage.set('control', (await dom.query('.rx-box:focus')) ? 'own focus ok' : 'no focus');
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

// TestRedteamRemixletTakesNoFocusFromAPassword: a remixlet with no permission may not take the
// focus from the page's password field while the person types: the rest of the password would
// go into the remixlet's own input, whose value it reads (reviewc8, measured: "read nter2").
// Its dom.focus works elsewhere (the control).
func TestRedteamRemixletTakesNoFocusFromAPassword(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": strengthSite(1), "witness.test": wit})
	rx := h.addPolicy([]policyCase{{name: "focus steal", body: focusStealBody, style: ".rx-box { position: fixed; left: -1000px }"}}, "https://fields.test/strength")
	openStrength(t, h, "/strength", rx[0])
	if v := h.storedString(rx[0], "control"); v != "own focus ok" {
		t.Fatalf("control: the remixlet's dom.focus of its own input gave %q, want \"own focus ok\"\n%s", v, h.diagnose(rx[0]))
	}
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, "hu"}}, `document.getElementById('pw').value === 'hu'`)
	time.Sleep(1500 * time.Millisecond)
	h.rtFieldsType([][2]string{{`0`, "nter2"}}, `true`)
	time.Sleep(1500 * time.Millisecond)
	if got := e2etest.Eval[string](h.tab, `document.getElementById('pw').value`); got != rtFieldsPassword {
		t.Errorf("the password field holds %q, want %q: the person's keys went elsewhere", got, rtFieldsPassword)
	}
	if v := h.storedString(rx[0], "clicked"); len(v) < 8 || v[:8] != "refused:" {
		t.Errorf("the remixlet stored %q, want its dom.focus refused", v)
	}
}
