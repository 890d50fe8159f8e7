package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// A page can hold its own page-agent session on paths the proxy cannot close (NOTES, "A
// same-origin popup's page agent belongs to its opener"): Chromium reuses a popup's initial
// about:blank Window for the first same-origin document it loads, so an opener that patches the
// popup's built-ins right after window.open owns every built-in the popup's page agent captures,
// its socket included. The design that answers it: a session a page holds is worth nothing
// beyond the page's own origin. These tests play that opener.

// popupOpenerPage opens /victim on a real click and wraps the popup's WebSocket before the
// popup's page agent starts: window.stolen gets every message the proxy sends the popup's page
// agent, and window.sock is the popup agent's socket, to send on.
const popupOpenerPage = `<!doctype html><html><head><meta charset="utf-8"><title>Opener</title></head><body>
<h1>Opener</h1><p id="status">idle</p>
<button id="open" style="width:200px;height:60px">open</button>
<script>
window.stolen = [];
document.getElementById('open').onclick = () => {
  const w = window.open('/victim');
  window.popup = w;
  const W = w.WebSocket;
  w.WebSocket = function (u, p) {
    const s = new W(u, p);
    window.sock = s;
    s.addEventListener('message', (e) => window.stolen.push(String(e.data)));
    return s;
  };
  w.WebSocket.prototype = W.prototype;
};
</script></body></html>`

func popupSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/victim" {
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Victim</title></head><body><h1>Victim</h1><p id="status">idle</p></body></html>`)
			return
		}
		htmlPage(w, popupOpenerPage)
	})
}

// openHijackedPopup opens the popup with a real click and waits until the opener has the popup
// agent's socket and a message of type typ from the proxy on it (proof that the hijack worked,
// so that a test of what it cannot do does not pass for want of an attack). It returns that
// message.
func openHijackedPopup(t *testing.T, tab *e2etest.Tab, typ string, diagnose func() string) map[string]any {
	t.Helper()
	if _, err := chromedp.Run(tab.Context(), chromedp.Click("#open", chromedp.NodeVisible)); err != nil {
		t.Fatalf("clicking the opener's button: %v", err)
	}
	var got map[string]any
	for deadline := time.Now().Add(15 * time.Second); got == nil; time.Sleep(100 * time.Millisecond) {
		for _, s := range e2etest.Eval[[]string](tab, `window.stolen`) {
			var m map[string]any
			if json.Unmarshal([]byte(s), &m) == nil && m["type"] == typ {
				got = m
			}
		}
		if got == nil && time.Now().After(deadline) {
			t.Fatalf("the opener did not see a %q message on its popup's socket (the hijack did not happen, so this test would prove nothing)\nstolen: %v\n%s",
				typ, e2etest.Eval[[]string](tab, `window.stolen`), diagnose())
		}
	}
	return got
}

// TestHijackedPopupCannotRunAMenuCommand: a remixlet's menu command runs on the person's click
// only. A page holding the popup's session knows the command's listener (the Menu message) and
// sends the Event a click would; the command must not run.
func TestHijackedPopupCannotRunAMenuCommand(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"popup.test": popupSite()}, e2etest.WithStore())
	rx := saveAndActivate(t, p.Store, "commands", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "commands", "description": "A command.", "api": 1,
			"matches": ["https://popup.test/*"], "permissions": [{"name": "menu", "reason": "test"}]}`),
		sandbox.ScriptFile: []byte(`await rmx.menu.add('expand', 'Expand', async (e) => { rmx.log('MENU', e.type, e.id); });
rmx.log('MENU ADDED');`),
	})
	diagnose := func() string {
		return remixletLog(t, p.Store, rx.ID) + "\n" + tail(p.Logs(), 3000) + "\n" + tab.Diagnose()
	}
	tab.Navigate("https://popup.test/")
	tab.WaitConnected()

	menu := openHijackedPopup(t, tab, "menu", diagnose)
	if cmds, _ := menu["commands"].([]any); len(cmds) != 1 {
		t.Fatalf("menu message without its command: %v", menu)
	}
	// The callback is a sandbox listener with a small number; the page tries them all.
	e2etest.Eval[bool](tab, `(() => { for (let l = 1; l <= 64; l++) window.sock.send(JSON.stringify({type: 'event', remixlet: `+jsString(fmt.Sprint(menu["remixlet"]))+`, listener: l, event: {type: 'menu', id: 'forged'}})); return true; })()`)
	// The forged click would run at once (the proxy dispatches an Event as it reads it).
	time.Sleep(3 * time.Second)
	if log := remixletLog(t, p.Store, rx.ID); strings.Contains(log, "MENU menu forged") {
		t.Fatalf("a page holding its popup's session ran a remixlet's menu command without the person's click:\n%s", log)
	}
}
