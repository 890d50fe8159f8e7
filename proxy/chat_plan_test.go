package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/proxy/chat"
)

// Plan before act (chat_plan.go), end to end below the browser.

// planReviewOn turns on plan review in the fixture's settings file.
func (cf *chatFixture) planReviewOn(t *testing.T) {
	t.Helper()
	if err := agent.SaveSettings(cf.dir, &agent.Settings{MaxSteps: 20, PlanBeforeAct: true}); err != nil {
		t.Fatal(err)
	}
}

func (cf *chatFixture) pageToolsAsked() string {
	cf.toolMu.Lock()
	defer cf.toolMu.Unlock()
	return strings.Join(cf.tools, "\n")
}

// TestChatPlanApproved: with plan review on, a click before a plan is refused without reaching
// the page; the plan card shows the steps and risks; the person edits a step and approves; the
// model is told their version, the click then runs, and the edited plan is pinned in the
// stored conversation.
func TestChatPlanApproved(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"ref": "e1"}}]},
		{"tool_calls": [{"name": "propose_plan", "arguments": {"steps": ["Open the cart", "Remove every item"], "risks": ["Other items could go too"]}}]},
		{"tool_calls": [{"name": "click", "arguments": {"ref": "e1"}}]},
		{"text": "Removed the socks."}
	]}`)
	cf.planReviewOn(t)
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "empty my cart"})
	r := cf.waitItem(t, "the refused click", toolDone("click"))
	if r["status"] != "error" || !strings.Contains(resultOf(r), "plan review on") || !strings.Contains(resultOf(r), "propose_plan") {
		t.Errorf("click before a plan = %v", r["result"])
	}
	if asked := cf.pageToolsAsked(); strings.Contains(asked, "click") {
		t.Fatalf("the page was asked to click before a plan: %s", asked)
	}
	card := cf.waitItem(t, "a plan card", func(it map[string]any) bool { return it["kind"] == "card" && it["state"] == "pending" })
	if card["card"] != "plan" || fmt.Sprint(card["steps"]) != "[Open the cart Remove every item]" || fmt.Sprint(card["risks"]) != "[Other items could go too]" ||
		card["allow"] != "Approve" || card["deny"] != "Reject" {
		t.Fatalf("plan card = %v", card)
	}
	edited := []string{"Open the cart", "Remove only the red socks"}
	// A decision before the card had time to be read is refused; a decide message does not
	// answer a plan card.
	cf.say(t, map[string]any{"type": "plan", "id": card["id"], "approve": true, "steps": edited})
	if e := <-cf.errs; !strings.Contains(e, "too quick") {
		t.Errorf("early approval: %q", e)
	}
	time.Sleep(chat.CardArmAfter)
	cf.say(t, map[string]any{"type": "decide", "id": card["id"], "allow": true})
	if e := <-cf.errs; !strings.Contains(e, "no longer open") {
		t.Errorf("decide on a plan card: %q", e)
	}
	cf.say(t, map[string]any{"type": "plan", "id": card["id"], "approve": true, "steps": edited})
	done := cf.waitItem(t, "the approved card", func(it map[string]any) bool { return it["id"] == card["id"] && it["state"] != "pending" })
	if done["state"] != "allowed" || fmt.Sprint(done["steps"]) != "[Open the cart Remove only the red socks]" {
		t.Errorf("approved card = %v", done)
	}
	p := cf.waitItem(t, "propose_plan done", toolDone("propose_plan"))
	if !strings.Contains(resultOf(p), "2. Remove only the red socks") || strings.Contains(resultOf(p), "Remove every item") {
		t.Errorf("propose_plan result = %v", p["result"])
	}
	if r := cf.waitItem(t, "the click after the plan", toolDone("click")); r["status"] != "ok" {
		t.Errorf("click after approval = %v", r)
	}
	cf.waitIdle(t)
	if n := strings.Count(cf.pageToolsAsked(), "click "); n != 1 {
		t.Errorf("the page was asked to click %d times, want 1", n)
	}
	chats, _ := cf.st.ListChats(context.Background(), 5)
	bodies, _ := cf.st.ChatMessages(context.Background(), chats[0].ID)
	msgs, _ := agent.UnmarshalMessages(bodies)
	pinned := 0
	for _, m := range msgs {
		if m.Pinned {
			pinned++
			if m.Role != agent.RoleUser || !strings.Contains(m.Text, "2. Remove only the red socks") || !strings.Contains(m.Text, "- Other items could go too") {
				t.Errorf("pinned message = %+v", m)
			}
		}
	}
	if pinned != 1 {
		t.Errorf("%d pinned messages stored, want 1", pinned)
	}
	reqs := cf.model.Requests()
	if !strings.Contains(reqs[0].System, "Plan review is on") {
		t.Error("the system prompt does not say plan review is on")
	}
	last := reqs[len(reqs)-1]
	b, _ := json.Marshal(last.Messages)
	if !strings.Contains(string(b), "Remove only the red socks") {
		t.Error("the model's last request lacks the approved plan")
	}
}

// TestChatPlanRejected: rejecting the plan ends the turn before any page action.
func TestChatPlanRejected(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "propose_plan", "arguments": {"steps": ["Delete the account"]}}, {"name": "click", "arguments": {"ref": "e1"}}]},
		{"tool_calls": [{"name": "click", "arguments": {"ref": "e1"}}]},
		{"text": "never"}
	]}`)
	cf.planReviewOn(t)
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "tidy up"})
	card := cf.waitItem(t, "a plan card", func(it map[string]any) bool { return it["kind"] == "card" && it["card"] == "plan" })
	time.Sleep(chat.CardArmAfter)
	cf.say(t, map[string]any{"type": "plan", "id": card["id"], "approve": false})
	cf.waitItem(t, "the notice", func(it map[string]any) bool {
		return it["kind"] == "notice" && strings.Contains(textOf(it), "rejected the plan")
	})
	cf.waitIdle(t)
	if asked := cf.pageToolsAsked(); strings.Contains(asked, "click") {
		t.Errorf("the page was asked to click after a rejected plan: %s", asked)
	}
	if n := len(cf.model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1: the turn must end", n)
	}
}

