package agent

import (
	"context"
	"encoding/json"
	"strings"
)

// The redaction stage (issue 11, DESIGN invariant 10): one place in Go between every tool
// result and every model request. Run wraps Config.Provider so that every call to the model —
// each step's request and compaction's summary request alike — has its whole Request redacted
// right before it is sent (system prompt, every message's text, tool results, tool-call
// arguments echoed back), and redacts each tool result (and tool error) as it comes back, before
// the result is capped, enters the history, the panel, the store or the trace. Which texts are
// secret is the Redactor's business: the proxy knows the page's password values, the site's
// cookies and authorization headers and the provider keys (proxy/internal/redact).
//
// The same Redactor refuses, before it runs, a tool call whose arguments carry a known secret
// (an address with a password or cookie value in it, a body, a header, text to type): nothing
// that carries a secret is sent anywhere by the agent.

// Redactor removes secrets from text bound for a model. Implementations are safe for
// concurrent use.
type Redactor interface {
	// Redact returns text with every secret it knows replaced by a marker that names the kind,
	// such as "[redacted: password]". Text that carries none comes back unchanged.
	Redact(text string) string
	// Secret returns the kind of the first secret text carries ("password", "cookie",
	// "authorization", "key"), or "" when it carries none.
	Secret(text string) string
}

// redactingProvider is a Provider whose every request is redacted before it is sent.
type redactingProvider struct {
	inner Provider
	red   Redactor
}

func (p redactingProvider) Stream(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	return p.inner.Stream(ctx, RedactRequest(p.red, req), onEvent)
}

// withRedaction returns cfg with its Provider wrapped so that every request passes through
// cfg.Redactor. If cfg.Redactor is nil, cfg is returned as it is.
func withRedaction(cfg Config) Config {
	if cfg.Redactor == nil || cfg.Provider == nil {
		return cfg
	}
	if _, done := cfg.Provider.(redactingProvider); !done {
		cfg.Provider = redactingProvider{inner: cfg.Provider, red: cfg.Redactor}
	}
	return cfg
}

// RedactRequest returns a copy of req with the system prompt, every message's text and every
// tool call's arguments redacted; req itself (and the history it points into) is not changed.
func RedactRequest(red Redactor, req Request) Request {
	if red == nil {
		return req
	}
	out := req
	out.System = red.Redact(req.System)
	out.Messages = make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		m.Text = red.Redact(m.Text)
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				c.Arguments = redactArguments(red, c.Arguments)
				calls[j] = c
			}
			m.ToolCalls = calls
		}
		out.Messages[i] = m
	}
	return out
}

// redactArguments redacts a tool call's JSON arguments, keeping them a JSON object: providers
// send them back as structured input, which must parse.
func redactArguments(red Redactor, args string) string {
	out := red.Redact(args)
	if out == args || json.Valid([]byte(out)) || !json.Valid([]byte(args)) {
		return out
	}
	return `{"redacted": "these arguments carried a secret"}`
}

// withArticle is a kind of secret with its indefinite article: "a password", "an authorization".
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// redactCall is call as the panel, the store and the history keep it: its arguments redacted
// (a model that wrote a secret into them is refused, and the value is not kept).
func redactCall(red Redactor, call ToolCall) ToolCall {
	if red != nil {
		call.Arguments = redactArguments(red, call.Arguments)
	}
	return call
}

// redactCalls is redactCall for a reply's calls (a copy when anything changes).
func redactCalls(red Redactor, calls []ToolCall) []ToolCall {
	if red == nil {
		return calls
	}
	out := calls
	for i, c := range calls {
		if r := redactCall(red, c); r.Arguments != c.Arguments {
			if &out[0] == &calls[0] {
				out = append([]ToolCall(nil), calls...)
			}
			out[i] = r
		}
	}
	return out
}

// PageRedactor is a Redactor that also removes what a page may show but the person did not
// write: a tool result passes through RedactPage instead of Redact (the proxy's removes payment
// card numbers there, not from the person's own messages).
type PageRedactor interface {
	RedactPage(text string) string
}

// redactResult is a tool result (or error text) as it may enter the conversation.
func redactResult(red Redactor, s string) string {
	if red == nil {
		return s
	}
	if p, ok := red.(PageRedactor); ok {
		return p.RedactPage(s)
	}
	return red.Redact(s)
}

// secretInArguments returns a tool error when a call's arguments carry a known secret; the
// call is then not run.
func secretInArguments(red Redactor, call ToolCall) error {
	if red == nil {
		return nil
	}
	if kind := red.Secret(call.Arguments); kind != "" {
		return toolErrorf("refused: the arguments of %s carry a secret (%s value the proxy knows, such as one in an address); nothing was sent. Secrets never leave through the agent: do not try to send it another way", truncateRunes(call.Name, 80), withArticle(kind))
	}
	return nil
}
