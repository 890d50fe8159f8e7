package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// select by option text over what the model may see (oracle.go has why).

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
	out, err := e.pageRead(ctx, sess, "select", mustJSON(a)) // lists only
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
