package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// lateSite streams a page as a slow network would: the head and a first part at once, its
// <h1 id="late"> after ?late= ms (default 800), the rest after ?hold= ms more (default 100); with
// ?cache=1 without no-store, so the back/forward cache may keep it (data-shows counts its
// pageshow events and says "persisted" after a restore).
// The page records, at its own DOMContentLoaded, the classes of <html> and of the heading
// (data-at-dcl, data-late-at-dcl on <html>), and 300 ms after load it adds <div id="added">.
// With ?bounce=URL it goes there itself 300 ms after it started, mid-stream.
func lateSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ms := func(name string, def int) time.Duration {
			if n, err := strconv.Atoi(r.URL.Query().Get(name)); err == nil {
				return time.Duration(n) * time.Millisecond
			}
			return time.Duration(def) * time.Millisecond
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Query().Get("cache") == "" {
			w.Header().Set("Cache-Control", "no-store") // a no-store page is never kept in the back/forward cache
		}
		fl, _ := w.(http.Flusher)
		write := func(s string) {
			fmt.Fprint(w, s)
			if fl != nil {
				fl.Flush()
			}
		}
		bounce := ""
		if to := r.URL.Query().Get("bounce"); to != "" {
			bounce = fmt.Sprintf(`<script>setTimeout(() => location.replace(%q), 300)</script>`, to)
		}
		write(`<!doctype html><html><head><meta charset="utf-8"><title>Late</title>
<script>document.addEventListener('DOMContentLoaded', () => {
  const d = document.documentElement.dataset;
  d.atDcl = document.documentElement.className;
  const late = document.getElementById('late');
  d.lateAtDcl = late ? late.className : 'missing';
});
addEventListener('pageshow', (e) => { document.documentElement.dataset.shows = (+(document.documentElement.dataset.shows || 0) + 1) + (e.persisted ? ' persisted' : ''); });
addEventListener('load', () => setTimeout(() => {
  const el = document.createElement('div');
  el.id = 'added';
  el.textContent = 'added by the page after load';
  document.body.appendChild(el);
}, 300));</script>` + bounce + `
</head><body><p>The first part of the page.</p>` + strings.Repeat("<p>Filler text of the first part.</p>\n", 60))
		time.Sleep(ms("late", 800))
		write(`<h1 id="late">A heading that arrives late</h1>`)
		time.Sleep(ms("hold", 100))
		write(`<p>The rest of the page.</p></body></html>`)
	})
}

// runAtManifest is a manifest for late.test with run_at (none when "").
func runAtManifest(name, runAt string) []byte {
	field := ""
	if runAt != "" {
		field = fmt.Sprintf(`, "run_at": %q`, runAt)
	}
	return []byte(fmt.Sprintf(`{"name": %q, "description": "e2e", "api": 1, "matches": ["https://late.test/*"], "permissions": []%s}`, name, field))
}

// countLog counts the remixlet's log lines containing want.
func countLog(t *testing.T, st *store.Store, id, want string) int {
	t.Helper()
	return strings.Count(remixletLog(t, st, id), want)
}

// TestRemixletDefaultRunTimeActsOnALateHeading: a script with the default run time hides an
// <h1> that the network delivers late, on every load (before run_at it started when the page
// agent connected, found no heading and did nothing); a page abandoned mid-stream starts
// nothing, and the one it went to does.
func TestRemixletDefaultRunTimeActsOnALateHeading(t *testing.T) {
	sites := e2etest.StartSites(t)
	sites.Handle("late.test", lateSite())
	p := e2etest.StartProxy(t, sites, e2etest.WithStore())
	st := p.Store
	rx := saveAndActivate(t, st, "hide the heading", store.Files{
		sandbox.ManifestFile: runAtManifest("hide the heading", ""),
		sandbox.ScriptFile: []byte(`const h = await dom.query("h1");
if (h === null) { rmx.log("no h1 yet"); } else { await dom.hide(h); rmx.log("hid the h1"); }`),
	})
	tab := e2etest.Browser(t, e2etest.ThroughProxy(p)).NewTab(t)
	diagnose := func() string {
		return fmt.Sprintf("remixlet log:\n%s\nproxy log tail:\n%s\n%s", remixletLog(t, st, rx.ID), tail(p.Logs(), 3000), tab.Diagnose())
	}
	const loads = 5
	for i := range loads {
		tab.Navigate(fmt.Sprintf("https://late.test/?n=%d", i))
		if err := waitTrue(tab, 10*time.Second, `getComputedStyle(document.getElementById('late')).display === 'none'`); err != nil {
			t.Fatalf("load %d: the late heading was not hidden: %v\n%s", i+1, err, diagnose())
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s\n%s", what, diagnose())
			}
		}
	}
	waitFor("the log does not say it hid the heading on every load", func() bool { return countLog(t, st, rx.ID, "hid the h1") == loads })
	if n := countLog(t, st, rx.ID, "no h1 yet"); n != 0 {
		t.Fatalf("the script ran before the heading was parsed on %d of %d loads\n%s", n, loads, diagnose())
	}

	// A page that leaves mid-stream, before DOMContentLoaded: its script never started; the page
	// it went to runs it.
	tab.NavigateErr("https://late.test/?late=3000&bounce=" + "https://late.test/%3Fn%3Dafter")
	if err := waitTrue(tab, 15*time.Second, `location.search === '?n=after' && getComputedStyle(document.getElementById('late')).display === 'none'`); err != nil {
		t.Fatalf("after a page left mid-stream, the next page's heading was not hidden: %v\n%s", err, diagnose())
	}
	waitFor("the log does not say it hid the heading after the bounce", func() bool { return countLog(t, st, rx.ID, "hid the h1") == loads+1 })
	if n := countLog(t, st, rx.ID, "no h1 yet"); n != 0 {
		t.Fatalf("the abandoned page started the script before it was parsed\n%s", diagnose())
	}

	// A page restored from the back/forward cache reconnects, complete: its script runs again at
	// once (the heading is hidden already; it says so again).
	first := "https://late.test/?n=bf&cache=1&late=0"
	tab.Navigate(first)
	waitFor("the heading of the cacheable page was not hidden", func() bool { return countLog(t, st, rx.ID, "hid the h1") == loads+2 })
	tab.Navigate("https://late.test/?n=next&cache=1&late=0")
	waitFor("the heading of the next page was not hidden", func() bool { return countLog(t, st, rx.ID, "hid the h1") == loads+3 })
	e2etest.Eval[bool](tab, `history.back(), true`)
	if err := waitTrue(tab, 10*time.Second, `location.href === '`+first+`' && document.documentElement.dataset.shows === '2 persisted'`); err != nil {
		t.Fatalf("going back did not restore the page from the back/forward cache: %v (shows: %q)\n%s", err,
			e2etest.Eval[string](tab, `document.documentElement.dataset.shows || ''`), diagnose())
	}
	waitFor("the script did not run again on the page restored from the back/forward cache", func() bool { return countLog(t, st, rx.ID, "hid the h1") == loads+4 })
	if n := countLog(t, st, rx.ID, "no h1 yet"); n != 0 {
		t.Fatalf("a script ran before its page was parsed\n%s", diagnose())
	}
}

