package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// query's attribute-value matchers over what the model may see (oracle.go has why).

// queryPageLimit is the page agent's largest query limit.
const queryPageLimit = 200

// maxValueParts bounds the parts of the values read for a query (the page agent sends at most
// 2 000 000 bytes of them, a part about 200 000).
const maxValueParts = 16

// attrMatcher is an attribute-value matcher of a selector: [name op value flags].
type attrMatcher struct {
	name  string // lowercased; "*" when an escape or a comment may spell any attribute
	raw   string // as written (an SVG element's attributes keep their case)
	op    string // "=", "~=", "|=", "^=", "$=", "*="
	value string
	fold  bool // the i flag
	known bool // value and name read without escapes: match can tell
	// subject: in the compound the selector selects (outside parentheses, no combinator
	// after it), so that the element it matched is the one query returns.
	subject bool
}

// match reports whether the matcher holds for the attribute value v, as CSS reads it; a
// matcher this cannot read holds for nothing.
func (m attrMatcher) match(v string) bool {
	if !m.known {
		return false
	}
	want := m.value
	if m.fold {
		v, want = asciiLower(v), asciiLower(want) // CSS's i flag folds ASCII letters only
	}
	switch m.op {
	case "=":
		return v == want
	case "~=":
		return want != "" && !strings.ContainsAny(want, " \t\n\r\f") && slices.Contains(strings.Fields(v), want)
	case "|=":
		return v == want || strings.HasPrefix(v, want+"-")
	case "^=":
		return want != "" && strings.HasPrefix(v, want)
	case "$=":
		return want != "" && strings.HasSuffix(v, want)
	case "*=":
		return want != "" && strings.Contains(v, want)
	}
	return false
}

// valueMatchers are the selector's attribute-value matchers ([a=v], [a~=v], [a|=v], [a^=v],
// [a$=v], [a*=v]) wherever they are, :has() and :not() included; a bare [a] matches no value.
// It is a scanner, not a CSS parser: what it cannot read (escapes) it marks unknown, and an
// unknown matcher is judged to depend on every attribute.
func valueMatchers(sel string) []attrMatcher {
	var out []attrMatcher
	depth := 0
	for i := 0; i < len(sel); i++ {
		switch sel[i] {
		case '"', '\'':
			i = skipQuoted(sel, i)
		case '\\':
			i++ // an escaped character is not syntax
		case '(':
			depth++
		case ')':
			depth = max(0, depth-1)
		case '[':
			m, end, ok := readMatcher(sel, i+1)
			if ok {
				m.subject = depth == 0 && lastCompound(sel, end+1)
				out = append(out, m)
			}
			i = end
		}
	}
	if strings.Contains(sel, "/*") {
		// A comment may stand between a name and its operator: this scanner does not read
		// comments, so every matcher may name any attribute.
		for i := range out {
			out[i].name, out[i].known = "*", false
		}
	}
	return out
}

// lastCompound reports whether no combinator follows from i to the end of the complex
// selector (a comma or the end, outside parentheses and brackets).
func lastCompound(sel string, i int) bool {
	depth := 0
	space := false
	for ; i < len(sel); i++ {
		c := sel[i]
		switch {
		case c == '"' || c == '\'':
			i = skipQuoted(sel, i)
		case c == '\\':
			i++
		case c == '(':
			depth++
		case c == ')':
			depth = max(0, depth-1)
		case depth > 0:
		case c == '[':
			for i < len(sel) && sel[i] != ']' {
				if sel[i] == '"' || sel[i] == '\'' {
					i = skipQuoted(sel, i)
				}
				i++
			}
		case c == ',':
			return true
		case c == '>' || c == '+' || c == '~':
			return false
		case isSelSpace(c):
			space = true
			continue
		case space:
			return false // a descendant combinator
		}
		space = false
	}
	return true
}

