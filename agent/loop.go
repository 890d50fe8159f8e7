package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultMaxSteps is the step cap when Settings do not set one: model calls per message.
const DefaultMaxSteps = 40

// Observer hears what a turn does, for the panel and for the store. Its methods are called
// from Run's goroutine, in order, and must not block for long.
type Observer interface {
	// Text is the assistant's reply so far in one step (cumulative, not a delta); final is
	// true once the step's reply is complete.
	Text(stepID, text string, final bool)
	// Tool reports a tool call: status "running", then "ok" or "error" with the result.
	Tool(call ToolCall, status, result string)
	// Notice is a line from the proxy, e.g. why the turn stopped.
	Notice(text string)
	// Append gives messages to add to the stored context, as soon as each is complete.
	Append(msgs ...Message)
	// Replace gives the whole context after compaction.
	Replace(msgs []Message)
	// Usage reports one model call's token counts.
	Usage(u Usage)
}

// Config is what one turn runs with.
type Config struct {
	Provider Provider
	Model    string
	Mode     Mode
	// System is the system prompt (see SystemPrompt).
	System string
	Env    Env
	// MaxSteps caps the model calls of one turn. If zero, DefaultMaxSteps.
	MaxSteps int
	// ContextBudget is the characters of message text past which the context is trimmed to a
	// summary and the newest messages (compact.go), as it is past TrimMessages messages. If
	// zero, DefaultContextBudget.
	ContextBudget int
	// BeforeStep, if non-nil, runs before each model call; an error ends the turn with its
	// text as a notice (the chat uses it to wait while its tab loads the next page of the site).
	BeforeStep func(ctx context.Context) error
	// ToolTimeout bounds one tool call that does not wait for the person. If zero, 30 s.
	ToolTimeout time.Duration
	// Redactor removes secrets from every model request and every tool result, and refuses
	// tool calls whose arguments carry one (redact.go). If nil, nothing is redacted: a caller
	// that shows a model anything from the web must set it (the proxy always does).
	Redactor Redactor
}

// Run runs one turn: the person's text, then model calls and tool calls until the model
// answers without calling a tool, the step cap is reached, or ctx is cancelled (the Stop
// button, or the tab leaving the site). It returns the whole context after the turn. A
// provider failure ends the turn with its error (a *ProviderError); every tool failure goes
// back to the model as the call's result.
func Run(ctx context.Context, cfg Config, history []Message, userText string, obs Observer) ([]Message, error) {
	t := newTurn(cfg, history, userText, obs)
	defer func() { t.tr.finish(t.end) }()
	for step := 1; ; step++ {
		if t.stopsBefore(ctx, step) {
			return t.msgs, nil
		}
		if ended, err := t.step(ctx); ended || err != nil {
			return t.msgs, err
		}
	}
}

// turn is one Run's state: the context so far and what watches it. Its methods are the
// loop's steps, in the order Run calls them.
type turn struct {
	cfg      Config
	obs      Observer
	maxSteps int
	budget   int
	msgs     []Message
	loops    *loopDetector // repeated calls and A-B-A-B patterns in this turn (loopdetect.go)
	tr       *tracer       // nil unless obs is a Tracer (trace.go)
	// ctxm trims the context past its thresholds, and harder on a context-overflow error (compact.go).
	ctxm summariser
	// end is how the turn ended, for the trace: "answer", "done", "stopped", "step limit",
	// "loop", "context too long" or "error: …".
	end string
}

// newTurn starts a turn: Config's defaults filled in, the redaction stage wired in front of
// the model, and the person's message appended.
func newTurn(cfg Config, history []Message, userText string, obs Observer) *turn {
	t := &turn{cfg: cfg, obs: obs, maxSteps: cfg.MaxSteps, budget: cfg.ContextBudget, end: "answer"}
	if t.maxSteps <= 0 {
		t.maxSteps = DefaultMaxSteps
	}
	if t.budget <= 0 {
		t.budget = DefaultContextBudget
	}
	t.cfg = withRedaction(cfg) // every request to the model, compaction's too, is redacted (redact.go)
	t.msgs = append([]Message(nil), history...)
	t.append(Message{Role: RoleUser, Text: userText})
	t.loops = &loopDetector{}
	t.tr = newTracer(t.cfg, userText, obs)
	t.ctxm = summariser{cfg: t.cfg, obs: obs, tr: t.tr}
	return t
}

