package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 6d, OPEN-ITEMS 28: dom.clone keeps the page's own addresses, which the redirect
// guard never saw (they are not the remixlet's). A comment on a forum plants an image through
// the site's own redirect (/redirect?to=https://witness.test/planted-0), which the image rule
// allows (the page's origin). Each clone of it the remixlet makes asks the site again, and the
// site's redirect sends the browser to the witness: in the number and order the remixlet
// chooses, a channel for anything it read. Only the page's own load of the image may reach the
// witness.

const clonePage = `<!doctype html><html><head><meta charset="utf-8"><title>Thread</title></head><body>
<div id="card"><img id="planted" src="/redirect?to=https://witness.test/planted-0" alt="a comment's image"><span>a comment</span></div>
<div id="box"></div><p id="done"></p></body></html>`

const cloneScript = `const card = await dom.query('#card');
const box = await dom.query('#box');
for (let i = 0; i < 4; i++) {
  await dom.insert(box, await dom.clone(card, true));
  await new Promise((r) => setTimeout(r, 300));
}
await dom.setText(await dom.query('#done'), 'cloned');
`

func TestRedteamCloneCarriesNoSignalThroughARedirect(t *testing.T) {
	wit := &witness{}
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"clone.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/redirect":
				http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			case "/thread", "/control":
				htmlPage(w, clonePage)
			default:
				w.WriteHeader(http.StatusNoContent)
			}
		}),
		"witness.test": wit,
	}, e2etest.WithStore())

	// Control: the page's own clones do ask again (the channel is there to be closed).
	tab.Navigate("https://clone.test/control")
	for deadline := time.Now().Add(10 * time.Second); sites.Requests("witness.test", "/planted-0") < 1; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the page's own image never reached the witness through the site's redirect")
		}
	}
	e2etest.Eval[bool](tab, `(() => { for (let i = 0; i < 3; i++) document.getElementById('box').append(document.getElementById('card').cloneNode(true)); return true; })()`)
	for deadline := time.Now().Add(10 * time.Second); sites.Requests("witness.test", "/planted-0") < 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the page's own clones did not ask the witness again (%d requests): the test would prove nothing", sites.Requests("witness.test", "/planted-0"))
		}
	}
	before := sites.Requests("witness.test", "/planted-0")

	rx := saveUnchecked(t, p.Store, "cloner", store.Files{
		sandbox.ManifestFile: guardManifest("cloner", "https://clone.test/thread"),
		sandbox.ScriptFile:   []byte(cloneScript),
	})
	tab.Navigate("https://clone.test/thread")
	tab.WaitConnected()
	if err := waitTrue(tab, 30*time.Second, `document.getElementById('done').textContent === 'cloned'`); err != nil {
		t.Fatalf("the remixlet did not clone: %v\nlog:\n%s", err, remixletLog(t, p.Store, rx.ID))
	}
	if n := e2etest.Eval[int](tab, `document.querySelectorAll('#box img').length`); n != 4 {
		t.Logf("the clones hold %d images (want 4: the image is on the page's origin)", n)
	}
	time.Sleep(3 * time.Second)
	got := sites.Requests("witness.test", "/planted-0") - before
	if got > 1 {
		t.Errorf("BUG: the remixlet's %d clones made the browser ask the witness %d times (want at most once, the page's own load):\n  %s\nlog:\n%s",
			4, got, strings.Join(wit.requests(), "\n  "), remixletLog(t, p.Store, rx.ID))
	}
}
