package proxy

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/store"
)

// TestManagerLeavesChatApprovalsToTheirCard (red-team pass 6e): an approval a chat requested
// for the agent's save (it has a page session) is decided on the chat's card, which shows the
// code; the manager's approval page, which shows no code, neither shows nor decides it.
func TestManagerLeavesChatApprovalsToTheirCard(t *testing.T) {
	f := newManagerFixture(t)
	r := f.seed("Chatty")
	v1, _, _ := f.st.Active(context.Background(), r.ID)
	v2, err := f.st.SaveVersion(context.Background(), r.ID, store.Files{"manifest.json": []byte(testManifest("Chatty", "fetch:api.example.com")),
		"script.js": []byte("await rmx.fetch('https://api.example.com/orders', {method: 'POST'});\n")}, store.AuthorAgent, "")
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.st.RequestApproval(context.Background(), v2.ID, "page-session-1")
	if err != nil {
		t.Fatal(err)
	}
	if resp, page := f.get("https://remix.proxy/manager/approval/" + a.ID); resp.StatusCode != http.StatusConflict ||
		strings.Contains(string(page), "Allow and apply") || !strings.Contains(string(page), "decide it on its card") {
		t.Errorf("the manager's page for a chat's approval: %s\n%s", resp.Status, page)
	}
	resp, body := f.post("https://remix.proxy/manager/approval/"+a.ID, managerOriginHTTPS, url.Values{"decision": {"allow"}}, true)
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("allow in the manager: %s, want 409\n%s", resp.Status, body)
	}
	if v, _, _ := f.st.Active(context.Background(), r.ID); v.ID != v1.ID {
		t.Errorf("active is v%d, want the first (nothing allowed)", v.Number)
	}
}
