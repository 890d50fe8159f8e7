package remixlet

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// warmDone waits until the runner's Warm has finished its work.
func warmDone(t *testing.T, r *Runner) {
	t.Helper()
	waitFor(t, "Warm to finish", func() bool { return !r.warming.Load() })
}

func hostRunning(r *Runner) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sup != nil
}

// TestRunnerWarm: the sandbox host starts ahead of any page once a remixlet with a script is on,
// not for stylesheets alone or switched-off remixlets; Prepare starts it when none runs.
func TestRunnerWarm(t *testing.T) {
	st := openTestStore(t)
	r := newTestRunner(t, st)
	r.Warm()
	warmDone(t, r)
	if hostRunning(r) {
		t.Fatal("the sandbox host started with no remixlet at all")
	}
	addStyledRemixlet(t, st, "style only", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte(`h1 { color: red }`)})
	off := addRunAtRemixlet(t, st, "off", "")
	if err := st.SetEnabled(t.Context(), off, false); err != nil {
		t.Fatal(err)
	}
	r.Warm()
	warmDone(t, r)
	if hostRunning(r) {
		t.Fatal("the sandbox host started for a stylesheet and a switched-off script")
	}
	// Switched on: the host starts, with no page connected.
	if err := st.SetEnabled(t.Context(), off, true); err != nil {
		t.Fatal(err)
	}
	r.Warm()
	warmDone(t, r)
	if !hostRunning(r) || !r.warmRunning() {
		t.Fatal("the sandbox host did not start ahead of the first page")
	}
	r.mu.Lock()
	pages := len(r.pages)
	r.mu.Unlock()
	if pages != 0 {
		t.Fatalf("%d pages: the host should have started with none", pages)
	}

	// Prepare on a fresh runner (a remixlet enabled behind its back) starts one too.
	r2 := newTestRunner(t, st)
	r2.Prepare()
	warmDone(t, r2)
	if !hostRunning(r2) {
		t.Fatal("Prepare did not start the sandbox host")
	}
}

// TestRunnerRetriesASandboxThatCouldNotStart: a host that cannot be started at all is not given up
// for good: the runner tries again supervisorRetry later.
func TestRunnerRetriesASandboxThatCouldNotStart(t *testing.T) {
	st := openTestStore(t)
	r := newTestRunner(t, st)
	r.supCfg.Command = []string{"/nonexistent/remixproxy", "sandbox-host"}
	if _, err := r.supervisor(); err == nil || !strings.Contains(err.Error(), "/nonexistent/remixproxy") {
		t.Fatalf("got %v, want the start's error", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r.supCfg.Command = []string{exe, "sandbox-host"}
	if _, err := r.supervisor(); err == nil {
		t.Fatal("retried at once after a failed start, want after supervisorRetry")
	}
	r.mu.Lock()
	r.supErrAt = r.supErrAt.Add(-supervisorRetry - time.Second)
	r.mu.Unlock()
	if sup, err := r.supervisor(); err != nil || sup == nil {
		t.Fatalf("after supervisorRetry: got %v, %v; want the host started", sup, err)
	}
}

// TestPrepareLooksInTheStoreRarely: with no remixlet that has a script (no host to start),
// every injected page calls Prepare, yet the store is read again only after this process wrote
// to it or standingMaxAge passed; a remixlet another process (the CLI) switched on is still
// found within standingMaxAge, and one this process saved at the next page.
func TestPrepareLooksInTheStoreRarely(t *testing.T) {
	path := filepath.Join(t.TempDir(), "remixproxy.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cli, err := store.Open(path, store.Options{}) // another process's handle: its writes do not change st's generation
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	r := newTestRunner(t, st)
	var nowMu sync.Mutex
	now := time.Unix(1800000000, 0)
	r.now = func() time.Time { nowMu.Lock(); defer nowMu.Unlock(); return now }
	skip := func(d time.Duration) { nowMu.Lock(); now = now.Add(d); nowMu.Unlock() }

	pages := func(n int) {
		for i := 0; i < n; i++ {
			r.Prepare()
			warmDone(t, r)
		}
	}
	pages(200)
	if got := r.standingReads.Load(); got != 1 {
		t.Fatalf("200 pages with no remixlet read the store %d times, want 1", got)
	}
	addStyledRemixlet(t, cli, "switched on by the CLI", `"https://shop.test/*"`, store.Files{sandbox.ScriptFile: []byte(`rmx.log(1)`)})
	pages(50)
	if hostRunning(r) || r.standingReads.Load() != 1 {
		t.Fatalf("within standingMaxAge and with no write of this process: host %v, %d reads; want none, 1", hostRunning(r), r.standingReads.Load())
	}
	skip(standingMaxAge)
	pages(1)
	if !hostRunning(r) {
		t.Fatalf("the CLI's remixlet was not found after standingMaxAge (%d reads)", r.standingReads.Load())
	}

	// A write of this process is seen at the next page, with no wait.
	st2 := openTestStore(t)
	r2 := newTestRunner(t, st2)
	r2.now = r.now
	r2.Prepare()
	warmDone(t, r2)
	addStyledRemixlet(t, st2, "saved here", `"https://shop.test/*"`, store.Files{sandbox.ScriptFile: []byte(`rmx.log(1)`)})
	r2.Prepare()
	warmDone(t, r2)
	if !hostRunning(r2) || r2.standingReads.Load() != 2 {
		t.Fatalf("after this process saved a script remixlet: host %v after %d reads, want started after 2", hostRunning(r2), r2.standingReads.Load())
	}
}
