package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// launcherHostileCSS aims every property that could hide, move, shrink or disable the
// launcher's host at it (by tag, by position among <html>'s children and by its attribute),
// with !important, and sets on <html> what the launcher's shadow tree would inherit.
const launcherHostileCSS = `
div, html > :last-child, [data-remixproxy-launcher] {
  display: none !important; position: static !important; inset: -5000px !important;
  opacity: 0 !important; visibility: hidden !important; filter: opacity(0) !important;
  transform: translate(-5000px, -5000px) scale(0) !important; translate: 5000px !important;
  scale: 0 !important; rotate: 90deg !important; clip-path: inset(50%) !important;
  mask: linear-gradient(transparent, transparent) !important; zoom: 0.01 !important;
  pointer-events: none !important; width: 1px !important; height: 1px !important;
  margin: -9999px !important; padding: 50px !important; border: 30px solid red !important;
  overflow: hidden !important; contain: strict !important; content-visibility: hidden !important;
  z-index: -1 !important; float: left !important; mix-blend-mode: difference !important;
  animation: none !important; transition: all 10s !important; perspective: 1px !important;
  backdrop-filter: blur(9px) !important; clip: rect(0 0 0 0) !important;
}
html { writing-mode: vertical-rl; direction: rtl; letter-spacing: 40px; text-transform: uppercase;
  font-size: 2px; line-height: 0; cursor: none; visibility: visible; user-select: none;
  text-indent: -9999px; white-space: pre; word-spacing: 50px; }
`

// TestLauncherWithstandsPageCSS: a page whose stylesheet aims at the launcher's host every
// property that could hide, move, shrink or disable it, and sets on <html> what its shadow tree
// would inherit, still shows the launcher's button in the bottom-right corner where a person's
// click reaches it, and that click opens the panel.
func TestLauncherWithstandsPageCSS(t *testing.T) {
	site := http.NewServeMux()
	site.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Hostile CSS</title>
<style>`+launcherHostileCSS+`</style></head><body><p>A page that styles every element it can reach.</p></body></html>`)
	})
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"hostilecss.test": site})
	tab.Navigate("https://hostilecss.test/")
	tab.WaitConnected()

	x, y := launcherButtonCenter(t, tab) // fails unless the button has a box in the bottom-right corner
	w := e2etest.Eval[float64](tab, `innerWidth`)
	h := e2etest.Eval[float64](tab, `innerHeight`)
	// The button is 44 px, 16 px from the viewport's right and bottom edges (launcher.js).
	if dx, dy := w-x, h-y; dx < 30 || dx > 46 || dy < 30 || dy > 46 {
		t.Errorf("the launcher button's centre is %v px from the right and %v px from the bottom, want 38 (44 px, 16 px from the edges): the page's CSS moved or resized it", dx, dy)
	}
	if !e2etest.Eval[bool](tab, fmt.Sprintf(`document.elementFromPoint(%v, %v) === document.querySelector('%s')`, x, y, e2etest.LauncherSelector)) {
		desc := e2etest.Eval[string](tab, fmt.Sprintf(`(() => { const e = document.elementFromPoint(%v, %v); return e ? e.outerHTML.slice(0, 200) : 'nothing'; })()`, x, y))
		t.Fatalf("the launcher button's centre (%v, %v) hits %s, not the launcher: the page's CSS hid it or made it inert", x, y, desc)
	}
	clickAt(t, tab, x, y)
	waitPanelFrame(t, tab)
}
