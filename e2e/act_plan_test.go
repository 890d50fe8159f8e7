package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// Plan before act (issue 6) in real Chromium: the person turns plan review on in the manager's
// Settings page; in Act mode the agent's click before a plan is refused; the plan card in the
// real panel takes the person's edit of a step and a real click on Approve; the click then runs
// on the page, and the person's version is pinned in the stored conversation.
func TestActPlanApprovedInChromium(t *testing.T) {
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"text": "Remove socks"}}]},
		{"tool_calls": [{"name": "propose_plan", "arguments": {"steps": ["Find the socks in the cart", "Remove every item"], "risks": ["Other items could be removed"]}}]},
		{"tool_calls": [{"name": "click", "arguments": {"text": "Remove socks"}}]},
		{"text": "Removed the socks."}
	]}`, map[string]http.Handler{"cart.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Cart</title></head><body>
<h1>Cart</h1><ul><li>Red socks <button id="rm" type="button">Remove socks</button></li><li>Blue hat</li></ul>
<script>
document.getElementById('rm').onclick = () => { document.body.dataset.removed = String(Number(document.body.dataset.removed || 0) + 1); };
document.body.dataset.pageScript = 'ran';
</script></body></html>`)
	})})
	tab := aw.tab

	// The person turns plan review on in Settings.
	tab.Navigate("https://remix.proxy/manager/settings")
	tab.WaitFor(10*time.Second, "the Settings page", `!!document.querySelector('input[name=plan_before_act]')`)
	if e2etest.Eval[bool](tab, `!!document.querySelector('input[name=plan_before_act]:checked')`) {
		t.Fatal("plan review is on by default")
	}
	// The old document is marked, so the wait below sees the page the save loads, not the form
	// whose box was just ticked (a navigation still under way would abort the next one).
	e2etest.Eval[bool](tab, `(() => { window.beforeSave = true; const c = document.querySelector('input[name=plan_before_act]'); c.click(); c.form.requestSubmit(); return true; })()`)
	tab.WaitFor(10*time.Second, "the saved Settings page", `!window.beforeSave && document.readyState === 'complete' && location.pathname === '/manager/settings' && !!document.querySelector('input[name=plan_before_act]:checked')`)

	pf, f := actChat(t, tab, "https://cart.test/", "remove the socks from my cart")

	pf.waitFor(t, 30*time.Second, "the plan card", `!!document.querySelector('.card[data-card=plan][data-state=pending] .plan-step')`)
	if got := e2etest.Eval[string](tab, `String(document.body.dataset.removed || '')`); got != "" {
		t.Fatalf("the page was clicked before the plan was approved (removed=%q)\n%s", got, aw.diagnose())
	}
	if s := pf.eval(t, `Array.from(document.querySelectorAll('.plan-step')).map((f) => f.value).join('|')`); s != "Find the socks in the cart|Remove every item" {
		t.Errorf("plan steps = %q", s)
	}
	// The person edits the second step, then approves with a real click.
	pf.eval(t, `(() => { const f = document.querySelectorAll('.plan-step')[1]; f.focus(); f.value = 'Remove only the red socks'; return true; })()`)
	time.Sleep(time.Second) // the card's arming delay
	x, y := pointAt(t, tab, pf, f, `.card[data-card=plan] button.allow`)
	clickAt(t, tab, x, y)
	// "Remove socks" is a control that removes something: a plan does not stand for the
	// person's Allow on it (proxy/chat/submit.go), which is taken in the confirmation window.
	submit := `.card[data-card=submit][data-state=pending]`
	pf.waitFor(t, 30*time.Second, "the card for Remove socks", `!!document.querySelector('`+submit+`')`)
	if got := e2etest.Eval[string](tab, `String(document.body.dataset.removed || '')`); got != "" {
		t.Fatalf("the page was clicked before the card was allowed (removed=%q)", got)
	}
	confirmAllow(t, tab, pf, f, submit)

	pf.waitFor(t, 30*time.Second, "the agent's final reply", `document.getElementById('log').innerText.includes('Removed the socks.')`)
	if err := waitTrue(tab, 5*time.Second, `document.body.dataset.removed === '1'`); err != nil {
		t.Fatalf("the click after approval did not reach the page: %v\n%s", err, aw.diagnose())
	}
	if s := pf.eval(t, `document.querySelector('.card[data-card=plan]').getAttribute('data-state') + ' ' + document.querySelector('.card[data-card=plan] .plan-steps').innerText`); !strings.HasPrefix(s, "allowed") || !strings.Contains(s, "Remove only the red socks") {
		t.Errorf("the decided plan card shows %q", s)
	}
	results := storedToolResults(t, aw.proxy.Store)
	if len(results) < 3 || !strings.Contains(results[0], "plan review on") || !strings.Contains(results[1], "2. Remove only the red socks") {
		t.Errorf("tool results = %q", results)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	chats, err := aw.proxy.Store.ListChats(ctx, 5)
	if err != nil || len(chats) != 1 {
		t.Fatalf("chats = %+v, %v", chats, err)
	}
	bodies, _ := aw.proxy.Store.ChatMessages(ctx, chats[0].ID)
	msgs, _ := agent.UnmarshalMessages(bodies)
	pinned := false
	for _, m := range msgs {
		if m.Pinned {
			pinned = m.Role == agent.RoleUser && strings.Contains(m.Text, "Remove only the red socks") && !strings.Contains(m.Text, "Remove every item")
		}
	}
	if !pinned {
		t.Errorf("no pinned user message with the person's plan among %d messages", len(msgs))
	}
}
