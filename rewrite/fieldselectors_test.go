package rewrite

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/internal/jslist"
)

// fieldSelectorCases are the selectors both sides must decide the same way
// (panel/testdata/field_selectors.json, also run by the page agent's harness): allowed and
// refused everywhere, and dataValues, which compare a data-* attribute's value: allowed in
// queries (until a secret is typed, which only the page agent knows) and in stylesheets (whose
// rules as written the page agent drops at the first key of a secret, ownsheet.go).
func fieldSelectorCases(t *testing.T) (allowed, refused, dataValues []string) {
	t.Helper()
	src, err := os.ReadFile("../panel/testdata/field_selectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Allowed, Refused, DataValues []string }
	if err := json.Unmarshal(src, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.DataValues) == 0 {
		t.Fatal("field_selectors.json has no dataValues")
	}
	return c.Allowed, c.Refused, c.DataValues
}

// TestCheckFieldSelector: dom.query's selectors follow the stylesheets' field-contents rule,
// except for data-* value comparisons, which the page agent decides.
func TestCheckFieldSelector(t *testing.T) {
	allowed, refused, dataValues := fieldSelectorCases(t)
	for _, sel := range append(allowed, dataValues...) {
		if err := CheckFieldSelector(sel); err != nil {
			t.Errorf("CheckFieldSelector(%q) = %v, want it allowed", sel, err)
		}
	}
	for _, sel := range refused {
		if err := CheckFieldSelector(sel); err == nil {
			t.Errorf("CheckFieldSelector(%q) = nil, want it refused", sel)
		}
	}
}

// TestFieldSelectorRulesInStylesheets: a rule with a refused selector is left out of a sheet;
// one with an allowed selector, or comparing data-* values, is kept as written.
func TestFieldSelectorRulesInStylesheets(t *testing.T) {
	allowed, refused, dataValues := fieldSelectorCases(t)
	for _, sel := range append(allowed, dataValues...) {
		css := sel + " { color: red }"
		if clean, probs := CheckStylesheet([]byte(css), styleHosts); len(probs) != 0 || string(clean) != css {
			t.Errorf("%q: got %q %v, want it unchanged", css, clean, probs)
		}
	}
	for _, sel := range refused {
		css := sel + " { color: red }\np { color: blue }"
		clean, probs := CheckStylesheet([]byte(css), styleHosts)
		if len(probs) == 0 || strings.Contains(string(clean), "red") {
			t.Errorf("%q: got %q %v, want the first rule refused", css, clean, probs)
		}
	}
}

// TestFieldSelectorListsMatchThePageAgent: the page agent's lists (rx_policy.js) are the Go ones.
func TestFieldSelectorListsMatchThePageAgent(t *testing.T) {
	read := jslist.FileReader(t, "../panel/pageagent/rx_policy.js")
	keys := func(m map[string]bool) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	js := read("COMPARABLE_ATTRS")
	slices.Sort(js)
	if goList := keys(comparableAttrs); !slices.Equal(js, goList) {
		t.Errorf("COMPARABLE_ATTRS in rx_policy.js is %s, comparableAttrs %s", strings.Join(js, ","), strings.Join(goList, ","))
	}
	var states []string
	for _, s := range read("FIELD_STATE") {
		if s == ":--" {
			continue // the older custom-state spelling: a prefix in Go (selectorProblem)
		}
		states = append(states, strings.TrimSuffix(strings.TrimPrefix(s, ":"), "("))
	}
	slices.Sort(states)
	if goList := keys(checkedFieldState); !slices.Equal(states, goList) {
		t.Errorf("FIELD_STATE in rx_policy.js is %s, checkedFieldState %s", strings.Join(states, ","), strings.Join(goList, ","))
	}
}
