package netrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Limits.
const (
	// MaxRules is the most rules one remixlet may have.
	MaxRules = 30000
	// MaxRegexLen is the longest regexFilter, in bytes (Chrome bounds regexes by memory; this is
	// the simple form of that bound).
	MaxRegexLen = 1024
	// MaxRegexInsts bounds the size of a compiled regexFilter program.
	MaxRegexInsts = 2000
	// MaxHeaderValue is the longest value a modifyHeaders operation may set or append.
	MaxHeaderValue = 4096
	// MaxDomains is the most entries in one domain list of a condition.
	MaxDomains = 1000
)

// Action types.
const (
	Block         = "block"
	Allow         = "allow"
	Redirect      = "redirect"
	UpgradeScheme = "upgradeScheme"
	ModifyHeaders = "modifyHeaders"
)

// Header operations.
const (
	OpSet    = "set"
	OpRemove = "remove"
	OpAppend = "append"
)

// A Rule is one parsed rule, as written (Parse fills Priority with its default, 1).
type Rule struct {
	ID        int       `json:"id"`
	Priority  int       `json:"priority"`
	Action    Action    `json:"action"`
	Condition Condition `json:"condition"`

	index int // position in rules.json, for problems
}

// Action is what a rule does.
type Action struct {
	Type            string      `json:"type"`
	Redirect        *RedirectTo `json:"redirect,omitempty"`
	RequestHeaders  []HeaderOp  `json:"requestHeaders,omitempty"`
	ResponseHeaders []HeaderOp  `json:"responseHeaders,omitempty"`
}

// RedirectTo is where a redirect rule sends a request: URL, or RegexSubstitution applied to the
// condition's regexFilter (\0 is the whole match, \1 to \9 the groups).
type RedirectTo struct {
	URL               string `json:"url,omitempty"`
	RegexSubstitution string `json:"regexSubstitution,omitempty"`
}

// HeaderOp is one header modification.
type HeaderOp struct {
	Header    string `json:"header"`
	Operation string `json:"operation"`
	Value     string `json:"value,omitempty"`
}

// Condition says which requests a rule matches. Empty lists mean "not given".
type Condition struct {
	URLFilter                string   `json:"urlFilter,omitempty"`
	RegexFilter              string   `json:"regexFilter,omitempty"`
	IsURLFilterCaseSensitive bool     `json:"isUrlFilterCaseSensitive,omitempty"`
	RequestDomains           []string `json:"requestDomains,omitempty"`
	ExcludedRequestDomains   []string `json:"excludedRequestDomains,omitempty"`
	InitiatorDomains         []string `json:"initiatorDomains,omitempty"`
	ExcludedInitiatorDomains []string `json:"excludedInitiatorDomains,omitempty"`
	ResourceTypes            []string `json:"resourceTypes,omitempty"`
	ExcludedResourceTypes    []string `json:"excludedResourceTypes,omitempty"`
	RequestMethods           []string `json:"requestMethods,omitempty"`
	ExcludedRequestMethods   []string `json:"excludedRequestMethods,omitempty"`
}

// A Problem is one reason a rule (or the file) is refused.
type Problem struct {
	Index  int    // position in the array, or -1 for the file as a whole
	RuleID int    // the rule's id, or 0 when it has none (yet)
	Field  string // e.g. "rules[3].action.redirect.url"; "" for the file
	// Message says what is wrong; Fix, when set, what to do instead.
	Message string
	Fix     string
}

// Error formats the problem as "rule ID (FIELD): MESSAGE".
func (p Problem) Error() string {
	var b strings.Builder
	switch {
	case p.RuleID != 0:
		fmt.Fprintf(&b, "rule %d", p.RuleID)
	case p.Index >= 0:
		fmt.Fprintf(&b, "rule at index %d", p.Index)
	default:
		b.WriteString("rules.json")
	}
	if p.Field != "" {
		fmt.Fprintf(&b, " (%s)", p.Field)
	}
	b.WriteString(": ")
	b.WriteString(p.Message)
	return b.String()
}

