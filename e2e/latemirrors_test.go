package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
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
  timer = setTimeout(() => {
    const n = pw.value.length;
    deb.dataset.dlen = String(n);
    deb.setAttribute('aria-label', n + ' characters');
    document.getElementById('counter').textContent = n + ' / 64';
    document.getElementById('strength').textContent = n < 8 ? 'Weak' : 'Strong';
    document.body.dataset.debounced = String(n);
  }, 300);
});
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
	})
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
await rmx.storage.set('read', JSON.stringify({ after, control }));`}

// TestRedteamLateMirrorsReadBlank: a remixlet reads the page's debounced length and strength
// mirrors before the typing (the markup's values) and blank after it, also through a clone and
// the element around them; what the page wrote before the typing, and what the remixlet wrote
// itself while the password was held, still read back.
func TestRedteamLateMirrorsReadBlank(t *testing.T) {
	wit := &witness{}
	h := startHostileWorld(t, wit, map[string]http.Handler{"fields.test": lateMirrorsSite(1), "witness.test": wit})
	cases := []policyCase{lateMirrorsReader}
	rxs := h.addPolicy(cases, "https://fields.test/late*")
	h.tab.Navigate("https://fields.test/late")
	h.tab.WaitConnected()
	h.tab.WaitFor(10*time.Second, "the page's script", pageScriptRan)
	v := h.waitStored(rxs[0], "before", "", 20*time.Second)
	if want := `["0","0 characters","0 / 64","Empty","0 / 64 Empty","0 / 64 Empty"]`; v != want {
		t.Fatalf("before the typing the remixlet read %s, want %s (the oracle must answer then, or the test proves nothing)\n%s", v, want, h.diagnose(rxs[0]))
	}
	h.rtFieldsType([][2]string{{`document.getElementById('pw').focus()`, rtFieldsPassword}}, `document.getElementById('pw').value === '`+rtFieldsPassword+`'`)
	if err := waitTrue(h.tab, 10*time.Second, `document.body.dataset.debounced === '7' && document.getElementById('counter').textContent === '7 / 64'`); err != nil {
		t.Fatalf("the page's debounced mirrors were never written: %v", err)
	}
	h.rtFieldsGo(cases, rxs)
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