// readMatcher reads an attribute selector after its "[" at j: the matcher, the index of its
// "]" (or the end), and whether it matches a value.
func readMatcher(sel string, j int) (attrMatcher, int, bool) {
	m := attrMatcher{known: true}
	skip := func() {
		for j < len(sel) && isSelSpace(sel[j]) {
			j++
		}
	}
	skip()
	if j+2 < len(sel) && sel[j] == '*' && sel[j+1] == '|' && sel[j+2] != '=' {
		j += 2 // any namespace
	}
	start := j
	for j < len(sel) && !isSelSpace(sel[j]) && !strings.ContainsRune("=~^$*]", rune(sel[j])) {
		if sel[j] == '\\' {
			m.known = false
			j++
		} else if sel[j] == '|' {
			if j+1 < len(sel) && sel[j+1] == '=' {
				break
			}
			start = j + 1 // a namespace: the name follows
		}
		j++
	}
	m.raw = sel[start:min(j, len(sel))]
	m.name = strings.ToLower(m.raw)
	if !m.known {
		m.name = "*"
	}
	skip()
	if j >= len(sel) || sel[j] == ']' {
		return m, j, false
	}
	if sel[j] == '=' {
		m.op = "="
		j++
	} else if j+1 < len(sel) && sel[j+1] == '=' {
		m.op = sel[j : j+2]
		j += 2
	} else {
		m.known = false
	}
	skip()
	if j < len(sel) && (sel[j] == '"' || sel[j] == '\'') {
		end := skipQuoted(sel, j)
		m.value = sel[j+1 : min(end, len(sel))]
		j = end + 1
	} else {
		start := j
		for j < len(sel) && !isSelSpace(sel[j]) && sel[j] != ']' {
			j++
		}
		m.value = sel[start:j]
	}
	if strings.Contains(m.value, "\\") {
		m.known = false
	}
	skip()
	if j < len(sel) && (sel[j] == 'i' || sel[j] == 'I') {
		m.fold = true
	}
	for j < len(sel) && sel[j] != ']' {
		if sel[j] == '"' || sel[j] == '\'' {
			j = skipQuoted(sel, j)
		} else if sel[j] == '\\' {
			j++
		}
		j++
	}
	return m, j, true
}

// skipQuoted is the index of the quote closing the string that opens at i (or the end).
func skipQuoted(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j
		}
	}
	return len(s)
}

func isSelSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// queryArgs reads query's selector and limit as the page agent takes them; ok is false when
// the page agent would refuse them (in its own words).
func queryArgs(raw json.RawMessage) (sel string, limit int, ok bool) {
	var a map[string]json.RawMessage
	if json.Unmarshal(raw, &a) != nil || a == nil {
		return "", 0, false
	}
	if json.Unmarshal(a["selector"], &sel) != nil {
		return "", 0, false
	}
	limit = 20
	if l, has := a["limit"]; has {
		if limit, ok = wholeArg(l, limit, 1, queryPageLimit); !ok {
			return "", 0, false
		}
	}
	return sel, limit, true
}

// queryValue is a value a named attribute holds on the page (the page agent's first answer).
type queryValue struct {
	name, value string
}

// UnmarshalJSON reads a value as the page agent writes it: [name, value].
func (v *queryValue) UnmarshalJSON(b []byte) error {
	var p []string
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if len(p) != 2 {
		return fmt.Errorf("a value of %d parts, want 2", len(p))
	}
	v.name, v.value = p[0], p[1]
	return nil
}

// queryValueMax is how much of a value the page agent sends (tool_read.js queryValues cuts it
// at 4000 UTF-16 units and adds "…").
const queryValueMax = 4000

// shownChanged reports whether what Go was sent of v may differ from the page's v in a way a
// matcher could tell: the redaction changes it; the page agent already took a secret it knew
// out of it (its "[redacted]", tool_secrets.js scrubSecrets: the value of a password field the
// page also writes in an attribute, which the redaction here no longer sees); or the page
// agent cut it (a key past the cut is in no text Go redacts, and the browser matches the whole
// value). Such a value keeps its element only when the matcher holds for what Go was sent.
func shownChanged(red func(string) string, v string) bool {
	return red(v) != v || strings.Contains(v, "[redacted]") ||
		strings.HasSuffix(v, ellipsis) && utf16Len(v) == queryValueMax+1
}

// dropValues are the places, among the values the named attributes hold on the page, of those
// a subject matcher of ms may match only because of a secret: the value shows redacted text
// and the matcher does not hold for what it shows. An element holding one is left out by the
// page agent before it counts (queryDrop, tool_read.js).
func dropValues(red func(string) string, ms []attrMatcher, values []queryValue) []int {
	drop := []int{}
	for i, v := range values {
		if !shownChanged(red, v.value) {
			continue
		}
		r := red(v.value)
		for _, m := range ms {
			if m.subject && (m.name == "*" || strings.EqualFold(m.name, v.name)) && !m.match(r) {
				drop = append(drop, i)
				break
			}
		}
	}
	return drop
}

