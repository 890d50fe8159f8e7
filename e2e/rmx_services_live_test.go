package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRMXServicesOfARemixletSavedInTheChatsTab: on a page where no remixlet ran at its load, the
// page agent did not capture the services' interfaces (panel/pageagent/services.js). The agent
// saves a remixlet there from the chat, which starts it in the chat's own tab without a reload:
// its toast shows, and its clipboard write answers, in its log, that the page must be reloaded
// (a named usability cost, NOTES.services14.md).
func TestRMXServicesOfARemixletSavedInTheChatsTab(t *testing.T) {
	manifest := `{"name": "live services", "description": "Notifies and copies.", "api": 1, "matches": ["https://svc.test/*"], "permissions": [{"name": "notifications", "reason": "tell"}, {"name": "clipboard", "reason": "copy"}]}`
	script := `await rmx.notify('switched on live', 'body'); rmx.log('NOTIFIED'); try { await rmx.clipboard.write('x'); rmx.log('CLIP written'); } catch (e) { rmx.log('CLIP refused:', e.message); }`
	scriptJSON, _ := json.Marshal(script)
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "write_remixlet", "arguments": {"manifest": `+manifest+`, "script": `+string(scriptJSON)+`, "note": "first"}}]},
		{"text": "Saved."}
	]}`, map[string]http.Handler{"svc.test": servicesSite()})
	tab := aw.tab
	pf, f := askChat(t, tab, "https://svc.test/", "notify me and copy")
	card := `.card[data-state=pending]`
	pf.waitFor(t, 20*time.Second, "a pending permission card", `!!document.querySelector('`+card+`')`)
	confirmAllow(t, tab, pf, f, card)
	pf.waitFor(t, 30*time.Second, "the reply after saving", `document.getElementById('log').innerText.includes('Saved.')`)
	rx, err := aw.proxy.Store.Remixlet(context.Background(), "live services")
	if err != nil || rx.ActiveVersionID == 0 {
		t.Fatalf("live services = %+v, %v; want active\n%s", rx, err, aw.diagnose())
	}
	w := &servicesWorld{p: aw.proxy, st: aw.proxy.Store, tab: tab, rx: rx}
	w.waitLogLine(t, 15*time.Second, "NOTIFIED")
	w.waitLogLine(t, 10*time.Second, "CLIP refused")
	if log := remixletLog(t, w.st, rx.ID); !strings.Contains(log, "reload the page to let this remixlet write the clipboard") {
		t.Errorf("the clipboard refusal does not name the reload:\n%s", log)
	}
	if got, want := toastText(w.waitToast(t)), "live servicesswitched on livebody"; got != want {
		t.Errorf("toast text = %q, want %q", got, want)
	}
}
