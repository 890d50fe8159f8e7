package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// pageAgentAt loads path through the proxy as a navigation with the given Referer ("" for none)
// and connects a page-agent stand-in that answers every page tool with {"page": name}.
func (cf *chatFixture) pageAgentAt(t *testing.T, path, referer, name string) *websocket.Conn {
	t.Helper()
	return cf.loadPage(t, path, referer)(name)
}

// loadPage loads path as pageAgentAt does; the page agent connects when the returned func is
// called.
func (cf *chatFixture) loadPage(t *testing.T, path, referer string) func(name string) *websocket.Conn {
	t.Helper()
	req, err := http.NewRequest("GET", "https://"+chatSite+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Sec-Fetch-Dest", "document")
	if referer != "" {
		req.Header.Set("Referer", referer)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	resp, err := cf.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	return func(name string) *websocket.Conn {
		t.Helper()
		return cf.connectAgent(t, body, path, name)
	}
}

// connectAgent connects the page agent of the injected page body, served for path.
func (cf *chatFixture) connectAgent(t *testing.T, body []byte, path, name string) *websocket.Conn {
	t.Helper()
	c, err := cf.dialWS("wss://remix.proxy/agent/ws?t="+url.QueryEscape(tokenFrom(t, body)), "https://"+chatSite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readMsg(t, c); err != nil {
		t.Fatal(err)
	}
	hello, _ := json.Marshal(map[string]any{"type": "hello", "url": "https://" + chatSite + path, "title": name, "top": true})
	if err := c.Write(context.Background(), websocket.MessageText, hello); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			var m struct {
				Type string          `json:"type"`
				ID   json.RawMessage `json:"id"`
			}
			if json.Unmarshal(b, &m) != nil || m.Type != "tool" {
				continue
			}
			reply, _ := json.Marshal(map[string]any{"type": "toolResult", "id": m.ID, "ok": true, "value": map[string]string{"page": name}})
			c.Write(context.Background(), websocket.MessageText, reply)
		}
	}()
	return c
}

func readBody(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return []byte(b.String())
}

// TestChatFollowsSameSiteNavigation: the tab navigates within the site in the middle of a turn
// (its page goes when a tool reaches it, as after a click on a link); the chat moves to
// the next page, whose request named the old page as its Referer, and the turn goes on there.
func TestChatFollowsSameSiteNavigation(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "capture_page"}]},
		{"tool_calls": [{"name": "outline"}]},
		{"text": "Done on the next page."}
	]}`)
	// The first page goes when the first tool reaches it, without answering (a click on a link).
	left := cf.holdFirstTool(func() { cf.page.Close(websocket.StatusNormalClosure, "navigating") })
	cf.say(t, map[string]string{"type": "send", "text": "go on to the next page"})
	<-left
	cf.pageAgentAt(t, "/next", "https://"+chatSite+"/", "second")
	if c := cf.waitItem(t, "capture_page failed", toolDone("capture_page")); c["status"] != "error" {
		t.Errorf("capture_page = %v, want an error (its page went)", c)
	}
	out := cf.waitItem(t, "outline answered", toolDone("outline"))
	if out["status"] != "ok" || !strings.Contains(out["result"].(string), `"page":"second"`) {
		t.Errorf("outline = %v, want it answered by the next page", out)
	}
	cf.waitItem(t, "the final reply", func(it map[string]any) bool {
		return it["kind"] == "assistant" && strings.Contains(textOf(it), "Done on the next page.")
	})
	if strings.Contains(cf.raw.String(), "agent stopped") {
		t.Error("the chat stopped although the tab stayed on the site")
	}
}

// holdFirstTool makes the first page tool call go unanswered (its page is navigating): it runs
// also (when not nil) and closes the returned channel; later calls are answered.
func (cf *chatFixture) holdFirstTool(also func()) <-chan struct{} {
	reached := make(chan struct{})
	var once bool
	cf.toolMu.Lock()
	defer cf.toolMu.Unlock()
	cf.onTool = func() bool {
		if once {
			return false
		}
		once = true
		if also != nil {
			also()
		}
		close(reached)
		return true
	}
	return reached
}

// TestChatStopsWhenTheTabLeavesTheSite: after the page goes, a page of another origin (or none)
// does not take the chat; after the grace its turn stops at the next step.
func TestChatStopsWhenTheTabLeavesTheSite(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "capture_page"}]},
		{"text": "should not be asked"}
	]}`)
	cf.srv.chats.SetFollowGrace(300 * time.Millisecond)
	cf.toolMu.Lock()
	cf.onTool = func() bool {
		cf.page.Close(websocket.StatusNormalClosure, "navigating away")
		return true
	}
	cf.toolMu.Unlock()
	cf.say(t, map[string]string{"type": "send", "text": "go"})
	cf.waitItem(t, "the stop notice", func(it map[string]any) bool {
		return it["kind"] == "notice" && strings.Contains(textOf(it), "left the site, so the agent stopped")
	})
	if n := len(cf.model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

// TestChatFollowsWhenTheNewPageConnectsFirst: the old page's socket may close after the new
// page's opens; the chat still moves.
func TestChatFollowsWhenTheNewPageConnectsFirst(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "capture_page"}]},
		{"tool_calls": [{"name": "outline"}]},
		{"text": "Done on the next page."}
	]}`)
	reached := cf.holdFirstTool(nil) // the first page never answers: it is navigating
	cf.say(t, map[string]string{"type": "send", "text": "go on to the next page"})
	<-reached
	cf.pageAgentAt(t, "/next", "https://"+chatSite+"/", "second")
	time.Sleep(100 * time.Millisecond)
	cf.page.Close(websocket.StatusNormalClosure, "navigated")
	out := cf.waitItem(t, "outline answered", toolDone("outline"))
	if out["status"] != "ok" || !strings.Contains(out["result"].(string), `"page":"second"`) {
		t.Errorf("outline = %v, want it answered by the next page", out)
	}
}

// TestChatWaitsForTheTabsNextPageOverAPopup: a same-origin popup whose hello does not say it is
// one (a browser without the Navigation API's activation, or an opener that wrote the popup's
// hello) connects from the chat's page while a turn runs; then the tab's own next page is
// requested from it, and the chat's page goes. The chat waits for the tab's page rather than
// move to the popup, which connected first.
func TestChatWaitsForTheTabsNextPageOverAPopup(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "capture_page"}]},
		{"tool_calls": [{"name": "outline"}]},
		{"text": "Done on the next page."}
	]}`)
	reached := cf.holdFirstTool(nil) // the first page never answers: it is navigating
	cf.say(t, map[string]string{"type": "send", "text": "go on to the next page"})
	<-reached
	cf.pageAgentAt(t, "/popup", "https://"+chatSite+"/", "popup")
	time.Sleep(10 * time.Millisecond) // the tab's request comes after the popup connected
	next := cf.loadPage(t, "/next", "https://"+chatSite+"/")
	cf.page.Close(websocket.StatusNormalClosure, "navigated")
	time.Sleep(100 * time.Millisecond) // the proxy notices the page went
	next("second")
	out := cf.waitItem(t, "outline answered", toolDone("outline"))
	if out["status"] != "ok" || !strings.Contains(out["result"].(string), `"page":"second"`) {
		t.Errorf("outline = %v, want it answered by the tab's next page, not the popup", out)
	}
}
