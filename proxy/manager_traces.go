package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/store"
)

// The trace recorder and the manager's Traces page (issue 6). When the person turns on "Record
// agent traces" in Settings (agent.Settings.RecordTraces, off by default), every finished turn
// the agent hands to the chat (chatObserver.Trace, chat_act.go) is also written to the store:
// one run per message, with an event per model call (the messages sent, the reply's text and
// tool calls) and per tool call (arguments, result, the page's address around it). The store
// bounds it (store/traces.go). Traces never leave the machine: the page shows them, the export
// is a download, and any configured API key found in them is replaced before they are written
// (the providers never put one in what the loop sees; this is a second lock).
//
// Routes: GET /manager/traces (list, compare form), /manager/traces/{id} (timeline),
// /manager/traces/compare?a=ID&b=ID, /manager/traces/export.json and
// /manager/traces/{id}/export.json (downloads); POST /manager/traces/delete (CSRF-checked).
// The in-memory /manager/traces.json (chat_act.go) keeps working.

// Bounds on what one model request event shows (the store bounds bodies again).
const (
	traceFirstRequestMessages = 24   // messages of the context before the turn's own
	traceMessageText          = 8000 // characters of one message's text
	traceListRuns             = store.MaxTraceRuns
)

func (s *Server) registerTraces(mux *http.ServeMux, post func(string, func(http.ResponseWriter, *http.Request, *store.Store))) {
	mux.HandleFunc("GET /manager/traces", s.managerTraceList)
	mux.HandleFunc("GET /manager/traces/{$}", s.managerTraceList)
	mux.HandleFunc("GET /manager/traces/compare", s.managerTraceCompare)
	mux.HandleFunc("GET /manager/traces/export.json", s.managerTraceExportAll)
	mux.HandleFunc("GET /manager/traces/{id}", s.managerTraceRun)
	mux.HandleFunc("GET /manager/traces/{id}/export.json", s.managerTraceExportRun)
	post("/manager/traces/delete", s.managerTraceDelete)
	post("/manager/settings/traces", s.managerSettingsTraces)
}

// recordingTraces reports whether the person turned the recorder on (the settings file only).
func (s *Server) recordingTraces() bool {
	if s.cfg.DataDir == "" || s.cfg.Store == nil {
		return false
	}
	set, err := agent.LoadSettings(s.cfg.DataDir, noEnv)
	return err == nil && set.RecordTraces
}

// storeTrace writes a finished turn to the store when the recorder is on (the hook in
// chatObserver.Trace). A failure is logged; the chat goes on.
func (o *chatObserver) storeTrace(t agent.TurnTrace) {
	c := o.c
	if c == nil || c.hub == nil || c.hub.s == nil {
		return
	}
	s := c.hub.s
	if !s.recordingTraces() {
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
	redactRun(&run, s.traceSecrets(o.pcfg))
	if _, err := s.cfg.Store.AddTraceRun(context.Background(), run); err != nil {
		s.log.Warn("saving an agent trace", "err", err)
	}
}

// traceSecrets are the API keys a trace must never hold: the turn's provider's and every
// configured one (file and environment).
func (s *Server) traceSecrets(pcfg agent.ProviderConfig) []string {
	keys := []string{pcfg.APIKey}
	if set, err := agent.LoadSettings(s.cfg.DataDir, os.Getenv); err == nil {
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
		out.Messages = append(out.Messages, traceMessage{Role: string(m.Role), Text: clip(m.Text, traceMessageText),
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

// --- the Traces pages ---

func (s *Server) tracesStore(w http.ResponseWriter) *store.Store {
	st := s.cfg.Store
	if st == nil {
		s.managerFail(w, http.StatusServiceUnavailable, "No store", "This proxy runs without a store, so it keeps no traces.", "/manager")
	}
	return st
}

func (s *Server) managerTraceList(w http.ResponseWriter, r *http.Request) {
	p := panel.ManagerTraces{ManagerBase: s.base(r), Recording: s.recordingTraces(), Max: store.MaxTraceRuns}
	if st := s.cfg.Store; st != nil {
		runs, err := st.TraceRuns(r.Context(), traceListRuns)
		if err != nil {
			s.managerError(w, err)
			return
		}
		for _, run := range runs {
			p.Runs = append(p.Runs, traceRunView(run))
		}
		if len(runs) >= 2 {
			p.A, p.B = runs[1].ID, runs[0].ID
		}
	}
	writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerTraces(b, p) })
}

// traceByID reads a run by its decimal ID (from the path or the query).
func (s *Server) traceByID(ctx context.Context, st *store.Store, raw string) (store.TraceRun, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return store.TraceRun{}, store.ErrNotFound
	}
	return st.TraceRun(ctx, id)
}

func (s *Server) traceFail(w http.ResponseWriter, err error) {
	if errors.Is(err, store.ErrNotFound) {
		s.managerFail(w, http.StatusNotFound, "Not found", "There is no such trace: it may have been deleted, or dropped as one of the oldest.", "/manager/traces")
		return
	}
	s.managerError(w, err)
}

func (s *Server) managerTraceRun(w http.ResponseWriter, r *http.Request) {
	st := s.tracesStore(w)
	if st == nil {
		return
	}
	run, err := s.traceByID(r.Context(), st, r.PathValue("id"))
	if err != nil {
		s.traceFail(w, err)
		return
	}
	p := panel.ManagerTrace{ManagerBase: s.base(r), Run: traceRunView(run)}
	writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerTrace(b, p) })
}

