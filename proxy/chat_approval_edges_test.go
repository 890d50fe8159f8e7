package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// OPEN-ITEMS 104, below the browser: a scripted model using the approval edge cases.

// cardOrSaved waits for the next save's pending activation card (act), or for its answer when
// it applied without one (w).
func (cf *chatFixture) cardOrSaved(t *testing.T) (act, w map[string]any) {
	t.Helper()
	w = cf.waitItem(t, "a save's card or its answer", func(it map[string]any) bool {
		if it["kind"] == "card" && it["card"] == "activation" && it["state"] == "pending" {
			act = it
			return true
		}
		return toolDone("write_remixlet")(it)
	})
	return act, w
}

// TestChatPermissionGrantIsUsedWhole: the person allows storage and clipboard on one card; a
// save using storage alone applies with it, and the whole Allow is spent: a second save adding
// clipboard within the ten minutes gets the activation card (the person allowed one save, not
// a stock of permissions).
func TestChatPermissionGrantIsUsedWhole(t *testing.T) {
	one := `{"name": "kept", "description": "kept", "api": 1, "matches": ["https://example.com/*"], "permissions": [{"name": "storage", "reason": "r"}]}`
	two := `{"name": "kept", "description": "kept", "api": 1, "matches": ["https://example.com/*"], "permissions": [{"name": "storage", "reason": "r"}, {"name": "clipboard", "reason": "r"}]}`
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "request_permissions", "arguments": {"remixlet": "kept", "permissions": ["storage", "clipboard"]}}]},
		{"tool_calls": [{"name": "write_remixlet", "arguments": {"manifest": `+one+`, "script": "rmx.log(1)", "note": "first"}}]},
		{"tool_calls": [{"name": "write_remixlet", "arguments": {"name": "kept", "manifest": `+two+`, "script": "rmx.log(2)", "note": "second"}}]},
		{"text": "done"}
	]}`)
	cf.say(t, map[string]string{"type": "send", "text": "keep it"})
	perm := cf.pendingCard(t, "permissions")
	cf.confirm(t, perm["id"], true)
	if w := cf.waitItem(t, "the first save", toolDone("write_remixlet")); !strings.Contains(fmt.Sprint(w["result"]), "with the permissions the person allowed") {
		t.Fatalf("first write_remixlet = %v, want it applied with the grant", w["result"])
	}
	act, w := cf.cardOrSaved(t)
	if act == nil {
		t.Fatalf("the second save (clipboard added) applied without a card: %v", w["result"])
	}
	if rows := fmt.Sprint(act["rows"]); !strings.Contains(rows, "clipboard") && !strings.Contains(rows, "Clipboard") {
		t.Errorf("activation rows = %s, want the clipboard permission", rows)
	}
	cf.decline(t, act["id"])
	if w := cf.waitItem(t, "the second save", toolDone("write_remixlet")); !strings.Contains(fmt.Sprint(w["result"]), "Don't allow") {
		t.Errorf("second write_remixlet = %v", w["result"])
	}
	cf.waitIdle(t)
	rx, _ := cf.remixlet(t, "kept")
	if got := activeScript(t, cf.st, rx.ID); got != "rmx.log(1)" {
		t.Errorf("active script %q, want the first save's", got)
	}
}

// TestChatUnreadableActiveVersionNeedsACard: a remixlet whose active manifest no longer
// parses (an older or damaged store: here an unknown api version) is not "no version": what
// the person allowed for it cannot be read, so an agent's save replacing it, even without
// permissions on the chat's own site, waits for the person's card.
func TestChatUnreadableActiveVersionNeedsACard(t *testing.T) {
	next := `{"name": "old one", "description": "d", "api": 1, "matches": ["https://example.com/*"], "permissions": []}`
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "write_remixlet", "arguments": {"name": "old one", "manifest": `+next+`, "script": "rmx.log('new')", "note": "replace"}}]},
		{"text": "done"}
	]}`)
	bad := `{"name": "old one", "api": 1, "matches": ["https://example.com/*", "https://bank.test/*"], "permissions": [{"name": "storage", "reason": "r"}], "future_field": true}`
	if _, probs := sandbox.ParseManifest([]byte(bad)); len(probs) == 0 {
		t.Fatal("the stored manifest parses; the test needs one that does not")
	}
	rx := personRemixlet(t, cf.st, "old one", store.Files{sandbox.ManifestFile: []byte(bad), sandbox.ScriptFile: []byte("rmx.log('old')")})
	cf.say(t, map[string]string{"type": "send", "text": "replace it"})
	act, w := cf.cardOrSaved(t)
	if act == nil {
		t.Fatalf("the save replaced an unreadable active version without a card: %v", w["result"])
	}
	if rows := fmt.Sprint(act["rows"]); !strings.Contains(rows, "can no longer be read") {
		t.Errorf("activation rows = %s, want the unreadable version named", rows)
	}
	cf.decline(t, act["id"])
	cf.waitItem(t, "the save", toolDone("write_remixlet"))
	cf.waitIdle(t)
	if got := activeScript(t, cf.st, rx.ID); got != "rmx.log('old')" {
		t.Errorf("active script %q, want the old one kept", got)
	}
}