// TestRemixletDocumentStartAndWaitFor: a document_start script runs before DOMContentLoaded,
// dom.waitFor finds the heading while the page is still being parsed and an element the page adds
// after load, and a dom.waitFor for something that never comes rejects with a clear error.
func TestRemixletDocumentStartAndWaitFor(t *testing.T) {
	sites := e2etest.StartSites(t)
	sites.Handle("late.test", lateSite())
	p := e2etest.StartProxy(t, sites, e2etest.WithStore())
	st := p.Store
	rx := saveAndActivate(t, st, "early", store.Files{
		sandbox.ManifestFile: runAtManifest("early", "document_start"),
		sandbox.ScriptFile: []byte(`await dom.addClass(await dom.query("html"), "rx-start");
const late = await dom.waitFor("#late", { timeout: 20000 });
await dom.addClass(late, "rx-found");
const added = await dom.waitFor("#added", { timeout: 20000 });
await dom.hide(added);
rmx.log("hid #added");
try {
  await dom.waitFor("#never", { timeout: 300 });
  rmx.log("found #never");
} catch (e) {
  rmx.log("waitFor #never: " + e.message);
}
rmx.log("done");`),
	})
	tab := e2etest.Browser(t, e2etest.ThroughProxy(p)).NewTab(t)
	diagnose := func() string {
		return fmt.Sprintf("remixlet log:\n%s\nproxy log tail:\n%s\n%s", remixletLog(t, st, rx.ID), tail(p.Logs(), 3000), tab.Diagnose())
	}
	// The heading arrives 800 ms in; the document ends 2 s after it.
	tab.Navigate("https://late.test/?hold=2000")
	if err := waitTrue(tab, 10*time.Second, `document.documentElement.dataset.atDcl !== undefined`); err != nil {
		t.Fatalf("the page did not record its DOMContentLoaded: %v\n%s", err, diagnose())
	}
	if got := e2etest.Eval[string](tab, `document.documentElement.dataset.atDcl`); !strings.Contains(got, "rx-start") {
		t.Errorf("at DOMContentLoaded <html> had classes %q: the document_start script had not run\n%s", got, diagnose())
	}
	if got := e2etest.Eval[string](tab, `document.documentElement.dataset.lateAtDcl`); !strings.Contains(got, "rx-found") {
		t.Errorf("at DOMContentLoaded the late heading had classes %q: dom.waitFor had not found it while the page was parsed\n%s", got, diagnose())
	}
	if err := waitTrue(tab, 10*time.Second, `getComputedStyle(document.getElementById('added')).display === 'none'`); err != nil {
		t.Fatalf("the element the page added after load was not hidden: %v\n%s", err, diagnose())
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(remixletLog(t, st, rx.ID), "done"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the script did not finish\n%s", diagnose())
		}
	}
	log := remixletLog(t, st, rx.ID)
	if !strings.Contains(log, `waitFor #never: `) || !strings.Contains(log, `no element matched "#never" within 300 ms`) {
		t.Errorf("the timed-out dom.waitFor did not reject with a clear error:\n%s", log)
	}
	if strings.Contains(log, "found #never") {
		t.Errorf("dom.waitFor resolved for an element that never came:\n%s", log)
	}
}
