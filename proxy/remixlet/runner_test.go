package remixlet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// init makes this test binary act as the sandbox host when the supervisor starts it the way it
// starts the remixproxy binary (os.Executable() "sandbox-host"), so a test that runs remixlets
// never runs the tests again in the child.
func init() {
	if len(os.Args) == 2 && os.Args[1] == "sandbox-host" {
		os.Exit(sandbox.HostMain())
	}
}

// testRemixlet is a remixlet saved and activated (through an approval) in a test store.
type testRemixlet struct {
	id        string
	versionID int64
	manifest  *sandbox.Manifest
}

func openTestStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "remixproxy.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// addTestRemixlet saves name with the given matches and permissions and activates it.
func addTestRemixlet(t *testing.T, st *store.Store, name, matches, permissions, script string) testRemixlet {
	t.Helper()
	manifest := fmt.Sprintf(`{"name": %q, "description": "test", "api": 1, "matches": [%s], "permissions": [%s]}`, name, matches, permissions)
	m, problems := sandbox.ParseManifest([]byte(manifest))
	if len(problems) > 0 {
		t.Fatalf("manifest: %v", problems)
	}
	rx, v := storetest.Create(t, st, name, store.Files{sandbox.ManifestFile: []byte(manifest), sandbox.ScriptFile: []byte(script)})
	return testRemixlet{id: rx.ID, versionID: v.ID, manifest: m}
}

// fakePage is a page agent for the runner: it records the ops it is sent and answers each with
// answer (by default ok, value null).
type fakePage struct {
	mu       sync.Mutex
	url      string
	ops      []panel.Op
	styles   []panel.Style
	releases []panel.Release
	answer   func(op panel.Op) panel.Result
	run      *pageRun
	// deliver hands a message to the runner; if nil, to run.receive.
	deliver func(typ string, raw json.RawMessage)
}

func (f *fakePage) conn() pageConn {
	return pageConn{
		id:    "sess-test",
		url:   func() string { f.mu.Lock(); defer f.mu.Unlock(); return f.url },
		title: func() string { return "Test page" },
		send: func(ctx context.Context, v any) error {
			if rel, ok := v.(panel.Release); ok {
				f.mu.Lock()
				f.releases = append(f.releases, rel)
				f.mu.Unlock()
				return nil
			}
			if st, ok := v.(panel.Style); ok {
				f.mu.Lock()
				f.styles = append(f.styles, st)
				f.mu.Unlock()
				return nil
			}
			op, ok := v.(panel.Op)
			if !ok {
				return nil
			}
			f.mu.Lock()
			f.ops = append(f.ops, op)
			answer := f.answer
			f.mu.Unlock()
			res := panel.Result{Type: panel.TypeResult, ID: op.ID, Ok: true}
			if answer != nil {
				res = answer(op)
				res.Type, res.ID = panel.TypeResult, op.ID
			}
			raw, _ := json.Marshal(res)
			f.mu.Lock()
			deliver := f.deliver
			f.mu.Unlock()
			if deliver == nil {
				deliver = f.run.receive
			}
			go deliver(panel.TypeResult, raw)
			return nil
		},
	}
}

func (f *fakePage) sent() []panel.Op {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]panel.Op(nil), f.ops...)
}

func (f *fakePage) setURL(u string) {
	f.mu.Lock()
	f.url = u
	f.mu.Unlock()
}

// newTestHost returns a Host for rx on a fake page at pageURL, with no caching of the store's
// answers, so every call sees the store as it is now.
func newTestHost(t *testing.T, st *store.Store, rx testRemixlet, pageURL string) (*remixletHost, *fakePage) {
	t.Helper()
	r := newRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.standingTTL = 0
	r.opTimeout = 2 * time.Second
	t.Cleanup(r.Close)
	f := &fakePage{url: pageURL}
	f.run = r.newPageRun(f.conn())
	return f.run.newHost(rx.id, rx.versionID, rx.manifest), f
}

