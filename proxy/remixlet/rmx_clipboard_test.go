package remixlet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// servicePage is a page agent for the rmx service tests: it records every message it is sent
// and answers a Clipboard with clip (by default ok).
type servicePage struct {
	id   string // the session ID; "sess-svc" if empty
	mu   sync.Mutex
	url  string
	msgs []any
	clip func(panel.Clipboard) panel.Result
	run  *pageRun
	// runs are the panel's ways to run each remixlet's commands (pageConn.setCommands).
	runs map[string]page.RunFunc
}

func (f *servicePage) conn() pageConn {
	id := f.id
	if id == "" {
		id = "sess-svc"
	}
	return pageConn{
		id:    id,
		url:   func() string { f.mu.Lock(); defer f.mu.Unlock(); return f.url },
		title: func() string { return "Test page" },
		setCommands: func(remixlet, source string, cmds []page.CommandItem, run page.RunFunc) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.runs == nil {
				f.runs = map[string]page.RunFunc{}
			}
			f.runs[remixlet] = run
		},
		send: func(ctx context.Context, v any) error {
			f.mu.Lock()
			f.msgs = append(f.msgs, v)
			clip := f.clip
			f.mu.Unlock()
			if c, ok := v.(panel.Clipboard); ok {
				res := panel.Result{Ok: true}
				if clip != nil {
					res = clip(c)
				}
				res.Type, res.ID = panel.TypeResult, c.ID
				raw, _ := json.Marshal(res)
				go f.run.receive(panel.TypeResult, raw)
			}
			return nil
		},
	}
}

// sent returns the messages of type T the page was sent.
func sentOf[T any](f *servicePage) []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []T
	for _, m := range f.msgs {
		if v, ok := m.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func permList(perms ...string) string {
	var ps []string
	for _, p := range perms {
		ps = append(ps, fmt.Sprintf(`{"name": %q, "reason": "test"}`, p))
	}
	return strings.Join(ps, ", ")
}

// newServiceHost runs a remixlet named name with perms on a fake page at https://shop.test/list.
func newServiceHost(t *testing.T, st *store.Store, name string, perms ...string) (*remixletHost, *servicePage) {
	t.Helper()
	rx := addTestRemixlet(t, st, name, `"https://shop.test/*"`, permList(perms...), rxTestScript)
	r := newRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.standingTTL = 0
	r.opTimeout = 2 * time.Second
	t.Cleanup(r.Close)
	f := &servicePage{url: "https://shop.test/list"}
	f.run = r.newPageRun(f.conn())
	return f.run.newHost(rx.id, rx.versionID, rx.manifest), f
}

// TestSmallServicesCheckEveryCall: each rmx service is refused without its permission in the
// approved manifest, and for a remixlet that may not run (paused, on a page its matches do not
// cover); nothing reaches the page then.
func TestSmallServicesCheckEveryCall(t *testing.T) {
	ctx := context.Background()
	calls := []struct {
		method, args, perm, want string
	}{
		{"clipboard.write", `["hi"]`, sandbox.PermClipboard, "needs the clipboard permission"},
		{"notify", `["hi"]`, sandbox.PermNotifications, "needs the notifications permission"},
		{"menu.add", `["a", "A", {"$listener": 1}]`, sandbox.PermMenu, "needs the menu permission"},
		{"menu.remove", `["a"]`, sandbox.PermMenu, "needs the menu permission"},
		{"schedule.every", `["s", {"minutes": 5, "action": {"message": 1}}]`, sandbox.PermSchedule, "needs the schedule permission"},
		{"schedule.at", `["s", {"time": 4102444800000, "action": {"message": 1}}]`, sandbox.PermSchedule, "needs the schedule permission"},
		{"schedule.cancel", `["s"]`, sandbox.PermSchedule, "needs the schedule permission"},
		{"onMessage", `[{"$listener": 1}]`, sandbox.PermSchedule, "needs the schedule permission"},
		{"storage.onChange", `[{"$listener": 1}]`, sandbox.PermStorage, "needs the storage permission"},
	}
	all := []string{sandbox.PermClipboard, sandbox.PermNotifications, sandbox.PermMenu, sandbox.PermSchedule, sandbox.PermStorage}
	for _, c := range calls {
		var others []string
		for _, p := range all {
			if p != c.perm {
				others = append(others, p)
			}
		}
		t.Run(c.method+" without its permission", func(t *testing.T) {
			st := openTestStore(t)
			h, f := newServiceHost(t, st, "svc", others...)
			_, err := h.Call(ctx, "rmx", c.method, json.RawMessage(c.args))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("rmx.%s: got %v, want a refusal containing %q", c.method, err, c.want)
			}
			if len(sentOf[any](f)) != 0 {
				t.Errorf("rmx.%s was refused but the page got %+v", c.method, sentOf[any](f))
			}
			waitLog(t, st, h.id, "refused: rmx."+c.method)
		})
		t.Run(c.method+" of a paused remixlet", func(t *testing.T) {
			st := openTestStore(t)
			h, f := newServiceHost(t, st, "svc", all...)
			if err := st.SetEnabled(ctx, h.id, false); err != nil {
				t.Fatal(err)
			}
			_, err := h.Call(ctx, "rmx", c.method, json.RawMessage(c.args))
			if err == nil || !strings.Contains(err.Error(), "paused") {
				t.Fatalf("rmx.%s: got %v, want a refusal for the paused remixlet", c.method, err)
			}
			if n := len(sentOf[any](f)); n != 0 {
				t.Errorf("rmx.%s was refused but the page got %d messages", c.method, n)
			}
		})
		t.Run(c.method+" on a page the matches do not cover", func(t *testing.T) {
			st := openTestStore(t)
			h, f := newServiceHost(t, st, "svc", all...)
			f.mu.Lock()
			f.url = "https://bank.test/"
			f.mu.Unlock()
			_, err := h.Call(ctx, "rmx", c.method, json.RawMessage(c.args))
			if err == nil || !strings.Contains(err.Error(), "not covered") {
				t.Fatalf("rmx.%s: got %v, want a refusal for the page", c.method, err)
			}
		})
	}
}

