package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// Search oracles over redacted text. The page agent searches the page's own text: find matches
// outline lines, query's attribute selectors match attribute values. The result the model gets
// is redacted (agent/redact.go), but whether something matched is not: a steered model could
// learn a key or a card number a character at a time (find "AIzaSyQ", find "AIzaSyR", …) or by
// n-grams from its middle (find "Qz9" matching a line whose redacted form shows no "Qz9").
// So a match is judged here, in Go, against what the model may see: a line or an element that
// matches only because of text the redaction removes is no match, and no count, "truncated"
// flag or "more matches" line tells of it. This runs in chatEnv.PageTool, the one place every
// page tool's result passes on its way to the agent's redaction stage.

// findPageLimit is the limit the chat asks the page agent's find for (its maximum), so that
// matches dropped here leave the model's own limit filled by the next ones.
const findPageLimit = 100

// findArgs reads find's text and limit as the page agent would take them; ok is false when the
// arguments are not ones the page agent accepts (it then refuses them in its own words).
func findArgs(raw json.RawMessage) (want string, limit int, ok bool) {
	var a map[string]json.RawMessage
	if json.Unmarshal(raw, &a) != nil || a == nil {
		return "", 0, false
	}
	var text string
	if json.Unmarshal(a["text"], &text) != nil {
		return "", 0, false
	}
	limit = 20
	if l, has := a["limit"]; has {
		if limit, ok = wholeArg(l, limit, 1, findPageLimit); !ok {
			return "", 0, false
		}
	}
	want = normalText(text)
	return want, limit, want != ""
}

// findPageArgs are find's arguments with the page agent's largest limit.
func findPageArgs(raw json.RawMessage) json.RawMessage {
	var a map[string]json.RawMessage
	if json.Unmarshal(raw, &a) != nil || a == nil {
		return raw
	}
	a["limit"] = json.RawMessage(fmt.Sprint(findPageLimit))
	a["marks"] = json.RawMessage("true") // which lines matched: the page agent's word, not a guess here
	b, err := json.Marshal(a)
	if err != nil {
		return raw
	}
	return b
}

// normalText is the page agent's normal (tool_click.js): whitespace runs (its isSpace: space,
// tab, LF, CR, FF, NBSP) become one space, the ends are trimmed, and the text is lowercased.
func normalText(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\u00a0' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return jsLower(b.String())
}

// Lines of the page agent's outline that find never counts as matches (tool_capture.js).
const (
	outlineOverlaysHead = "# open overlays"
	outlinePageHead     = "# page"
	ellipsis            = "…"
)

// findLine is a line of find's answer and its place among the outline's lines: a gap the page
// agent marked with a "…" line counts as one line left out.
type findLine struct {
	at    int
	text  string
	match bool
}

// filterFind rewrites the page agent's find answer (asked with findPageLimit) as the model's
// find with want and limit over the redacted page: a matching line whose redacted form no
// longer contains want is dropped, with the ancestors only it kept; matches, truncated and the
// "more matches" line count only what remains. red is the page redaction.
func filterFind(red func(string) string, want string, limit int, out json.RawMessage) (json.RawMessage, error) {
	var res struct {
		Matches   int    `json:"matches"`
		Outline   string `json:"outline"`
		Truncated bool   `json:"truncated"`
		Hits      *[]int `json:"hits"` // the outline's lines that matched (marks)
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("find: reading the page agent's answer: %w", err)
	}
	var hits map[int]bool
	if res.Hits != nil {
		hits = map[int]bool{}
		for _, h := range *res.Hits {
			hits[h] = true
		}
	}
	if res.Matches == 0 {
		return withoutArg(out, "hits"), nil
	}
	cut := res.Matches > findPageLimit // the page agent searched further than it answered
	raw := strings.Split(res.Outline, "\n")
	if cut && len(raw) > 0 {
		raw = raw[:len(raw)-1] // its "… (N more matches; …)" line
	}
	var lines []findLine
	at := 0
	for k, l := range raw {
		if strings.TrimLeft(l, " ") == ellipsis {
			at++ // a gap
			continue
		}
		// Which lines matched is the page agent's (hits): a lowercasing here that differs from
		// JavaScript's (İ, final sigma) would take an ancestor kept only for a dropped match
		// for a match of its own, and show it.
		m := hits[k]
		if hits == nil {
			m = l != outlineOverlaysHead && l != outlinePageHead && !strings.HasPrefix(l, ellipsis) &&
				strings.Contains(jsLower(l), want)
		}
		lines = append(lines, findLine{at: at, text: l, match: m})
		at++
	}
	keep := make([]bool, len(lines))
	shown := 0
	for i, l := range lines {
		// Compared as the page agent compares (lowercased, whitespace as it is): a looser
		// comparison here would keep a line for text the page agent did not find in it.
		if !l.match || !strings.Contains(jsLower(red(l.text)), want) {
			continue
		}
		shown++
		if shown > limit {
			continue
		}
		keep[i] = true
		level := indentOf(l.text)
		for j := i - 1; j >= 0 && level > 0; j-- {
			if lj := indentOf(lines[j].text); lj < level {
				keep[j] = true
				level = lj
			}
		}
	}
	var b strings.Builder
	last := -2
	for i, l := range lines {
		if !keep[i] {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if last >= 0 && l.at != last+1 {
			b.WriteString(strings.Repeat(" ", indentOf(l.text)) + ellipsis + "\n")
		}
		b.WriteString(l.text)
		last = l.at
	}
	outline := b.String()
	if shown == 0 {
		outline = `(no line of the outline contains "` + cutRunes(want, 60) + `")`
	}
	switch {
	case cut:
		// How many more matched is not told: some of them may match only in a secret.
		outline += "\n" + ellipsis + " (more matches; search for more words)"
	case shown > limit:
		outline += "\n" + ellipsis + fmt.Sprintf(" (%d more matches; raise limit or search for more words)", shown-limit)
	}
	// Below the page agent's limit its truncated is its outline's own (the whole page's outline
	// was cut); over it, the answer is cut anyway.
	truncated := cut || shown > limit || res.Truncated
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("find: reading the page agent's answer: %w", err)
	}
	delete(m, "hits")
	m["matches"], _ = json.Marshal(shown)
	m["outline"], _ = json.Marshal(outline)
	m["truncated"], _ = json.Marshal(truncated)
	nb, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("find: writing the answer: %w", err)
	}
	return nb, nil
}

