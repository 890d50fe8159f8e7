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
	maxSteps := cfg.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	budget := cfg.ContextBudget
	if budget <= 0 {
		budget = DefaultContextBudget
	}
	cfg = withRedaction(cfg) // every request to the model, compaction's too, is redacted (redact.go)
	msgs := append([]Message(nil), history...)
	msgs = append(msgs, Message{Role: RoleUser, Text: userText})
	obs.Append(msgs[len(msgs)-1])

	loops := &loopDetector{}            // repeated calls and A-B-A-B patterns in this turn (loopdetect.go)
	tr := newTracer(cfg, userText, obs) // nil unless obs is a Tracer (trace.go)
	// ctxm trims the context past its thresholds, and harder on a context-overflow error (compact.go).
	ctxm := summariser{cfg: cfg, obs: obs, tr: tr}
	end := "answer"
	defer func() { tr.finish(end) }()
	for step := 1; ; step++ {
		if cfg.BeforeStep != nil && ctx.Err() == nil {
			if err := cfg.BeforeStep(ctx); err != nil {
				obs.Notice(err.Error())
				return msgs, nil
			}
		}
		if err := ctx.Err(); err != nil {
			obs.Notice("Stopped.")
			end = "stopped"
			return msgs, nil
		}
		if step > maxSteps {
			end = "step limit"
			obs.Notice(fmt.Sprintf("Stopped after %d steps, the step limit (change it in Settings). Send a message to go on.", maxSteps))
			return msgs, nil
		}
		msgs, _ = ctxm.manageContext(ctx, msgs, budget, false)
		stepID := newStepID()
		var text strings.Builder
		modelStart := time.Now()
		stream := func() (*Response, error) {
			text.Reset()
			return cfg.Provider.Stream(ctx, Request{
				Model: cfg.Model, System: cfg.System, Messages: msgs, Tools: ToolSpecs(cfg.Mode),
			}, func(ev Event) {
				if ev.Kind == EventText {
					text.WriteString(ev.Text)
					obs.Text(stepID, text.String(), false)
				}
			})
		}
		resp, err := stream()
		if tooLong(err) && ctx.Err() == nil {
			// Emergency trim: a summary and the last few messages, then one more try.
			tr.model(modelStart, nil)
			var changed bool
			if msgs, changed = ctxm.manageContext(ctx, msgs, budget, true); changed {
				modelStart = time.Now()
				if resp, err = stream(); tooLong(err) {
					tr.model(modelStart, nil)
				}
			}
			if tooLong(err) {
				obs.Notice(noticeStillTooLong)
				end = "context too long"
				return msgs, nil
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				if text.Len() > 0 {
					msgs = append(msgs, Message{Role: RoleAssistant, Text: text.String()})
					obs.Append(msgs[len(msgs)-1])
					obs.Text(stepID, text.String(), true)
				}
				obs.Notice("Stopped.")
				end = "stopped"
				return msgs, nil
			}
			tr.model(modelStart, nil)
			end = "error: " + err.Error()
			return msgs, err
		}
		tr.model(modelStart, resp)
		obs.Usage(resp.Usage)
		if resp.Text != "" || text.Len() > 0 {
			t := resp.Text
			if t == "" {
				t = text.String()
			}
			obs.Text(stepID, t, true)
		}
		calls := resp.ToolCalls
		for i := range calls {
			if calls[i].ID == "" {
				calls[i].ID = "call_" + stepID + "_" + strconv.Itoa(i)
			}
		}
		msgs = append(msgs, Message{Role: RoleAssistant, Text: resp.Text, ToolCalls: redactCalls(cfg.Redactor, keptCalls(calls))})
		obs.Append(msgs[len(msgs)-1])
		if len(calls) == 0 {
			if resp.StopReason == "max_tokens" {
				obs.Notice("The reply was cut off at the model's output limit.")
			}
			return msgs, nil
		}
		var stop, summary string
		var pins []Message // an approved plan, pinned after the reply's tool results (tools_plan.go)
		finished := false
		for i, call := range calls {
			var result string
			var isErr bool
			switch {
			case ctx.Err() != nil:
				result, isErr = "not run: the person stopped the agent", true
			case finished:
				result, isErr = "not run: the turn ended before this call", true
			case i >= MaxCallsPerReply:
				result, isErr = fmt.Sprintf("not run: at most %d tool calls are run from one reply; call the rest after these results", MaxCallsPerReply), true
			default:
				obs.Tool(redactCall(cfg.Redactor, call), "running", "")
				urlBefore, toolStart := tr.url(call), time.Now()
				result, isErr = execute(ctx, cfg, call)
				tr.tool(call, toolStart, result, isErr, urlBefore)
				if v := loops.observe(call, result); v.Stop != "" {
					stop = v.Stop
				} else if v.Warning != "" {
					result += "\n\n" + v.Warning
				}
				summary, finished = doneSummary(call, result, isErr)
				if pin, ok := planPin(call, result, isErr); ok {
					pins = append(pins, pin)
				}
			}
			status := "ok"
			if isErr {
				status = "error"
			}
			obs.Tool(redactCall(cfg.Redactor, call), status, result)
			msgs = append(msgs, Message{Role: RoleTool, ToolCallID: call.ID, ToolName: call.Name, Text: result, IsError: isErr})
			obs.Append(msgs[len(msgs)-1])
		}
		if len(pins) > 0 {
			msgs = append(msgs, pins...)
			obs.Append(pins...)
		}
		if finished {
			// done's summary is the turn's answer.
			msgs = append(msgs, Message{Role: RoleAssistant, Text: summary})
			obs.Append(msgs[len(msgs)-1])
			obs.Text(newStepID(), summary, true)
			end = "done"
			return msgs, nil
		}
		if stop != "" {
			obs.Notice(stop)
			end = "loop"
			return msgs, nil
		}
	}
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
