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

// OPEN-ITEMS 101 (red-team pass 5a, probed): a page's own <embed> of another host is fetched
// again each time it is shown after being hidden, so a remixlet with no permission that toggles
// display on an ancestor asks the embed's host as often as it likes — a channel to that host
// for anything it read (the count, the timing). The probe counts the embed's requests for four
// hide/show cycles by the remixlet, by two of the ways it can toggle display; only the page's
// own load may reach the host (remixlet/embedguard.go refuses the rest: 5 requests before).

const embedPage = `<!doctype html><html><head><meta charset="utf-8"><title>Embed</title></head><body>
<div id="c"><embed id="e" src="https://witness.test/embed" type="image/png" width="10" height="10"></div>
<div id="o"><object data="https://witness.test/object" type="image/png" width="10" height="10"></object></div>
<p id="done"></p></body></html>`

var embedToggles = map[string]string{
	"hide-show": `await dom.hide(c); await pause(); await dom.show(c); await pause();`,
	"setstyle":  `await dom.setStyle(c, { display: 'none' }); await pause(); await dom.setStyle(c, { display: '' }); await pause();`,
}

const embedScript = `const c = await dom.query('#c');
const o = await dom.query('#o');
const pause = () => new Promise((r) => setTimeout(r, 300));
for (let i = 0; i < 4; i++) {
  %s
}
await dom.setText(await dom.query('#done'), 'done');
`

func TestRedteamEmbedShownAgainAsksItsHostAgain(t *testing.T) {
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"embed.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/p/") {
				htmlPage(w, embedPage)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}),
		"witness.test": &witness{},
	}, e2etest.WithStore())
	for name, toggle := range embedToggles {
		rx := saveUnchecked(t, p.Store, "embed "+name, store.Files{
			sandbox.ManifestFile: guardManifest("embed "+name, "https://embed.test/p/"+name),
			sandbox.ScriptFile:   []byte(strings.ReplaceAll(embedScript, "%s", toggle)),
		})
		before := sites.Requests("witness.test", "/embed")
		tab.Navigate("https://embed.test/p/" + name)
		tab.WaitConnected()
		if err := waitTrue(tab, 30*time.Second, `document.getElementById('done').textContent === 'done'`); err != nil {
			t.Fatalf("%s: the remixlet did not finish: %v\nlog:\n%s", name, err, remixletLog(t, p.Store, rx.ID))
		}
		time.Sleep(time.Second)
		n := sites.Requests("witness.test", "/embed") - before
		t.Logf("%s: the embed's host was asked %d times (the page's load and 4 hide/show cycles)\nlog:\n%s", name, n, remixletLog(t, p.Store, rx.ID))
		if n == 0 {
			t.Errorf("%s: the page's own embed never reached its host: the count proves nothing", name)
		}
		if n > 1 {
			t.Errorf("BUG: %s: 4 hide/show cycles of the embed's container made the browser ask its host %d times (want once, the page's own load)", name, n)
		}
	}
}
