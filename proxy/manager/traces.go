package manager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/store"
)

// The manager's Traces pages (issue 6): the turns the recorder wrote to the store
// (chat/traces.go) and the ones the chats keep in memory. Traces never leave the machine: the
// pages show them and the exports are downloads.
//
// Routes: GET /manager/traces (list, compare form), /manager/traces/{id} (timeline),
// /manager/traces/compare?a=ID&b=ID, /manager/traces/export.json and
// /manager/traces/{id}/export.json (downloads of stored runs), /manager/traces.json (the turns
// the chats keep in memory, managerTraces); POST /manager/traces/delete (CSRF-checked).

// traceListRuns is how many stored runs the list shows and the export writes.
const traceListRuns = store.MaxTraceRuns

func (s *Manager) registerTraces(mux *http.ServeMux, post func(string, func(http.ResponseWriter, *http.Request, *store.Store))) {
	mux.HandleFunc("GET /manager/traces", s.managerTraceList)
	mux.HandleFunc("GET /manager/traces/{$}", s.managerTraceList)
	mux.HandleFunc("GET /manager/traces/compare", s.managerTraceCompare)
	mux.HandleFunc("GET /manager/traces/export.json", s.managerTraceExportAll)
	mux.HandleFunc("GET /manager/traces/{id}", s.managerTraceRun)
	mux.HandleFunc("GET /manager/traces/{id}/export.json", s.managerTraceExportRun)
	mux.HandleFunc("GET /manager/traces.json", s.managerTraces) // the turns the chats keep in memory
	post("/manager/traces/delete", s.managerTraceDelete)
	post("/manager/settings/traces", s.managerSettingsTraces)
}

// --- the Traces pages ---

func (s *Manager) tracesStore(w http.ResponseWriter) *store.Store {
	st := s.cfg.Store
	if st == nil {
		s.managerFail(w, http.StatusServiceUnavailable, "No store", "This proxy runs without a store, so it keeps no traces.", "/manager")
	}
	return st
}

func (s *Manager) managerTraceList(w http.ResponseWriter, r *http.Request) {
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
func (s *Manager) traceByID(ctx context.Context, st *store.Store, raw string) (store.TraceRun, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return store.TraceRun{}, store.ErrNotFound
	}
	return st.TraceRun(ctx, id)
}

func (s *Manager) traceFail(w http.ResponseWriter, err error) {
	if errors.Is(err, store.ErrNotFound) {
		s.managerFail(w, http.StatusNotFound, "Not found", "There is no such trace: it may have been deleted, or dropped as one of the oldest.", "/manager/traces")
		return
	}
	s.managerError(w, err)
}

// pathTrace reads the trace the request's path names ({id}); when there is none (no store, a
// bad or unknown ID) it answers the request with the reason and ok is false.
func (s *Manager) pathTrace(w http.ResponseWriter, r *http.Request) (run store.TraceRun, ok bool) {
	st := s.tracesStore(w)
	if st == nil {
		return run, false
	}
	run, err := s.traceByID(r.Context(), st, r.PathValue("id"))
	if err != nil {
		s.traceFail(w, err)
		return run, false
	}
	return run, true
}

func (s *Manager) managerTraceRun(w http.ResponseWriter, r *http.Request) {
	run, ok := s.pathTrace(w, r)
	if !ok {
		return
	}
	p := panel.ManagerTrace{ManagerBase: s.base(r), Run: traceRunView(run)}
	writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerTrace(b, p) })
}

func (s *Manager) managerTraceCompare(w http.ResponseWriter, r *http.Request) {
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

func (s *Manager) managerTraceDelete(w http.ResponseWriter, r *http.Request, st *store.Store) {
	if _, err := st.DeleteAllTraceRuns(r.Context()); err != nil {
		s.managerError(w, err)
		return
	}
	seeOther(w, "/manager/traces", "tracesgone")
}

// managerSettingsTraces turns the recorder on or off (the Settings page's "Record agent traces").
func (s *Manager) managerSettingsTraces(w http.ResponseWriter, r *http.Request, _ *store.Store) {
	on := r.PostForm.Get("record_traces") == "on"
	s.editSettings(w, func(set *agent.Settings) error {
		if set.MaxSteps == 0 {
			set.MaxSteps = agent.DefaultMaxSteps
		}
		set.RecordTraces = on
		return nil
	})
}

// managerTraces serves the turns the chats keep in memory (chat.Hub.Traces) as a JSON download:
// every chat's, newest chat first, or one chat's with ?chat=ID.
func (s *Manager) managerTraces(w http.ResponseWriter, r *http.Request) {
	b, err := json.MarshalIndent(s.chats.Traces(r.URL.Query().Get("chat")), "", "  ")
	if err != nil {
		http.Error(w, "the traces could not be encoded", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	httpx.SetType(h, "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", `attachment; filename="remixproxy-traces.json"`)
	w.Write(b)
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

func (s *Manager) managerTraceExportRun(w http.ResponseWriter, r *http.Request) {
	run, ok := s.pathTrace(w, r)
	if !ok {
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
func (s *Manager) managerTraceExportAll(w http.ResponseWriter, r *http.Request) {
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

// recordingTraces reports whether the person turned the recorder on (the settings file only;
// the chats' recorder reads the same setting, chat/traces.go).
func (s *Manager) recordingTraces() bool {
	if s.cfg.DataDir == "" || s.cfg.Store == nil {
		return false
	}
	set, err := agent.LoadSettings(s.cfg.DataDir, noEnv)
	return err == nil && set.RecordTraces
}
