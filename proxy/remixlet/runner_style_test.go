package remixlet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// addStyledRemixlet saves files (manifest.json made from name and matches) and activates them.
// It writes the store directly, without the save-time checks, as a version stored by an older
// release or a stylesheet whose allowed hosts changed would be: the insertion must check again.
func addStyledRemixlet(t testing.TB, st *store.Store, name, matches string, files store.Files) string {
	t.Helper()
	files[sandbox.ManifestFile] = []byte(fmt.Sprintf(`{"name": %q, "description": "test", "api": 1, "matches": [%s], "permissions": []}`, name, matches))
	rx, _ := storetest.Create(t, st, name, files)
	return rx.ID
}

func (f *fakePage) sentStyles() []panel.Style {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]panel.Style(nil), f.styles...)
}

// connectFakePage connects a fake page at pageURL with session id, its document loaded.
func connectFakePage(r *Runner, id, pageURL string) *fakePage {
	f := &fakePage{url: pageURL}
	pc := f.conn()
	pc.id = id
	f.deliver = func(typ string, raw json.RawMessage) { r.pageMessage(id, typ, raw) }
	connectLoaded(r, pc)
	return f
}

func newTestRunner(t testing.TB, st *store.Store) *Runner {
	t.Helper()
	r := newRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(r.Close)
	return r
}

const styleWithEvil = `.promoted { display: none !important }
h1 { background: url(https://evil.test/x) }
.item { background-image: url(https://shop.test/bg.png) }
`

func TestRemixletStyleIsCheckedAgainAndSent(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	id := addStyledRemixlet(t, st, "style only", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte(styleWithEvil)})
	r := newTestRunner(t, st)

	f := connectFakePage(r, "sess-1", "https://shop.test/list")
	styles := f.sentStyles()
	if len(styles) != 1 {
		t.Fatalf("sent %d stylesheets, want 1: %+v", len(styles), styles)
	}
	s := styles[0]
	if s.Type != panel.TypeStyle || s.Remixlet != id {
		t.Errorf("sent %+v, want a %q message for %s", s, panel.TypeStyle, id)
	}
	for _, want := range []string{".promoted { display: none !important }", "url(https://shop.test/bg.png)"} {
		if !strings.Contains(s.CSS, want) {
			t.Errorf("the clean stylesheet lacks %q:\n%s", want, s.CSS)
		}
	}
	if strings.Contains(s.CSS, "evil.test") {
		t.Errorf("the refused url() reached the page:\n%s", s.CSS)
	}
	waitLog(t, st, id, `refused: style.css 2:18: url("https://evil.test/x"): evil.test is not one of the remixlet's sites`)

	// A style-only remixlet needs no sandbox.
	r.mu.Lock()
	sup, p := r.sup, r.pages["sess-1"]
	r.mu.Unlock()
	running := 0
	if p != nil {
		p.mu.Lock()
		running = len(p.running)
		p.mu.Unlock()
	}
	if sup != nil || running != 0 {
		t.Errorf("a style-only remixlet started the sandbox (%v) or %d sandboxes", sup != nil, running)
	}

	// The refusal is logged once per page session: another session logs it again, once.
	connectFakePage(r, "sess-2", "https://shop.test/")
	r.logf(id, "info", "marker")
	waitLog(t, st, id, "marker")
	entries, err := st.Log(ctx, id, 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.Contains(e.Message, "evil.test") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d log lines about evil.test after two page sessions, want 2", n)
	}
}

func TestRemixletStyleOnlyWhereScriptsWouldRun(t *testing.T) {
	ctx := context.Background()
	css := []byte(`.promoted { display: none !important }`)
	tests := []struct {
		name  string
		setup func(t *testing.T, st *store.Store, id string)
		url   string
	}{
		{"paused site", func(t *testing.T, st *store.Store, id string) {
			if err := st.PauseSite(ctx, "shop.test"); err != nil {
				t.Fatal(err)
			}
		}, "https://shop.test/"},
		{"switched off", func(t *testing.T, st *store.Store, id string) {
			if err := st.SetEnabled(ctx, id, false); err != nil {
				t.Fatal(err)
			}
		}, "https://shop.test/"},
		{"archived", func(t *testing.T, st *store.Store, id string) {
			if err := st.SetArchived(ctx, id, true); err != nil {
				t.Fatal(err)
			}
		}, "https://shop.test/"},
		{"page not matched", nil, "https://bank.test/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openTestStore(t)
			id := addStyledRemixlet(t, st, "style only", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: css})
			if tt.setup != nil {
				tt.setup(t, st, id)
			}
			f := connectFakePage(newTestRunner(t, st), "sess-1", tt.url)
			if s := f.sentStyles(); len(s) != 0 {
				t.Errorf("sent %+v", s)
			}
		})
	}
	// Resuming the site: the next page session gets it.
	st := openTestStore(t)
	id := addStyledRemixlet(t, st, "style only", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: css})
	r := newTestRunner(t, st)
	if err := st.PauseSite(ctx, "shop.test"); err != nil {
		t.Fatal(err)
	}
	if s := connectFakePage(r, "sess-1", "https://shop.test/").sentStyles(); len(s) != 0 {
		t.Fatalf("paused site: sent %+v", s)
	}
	if err := st.ResumeSite(ctx, "shop.test"); err != nil {
		t.Fatal(err)
	}
	if s := connectFakePage(r, "sess-2", "https://shop.test/").sentStyles(); len(s) != 1 || s[0].Remixlet != id || s[0].CSS != string(css) {
		t.Fatalf("resumed site: sent %+v", s)
	}
}

func TestRemixletWithStyleAndScript(t *testing.T) {
	st := openTestStore(t)
	id := addStyledRemixlet(t, st, "both", `"https://shop.test/*"`, store.Files{
		sandbox.StyleFile:  []byte(`h1 { color: red }`),
		sandbox.ScriptFile: []byte(`rmx.log("script runs")`),
	})
	r := newTestRunner(t, st)
	f := connectFakePage(r, "sess-1", "https://shop.test/")
	if s := f.sentStyles(); len(s) != 1 || s[0].Remixlet != id || s[0].CSS != `h1 { color: red }` {
		t.Fatalf("sent %+v", s)
	}
	waitLog(t, st, id, "script runs")
	r.pageGone("sess-1")
	deadline := time.Now().Add(time.Second)
	for {
		r.mu.Lock()
		n := len(r.pages)
		r.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pages still running after pageGone", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