func (s *Server) managerTraceCompare(w http.ResponseWriter, r *http.Request) {
	st := s.tracesStore(w)
	if st == nil {
		return
	}
	q := r.URL.Query()
	a, err := s.traceByID(r.Context(), st, q.Get("a"))
	if err != nil {
		s.traceFail(w, err)
		return
	}
	b, err := s.traceByID(r.Context(), st, q.Get("b"))
	if err != nil {
		s.traceFail(w, err)
		return
	}
	p := panel.ManagerTraceCompare{ManagerBase: s.base(r), A: traceRunView(a), B: traceRunView(b)}
	p.Rows = compareRows(p.A, p.B)
	writeManager(w, http.StatusOK, func(buf *bytes.Buffer) error { return panel.RenderManagerTraceCompare(buf, p) })
}

func (s *Server) managerTraceDelete(w http.ResponseWriter, r *http.Request, st *store.Store) {
	if _, err := st.DeleteAllTraceRuns(r.Context()); err != nil {
		s.managerError(w, err)
		return
	}
	seeOther(w, "/manager/traces", "tracesgone")
}

// managerSettingsTraces turns the recorder on or off (the Settings page's "Record agent traces").
func (s *Server) managerSettingsTraces(w http.ResponseWriter, r *http.Request, _ *store.Store) {
	on := r.PostForm.Get("record_traces") == "on"
	s.editSettings(w, func(set *agent.Settings) error {
		if set.MaxSteps == 0 {
			set.MaxSteps = agent.DefaultMaxSteps
		}
		set.RecordTraces = on
		return nil
	})
}

// --- export ---

// traceRunJSON is one run in the JSON export.
type traceRunJSON struct {
	ID            int64            `json:"id"`
	Chat          string           `json:"chat"`
	ChatTitle     string           `json:"chat_title,omitempty"`
	PageURL       string           `json:"page_url"`
	Mode          string           `json:"mode"`
	Provider      string           `json:"provider"`
	Model         string           `json:"model"`
	UserText      string           `json:"user_text"`
	InputTokens   int64            `json:"input_tokens"`
	OutputTokens  int64            `json:"output_tokens"`
	Started       time.Time        `json:"started"`
	Ended         time.Time        `json:"ended"`
	DurationMs    int64            `json:"duration_ms"`
	Steps         int              `json:"steps"`
	Outcome       string           `json:"outcome"`
	DroppedEvents int              `json:"dropped_events,omitempty"`
	Events        []traceEventJSON `json:"events"`
}

type traceEventJSON struct {
	Seq          int    `json:"seq"`
	Kind         string `json:"kind"`
	Name         string `json:"name"`
	AtMs         int64  `json:"at_ms"`
	DurationMs   int64  `json:"duration_ms"`
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
	IsError      bool   `json:"is_error,omitempty"`
	URLBefore    string `json:"url_before,omitempty"`
	URLAfter     string `json:"url_after,omitempty"`
	Input        string `json:"input"`
	Output       string `json:"output"`
}

func runJSON(r store.TraceRun) traceRunJSON {
	out := traceRunJSON{ID: r.ID, Chat: r.ChatID, ChatTitle: r.ChatTitle, PageURL: r.PageURL, Mode: r.Mode, Provider: r.Provider,
		Model: r.Model, UserText: r.UserText, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Started: r.Started,
		Ended: r.Ended, DurationMs: r.Duration().Milliseconds(), Steps: r.Steps, Outcome: r.Outcome, DroppedEvents: r.DroppedEvents,
		Events: []traceEventJSON{}}
	for _, e := range r.Events {
		out.Events = append(out.Events, traceEventJSON{Seq: e.Seq, Kind: e.Kind, Name: e.Name, AtMs: e.AtMs, DurationMs: e.DurationMs,
			InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, IsError: e.IsError, URLBefore: e.URLBefore, URLAfter: e.URLAfter,
			Input: e.Input, Output: e.Output})
	}
	return out
}

func downloadHeaders(w http.ResponseWriter, filename string) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+filename+`"`)
}

