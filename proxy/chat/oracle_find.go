package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// find over what the model may see (oracle.go has why).

// findPageLimit is the page agent's largest find limit (the model's may not be larger).
const findPageLimit = 100

// maxFindParts bounds the parts of the whole outline read for one find: the page agent's
// outline for find is at most 2 000 000 characters (FIND_BUDGET), a part about 200 000 bytes.
const maxFindParts = 64

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

// findPageArgs are find's arguments asking the page agent for its whole outline's lines from
// line from (of the outline outlineID names, after the first part).
func findPageArgs(raw json.RawMessage, from, outlineID int) (json.RawMessage, error) {
	var a map[string]json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("find: reading the arguments: %w", err)
	}
	a["from"] = json.RawMessage(fmt.Sprint(from))
	if from > 0 {
		a["outlineId"] = json.RawMessage(fmt.Sprint(outlineID))
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("find: writing the arguments: %w", err)
	}
	return b, nil
}

// oracleFind runs find over the whole outline the page agent reads for it: the page agent sends
// its lines (in parts), not its matches, and the search runs here over each line redacted.
// The page agent's own find cut its matches at its limit, and whether it had cut them hung on
// every match, one inside a secret too: a page that planted as many visible matches of a guess
// as the limit learned from "more matches" whether the guess was in the secret (pass 5d). The
// outline does not depend on what is searched for, and everything the model is told (which
// lines, how many, whether more) is counted here over the redacted lines.
func (e *chatEnv) oracleFind(ctx context.Context, sess page.Info, args json.RawMessage, want string, limit int) (json.RawMessage, error) {
	var lines []string
	from, id := 0, 0
	for part := 0; ; part++ {
		if part == maxFindParts {
			return nil, &agent.ToolError{Message: "find: the page's outline is too large to search; use outline with a ref or query"}
		}
		a, err := findPageArgs(args, from, id)
		if err != nil {
			return nil, err
		}
		var out json.RawMessage
		if part == 0 {
			out, err = e.actPageTool(ctx, sess, "find", a)
		} else {
			out, err = e.pageRead(ctx, sess, "find", a)
		}
		if err != nil {
			return out, err
		}
		var res struct {
			OutlineID int      `json:"outlineId"`
			Lines     []string `json:"lines"`
			Next      int      `json:"next"`
			Truncated bool     `json:"truncated"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("find: reading the page agent's answer: %w", err)
		}
		lines = append(lines, res.Lines...)
		if res.Next < 0 {
			return findOver(e.redactor().RedactPageLines(lines), want, limit, res.Truncated)
		}
		if res.Next <= from || res.Next != len(lines) {
			return nil, fmt.Errorf("find: the page agent's outline went on at line %d after %d lines", res.Next, len(lines))
		}
		from, id = res.Next, res.OutlineID
	}
}

// Lines of the page agent's outline that find never counts as matches (tool_capture.js).
const (
	outlineOverlaysHead = "# open overlays"
	outlinePageHead     = "# page"
	ellipsis            = "…"
)

// findOver is find's answer for want and limit over the page's whole outline, its lines as
// the model may see them (shown: each redacted, in the context of the whole outline:
// RedactPageLines) and whether the page agent cut it, as the page agent's find writes it: the
// matching lines (their ancestors with them, a "…" line where lines were left out), how many
// matched, and whether the answer or the outline was cut. A line matches when its shown form,
// lowercased as JavaScript lowercases, holds want (whitespace compared as it is, as the page
// agent compares); the lines go out as shown: a line of a private key block written across
// elements is redacted only in its context, which the answer does not carry.
func findOver(shown []string, want string, limit int, outlineCut bool) (json.RawMessage, error) {
	lines := shown
	keep := make([]bool, len(lines))
	matched := 0
	for i, l := range lines {
		if l == "" || l == outlineOverlaysHead || l == outlinePageHead || strings.HasPrefix(l, ellipsis) ||
			!strings.Contains(jsLower(l), want) {
			continue
		}
		matched++
		if matched > limit {
			continue
		}
		keep[i] = true
		level := indentOf(l)
		for j := i - 1; j >= 0 && level > 0; j-- {
			if lj := indentOf(lines[j]); lj < level {
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
		if last >= 0 && i != last+1 {
			b.WriteString(strings.Repeat(" ", indentOf(l)) + ellipsis + "\n")
		}
		b.WriteString(l)
		last = i
	}
	outline := b.String()
	if matched == 0 {
		outline = `(no line of the outline contains "` + cutRunes(want, 60) + `")`
	}
	if matched > limit {
		outline += "\n" + ellipsis + fmt.Sprintf(" (%d more matches; raise limit or search for more words)", matched-limit)
	}
	nb, err := json.Marshal(struct {
		Matches   int    `json:"matches"`
		Outline   string `json:"outline"`
		Truncated bool   `json:"truncated"`
	}{matched, outline, matched > limit || outlineCut})
	if err != nil {
		return nil, fmt.Errorf("find: writing the answer: %w", err)
	}
	return nb, nil
}

// indentOf is the page agent's indentOf: the leading spaces of an outline line.
func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " "))
}
