package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestDoneEndsTheTurn: an accepted done ends the turn with its summary as the answer; calls
// after it in the same reply are not run.
func TestDoneEndsTheTurn(t *testing.T) {
	p := &fakeProvider{replies: []Response{{ToolCalls: []ToolCall{
		call("a", "done", `{"summary":"Created the product."}`),
		call("b", "click", `{"ref":"e1"}`),
	}}, {Text: "never asked"}}}
	env := &fakeEnv{}
	obs := &recorder{}
	msgs, err := Run(context.Background(), Config{Provider: p, Mode: ModeAct, Env: env}, nil, "go", obs)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.requests) != 1 {
		t.Errorf("%d model calls, want 1", len(p.requests))
	}
	if got := strings.Join(env.calls, "|"); got != `done {"summary":"Created the product."}` {
		t.Errorf("env calls = %q", got)
	}
	last := msgs[len(msgs)-1]
	if last.Role != RoleAssistant || last.Text != "Created the product." {
		t.Errorf("last message = %+v", last)
	}
	if r := msgs[len(msgs)-2]; r.ToolCallID != "b" || !r.IsError || !strings.Contains(r.Text, "not run") {
		t.Errorf("the call after done = %+v", r)
	}
}

// TestDoneRefused: when the Env refuses done (the proxy saw an open dialog), the model gets the
// reason and the turn goes on; an Env without a page accepts it.
func TestDoneRefused(t *testing.T) {
	p := &fakeProvider{replies: []Response{
		{ToolCalls: []ToolCall{call("a", "done", `{"summary":"Saved."}`)}},
		{Text: "The dialog is still open; I could not save."},
	}}
	env := &fakeEnv{page: func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return nil, &ToolError{Message: "done refused: an open dialog"}
	}}
	msgs, err := Run(context.Background(), Config{Provider: p, Mode: ModeAsk, Env: env}, nil, "go", &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.requests) != 2 || !strings.Contains(msgs[2].Text, "done refused") || !msgs[2].IsError {
		t.Errorf("msgs = %+v", msgs)
	}

	p = &fakeProvider{replies: []Response{{ToolCalls: []ToolCall{call("a", "done", `{"summary":"Saved."}`)}}}}
	env = &fakeEnv{page: func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return nil, context.Canceled // no page
	}}
	msgs, _ = Run(context.Background(), Config{Provider: p, Mode: ModeAsk, Env: env}, nil, "go", &recorder{})
	if last := msgs[len(msgs)-1]; last.Text != "Saved." {
		t.Errorf("without a page, done ended with %+v", last)
	}
}

func TestActToolSchemas(t *testing.T) {
	for _, tt := range []struct {
		name, args, want string
	}{
		{"type", `{"ref":"e1"}`, `missing argument "text"`},
		{"type", `{"ref":"e1","text":"x","clear":"yes"}`, `argument "clear" must be of type boolean`},
		{"press_keys", `{"keys":"Enter"}`, `argument "keys" must be of type array`},
		{"scroll", `{"direction":"sideways"}`, `must be one of up, down, left, right, top, bottom`},
		{"wait_for", `{"timeoutMs":1.5}`, `must be of type integer`},
		{"click", `{"text":"Save","resubmit":1}`, `argument "resubmit" must be of type boolean`},
		{"done", `{}`, `missing argument "summary"`},
		{"done", `{"summary":"  "}`, `summary is empty`},
	} {
		_, err := runTool(context.Background(), &fakeEnv{}, ModeAct, call("x", tt.name, tt.args))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s: err %v, want %q", tt.name, tt.args, err, tt.want)
		}
	}
	if _, err := runTool(context.Background(), &fakeEnv{}, ModeAsk, call("x", "type", `{"ref":"e1","text":"x"}`)); err == nil || !strings.Contains(err.Error(), "not available in Ask mode") {
		t.Errorf("type in Ask mode: %v", err)
	}
}