// append adds complete messages to the context and tells the observer.
func (t *turn) append(msgs ...Message) {
	t.msgs = append(t.msgs, msgs...)
	t.obs.Append(msgs...)
}

// stopsBefore reports whether the turn ends before model call number step: BeforeStep
// refused, the person stopped the agent, or the step cap is reached. Each says why in a notice.
func (t *turn) stopsBefore(ctx context.Context, step int) bool {
	if t.cfg.BeforeStep != nil && ctx.Err() == nil {
		if err := t.cfg.BeforeStep(ctx); err != nil {
			t.obs.Notice(err.Error())
			return true
		}
	}
	if ctx.Err() != nil {
		t.obs.Notice("Stopped.")
		t.end = "stopped"
		return true
	}
	if step > t.maxSteps {
		t.end = "step limit"
		t.obs.Notice(fmt.Sprintf("Stopped after %d steps, the step limit (change it in Settings). Send a message to go on.", t.maxSteps))
		return true
	}
	return false
}

// step is one model call and the tool calls of its reply. ended is true when the turn ends
// here: an answer without calls, done, a loop, a stop, or a provider error (err).
func (t *turn) step(ctx context.Context) (ended bool, err error) {
	t.msgs, _ = t.ctxm.manageContext(ctx, t.msgs, t.budget, false)
	stepID := newStepID()
	resp, ended, err := t.callModel(ctx, stepID)
	if ended {
		return true, err
	}
	calls := resp.ToolCalls
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = "call_" + stepID + "_" + strconv.Itoa(i)
		}
	}
	t.append(Message{Role: RoleAssistant, Text: resp.Text, ToolCalls: redactCalls(t.cfg.Redactor, keptCalls(calls))})
	if len(calls) == 0 {
		if resp.StopReason == "max_tokens" {
			t.obs.Notice("The reply was cut off at the model's output limit.")
		}
		return true, nil
	}
	return t.runCalls(ctx, calls), nil
}

// callModel asks the model for the next reply, streaming its text to the observer, and on a
// context-overflow error trims the context hard and asks once more. ended is true when the
// turn ends here instead: the context still does not fit, the person stopped the agent (the
// text streamed so far is kept), or the provider failed (err).
func (t *turn) callModel(ctx context.Context, stepID string) (resp *Response, ended bool, err error) {
	var text strings.Builder
	modelStart := time.Now()
	stream := func() (*Response, error) {
		text.Reset()
		return t.cfg.Provider.Stream(ctx, Request{
			Model: t.cfg.Model, System: t.cfg.System, Messages: t.msgs, Tools: ToolSpecs(t.cfg.Mode),
		}, func(ev Event) {
			if ev.Kind == EventText {
				text.WriteString(ev.Text)
				t.obs.Text(stepID, text.String(), false)
			}
		})
	}
	resp, err = stream()
	if tooLong(err) && ctx.Err() == nil {
		if resp, modelStart, err = t.retryTrimmed(ctx, stream, modelStart, err); tooLong(err) {
			t.obs.Notice(noticeStillTooLong)
			t.end = "context too long"
			return nil, true, nil
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			if text.Len() > 0 {
				t.append(Message{Role: RoleAssistant, Text: text.String()})
				t.obs.Text(stepID, text.String(), true)
			}
			t.obs.Notice("Stopped.")
			t.end = "stopped"
			return nil, true, nil
		}
		t.tr.model(modelStart, nil)
		t.end = "error: " + err.Error()
		return nil, true, err
	}
	t.tr.model(modelStart, resp)
	t.obs.Usage(resp.Usage)
	if resp.Text != "" || text.Len() > 0 {
		final := resp.Text
		if final == "" {
			final = text.String()
		}
		t.obs.Text(stepID, final, true)
	}
	return resp, false, nil
}

