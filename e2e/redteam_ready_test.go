package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// readySite serves / with two deferred scripts: the first dispatches a DOMContentLoaded of its
// own (readyState is already 'interactive' while deferred scripts run), the second arrives two
// seconds late and marks the page; the real DOMContentLoaded comes after it.
func readySite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Ready</title>
<script defer src="/a.js"></script><script defer src="/b.js"></script></head>
<body><h1>Ready</h1></body></html>`)
		case "/a.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `window.dispatchEvent(new Event('DOMContentLoaded')); document.dispatchEvent(new Event('DOMContentLoaded', { bubbles: true }));`)
		case "/b.js":
			time.Sleep(2 * time.Second)
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `document.documentElement.dataset.b = 'ran';`)
		default:
			http.NotFound(w, r)
		}
	})
}

// TestRedteamSyntheticReadinessEventsStartNothing: a page's own DOMContentLoaded, dispatched by
// a deferred script while readyState already says 'interactive', does not start a document_end
// remixlet early (OPEN-ITEMS 9): it runs after the real one, when every deferred script has run.
func TestRedteamSyntheticReadinessEventsStartNothing(t *testing.T) {
	sites := e2etest.StartSites(t)
	sites.Handle("ready.test", readySite())
	p := e2etest.StartProxy(t, sites, e2etest.WithStore())
	st := p.Store
	rx := saveAndActivate(t, st, "document end", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "document end", "description": "e2e", "api": 1, "matches": ["https://ready.test/*"], "permissions": [], "run_at": "document_end"}`),
		sandbox.ScriptFile:   []byte(`const b = await dom.attr(await dom.query('html'), 'data-b'); rmx.log(b === 'ran' ? 'ran after b' : 'ran before b');`),
	})
	tab := e2etest.Browser(t, e2etest.ThroughProxy(p)).NewTab(t)
	tab.Navigate("https://ready.test/")
	for deadline := time.Now().Add(15 * time.Second); countLog(t, st, rx.ID, "ran ") == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the remixlet never ran\n%s\n%s", remixletLog(t, st, rx.ID), tail(p.Logs(), 2000))
		}
	}
	if n := countLog(t, st, rx.ID, "ran before b"); n != 0 {
		t.Errorf("a document_end remixlet started at the page's own DOMContentLoaded, before its deferred scripts had run:\n%s", remixletLog(t, st, rx.ID))
	}
}
