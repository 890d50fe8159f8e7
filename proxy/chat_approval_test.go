package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/proxy/chat"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// Issue 11 (agent containment), holes 1 and 4, below the browser: an obeying scripted model
// rewrites remixlets the person approved; the store's policy, asked with the chat page's host,
// puts every such change in front of the person with the proxy's words and the diff of the
// code, and a grant from a permission card never stands in for it. e2e/containment_rewrite_test.go
// runs the same attacks in Chromium.

// personRemixlet saves files as a remixlet the person wrote and approved (manager or CLI).
func personRemixlet(t *testing.T, st *store.Store, name string, files store.Files) store.Remixlet {
	t.Helper()
	rx, _ := storetest.Create(t, st, name, files)
	return rx
}

// confirmWindowItem is what a confirmation window opened for card id is shown: the card as the
// proxy sends it on a role=confirm connection.
func (cf *chatFixture) confirmWindowItem(t *testing.T, id any) map[string]any {
	t.Helper()
	c, err := cf.dialWS("wss://remix.proxy/panel/ws?role=confirm&t="+url.QueryEscape(cf.panelToken), "https://remix.proxy")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(websocket.StatusNormalClosure, "")
	for deadline := time.Now().Add(5 * time.Second); ; {
		m, err := readMsg(t, c)
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("the confirmation window never got card %v: %v", id, err)
		}
		if it, _ := m["item"].(map[string]any); m["type"] == "item" && it["id"] == id {
			return it
		}
	}
}

// decline clicks "Don't allow" / "Not now" on a card in the panel once it is armed.
func (cf *chatFixture) decline(t *testing.T, id any) {
	t.Helper()
	time.Sleep(chat.CardArmAfter)
	cf.say(t, map[string]any{"type": "decide", "id": id, "allow": false})
}

// pendingCard waits for a pending card of the kind.
func (cf *chatFixture) pendingCard(t *testing.T, kind string) map[string]any {
	t.Helper()
	return cf.waitItem(t, "a pending "+kind+" card", func(it map[string]any) bool {
		return it["kind"] == "card" && it["card"] == kind && it["state"] == "pending"
	})
}

// diffLines writes a card's diff as "file: OP TEXT" lines.
func diffLines(it map[string]any) string {
	var ds []struct {
		File  string `json:"file"`
		Lines []struct {
			Op   string `json:"op"`
			Text string `json:"text"`
		} `json:"lines"`
	}
	b, _ := json.Marshal(it["diff"])
	json.Unmarshal(b, &ds)
	var out strings.Builder
	for _, d := range ds {
		for _, l := range d.Lines {
			fmt.Fprintf(&out, "%s: %s%s\n", d.File, l.Op, l.Text)
		}
	}
	return out.String()
}

func activeScript(t *testing.T, st *store.Store, id string) string {
	t.Helper()
	v, ok, err := st.Active(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("active version of %s: %v (found %v)", id, err, ok)
	}
	return string(v.Files[sandbox.ScriptFile])
}

