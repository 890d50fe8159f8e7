package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/proxy/internal/redact"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// wait_for by text over what the model may see (oracle.go has why).

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
	start := time.Now()
	// The page agent sends its text when it differs from the one it sent last (lastID): a
	// page that holds the text only in a secret does not send its whole text each poll. An
	// unchanged text is judged again only when the redaction changed meanwhile (a secret the
	// page agent reported: another compiled set of secrets).
	lastID, lastText := 0, ""
	var lastRed *redact.Redactor
	lastMet := false
	for {
		q := map[string]any{"text": text, "textNow": true}
		if lastID > 0 {
			q["since"] = lastID
		}
		probe, _ := json.Marshal(q)
		out, err := e.pageRead(ctx, sess, "wait_for", probe) // reads only
		if err != nil {
			return nil, err // the page's, named "wait_for: …" already
		}
		var now struct {
			Present bool   `json:"present"`
			Text    string `json:"text"`
			Same    bool   `json:"same"`
			TextID  int    `json:"textId"`
		}
		if err := json.Unmarshal(out, &now); err != nil {
			return nil, fmt.Errorf("wait_for: reading the page's text: %w", err)
		}
		met := false // the text is on the page as the model may see it
		if now.Present {
			red := e.redactor().current()
			switch {
			case now.Same && (now.TextID != lastID || lastID == 0):
				return nil, fmt.Errorf("wait_for: the page agent's text %d is not the one it sent (%d)", now.TextID, lastID)
			case now.Same && red == lastRed:
				met = lastMet
			default:
				if now.Same {
					now.Text = lastText
				}
				met = hasShownText(red.RedactPage(now.Text), want, utf16Len(now.Text) < 300000)
			}
			lastID, lastText, lastRed, lastMet = now.TextID, now.Text, red, met
		}
		// Not in the page's own text is not in the redacted text either (a search for the
		// marker's words aside, which tells nothing of a secret).
		if met != gone {
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