// oracleQuery runs query for a selector with attribute-value matchers ms (valueMatchers), in
// two questions to the page agent. First the values the named attributes hold anywhere on the
// page (which do not depend on the values the selector asks for); here, those whose match a
// subject matcher (on the selected element) could owe to a secret are chosen (dropValues), and
// the query runs with them: the page agent leaves out the elements holding one before it
// counts or cuts at the limit, so neither the list, nor total, nor a cut tells of a secret (a
// page that planted as many visible matches as the limit had learned from the cut whether a
// guess matched a secret; pass 5d). A matcher elsewhere (in :has(), before a combinator, in
// :not()) matched an element the answer does not show, so the query is refused when that
// attribute holds redacted text anywhere on the page — whatever the matcher's value, so the
// refusal itself tells nothing about a guess.
func (e *chatEnv) oracleQuery(ctx context.Context, sess page.Info, args json.RawMessage, limit int, ms []attrMatcher) (json.RawMessage, error) {
	red := e.redactor().RedactPage
	var names, elsewhere []string
	for _, m := range ms {
		if m.name == "*" {
			return nil, &agent.ToolError{Message: "query refused: an attribute selector with an escape in its name cannot be checked against what the page hides; write the attribute's name plainly"}
		}
		for _, n := range []string{m.name, m.raw} {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
			if !m.subject && !slices.Contains(elsewhere, n) {
				elsewhere = append(elsewhere, n)
			}
		}
	}
	if len(names) > 16 {
		return nil, &agent.ToolError{Message: "query refused: the selector matches more than 16 attributes' values"}
	}
	sels := make([]string, len(names))
	for i, n := range names {
		sels[i] = "[" + n + "]"
	}
	// The values come in parts of about 200 000 bytes (at most 2 000 000 in all: the page agent
	// refuses past that, whatever the selector's values).
	var held struct {
		ValuesID int          `json:"valuesId"`
		Values   []queryValue `json:"values"`
	}
	for from, part := 0, 0; ; part++ {
		if part == maxValueParts {
			return nil, &agent.ToolError{Message: "query refused: the attributes the selector matches values of hold too much text on this page to check"}
		}
		q := map[string]any{"selector": strings.Join(sels, ","), "attrNames": names, "values": true}
		if from > 0 {
			q["from"], q["valuesId"] = from, held.ValuesID
		}
		probe, _ := json.Marshal(q)
		out, err := e.pageRead(ctx, sess, "query", probe)
		if err != nil {
			return nil, err
		}
		var res struct {
			ValuesID int          `json:"valuesId"`
			Values   []queryValue `json:"values"`
			Next     *int         `json:"next"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("query: reading the page agent's values: %w", err)
		}
		held.ValuesID = res.ValuesID
		held.Values = append(held.Values, res.Values...)
		if res.Next == nil || *res.Next < 0 {
			break
		}
		if *res.Next != len(held.Values) || *res.Next <= from {
			return nil, fmt.Errorf("query: the page agent's values went on at %d after %d", *res.Next, len(held.Values))
		}
		from = *res.Next
	}
	for _, v := range held.Values {
		if slices.Contains(elsewhere, v.name) && shownChanged(red, v.value) {
			shown := make([]string, len(elsewhere))
			for i, n := range elsewhere {
				shown[i] = "[" + n + "]"
			}
			return nil, &agent.ToolError{Message: fmt.Sprintf("query refused: the selector matches the value of %s on an element other than the ones it selects (in :has(), :not() or before a combinator), and on this page that attribute holds text redacted from you (a key, a card number, a password or a cookie), so the answer could tell what it is. Select the elements that carry the attribute themselves", strings.Join(shown, ", "))}
		}
	}
	var a map[string]json.RawMessage
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("query: reading the arguments: %w", err)
	}
	a["limit"] = json.RawMessage(fmt.Sprint(limit))
	a["valuesId"] = json.RawMessage(fmt.Sprint(held.ValuesID))
	a["drop"], _ = json.Marshal(dropValues(red, ms, held.Values))
	sent, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("query: writing the arguments: %w", err)
	}
	return e.actPageTool(ctx, sess, "query", sent)
}

// asciiLower lowercases the ASCII letters of s only.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}
