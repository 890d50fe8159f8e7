package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestLoopDetector(t *testing.T) {
	a := call("a", "click", `{"ref":"e1"}`)
	b := call("b", "scroll", `{"direction":"down"}`)
	c := call("c", "outline", `{}`)
	type step struct {
		call   ToolCall
		result string
		want   string // "", "warn" or "stop"
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"different calls", []step{{a, "r", ""}, {b, "r", ""}, {c, "r", ""}, {a, "r2", ""}}},
		{"same call, different outcomes", []step{{a, "1", ""}, {a, "2", ""}, {a, "3", ""}, {a, "4", ""}}},
		{"three identical → nudge", []step{{a, "r", ""}, {a, "r", ""}, {a, "r", "warn"}}},
		{"A-B-A-B → nudge", []step{{a, "r", ""}, {b, "s", ""}, {a, "r", ""}, {b, "s", "warn"}}},
		{"identical until stop", []step{{a, "r", ""}, {a, "r", ""}, {a, "r", "warn"}, {a, "r", "warn"}, {a, "r", "warn"}, {a, "r", "stop"}}},
		{"nudges without progress stop", []step{
			{a, "r", ""}, {b, "s", ""}, {a, "r", ""}, {b, "s", "warn"}, {a, "r", "warn"}, {b, "s", "warn"}, {a, "r", "stop"}}},
		{"progress resets the nudges", []step{
			{a, "r", ""}, {b, "s", ""}, {a, "r", ""}, {b, "s", "warn"}, {a, "r", "warn"},
			{c, "1", ""}, {call("d", "find", `{"text":"x"}`), "y", ""},
			{a, "r", "warn"}, {b, "s", ""}, {c, "2", ""}, {c, "3", ""}, {a, "r", ""}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &loopDetector{}
			for i, s := range tt.steps {
				v := d.observe(s.call, s.result)
				got := ""
				switch {
				case v.Stop != "":
					got = "stop"
				case v.Warning != "":
					got = "warn"
				}
				if got != s.want {
					t.Fatalf("step %d (%s): got %q (%+v), want %q", i, s.call.Name, got, v, s.want)
				}
			}
		})
	}
}

// TestRunStopsALoop: a model that keeps making the same call is warned in the results, then the
// turn ends with a notice (and not at the step cap).
func TestRunStopsALoop(t *testing.T) {
	var replies []Response
	for i := 0; i < 20; i++ {
		replies = append(replies, Response{ToolCalls: []ToolCall{call(fmt.Sprint("c", i), "query", `{"selector":"a"}`)}})
	}
	p := &fakeProvider{replies: replies}
	obs := &recorder{}
	msgs, err := Run(context.Background(), Config{Provider: p, Mode: ModeAsk, Env: &fakeEnv{}}, nil, "go", obs)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.requests); n != loopRepeatStop {
		t.Errorf("%d model calls, want %d", n, loopRepeatStop)
	}
	if len(obs.notices) == 0 || !strings.Contains(obs.notices[len(obs.notices)-1], "without making progress") {
		t.Errorf("notices = %q", obs.notices)
	}
	last := msgs[len(msgs)-1]
	if last.Role != RoleTool {
		t.Errorf("the context ends with %+v", last)
	}
	warned := 0
	for _, m := range msgs {
		if m.Role == RoleTool && strings.Contains(m.Text, "do something different") {
			warned++
		}
	}
	if warned != loopRepeatStop-loopRepeatNudge {
		t.Errorf("%d warned results, want %d", warned, loopRepeatStop-loopRepeatNudge)
	}
}
