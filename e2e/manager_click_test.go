package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// managerClick clicks sel on a manager page as a person does: the window has the focus
// (DevTools focus emulation: a headless window has none), the page has armed its buttons
// (panel/static/manager_arm.js: the focus for a moment, then a pointer move), the pointer
// moves onto the button, then the click.
func managerClick(t *testing.T, tab *e2etest.Tab, sel string) {
	t.Helper()
	focusTab(t, tab)
	tab.WaitFor(10*time.Second, "the manager page to arm", `document.documentElement.dataset.armed === 'move' || document.documentElement.dataset.armed === 'true'`)
	var x, y float64
	fmt.Sscan(e2etest.Eval[string](tab, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.scrollIntoView({block: 'center'}); const b = e.getBoundingClientRect(); return (b.left + b.width / 2) + ' ' + (b.top + b.height / 2); })()`, sel)), &x, &y)
	ctx, cancel := context.WithTimeout(tab.Context(), cdpTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.MouseEvent(chromedp.MouseMoved, x-4, y-3), chromedp.MouseEvent(chromedp.MouseMoved, x, y)); err != nil {
		t.Fatalf("moving the pointer onto %s: %v", sel, err)
	}
	tab.WaitFor(10*time.Second, "the manager page's buttons to arm", `document.documentElement.dataset.armed === 'true'`)
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y)); err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
}

// focusTab gives tab's window the focus, as the window a person looks at has it.
func focusTab(t *testing.T, tab *e2etest.Tab) {
	t.Helper()
	cdpCall(t, tab, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
}
