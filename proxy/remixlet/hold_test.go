package remixlet

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// holdingPage is a page agent that holds ops (panel.Hello.Holds): it records every op and
// answers only when the test says so.
type holdingPage struct {
	mu  sync.Mutex
	ops []panel.Op
}

func (f *holdingPage) conn() pageConn {
	return pageConn{
		id:    "sess-hold",
		url:   func() string { return "https://shop.test/" },
		title: func() string { return "Test page" },
		send: func(ctx context.Context, v any) error {
			if op, ok := v.(panel.Op); ok {
				f.mu.Lock()
				f.ops = append(f.ops, op)
				f.mu.Unlock()
			}
			return nil
		},
	}
}

func (f *holdingPage) sent() []panel.Op {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]panel.Op(nil), f.ops...)
}

// helloHolds delivers the hello of a page agent that holds ops.
func helloHolds(r *Runner, sessionID, state string) {
	raw, _ := json.Marshal(panel.Hello{Type: panel.TypeHello, URL: "https://shop.test/", Ready: state, Holds: true})
	r.pageMessage(sessionID, panel.TypeHello, raw)
}

// answer delivers the page's result for op id.
func answer(r *Runner, sessionID string, id uint64, value any) {
	raw, _ := json.Marshal(panel.Result{Type: panel.TypeResult, ID: id, Ok: true, Value: value})
	r.pageMessage(sessionID, panel.TypeResult, raw)
}

// heldScript logs, queries the heading and hides it.
const heldScript = `rmx.log("step one"); const h = await dom.query("h1"); rmx.log("found " + JSON.stringify(h)); await dom.hide(h);`

// addHeldRemixlet adds a script remixlet with heldScript on shop.test with run_at runAt.
func addHeldRemixlet(t *testing.T, st *store.Store, runAt string) string {
	t.Helper()
	id := addRunAtRemixlet(t, st, "held", runAt)
	v, ok, err := st.Active(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("no active version: %v", err)
	}
	files := v.Files
	files[sandbox.ScriptFile] = []byte(heldScript)
	activate(t, st, id, files)
	return id
}

// TestHeldScriptStartsAtHelloAndActsAfterParse: on a page agent that holds ops, a document_end
// script starts at the hello while the page parses; its dom call goes to the page marked to wait
// for the parse, and does not time out while the page parses longer than the op limit; its
// rmx.log and its recorded run wait for the DOMContentLoaded report; after it, the script goes
// on as before.
func TestHeldScriptStartsAtHelloAndActsAfterParse(t *testing.T) {
	for _, runAt := range []string{"", "document_end"} {
		t.Run("run_at "+runAt, func(t *testing.T) {
			st := openTestStore(t)
			id := addHeldRemixlet(t, st, runAt)
			r := newTestRunner(t, st)
			r.opTimeout = 100 * time.Millisecond
			f := &holdingPage{}
			pc := f.conn()
			r.pageConnected(context.Background(), pc)
			if len(f.sent()) != 0 {
				t.Fatalf("before the hello: ops sent %v, want none", f.sent())
			}
			helloHolds(r, pc.id, panel.ReadyLoading)
			waitFor(t, "the script's first dom call, sent while the page parses", func() bool { return len(f.sent()) == 1 })
			op := f.sent()[0]
			if op.Op != "query" || op.After != panel.ReadyInteractive {
				t.Fatalf("first op %q with After %q, want query with After %q", op.Op, op.After, panel.ReadyInteractive)
			}
			// The page parses for three op limits: nothing times out, nothing is logged, no run.
			time.Sleep(3 * r.opTimeout)
			if n := logCount(t, st, id, "step one"); n != 0 {
				entries, _ := st.Log(context.Background(), id, 100)
				t.Errorf("rmx.log reached the log before the page was parsed (%d lines): %+v", n, entries)
			}
			if n := logCount(t, st, id, "the page did not answer"); n != 0 {
				t.Errorf("the held op timed out while the page parsed: %d log lines", n)
			}
			if _, ok := r.LastRun(id); ok {
				t.Errorf("a run was recorded before the page was parsed")
			}
			ready(r, pc.id, panel.ReadyInteractive)
			answer(r, pc.id, op.ID, map[string]int{"$h": 1})
			waitFor(t, "dom.hide after the answer", func() bool { return len(f.sent()) == 2 })
			if got := f.sent()[1]; got.Op != "hide" || got.After != panel.ReadyInteractive {
				t.Errorf("second op %q with After %q, want hide with After %q", got.Op, got.After, panel.ReadyInteractive)
			}
			waitLog(t, st, id, "step one")
			waitLog(t, st, id, `found {"$h":1}`)
			if _, ok := r.LastRun(id); !ok {
				t.Errorf("no run recorded after the page was parsed")
			}
		})
	}
}

// TestHeldScriptOnAPageLeftBeforeParse: a page left while it parses gets nothing from a script
// that started early: no log line, no run, and its held call fails with the page.
func TestHeldScriptOnAPageLeftBeforeParse(t *testing.T) {
	st := openTestStore(t)
	id := addHeldRemixlet(t, st, "")
	r := newTestRunner(t, st)
	f := &holdingPage{}
	pc := f.conn()
	r.pageConnected(context.Background(), pc)
	helloHolds(r, pc.id, panel.ReadyLoading)
	waitFor(t, "the script's first dom call", func() bool { return len(f.sent()) == 1 })
	r.pageGone(pc.id)
	time.Sleep(400 * time.Millisecond) // the log's batches
	if entries, err := st.Log(context.Background(), id, 100); err != nil || len(entries) != 0 {
		t.Errorf("log of a script whose page was never parsed: %v (err %v), want none", entries, err)
	}
	if _, ok := r.LastRun(id); ok {
		t.Errorf("a run was recorded for a page that was never parsed")
	}
}

// TestHeldOpsOnlyWhereThePageHolds: document_start scripts' calls never wait and carry no
// After; a page agent that does not hold ops (no Holds in its hello) starts document_end scripts
// only at DOMContentLoaded, as before.
func TestHeldOpsOnlyWhereThePageHolds(t *testing.T) {
	t.Run("document_start", func(t *testing.T) {
		st := openTestStore(t)
		id := addHeldRemixlet(t, st, "document_start")
		r := newTestRunner(t, st)
		f := &holdingPage{}
		pc := f.conn()
		r.pageConnected(context.Background(), pc)
		waitFor(t, "the document_start script's first dom call", func() bool { return len(f.sent()) == 1 })
		if got := f.sent()[0].After; got != "" {
			t.Errorf("document_start op After %q, want none", got)
		}
		waitLog(t, st, id, "step one") // its rmx.log did not wait for a parse
	})
	t.Run("a page agent that does not hold", func(t *testing.T) {
		st := openTestStore(t)
		addHeldRemixlet(t, st, "")
		r := newTestRunner(t, st)
		f := &holdingPage{}
		pc := f.conn()
		r.pageConnected(context.Background(), pc)
		hello(r, pc.id, panel.ReadyLoading)
		time.Sleep(200 * time.Millisecond)
		if len(f.sent()) != 0 {
			t.Fatalf("a document_end script acted on a page agent that does not hold, before DOMContentLoaded: %v", f.sent())
		}
		ready(r, pc.id, panel.ReadyInteractive)
		waitFor(t, "the script's first dom call after DOMContentLoaded", func() bool { return len(f.sent()) == 1 })
	})
}
