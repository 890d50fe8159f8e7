package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// TestFetchedCopyStaysOutOfNavigations: a page fetches another page of its site (as pjax, Turbo
// and hover prefetchers do, with fetch or <link rel=prefetch>); the copy, cacheable and not injected (it is not a navigation), must
// not be what the browser's HTTP cache gives the navigation to that page afterwards: there the
// page agent runs, on https and on http.
func TestFetchedCopyStaysOutOfNavigations(t *testing.T) {
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"token.test": tokenSite{}})
	for _, scheme := range []string{"https", "http"} {
		t.Run(scheme, func(t *testing.T) {
			tab.Navigate(scheme + "://token.test/from")
			tab.WaitConnected()
			next := scheme + "://token.test/next"
			got, err := e2etest.EvalE[string](tab, `fetch(`+jsString(next)+`).then((r) => r.text()).then((t) => t.includes('data-remix' + 'proxy=') ? 'injected' : 'plain')`)
			if err != nil || got != "plain" {
				t.Fatalf("the page's fetch of %s: %q %v, want a plain copy", next, got, err)
			}
			tab.Navigate(next)
			if err := tab.WaitConnectedErr(10 * time.Second); err != nil {
				t.Fatalf("the navigation to %s after the page fetched it has no page agent: %v\n%s", next, err, tab.Diagnose())
			}

			// The same with <link rel=prefetch>, whose answer Chromium keeps for the navigation.
			later := scheme + "://token.test/later"
			e2etest.Eval[bool](tab, `(() => { const l = document.createElement('link'); l.rel = 'prefetch'; l.href = `+jsString(later)+`; document.head.appendChild(l); return true; })()`)
			time.Sleep(500 * time.Millisecond)
			tab.Navigate(later)
			if err := tab.WaitConnectedErr(10 * time.Second); err != nil {
				t.Fatalf("the navigation to %s after the page prefetched it has no page agent: %v\n%s", later, err, tab.Diagnose())
			}
		})
	}
}

// TestSamePageInTwoWindows: a cacheable page (max-age, validators) open in one window, opened
// again in a second (window.open from a click: the same browser cache): each gets its own
// page agent, and the first keeps its own. Without cacheForHistoryOnly (proxy/html.go) the
// browser answered the second navigation with the first document and its token, and one token
// opens one session.
func TestSamePageInTwoWindows(t *testing.T) {
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"token.test": tokenSite{}})
	for _, scheme := range []string{"https", "http"} {
		t.Run(scheme, func(t *testing.T) {
			tab.Navigate(scheme + "://token.test/same")
			tab.WaitConnected()
			e2etest.Eval[bool](tab, `(() => { const b = document.createElement('button'); b.id = 'again'; b.textContent = 'again';
				b.style = 'display:block;width:200px;height:60px'; b.onclick = () => { window.again = window.open(location.href); };
				document.body.prepend(b); return true; })()`)
			if _, err := chromedp.Run(tab.Context(), chromedp.Click("#again", chromedp.NodeVisible)); err != nil {
				t.Fatal(err)
			}
			state := `(() => { try { const l = window.again && window.again.document.querySelector('[data-remixproxy-launcher]');
				return l ? l.getAttribute('data-remixproxy-state') : 'no launcher yet'; } catch (e) { return 'error ' + e; } })()`
			deadline := time.Now().Add(10 * time.Second)
			for e2etest.Eval[string](tab, state) != "connected" {
				if time.Now().After(deadline) {
					t.Fatalf("the second window's page agent: %s (title %q)", e2etest.Eval[string](tab, state),
						e2etest.Eval[string](tab, `(() => { try { return window.again.document.querySelector('[data-remixproxy-launcher]') ? 'launcher' : ''; } catch (e) { return ''; } })()`))
				}
				time.Sleep(100 * time.Millisecond)
			}
			if !tab.Connected() {
				t.Errorf("the first window's page agent lost its connection when the second opened")
			}
			e2etest.Eval[bool](tab, `(window.again.close(), true)`)
		})
	}
}
