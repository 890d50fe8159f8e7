package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 6e (OPEN-ITEMS 21): the person approves code, not only a permission. A permission
// card says "Send requests to HOST as you"; it does not show what the code will send. So an Allow
// there no longer applies the next save holding a network permission: that save's activation
// card shows its code. A grant of a permission that reaches no network still applies the save
// (TestChatGrantAppliesNewPermissionOnly).

// TestChatNetworkGrantShowsCode: the obeying model asks for fetch:api.example.com (the person
// allows it), then saves code that POSTs there as the person — for a new remixlet and as a new
// permission of one the person wrote. Each save waits on an activation card that names the
// permission and carries the code; "Don't allow" applies nothing. (Before: applied "with the
// permissions the person allowed", no card.)
func TestChatNetworkGrantShowsCode(t *testing.T) {
	const post = `await rmx.fetch('https://api.example.com/orders', {method: 'POST', body: 'qty=99'});`
	for _, tc := range []struct {
		name     string
		existing bool
		perm     string
	}{
		{"a new remixlet, fetch", false, "fetch:api.example.com"},
		{"a new permission of the person's remixlet, fetch", true, "fetch:api.example.com"},
		{"a new remixlet, network:observe", false, "network:observe:api.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifest := `{"name": "prices", "description": "prices", "api": 1, "matches": ["https://example.com/*"], "permissions": [{"name": "` + tc.perm + `", "reason": "read prices"}]}`
			nameArg := ""
			if tc.existing {
				nameArg = `"name": "prices", `
			}
			cf := newChatFixture(t, `{"turns": [
				{"tool_calls": [{"name": "request_permissions", "arguments": {"remixlet": "prices", "permissions": ["`+tc.perm+`"]}}]},
				{"tool_calls": [{"name": "write_remixlet", "arguments": {`+nameArg+`"manifest": `+manifest+`, "script": "`+post+`", "note": "order"}}]},
				{"text": "done"}
			]}`)
			var rx store.Remixlet
			if tc.existing {
				v1 := `{"name": "prices", "description": "prices", "api": 1, "matches": ["https://example.com/*"], "permissions": []}`
				rx = personRemixlet(t, cf.st, "prices", store.Files{sandbox.ManifestFile: []byte(v1), sandbox.ScriptFile: []byte("rmx.log('v1')")})
			}
			cf.say(t, map[string]string{"type": "send", "text": "show prices from the API"})
			perm := cf.pendingCard(t, "permissions")
			cf.confirm(t, perm["id"], true)
			perms := cf.waitItem(t, "request_permissions done", toolDone("request_permissions"))
			if r := fmt.Sprint(perms["result"]); !strings.Contains(r, "shows the person its code") {
				t.Errorf("request_permissions result = %s, want it to say the save shows its code", r)
			}

			act := cf.pendingCard(t, "activation")
			if rows := fmt.Sprint(act["rows"]); !strings.Contains(rows, "New permission: "+sandbox.PermissionText(tc.perm)) {
				t.Errorf("activation rows = %s, want the new permission", rows)
			}
			if d := diffLines(act); !strings.Contains(d, "script.js: +await rmx.fetch('https://api.example.com/orders', {method: 'POST'") {
				t.Errorf("the card's diff =\n%s\nwant the POST", d)
			}
			cf.decline(t, act["id"])
			w := cf.waitItem(t, "write_remixlet done", toolDone("write_remixlet"))
			if r := fmt.Sprint(w["result"]); !strings.Contains(r, `The person chose "Don't allow"`) {
				t.Errorf("write_remixlet = %s", r)
			}
			cf.waitIdle(t)
			if tc.existing {
				if got := activeScript(t, cf.st, rx.ID); got != "rmx.log('v1')" {
					t.Errorf("active script = %q, want the person's", got)
				}
			} else if r, ok := cf.remixlet(t, "prices"); ok && r.ActiveVersionID != 0 {
				t.Errorf("prices = %+v, want nothing active", r)
			}
		})
	}
}
