package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
)

// TestChatNavigateStopped: a whole chat. The model, obeying the page, navigates to the site's
// open redirect with data in the address (one assembled from pieces: an address in the query is
// refused before it goes upstream, navguard_carried.go); the page agent (stand-in) goes there as the browser
// would, the proxy refuses the redirect, the page goes, and the tool result and a notice say
// the navigation was stopped.
func TestChatNavigateStopped(t *testing.T) {
	site := &testsite.NavSite{}
	cf := newChatFixtureWith(t, `{"turns": [
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "/outpieces?host=witness&d=secret"}}]},
		{"text": "should not be reached"}
	]}`, chatOptions{site: site})
	cf.srv.chats.SetFollowGrace(300 * time.Millisecond)
	var navigated sync.Once
	cf.toolMu.Lock()
	cf.reply = func(tool string, args json.RawMessage) any {
		if tool != "navigate" {
			return nil
		}
		var a struct{ URL string }
		json.Unmarshal(args, &a)
		navigated.Do(func() {
			go func() {
				time.Sleep(30 * time.Millisecond) // the page agent answers first, then assigns
				req, _ := http.NewRequest("GET", a.URL, nil)
				for h := testsite.NavHeaders("same-origin", "https://example.com/"); len(h) > 1; h = h[2:] {
					req.Header.Set(h[0], h[1])
				}
				if resp, err := cf.client.Do(req); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusForbidden {
						cf.page.Close(websocket.StatusGoingAway, "the tab shows the refusal page")
					}
				}
			}()
		})
		return map[string]any{"navigating": "/out?…", "sameDocument": false, "mayLeave": true}
	}
	cf.toolMu.Unlock()
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "go on"})
	r := cf.waitItem(t, "navigate", toolDone("navigate"))
	if r["status"] != "error" || !strings.Contains(resultOf(r), "navigate: stopped by the proxy: the site answered https://example.com/outpieces?… with a redirect (302) to https://witness.test/?…, which would have left the site example.com") {
		t.Errorf("navigate = %v", r["result"])
	}
	cf.waitIdle(t)
	if !strings.Contains(cf.raw.String(), "remixproxy stopped the agent's navigation: the site answered") {
		t.Error("no notice says the navigation was stopped")
	}
	if n := len(cf.model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
	if !strings.Contains(cf.raw.String(), "the proxy stopped the agent's navigation") {
		t.Error("the turn's stop does not say the proxy stopped the navigation")
	}
}
