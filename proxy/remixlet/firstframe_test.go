package remixlet

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// connectHolding connects a fake page that says it holds the first-frame sheets held.
func connectHolding(r *Runner, id, pageURL string, held map[string]int64) *fakePage {
	f := &fakePage{url: pageURL}
	pc := f.conn()
	pc.id = id
	pc.firstSheets = held
	f.deliver = func(typ string, raw json.RawMessage) { r.pageMessage(id, typ, raw) }
	r.pageConnected(context.Background(), pc)
	return f
}

func TestFirstFrameSheetsAreWhatTheRunnerSends(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	clean := addStyledRemixlet(t, st, "clean", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte("h1 { outline: 3px solid red }\n.item { background: url(https://shop.test/bg.png) }\n")})
	evil := addStyledRemixlet(t, st, "evil", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte(styleWithEvil)})
	addStyledRemixlet(t, st, "elsewhere", `"https://bank.test/*"`, store.Files{sandbox.StyleFile: []byte("h1 { color: red }")})
	addStyledRemixlet(t, st, "script only", `"https://shop.test/*"`, store.Files{sandbox.ScriptFile: []byte(`rmx.log("x")`)})
	r := newTestRunner(t, st)

	got := firstSheets(ctx, r, "https://shop.test/list")
	if len(got) != 1 || got[0].Remixlet != clean {
		t.Fatalf("first-frame sheets: got %+v, want only %s's (the refused one, the other site's and the script-only one left out)", got, clean)
	}
	active, _, err := st.Active(ctx, clean)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Version != active.ID {
		t.Errorf("version: got %d, want the active %d", got[0].Version, active.ID)
	}
	// The runner, for a page that holds none, sends exactly that CSS.
	sent := connectFakePage(r, "sess-1", "https://shop.test/list").sentStyles()
	byID := map[string]string{}
	for _, s := range sent {
		byID[s.Remixlet] = s.CSS
	}
	if byID[clean] != got[0].CSS {
		t.Errorf("first-frame CSS %q differs from the runner's %q", got[0].CSS, byID[clean])
	}
	if _, ok := byID[evil]; !ok {
		t.Errorf("the stylesheet with a refused part was not sent on connect: %+v", sent)
	}
	waitLog(t, st, evil, "evil.test is not one of the remixlet's sites")
}

func TestFirstFrameSheetsFollowTheStore(t *testing.T) {
	ctx := context.Background()
	css := []byte(`.promoted { display: none !important }`)
	tests := []struct {
		name  string
		setup func(t *testing.T, st *store.Store, id string)
		url   string
		want  int
	}{
		{"enabled", nil, "https://shop.test/", 1},
		{"paused site", func(t *testing.T, st *store.Store, id string) {
			if err := st.PauseSite(ctx, "shop.test"); err != nil {
				t.Fatal(err)
			}
		}, "https://shop.test/", 0},
		{"switched off", func(t *testing.T, st *store.Store, id string) {
			if err := st.SetEnabled(ctx, id, false); err != nil {
				t.Fatal(err)
			}
		}, "https://shop.test/", 0},
		{"archived", func(t *testing.T, st *store.Store, id string) {
			if err := st.SetArchived(ctx, id, true); err != nil {
				t.Fatal(err)
			}
		}, "https://shop.test/", 0},
		{"page not matched", nil, "https://bank.test/", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openTestStore(t)
			id := addStyledRemixlet(t, st, "style only", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: css})
			r := newTestRunner(t, st)
			if tt.setup != nil {
				if got := firstSheets(ctx, r, tt.url); len(got) != 1 {
					t.Fatalf("before the change: got %+v, want one sheet", got)
				}
				tt.setup(t, st, id) // reflected on the next page load, with no wait
			}
			if got := firstSheets(ctx, r, tt.url); len(got) != tt.want {
				t.Errorf("got %d sheets (%+v), want %d", len(got), got, tt.want)
			}
		})
	}
}

