package e2e

import (
	"net/http"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// TestLauncherOnAPageThatNeverLoads: the launcher mounts after the load event (so that neither
// DOMContentLoaded nor load waits for it); on a page whose load never comes (an image that never
// arrives) it still shows and connects, a second after DOMContentLoaded.
func TestLauncherOnAPageThatNeverLoads(t *testing.T) {
	hang := make(chan struct{})
	site := http.NewServeMux()
	site.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Start</title></head><body><p>start</p></body></html>`)
	})
	site.HandleFunc("/hanging", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Hanging</title></head><body>
<h1>An image that never arrives</h1><img src="/never.png" alt="never"></body></html>`)
	})
	site.HandleFunc("/never.png", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"hang.test": site})
	t.Cleanup(func() { close(hang) })

	tab.Navigate("https://hang.test/")
	tab.WaitConnected()
	// Navigate waits for a load event, which /hanging never fires: go there from the page.
	e2etest.Eval[any](tab, `location.href = '/hanging'`)
	tab.WaitFor(e2etest.ConnectedTimeout, "the hanging page", `location.pathname === '/hanging' && document.readyState !== 'loading'`)
	tab.WaitConnected()
	if got := e2etest.Eval[string](tab, `location.pathname + ' ' + document.readyState`); got != "/hanging interactive" {
		t.Fatalf("page is %q, want /hanging still loading its image (interactive): the case proves nothing", got)
	}
}
