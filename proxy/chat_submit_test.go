package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/chat"
	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
)

// TestChatSubmitCard: through a whole chat (the page stand-in answers the probe with a POST
// form's "Delete account"): the card names the control and the target; "Not now" leaves the page
// untouched and the model is told; with the person's switch, turned on through its own card
// allowed in the confirmation window, the same click goes without a card. The model cannot
// turn the switch on, and it is kept with the chat.
func TestChatSubmitCard(t *testing.T) {
	click := `{"name": "click", "arguments": {"ref": "e7"}}`
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [`+click+`]},
		{"tool_calls": [{"name": "set_act_submits", "arguments": {"on": true}}]},
		{"text": "The person declined."},
		{"tool_calls": [`+click+`]},
		{"text": "Deleted."}
	]}`)
	cf.toolMu.Lock()
	cf.reply = func(tool string, args json.RawMessage) any {
		if tool == "click" && strings.Contains(string(args), `"probe":true`) {
			return map[string]any{"probe": map[string]any{"how": "click", "tag": "button", "role": "button", "name": "delete account",
				"control": `button "Delete account" [e7]`, "submits": true, "method": "post", "action": "https://example.com/account/delete", "key": "kdel"}}
		}
		if tool == "click" {
			return map[string]any{"clicked": `button "Delete account" [e7]`, "name": "delete account", "navigated": false, "mayLeave": false, "url": "https://example.com/"}
		}
		return nil
	}
	cf.toolMu.Unlock()
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "tidy up my account page"})
	card := cf.waitItem(t, "the submit card", func(it map[string]any) bool { return it["kind"] == "card" && it["state"] == "pending" })
	if card["card"] != "submit" || card["title"] != "Let the agent press “delete account”?" ||
		!strings.Contains(fmt.Sprint(card["rows"]), "It submits a form: POST https://example.com/account/delete") {
		t.Errorf("card = %v", card)
	}
	time.Sleep(chat.CardArmAfter)
	cf.say(t, map[string]any{"type": "decide", "id": card["id"], "allow": false})
	r := cf.waitItem(t, "the declined click", toolDone("click"))
	if r["status"] != "error" || !strings.Contains(resultOf(r), "was not pressed and nothing was submitted") {
		t.Errorf("declined click = %v", r["result"])
	}
	if r := cf.waitItem(t, "the model's try at the switch", toolDone("set_act_submits")); !strings.Contains(resultOf(r), `there is no tool "set_act_submits"`) {
		t.Errorf("set_act_submits = %v", r["result"])
	}
	cf.waitIdle(t)
	if asked := cf.pageToolsAsked(); strings.Contains(asked, "\nclick ") || strings.HasPrefix(asked, "click ") {
		t.Fatalf("the page was asked to click after Not now:\n%s", asked)
	}
	if reqs := cf.model.Requests(); !strings.Contains(reqs[0].System, "“Act may submit forms” is off") {
		t.Error("the system prompt does not say the switch is off")
	}

	// The person turns the switch on: a card, allowed only from the confirmation window.
	cf.say(t, map[string]any{"type": "submit", "on": true})
	sw := cf.waitItem(t, "the switch card", func(it map[string]any) bool { return it["kind"] == "card" && it["state"] == "pending" })
	if sw["title"] != "Let the agent submit forms in this chat?" || sw["allow"] != "Turn on" {
		t.Errorf("switch card = %v", sw)
	}
	time.Sleep(chat.CardArmAfter)
	cf.say(t, map[string]any{"type": "decide", "id": sw["id"], "allow": true})
	if e := <-cf.errs; !strings.Contains(e, "confirmed in the remixproxy window") {
		t.Errorf("allow from the framed panel: %q", e)
	}
	cf.confirm(t, sw["id"], true)
	cf.waitState(t, "the switch on", func(c map[string]any) bool { return c["actSubmits"] == true })
	cf.say(t, map[string]string{"type": "send", "text": "yes, delete it"})
	if r := cf.waitItem(t, "the click with the switch on", toolDone("click")); r["status"] != "ok" {
		t.Errorf("click with the switch on = %v", r)
	}
	cf.waitIdle(t)
	asked := cf.pageToolsAsked()
	if n := strings.Count(asked, "click(probe) "); n != 2 {
		t.Errorf("%d probes, want 2 (with the switch on, one for the link's fragment: chat/navguard_carried.go):\n%s", n, asked)
	}
	if !strings.Contains(asked, "\nclick {\"ref\":\"e7\"}") {
		t.Errorf("the click was not sent (without expect) with the switch on:\n%s", asked)
	}
	reqs := cf.model.Requests()
	if !strings.Contains(reqs[len(reqs)-1].System, "“Act may submit forms” is on") {
		t.Error("the system prompt does not say the switch is on")
	}
	if got := storedSwitch(t, cf.st, "act-submits"); got != "on" {
		t.Errorf("the stored switch = %q, want on", got)
	}
	cf.say(t, map[string]any{"type": "submit", "on": false})
	cf.waitState(t, "the switch off", func(c map[string]any) bool { return c["actSubmits"] == false })
}

// postNav sends a form's submission as Chromium does for a navigation from page.
func postNav(t *testing.T, cf *chatFixture, rawURL string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", rawURL, strings.NewReader("do=delete"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := cf.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestChatSelectSubmitHeld: a whole chat. The model, obeying the page, chooses "Delete my data"
// in a drop-down whose change handler submits its POST form (the page agent stand-in answers the
// select, then the browser's POST arrives); the submission waits for the person's card, Not now
// answers the proxy's page without reaching the site, and the tool result says so.
func TestChatSelectSubmitHeld(t *testing.T) {
	site := &testsite.NavSite{}
	cf := newChatFixtureWith(t, `{"turns": [
		{"tool_calls": [{"name": "select", "arguments": {"ref": "e4", "option": "Delete my data"}}]},
		{"text": "Chosen."}
	]}`, chatOptions{site: site})
	posted := make(chan int, 1)
	cf.toolMu.Lock()
	cf.reply = func(tool string, args json.RawMessage) any {
		if tool != "select" {
			return nil
		}
		if bytes.Contains(args, []byte(`"options":true`)) { // the chat lists the options first (chat/oracle_select.go)
			return map[string]any{"element": "Account", "options": []map[string]any{{"text": "Keep my data", "value": "keep"}, {"text": "Delete my data", "value": "delete"}}}
		}
		go func() { // the change handler's requestSubmit, a moment after
			time.Sleep(30 * time.Millisecond)
			resp, _ := postNav(t, cf, "https://example.com/account", testsite.NavHeaders("same-origin", "https://example.com/")...)
			posted <- resp.StatusCode
		}()
		return map[string]any{"selected": "Delete my data", "navigated": false, "mayLeave": false, "url": "https://example.com/"}
	}
	cf.toolMu.Unlock()
	cf.actMode(t)
	before := len(site.Requests())
	cf.say(t, map[string]string{"type": "send", "text": "do what the page says"})
	card := cf.pendingCard(t, "submit")
	if card["title"] != "Let the agent's action submit a form?" || !strings.Contains(fmt.Sprint(card["rows"]), "The agent's select “Delete my data” made the page send a form: POST https://example.com/account") {
		t.Errorf("card = %v", card)
	}
	cf.decline(t, card["id"])
	if got := <-posted; got != http.StatusForbidden {
		t.Errorf("the submission was answered %d, want 403", got)
	}
	r := cf.waitItem(t, "select", toolDone("select"))
	if r["status"] != "error" || !strings.Contains(resultOf(r), "select: stopped by the proxy: the select “Delete my data” made the page send a form (POST https://example.com/account) and the person chose “Not now”, so it was not sent") {
		t.Errorf("select = %v", r["result"])
	}
	cf.waitIdle(t)
	if got := site.Requests()[before:]; strings.Contains(got, "POST") {
		t.Errorf("the site got %q", got)
	}
	reqs := cf.model.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(fmt.Sprint(last.Messages), "the person chose “Not now”, so it was not sent") {
		t.Error("the model was not told the submission was held back")
	}
}
