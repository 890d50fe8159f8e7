package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// wordRedactor redacts fixed words, as the proxy's redactor redacts the secrets it knows.
type wordRedactor map[string]string // secret → kind

func (r wordRedactor) Redact(s string) string {
	for secret, kind := range r {
		s = strings.ReplaceAll(s, secret, "[redacted: "+kind+"]")
	}
	return s
}

func (r wordRedactor) Secret(s string) string {
	for secret, kind := range r {
		if strings.Contains(s, secret) {
			return kind
		}
	}
	return ""
}

const plantedSecret = "hunter2-PLANTED"

var testRedactor = wordRedactor{plantedSecret: "password"}

// leaks reports where in reqs the planted secret appears.
func leaks(reqs []Request) []string {
	var out []string
	for i, r := range reqs {
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), plantedSecret) {
			out = append(out, fmt.Sprintf("request %d: %.300s", i, b))
		}
	}
	return out
}

// redactRecorder is a recorder that keeps the turn's trace.
type redactRecorder struct {
	fullRecorder
	trace TurnTrace
	tools []string // results as the observer heard them
}

func (r *redactRecorder) Trace(t TurnTrace) { r.trace = t }
func (r *redactRecorder) Tool(c ToolCall, status, result string) {
	r.tools = append(r.tools, result)
}

// TestRunRedactsEveryRequest: the secret is in the history (a person's message, an old tool
// result, a call's arguments), in the system prompt, in a tool result and in a tool error. No
// request carries it; the results entering the history, the observer and the trace are redacted.
func TestRunRedactsEveryRequest(t *testing.T) {
	history := []Message{
		{Role: RoleUser, Text: "my password is " + plantedSecret},
		{Role: RoleAssistant, ToolCalls: []ToolCall{call("old", "query", `{"selector":"input[value='`+plantedSecret+`']"}`)}},
		{Role: RoleTool, ToolCallID: "old", ToolName: "query", Text: `{"value":"` + plantedSecret + `"}`},
		{Role: RoleAssistant, Text: "noted"},
	}
	p := &fakeProvider{replies: []Response{
		{ToolCalls: []ToolCall{call("c1", "capture_page", `{}`), call("c2", "outline", `{}`)}},
		{Text: "done", StopReason: "end"},
	}}
	env := &fakeEnv{page: func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "outline" {
			return nil, fmt.Errorf("outline: the field shows %s", plantedSecret)
		}
		return json.RawMessage(`{"text":"Password: ` + plantedSecret + `"}`), nil
	}}
	obs := &redactRecorder{}
	msgs, err := Run(context.Background(), Config{Provider: p, Mode: ModeAsk, Env: env, Redactor: testRedactor,
		System: "page title: " + plantedSecret}, history, "log in", obs)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.requests) != 2 {
		t.Fatalf("%d requests, want 2", len(p.requests))
	}
	for _, l := range leaks(p.requests) {
		t.Errorf("the model was sent the secret: %s", l)
	}
	if got := p.requests[1].Messages[len(p.requests[1].Messages)-2].Text; got != `{"text":"Password: [redacted: password]"}` {
		t.Errorf("the capture result sent = %q, want the secret replaced by its marker", got)
	}
	if got := p.requests[0].Messages[1].ToolCalls[0].Arguments; !json.Valid([]byte(got)) || !strings.Contains(got, "[redacted: password]") {
		t.Errorf("echoed arguments = %q, want valid JSON with the marker", got)
	}
	// What the turn added to the history, what the observer heard and the trace are redacted.
	for _, m := range msgs[len(history):] {
		if strings.Contains(m.Text, plantedSecret) {
			t.Errorf("the history keeps the secret in a %s message: %q", m.Role, m.Text)
		}
	}
	for _, m := range obs.appended {
		if strings.Contains(m.Text, plantedSecret) {
			t.Errorf("the observer stored the secret: %q", m.Text)
		}
	}
	for _, r := range obs.tools {
		if strings.Contains(r, plantedSecret) {
			t.Errorf("the panel was shown the secret: %q", r)
		}
	}
	b, _ := json.Marshal(obs.trace)
	if len(obs.trace.Steps) == 0 || strings.Contains(string(b), plantedSecret) {
		t.Errorf("the trace keeps the secret: %s", b)
	}
	// The history the caller holds is not rewritten by the request's redaction: the person's own
	// words stay theirs in the chat, and only what goes to the model is redacted.
	if history[0].Text != "my password is "+plantedSecret {
		t.Errorf("the caller's history was changed: %q", history[0].Text)
	}
}

