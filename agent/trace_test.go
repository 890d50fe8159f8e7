package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// traceRecorder is a recorder that also takes the turn's trace.
type traceRecorder struct {
	recorder
	traces []TurnTrace
}

func (r *traceRecorder) Trace(t TurnTrace) { r.traces = append(r.traces, t) }

// urlEnv is a fakeEnv whose page address changes with every click.
type urlEnv struct {
	fakeEnv
	url string
}

func (e *urlEnv) PageURL() string { return e.url }

func TestRunTrace(t *testing.T) {
	p := &fakeProvider{replies: []Response{
		{ToolCalls: []ToolCall{call("a", "click", `{"ref":"e1"}`)}, Usage: Usage{10, 2}},
		{ToolCalls: []ToolCall{call("b", "done", `{"summary":"Opened the second page."}`)}, Usage: Usage{20, 3}},
	}}
	env := &urlEnv{url: "https://a.test/1"}
	env.page = func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == "click" {
			env.url = "https://a.test/2"
		}
		return json.RawMessage(`{"ok":true}`), nil
	}
	obs := &traceRecorder{}
	if _, err := Run(context.Background(), Config{Provider: p, Model: "m1", Mode: ModeAct, Env: env}, nil, "open the second page", obs); err != nil {
		t.Fatal(err)
	}
	if len(obs.traces) != 1 {
		t.Fatalf("%d traces, want 1", len(obs.traces))
	}
	tr := obs.traces[0]
	var kinds []string
	for _, s := range tr.Steps {
		kinds = append(kinds, s.Kind+":"+s.Tool)
	}
	if got := strings.Join(kinds, " "); got != "model: tool:click model: tool:done" {
		t.Errorf("steps = %s", got)
	}
	click := tr.Steps[1]
	if click.URLBefore != "https://a.test/1" || click.URLAfter != "https://a.test/2" || click.Arguments != `{"ref":"e1"}` || click.IsError {
		t.Errorf("click step = %+v", click)
	}
	if tr.End != "done" || tr.Model != "m1" || tr.Mode != ModeAct || tr.UserText != "open the second page" || tr.Usage != (Usage{30, 5}) || tr.Steps[0].InputTokens != 10 {
		t.Errorf("trace = %+v", tr)
	}
	// A plain Observer gets no trace and the loop does not need one.
	if _, err := Run(context.Background(), Config{Provider: &fakeProvider{}, Mode: ModeAsk, Env: env}, nil, "hi", &recorder{}); err != nil {
		t.Fatal(err)
	}
}

// TestSettingsRecordTraces: the trace recorder is off unless turned on, and the setting
// survives a save and a load.
func TestSettingsRecordTraces(t *testing.T) {
	dir := t.TempDir()
	s, err := LoadSettings(dir, nil)
	if err != nil || s.RecordTraces {
		t.Fatalf("default: RecordTraces = %v, %v; want false", s.RecordTraces, err)
	}
	s.RecordTraces = true
	if err := SaveSettings(dir, s); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, SettingsFile))
	if !strings.Contains(string(b), `"record_traces": true`) {
		t.Errorf("the file lacks record_traces:\n%s", b)
	}
	if s, err = LoadSettings(dir, nil); err != nil || !s.RecordTraces {
		t.Errorf("after a reload: RecordTraces = %v, %v; want true", s.RecordTraces, err)
	}
	s.RecordTraces = false
	SaveSettings(dir, s)
	if b, _ := os.ReadFile(filepath.Join(dir, SettingsFile)); strings.Contains(string(b), "record_traces") {
		t.Errorf("off is written (want it left out, as the default):\n%s", b)
	}
}
