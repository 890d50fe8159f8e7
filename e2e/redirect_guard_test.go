package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// The redirect guard as an attacker meets it (issue 12, hole 3): a site with an open redirect on
// its own origin, remixlets that write addresses through it in every spelling the issue found
// (dot segments, %2e%2e, backslashes, U+3002 and fullwidth letters in the host), inside
// <svg><style> in setHTML, more than 256 at once, and as a link that dom.click or the person
// clicks. Nothing may reach the witness; the page's own use of its redirect must still work.

// guardSpellings all lead, as the browser reads them, to /redirect?to=https://witness.test/sN on
// guard.test.
var guardSpellings = []string{
	"/x/../redirect?to=https://witness.test/s0",
	"/x/%2e%2e/redirect?to=https://witness.test/s1",
	"/x/%2E./redirect?to=https://witness.test/s2",
	`\redirect?to=https://witness.test/s3`,
	`https:\\guard.test\x\..\redirect?to=https://witness.test/s4`,
	"https://guard\u3002test/redirect?to=https://witness.test/s5",
	"https://\uff47\uff55\uff41\uff52\uff44.test/redirect?to=https://witness.test/s6",
	"HTTPS://GUARD.TEST:443/redirect?to=https://witness.test/s7",
	"/re\tdirect?to=https://witness.test/s8",
	"https://guard\uff0etest/redirect?to=https://witness.test/s9",
	"/./redirect/../redirect?to=https://witness.test/s10",
	"/redirect?to=https://witness.test/s11#fragment",
}

func guardSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/main", "/click":
			htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Guard</title></head>