// retryTrimmed answers a context-overflow error (err, from the call started at start): an
// emergency trim to a summary and the last few messages, then one more try if the trim
// changed anything. It returns the try's reply, start and error, or err again.
func (t *turn) retryTrimmed(ctx context.Context, stream func() (*Response, error), start time.Time, err error) (*Response, time.Time, error) {
	t.tr.model(start, nil)
	var changed bool
	if t.msgs, changed = t.ctxm.manageContext(ctx, t.msgs, t.budget, true); !changed {
		return nil, start, err
	}
	start = time.Now()
	resp, err := stream()
	if tooLong(err) {
		t.tr.model(start, nil)
	}
	return resp, start, err
}

// runCalls runs one reply's tool calls in order, each with a result in the context, then
// pins an approved plan. It reports whether the turn ends: done was called (its summary is
// the answer) or the loop detector stopped the turn.
func (t *turn) runCalls(ctx context.Context, calls []ToolCall) (ended bool) {
	var stop, summary string
	var pins []Message // an approved plan, pinned after the reply's tool results (tools_plan.go)
	finished := false
	for i, call := range calls {
		result, isErr, skipped := notRun(ctx, i, finished)
		if !skipped {
			var o callOutcome
			result, isErr, o = t.runCall(ctx, call)
			if o.stop != "" {
				stop = o.stop
			}
			summary, finished = o.summary, o.finished
			if o.pin != nil {
				pins = append(pins, *o.pin)
			}
		}
		status := "ok"
		if isErr {
			status = "error"
		}
		t.obs.Tool(redactCall(t.cfg.Redactor, call), status, result)
		t.append(Message{Role: RoleTool, ToolCallID: call.ID, ToolName: call.Name, Text: result, IsError: isErr})
	}
	if len(pins) > 0 {
		t.append(pins...)
	}
	if finished {
		// done's summary is the turn's answer.
		t.append(Message{Role: RoleAssistant, Text: summary})
		t.obs.Text(newStepID(), summary, true)
		t.end = "done"
		return true
	}
	if stop != "" {
		t.obs.Notice(stop)
		t.end = "loop"
		return true
	}
	return false
}

// notRun gives the result of call number i of a reply that is not run, and skipped true: the
// person stopped the agent, done ended the turn earlier in the reply, or the reply has more
// calls than MaxCallsPerReply.
func notRun(ctx context.Context, i int, finished bool) (result string, isErr, skipped bool) {
	switch {
	case ctx.Err() != nil:
		return "not run: the person stopped the agent", true, true
	case finished:
		return "not run: the turn ended before this call", true, true
	case i >= MaxCallsPerReply:
		return fmt.Sprintf("not run: at most %d tool calls are run from one reply; call the rest after these results", MaxCallsPerReply), true, true
	}
	return "", false, false
}

// callOutcome is what one run call means for the turn besides its result.
type callOutcome struct {
	stop     string   // the loop detector's reason to end the turn, if any
	summary  string   // done's summary, when finished
	finished bool     // done was accepted: the turn ends after this reply
	pin      *Message // an approved plan to pin, if any
}

// runCall runs one call: the observer sees it running, the tracer times it, the loop detector
// judges it (a warning is added to the result).
func (t *turn) runCall(ctx context.Context, call ToolCall) (result string, isErr bool, o callOutcome) {
	t.obs.Tool(redactCall(t.cfg.Redactor, call), "running", "")
	urlBefore, toolStart := t.tr.url(call), time.Now()
	result, isErr = execute(ctx, t.cfg, call)
	t.tr.tool(call, toolStart, result, isErr, urlBefore)
	if v := t.loops.observe(call, result); v.Stop != "" {
		o.stop = v.Stop
	} else if v.Warning != "" {
		result += "\n\n" + v.Warning
	}
	o.summary, o.finished = doneSummary(call, result, isErr)
	if pin, ok := planPin(call, result, isErr); ok {
		o.pin = &pin
	}
	return result, isErr, o
}

