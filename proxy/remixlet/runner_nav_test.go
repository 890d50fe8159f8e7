package remixlet

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// navigate moves the fake page to pageURL the way agentws.go's "nav" case does: the session's
// URL first, then the runner's hook.
func navigate(r *Runner, f *fakePage, id, pageURL string) {
	f.setURL(pageURL)
	r.pageNavigated(context.Background(), id)
}

// opsOf counts the ops of kind op the page was sent for remixlet.
func opsOf(f *fakePage, remixlet, op string) int {
	n := 0
	for _, o := range f.sent() {
		if o.Remixlet == remixlet && o.Op == op {
			n++
		}
	}
	return n
}

// logCount counts the remixlet's log lines containing want.
func logCount(t *testing.T, st *store.Store, remixlet, want string) int {
	t.Helper()
	entries, err := st.Log(context.Background(), remixlet, 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.Contains(e.Message, want) {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func runningHandle(r *Runner, sessionID, remixlet string) *sandbox.Handle {
	r.mu.Lock()
	p := r.pages[sessionID]
	r.mu.Unlock()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if rr := p.running[remixlet]; rr != nil {
		return rr.handle
	}
	return nil
}

func TestRemixletsFollowSPANavigation(t *testing.T) {
	st := openTestStore(t)
	const css = `.promoted { display: none !important }`
	id := addStyledRemixlet(t, st, "list only", `"https://shop.test/list*"`, store.Files{
		sandbox.StyleFile:  []byte(css),
		sandbox.ScriptFile: []byte(`await dom.queryAll(".promoted"); rmx.log("started on", (await rmx.page()).url)`),
	})
	styleOnly := addStyledRemixlet(t, st, "style only", `"https://shop.test/list*"`, store.Files{sandbox.StyleFile: []byte(`h1 { color: red }`)})
	everywhere := addStyledRemixlet(t, st, "everywhere", `"https://shop.test/*"`, store.Files{
		sandbox.ScriptFile: []byte(`rmx.log("everywhere runs")`),
	})
	r := newTestRunner(t, st)

	// Connected outside the matches: only the remixlet for the whole site runs.
	f := connectFakePage(r, "sess-1", "https://shop.test/account")
	waitLog(t, st, everywhere, "everywhere runs")
	if s := f.sentStyles(); len(s) != 0 {
		t.Fatalf("sent %+v on a page no stylesheet matches", s)
	}
	if runningHandle(r, "sess-1", id) != nil {
		t.Fatal("a remixlet runs on a page it does not match")
	}

	// Into the matches: its stylesheet is sent and its script's dom call arrives.
	navigate(r, f, "sess-1", "https://shop.test/list")
	waitFor(t, "the script's queryAll", func() bool { return opsOf(f, id, "queryAll") == 1 })
	waitLog(t, st, id, "started on https://shop.test/list")
	styles := f.sentStyles()
	got := map[string]string{}
	for _, s := range styles {
		got[s.Remixlet] = s.CSS
	}
	if len(styles) != 2 || got[id] != css || got[styleOnly] != `h1 { color: red }` {
		t.Fatalf("after navigating into the matches, sent %+v", styles)
	}
	h := runningHandle(r, "sess-1", id)
	hEverywhere := runningHandle(r, "sess-1", everywhere)
	if h == nil || hEverywhere == nil {
		t.Fatal("no handle for the matching remixlets")
	}

	// Within the matches: nothing restarts and nothing is sent again.
	navigate(r, f, "sess-1", "https://shop.test/list?page=2")
	navigate(r, f, "sess-1", "https://shop.test/list/shoes")
	r.logf(id, "info", "marker 1")
	waitLog(t, st, id, "marker 1")
	if n := opsOf(f, id, "queryAll"); n != 1 {
		t.Errorf("navigating within the matches restarted the remixlet: %d queryAll ops", n)
	}
	if n := logCount(t, st, id, "started on"); n != 1 {
		t.Errorf("%d start lines after navigating within the matches, want 1", n)
	}
	if s := f.sentStyles(); len(s) != 2 {
		t.Errorf("navigating within the matches sent stylesheets again: %+v", s[2:])
	}
	if runningHandle(r, "sess-1", id) != h || runningHandle(r, "sess-1", everywhere) != hEverywhere {
		t.Error("a running remixlet got a new handle after a navigation within its matches")
	}
	if logCount(t, st, everywhere, "everywhere runs") != 1 {
		t.Error("the remixlet for the whole site was restarted")
	}

	// Out of the matches: stopped, and both sheets emptied; the site-wide one keeps running.
	navigate(r, f, "sess-1", "https://shop.test/account/settings")
	if runningHandle(r, "sess-1", id) != nil {
		t.Error("the remixlet still runs after navigating out of its matches")
	}
	select {
	case <-h.Done():
	case <-time.After(5 * time.Second):
		t.Error("the remixlet's sandbox was not stopped")
	}
	if runningHandle(r, "sess-1", everywhere) != hEverywhere {
		t.Error("the remixlet for the whole site was stopped or restarted")
	}
	cleared := map[string]bool{}
	for _, s := range f.sentStyles()[2:] {
		if s.Type != panel.TypeStyle || s.CSS != "" {
			t.Errorf("sent %+v after navigating out, want empty stylesheets only", s)
		}
		cleared[s.Remixlet] = true
	}
	if len(cleared) != 2 || !cleared[id] || !cleared[styleOnly] {
		t.Errorf("sheets emptied after navigating out: %v, want %s and %s", cleared, id, styleOnly)
	}

	// Back in: started again, with its stylesheet.
	navigate(r, f, "sess-1", "https://shop.test/list")
	waitFor(t, "the second start's queryAll", func() bool { return opsOf(f, id, "queryAll") == 2 })
	if s := f.sentStyles(); len(s) != 6 {
		t.Errorf("after navigating back in, sent %d stylesheet messages, want 6: %+v", len(s), s)
	}

	r.pageGone("sess-1")
	// After the page went, a late navigation starts nothing.
	before := len(f.sentStyles())
	navigate(r, f, "sess-1", "https://shop.test/account")
	navigate(r, f, "sess-1", "https://shop.test/list")
	if len(f.sentStyles()) != before {
		t.Error("a navigation after pageGone sent stylesheets")
	}
}

func TestRemixletNavigationFollowsTheConnectRules(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	const css = `h1 { color: red }`
	id := addStyledRemixlet(t, st, "list only", `"https://shop.test/list*"`, store.Files{sandbox.StyleFile: []byte(css)})
	off := addStyledRemixlet(t, st, "off", `"https://shop.test/list*"`, store.Files{sandbox.StyleFile: []byte(css)})
	archived := addStyledRemixlet(t, st, "archived", `"https://shop.test/list*"`, store.Files{sandbox.StyleFile: []byte(css)})
	if err := st.SetEnabled(ctx, off, false); err != nil {
		t.Fatal(err)
	}
	if err := st.SetArchived(ctx, archived, true); err != nil {
		t.Fatal(err)
	}
	r := newTestRunner(t, st)
	f := connectFakePage(r, "sess-1", "https://shop.test/")
	navigate(r, f, "sess-1", "https://shop.test/list")
	if s := f.sentStyles(); len(s) != 1 || s[0].Remixlet != id {
		t.Fatalf("sent %+v, want only %s's stylesheet", s, id)
	}
	// Site paused while the page is open: the next navigation empties the sheet, even within
	// the matches.
	if err := st.PauseSite(ctx, "shop.test"); err != nil {
		t.Fatal(err)
	}
	navigate(r, f, "sess-1", "https://shop.test/list?page=2")
	if s := f.sentStyles(); len(s) != 2 || s[1].Remixlet != id || s[1].CSS != "" {
		t.Fatalf("after pausing the site and navigating, sent %+v", s)
	}
}

// TestRemixletNavigationRaces runs navigations, page messages and the end of the page at once
// (for go test -race).
func TestRemixletNavigationRaces(t *testing.T) {
	st := openTestStore(t)
	id := addStyledRemixlet(t, st, "list only", `"https://shop.test/list*"`, store.Files{
		sandbox.StyleFile:  []byte(`h1 { color: red }`),
		sandbox.ScriptFile: []byte(`rmx.keep("q", { check: async () => (await dom.queryAll(".promoted")).length === 0, repair: async () => {} })`),
	})
	r := newTestRunner(t, st)
	f := connectFakePage(r, "sess-1", "https://shop.test/list")
	waitFor(t, "the first queryAll", func() bool { return opsOf(f, id, "queryAll") > 0 })
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			u := "https://shop.test/list"
			if i%2 == 1 {
				u = "https://shop.test/account"
			}
			navigate(r, f, "sess-1", u)
		}
	}()
	for range 20 {
		r.pageMessage("sess-1", panel.TypeMutated, []byte(`{"type":"mutated"}`))
		time.Sleep(time.Millisecond)
	}
	<-done
	r.pageGone("sess-1")
	if runningHandle(r, "sess-1", id) != nil {
		t.Error("a remixlet runs after pageGone")
	}
}