func TestClipboardWrite(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	h, f := newServiceHost(t, st, "copier", sandbox.PermClipboard)

	if _, err := h.Call(ctx, "rmx", "clipboard.write", json.RawMessage(`["<b>code</b> 42"]`)); err != nil {
		t.Fatalf("clipboard.write: %v", err)
	}
	got := sentOf[panel.Clipboard](f)
	if len(got) != 1 || got[0].Text != "<b>code</b> 42" || got[0].Remixlet != h.id || got[0].Type != panel.TypeClipboard {
		t.Fatalf("the page got %+v, want one Clipboard with the text", got)
	}

	// The page agent's refusal (no user gesture) is the call's error, word for word.
	f.mu.Lock()
	f.clip = func(panel.Clipboard) panel.Result { return panel.Result{Error: panel.ClipboardNoGesture} }
	f.mu.Unlock()
	_, err := h.Call(ctx, "rmx", "clipboard.write", json.RawMessage(`["x"]`))
	if err == nil || err.Error() != panel.ClipboardNoGesture {
		t.Errorf("without a gesture: got %v, want %q", err, panel.ClipboardNoGesture)
	}

	for _, tt := range []struct{ name, args, want string }{
		{"not text", `[{"html": "<b>x</b>"}]`, "must be a string"},
		{"a number", `[42]`, "must be a string"},
		{"missing", `[]`, "missing"},
		{"too large", `["` + strings.Repeat("x", maxClipboardBytes+1) + `"]`, "more than the 102400 allowed"},
	} {
		before := len(sentOf[panel.Clipboard](f))
		_, err := h.Call(ctx, "rmx", "clipboard.write", json.RawMessage(tt.args))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want a refusal containing %q", tt.name, err, tt.want)
		}
		if len(sentOf[panel.Clipboard](f)) != before {
			t.Errorf("%s: refused, but sent to the page", tt.name)
		}
	}
	f.mu.Lock()
	f.clip = nil
	f.mu.Unlock()
	if _, err := h.Call(ctx, "rmx", "clipboard.write", json.RawMessage(`["`+strings.Repeat("x", maxClipboardBytes)+`"]`)); err != nil {
		t.Errorf("100 KB: %v", err)
	}
}
