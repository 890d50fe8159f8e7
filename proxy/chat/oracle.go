package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

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
// page tool's result passes on its way to the agent's redaction stage: searchTool (below)
// routes find (oracle_find.go), query (oracle_query.go), click (oracle_click.go), wait_for
// (oracle_wait.go) and select (oracle_select.go); jslower.go folds case as the page agent does.

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

// cutRunes cuts s to max runes with an ellipsis, like the page agent's cut.
func cutRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + ellipsis
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

// mustJSON marshals a map of raw values (which cannot fail).
func mustJSON(a map[string]json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(a)
	return b
}

// searchTool runs the page tools that search the page's text or attributes (find, query with
// attribute-value matchers, click and wait_for by text, click by such a selector) over what
// the model may see; ok is false for any other call, which runs as it is. The chat's own
// arguments (candidates, textNow, attrNames) are never taken from the model.
func (e *chatEnv) searchTool(ctx context.Context, sess page.Info, tool string, args json.RawMessage) (json.RawMessage, bool, error) {
	red := e.redactor().RedactPage
	switch tool {
	case "click":
		args = withoutArg(withoutArg(withoutArg(args, "candidates"), "attrNames"), "from")
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
		args = withoutArg(withoutArg(args, "textNow"), "since")
		if text, a, ok := textArg(args); ok && a["ref"] == nil {
			out, err := e.oracleWait(ctx, sess, text, a)
			return out, true, err
		}
		out, err := e.actPageTool(ctx, sess, tool, args)
		return out, true, err
	case "find":
		args = withoutArg(withoutArg(args, "from"), "outlineId")
		if want, limit, ok := findArgs(args); ok {
			out, err := e.oracleFind(ctx, sess, args, want, limit)
			return out, true, err
		}
	case "query":
		args = withoutArg(withoutArg(withoutArg(withoutArg(withoutArg(args, "attrNames"), "values"), "valuesId"), "drop"), "from")
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

// pageRead is a search tool's own question to the page (its matches, candidates, options or
// text): no act checks, but a page that went away meanwhile is told as every tool tells it
// (goneError), the proxy's stop of a navigation included.
func (e *chatEnv) pageRead(ctx context.Context, sess page.Info, tool string, args json.RawMessage) (json.RawMessage, error) {
	out, err := e.c.hub.pages.Tool(ctx, sess.ID, tool, args)
	if errors.Is(err, page.ErrGone) {
		return nil, goneError(chatActPage{sessionActPage: sessionActPage{pages: e.c.hub.pages, id: sess.ID}, c: e.c, sess: sess}, tool)
	}
	return out, err
}