// TestChatPlanReviewOff: with the setting off (the default), actions run without a plan, and a
// proposed plan is not shown.
func TestChatPlanReviewOff(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"ref": "e1"}}]},
		{"tool_calls": [{"name": "propose_plan", "arguments": {"steps": ["a"]}}]},
		{"text": "ok"}
	]}`)
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "go"})
	if r := cf.waitItem(t, "click", toolDone("click")); r["status"] != "ok" {
		t.Errorf("click = %v", r)
	}
	if r := cf.waitItem(t, "propose_plan", toolDone("propose_plan")); !strings.Contains(resultOf(r), "review is off") {
		t.Errorf("propose_plan = %v", r["result"])
	}
	cf.waitIdle(t)
	if strings.Contains(cf.raw.String(), `"card":"plan"`) {
		t.Error("a plan card was shown with plan review off")
	}
}

// TestChatPlanStopped: Stop while the plan card waits withdraws it and ends the turn before any
// page action.
func TestChatPlanStopped(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "propose_plan", "arguments": {"steps": ["Click buy"]}}, {"name": "click", "arguments": {"ref": "e1"}}]},
		{"text": "never"}
	]}`)
	cf.planReviewOn(t)
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "buy it"})
	card := cf.waitItem(t, "a plan card", func(it map[string]any) bool { return it["kind"] == "card" && it["card"] == "plan" })
	cf.say(t, map[string]string{"type": "stop"})
	cf.waitItem(t, "the card withdrawn", func(it map[string]any) bool { return it["id"] == card["id"] && it["state"] == "expired" })
	cf.waitIdle(t)
	time.Sleep(chat.CardArmAfter)
	cf.say(t, map[string]any{"type": "plan", "id": card["id"], "approve": true, "steps": []string{"Click buy"}})
	if e := <-cf.errs; !strings.Contains(e, "no longer open") {
		t.Errorf("approving a withdrawn plan: %q", e)
	}
	if asked := cf.pageToolsAsked(); strings.Contains(asked, "click") {
		t.Errorf("the page was asked to click after Stop: %s", asked)
	}
	if n := len(cf.model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

// TestChatPlanExpiresWithThePage: like every card, a plan card expires when its page goes.
func TestChatPlanExpiresWithThePage(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [
		{"tool_calls": [{"name": "propose_plan", "arguments": {"steps": ["Click buy"]}}]},
		{"text": "never"}
	]}`)
	cf.planReviewOn(t)
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "buy it"})
	card := cf.waitItem(t, "a plan card", func(it map[string]any) bool { return it["kind"] == "card" && it["card"] == "plan" })
	cf.page.Close(1000, "navigated away")
	cf.waitItem(t, "the card withdrawn", func(it map[string]any) bool { return it["id"] == card["id"] && it["state"] == "expired" })
}
