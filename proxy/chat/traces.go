package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/store"
)

// The chat's traces. The agent hands each turn's trace to the chat's observer (agent.Tracer):
// the proxy keeps the newest maxTraceTurns turns of the newest maxTraceChats chats in memory,
// which the manager serves as JSON (GET /manager/traces.json, optionally ?chat=ID, in
// manager/traces.go), and, when the person turned on "Record agent traces" in Settings
// (agent.Settings.RecordTraces, off by default), the recorder writes every finished turn to the
// store: one run per message, with an event per model call (the messages sent, the reply's text
// and tool calls) and per tool call (arguments, result, the page's address around it). The
// store bounds it (store/traces.go). Traces hold what the chat holds (the person's words, tool
// arguments and results, clipped), and never leave the machine: any configured API key found in
// them is replaced before they are written (the providers never put one in what the loop sees;
// this is a second lock).

const (
	maxTraceTurns = 10
	maxTraceChats = 20
	// Bounds on what one model request event shows (the store bounds bodies again).
	traceFirstRequestMessages = 24   // messages of the context before the turn's own
	traceMessageText          = 8000 // characters of one message's text
)

// traceKeep holds the last turns' traces of the last chats of one proxy (Hub.traces).
type traceKeep struct {
	sync.Mutex
	order []string // chat IDs, oldest first
	m     map[string][]agent.TurnTrace
}

var _ agent.Tracer = (*chatObserver)(nil)
var _ agent.PageURLer = (*chatEnv)(nil)

// Trace keeps a finished turn's trace with its chat, and in the store when the person turned on
// the recorder (storeTrace).
func (o *chatObserver) Trace(t agent.TurnTrace) {
	o.storeTrace(t)
	o.c.mu.Lock()
	id := o.c.rec.ID
	o.c.mu.Unlock()
	if id == "" {
		return
	}
	k := &o.c.hub.traces
	k.Lock()
	defer k.Unlock()
	if k.m == nil {
		k.m = map[string][]agent.TurnTrace{}
	}
	if _, ok := k.m[id]; !ok {
		k.order = append(k.order, id)
		if len(k.order) > maxTraceChats {
			delete(k.m, k.order[0])
			k.order = k.order[1:]
		}
	}
	ts := append(k.m[id], t)
	if len(ts) > maxTraceTurns {
		ts = ts[len(ts)-maxTraceTurns:]
	}
	k.m[id] = ts
}

// PageURL is the address of the chat's page now, for traces.
func (e *chatEnv) PageURL() string {
	sess, err := e.session()
	if err != nil {
		return ""
	}
	return sess.URL
}

// recordingTraces reports whether the person turned the recorder on (the settings file only).
func (h *Hub) recordingTraces() bool {
	if h.cfg.DataDir == "" || h.st == nil {
		return false
	}
	set, err := agent.LoadSettings(h.cfg.DataDir, noEnv)
	return err == nil && set.RecordTraces
}

func noEnv(string) string { return "" }

// storeTrace writes a finished turn to the store when the recorder is on (the hook in
// chatObserver.Trace). A failure is logged; the chat goes on.
func (o *chatObserver) storeTrace(t agent.TurnTrace) {
	c := o.c
	if c == nil || c.hub == nil {
		return
	}
	h := c.hub
	if !h.recordingTraces() {
		return
	}
	c.mu.Lock()
	rec := c.rec
	msgs := append([]agent.Message(nil), c.msgs...)
	c.mu.Unlock()
	if rec.ID == "" {
		return
	}
	run := traceRun(rec, o.pcfg.Name, t, msgs)
	redactRun(&run, h.traceSecrets(o.pcfg))
	if _, err := h.st.AddTraceRun(context.Background(), run); err != nil {
		h.log.Warn("saving an agent trace", "err", err)
	}
}

// traceSecrets are the API keys a trace must never hold: the turn's provider's and every
// configured one (file and environment).
func (h *Hub) traceSecrets(pcfg agent.ProviderConfig) []string {
	keys := []string{pcfg.APIKey}
	if set, err := agent.LoadSettings(h.cfg.DataDir, os.Getenv); err == nil {
		for _, p := range set.Providers {
			keys = append(keys, p.APIKey)
		}
	}
	var out []string
	for _, k := range keys {
		if len(strings.TrimSpace(k)) >= 6 {
			out = append(out, k)
		}
	}
	return out
}

// redactRun replaces every secret in the run's texts.
func redactRun(r *store.TraceRun, secrets []string) {
	if len(secrets) == 0 {
		return
	}
	red := func(p *string) {
		for _, k := range secrets {
			if strings.Contains(*p, k) {
				*p = strings.ReplaceAll(*p, k, "[redacted key]")
			}
		}
	}
	red(&r.UserText)
	red(&r.PageURL)
	red(&r.Outcome)
	for i := range r.Events {
		e := &r.Events[i]
		for _, p := range []*string{&e.Name, &e.Input, &e.Output, &e.URLBefore, &e.URLAfter} {
			red(p)
		}
	}
}