<body><h1>Guard</h1><div id="box"></div><div id="box2"></div><div id="box3"></div><p id="done"></p>
</body></html>`)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

const guardScript = `const S = %s;
const box = await dom.query('#box');
const errs = [];
for (let i = 0; i < S.length; i++) {
  try { await dom.insert(box, await dom.create({ tag: 'img', attrs: { src: S[i], alt: 's' + i } })); }
  catch (e) { errs.push(i + ': ' + e.message); }
}
// The tree builder moves this img out of the svg's style element.
await dom.setHTML(await dom.query('#box2'), '<svg><style><img src="/redirect?to=https://witness.test/svgstyle"></style></svg>');
await dom.insert(box, await dom.create({ tag: 'a', attrs: { id: 'rlink', href: '/redirect?to=https://witness.test/person-clicked' }, text: 'a remixlet link' }));
await dom.setText(await dom.query('#done'), JSON.stringify(errs));
`

// guardManyScript writes 300 addresses in one setHTML (the old guard recorded the first 256).
const guardManyScript = `let many = '';
for (let i = 0; i < 300; i++) many += '<img src="/redirect?to=https://witness.test/many' + i + '">';
await dom.setHTML(await dom.query('#box3'), many);
`

const guardClickScript = `const a = await dom.create({ tag: 'a', attrs: { href: '/x/%2e%2e/redirect?to=https://witness.test/dom-clicked' }, text: 'go' });
await dom.insert(await dom.query('#box'), a);
await dom.setText(await dom.query('#done'), 'clicking');
await dom.click(a);
`

func guardManifest(name, match string) []byte {
	return []byte(fmt.Sprintf(`{"name": %q, "description": "Redirect guard e2e.", "api": 1, "matches": [%q], "permissions": []}`, name, match))
}

func TestRedirectGuardStopsEverySpellingInChromium(t *testing.T) {
	wit := &witness{}
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"guard.test":   guardSite(),
		"witness.test": wit,
		"cdn.test":     http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }),
	}, e2etest.WithStore())
	sj, _ := json.Marshal(guardSpellings)
	rx := saveUnchecked(t, p.Store, "guard spellings", store.Files{
		sandbox.ManifestFile: guardManifest("guard spellings", "https://guard.test/main*"),
		sandbox.ScriptFile:   []byte(fmt.Sprintf(guardScript, sj)),
	})
	rxMany := saveUnchecked(t, p.Store, "guard many", store.Files{
		sandbox.ManifestFile: guardManifest("guard many", "https://guard.test/main*"),
		sandbox.ScriptFile:   []byte(guardManyScript),
	})
	rxClick := saveUnchecked(t, p.Store, "guard click", store.Files{
		sandbox.ManifestFile: guardManifest("guard click", "https://guard.test/click*"),
		sandbox.ScriptFile:   []byte(guardClickScript),
	})
	tab.Navigate("https://guard.test/main")
	tab.WaitConnected()
	if err := waitTrue(tab, 30*time.Second, `document.getElementById('done').textContent !== ''`); err != nil {
		t.Fatalf("the remixlet did not finish: %v\nlog:\n%s", err, remixletLog(t, p.Store, rx.ID))
	}
	var errs []string
	json.Unmarshal([]byte(e2etest.Eval[string](tab, `document.getElementById('done').textContent`)), &errs)
	written := len(guardSpellings) - len(errs)
	t.Logf("spellings written: %d of %d; refused before writing: %q", written, len(guardSpellings), errs)
	if written < len(guardSpellings)-2 {
		t.Errorf("only %d of %d spellings were written (they are all on the page's origin): %q", written, len(guardSpellings), errs)
	}
	if n := e2etest.Eval[int](tab, `document.querySelectorAll('#box2 img, #box3 img').length`); n != 301 {
		t.Errorf("setHTML wrote %d images, want 301 (the svg-style one and 300 more)", n)
	}
	// Every written image requested its redirect and got the 403.
	wantRedirects := written + 301
	for deadline := time.Now().Add(30 * time.Second); sites.Requests("guard.test", "/redirect") < wantRedirects; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("guard.test saw %d redirect requests, want %d: the images did not load", sites.Requests("guard.test", "/redirect"), wantRedirects)
		}
	}
	wantLogs := map[string][]string{rx.ID: {"svgstyle,"}, rxMany.ID: {"many"}} // the log is bounded against floods: some of the 300 lines; the witness count covers all
	for i := range guardSpellings {
		wantLogs[rx.ID] = append(wantLogs[rx.ID], fmt.Sprintf("s%d,", i))
	}
	for id, wants := range wantLogs {
		for _, want := range wants {
			re := "redirects to https://witness.test/" + want
			log := remixletLog(t, p.Store, id)
			for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log, re); time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					if !strings.HasPrefix(want, "s") || !slices.ContainsFunc(errs, func(e string) bool {
						return strings.HasPrefix(e, strings.TrimPrefix(strings.TrimSuffix(want, ","), "s")+": ")
					}) {
						t.Errorf("the remixlet's log does not say the redirect to %s was refused:\n%s", want, tail(log, 3000))
					}
					break
				}
				log = remixletLog(t, p.Store, id)
			}
		}
	}
	checkNoWitness := func(when string) {
		t.Helper()
		if n, seen := sites.HostRequests("witness.test"), wit.requests(); n != 0 || len(seen) != 0 {
			t.Errorf("BUG: %s: the witness received %d requests:\n  %s", when, n, strings.Join(seen, "\n  "))
		}
	}
	checkNoWitness("after the images")

	// The page's own use of its redirect, with another query, is not blocked.
	e2etest.Eval[bool](tab, `(() => { const i = new Image(); i.src = '/redirect?to=https://cdn.test/own-use'; document.body.append(i); return true; })()`)
	for deadline := time.Now().Add(10 * time.Second); sites.Requests("cdn.test", "/own-use") == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the page's own redirect to cdn.test was blocked after a remixlet used the same path")
		}
	}

	// The person clicks the link the remixlet made: the navigation's redirect is refused too.
	ctx, cancel := context.WithTimeout(tab.Context(), 20*time.Second)
	_, err := chromedp.Run(ctx, chromedp.Click("#rlink", chromedp.NodeVisible))
	cancel()
	if err != nil {
		t.Fatalf("clicking the remixlet's link: %v", err)
	}
	if err := waitTrue(tab, 20*time.Second, `document.body && document.body.innerText.includes('a redirect of an address a remixlet wrote was refused')`); err != nil {
		t.Errorf("the person's click did not end on the proxy's refusal: %v (at %s)", err, tab.URL())
	} else if text := e2etest.Eval[string](tab, `document.body.innerText`); !strings.Contains(text, "fetch: permission for that site") || !strings.Contains(text, "https://remix.proxy/manager") {
		t.Errorf("the refusal does not say what to do (the permission, the manager): %q", text)
	}
	checkNoWitness("after the person's click")

	// dom.click on a link the remixlet made.
	tab.Navigate("https://guard.test/click")
	if err := waitTrue(tab, 20*time.Second, `document.body && document.body.innerText.includes('a redirect of an address a remixlet wrote was refused')`); err != nil {
		t.Errorf("dom.click did not end on the proxy's refusal: %v (at %s)\nlog:\n%s", err, tab.URL(), remixletLog(t, p.Store, rxClick.ID))
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(remixletLog(t, p.Store, rxClick.ID), "redirects to https://witness.test/dom-clicked"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the clicking remixlet's log does not name the refused redirect:\n%s", remixletLog(t, p.Store, rxClick.ID))
			break
		}
	}
	checkNoWitness("after dom.click")

	// Positive control: the witness does record what reaches it through this proxy (by the
	// person's own navigation: the page may no longer reach a site its remixlets named, red-team
	// pass 6d).
	tab.NavigateErr("https://witness.test/control")
	for deadline := time.Now().Add(5 * time.Second); sites.Requests("witness.test", "/control") == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the control request never reached the witness: the zero counts prove nothing")
		}
	}
}
