package e2e

import (
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

// A page can hold its own page-agent session on paths the proxy cannot close (NOTES, "A
// same-origin popup's page agent belongs to its opener"): Chromium reuses a popup's initial
// about:blank Window for the first same-origin document it loads, so an opener that patches the
// popup's built-ins right after window.open owns every built-in the popup's page agent captures,
// its socket included. The design that answers it: a session a page holds is worth nothing
// beyond the page's own origin. This test plays that opener (popSite, redteam_session_test.go,
// has the others).

// hijackedPopupMessage opens popSite's popup (redteam_session_test.go) with a real click, the
// opener taking over the popup's session, and waits until the opener has seen a message of type
// typ from the proxy on it (proof that the hijack worked, so that a test of what it cannot do
// does not pass for want of an attack). It returns that message.
func hijackedPopupMessage(t *testing.T, tab *e2etest.Tab, typ string, diagnose func() string) map[string]any {
	t.Helper()
	e2etest.Eval[bool](tab, `(window.hijack = true)`)
	openPopup(t, tab)
	var got map[string]any
	for deadline := time.Now().Add(15 * time.Second); got == nil; time.Sleep(100 * time.Millisecond) {
		for _, s := range e2etest.Eval[[]string](tab, `window.seen`) {
			var m map[string]any
			if json.Unmarshal([]byte(s), &m) == nil && m["type"] == typ {
				got = m
			}
		}
		if got == nil && time.Now().After(deadline) {
			t.Fatalf("the opener did not see a %q message on its popup's socket (the hijack did not happen, so this test would prove nothing)\nseen: %v\n%s",
				typ, e2etest.Eval[[]string](tab, `window.seen`), diagnose())
		}
	}
	return got
}

// TestHijackedPopupCannotRunAMenuCommand: a remixlet's menu command runs on the person's click
// only. A page holding the popup's session knows the command's listener (the Menu message) and
// sends the Event a click would; the command must not run.
func TestHijackedPopupCannotRunAMenuCommand(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"popup.test": popSite()}, e2etest.WithStore())
	rx := saveAndActivate(t, p.Store, "commands", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "commands", "description": "A command.", "api": 1,
			"matches": ["https://popup.test/*"], "permissions": [{"name": "menu", "reason": "test"}]}`),
		sandbox.ScriptFile: []byte(`await rmx.menu.add('expand', 'Expand', async (e) => { rmx.log('MENU', e.type, e.id); });
rmx.log('MENU ADDED');`),
	})
	diagnose := func() string {
		return remixletLog(t, p.Store, rx.ID) + "\n" + tail(p.Logs(), 3000) + "\n" + tab.Diagnose()
	}
	tab.Navigate("https://popup.test/a")
	tab.WaitConnected()

	menu := hijackedPopupMessage(t, tab, "menu", diagnose)
	if cmds, _ := menu["commands"].([]any); len(cmds) != 1 {
		t.Fatalf("menu message without its command: %v", menu)
	}
	// The callback is a sandbox listener with a small number; the page tries them all.
	e2etest.Eval[bool](tab, `(() => { for (let l = 1; l <= 64; l++) window.popupSock.send(JSON.stringify({type: 'event', remixlet: `+jsString(fmt.Sprint(menu["remixlet"]))+`, listener: l, event: {type: 'menu', id: 'forged'}})); return true; })()`)
	// The forged click would run at once (the proxy dispatches an Event as it reads it).
	time.Sleep(3 * time.Second)
	if log := remixletLog(t, p.Store, rx.ID); strings.Contains(log, "MENU menu forged") {
		t.Fatalf("a page holding its popup's session ran a remixlet's menu command without the person's click:\n%s", log)
	}
}
