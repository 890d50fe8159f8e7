package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// propose_plan (issue 6, "Plan before act"): with the person's plan review on (Settings,
// PlanBeforeAct), an Act turn's page actions are refused by the Env until the model has
// proposed a plan and the person approved it on a card, where they may edit the steps. The
// approved plan — the person's version — is pinned to the conversation (a user message with
// Pinned set, added after the reply's tool results, see planPin) so that compaction keeps it.
// Rejecting ends the turn before any page action. Whether review is on, and what the person
// decided, is the Env's (proxy/chat/plan.go); this file checks the plan's shape.

// Plan is a plan of steps and the risks the model sees.
type Plan struct {
	Steps []string
	Risks []string
}

// PlanDecision is what became of a proposed plan.
type PlanDecision struct {
	// Reviewed is false when the person's plan review is off: nothing was shown, and the
	// model goes on.
	Reviewed bool
	// Approved: the person approved Plan, their version of it.
	Approved bool
	Plan     Plan
}

// Planner is an Env that can show a plan to the person. ProposePlan shows it and waits for
// the decision; on a rejection the Env also ends the turn.
type Planner interface {
	ProposePlan(ctx context.Context, p Plan) (PlanDecision, error)
}

// Bounds on a plan.
const (
	MaxPlanSteps    = 12
	MaxPlanRisks    = 6
	MaxPlanItemText = 300 // characters of one step or risk
)

// planApproved starts the result of an approved propose_plan; planPin finds it there.
const planApproved = "The person approved this plan (their version, which may differ from yours: follow it). Page actions are allowed for the rest of this turn.\n\n"

var planTools = []tool{
	{spec: ToolSpec{Name: "propose_plan", Description: "Propose your plan before acting on the page: the steps you will take and the risks you see. When the person has plan review on, page actions (click, type, set_field, select, press_keys, scroll, hover, navigate, back, forward, and http_request that changes things) are refused until they approve a plan; they may edit the steps, and the approved version is what you follow. If they reject it, the turn ends.",
		Parameters: schema(`{"type":"object","properties":{
			"steps":{"type":"array","items":{"type":"string"},"description":"1 to 12 short steps, in order"},
			"risks":{"type":"array","items":{"type":"string"},"description":"up to 6 things that could go wrong or need the person's attention"}},
			"required":["steps"]}`)},
		modes: []Mode{ModeAct}, run: runProposePlan},
}

func init() {
	tools = append(tools, planTools...)
}

func runProposePlan(ctx context.Context, env Env, args map[string]any, _ json.RawMessage) (string, error) {
	pl, ok := env.(Planner)
	if !ok {
		return "", toolErrorf("propose_plan is not available here")
	}
	steps, err := planList(args["steps"], "steps", 1, MaxPlanSteps)
	if err != nil {
		return "", err
	}
	var risks []string
	if r, ok := args["risks"]; ok {
		if risks, err = planList(r, "risks", 0, MaxPlanRisks); err != nil {
			return "", err
		}
	}
	d, err := pl.ProposePlan(ctx, Plan{Steps: steps, Risks: risks})
	if err != nil {
		return "", err
	}
	switch {
	case !d.Reviewed:
		return "Plan review is off, so the plan was not shown to the person; go ahead.", nil
	case d.Approved:
		return planApproved + FormatPlan(d.Plan), nil
	}
	return "The person rejected the plan. The turn ends here, before any page action; wait for the person's next message.", nil
}

// planList checks a list of plan texts.
func planList(v any, name string, min, max int) ([]string, error) {
	list, _ := v.([]any)
	if len(list) < min {
		return nil, toolErrorf("%s is empty; give at least %d", name, min)
	}
	if len(list) > max {
		return nil, toolErrorf("%d %s is too many; give at most %d", len(list), name, max)
	}
	out := make([]string, 0, len(list))
	for i, x := range list {
		s, ok := x.(string)
		s = strings.TrimSpace(s)
		switch {
		case !ok:
			return nil, toolErrorf("%s[%d] must be a string", name, i)
		case s == "":
			return nil, toolErrorf("%s[%d] is empty", name, i)
		case utf8.RuneCountInString(s) > MaxPlanItemText:
			return nil, toolErrorf("%s[%d] is %d characters; keep each to %d", name, i, utf8.RuneCountInString(s), MaxPlanItemText)
		}
		out = append(out, s)
	}
	return out, nil
}

// FormatPlan writes a plan as numbered steps and a list of risks.
func FormatPlan(p Plan) string {
	var b strings.Builder
	b.WriteString("Steps:\n")
	for i, s := range p.Steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	if len(p.Risks) > 0 {
		b.WriteString("Risks:\n")
		for _, r := range p.Risks {
			fmt.Fprintf(&b, "- %s\n", r)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// planPin returns the pinned message an approved propose_plan adds to the conversation: a user
// message with the person's version of the plan, which compaction keeps verbatim. The loop
// appends it after all the tool results of the reply, so calls and results stay in pairs.
func planPin(call ToolCall, result string, isErr bool) (Message, bool) {
	if call.Name != "propose_plan" || isErr || !strings.HasPrefix(result, planApproved) {
		return Message{}, false
	}
	text := "The plan I approved for this task (keep to it; ask me before doing anything it does not cover):\n" +
		strings.TrimPrefix(result, planApproved)
	return Message{Role: RoleUser, Text: text, Pinned: true}, true
}