// waitLog waits until the remixlet's log has a line containing want.
func waitLog(t *testing.T, st *store.Store, remixlet, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, err := st.Log(context.Background(), remixlet, 100)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, e := range entries {
			if strings.Contains(e.Message, want) {
				return
			}
			lines = append(lines, e.Level+": "+e.Message)
		}
		if time.Now().After(deadline) {
			t.Fatalf("log of %s has no line with %q; it has:\n%s", remixlet, want, strings.Join(lines, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const rxTestScript = `rmx.log("hi")`

func TestRemixletHostChecksEveryCall(t *testing.T) {
	ctx := context.Background()
	queryAll := json.RawMessage(`[".promoted"]`)
	tests := []struct {
		name string
		// setup changes the world after the host was made; it returns the host to call.
		setup   func(t *testing.T, st *store.Store, h *remixletHost, f *fakePage, other testRemixlet) *remixletHost
		ns, fn  string
		args    json.RawMessage
		refused string // "" means allowed
	}{
		{"allowed dom call is relayed", nil, "dom", "queryAll", queryAll, ""},
		{"rmx.page", nil, "rmx", "page", json.RawMessage(`[]`), ""},
		{"paused remixlet", func(t *testing.T, st *store.Store, h *remixletHost, f *fakePage, _ testRemixlet) *remixletHost {
			if err := st.SetEnabled(ctx, h.id, false); err != nil {
				t.Fatal(err)
			}
			return h
		}, "dom", "queryAll", queryAll, "the remixlet is paused"},
		{"archived remixlet", func(t *testing.T, st *store.Store, h *remixletHost, f *fakePage, _ testRemixlet) *remixletHost {
			if err := st.SetArchived(ctx, h.id, true); err != nil {
				t.Fatal(err)
			}
			return h
		}, "rmx", "page", json.RawMessage(`[]`), "archived"},
		{"paused site", func(t *testing.T, st *store.Store, h *remixletHost, f *fakePage, _ testRemixlet) *remixletHost {
			if err := st.PauseSite(ctx, "shop.test"); err != nil {
				t.Fatal(err)
			}
			return h
		}, "dom", "queryAll", queryAll, "paused on shop.test"},
		{"page not covered after an SPA navigation", func(t *testing.T, st *store.Store, h *remixletHost, f *fakePage, _ testRemixlet) *remixletHost {
			f.setURL("https://shop.test/account/settings")
			return h
		}, "dom", "queryAll", queryAll, "not covered"},
		{"page on another site", func(t *testing.T, st *store.Store, h *remixletHost, f *fakePage, _ testRemixlet) *remixletHost {
			f.setURL("https://bank.test/")
			return h
		}, "rmx", "page", json.RawMessage(`[]`), "not covered"},
		{"wrong remixlet: another remixlet's ID with this version", func(t *testing.T, st *store.Store, h *remixletHost, f *fakePage, other testRemixlet) *remixletHost {
			return h.p.newHost(other.id, h.versionID, h.manifest)
		}, "dom", "queryAll", queryAll, "another version"},
		{"deleted remixlet", func(t *testing.T, st *store.Store, h *remixletHost, f *fakePage, _ testRemixlet) *remixletHost {
			if err := st.DeleteRemixlet(ctx, h.id); err != nil {
				t.Fatal(err)
			}
			return h
		}, "dom", "queryAll", queryAll, "deleted"},
		{"storage without the permission", nil, "rmx", "storage.get", json.RawMessage(`["k"]`), "needs the storage permission"},
		{"storage.set without the permission", nil, "rmx", "storage.set", json.RawMessage(`["k", 1]`), "needs the storage permission"},
		{"dom call outside the allow-list", nil, "dom", "fetch", json.RawMessage(`["https://evil.test/"]`), "not available"},
		{"setAttr onclick", nil, "dom", "setAttr", json.RawMessage(`[{"$h":1}, "onclick", "x()"]`), "on*"},
		{"setAttr src javascript:", nil, "dom", "setAttr", json.RawMessage(`[{"$h":1}, "SRC", " java\tscript:alert(1)"]`), "javascript: addresses are not allowed"},
		{"setAttr srcset", nil, "dom", "setAttr", json.RawMessage(`[{"$h":1}, "srcset", "https://evil.test/ 1x"]`), "srcset"},
		{"create script", nil, "dom", "create", json.RawMessage(`[{"tag": "script"}]`), "<script> refused"},
		{"addStyle url", nil, "dom", "addStyle", json.RawMessage(`["a { background: \\75rl(https://evil.test/) }"]`), "refused"},
		{"setAttr a mark", nil, "dom", "setAttr", json.RawMessage(`[{"$h":1}, "data-remixlet-0123abcd", ""]`), "marks"},
		{"setStyle url", nil, "dom", "setStyle", json.RawMessage(`[{"$h":1}, {"background": "URL(https://evil.test/)"}]`), "url("},
		{"setStyle escape", nil, "dom", "setStyle", json.RawMessage(`[{"$h":1}, {"background": "\\75rl(x)"}]`), "escapes"},
		{"setStyle image-set", nil, "dom", "setStyle", json.RawMessage(`[{"$h":1}, {"background": "image-set('a.png' 1x)"}]`), "image-set("},
		{"not a handle", nil, "dom", "hide", json.RawMessage(`[{"$h":"1"}]`), "handle"},
		{"unknown event", nil, "dom", "on", json.RawMessage(`[{"$h":1}, "message", {"$listener": 3}]`), "not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openTestStore(t)
			rx := addTestRemixlet(t, st, "hide promoted", `"https://shop.test/*"`, ``, rxTestScript)
			// The page is covered by "https://shop.test/*" but not by the narrower pattern below.
			narrow := addTestRemixlet(t, st, "other", `"https://shop.test/*"`, ``, rxTestScript)
			rx.manifest, _ = sandbox.ParseManifest([]byte(`{"name": "hide promoted", "description": "test", "api": 1, "matches": ["https://shop.test/", "https://shop.test/list*"], "permissions": []}`))
			h, f := newTestHost(t, st, rx, "https://shop.test/list")
			if tt.setup != nil {
				h = tt.setup(t, st, h, f, narrow)
			}
			before := len(f.sent())
			_, err := h.Call(ctx, tt.ns, tt.fn, tt.args)
			relayed := len(f.sent()) - before
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("%s.%s: got error %v, want it allowed", tt.ns, tt.fn, err)
				}
				if tt.ns == "dom" && relayed != 1 {
					t.Fatalf("%s.%s: relayed %d ops to the page, want 1", tt.ns, tt.fn, relayed)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.refused) {
				t.Fatalf("%s.%s: got error %v, want a refusal containing %q", tt.ns, tt.fn, err, tt.refused)
			}
			if relayed != 0 {
				t.Fatalf("%s.%s was refused but %d ops reached the page: %+v", tt.ns, tt.fn, relayed, f.sent())
			}
			if !strings.Contains(tt.name, "deleted") {
				waitLog(t, st, h.id, "refused: "+tt.ns+"."+tt.fn)
			}
		})
	}
}

func TestRemixletHostRelaysAsData(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "hide promoted", `"https://shop.test/*"`, ``, rxTestScript)
	h, f := newTestHost(t, st, rx, "https://shop.test/")
	f.answer = func(op panel.Op) panel.Result {
		switch op.Op {
		case "queryAll":
			return panel.Result{Ok: true, Value: []map[string]int{{"$h": 1}, {"$h": 2}}}
		default:
			return panel.Result{Ok: false, Error: "unknown element handle"}
		}
	}
	got, err := h.Call(ctx, "dom", "queryAll", json.RawMessage(`[".promoted"]`))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `[{"$h":1},{"$h":2}]` {
		t.Errorf("queryAll answered %s", got)
	}
	ops := f.sent()
	if len(ops) != 1 || ops[0].Remixlet != rx.id || ops[0].Op != "queryAll" || ops[0].Type != panel.TypeOp {
		t.Fatalf("sent %+v, want one queryAll op for %s", ops, rx.id)
	}
	// A refusal in the page is the remixlet's error and goes to its log.
	if _, err := h.Call(ctx, "dom", "hide", json.RawMessage(`[{"$h":9}]`)); err == nil || !strings.Contains(err.Error(), "unknown element handle") {
		t.Fatalf("hide of an unknown handle: got %v", err)
	}
	waitLog(t, st, rx.id, "refused: dom.hide: unknown element handle")
	// A page that does not answer times out.
	f.run.r.opTimeout = 50 * time.Millisecond
	f.answer = nil
	f.run.pc.send = func(context.Context, any) error { return nil }
	if _, err := h.Call(ctx, "dom", "text", json.RawMessage(`[{"$h":1}]`)); err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("unanswered op: got %v", err)
	}
}

