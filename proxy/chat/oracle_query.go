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

// queryPageLimit is the limit the chat asks the page agent's query for (its maximum) when the
// selector matches attribute values, so that elements dropped here leave room for the next.
const queryPageLimit = 200

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

// filterQuery rewrites the page agent's query answer (asked with queryPageLimit) for a selector
// with attribute-value matchers on names: an element one of whose matched attributes the
// redaction changes is dropped (it may match only in the secret), and total counts what
// remains. Past the page agent's limit the number of further matches is not told (some may
// match only in a secret).
func filterQuery(red func(string) string, names []attrMatcher, limit int, out json.RawMessage) (json.RawMessage, error) {
	var res struct {
		Total   int               `json:"total"`
		Matches []json.RawMessage `json:"matches"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("query: reading the page agent's answer: %w", err)
	}
	var kept []json.RawMessage
	for _, m := range res.Matches {
		var el map[string]json.RawMessage
		var attrs, extra map[string]string
		if err := json.Unmarshal(m, &el); err != nil {
			return nil, fmt.Errorf("query: reading the page agent's answer: %w", err)
		}
		json.Unmarshal(el["attrs"], &attrs)
		json.Unmarshal(el["extra"], &extra)
		if matchedInSecret(red, names, attrs) || matchedInSecret(red, names, extra) {
			continue
		}
		if _, has := el["extra"]; has {
			delete(el, "extra") // the chat's own (attrNames): not for the model
			b, err := json.Marshal(el)
			if err != nil {
				return nil, fmt.Errorf("query: writing the answer: %w", err)
			}
			m = b
		}
		kept = append(kept, m)
	}
	total := len(kept)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("query: reading the page agent's answer: %w", err)
	}
	if res.Total > len(res.Matches) {
		m["note"], _ = json.Marshal(fmt.Sprintf("more elements match than the %d read; total counts those read; narrow the selector", len(res.Matches)))
	}
	if len(kept) > limit {
		kept = kept[:limit]
	}
	if kept == nil {
		kept = []json.RawMessage{}
	}
	m["total"], _ = json.Marshal(total)
	m["matches"], _ = json.Marshal(kept)
	nb, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("query: writing the answer: %w", err)
	}
	return nb, nil
}

// matchedInSecret reports whether the element's match may hold only because of a secret: a
// matcher names one of its attributes whose value the redaction changes and does not hold for
// the redacted value (what the model sees), or the matcher could not be read.
func matchedInSecret(red func(string) string, ms []attrMatcher, attrs map[string]string) bool {
	for _, m := range ms {
		if !m.subject {
			continue // judged on the whole page (chatEnv.oracleQuery)
		}
		for a, v := range attrs {
			if m.name != "*" && !strings.EqualFold(m.name, a) {
				continue
			}
			if r := red(v); r != v && !m.match(r) {
				return true
			}
		}
	}
	return false
}

// oracleQuery runs query for a selector with attribute-value matchers ms (valueMatchers).
// A matcher on the selected element is judged per element (filterQuery); one elsewhere (in
// :has(), before a combinator, in :not()) matched an element the answer does not show, so the
// query is refused when that attribute holds redacted text anywhere on the page — whatever the
// matcher's value, so the refusal itself tells nothing about a guess.
func (e *chatEnv) oracleQuery(ctx context.Context, sess page.Info, args json.RawMessage, limit int, ms []attrMatcher) (json.RawMessage, error) {
	red := e.redactor()
	var names, elsewhere []string
	for _, m := range ms {
		if m.name == "*" {
			return nil, &agent.ToolError{Message: "query refused: an attribute selector with an escape in its name cannot be checked against what the page hides; write the attribute's name plainly"}
		}
		for _, n := range []string{m.name, m.raw} {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		for _, n := range []string{m.name, m.raw} {
			if !m.subject && !slices.Contains(elsewhere, n) {
				elsewhere = append(elsewhere, n)
			}
		}
	}
	if len(names) > 16 {
		return nil, &agent.ToolError{Message: "query refused: the selector matches more than 16 attributes' values"}
	}
	if len(elsewhere) > 0 {
		sels := make([]string, len(elsewhere))
		for i, n := range elsewhere {
			sels[i] = "[" + n + "]"
		}
		probe, _ := json.Marshal(map[string]any{"selector": strings.Join(sels, ","), "limit": queryPageLimit, "attrNames": elsewhere})
		out, err := e.pageRead(ctx, sess, "query", probe)
		var res struct {
			Total   int `json:"total"`
			Matches []struct {
				Extra map[string]string `json:"extra"`
			} `json:"matches"`
		}
		hidden := err != nil || json.Unmarshal(out, &res) != nil || res.Total > len(res.Matches)
		for _, m := range res.Matches {
			for _, v := range m.Extra {
				hidden = hidden || red.RedactPage(v) != v
			}
		}
		if hidden {
			return nil, &agent.ToolError{Message: fmt.Sprintf("query refused: the selector matches the value of %s on an element other than the ones it selects (in :has(), :not() or before a combinator), and on this page that attribute holds text redacted from you (a key, a card number, a password or a cookie), so the answer could tell what it is. Select the elements that carry the attribute themselves", strings.Join(sels, ", "))}
		}
	}
	var a map[string]json.RawMessage
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("query: reading the arguments: %w", err)
	}
	a["limit"] = json.RawMessage(fmt.Sprint(queryPageLimit))
	a["attrNames"], _ = json.Marshal(names)
	sent, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("query: writing the arguments: %w", err)
	}
	out, err := e.actPageTool(ctx, sess, "query", sent)
	if err != nil {
		return out, err
	}
	return filterQuery(red.RedactPage, ms, limit, out)
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