func (s *Server) managerTraceExportRun(w http.ResponseWriter, r *http.Request) {
	st := s.tracesStore(w)
	if st == nil {
		return
	}
	run, err := s.traceByID(r.Context(), st, r.PathValue("id"))
	if err != nil {
		s.traceFail(w, err)
		return
	}
	b, err := json.MarshalIndent(runJSON(run), "", "  ")
	if err != nil {
		s.managerError(w, err)
		return
	}
	downloadHeaders(w, fmt.Sprintf("remixproxy-trace-%d.json", run.ID))
	w.Write(b)
}

// managerTraceExportAll writes every run, newest first, one at a time (a run may be large).
func (s *Server) managerTraceExportAll(w http.ResponseWriter, r *http.Request) {
	st := s.tracesStore(w)
	if st == nil {
		return
	}
	runs, err := st.TraceRuns(r.Context(), traceListRuns)
	if err != nil {
		s.managerError(w, err)
		return
	}
	downloadHeaders(w, "remixproxy-traces-all.json")
	w.Write([]byte("[\n"))
	first := true
	for _, head := range runs {
		run, err := st.TraceRun(r.Context(), head.ID)
		if err != nil {
			continue // dropped or deleted meanwhile
		}
		b, err := json.MarshalIndent(runJSON(run), "  ", "  ")
		if err != nil {
			continue
		}
		if !first {
			w.Write([]byte(",\n"))
		}
		first = false
		w.Write([]byte("  "))
		w.Write(b)
	}
	w.Write([]byte("\n]\n"))
}

// --- views ---

// traceDuration formats a duration for the pages: "850 ms", "2.4 s", "3 min 5 s".
func traceDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	}
	return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
}

func traceRunView(r store.TraceRun) panel.TraceRunView {
	v := panel.TraceRunView{ID: r.ID, Started: r.Started, ChatID: r.ChatID, ChatTitle: r.ChatTitle, PageURL: r.PageURL,
		Mode: r.Mode, Provider: r.Provider, Model: r.Model, UserText: r.UserText, InputTokens: r.InputTokens,
		OutputTokens: r.OutputTokens, Duration: traceDuration(r.Duration()), DurationMs: r.Duration().Milliseconds(),
		Steps: r.Steps, Events: r.EventCount, Dropped: r.DroppedEvents, Outcome: r.Outcome,
		OK: r.Outcome == "answer" || r.Outcome == "done"}
	for _, e := range r.Events {
		ev := panel.TraceEventView{Seq: e.Seq, Kind: e.Kind, Name: e.Name,
			At: "+" + traceDuration(time.Duration(e.AtMs)*time.Millisecond), Duration: traceDuration(time.Duration(e.DurationMs) * time.Millisecond),
			InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, IsError: e.IsError,
			URLBefore: e.URLBefore, URLAfter: e.URLAfter, URLChanged: e.URLAfter != "" && e.URLAfter != e.URLBefore,
			Input: e.Input, Output: e.Output}
		if total := r.Duration().Milliseconds(); total > 0 {
			ev.Share = int(min(100, max(1, e.DurationMs*100/total)))
		}
		if e.Kind == "tool" {
			v.Tools = append(v.Tools, e.Name)
		}
		v.Timeline = append(v.Timeline, ev)
	}
	return v
}

// compareRows are the facts of two runs side by side, with the differing ones marked.
func compareRows(a, b panel.TraceRunView) []panel.CompareRow {
	tools := func(v panel.TraceRunView) string {
		if len(v.Tools) == 0 {
			return "none"
		}
		return strings.Join(v.Tools, ", ")
	}
	toolCounts := func(v panel.TraceRunView) string {
		n := map[string]int{}
		for _, t := range v.Tools {
			n[t]++
		}
		var names []string
		for k := range n {
			names = append(names, k)
		}
		sort.Strings(names)
		var parts []string
		for _, k := range names {
			parts = append(parts, fmt.Sprintf("%s %d", k, n[k]))
		}
		return strings.Join(parts, ", ")
	}
	rows := []panel.CompareRow{
		{Label: "Message", A: a.UserText, B: b.UserText},
		{Label: "Page", A: a.PageURL, B: b.PageURL},
		{Label: "Mode", A: a.Mode, B: b.Mode},
		{Label: "Model", A: a.Provider + " / " + a.Model, B: b.Provider + " / " + b.Model},
		{Label: "Outcome", A: a.Outcome, B: b.Outcome},
		{Label: "Duration", A: a.Duration, B: b.Duration},
		{Label: "Model calls", A: strconv.Itoa(a.Steps), B: strconv.Itoa(b.Steps)},
		{Label: "Tokens in / out", A: fmt.Sprintf("%d / %d", a.InputTokens, a.OutputTokens), B: fmt.Sprintf("%d / %d", b.InputTokens, b.OutputTokens)},
		{Label: "Tool calls", A: toolCounts(a), B: toolCounts(b)},
		{Label: "Tool sequence", A: tools(a), B: tools(b)},
	}
	for i := range rows {
		rows[i].Differs = rows[i].A != rows[i].B
	}
	return rows
}
