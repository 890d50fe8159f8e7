package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// init makes this test binary the sandbox host when a proxy with a store starts it the way it
// starts the remixproxy binary (os.Executable() "sandbox-host"), instead of running the tests
// again in the child.
func init() {
	if len(os.Args) == 2 && os.Args[1] == "sandbox-host" {
		os.Exit(sandbox.HostMain())
	}
}

// feedSite is a page that redraws its list every 100 ms, as a live feed does: every redraw
// replaces every item, and every third item is promoted. Before each redraw it counts the
// promoted items still visible from the previous one (data-missed) and the redraws whose
// promoted items had all been hidden (data-held), so a test can tell that a remixlet kept them
// hidden between redraws without racing the redraw itself.
func feedSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Feed</title></head>
<body><h1>Feed</h1><ul id="feed"></ul>
<script>
let renders = 0, held = 0, missed = 0;
function visiblePromoted() {
  return [...document.querySelectorAll('#feed .promoted')].filter((e) => getComputedStyle(e).display !== 'none').length;
}
function render() {
  if (renders > 0) {
    if (visiblePromoted() === 0) held++; else missed++;
  }
  renders++;
  const ul = document.getElementById('feed');
  ul.textContent = '';
  for (let i = 0; i < 9; i++) {
    const li = document.createElement('li');
    li.textContent = 'post ' + i + ' of redraw ' + renders;
    if (i % 3 === 0) li.className = 'promoted';
    ul.appendChild(li);
  }
  document.body.dataset.renders = renders;
  document.body.dataset.at = performance.now();
  document.body.dataset.held = held;
  document.body.dataset.missed = missed;
}
render();
// The feed redraws every 100 ms until a test stops it (stopRedraws) to redraw by hand (redraw).
const timer = setInterval(render, 100);
window.stopRedraws = () => clearInterval(timer);
window.redraw = render;
document.body.dataset.pageScript = 'ran';
</script></body></html>`)
	})
}

const hidePromotedManifest = `{
  "name": "hide promoted",
  "description": "Hides promoted posts and keeps them hidden while the feed redraws.",
  "api": 1,
  "matches": ["https://feed.test/*"],
  "permissions": []
}`

const hidePromotedScript = `rmx.keep('hide promoted', {
  check: async () => (await dom.queryAll('.promoted:not([data-remixlet-hidden])')).length === 0,
  repair: async () => { for (const h of await dom.queryAll('.promoted:not([data-remixlet-hidden])')) await dom.hide(h); },
});
`

// saveAndActivate saves files as a new remixlet and activates it the way the CLI does, approving
// what needs approval.
func saveAndActivate(t *testing.T, st *store.Store, name string, files store.Files) store.Remixlet {
	t.Helper()
	if _, problems := sandbox.CheckFiles(files); len(problems) > 0 {
		t.Fatalf("the test remixlet does not pass the save-time checks: %v", problems)
	}
	return saveUnchecked(t, st, name, files)
}

// visiblePromoted counts the promoted items shown now.
const visiblePromoted = `[...document.querySelectorAll('#feed .promoted')].filter((e) => getComputedStyle(e).display !== 'none').length`

// feedCounters reads the page's redraw counters.
func feedCounters(tab *e2etest.Tab) (renders, held, missed int) {
	m := e2etest.Eval[map[string]string](tab, `({...document.body.dataset})`)
	fmt.Sscan(m["renders"], &renders)
	fmt.Sscan(m["held"], &held)
	fmt.Sscan(m["missed"], &missed)
	return
}

func remixletLog(t *testing.T, st *store.Store, id string) string {
	entries, err := st.Log(context.Background(), id, 30)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for i := len(entries) - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "  %s %s\n", entries[i].Level, entries[i].Message)
	}
	return b.String()
}

func TestRemixletKeepsPromotedHiddenWhileTheSiteRedraws(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"feed.test": feedSite()}, e2etest.WithStore())
	st := p.Store
	rx := saveAndActivate(t, st, "hide promoted", store.Files{
		sandbox.ManifestFile: []byte(hidePromotedManifest),
		sandbox.ScriptFile:   []byte(hidePromotedScript),
	})
	diagnose := func() string {
		return fmt.Sprintf("remixlet log:\n%s\nproxy log tail:\n%s\n%s", remixletLog(t, st, rx.ID), tail(p.Logs(), 3000), tab.Diagnose())
	}

	tab.Navigate("https://feed.test/")
	tab.WaitConnected()
	if err := waitTrue(tab, 10*time.Second, visiblePromoted+` === 0 && document.querySelectorAll('#feed .promoted').length === 3`); err != nil {
		t.Fatalf("the promoted items were not hidden: %v\n%s", err, diagnose())
	}
	if n := e2etest.Eval[int](tab, `document.querySelectorAll('#feed li:not(.promoted)').length`); n != 6 {
		t.Errorf("%d other items visible, want 6 (the remixlet hid too much?)", n)
	}

	// The site keeps redrawing; the promoted items stay hidden across redraws. The page itself
	// counts, just before each redraw, whether the previous redraw's promoted items had been
	// hidden. How fast a repair comes is a benchmark (e2e/benchremixlet, keep repair), never an
	// assertion here: on a loaded machine a repair may miss the next redraw 100 ms later, so
	// while the site churns the test asks only that the keep held some redraws (a keep that does
	// not work holds none). Then the redraws stop and every redraw by hand must be repaired,
	// however long the machine takes (within a generous bound).
	r0, h0, _ := feedCounters(tab)
	time.Sleep(1500 * time.Millisecond)
	r1, h1, m1 := feedCounters(tab)
	if r1-r0 < 5 {
		t.Fatalf("the site redrew %d times in 1.5 s, want at least 5 (is its script running?)", r1-r0)
	}
	if h1 == h0 {
		t.Errorf("none of the last %d redraws had its promoted items hidden before the next (missed: %d)\n%s", r1-r0, m1, diagnose())
	}
	e2etest.Eval[bool](tab, `(stopRedraws(), true)`)
	hiddenNow := func(what string) {
		t.Helper()
		cond := visiblePromoted + ` === 0 && document.querySelectorAll('#feed .promoted').length === 3 && document.body.dataset.renders === document.querySelector('#feed li').textContent.split(' ').pop()`
		if err := waitTrue(tab, 10*time.Second, cond); err != nil {
			t.Fatalf("%s: the promoted items were not hidden: %v\n%s", what, err, diagnose())
		}
	}
	hiddenNow("the last redraw of the churn")
	for i := 0; i < 3; i++ {
		e2etest.Eval[bool](tab, `(redraw(), true)`)
		hiddenNow(fmt.Sprintf("redraw %d by hand", i+1))
	}
	mark := "data-remixlet-" + strings.TrimPrefix(rx.ID, "rx_")[:8]
	if err := waitTrue(tab, 2*time.Second, `((e) => e && e.getAttribute('`+mark+`') === '')(document.querySelector('#feed .promoted[data-remixlet-hidden]'))`); err != nil {
		t.Errorf("the hidden items do not carry the remixlet's mark %s: %v", mark, err)
	}

	// Pausing the site stops the remixlet at once, while its sandbox still runs (its keeps are
	// no longer woken and any call it makes is refused, checked in Go): the next redraws stay
	// visible, and its log says why. After a reload, nothing runs.
	if err := st.PauseSite(context.Background(), "feed.test"); err != nil {
		t.Fatal(err)
	}
	e2etest.Eval[bool](tab, `(setInterval(redraw, 100), true)`)
	if err := waitTrue(tab, 5*time.Second, visiblePromoted+` === 3`); err != nil {
		t.Fatalf("after pausing the site, the promoted items of new redraws were still hidden: %v\n%s", err, diagnose())
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		log := remixletLog(t, st, rx.ID)
		if strings.Contains(log, "remixlets are paused on feed.test") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the remixlet's log does not say its calls were refused on a paused site:\n%s\nproxy log tail:\n%s", log, tail(p.Logs(), 3000))
			break
		}
	}
	tab.Reload()
	tab.WaitConnected()
	time.Sleep(500 * time.Millisecond)
	if n := e2etest.Eval[int](tab, visiblePromoted); n != 3 {
		t.Errorf("after a reload on the paused site, %d promoted items visible, want 3\n%s", n, diagnose())
	}
	if n := e2etest.Eval[int](tab, `document.querySelectorAll('[data-remixlet-hidden]').length`); n != 0 {
		t.Errorf("after a reload on the paused site, %d elements carry the hidden mark", n)
	}
}

// waitTrue polls cond in tab until it is true, for at most d.
func waitTrue(tab *e2etest.Tab, d time.Duration, cond string) error {
	deadline := time.Now().Add(d)
	for {
		ok, err := e2etest.EvalE[bool](tab, "!!("+cond+")")
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not true after %v (last error: %v)", cond, d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
