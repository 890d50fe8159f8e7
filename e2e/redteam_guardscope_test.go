package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 6d, OPEN-ITEMS 36: the redirect guard held a remixlet's address against every
// request for it, from any page, for ten minutes: another page of the site that shows the same
// image through the site's redirect lost it. The guard is now for the page that wrote it; the
// remixlet's own copy is still refused.
func TestRedirectGuardLeavesOtherPagesAlone(t *testing.T) {
	const shared = "/redirect?to=https://cdn.test/shared"
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"scope.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/redirect":
				http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			case "/p":
				htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>P</title></head><body><div id="box"></div><p id="done"></p></body></html>`)
			case "/q":
				htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Q</title></head><body><img id="own" src="`+shared+`" alt="the site's own"></body></html>`)
			default:
				w.WriteHeader(http.StatusNoContent)
			}
		}),
		"cdn.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }),
	}, e2etest.WithStore())
	rx := saveUnchecked(t, p.Store, "scope", store.Files{
		sandbox.ManifestFile: guardManifest("scope", "https://scope.test/p"),
		sandbox.ScriptFile: []byte(`await dom.insert(await dom.query('#box'), await dom.create({ tag: 'img', attrs: { src: '` + shared + `', alt: 'x' } }));
await dom.setText(await dom.query('#done'), 'written');
`),
	})
	tab.Navigate("https://scope.test/p")
	tab.WaitConnected()
	if err := waitTrue(tab, 30*time.Second, `document.getElementById('done').textContent === 'written'`); err != nil {
		t.Fatalf("the remixlet did not write: %v\nlog:\n%s", err, remixletLog(t, p.Store, rx.ID))
	}
	for deadline := time.Now().Add(10 * time.Second); sites.Requests("scope.test", "/redirect") == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the remixlet's image never asked for the redirect")
		}
	}
	time.Sleep(time.Second)
	if n := sites.Requests("cdn.test", "/shared"); n != 0 {
		t.Fatalf("BUG: the remixlet's image reached cdn.test through the site's redirect (%d requests)", n)
	}
	// Another page of the site, with its own image through the same redirect, once the page
	// that wrote it is gone (the site the remixlet named, cdn.test, stays out of the origin's
	// reach for a few seconds after: remixlet/namedhosts.go).
	tab.Navigate("about:blank")
	time.Sleep(7 * time.Second)
	tab.Navigate("https://scope.test/q")
	for deadline := time.Now().Add(15 * time.Second); sites.Requests("cdn.test", "/shared") == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the site's own image on another page was refused: the guard held the remixlet's address against every page (%d redirect requests)", sites.Requests("scope.test", "/redirect"))
		}
	}
}