// tooLong reports whether err is a provider's "the context does not fit" error.
func tooLong(err error) bool {
	var pe *ProviderError
	return errors.As(err, &pe) && pe.Kind == ErrContextTooLong
}

// execute runs one call and turns its outcome into the text the model gets.
func execute(ctx context.Context, cfg Config, call ToolCall) (string, bool) {
	timeout := cfg.ToolTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if !waitsForPerson(call.Name) {
		// Those wait for the person, who is not hurried (tools_request.go); every other tool is bounded.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	// A call that would send a secret is not run; every result is redacted before it is cut,
	// so no cut can leave part of a secret behind (redact.go).
	err := secretInArguments(cfg.Redactor, call)
	var out string
	if err == nil {
		out, err = runTool(ctx, cfg.Env, cfg.Mode, call)
	}
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			return capResult(redactResult(cfg.Redactor, "error: "+te.Message)), true
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return "error: the tool did not answer within " + timeout.String(), true
		}
		return capResult(redactResult(cfg.Redactor, "error: "+err.Error())), true
	}
	return capResult(redactResult(cfg.Redactor, out)), false
}

var stepCounter atomic.Int64

// newStepID names one model call's reply, unique in this process (the panel replaces an item
// by its ID while the reply streams).
func newStepID() string {
	return "s" + strconv.FormatInt(time.Now().Unix(), 36) + strconv.FormatInt(stepCounter.Add(1), 36)
}

// MarshalMessages encodes messages one by one for the store.
func MarshalMessages(msgs ...Message) [][]byte {
	out := make([][]byte, 0, len(msgs))
	for _, m := range msgs {
		b, _ := json.Marshal(m) // Message has only strings, bools and slices of them
		out = append(out, b)
	}
	return out
}

// UnmarshalMessages decodes stored messages; a damaged one is skipped and counted, so one bad
// row never loses the rest of a conversation.
func UnmarshalMessages(bodies [][]byte) (msgs []Message, damaged int) {
	for _, b := range bodies {
		var m Message
		if err := json.Unmarshal(b, &m); err != nil || m.Role == "" {
			damaged++
			continue
		}
		msgs = append(msgs, m)
	}
	return repairPairs(msgs), damaged
}

// repairPairs makes a stored context valid for every wire format: each tool result follows
// the assistant message that called it, and every call has a result (a turn cut short by a
// crash gets "not run" results).
func repairPairs(msgs []Message) []Message {
	var out []Message
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == RoleTool {
			continue // only kept right after its call, below
		}
		out = append(out, m)
		if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		results := map[string]Message{}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == RoleTool; j++ {
			results[msgs[j].ToolCallID] = msgs[j]
		}
		for _, c := range m.ToolCalls {
			if r, ok := results[c.ID]; ok {
				out = append(out, r)
			} else {
				out = append(out, Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name, Text: "not run: the conversation was interrupted", IsError: true})
			}
		}
		i = j - 1
	}
	return out
}

// keptCalls is the form of a reply's calls kept in the context: arguments over MaxArguments
// (which are refused, not run) are replaced by a short note, so one oversized reply does not
// fill the context and get sent back to the model on every later step.
func keptCalls(calls []ToolCall) []ToolCall {
	out := calls
	for i, c := range calls {
		if len(c.Arguments) <= MaxArguments {
			continue
		}
		if &out[0] == &calls[0] {
			out = append([]ToolCall(nil), calls...)
		}
		out[i].Arguments = fmt.Sprintf(`{"omitted": "%d bytes of arguments, over the %d-byte limit"}`, len(c.Arguments), MaxArguments)
	}
	return out
}