// The JSON keys each object may have; anything else is refused, with a reason for the parts of
// Chrome's format that are not supported.
var (
	ruleKeys      = []string{"id", "priority", "action", "condition"}
	actionKeys    = []string{"type", "redirect", "requestHeaders", "responseHeaders"}
	redirectKeys  = []string{"url", "regexSubstitution"}
	headerOpKeys  = []string{"header", "operation", "value"}
	conditionKeys = []string{"urlFilter", "regexFilter", "isUrlFilterCaseSensitive", "requestDomains",
		"excludedRequestDomains", "initiatorDomains", "excludedInitiatorDomains", "resourceTypes",
		"excludedResourceTypes", "requestMethods", "excludedRequestMethods"}
	unsupportedKeys = map[string]string{
		"transform":               "redirect.transform is not supported; use redirect.url or redirect.regexSubstitution",
		"extensionPath":           "redirect.extensionPath is not supported: a remixlet has no packaged files to redirect to",
		"tabIds":                  "tabIds is not supported: rules apply to the remixlet's pages",
		"excludedTabIds":          "excludedTabIds is not supported: rules apply to the remixlet's pages",
		"domainType":              "domainType is not supported; use initiatorDomains or excludedInitiatorDomains",
		"domains":                 "domains is the old name; use initiatorDomains",
		"excludedDomains":         "excludedDomains is the old name; use excludedInitiatorDomains",
		"requestHeaders":          "header conditions are not supported",
		"responseHeaders":         "header conditions are not supported",
		"excludedRequestHeaders":  "header conditions are not supported",
		"excludedResponseHeaders": "header conditions are not supported",
		"topDomains":              "topDomains is not supported",
		"excludedTopDomains":      "topDomains is not supported",
	}
)

// Parse reads rules.json: a JSON array of rule objects. It returns the rules that could be
// read (with Priority defaulted to 1) and a problem for each that could not, and for a file
// with more than MaxRules rules (of which it reads the first MaxRules). It does not apply the
// other limits (Check and Compile do).
func Parse(b []byte) ([]Rule, []Problem) {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, []Problem{{Index: -1, Message: "must be a JSON array of rules: " + jsonReason(err),
			Fix: `write [] or a list of rule objects`}}
	}
	var probs []Problem
	if len(raws) > MaxRules {
		// Refused at save; at install the first MaxRules are kept.
		probs = append(probs, Problem{Index: -1, Message: fmt.Sprintf("has %d rules; the limit is %d, so the rules after the first %d are left out", len(raws), MaxRules, MaxRules),
			Fix: "use fewer rules, e.g. one rule with requestDomains listing many hosts"})
		raws = raws[:MaxRules]
	}
	rules := make([]Rule, 0, len(raws))
	for i, raw := range raws {
		r, rp := parseRule(i, raw)
		if len(rp) > 0 {
			probs = append(probs, rp...)
			continue
		}
		rules = append(rules, r)
	}
	// Duplicate ids: a rule whose id is not unique cannot be told apart in logs and the
	// manager, so every rule sharing an id is refused.
	seen := make(map[int]int, len(rules))
	for _, r := range rules {
		seen[r.ID]++
	}
	for _, r := range rules {
		if seen[r.ID] > 1 {
			probs = append(probs, Problem{Index: r.index, RuleID: r.ID, Field: fieldAt(r.index, "id"),
				Message: fmt.Sprintf("id %d is used by more than one rule", r.ID), Fix: "give each rule its own id"})
		}
	}
	rules = slices.DeleteFunc(rules, func(r Rule) bool { return seen[r.ID] > 1 })
	return rules, probs
}

func fieldAt(i int, path string) string {
	if path == "" {
		return fmt.Sprintf("rules[%d]", i)
	}
	return fmt.Sprintf("rules[%d].%s", i, path)
}

