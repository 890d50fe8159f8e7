package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// reloadSite is a static page with a promoted and a sponsored item; it counts its loads.
func reloadSite(loads *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		loads.Add(1)
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Reload</title></head>
<body><ul id="feed"><li class="promoted">promoted</li><li class="sponsored">sponsored</li><li>post</li></ul>
<script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
	})
}

const reloadManifest = `{
  "name": "reload test",
  "description": "Hides one kind of item on reload.test.",
  "api": 1,
  "matches": ["https://reload.test/*"],
  "permissions": []
}`

// hideKeep is a remixlet script that keeps every element matching sel hidden.
func hideKeep(sel string) string {
	return strings.ReplaceAll(hidePromotedScript, ".promoted", sel)
}

// shown says whether the first element matching sel is displayed.
func shown(sel string) string {
	return `getComputedStyle(document.querySelector('` + sel + `')).display !== 'none'`
}

// TestManagerActionsReloadMatchingTabs: restoring an earlier version, switching off, pausing the
// site and deleting in the manager (real clicks on its forms, in Chromium) reload the open tabs
// the remixlet runs on, so its changes are cleared and the right behaviour comes back; a tab on a
// site the remixlet does not match is never reloaded. The list shows the remixlet's last run.
func TestManagerActionsReloadMatchingTabs(t *testing.T) {
	sites := e2etest.StartSites(t)
	var matchLoads, otherLoads atomic.Int64
	sites.Handle("reload.test", reloadSite(&matchLoads))
	sites.Handle("other.test", reloadSite(&otherLoads))
	p := e2etest.StartProxy(t, sites, e2etest.WithStore())
	st := p.Store
	ctx := context.Background()

	// Version 1 hides the promoted item; version 2, active when the tabs open, the sponsored one.
	rx := saveAndActivate(t, st, "reload test", store.Files{
		sandbox.ManifestFile: []byte(reloadManifest),
		sandbox.ScriptFile:   []byte(hideKeep(".promoted")),
	})
	v1, ok, err := st.Active(ctx, rx.ID)
	if err != nil || !ok {
		t.Fatalf("no active version 1: %v", err)
	}
	v2, err := st.SaveVersion(ctx, rx.ID, store.Files{
		sandbox.ManifestFile: []byte(reloadManifest),
		sandbox.ScriptFile:   []byte(hideKeep(".sponsored")),
	}, store.AuthorPerson, "version 2")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Activate(ctx, v2.ID); err != nil {
		t.Fatal(err)
	}

	browser := e2etest.Browser(t, e2etest.ThroughProxy(p))
	page, other, manager := browser.NewTab(t), browser.NewTab(t), browser.NewTab(t)
	diagnose := func() string {
		return fmt.Sprintf("remixlet log:\n%s\nproxy log tail:\n%s\n%s", remixletLog(t, st, rx.ID), tail(p.Logs(), 3000), page.Diagnose())
	}
	// mark sets a value in the tab's window that a reload clears.
	mark := func(tab *e2etest.Tab) { e2etest.Eval[bool](tab, `(window.__notReloaded = true)`) }
	reloaded := func(tab *e2etest.Tab) bool { return !e2etest.Eval[bool](tab, `window.__notReloaded === true`) }
	// expect waits for the page tab to show the behaviour: which of the two items are shown.
	expect := func(step string, promoted, sponsored bool) {
		t.Helper()
		cond := fmt.Sprintf(`document.querySelector('%s') && (%s) === %v && (%s) === %v`,
			e2etest.ConnectedSelector, shown(".promoted"), promoted, shown(".sponsored"), sponsored)
		if err := waitTrue(page, 15*time.Second, cond); err != nil {
			t.Fatalf("%s: want promoted shown %v, sponsored shown %v: %v\n%s", step, promoted, sponsored, err, diagnose())
		}
	}
	// act clicks a manager form's button on path and waits for the page tab to reload.
	act := func(step, path, button string, fill func()) {
		t.Helper()
		mark(page)
		manager.Navigate("https://remix.proxy" + path)
		if fill != nil {
			fill()
		}
		managerClick(t, manager, button)
		manager.WaitFor(managerWait, step+": the manager's answer", `location.search.includes('m=') && document.readyState === 'complete'`)
		if err := waitTrue(page, 15*time.Second, `window.__notReloaded !== true`); err != nil {
			t.Fatalf("%s: the matching tab was not reloaded: %v\nmanager says: %s\n%s", step, err, manager.BodyText(), diagnose())
		}
	}

	page.Navigate("https://reload.test/")
	page.WaitConnected()
	expect("version 2 running", true, false)
	other.Navigate("https://other.test/")
	other.WaitConnected()
	mark(other)

	// The list shows when and where it last ran.
	manager.Navigate("https://remix.proxy/manager")
	if got := e2etest.Eval[string](manager, `(document.querySelector('tr[data-remixlet="`+rx.ID+`"] .last-run') || {}).textContent || ''`); !strings.Contains(got, "reload.test") {
		t.Errorf("the list's last run for the remixlet is %q, want a time on reload.test\nlist: %s", got, manager.BodyText())
	}

	act("restore version 1", fmt.Sprintf("/manager/r/%s/restore/%d", rx.ID, v1.ID), `form[action*="/restore/"] button[type=submit]`, nil)
	expect("after restoring version 1", false, true)

	act("switch off", "/manager/r/"+rx.ID, `form[action$="/switch"] button[type=submit]`, nil)
	expect("after switching off", true, true)

	act("switch on", "/manager/r/"+rx.ID, `form[action$="/switch"] button[type=submit]`, nil)
	expect("after switching on", false, true)

	act("pause the site", "/manager", `form[action$="/sites/pause"] button[type=submit]`, func() {
		e2etest.Eval[bool](manager, `(document.getElementById('pause-host').value = 'reload.test', true)`)
	})
	expect("after pausing the site", true, true)
	if err := st.ResumeSite(ctx, "reload.test"); err != nil {
		t.Fatal(err)
	}
	page.Reload()
	expect("after resuming the site and reloading", false, true)

	act("delete", "/manager/r/"+rx.ID+"/delete", `form[action$="/delete"] button[type=submit]`, nil)
	expect("after deleting", true, true)
	if n := e2etest.Eval[int](page, `document.querySelectorAll('[data-remixlet-hidden]').length`); n != 0 {
		t.Errorf("after deleting, %d elements still carry the hidden mark", n)
	}

	if reloaded(other) || otherLoads.Load() != 1 {
		t.Errorf("the tab on other.test, which the remixlet does not match, was reloaded (%d loads)", otherLoads.Load())
	}
	// At least one load each: first, restore, off, on, pause, the manual reload, delete (an
	// action that changes the active version asks for the old and the new version's pages).
	if got := matchLoads.Load(); got < 7 {
		t.Errorf("reload.test was loaded %d times, want at least 7 (one per action and the manual reload)", got)
	}
}