func TestRemixletHostLogSkipsTheChecks(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "hide promoted", `"https://shop.test/*"`, ``, rxTestScript)
	h, _ := newTestHost(t, st, rx, "https://shop.test/")
	if err := st.SetEnabled(ctx, rx.id, false); err != nil {
		t.Fatal(err)
	}
	if err := st.PauseSite(ctx, "shop.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, "rmx", "log", json.RawMessage(`["why it failed", 3]`)); err != nil {
		t.Fatalf("rmx.log of a paused remixlet: %v", err)
	}
	waitLog(t, st, rx.id, "why it failed 3")
}

// TestRemixletHostLogSaysWhenItCannotRead: arguments rmx.log cannot read are refused with the
// parse error, and the refusal is in the remixlet's log (they were dropped without a word).
func TestRemixletHostLogSaysWhenItCannotRead(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "noisy", `"https://shop.test/*"`, ``, rxTestScript)
	h, _ := newTestHost(t, st, rx, "https://shop.test/")
	_, err := h.Call(ctx, "rmx", "log", json.RawMessage(`{"not": "an array"}`))
	if err == nil || !strings.Contains(err.Error(), "not a JSON array") {
		t.Fatalf("rmx.log of an object: got %v, want a refusal naming the arguments", err)
	}
	waitLog(t, st, rx.id, "refused: rmx.log: the arguments are not a JSON array")
}