// TestChatRewriteOnAnotherSiteNeedsAllow (hole 1): a remixlet the person approved for the
// chat's site and bank.test, with storage, rewritten from a chat on the chat's site. A grant for
// storage from a permission card does not apply it; the activation card names bank.test and the
// confirmation window gets the diff; "Don't allow" keeps the old code.
func TestChatRewriteOnAnotherSiteNeedsAllow(t *testing.T) {
	manifest := `{"name": "notes", "description": "notes", "api": 1, "matches": ["https://example.com/*", "https://bank.test/*"], "permissions": [{"name": "storage", "reason": "keep notes"}]}`
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "request_permissions", "arguments": {"remixlet": "notes", "permissions": ["storage"]}}]},
		{"tool_calls": [{"name": "write_remixlet", "arguments": {"name": "notes", "manifest": `+manifest+`, "script": "const b = await dom.query('#balance'); if (b) await rmx.storage.set('b', await dom.text(b));", "note": "as the page asked"}}]},
		{"text": "done"}
	]}`)
	rx := personRemixlet(t, cf.st, "notes", store.Files{sandbox.ManifestFile: []byte(manifest), sandbox.ScriptFile: []byte("rmx.log('notes')")})
	cf.say(t, map[string]string{"type": "send", "text": "tidy the notes remixlet"})
	perm := cf.pendingCard(t, "permissions")
	cf.confirm(t, perm["id"], true)

	act := cf.pendingCard(t, "activation")
	rows := fmt.Sprint(act["rows"])
	if !strings.Contains(rows, "Change code that also runs on other sites than this page's (example.com): bank.test") {
		t.Errorf("activation rows = %s, want bank.test named as another site the code runs on", rows)
	}
	if strings.Contains(fmt.Sprint(act), "keep notes") || strings.Contains(fmt.Sprint(act["rows"]), "as the page asked") {
		t.Error("the card shows the model's words")
	}
	shown := cf.confirmWindowItem(t, act["id"])
	if d := diffLines(shown); !strings.Contains(d, "script.js: -rmx.log('notes')") || !strings.Contains(d, "script.js: +const b = await dom.query('#balance')") {
		t.Errorf("the confirmation window's diff =\n%s\nwant the old line removed and the new one added", d)
	}
	cf.decline(t, act["id"])
	w := cf.waitItem(t, "write_remixlet done", toolDone("write_remixlet"))
	if !strings.Contains(fmt.Sprint(w["result"]), "Don't allow") {
		t.Errorf("write_remixlet result = %v, want the refusal", w["result"])
	}
	cf.waitIdle(t)
	if got := activeScript(t, cf.st, rx.ID); got != "rmx.log('notes')" {
		t.Errorf("active script = %q, want the person's", got)
	}
}

// TestChatRewriteUnderFetchNeedsAllow (hole 4): a remixlet holding fetch:api.example.com,
// rewritten from a same-site chat into code that POSTs as the person, with API access off. An
// Allow on a permission card for the same permission does not apply it; the card names the
// permission at stake and carries the diff; "Don't allow" keeps the old code.
func TestChatRewriteUnderFetchNeedsAllow(t *testing.T) {
	manifest := `{"name": "prices", "description": "prices", "api": 1, "matches": ["https://example.com/*"], "permissions": [{"name": "fetch:api.example.com", "reason": "read prices"}]}`
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "request_permissions", "arguments": {"remixlet": "prices", "permissions": ["fetch:api.example.com"]}}]},
		{"tool_calls": [{"name": "write_remixlet", "arguments": {"name": "prices", "manifest": `+manifest+`, "script": "await rmx.fetch('https://api.example.com/orders', {method: 'POST', body: '{\"qty\": 99}'});", "note": "order"}}]},
		{"text": "done"}
	]}`)
	rx := personRemixlet(t, cf.st, "prices", store.Files{sandbox.ManifestFile: []byte(manifest), sandbox.ScriptFile: []byte("await rmx.fetch('https://api.example.com/prices');")})
	cf.say(t, map[string]string{"type": "send", "text": "show prices"})
	perm := cf.pendingCard(t, "permissions")
	cf.confirm(t, perm["id"], true)

	act := cf.pendingCard(t, "activation")
	if rows := fmt.Sprint(act["rows"]); rows != "[Run new code with a permission you allowed for its old code: Send requests to api.example.com as you, with your cookies]" {
		t.Errorf("activation rows = %s, want the permission at stake", rows)
	}
	if d := diffLines(act); !strings.Contains(d, "script.js: -await rmx.fetch('https://api.example.com/prices');") ||
		!strings.Contains(d, `script.js: +await rmx.fetch('https://api.example.com/orders', {method: 'POST'`) {
		t.Errorf("the card's diff =\n%s\nwant the GET removed and the POST added", d)
	}
	cf.decline(t, act["id"])
	cf.waitItem(t, "write_remixlet done", toolDone("write_remixlet"))
	cf.waitIdle(t)
	if got := activeScript(t, cf.st, rx.ID); !strings.Contains(got, "/prices") {
		t.Errorf("active script = %q, want the person's", got)
	}
}