// TestRunRedactsSummaryRequests: compaction's summary call goes through the same stage.
func TestRunRedactsSummaryRequests(t *testing.T) {
	history := rounds(13, 10)
	history[2].Text = "result with " + plantedSecret
	p := &ctxProvider{}
	if _, err := Run(context.Background(), Config{Provider: p, Mode: ModeAsk, Env: &fakeEnv{}, Redactor: testRedactor}, history, "next", &fullRecorder{}); err != nil {
		t.Fatal(err)
	}
	if len(p.summaries) != 1 {
		t.Fatalf("%d summary calls, want 1", len(p.summaries))
	}
	if !strings.Contains(p.summaries[0].Messages[0].Text, "[redacted: password]") {
		t.Errorf("the summary transcript does not show the marker: %.300q", p.summaries[0].Messages[0].Text)
	}
	for _, l := range append(leaks(p.summaries), leaks(p.mains)...) {
		t.Errorf("the model was sent the secret: %s", l)
	}
}

// TestRunRefusesSecretArguments: a call whose arguments carry a secret (an address built with
// it) is not run, whatever the tool, and the model is told why.
func TestRunRefusesSecretArguments(t *testing.T) {
	tests := []struct {
		name string
		call ToolCall
	}{
		{"open_page address", call("c1", "open_page", `{"url":"/collect?p=`+plantedSecret+`"}`)},
		{"query selector", call("c1", "query", `{"selector":"#`+plantedSecret+`"}`)},
		{"escaped in JSON", call("c1", "open_page", `{"url":"/collect?p=`+strings.ReplaceAll(plantedSecret, "h", `\u0068`)+`"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The stand-in decodes JSON escapes as the proxy's redactor does.
			red := decodingRedactor{testRedactor}
			p := &fakeProvider{replies: []Response{{ToolCalls: []ToolCall{tt.call}}, {Text: "ok", StopReason: "end"}}}
			env := &fakeEnv{}
			msgs, err := Run(context.Background(), Config{Provider: p, Mode: ModeAsk, Env: env, Redactor: red}, nil, "go", &recorder{})
			if err != nil {
				t.Fatal(err)
			}
			if len(env.calls) != 0 {
				t.Errorf("the tool ran: %q", env.calls)
			}
			var res Message
			for _, m := range msgs {
				if m.Role == RoleTool {
					res = m
				}
				for _, c := range m.ToolCalls {
					if strings.Contains(c.Arguments, plantedSecret) {
						t.Errorf("the history keeps the secret in the call's arguments: %s", c.Arguments)
					}
				}
			}
			if !res.IsError || !strings.Contains(res.Text, "carry a secret (a password value") {
				t.Errorf("result = %+v, want an error naming the secret's kind", res)
			}
			for _, l := range leaks(p.requests) {
				t.Errorf("the model was sent the secret: %s", l)
			}
		})
	}
}

// decodingRedactor also finds secrets in JSON-escaped text.
type decodingRedactor struct{ wordRedactor }

func (r decodingRedactor) Secret(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		b, _ := json.Marshal(v)
		var buf strings.Builder
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		if k := r.wordRedactor.Secret(buf.String()); k != "" {
			return k
		}
		s = string(b)
	}
	return r.wordRedactor.Secret(s)
}

// TestRedactRequestKeepsArgumentsJSON: arguments stay a JSON object after redaction, even when
// the secret sits across JSON syntax.
func TestRedactRequestKeepsArgumentsJSON(t *testing.T) {
	tests := []struct {
		name, args, secret string
	}{
		{"inside a string", `{"url":"/a?p=s3cr3t-value"}`, "s3cr3t-value"},
		{"across syntax", `{"a":"x","b":"y"}`, `x","b`},
	}
	for _, tt := range tests {
		red := wordRedactor{tt.secret: "password"}
		got := RedactRequest(red, Request{Messages: []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{call("c", "open_page", tt.args)}}}})
		out := got.Messages[0].ToolCalls[0].Arguments
		if !json.Valid([]byte(out)) || strings.Contains(out, tt.secret) {
			t.Errorf("%s: arguments = %q, want valid JSON without the secret", tt.name, out)
		}
	}
	// Without a redactor the request is unchanged.
	req := Request{System: plantedSecret}
	if got := RedactRequest(nil, req); got.System != plantedSecret {
		t.Errorf("nil redactor changed the request: %q", got.System)
	}
}