func TestRemixletHostStorageIsPerRemixlet(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	perm := `{"name": "storage", "reason": "remember"}`
	a := addTestRemixlet(t, st, "a", `"https://shop.test/*"`, perm, rxTestScript)
	b := addTestRemixlet(t, st, "b", `"https://shop.test/*"`, perm, rxTestScript)
	if err := st.StorageSet(ctx, b.id, "k", `"b's secret"`); err != nil {
		t.Fatal(err)
	}
	h, _ := newTestHost(t, st, a, "https://shop.test/")
	if got, err := h.Call(ctx, "rmx", "storage.get", json.RawMessage(`["k"]`)); err != nil || string(got) != "null" {
		t.Fatalf("a's storage.get of a key only b set: %s, %v", got, err)
	}
	if _, err := h.Call(ctx, "rmx", "storage.set", json.RawMessage(`["k", {"n": 1}]`)); err != nil {
		t.Fatal(err)
	}
	if got, err := h.Call(ctx, "rmx", "storage.get", json.RawMessage(`["k"]`)); err != nil || string(got) != `{"n": 1}` && string(got) != `{"n":1}` {
		t.Fatalf("storage.get after set: %s, %v", got, err)
	}
	if v, _, _ := st.StorageGet(ctx, b.id, "k"); v != `"b's secret"` {
		t.Fatalf("b's value changed to %s", v)
	}
	if got, err := h.Call(ctx, "rmx", "storage.keys", json.RawMessage(`[]`)); err != nil || string(got) != `["k"]` {
		t.Fatalf("storage.keys: %s, %v", got, err)
	}
	// Paused: even storage is refused while the sandbox runs.
	if err := st.SetEnabled(ctx, a.id, false); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, "rmx", "storage.get", json.RawMessage(`["k"]`)); err == nil || !strings.Contains(err.Error(), "paused") {
		t.Fatalf("storage.get of a paused remixlet: %v", err)
	}
}

