package agent

import (
	"context"
	"strings"
	"testing"
	"time"
)

// requestEnv is a fakeEnv that also sends http_request calls.
type requestEnv struct {
	fakeEnv
	got []HTTPRequest
}

func (e *requestEnv) HTTPRequest(ctx context.Context, r HTTPRequest) (string, error) {
	e.got = append(e.got, r)
	return "status 200", nil
}

func TestHTTPRequestSchema(t *testing.T) {
	for _, tt := range []struct {
		name, args, want string
	}{
		{"missing url", `{"method":"GET"}`, `missing argument "url"`},
		{"unknown method", `{"method":"TRACE","url":"/"}`, `must be one of GET, HEAD, POST, PUT, PATCH, DELETE`},
		{"lower-case method", `{"method":"post","url":"/"}`, `must be one of`},
		{"headers not an object", `{"method":"GET","url":"/","headers":["a"]}`, `argument "headers" must be of type object`},
		{"header value not a string", `{"method":"GET","url":"/","headers":{"X-A":1}}`, `header "X-A" must be a string`},
		{"body on GET", `{"method":"GET","url":"/","body":"x"}`, `has no body`},
		{"empty url", `{"method":"GET","url":"  "}`, `url is empty`},
		{"unknown argument", `{"method":"GET","url":"/","cookies":"a=b"}`, `unknown argument "cookies"`},
	} {
		env := &requestEnv{}
		_, err := runTool(context.Background(), env, ModeAct, call("x", "http_request", tt.args))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
		if len(env.got) != 0 {
			t.Errorf("%s: the Env was asked: %+v", tt.name, env.got)
		}
	}
	env := &requestEnv{}
	out, err := runTool(context.Background(), env, ModeAct, call("x", "http_request", `{"method":"POST","url":"/api/cart","headers":{"Content-Type":"application/json"},"body":"{\"id\":1}"}`))
	if err != nil || out != "status 200" || len(env.got) != 1 {
		t.Fatalf("POST: %q, %v, %+v", out, err, env.got)
	}
	if r := env.got[0]; r.Method != "POST" || r.URL != "/api/cart" || r.Headers["Content-Type"] != "application/json" || r.Body == nil || *r.Body != `{"id":1}` {
		t.Errorf("the Env got %+v", r)
	}
	for _, m := range []Mode{ModeAsk, ModeBuild} {
		if _, err := runTool(context.Background(), env, m, call("x", "http_request", `{"method":"GET","url":"/"}`)); err == nil || !strings.Contains(err.Error(), "not available in") {
			t.Errorf("http_request in %s: %v", m, err)
		}
	}
	// An Env that cannot send requests refuses clearly.
	if _, err := runTool(context.Background(), &fakeEnv{}, ModeAct, call("x", "http_request", `{"method":"GET","url":"/"}`)); err == nil || !strings.Contains(err.Error(), "not available here") {
		t.Errorf("without a Requester: %v", err)
	}
}

// TestNoToolChangesAPIAccess: API access and plan review are the person's; no tool in any mode
// names them.
func TestNoToolChangesAPIAccess(t *testing.T) {
	for _, m := range []Mode{ModeAsk, ModeBuild, ModeAct} {
		for _, s := range ToolSpecs(m) {
			for _, bad := range []string{"api_access", "allow_api", "set_setting", "plan_before_act", "approve"} {
				if strings.Contains(s.Name, bad) || strings.Contains(string(s.Parameters), bad) {
					t.Errorf("%s mode: tool %s mentions %q", m, s.Name, bad)
				}
			}
		}
	}
}

// TestPersonToolsHaveNoTimeout: http_request (a card for a POST) and propose_plan wait for
// the person beyond the tool timeout.
func TestPersonToolsHaveNoTimeout(t *testing.T) {
	env := &slowEnv{wait: 150 * time.Millisecond}
	p := &fakeProvider{replies: []Response{{ToolCalls: []ToolCall{
		call("a", "http_request", `{"method":"POST","url":"/x","body":"1"}`),
		call("b", "propose_plan", `{"steps":["one"]}`),
	}}, {Text: "ok"}}}
	msgs, err := Run(context.Background(), Config{Provider: p, Mode: ModeAct, Env: env, ToolTimeout: 50 * time.Millisecond}, nil, "go", &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role == RoleTool && m.IsError {
			t.Errorf("%s timed out: %s", m.ToolName, m.Text)
		}
	}
}

type slowEnv struct {
	fakeEnv
	wait time.Duration
}

func (e *slowEnv) HTTPRequest(ctx context.Context, r HTTPRequest) (string, error) {
	select {
	case <-time.After(e.wait):
		return "sent", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (e *slowEnv) ProposePlan(ctx context.Context, p Plan) (PlanDecision, error) {
	select {
	case <-time.After(e.wait):
		return PlanDecision{Reviewed: true, Approved: true, Plan: p}, nil
	case <-ctx.Done():
		return PlanDecision{}, ctx.Err()
	}
}