// indentOf is the page agent's indentOf: the leading spaces of an outline line.
func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " "))
}

// cutRunes cuts s to max runes with an ellipsis, like the page agent's cut.
func cutRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + ellipsis
}

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

// withoutArg is a tool's arguments without name (as given when it has none).
func withoutArg(raw json.RawMessage, name string) json.RawMessage {
	var a map[string]json.RawMessage
	if json.Unmarshal(raw, &a) != nil || a == nil {
		return raw
	}
	if _, has := a[name]; !has {
		return raw
	}
	delete(a, name)
	b, err := json.Marshal(a)
	if err != nil {
		return raw
	}
	return b
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
		out, err := e.c.hub.pages.Tool(ctx, sess.ID, "query", probe)
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

// textArg reads a text argument as the page agent takes it (1 to 400 characters); ok is false
// when there is none or the page agent would refuse it.
func textArg(raw json.RawMessage) (text string, a map[string]json.RawMessage, ok bool) {
	if json.Unmarshal(raw, &a) != nil || a == nil {
		return "", nil, false
	}
	t, has := a["text"]
	if !has || json.Unmarshal(t, &text) != nil || text == "" || utf8.RuneCountInString(text) > 400 {
		return "", nil, false
	}
	return text, a, normalText(text) != ""
}

// clickCandidate is an element the page agent's click by text could take (textCandidates).
type clickCandidate struct {
	Ref      string `json:"ref"`
	Name     string `json:"name"`     // normalised, as the page agent compares it
	Shown    string `json:"shown"`    // as written, whitespace collapsed
	Describe string `json:"describe"` // role "name" (in container)
}

// oracleClick resolves a click by text against the redacted names before anything is clicked:
// the page agent lists the shown clickable elements whose name holds the text, Go keeps those
// whose redacted name still holds it and decides as the page agent would (one named exactly, or
// one holding it; several: a refusal listing them), and the click goes by that ref.
func (e *chatEnv) oracleClick(ctx context.Context, sess page.Info, text string, a map[string]json.RawMessage) (json.RawMessage, error) {
	want := normalText(text)
	probe, _ := json.Marshal(map[string]any{"text": text, "candidates": true})
	out, err := e.c.hub.pages.Tool(ctx, sess.ID, "click", probe) // lists only: no act checks
	if err != nil {
		return nil, err // the page's, named "click: …" already
	}
	var res struct {
		Candidates []clickCandidate `json:"candidates"`
		Where      string           `json:"where"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("click: reading the page agent's candidates: %w", err)
	}
	ref, err := pickCandidate(e.redactor().RedactPage, want, text, res.Where, res.Candidates)
	if err != nil {
		return nil, err
	}
	delete(a, "text")
	a["ref"], _ = json.Marshal(ref)
	sent, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("click: writing the arguments: %w", err)
	}
	return e.actPageTool(ctx, sess, "click", sent)
}

// pickCandidate is byText's choice (tool_click.js) among the candidates whose redacted name
// still holds want: the one named exactly, else the one holding it; a refusal otherwise. The
// refusals list only those candidates.
func pickCandidate(red func(string) string, want, text, where string, cands []clickCandidate) (string, error) {
	var exact, partial []clickCandidate
	for _, c := range cands {
		if !strings.Contains(normalText(red(c.Shown)), want) {
			continue // holds the text only in a secret
		}
		if c.Name == want {
			exact = append(exact, c)
		} else {
			partial = append(partial, c)
		}
	}
	list := func(cs []clickCandidate) string {
		var parts []string
		for i, c := range cs {
			if i == 10 {
				parts = append(parts, fmt.Sprintf("and %d more", len(cs)-10))
				break
			}
			parts = append(parts, c.Ref+" "+c.Describe)
		}
		return strings.Join(parts, "; ")
	}
	shown := cutRunes(text, 60)
	switch {
	case len(exact) == 1:
		return exact[0].Ref, nil
	case len(exact) > 1:
		return "", &agent.ToolError{Message: fmt.Sprintf("click: %d elements%s are named %q; click one by ref: %s", len(exact), where, shown, list(exact))}
	case len(partial) == 1:
		return partial[0].Ref, nil
	case len(partial) > 1:
		return "", &agent.ToolError{Message: fmt.Sprintf("click: %d elements%s have %q in their name; click one by ref: %s", len(partial), where, shown, list(partial))}
	}
	msg := fmt.Sprintf("click: no visible clickable element%s is named %q", where, shown)
	if where != "" {
		msg += " (a text click is limited to the open dialog; close it first or click by ref)"
	}
	return "", &agent.ToolError{Message: msg}
}

// waitPoll is how often the chat looks at the page's text while waiting for a text.
const waitPoll = 100 * time.Millisecond

// oracleWait waits for a text (or for it to go) in Go over the redacted page text: the page
// agent gives its text now (textNow), and a text found only inside a secret is not found.
func (e *chatEnv) oracleWait(ctx context.Context, sess page.Info, text string, a map[string]json.RawMessage) (json.RawMessage, error) {
	var gone bool
	if g, has := a["gone"]; has && json.Unmarshal(g, &gone) != nil {
		return e.actPageTool(ctx, sess, "wait_for", mustJSON(a)) // the page agent refuses it
	}
	timeout := 5000
	if t, has := a["timeoutMs"]; has {
		var ok bool
		if timeout, ok = wholeArg(t, timeout, 0, 10000); !ok {
			return e.actPageTool(ctx, sess, "wait_for", mustJSON(a)) // the page agent refuses it
		}
	}
	want := normalText(text)
	probe, _ := json.Marshal(map[string]any{"text": text, "textNow": true})
	start := time.Now()
	for {
		out, err := e.c.hub.pages.Tool(ctx, sess.ID, "wait_for", probe) // reads only
		if err != nil {
			return nil, err // the page's, named "wait_for: …" already
		}
		var now struct {
			Present bool   `json:"present"`
			Text    string `json:"text"`
		}
		if err := json.Unmarshal(out, &now); err != nil {
			return nil, fmt.Errorf("wait_for: reading the page's text: %w", err)
		}
		// Not in the page's own text is not in the redacted text either (a search for the
		// marker's words aside, which tells nothing of a secret).
		if (now.Present && hasShownText(e.redactor().RedactPage(now.Text), want, utf16Len(now.Text) < 300000)) != gone {
			b, _ := json.Marshal(map[string]any{"found": !gone, "gone": gone, "waitedMs": time.Since(start).Milliseconds()})
			return b, nil
		}
		if time.Since(start) >= time.Duration(timeout)*time.Millisecond {
			what := "did not appear"
			if gone {
				what = "was still there"
			}
			return nil, &agent.ToolError{Message: fmt.Sprintf("wait_for: %q %s after %d ms", cutRunes(text, 60), what, timeout)}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait_for: %w", ctx.Err())
		case <-time.After(waitPoll):
		}
	}
}

// hasShownText is the page agent's hasText over the redacted text: want in the lowercased
// text, or, when the page's own text was under 300 000 UTF-16 units (short: the page agent's
// test, on the text before redaction), in it with whitespace runs collapsed.
func hasShownText(shown, want string, short bool) bool {
	if strings.Contains(jsLower(shown), want) {
		return true
	}
	return short && strings.Contains(normalText(shown), want)
}

// utf16Len is the length of s in UTF-16 code units, JavaScript's length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// mustJSON marshals a map of raw values (which cannot fail).
func mustJSON(a map[string]json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(a)
	return b
}

// shownName is a click's answer as the model gets it: its name (the accessible name
// lowercased, which the chat's checks read) lowercased a key and hid its format from the
// redaction, so name is made again from shownName (as written) redacted first; shownName goes.
func shownName(red func(string) string, out json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(out, &m) != nil || m == nil {
		return out
	}
	if _, has := m["name"]; !has {
		return out
	}
	var shown string
	if json.Unmarshal(m["shownName"], &shown) == nil && shown != "" {
		m["name"], _ = json.Marshal(cutRunes(normalText(red(shown)), 200))
	} else {
		delete(m, "name")
	}
	delete(m, "shownName")
	b, err := json.Marshal(m)
	if err != nil {
		return out
	}
	return b
}

// oracleClickSelector resolves a click by a selector with attribute-value matchers as the
// page agent's bySelector does (exactly one element), over the elements query shows after
// filterQuery, so that an element matched only in a secret is not clicked, and the click goes
// by its ref.
func (e *chatEnv) oracleClickSelector(ctx context.Context, sess page.Info, sel string, ms []attrMatcher, a map[string]json.RawMessage) (json.RawMessage, error) {
	q, _ := json.Marshal(map[string]any{"selector": sel})
	out, err := e.oracleQuery(ctx, sess, q, queryPageLimit, ms)
	if err != nil {
		var te *agent.ToolError
		if errors.As(err, &te) {
			return nil, &agent.ToolError{Message: strings.Replace(te.Message, "query refused", "click refused", 1)}
		}
		return nil, err
	}
	var res struct {
		Matches []struct {
			Ref string `json:"ref"`
			Tag string `json:"tag"`
		} `json:"matches"`
		Note string `json:"note"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("click: reading the elements the selector matches: %w", err)
	}
	shown := cutRunes(sel, 200)
	switch {
	case res.Note != "":
		return nil, &agent.ToolError{Message: fmt.Sprintf("click: more than %d elements match %s; narrow the selector", queryPageLimit, shown)}
	case len(res.Matches) == 0:
		return nil, &agent.ToolError{Message: "click: no element matches " + shown}
	case len(res.Matches) > 1:
		var refs []string
		for i, m := range res.Matches {
			if i == 10 {
				refs = append(refs, fmt.Sprintf("and %d more", len(res.Matches)-10))
				break
			}
			refs = append(refs, m.Ref+" "+m.Tag)
		}
		return nil, &agent.ToolError{Message: fmt.Sprintf("click: %d elements match %s; click one by ref: %s", len(res.Matches), shown, strings.Join(refs, "; "))}
	}
	delete(a, "selector")
	a["ref"], _ = json.Marshal(res.Matches[0].Ref)
	return e.actPageTool(ctx, sess, "click", mustJSON(a))
}

// selectorArg reads click's selector (1 to 1024 characters) when it is its only target.
func selectorArg(a map[string]json.RawMessage) (string, bool) {
	var sel string
	if a == nil || a["ref"] != nil || a["text"] != nil || json.Unmarshal(a["selector"], &sel) != nil || sel == "" || len(sel) > 1024 {
		return "", false
	}
	return sel, true
}

// searchTool runs the page tools that search the page's text or attributes (find, query with
// attribute-value matchers, click and wait_for by text, click by such a selector) over what
// the model may see; ok is false for any other call, which runs as it is. The chat's own
// arguments (candidates, textNow, attrNames) are never taken from the model.
func (e *chatEnv) searchTool(ctx context.Context, sess page.Info, tool string, args json.RawMessage) (json.RawMessage, bool, error) {
	red := e.redactor().RedactPage
	switch tool {
	case "click":
		args = withoutArg(withoutArg(args, "candidates"), "attrNames")
		if text, a, ok := textArg(args); ok && a["ref"] == nil && a["selector"] == nil {
			out, err := e.oracleClick(ctx, sess, text, a)
			return shownName(red, out), true, err
		}
		var a map[string]json.RawMessage
		json.Unmarshal(args, &a)
		if sel, ok := selectorArg(a); ok {
			if ms := valueMatchers(sel); len(ms) > 0 {
				out, err := e.oracleClickSelector(ctx, sess, sel, ms, a)
				return shownName(red, out), true, err
			}
		}
		out, err := e.actPageTool(ctx, sess, tool, args)
		return shownName(red, out), true, err
	case "select":
		args = withoutArg(withoutArg(args, "options"), "index")
		var a map[string]json.RawMessage
		var option string
		if json.Unmarshal(args, &a) == nil && a != nil && json.Unmarshal(a["option"], &option) == nil && option != "" && utf8.RuneCountInString(option) <= 400 {
			out, err := e.oracleSelect(ctx, sess, option, a)
			return out, true, err
		}
	case "wait_for":
		args = withoutArg(args, "textNow")
		if text, a, ok := textArg(args); ok && a["ref"] == nil {
			out, err := e.oracleWait(ctx, sess, text, a)
			return out, true, err
		}
		out, err := e.actPageTool(ctx, sess, tool, args)
		return out, true, err
	case "find":
		args = withoutArg(args, "marks")
		if want, limit, ok := findArgs(args); ok {
			out, err := e.actPageTool(ctx, sess, tool, findPageArgs(args))
			if err != nil {
				return out, true, err
			}
			out, err = filterFind(red, want, limit, out)
			return out, true, err
		}
	case "query":
		args = withoutArg(args, "attrNames")
		if sel, limit, ok := queryArgs(args); ok {
			if ms := valueMatchers(sel); len(ms) > 0 {
				out, err := e.oracleQuery(ctx, sess, args, limit, ms)
				return out, true, err
			}
		}
		out, err := e.actPageTool(ctx, sess, tool, args)
		return out, true, err
	}
	return nil, false, nil
}

// selectOption is an option of a <select> as the page agent lists it for the chat.
type selectOption struct {
	Text  string `json:"text"` // as written, whitespace collapsed
	Value string `json:"value"`
}

// oracleSelect picks the option select names as the page agent's toolSelect would (the option
// whose text is the option, else whose value is, else the one whose text holds it) over the
// redacted option texts, so that a text found only inside a secret names no option; the
// select then goes by index.
func (e *chatEnv) oracleSelect(ctx context.Context, sess page.Info, option string, a map[string]json.RawMessage) (json.RawMessage, error) {
	a["options"] = json.RawMessage("true")
	out, err := e.c.hub.pages.Tool(ctx, sess.ID, "select", mustJSON(a)) // lists only
	delete(a, "options")
	if err != nil {
		return nil, err // the page's, named "select: …" already
	}
	var res struct {
		Options []selectOption `json:"options"`
		Element string         `json:"element"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("select: reading the page agent's options: %w", err)
	}
	pick, err := pickOption(e.redactor().RedactPage, option, res.Element, res.Options)
	if err != nil {
		return nil, err
	}
	a["index"], _ = json.Marshal(pick)
	return e.actPageTool(ctx, sess, "select", mustJSON(a))
}

// pickOption is toolSelect's choice over the redacted option texts (a value names its option
// only whole, which is no search).
func pickOption(red func(string) string, option, element string, opts []selectOption) (int, error) {
	w := normalText(option)
	exact, byValue := -1, -1
	var partial []int
	var names []string
	for i, o := range opts {
		shown := red(o.Text)
		if i < 30 {
			names = append(names, strconvQuote(cutRunes(shown, 40)))
		}
		t := jsLower(shown)
		switch {
		case t == w && exact < 0:
			exact = i
		case o.Value == option && byValue < 0:
			byValue = i
		case strings.Contains(t, w):
			partial = append(partial, i)
		}
	}
	switch {
	case exact >= 0:
		return exact, nil
	case byValue >= 0:
		return byValue, nil
	case len(partial) == 1:
		return partial[0], nil
	}
	list := strings.Join(names, ", ")
	if len(opts) > 30 {
		list += ", " + ellipsis
	}
	if len(partial) > 1 {
		return -1, &agent.ToolError{Message: fmt.Sprintf("select: %d options of %s contain %q; name one exactly. Its options: %s", len(partial), element, cutRunes(option, 60), list)}
	}
	return -1, &agent.ToolError{Message: fmt.Sprintf("select: %s has no option %q. Its options: %s", element, cutRunes(option, 60), list)}
}

// strconvQuote quotes an option's text as the page agent's quote does (a backslash before a
// double quote and before a backslash).
func strconvQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
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

// wholeArg reads a whole-number argument as the page agent's intArg does: null is the default
// def, any JSON number that is whole (20.0 too) from min to max is taken; ok is false
// otherwise, when the page agent refuses it. A reading stricter than the page agent's would
// send a call it accepts past the checks here.
func wholeArg(raw json.RawMessage, def, min, max int) (int, bool) {
	var v *float64
	if json.Unmarshal(raw, &v) != nil {
		return 0, false
	}
	if v == nil {
		return def, true
	}
	if *v != float64(int(*v)) || *v < float64(min) || *v > float64(max) {
		return 0, false
	}
	return int(*v), true
}
