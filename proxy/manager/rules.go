package manager

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/remixproxy/remixproxy/netrules"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// ruleViews describes a version's rules.json for the manager's table: every rule in file
// order with its redirect destination in full, header changes and condition, and for a rule
// that breaks a limit, why it is left out. note says why no rule is in effect when rules.json
// exists but cannot be used.
func ruleViews(files store.Files) (views []panel.RuleView, note string) {
	raw, ok := files[sandbox.RulesFile]
	if !ok || strings.TrimSpace(string(raw)) == "" {
		return nil, ""
	}
	rules, probs := netrules.Parse(raw)
	m, _ := sandbox.ParseManifest(files[sandbox.ManifestFile])
	switch {
	case m == nil:
		note = "The manifest has problems, so no rule is in effect."
	case len(rules) > 0 && !m.HasPermission(sandbox.PermNetRules):
		note = "The manifest does not have the netrules permission, so no rule is in effect."
	}
	if m != nil {
		probs = append(probs, netrules.Check(rules, sandbox.RuleSites(m))...)
	}
	byID := map[int]string{}
	for _, p := range probs {
		if p.RuleID != 0 && byID[p.RuleID] == "" {
			byID[p.RuleID] = p.Field + ": " + p.Message
		}
	}
	if len(rules) == 0 && len(probs) > 0 && note == "" {
		note = "rules.json cannot be read: " + probs[0].Error()
	}
	for _, r := range rules {
		v := panel.RuleView{ID: r.ID, Priority: r.Priority, Action: r.Action.Type, Problem: byID[r.ID]}
		var d []string
		if rd := r.Action.Redirect; rd != nil {
			if rd.URL != "" {
				d = append(d, "→ "+rd.URL)
			} else {
				d = append(d, "→ "+rd.RegexSubstitution+"  (\\1… are parts of the matched address)")
			}
		}
		for _, side := range []struct {
			name string
			ops  []netrules.HeaderOp
		}{{"request", r.Action.RequestHeaders}, {"response", r.Action.ResponseHeaders}} {
			for _, op := range side.ops {
				s := fmt.Sprintf("%s header %s: %s", side.name, op.Header, op.Operation)
				if op.Value != "" {
					s += " " + strconv.Quote(op.Value)
				}
				d = append(d, s)
			}
		}
		if r.Action.Type == netrules.UpgradeScheme {
			d = append(d, "http:// → https://")
		}
		v.Detail = strings.Join(d, "\n")
		v.Condition = conditionSummary(&r.Condition)
		views = append(views, v)
	}
	return views, note
}

func conditionSummary(c *netrules.Condition) string {
	var parts []string
	add := func(label string, list []string) {
		if len(list) > 0 {
			parts = append(parts, label+" "+strings.Join(list, ", "))
		}
	}
	if c.URLFilter != "" {
		parts = append(parts, "address matches "+c.URLFilter)
	}
	if c.RegexFilter != "" {
		parts = append(parts, "address matches regex "+c.RegexFilter)
	}
	if (c.URLFilter != "" || c.RegexFilter != "") && c.IsURLFilterCaseSensitive {
		parts = append(parts, "case-sensitive")
	}
	add("to", c.RequestDomains)
	add("not to", c.ExcludedRequestDomains)
	add("from pages on", c.InitiatorDomains)
	add("not from pages on", c.ExcludedInitiatorDomains)
	if len(c.ResourceTypes) > 0 {
		add("types", c.ResourceTypes)
	} else if len(c.ExcludedResourceTypes) == 0 {
		parts = append(parts, "types: all but main_frame")
	}
	add("not types", c.ExcludedResourceTypes)
	add("methods", c.RequestMethods)
	add("not methods", c.ExcludedRequestMethods)
	if len(parts) == 0 {
		return "every request"
	}
	return strings.Join(parts, "\n")
}