// traceRun turns the agent's trace of a turn into a stored run. msgs is the chat's context
// when the turn ended: the agent's trace keeps clipped texts and not the requests, so the
// messages each model call was sent, its reply and the tool results are taken from the
// context where they can be found there: a model step is matched to the next assistant
// message after the person's message with its text and number of tool calls; a step with no
// match (a failed call, or the summary call of a context trim) keeps the trace's clipped text.
func traceRun(rec store.Chat, provider string, t agent.TurnTrace, msgs []agent.Message) store.TraceRun {
	run := store.TraceRun{ChatID: rec.ID, PageURL: rec.URL, Mode: string(t.Mode), Provider: provider, Model: t.Model,
		UserText: t.UserText, InputTokens: int64(t.Usage.InputTokens), OutputTokens: int64(t.Usage.OutputTokens),
		Started: t.Started, Ended: t.Started.Add(time.Duration(t.DurationMs) * time.Millisecond), Outcome: t.End}
	if run.Provider == "" {
		run.Provider = rec.Provider
	}
	// The turn's user message in the context.
	start := -1
	want := strings.TrimSuffix(t.UserText, "…")
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleUser && strings.HasPrefix(msgs[i].Text, want) {
			start = i
			break
		}
	}
	reply := -1            // the context index of the last matched reply
	used := map[int]bool{} // tool messages matched to a tool step
	for _, st := range t.Steps {
		e := store.TraceEvent{Kind: st.Kind, AtMs: st.AtMs, DurationMs: st.DurationMs, IsError: st.IsError,
			URLBefore: st.URLBefore, URLAfter: st.URLAfter}
		switch st.Kind {
		case "model":
			run.Steps++
			e.Name = t.Model
			e.InputTokens, e.OutputTokens = int64(st.InputTokens), int64(st.OutputTokens)
			if i := matchReply(msgs, start, reply, st); i >= 0 {
				e.Input = traceRequest(msgs, reply, i)
				e.Output = traceJSON(struct {
					Text      string           `json:"text"`
					ToolCalls []agent.ToolCall `json:"tool_calls,omitempty"`
				}{msgs[i].Text, msgs[i].ToolCalls})
				reply = i
			} else {
				e.Input = traceJSON(struct {
					Note string `json:"note"`
				}{"not in the chat's context: a call that failed or was stopped, or the summary call of a context trim"})
				e.Output = traceJSON(struct {
					Text      string `json:"text"`
					ToolCalls int    `json:"tool_calls"`
				}{st.Text, st.ToolCalls})
			}
		default:
			e.Name = st.Tool
			e.Input, e.Output = st.Arguments, st.Result
			// The full arguments and result, from the context: the first unmatched result of
			// this tool after the last matched reply.
			if reply >= 0 {
				for i := reply + 1; i < len(msgs) && msgs[i].Role != agent.RoleAssistant; i++ {
					if m := msgs[i]; m.Role == agent.RoleTool && m.ToolName == st.Tool && !used[i] {
						used[i] = true
						e.Output = m.Text
						for _, call := range msgs[reply].ToolCalls {
							if call.ID == m.ToolCallID {
								e.Input = call.Arguments
							}
						}
						break
					}
				}
			}
		}
		run.Events = append(run.Events, e)
	}
	return run
}

// matchReply finds the context message of a model step's reply: the first assistant message
// after the person's message (start) and the last matched reply, if its text and number of tool
// calls are the step's; -1 when there is none.
func matchReply(msgs []agent.Message, start, reply int, st agent.TraceStep) int {
	if start < 0 || (st.Text == "" && st.ToolCalls == 0) {
		return -1
	}
	for i := max(start, reply) + 1; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role != agent.RoleAssistant {
			continue
		}
		if len(m.ToolCalls) == st.ToolCalls && strings.HasPrefix(m.Text, strings.TrimSuffix(st.Text, "…")) {
			return i
		}
		return -1
	}
	return -1
}

// traceMessage is one message of a model request as a trace shows it.
type traceMessage struct {
	Role       string           `json:"role"`
	Text       string           `json:"text,omitempty"`
	ToolCalls  []agent.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	ToolName   string           `json:"tool_name,omitempty"`
	IsError    bool             `json:"is_error,omitempty"`
}

// traceRequest is the body of the request event of the model call whose reply is msgs[at]: for
// the turn's first reply, the context before it (its last traceFirstRequestMessages messages);
// for a later one, what was added after the previous reply (prev), the tool results.
func traceRequest(msgs []agent.Message, prev, at int) string {
	type request struct {
		Before   int            `json:"messages_before"`
		Note     string         `json:"note,omitempty"`
		Messages []traceMessage `json:"messages"`
	}
	from, note := max(0, at-traceFirstRequestMessages), ""
	if from > 0 {
		note = "the oldest messages of the context are left out here"
	}
	if prev >= 0 {
		from, note = prev+1, "the messages of the previous request and its reply, then these"
	}
	out := request{Before: from, Note: note, Messages: []traceMessage{}}
	for _, m := range msgs[from:at] {
		out.Messages = append(out.Messages, traceMessage{Role: string(m.Role), Text: httpx.ClipNoted(m.Text, traceMessageText),
			ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError})
	}
	return traceJSON(out)
}

func traceJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// TraceExport is one chat's kept turns, as the manager's traces.json serves them.
type TraceExport struct {
	Chat  string            `json:"chat"`
	Turns []agent.TurnTrace `json:"turns"`
}

// Traces returns the turns the chats keep in memory: every chat's, newest chat first, or the
// one chat's whose stored ID is chatID when it is not "".
func (h *Hub) Traces(chatID string) []TraceExport {
	out := []TraceExport{}
	k := &h.traces
	k.Lock()
	defer k.Unlock()
	for i := len(k.order) - 1; i >= 0; i-- {
		id := k.order[i]
		if chatID != "" && id != chatID {
			continue
		}
		out = append(out, TraceExport{Chat: id, Turns: append([]agent.TurnTrace(nil), k.m[id]...)})
	}
	return out
}
