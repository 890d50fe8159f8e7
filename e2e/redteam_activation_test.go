package e2e

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// What the client-redirect guard's borrowed activation (remixlet/clientredirect.go,
// activationBorrowed) rests on, measured in this Chromium: which navigations of a document that
// the person's click just opened carry Sec-Fetch-User ?1. The person clicks a link that opens
// a top-level document, or one that loads a frame; that document's script navigates (at once,
// or 0.5 s later) to the witness, which records the header. A frame's script that sets
// top.location borrows the click's activation (the guard must not take its ?1 for the
// person's); the question the test answers is whether a new top-level document's own script
// does too — it does not (measured in Chromium 156: none of the four script navigations
// carried ?1, the frame's included; the person's own click did), so ?1 on a top-level
// document's navigation is the person's own click in it, and the guard lets those go from the
// first moment. Frames keep the window (the ninth session once measured a frame borrowing it).

const activationStart = `<!doctype html><html><head><meta charset="utf-8"><title>Start</title></head><body>
<p><a id="top0" href="/fwd?d=0&to=https://witness.test/top-0">top, at once</a></p>
<p><a id="top500" href="/fwd?d=500&to=https://witness.test/top-500">top, after 0.5 s</a></p>
<p><a id="stay" href="/stay">a page with a link elsewhere</a></p>
<p><a id="frame0" target="f" href="/fwdtop?d=0&to=https://witness.test/frame-0">frame, at once</a></p>
<p><a id="frame500" target="f" href="/fwdtop?d=500&to=https://witness.test/frame-500">frame, after 0.5 s</a></p>
<iframe name="f" src="/blank" width="300" height="100"></iframe></body></html>`

func activationSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const goScript = `<script>const q = new URLSearchParams(location.search);
const go = () => { %s = q.get('to'); };
if (q.get('d') === '0') go(); else setTimeout(go, Number(q.get('d')));</script>`
		switch r.URL.Path {
		case "/start":
			htmlPage(w, activationStart)
		case "/fwd":
			htmlPage(w, `<!doctype html><html><body><p>Leaving…</p>`+strings.Replace(goScript, "%s", "location.href", 1)+`</body></html>`)
		case "/fwdtop":
			htmlPage(w, `<!doctype html><html><body><p>Leaving…</p>`+strings.Replace(goScript, "%s", "top.location.href", 1)+`</body></html>`)
		case "/stay":
			htmlPage(w, `<!doctype html><html><body><p><a id="ext" href="https://witness.test/top-person">elsewhere</a></p></body></html>`)
		default:
			htmlPage(w, `<!doctype html><html><body></body></html>`)
		}
	})
}

func TestActivationOfAnOpenedDocument(t *testing.T) {
	var mu sync.Mutex
	user := map[string]string{} // witness path → Sec-Fetch-User
	sites, _, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"act.test": activationSite(),
		"witness.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			user[r.URL.Path] = r.Header.Get("Sec-Fetch-User")
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent) // the tab stays where it was
		}),
	})
	arrived := func(path string) (string, bool) {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if sites.Requests("witness.test", path) > 0 {
				mu.Lock()
				defer mu.Unlock()
				return user[path], true
			}
		}
		return "", false
	}
	for _, c := range []struct{ link, path string }{
		{"#top0", "/top-0"}, {"#top500", "/top-500"}, {"#frame0", "/frame-0"}, {"#frame500", "/frame-500"}, {"#stay", "/top-person"},
	} {
		tab.Navigate("https://act.test/start")
		if err := waitTrue(tab, 20*time.Second, `document.getElementById('top0') !== null`); err != nil {
			t.Fatal(err)
		}
		personClick(t, tab, c.link)
		if c.link == "#stay" {
			// The person's own click on a link of the new document, within a second of it.
			if err := waitTrue(tab, 10*time.Second, `document.getElementById('ext') !== null`); err != nil {
				t.Fatal(err)
			}
			personClick(t, tab, "#ext")
		}
		got, ok := arrived(c.path)
		if !ok {
			t.Errorf("%s: nothing reached the witness at %s", c.link, c.path)
			continue
		}
		t.Logf("%s → %s: Sec-Fetch-User %q", c.link, c.path, got)
		switch {
		case c.link == "#stay" && got != "?1":
			t.Errorf("the person's own click in the new document came without ?1 (%q): the measurement is broken", got)
		case strings.HasPrefix(c.link, "#top") && got != "":
			// clientredirect.go lets a top-level opened document's ?1 navigations go (the person's
			// own clicks): that rests on this.
			t.Errorf("BUG: a new top-level document's own script navigated with the opening click's activation (%q): the client-redirect guard must take ?1 for borrowed in top-level documents too (activationBorrowed)", got)
		}
	}
}
