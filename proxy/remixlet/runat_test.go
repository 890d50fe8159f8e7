package remixlet

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// connectLoaded connects a page whose agent then says hello from a loaded document, as the page
// agent does right after it connects: every script starts.
func connectLoaded(r *Runner, pc pageConn) {
	r.pageConnected(context.Background(), pc)
	hello(r, pc.id, panel.ReadyComplete)
}

// hello delivers the page agent's hello with the document's state (none: "").
func hello(r *Runner, sessionID, state string) {
	raw, _ := json.Marshal(panel.Hello{Type: panel.TypeHello, URL: "https://shop.test/", Ready: state})
	r.pageMessage(sessionID, panel.TypeHello, raw)
}

// ready delivers a readiness report.
func ready(r *Runner, sessionID, state string) {
	raw, _ := json.Marshal(panel.Ready{Type: panel.TypeReady, State: state})
	r.pageMessage(sessionID, panel.TypeReady, raw)
}

// addRunAtRemixlet adds a script remixlet on shop.test whose manifest has runAt ("" for none);
// its script logs "NAME ran".
func addRunAtRemixlet(t *testing.T, st *store.Store, name, runAt string) string {
	t.Helper()
	field := ""
	if runAt != "" {
		field = fmt.Sprintf(`, "run_at": %q`, runAt)
	}
	id := addStyledRemixlet(t, st, name, `"https://shop.test/*"`, store.Files{sandbox.ScriptFile: []byte(fmt.Sprintf(`rmx.log(%q)`, name+" ran"))})
	v, ok, err := st.Active(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("no active version: %v", err)
	}
	files := v.Files
	files[sandbox.ManifestFile] = []byte(fmt.Sprintf(`{"name": %q, "description": "test", "api": 1, "matches": ["https://shop.test/*"], "permissions": []%s}`, name, field))
	activate(t, st, id, files)
	return id
}

// activate saves files as a new version of remixlet id and makes it active.
func activate(t *testing.T, st *store.Store, id string, files store.Files) {
	t.Helper()
	storetest.Activate(t, st, id, files)
}

// started lists, sorted, the names (by ids) of the remixlets the runner started on the page.
func started(r *Runner, sessionID string, names map[string]string) []string {
	r.mu.Lock()
	p := r.pages[sessionID]
	r.mu.Unlock()
	var out []string
	if p == nil {
		return out
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id := range p.running {
		out = append(out, names[id])
	}
	slices.Sort(out)
	return out
}

// TestRunAtStartsEachScriptAtItsPoint: a document_start script starts when the page connects,
// document_end (the default, also without run_at) after DOMContentLoaded, document_idle at load;
// a page that connects later in its life starts what is due at once; reports never go back.
func TestRunAtStartsEachScriptAtItsPoint(t *testing.T) {
	type step struct {
		kind  string // "hello" or "ready"
		state string
		want  []string // the remixlets started after this step
	}
	all := []string{"default", "end", "idle", "start"}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a page that streams", []step{
			{"hello", panel.ReadyLoading, []string{"start"}},
			{"ready", panel.ReadyInteractive, []string{"default", "end", "start"}},
			{"ready", panel.ReadyComplete, all},
		}},
		{"a page complete when it connects (back/forward cache, reconnect)", []step{
			{"hello", panel.ReadyComplete, all},
		}},
		{"a page parsed when it connects", []step{
			{"hello", panel.ReadyInteractive, []string{"default", "end", "start"}},
			{"ready", panel.ReadyComplete, all},
		}},
		{"an older page agent that reports no state", []step{
			{"hello", "", all},
		}},
		{"reports that go back or say nothing are ignored", []step{
			{"hello", panel.ReadyLoading, []string{"start"}},
			{"ready", "soon", []string{"start"}},
			{"ready", "", []string{"start"}},
			{"ready", panel.ReadyLoading, []string{"start"}},
			{"ready", panel.ReadyInteractive, []string{"default", "end", "start"}},
			{"ready", panel.ReadyLoading, []string{"default", "end", "start"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openTestStore(t)
			names := map[string]string{}
			for _, n := range []struct{ name, runAt string }{{"start", "document_start"}, {"end", "document_end"}, {"idle", "document_idle"}, {"default", ""}} {
				names[addRunAtRemixlet(t, st, n.name, n.runAt)] = n.name
			}
			r := newTestRunner(t, st)
			r.idleGrace = time.Hour // only load reaches document_idle here
			f := &fakePage{url: "https://shop.test/"}
			pc := f.conn()
			r.pageConnected(context.Background(), pc)
			if got := started(r, pc.id, names); !slices.Equal(got, []string{"start"}) {
				t.Fatalf("on connect, before the hello: started %v, want [start]", got)
			}
			for i, s := range tt.steps {
				if s.kind == "hello" {
					hello(r, pc.id, s.state)
				} else {
					ready(r, pc.id, s.state)
				}
				if got := started(r, pc.id, names); !slices.Equal(got, s.want) {
					t.Fatalf("after step %d (%s %q): started %v, want %v", i+1, s.kind, s.state, got, s.want)
				}
			}
			// What started really ran in its sandbox.
			for id, name := range names {
				if slices.Contains(tt.steps[len(tt.steps)-1].want, name) {
					waitLog(t, st, id, name+" ran")
				}
			}
		})
	}
}

