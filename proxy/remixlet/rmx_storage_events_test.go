package remixlet

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/sandbox"
)

// A change one page makes to rmx.storage reaches the onChange callbacks of the remixlet's other
// pages (in their sandboxes), not its own.
func TestStorageChangeReachesTheOtherPages(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "theme", `"https://shop.test/*"`, permList(sandbox.PermStorage),
		`const page = (await rmx.page()).url;
		 await rmx.storage.onChange((c) => rmx.log("change on", page, c.key, JSON.stringify(c.value)));
		 rmx.log("ready", page);
		 if (page.endsWith("/b")) { await rmx.storage.set("theme", {dark: true}); await rmx.storage.remove("theme"); rmx.log("b done"); }`)
	r := newRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(r.Close)
	a := &servicePage{id: "sess-a", url: "https://shop.test/a"}
	connectLoaded(r, a.conn())
	waitLog(t, st, rx.id, "ready https://shop.test/a")
	b := &servicePage{id: "sess-b", url: "https://shop.test/b"}
	connectLoaded(r, b.conn())
	waitLog(t, st, rx.id, `change on https://shop.test/a theme {"dark":true}`)
	waitLog(t, st, rx.id, `change on https://shop.test/a theme null`)
	waitLog(t, st, rx.id, "b done")
	entries, _ := st.Log(ctx, rx.id, 100)
	for _, e := range entries {
		if strings.Contains(e.Message, "change on https://shop.test/b") {
			t.Errorf("the page that made the change was told: %s", e.Message)
		}
	}
	// A page that went is forgotten: a change after it left reaches nobody and breaks nothing.
	r.pageGone("sess-a")
	h, _ := newServiceHost(t, st, "theme 2", sandbox.PermStorage)
	if _, err := h.Call(ctx, "rmx", "storage.onChange", json.RawMessage(`["not a function"]`)); err == nil || !strings.Contains(err.Error(), "must be a function") {
		t.Errorf("onChange with a string: %v", err)
	}
	for i := 0; i < maxStorageWatchers; i++ {
		if _, err := h.Call(ctx, "rmx", "storage.onChange", json.RawMessage(`[{"$listener": 5}]`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Call(ctx, "rmx", "storage.onChange", json.RawMessage(`[{"$listener": 5}]`)); err == nil || !strings.Contains(err.Error(), "more than 10") {
		t.Errorf("callback 11: %v", err)
	}
}
