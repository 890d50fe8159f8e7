package panel

import (
	"html/template"
	"io"
	"time"
)

// The manager's Traces pages (issue 6): the recorded runs of the agent, one per message, a
// run's timeline, and two runs side by side. Runs are picked for comparison with a plain GET
// form (radio buttons A and B), each event opens with <details>: no script.

var (
	managerTracesTemplate       = mustTracesPage("manager_traces.html")
	managerTraceTemplate        = mustTracesPage("manager_traces_run.html")
	managerTraceCompareTemplate = mustTracesPage("manager_traces_compare.html")
)

// mustTracesPage parses a Traces page with the manager's layout and the parts the Traces pages
// share (manager_traces_parts.html).
func mustTracesPage(name string) *template.Template {
	return template.Must(template.New(name).ParseFS(templateFiles,
		"templates/manager_layout.html", "templates/manager_traces_parts.html", "templates/"+name))
}

// ManagerTraces is the list of recorded runs, newest first.
type ManagerTraces struct {
	ManagerBase
	// Recording says whether the recorder is on (Settings, "Record agent traces").
	Recording bool
	Runs      []TraceRunView
	// Max is how many runs the store keeps.
	Max int
	// A and B are the runs the compare form starts with (0: none).
	A, B int64
}

// ManagerTrace is one run's page.
type ManagerTrace struct {
	ManagerBase
	Run TraceRunView
}

// ManagerTraceCompare shows two runs side by side.
type ManagerTraceCompare struct {
	ManagerBase
	A, B TraceRunView
	Rows []CompareRow
}

// CompareRow is one fact of two runs; Differs marks a row whose values differ.
type CompareRow struct {
	Label   string
	A, B    string
	Differs bool
}

// TraceRunView is one run.
type TraceRunView struct {
	ID                         int64
	Started                    time.Time
	ChatID, ChatTitle, PageURL string
	Mode, Provider, Model      string
	UserText                   string
	InputTokens, OutputTokens  int64
	Duration                   string // formatted
	DurationMs                 int64
	// Steps counts model calls, Events the stored events, Dropped those over the store's bound.
	Steps, Events, Dropped int
	Outcome                string
	// OK: the run ended with an answer or done (not an error, the step limit, a loop or Stop).
	OK bool
	// Tools are the tool calls' names in order; Timeline the events (on a run's page only).
	Tools    []string
	Timeline []TraceEventView
}

// TraceEventView is one event of a run's timeline.
type TraceEventView struct {
	Seq                       int
	Kind, Name                string // "model" or "tool"; the model's or the tool's name
	At, Duration              string // formatted; At from the run's start
	InputTokens, OutputTokens int64
	IsError                   bool
	URLBefore, URLAfter       string
	URLChanged                bool
	// Share is the event's duration in percent of the run's (0..100), drawn as a bar.
	Share int
	// Input is what was sent (the messages, the arguments), Output what came back.
	Input, Output string
}

// RenderManagerTraces writes the Traces list.
func RenderManagerTraces(w io.Writer, p ManagerTraces) error {
	return render(w, managerTracesTemplate, "manager traces", p)
}

// RenderManagerTrace writes one run's page.
func RenderManagerTrace(w io.Writer, p ManagerTrace) error {
	return render(w, managerTraceTemplate, "manager trace", p)
}

// RenderManagerTraceCompare writes two runs side by side.
func RenderManagerTraceCompare(w io.Writer, p ManagerTraceCompare) error {
	return render(w, managerTraceCompareTemplate, "manager trace comparison", p)
}
