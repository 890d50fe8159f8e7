package chat

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/store"
)

func TestTraceRunFromContext(t *testing.T) {
	msgs := []agent.Message{
		{Role: agent.RoleUser, Text: "earlier"}, {Role: agent.RoleAssistant, Text: "earlier answer"},
		{Role: agent.RoleUser, Text: "click it"},
		{Role: agent.RoleAssistant, Text: "Clicking.", ToolCalls: []agent.ToolCall{{ID: "c1", Name: "click", Arguments: `{"ref":"e1","long":"` + strings.Repeat("x", 2000) + `"}`}}},
		{Role: agent.RoleTool, ToolCallID: "c1", ToolName: "click", Text: "clicked " + strings.Repeat("y", 2000)},
		{Role: agent.RoleAssistant, Text: "Clicked."},
	}
	tr := agent.TurnTrace{Model: "m", UserText: "click it", End: "answer", Steps: []agent.TraceStep{
		{Kind: "model", Text: "", ToolCalls: 0}, // a failed call: no reply in the context
		{Kind: "model", Text: "Clicking.", ToolCalls: 1},
		{Kind: "tool", Tool: "click", Arguments: "clipped", Result: "clipped", URLBefore: "https://a.test/1", URLAfter: "https://a.test/2"},
		{Kind: "model", Text: "Clicked."},
	}}
	run := traceRun(store.Chat{ID: "ch_1", Provider: "p"}, "", tr, msgs)
	if run.Steps != 3 || run.Provider != "p" || len(run.Events) != 4 {
		t.Fatalf("run = %+v", run)
	}
	if e := run.Events[0]; !strings.Contains(e.Input, "not in the chat's context") {
		t.Errorf("failed call sent = %s", e.Input)
	}
	if e := run.Events[1]; !strings.Contains(e.Input, `"earlier answer"`) || !strings.Contains(e.Input, `"click it"`) || !strings.Contains(e.Output, `"Clicking."`) {
		t.Errorf("first reply: sent %s\nreply %s", e.Input, e.Output)
	}
	if e := run.Events[2]; len(e.Output) < 2000 || len(e.Input) < 2000 || e.URLAfter != "https://a.test/2" {
		t.Errorf("tool call: the full arguments and result were not taken from the context: %+v", e)
	}
	if e := run.Events[3]; strings.Contains(e.Input, "click it") || !strings.Contains(e.Input, "clicked yyy") || !strings.Contains(e.Output, "Clicked.") {
		t.Errorf("second reply: sent %s\nreply %s", e.Input, e.Output)
	}
	// A context that no longer holds the turn (compacted) gives notes, not wrong messages.
	run = traceRun(store.Chat{ID: "ch_1"}, "p", tr, msgs[:2])
	if !strings.Contains(run.Events[1].Input, "not in the chat's context") || run.Events[2].Output != "clipped" {
		t.Errorf("compacted: %+v", run.Events)
	}
	redactRun(&run, []string{"clipped"})
	if run.Events[2].Output != "[redacted key]" {
		t.Errorf("redacted = %q", run.Events[2].Output)
	}
}

func TestTracesKept(t *testing.T) {
	h := newHub(nil, context.Background())
	c := &chat{hub: h}
	c.rec.ID = "trace-chat-1"
	obs := &chatObserver{c: c}
	for i := 0; i < maxTraceTurns+2; i++ {
		obs.Trace(agent.TurnTrace{UserText: fmt.Sprint("turn ", i), End: "answer",
			Steps: []agent.TraceStep{{Kind: "tool", Tool: "click", URLBefore: "https://a.test/1", URLAfter: "https://a.test/2"}}})
	}
	got := h.Traces("trace-chat-1")
	if len(got) != 1 || got[0].Chat != "trace-chat-1" || len(got[0].Turns) != maxTraceTurns || got[0].Turns[0].UserText != "turn 2" ||
		got[0].Turns[0].Steps[0].URLAfter != "https://a.test/2" {
		t.Errorf("traces = %+v, want the last %d turns of the chat", got, maxTraceTurns)
	}
	if got := h.Traces("another-chat"); len(got) != 0 {
		t.Errorf("traces of another chat = %+v, want none", got)
	}
}

// TestTracesArePerProxy: one proxy's traces never show in another's download.
func TestTracesArePerProxy(t *testing.T) {
	a, b := newHub(nil, context.Background()), newHub(nil, context.Background())
	c := &chat{hub: a}
	c.rec.ID = "only-in-a"
	(&chatObserver{c: c}).Trace(agent.TurnTrace{UserText: "x", End: "answer"})
	if got := b.Traces(""); len(got) != 0 {
		t.Errorf("proxy b serves proxy a's traces: %+v", got)
	}
	if got := a.Traces(""); len(got) != 1 {
		t.Errorf("proxy a serves %d chats' traces, want 1", len(got))
	}
}
