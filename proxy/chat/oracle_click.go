package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// click by text or by a selector with attribute-value matchers, decided before anything is
// clicked over what the model may see (oracle.go has why).

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
	// Every candidate, in parts: a list the page agent cut at a count told, by which elements
	// filled it, whether a name held the text only in a secret (pass 5d).
	var cands []clickCandidate
	var where string
	for from, part := 0, 0; ; part++ {
		if part == maxCandidateParts {
			return nil, &agent.ToolError{Message: "click: the page has too many clickable elements named like that to check; click by ref"}
		}
		probe, _ := json.Marshal(map[string]any{"text": text, "candidates": true, "from": from})
		out, err := e.pageRead(ctx, sess, "click", probe) // lists only: no act checks
		if err != nil {
			return nil, err // the page's, named "click: …" already
		}
		var res struct {
			Candidates []clickCandidate `json:"candidates"`
			Where      string           `json:"where"`
			Next       *int             `json:"next"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("click: reading the page agent's candidates: %w", err)
		}
		cands, where = append(cands, res.Candidates...), res.Where
		if res.Next == nil || *res.Next < 0 {
			break
		}
		if *res.Next <= from {
			return nil, fmt.Errorf("click: the page agent's candidates went back to %d from %d", *res.Next, from)
		}
		from = *res.Next
	}
	ref, err := pickCandidate(e.redactor().RedactPage, want, text, where, cands)
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

// maxCandidateParts bounds the parts of click's candidates read (the page agent refuses past
// 5000 shown clickable elements; a part holds about 200 000 bytes of them).
const maxCandidateParts = 64

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
// page agent's bySelector does (exactly one element), over the elements query shows
// (oracleQuery), so that an element matched only in a secret is not clicked, and the click goes
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
		Total   int `json:"total"`
		Matches []struct {
			Ref string `json:"ref"`
			Tag string `json:"tag"`
		} `json:"matches"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("click: reading the elements the selector matches: %w", err)
	}
	shown := cutRunes(sel, 200)
	switch {
	case res.Total > len(res.Matches):
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