func TestFirstFrameSheetsNewVersion(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	id := addStyledRemixlet(t, st, "style", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte("h1 { color: red }")})
	r := newTestRunner(t, st)
	before := firstSheets(ctx, r, "https://shop.test/")
	v2 := activateNewStyle(t, st, id, "h1 { color: blue }")
	after := firstSheets(ctx, r, "https://shop.test/")
	if len(before) != 1 || len(after) != 1 || after[0].Version != v2 || after[0].CSS != "h1 { color: blue }" || before[0].Version == v2 {
		t.Fatalf("before %+v, after %+v: want the new version %d's stylesheet after", before, after, v2)
	}
}

// activateNewStyle saves and activates a new version of id with stylesheet css, keeping its
// manifest; it returns the version's ID.
func activateNewStyle(t *testing.T, st *store.Store, id, css string) int64 {
	t.Helper()
	old, _, err := st.Active(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	files := store.Files{sandbox.ManifestFile: old.Files[sandbox.ManifestFile], sandbox.StyleFile: []byte(css)}
	return storetest.Activate(t, st, id, files).ID
}

func TestFirstSheetsHeldAreNotSentAgain(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	a := addStyledRemixlet(t, st, "a", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte("h1 { color: red }")})
	evil := addStyledRemixlet(t, st, "evil", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte(styleWithEvil)})
	off := addStyledRemixlet(t, st, "off", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte("h2 { color: red }")})
	r := newTestRunner(t, st)
	versionOf := func(id string) int64 {
		v, _, err := st.Active(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return v.ID
	}
	va, vevil, voff := versionOf(a), versionOf(evil), versionOf(off)
	if err := st.SetEnabled(ctx, off, false); err != nil {
		t.Fatal(err)
	}
	unknown := "rx_" + "0123456789abcdef0123456789abcdef"

	tests := []struct {
		name string
		held map[string]int64
		want map[string]string // remixlet → CSS sent ("" an emptied sheet)
	}{
		{"none held: all sent", nil, map[string]string{a: "h1 { color: red }", evil: "*"}},
		{"the current version held: not sent again", map[string]int64{a: va}, map[string]string{evil: "*"}},
		{"an old version held: the current one replaces it", map[string]int64{a: va - 1000}, map[string]string{a: "h1 { color: red }", evil: "*"}},
		{"a stylesheet the check refuses part of: sent, whatever the page says", map[string]int64{evil: vevil}, map[string]string{a: "h1 { color: red }", evil: "*"}},
		{"a switched-off remixlet's sheet held: emptied", map[string]int64{a: va, off: voff}, map[string]string{off: "", evil: "*"}},
		{"an unknown remixlet's sheet held: emptied", map[string]int64{a: va, unknown: 3}, map[string]string{unknown: "", evil: "*"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := connectHolding(r, "sess-"+string(rune('a'+i)), "https://shop.test/", tt.held).sentStyles()
			got := map[string]string{}
			for _, s := range sent {
				if _, dup := got[s.Remixlet]; dup {
					t.Errorf("%s's stylesheet sent twice: %+v", s.Remixlet, sent)
				}
				got[s.Remixlet] = s.CSS
			}
			if len(got) != len(tt.want) {
				t.Fatalf("sent %+v, want %v", sent, tt.want)
			}
			for id, css := range tt.want {
				g, ok := got[id]
				if !ok || (css != "*" && g != css) || (css == "*" && g == "") {
					t.Errorf("for %s: got %q (sent: %v), want %q", id, g, ok, css)
				}
			}
		})
	}
}

func TestCheckedStyleCachedByVersion(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	id := addStyledRemixlet(t, st, "style", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte("h1 { color: red }")})
	r := newTestRunner(t, st)
	first := firstSheets(ctx, r, "https://shop.test/")
	r.styles.mu.Lock()
	n := len(r.styles.byVersion)
	var cached []byte
	for _, cs := range r.styles.byVersion {
		cached = cs.clean
	}
	r.styles.mu.Unlock()
	if n != 1 || len(first) != 1 {
		t.Fatalf("after one page: %d cached checks, %d sheets; want 1 and 1", n, len(first))
	}
	cs := r.checkedStyle(candidate{id: id, versionID: first[0].Version, site: "shop.test"})
	if &cs.clean[0] != &cached[0] {
		t.Errorf("the second use of the version checked the stylesheet again")
	}
	v2 := activateNewStyle(t, st, id, "h1 { color: green }")
	if got := firstSheets(ctx, r, "https://shop.test/"); len(got) != 1 || got[0].Version != v2 || got[0].CSS != "h1 { color: green }" {
		t.Errorf("after a new version: got %+v", got)
	}
}

