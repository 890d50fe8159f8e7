package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// A remixlet stopped on a page by an SPA navigation out of its matches is released there: its
// stylesheet (what dom.addStyle added too) is emptied and its dom.on listeners removed, so when
// it starts again after a navigation back in, one click is one event — not one for the new
// listener and one for the old listener that happens to have the same number.

func spaSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>SPA</title></head>
<body><button id="b" type="button">button</button><p id="st"></p>
<script>window.go = (path) => history.pushState({}, '', path);</script>
</body></html>`)
	})
}

const releaseScript = `const b = await dom.query('#b');
await dom.addStyle('#b { color: rgb(1, 2, 3) }');
await dom.on(b, 'click', () => rmx.log('clicked'));
await dom.setText(await dom.query('#st'), 'ready ' + (await rmx.page()).url);
`

func TestRemixletReleasedOnSPANavigation(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"spa.test": spaSite()}, e2etest.WithStore())
	st := p.Store
	rx := saveAndActivate(t, st, "release", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "release", "description": "Counts clicks.", "api": 1, "matches": ["https://spa.test/app*"], "permissions": []}`),
		sandbox.ScriptFile:   []byte(releaseScript),
	})
	clicks := func() int { return strings.Count(remixletLog(t, st, rx.ID), "info clicked") }
	click := func() {
		ctx, cancel := context.WithTimeout(tab.Context(), 10*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#b"))); err != nil {
			t.Fatalf("clicking: %v", err)
		}
	}
	waitClicks := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); clicks() < want; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d clicks logged, want %d:\n%s", clicks(), want, remixletLog(t, st, rx.ID))
			}
		}
		time.Sleep(300 * time.Millisecond) // a second delivery would arrive by now
		if n := clicks(); n != want {
			t.Errorf("%d clicks logged, want %d (a listener of the stopped run still delivers?):\n%s", n, want, remixletLog(t, st, rx.ID))
		}
	}
	const styled = `getComputedStyle(document.getElementById('b')).color === 'rgb(1, 2, 3)'`

	tab.Navigate("https://spa.test/app")
	tab.WaitConnected()
	if err := waitTrue(tab, 10*time.Second, `document.getElementById('st').textContent === 'ready https://spa.test/app' && `+styled); err != nil {
		t.Fatalf("the remixlet did not start: %v\n%s", err, remixletLog(t, st, rx.ID))
	}
	click()
	waitClicks(1)

	// Out of the matches: released, the added style is gone.
	e2etest.Eval[bool](tab, `(go('/other'), true)`)
	if err := waitTrue(tab, 5*time.Second, `!(`+styled+`) && document.adoptedStyleSheets.every((s) => s.cssRules.length === 0)`); err != nil {
		t.Errorf("after navigating out, the remixlet's stylesheet was not emptied: %v", err)
	}
	click()
	time.Sleep(300 * time.Millisecond)
	if n := clicks(); n != 1 {
		t.Errorf("after navigating out, a click was logged (%d)", n)
	}

	// Back in: started again; one click is one event.
	e2etest.Eval[bool](tab, `(go('/app2'), true)`)
	if err := waitTrue(tab, 10*time.Second, `document.getElementById('st').textContent === 'ready https://spa.test/app2' && `+styled); err != nil {
		t.Fatalf("the remixlet did not start again: %v\n%s", err, remixletLog(t, st, rx.ID))
	}
	click()
	waitClicks(2)
}
