package chat

import (
	"encoding/json"
	"fmt"
	"strings"
)

// find over what the model may see (oracle.go has why).

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