// parseRule decodes one rule, refusing unknown keys and wrong types with the field named.
func parseRule(i int, raw json.RawMessage) (Rule, []Problem) {
	id := probeID(raw)
	prob := func(path, msg, fix string) Problem {
		return Problem{Index: i, RuleID: id, Field: fieldAt(i, path), Message: msg, Fix: fix}
	}
	var probs []Problem
	obj, ok := object(raw)
	if !ok {
		return Rule{}, []Problem{prob("", "must be an object", `write each rule as {"id": 1, "action": {…}, "condition": {…}}`)}
	}
	probs = append(probs, checkKeys(obj, ruleKeys, "", prob)...)
	if a, ok := obj["action"]; ok {
		if ao, ok := object(a); ok {
			probs = append(probs, checkKeys(ao, actionKeys, "action.", prob)...)
			if r, ok := ao["redirect"]; ok {
				if ro, ok := object(r); ok {
					probs = append(probs, checkKeys(ro, redirectKeys, "action.redirect.", prob)...)
				}
			}
			for _, k := range []string{"requestHeaders", "responseHeaders"} {
				var ops []json.RawMessage
				if json.Unmarshal(ao[k], &ops) == nil {
					for j, op := range ops {
						if oo, ok := object(op); ok {
							probs = append(probs, checkKeys(oo, headerOpKeys, fmt.Sprintf("action.%s[%d].", k, j), prob)...)
						}
					}
				}
			}
		}
	}
	if c, ok := obj["condition"]; ok {
		if co, ok := object(c); ok {
			probs = append(probs, checkKeys(co, conditionKeys, "condition.", prob)...)
		}
	}
	if len(probs) > 0 {
		return Rule{}, probs
	}

	var w struct {
		ID        *int       `json:"id"`
		Priority  *int       `json:"priority"`
		Action    *Action    `json:"action"`
		Condition *Condition `json:"condition"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Rule{}, []Problem{prob(te.Field, "must be "+jsonTypeName(te.Type.Kind().String()), "")}
		}
		return Rule{}, []Problem{prob("", jsonReason(err), "")}
	}
	switch {
	case w.ID == nil:
		probs = append(probs, prob("id", "missing", "give the rule a unique integer id, 1 or more"))
	case *w.ID < 1:
		probs = append(probs, prob("id", fmt.Sprintf("is %d; it must be 1 or more", *w.ID), ""))
	}
	if w.Action == nil {
		probs = append(probs, prob("action", "missing", `add an action, e.g. {"type": "block"}`))
	}
	if w.Condition == nil {
		probs = append(probs, prob("condition", "missing", `add a condition, e.g. {"urlFilter": "||ads.example.com^"}`))
	}
	r := Rule{Priority: 1, index: i}
	if w.ID != nil {
		r.ID = *w.ID
	}
	if w.Priority != nil {
		if *w.Priority < 1 {
			probs = append(probs, prob("priority", fmt.Sprintf("is %d; it must be 1 or more", *w.Priority), "leave it out for the default, 1"))
		}
		r.Priority = *w.Priority
	}
	if len(probs) > 0 {
		return Rule{}, probs
	}
	r.Action, r.Condition = *w.Action, *w.Condition
	return r, nil
}

func probeID(raw json.RawMessage) int {
	var probe struct {
		ID int `json:"id"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return 0
	}
	return probe.ID
}

func object(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

func checkKeys(obj map[string]json.RawMessage, allowed []string, prefix string, prob func(path, msg, fix string) Problem) []Problem {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var probs []Problem
	for _, k := range keys {
		if slices.Contains(allowed, k) {
			continue
		}
		if why, ok := unsupportedKeys[k]; ok {
			probs = append(probs, prob(prefix+k, why, "leave it out"))
			continue
		}
		probs = append(probs, prob(prefix+k, "is not a known field", "known fields here: "+strings.Join(allowed, ", ")))
	}
	return probs
}

func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int64":
		return "an integer"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "ptr", "map":
		return "an object"
	}
	return "of another type"
}

func jsonReason(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "the top level is " + te.Value
	}
	return err.Error()
}
