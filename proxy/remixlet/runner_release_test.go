package remixlet

import (
	"context"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

func (f *fakePage) released(remixlet string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.releases {
		if r.Remixlet == remixlet {
			n++
		}
	}
	return n
}

func TestRemixletReleasedWhenStoppedAndRestartedOnANewVersion(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	const ticking = `rmx.log("version", VERSION); setInterval(() => dom.queryAll(".x"), 20);`
	script := func(v string) []byte { return []byte("const VERSION = " + v + ";\n" + ticking) }
	paused := addStyledRemixlet(t, st, "paused later", `"https://shop.test/*"`, store.Files{sandbox.ScriptFile: script("1"),
		sandbox.StyleFile: []byte(`h1 { color: red }`)})
	updated := addStyledRemixlet(t, st, "updated later", `"https://shop.test/*"`, store.Files{sandbox.ScriptFile: script("1")})
	nav := addStyledRemixlet(t, st, "list only", `"https://shop.test/list*"`, store.Files{sandbox.ScriptFile: script("1")})
	r := newTestRunner(t, st)
	f := connectFakePage(r, "sess-1", "https://shop.test/list")
	for _, id := range []string{paused, updated, nav} {
		waitLog(t, st, id, "version 1")
	}

	// An SPA navigation out of the matches releases the remixlet in the page.
	navigate(r, f, "sess-1", "https://shop.test/account")
	waitFor(t, "the release after the navigation", func() bool { return f.released(nav) == 1 })

	// Switched off while running: its next call is refused, and the page releases it.
	if err := st.SetEnabled(ctx, paused, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the release after the switch-off", func() bool { return f.released(paused) == 1 })
	waitFor(t, "the sandbox stopped", func() bool { return runningHandle(r, "sess-1", paused) == nil })

	// A new version activated while running: released, and the new version started.
	h1 := runningHandle(r, "sess-1", updated)
	storetest.Activate(t, st, updated, store.Files{
		sandbox.ManifestFile: []byte(`{"name": "updated later", "description": "test", "api": 1, "matches": ["https://shop.test/*"], "permissions": []}`),
		sandbox.ScriptFile:   script("2"),
	})
	waitLog(t, st, updated, "version 2")
	if f.released(updated) != 1 {
		t.Errorf("the old version was released %d times, want 1", f.released(updated))
	}
	if h2 := runningHandle(r, "sess-1", updated); h2 == nil || h2 == h1 {
		t.Errorf("the new version does not run in a new sandbox")
	}
	select {
	case <-h1.Done():
	case <-time.After(5 * time.Second):
		t.Error("the old version's sandbox still runs")
	}
	if f.released(paused) != 1 || f.released(nav) != 1 {
		t.Errorf("releases: paused %d, nav %d; want one each", f.released(paused), f.released(nav))
	}
}
