package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// swSite is an offline-first site: /page.html registers /sw.js, which caches /page.html at
// install and then serves it cache-first, so reloads never reach the network (or the proxy).
func swSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Offline first</title></head><body>
<p>A page a service worker serves from its cache.</p>
<script>
document.body.dataset.pageScript = 'ran';
navigator.serviceWorker.register('/sw.js');
</script>
</body></html>
`)
	})
	mux.HandleFunc("/sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, `
self.addEventListener('install', (e) => {
  e.waitUntil(caches.open('v1').then((c) => c.addAll(['/page.html'])).then(() => self.skipWaiting()));
});
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  e.respondWith(caches.match(e.request).then((r) => r || fetch(e.request)));
});
`)
	})
	return mux
}

func TestServiceWorkerCachedPage(t *testing.T) {
	const url = "https://sw.test/page.html"
	sites := world.Sites(t)
	for _, mode := range []string{"direct", "proxied"} {
		t.Run(mode, func(t *testing.T) {
			proxied := mode == "proxied"
			var tab *e2etest.Tab
			if proxied {
				tab = world.ProxiedTab(t)
			} else {
				tab = world.DirectTab(t)
			}
			loadPage(t, tab, url, proxied)
			tab.WaitFor(15*time.Second, "the service worker to control the page",
				`navigator.serviceWorker.controller !== null`)
			before := sites.Requests("sw.test", "/page.html")

			resp := tab.Navigate(url)
			var connectErr error
			if proxied {
				connectErr = tab.WaitConnectedErr(e2etest.ConnectedTimeout)
			}
			if n := sites.Requests("sw.test", "/page.html") - before; n != 0 {
				t.Errorf("the reload reached the site %d times; want it served from the service worker's cache", n)
			}
			if !resp.FromServiceWorker {
				t.Errorf("the reloaded document did not come from the service worker")
			}
			if !e2etest.Eval[bool](tab, pageScriptRan) {
				t.Errorf("the page's own script did not run after the reload")
			}
			if connectErr != nil {
				t.Errorf("on the page served from the cache: %v", connectErr)
			}
			if ps := tab.Problems(); len(ps) > 0 {
				t.Errorf("problems after the reload:\n%s", joinProblems(ps))
			}
		})
	}
}