// TestChatSameSiteRewriteNeedsNoCard: the ordinary flow stays click-free — a same-site change of
// a remixlet without network permissions (storage is not one) applies at once.
func TestChatSameSiteRewriteNeedsNoCard(t *testing.T) {
	manifest := `{"name": "tidy", "description": "tidy", "api": 1, "matches": ["https://example.com/*"], "permissions": [{"name": "storage", "reason": "r"}]}`
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "write_remixlet", "arguments": {"name": "tidy", "manifest": `+manifest+`, "script": "rmx.log('v2')", "style": ".promoted { display: none }", "note": "v2"}}]},
		{"text": "done"}
	]}`)
	rx := personRemixlet(t, cf.st, "tidy", store.Files{sandbox.ManifestFile: []byte(manifest), sandbox.ScriptFile: []byte("rmx.log('v1')")})
	cf.say(t, map[string]string{"type": "send", "text": "hide the ads too"})
	w := cf.waitItem(t, "write_remixlet done", toolDone("write_remixlet"))
	if w["status"] != "ok" || !strings.Contains(fmt.Sprint(w["result"]), "applied it (no approval needed") {
		t.Fatalf("write_remixlet = %v, want applied without a card", w)
	}
	cf.waitIdle(t)
	if got := activeScript(t, cf.st, rx.ID); got != "rmx.log('v2')" {
		t.Errorf("active script = %q, want the new version's", got)
	}
	if strings.Contains(cf.raw.String(), `"kind":"card"`) {
		t.Error("a card was shown")
	}
}

// TestChatGrantAppliesNewPermissionOnly: a grant from a permission card still applies a save
// that needs nothing else — a new permission that reaches no network (clipboard) for a
// same-site remixlet — and only that. (A network permission's save shows its code on a card:
// TestChatNetworkGrantShowsCode.)
func TestChatGrantAppliesNewPermissionOnly(t *testing.T) {
	v1 := `{"name": "kilo", "description": "d", "api": 1, "matches": ["https://example.com/*"], "permissions": []}`
	v2 := `{"name": "kilo", "description": "d", "api": 1, "matches": ["https://example.com/*"], "permissions": [{"name": "clipboard", "reason": "r"}]}`
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "request_permissions", "arguments": {"remixlet": "kilo", "permissions": ["clipboard"]}}]},
		{"tool_calls": [{"name": "write_remixlet", "arguments": {"name": "kilo", "manifest": `+v2+`, "script": "rmx.log('kilo v2');", "note": "v2"}}]},
		{"text": "done"}
	]}`)
	rx := personRemixlet(t, cf.st, "kilo", store.Files{sandbox.ManifestFile: []byte(v1), sandbox.ScriptFile: []byte("rmx.log('v1')")})
	cf.say(t, map[string]string{"type": "send", "text": "copy the price per kilo"})
	perm := cf.pendingCard(t, "permissions")
	cf.confirm(t, perm["id"], true)
	w := cf.waitItem(t, "write_remixlet done", toolDone("write_remixlet"))
	if !strings.Contains(fmt.Sprint(w["result"]), "with the permissions the person allowed") {
		t.Fatalf("write_remixlet = %v, want applied with the grant", w)
	}
	cf.waitIdle(t)
	if got := activeScript(t, cf.st, rx.ID); !strings.Contains(got, "kilo v2") {
		t.Errorf("active script = %q, want the new version's", got)
	}
}

// TestChatReplyLinksStayOnSite: links in the model's reply to another site are text with the
// host; links to the chat page's site stay links.
func TestChatReplyLinksStayOnSite(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "outline"}]},
		{"text": "Your [cart](https://www.example.com/cart) and the [details](https://witness.test/c?d={{grab:paragraph \"([a-z]+)\"}}), also https://witness.test/raw"}
	]}`)
	cf.say(t, map[string]string{"type": "send", "text": "what is on the page?"})
	reply := cf.waitItem(t, "the reply", func(it map[string]any) bool {
		return it["kind"] == "assistant" && strings.Contains(textOf(it), "details")
	})
	md := textOf(reply)
	if !strings.Contains(md, `"h":"https://www.example.com/cart"`) {
		t.Errorf("the same-site link is gone: %s", md)
	}
	if strings.Contains(md, `"h":"https://witness.test`) {
		t.Errorf("a link to the witness was kept: %s", md)
	}
	if !strings.Contains(md, "details (another site: witness.test)") || strings.Contains(md, "d=ad") {
		t.Errorf("the witness link is not text with its host alone: %s", md)
	}
	cf.waitIdle(t)
}