// TestRemixletEventsReachOnlyTheirListener runs a remixlet in a real sandbox for a fake page and
// checks that a dom.on event reaches it only for a listener it registered, under its own ID.
func TestRemixletEventsReachOnlyTheirListener(t *testing.T) {
	st := openTestStore(t)
	a := addTestRemixlet(t, st, "a", `"https://shop.test/*"`, ``,
		`await dom.on({$h: 1}, "click", (e) => rmx.log("a got", e.type, e.n));`)
	b := addTestRemixlet(t, st, "b", `"https://shop.test/*"`, ``, `rmx.log("b runs")`)
	r := newRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(r.Close)
	f := &fakePage{url: "https://shop.test/"}
	f.deliver = func(typ string, raw json.RawMessage) { r.pageMessage("sess-test", typ, raw) }
	connectLoaded(r, f.conn())
	waitLog(t, st, b.id, "b runs")
	var listener int64
	deadline := time.Now().Add(5 * time.Second)
	for listener == 0 {
		for _, op := range f.sent() {
			if op.Op == "on" && op.Remixlet == a.id {
				l, _ := op.Args[2].(json.RawMessage)
				var v struct {
					L int64 `json:"$listener"`
				}
				json.Unmarshal(l, &v)
				listener = v.L
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dom.on op from a; sent %+v", f.sent())
		}
		time.Sleep(10 * time.Millisecond)
	}
	event := func(remixlet string, listener int64, n int) {
		raw, _ := json.Marshal(panel.Event{Type: panel.TypeEvent, Remixlet: remixlet, Listener: listener, Event: map[string]any{"type": "click", "n": n}})
		r.pageMessage("sess-test", panel.TypeEvent, raw)
	}
	event(b.id, listener, 1)   // a's listener under b's ID
	event(a.id, listener+7, 2) // a listener a never registered
	event(a.id, listener, 3)
	waitLog(t, st, a.id, "a got click 3")
	entries, _ := st.Log(context.Background(), a.id, 100)
	for _, e := range entries {
		if strings.Contains(e.Message, "click 1") || strings.Contains(e.Message, "click 2") {
			t.Errorf("an event that was not a's reached it: %s", e.Message)
		}
	}
	r.pageGone("sess-test")
	r.mu.Lock()
	n := len(r.pages)
	r.mu.Unlock()
	if n != 0 {
		t.Errorf("%d pages still running after pageGone", n)
	}
}

func TestRemixletHostLogsAStandingRefusalOnce(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "hide promoted", `"https://shop.test/*"`, ``, rxTestScript)
	h, _ := newTestHost(t, st, rx, "https://shop.test/")
	if err := st.PauseSite(ctx, "shop.test"); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := h.Call(ctx, "dom", "queryAll", json.RawMessage(`[".x"]`)); err == nil {
			t.Fatal("a call on a paused site was allowed")
		}
	}
	// A policy refusal is logged every time.
	if err := st.ResumeSite(ctx, "shop.test"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		h.Call(ctx, "dom", "fetch", json.RawMessage(`[]`))
	}
	h.Call(ctx, "rmx", "log", json.RawMessage(`["done"]`))
	waitLog(t, st, rx.id, "done")
	entries, err := st.Log(ctx, rx.id, 100)
	if err != nil {
		t.Fatal(err)
	}
	paused, policy := 0, 0
	for _, e := range entries {
		switch {
		case strings.Contains(e.Message, "paused on shop.test"):
			paused++
		case strings.Contains(e.Message, "refused: dom.fetch"):
			policy++
		}
	}
	if paused != 1 || policy != 2 {
		t.Errorf("log has %d paused-site lines and %d dom.fetch lines, want 1 and 2", paused, policy)
	}
}