// TestRunAtIdleGrace: document_idle starts IdleGrace after DOMContentLoaded when load does not
// come first.
func TestRunAtIdleGrace(t *testing.T) {
	st := openTestStore(t)
	idle := addRunAtRemixlet(t, st, "idle", "document_idle")
	names := map[string]string{idle: "idle"}
	r := newTestRunner(t, st)
	r.idleGrace = 30 * time.Millisecond
	f := &fakePage{url: "https://shop.test/"}
	pc := f.conn()
	r.pageConnected(context.Background(), pc)
	hello(r, pc.id, panel.ReadyLoading)
	if got := started(r, pc.id, names); len(got) != 0 {
		t.Fatalf("before DOMContentLoaded: started %v", got)
	}
	ready(r, pc.id, panel.ReadyInteractive)
	waitFor(t, "document_idle to start after the grace", func() bool { return len(started(r, pc.id, names)) == 1 })
	waitLog(t, st, idle, "idle ran")
	ready(r, pc.id, panel.ReadyComplete) // load after the grace: nothing starts twice
	if n := logCount(t, st, idle, "idle ran"); n != 1 {
		t.Errorf("ran %d times, want once", n)
	}
}

// TestRunAtLiveChanges: a remixlet switched on while the page is open runs there at once when
// the page is past its point; one paused while it waits never starts; a page that went starts
// nothing, even when its grace timer fires late.
func TestRunAtLiveChanges(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	end := addRunAtRemixlet(t, st, "end", "")
	names := map[string]string{end: "end"}
	r := newTestRunner(t, st)
	r.idleGrace = time.Hour
	f := &fakePage{url: "https://shop.test/"}
	pc := f.conn()
	r.pageConnected(ctx, pc)
	hello(r, pc.id, panel.ReadyLoading)
	// Paused while it waits for DOMContentLoaded: it never starts.
	if err := st.SetEnabled(ctx, end, false); err != nil {
		t.Fatal(err)
	}
	r.Rematch(ctx, pc.id)
	ready(r, pc.id, panel.ReadyInteractive)
	if got := started(r, pc.id, names); len(got) != 0 {
		t.Fatalf("a remixlet paused while it waited started: %v", got)
	}
	// Switched on again, on a page now parsed: it starts at once.
	if err := st.SetEnabled(ctx, end, true); err != nil {
		t.Fatal(err)
	}
	r.Rematch(ctx, pc.id)
	if got := started(r, pc.id, names); !slices.Equal(got, []string{"end"}) {
		t.Fatalf("switched on in a parsed page: started %v, want [end]", got)
	}
	waitLog(t, st, end, "end ran")

	// A page that goes while a script waits.
	idle := addRunAtRemixlet(t, st, "idle", "document_idle")
	g := &fakePage{url: "https://shop.test/other"}
	gc := g.conn()
	gc.id = "sess-gone"
	r.pageConnected(ctx, gc)
	hello(r, gc.id, panel.ReadyInteractive)
	r.mu.Lock()
	p := r.pages[gc.id]
	r.mu.Unlock()
	r.pageGone(gc.id)
	p.idleReached() // the grace timer firing after the page went
	p.mu.Lock()
	n, waiting := len(p.running), len(p.waiting)
	p.mu.Unlock()
	if n != 0 || waiting != 0 {
		t.Errorf("after the page went: %d running, %d waiting, want none", n, waiting)
	}
	if run, ok := r.LastRun(idle); ok {
		t.Errorf("document_idle ran on a page that went: %+v", run)
	}
}
