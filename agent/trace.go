package agent

import (
	"time"
	"unicode/utf8"
)

// Traces (issue 6): a record of one turn — each model call and each tool call with its timing,
// and for page tools the page's address before and after — so a person (or a developer) can see
// where a run went wrong or slow. Run keeps one when the Observer implements Tracer, and hands
// it over when the turn ends. Nothing here leaves the machine; what the observer does with it
// (keep it with the chat, offer it as JSON) is up to the observer.

// Tracer is an optional Observer capability: Trace is called once, when Run returns.
type Tracer interface {
	Trace(t TurnTrace)
}

// PageURLer is an optional Env capability: the address of the chat's page now ("" when there
// is none), recorded around page tool calls in traces.
type PageURLer interface {
	PageURL() string
}

// TurnTrace is one turn.
type TurnTrace struct {
	Started    time.Time   `json:"started"`
	DurationMs int64       `json:"duration_ms"`
	Model      string      `json:"model"`
	Mode       Mode        `json:"mode"`
	UserText   string      `json:"user_text"`
	Steps      []TraceStep `json:"steps"`
	Usage      Usage       `json:"usage"`
	// End says how the turn ended: "answer", "done", "step limit", "loop", "stopped" or
	// "error: …".
	End string `json:"end"`
}

// TraceStep is one model call or one tool call.
type TraceStep struct {
	Kind       string `json:"kind"` // "model" or "tool"
	AtMs       int64  `json:"at_ms"`
	DurationMs int64  `json:"duration_ms"`
	// Model calls.
	InputTokens  int    `json:"input_tokens,omitempty"`
	OutputTokens int    `json:"output_tokens,omitempty"`
	ToolCalls    int    `json:"tool_calls,omitempty"`
	Text         string `json:"text,omitempty"`
	// Tool calls.
	Tool      string `json:"tool,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Result    string `json:"result,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	URLBefore string `json:"url_before,omitempty"`
	URLAfter  string `json:"url_after,omitempty"`
}

// traceClip bounds the texts kept in a trace step.
const traceClip = 1000

// tracer records a turn for a Tracer; a nil *tracer records nothing.
type tracer struct {
	t     TurnTrace
	start time.Time
	out   Tracer
	env   PageURLer
	red   Redactor // nil: nothing to redact
}

func newTracer(cfg Config, userText string, obs Observer) *tracer {
	out, ok := obs.(Tracer)
	if !ok {
		return nil
	}
	now := time.Now()
	tr := &tracer{out: out, start: now, red: cfg.Redactor, t: TurnTrace{Started: now, Model: cfg.Model, Mode: cfg.Mode, UserText: clipTrace(userText)}}
	tr.env, _ = cfg.Env.(PageURLer)
	return tr
}

// model records a model call that began at start.
func (tr *tracer) model(start time.Time, resp *Response) {
	if tr == nil {
		return
	}
	s := TraceStep{Kind: "model", AtMs: start.Sub(tr.start).Milliseconds(), DurationMs: time.Since(start).Milliseconds()}
	if resp != nil {
		s.InputTokens, s.OutputTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens
		s.ToolCalls = len(resp.ToolCalls)
		s.Text = clipTrace(resp.Text)
		tr.t.Usage.InputTokens += resp.Usage.InputTokens
		tr.t.Usage.OutputTokens += resp.Usage.OutputTokens
	}
	tr.t.Steps = append(tr.t.Steps, s)
}

// url is the page's address now, for a page tool.
func (tr *tracer) url(call ToolCall) string {
	if tr == nil || tr.env == nil {
		return ""
	}
	if t, ok := findTool(call.Name); !ok || t.run == nil || isHostTool(call.Name) {
		return ""
	}
	return tr.env.PageURL()
}

func isHostTool(name string) bool {
	switch name {
	case "write_remixlet", "request_permissions", "read_log":
		return true
	}
	return false
}

// tool records a tool call that began at start.
func (tr *tracer) tool(call ToolCall, start time.Time, result string, isErr bool, before string) {
	if tr == nil {
		return
	}
	tr.t.Steps = append(tr.t.Steps, TraceStep{Kind: "tool", AtMs: start.Sub(tr.start).Milliseconds(), DurationMs: time.Since(start).Milliseconds(),
		Tool: call.Name, Arguments: clipTrace(redactResult(tr.red, call.Arguments)), Result: clipTrace(result), IsError: isErr,
		URLBefore: before, URLAfter: tr.url(call)})
}

// finish hands the trace over.
func (tr *tracer) finish(end string) {
	if tr == nil {
		return
	}
	tr.t.End = end
	tr.t.DurationMs = time.Since(tr.start).Milliseconds()
	tr.out.Trace(tr.t)
}

func clipTrace(s string) string {
	if len(s) <= traceClip {
		return s
	}
	cut := traceClip
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