// BenchmarkFirstFrameSheets is the cost the first-frame sheets add to every injected page: the
// store reads of the runner's matching (site paused, remixlets, active versions), with five
// enabled remixlets, two of them matching with a stylesheet (checked once, then cached).
func BenchmarkFirstFrameSheets(b *testing.B) {
	st, err := store.Open(b.TempDir()+"/remixproxy.db", store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	t := &testing.T{}
	for i, m := range []string{"shop.test", "shop.test", "bank.test", "news.test", "mail.test"} {
		addStyledRemixlet(t, st, fmt.Sprintf("r%d", i), `"https://`+m+`/*"`, store.Files{sandbox.StyleFile: []byte("h1 { color: red }")})
	}
	r := newRunner(st, sandbox.SupervisorConfig{}, nil)
	defer r.Close()
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if got := firstSheets(ctx, r, "https://shop.test/list"); len(got) != 2 {
			b.Fatalf("got %d sheets, want 2", len(got))
		}
	}
}

func TestFirstFrameSheetsSeeAnotherProcessWithinAMoment(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(dir+"/remixproxy.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := addStyledRemixlet(t, st, "style", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte("h1 { color: red }")})
	now := time.Unix(1000, 0)
	r := newTestRunner(t, st)
	r.now = func() time.Time { return now }
	if got := firstSheets(ctx, r, "https://shop.test/"); len(got) != 1 {
		t.Fatalf("got %+v, want one sheet", got)
	}
	// The CLI, another process: its own handle on the same database.
	cli, err := store.Open(dir+"/remixproxy.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if err := cli.SetEnabled(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	now = now.Add(standingMaxAge / 2)
	if got := firstSheets(ctx, r, "https://shop.test/"); len(got) != 1 {
		t.Errorf("within the copy's age: got %+v, want the copy's one sheet", got)
	}
	now = now.Add(standingMaxAge)
	if got := firstSheets(ctx, r, "https://shop.test/"); len(got) != 0 {
		t.Errorf("after the copy's age: got %+v, want none (switched off by the other process)", got)
	}
}

// TestFirstFrameRun: FirstFrame's run says whether a remixlet would run on the page — a
// script-only one too, which has no sheet — and says yes when the store cannot answer, so
// that the page agent connects at once rather than leave a remixlet waiting for the load.
func TestFirstFrameRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(dir+"/remixproxy.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	r := newTestRunner(t, st)
	r.now = func() time.Time { return now }
	if _, run := r.FirstFrame(ctx, "https://shop.test/"); run {
		t.Error("no remixlet at all: run")
	}
	addStyledRemixlet(t, st, "script only", `"https://shop.test/*"`, store.Files{sandbox.ScriptFile: []byte(`rmx.log("x")`)})
	sheets, run := r.FirstFrame(ctx, "https://shop.test/")
	if !run || len(sheets) != 0 {
		t.Errorf("a script-only remixlet matches: sheets %+v, run %v; want none, true", sheets, run)
	}
	if _, run := r.FirstFrame(ctx, "https://bank.test/"); run {
		t.Error("a remixlet of another site only: run")
	}
	st.Close()
	now = now.Add(2 * standingMaxAge)
	if _, run := r.FirstFrame(ctx, "https://bank.test/"); !run {
		t.Error("the store cannot answer: not run (a remixlet would wait for the page's load)")
	}
}

// firstSheets is FirstFrame's stylesheets.
func firstSheets(ctx context.Context, r *Runner, pageURL string) []panel.FirstSheet {
	sheets, _ := r.FirstFrame(ctx, pageURL)
	return sheets
}
