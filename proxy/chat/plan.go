package chat

import (
	"context"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// Plan before act (issue 6): with plan review on (the Settings page, agent.Settings.
// PlanBeforeAct, off by default), an Act turn's first page action is refused until the model
// has proposed a plan (propose_plan) and the person approved it on a plan card, where they may
// edit the steps. The approval holds for the rest of that turn (chatEnv is per turn); the next
// message needs a new plan. Rejecting the plan, or Stop while the card waits, ends the turn
// before any page action. The approved version is pinned to the conversation by the agent loop
// (agent/tools_plan.go).
//
// Why a setting and not a per-chat switch: it is a way of working the person chooses once (as
// in WebBrain), it is read in Go at each page action, and like every setting the model cannot
// reach it.
//
// A plan card grants nothing beyond Act itself — without plan review the same actions run with
// no card at all — so unlike the cards of cards.go it is decided in the framed panel,
// with no confirmation window: a page that tricked the person into approving would gain only
// what Act mode already allows. The proxy still takes each card's decision once, from this
// chat's panels, no sooner than CardArmAfter after the card reached that panel.

// planActions are the page tools plan review holds back (http_request is held back for its
// mutating methods in request.go); reading tools run freely.
var planActions = map[string]bool{
	"click": true, "type": true, "set_field": true, "select": true, "press_keys": true,
	"scroll": true, "hover": true, "navigate": true, "back": true, "forward": true,
}

// planCard is a pending plan card.
type planCard struct {
	decided chan planDecision // receives the person's decision once

	mu    sync.Mutex
	state string // pending, allowed, denied, expired
}

type planDecision struct {
	approve bool
	steps   []string
}

func (pc *planCard) expire() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.state == "pending" {
		pc.state = "expired"
		close(pc.decided)
	}
}

// planReview reports whether the person's plan review applies to this chat now: on in
// Settings, and the chat in Act mode.
func (e *chatEnv) planReview() bool {
	e.c.mu.Lock()
	mode := e.c.rec.Mode
	e.c.mu.Unlock()
	if mode != string(agent.ModeAct) {
		return false
	}
	settings, err := e.c.hub.settings()
	return err == nil && settings.PlanBeforeAct
}

// planGate refuses a page action while plan review is on and this turn has no approved plan.
func (e *chatEnv) planGate(tool string) error {
	if tool != "http_request" && !planActions[tool] {
		return nil
	}
	if e.planOK.Load() || !e.planReview() {
		return nil
	}
	return &agent.ToolError{Message: tool + " refused: the person has plan review on, so no page action runs before they approve a plan. Call propose_plan with your steps (at most 12) and the risks you see (at most 6); they may edit it. Once approved, follow their version."}
}

var _ agent.Planner = (*chatEnv)(nil)

// ProposePlan shows the plan card and waits for the person (see the top of the file).
func (e *chatEnv) ProposePlan(ctx context.Context, p agent.Plan) (agent.PlanDecision, error) {
	if !e.planReview() {
		return agent.PlanDecision{}, nil
	}
	c := e.c
	item := chatItem{ID: "p" + httpx.RandomID()[:12], Card: panel.CardPlan, Title: "The agent's plan",
		Rows:  []string{"Edit the steps if you like. Approving lets the agent act on this page following your version; it allows nothing Act mode does not."},
		Steps: append([]string(nil), p.Steps...), Risks: append([]string(nil), p.Risks...),
		Allow: "Approve", Deny: "Reject"}
	d, err := c.askPlan(ctx, item)
	if err != nil {
		return agent.PlanDecision{}, &agent.ToolError{Message: "the plan was withdrawn before the person decided (the turn stopped, the page left, or ten minutes passed); nothing was done on the page"}
	}
	if !d.approve {
		c.mu.Lock()
		cancel := c.cancel
		c.mu.Unlock()
		if cancel != nil {
			cancel() // the turn ends before any page action
		}
		c.notice("You rejected the plan, so the agent stopped before acting on the page.")
		return agent.PlanDecision{Reviewed: true}, nil
	}
	e.planOK.Store(true)
	return agent.PlanDecision{Reviewed: true, Approved: true, Plan: agent.Plan{Steps: d.steps, Risks: p.Risks}}, nil
}

// askPlan shows a plan card and waits for the person's decision; errCardGone when the card
// expired, the page left or the turn was stopped.
func (c *chat) askPlan(ctx context.Context, it chatItem) (planDecision, error) {
	pc := &planCard{decided: make(chan planDecision, 1), state: "pending"}
	it.Kind, it.State, it.ArmAfterMs = panel.KindCard, panel.CardPending, int(CardArmAfter/time.Millisecond)
	c.mu.Lock()
	if c.sessionID == "" {
		c.mu.Unlock()
		return planDecision{}, errCardGone
	}
	if c.plans == nil {
		c.plans = map[string]*planCard{}
	}
	c.plans[it.ID] = pc
	page := c.sessionID
	c.mu.Unlock()
	c.put(it, true)

	timer := time.NewTimer(cardLifetime)
	defer timer.Stop()
	// Like every card, a plan card expires when its page goes (a chat that follows its tab
	// to the next page does not carry cards over, follow.go).
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var d planDecision
	var ok bool
wait:
	for {
		select {
		case d, ok = <-pc.decided:
			break wait
		case <-ctx.Done():
			break wait
		case <-timer.C:
			break wait
		case <-tick.C:
			if c.sessionIDNow() != page {
				break wait
			}
		}
	}
	pc.expire()
	c.mu.Lock()
	delete(c.plans, it.ID)
	c.mu.Unlock()
	switch {
	case !ok:
		it.State = panel.CardExpired
	case d.approve:
		it.State, it.Steps = panel.CardAllowed, d.steps
	default:
		it.State = panel.CardDenied
	}
	c.put(it, true)
	if !ok {
		return planDecision{}, errCardGone
	}
	return d, nil
}

// decidePlan is the person's decision on a plan card, from panel p (a PlanMessage, whose steps
// panel.ParsePanelMessage has checked).
func (c *chat) decidePlan(p *panelConn, m *panel.PlanMessage) string {
	c.mu.Lock()
	pc, ok := c.plans[m.ID]
	c.mu.Unlock()
	if !ok {
		return "this plan is no longer open"
	}
	p.shownMu.Lock()
	shown, seen := p.shown[m.ID]
	p.shownMu.Unlock()
	if !seen || time.Since(shown) < CardArmAfter {
		return "too quick: read the plan, then decide"
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.state != "pending" {
		return "this plan is no longer open"
	}
	if m.Approve {
		pc.state = "allowed"
	} else {
		pc.state = "denied"
	}
	pc.decided <- planDecision{approve: m.Approve, steps: append([]string(nil), m.Steps...)}
	close(pc.decided)
	return ""
}
