package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// TestRedteamHeldPanelTokenShowsNoPanelOnAnotherSite (OPEN-ITEMS 1a): a page of held.test holds
// a same-origin popup's session and reads its panel token from the welcome. It carries the token
// to another site, other.test, which frames the real panel there and posts it the token. The
// panel was served with frame-ancestors * and its socket checked only that it came from a
// remix.proxy document, so the real panel of the held session showed on other.test. Now the
// panel is framed only inside pages of the origin its address names, and names that origin on
// its socket, where the proxy refuses any but the session's origin: framed for other.test it
// says it was refused (and the proxy logs why); framed for held.test on other.test the browser
// does not render it. The person's own panel on held.test still connects.
func TestRedteamHeldPanelTokenShowsNoPanelOnAnotherSite(t *testing.T) {
	aw := newAgentWorld(t, `{"turns": [{"text": "unused"}]}`, map[string]http.Handler{
		"held.test": heldPopSite(),
		"other.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Other</title></head><body><h1>Another site</h1></body></html>`)
		}),
	})
	tab := aw.tab
	tab.Navigate("https://held.test/a")
	tab.WaitConnected()
	clickAt(t, tab, 120, 110) // the person's click on the page: the popup opens, held by the page
	panelToken := heldPanelToken(t, tab)

	cdpCall(t, tab, page.BringToFront, cdp.Empty{})
	own, _ := openPanel(t, tab) // the person's own panel, framed by its page: connects (openPanel waits for it)
	own.waitFor(t, 5*time.Second, "the person's panel shows its page", `document.getElementById('page-url').textContent.includes('held.test')`)

	tab.Navigate("https://other.test/")
	tab.WaitConnected()
	frameFor := func(forOrigin string) {
		e2etest.Eval[bool](tab, `(() => {
  const f = document.createElement('iframe');
  f.style.cssText = 'position:fixed;left:10px;top:80px;width:380px;height:400px;border:0';
  f.src = 'https://remix.proxy/panel?for=' + `+jsString(forOrigin)+`;
  f.onload = () => f.contentWindow.postMessage({type: 'panel-token', token: `+jsString(panelToken)+`}, 'https://remix.proxy');
  document.body.appendChild(f);
  return true; })()`)
	}

	// Framed for the page's own origin: rendered, and refused at the socket.
	frameFor("https://other.test")
	pf := attachFrame(t, tab, waitPanelFrame(t, tab))
	pf.waitFor(t, 20*time.Second, "the panel on other.test refused (it showed the held session's panel)",
		`document.getElementById('error').textContent.startsWith('The proxy refused this panel: this panel is shown inside a page of another origin; reload the page and open the chat from its remixproxy button')`)
	if s := pf.eval(t, `document.getElementById('status-text').textContent`); s == "Connected" {
		t.Errorf("the refused panel says %q", s)
	}
	if logs := aw.proxy.Logs(); !strings.Contains(logs, "panel socket refused") || !strings.Contains(logs, "shown_in=https://other.test") {
		t.Errorf("the proxy's log does not say why it refused the panel:\n%s", tail(logs, 3000))
	}

	// Framed for the token's origin on other.test: the browser does not render the panel there.
	e2etest.Eval[bool](tab, `(document.querySelectorAll('iframe').forEach((f) => f.remove()), true)`)
	frameFor("https://held.test")
	time.Sleep(3 * time.Second)
	for _, f := range childFrames(t, tab) {
		if !strings.HasPrefix(f.URL, panelURLPrefix) {
			continue
		}
		fe := attachFrame(t, tab, f)
		if s, err := fe.evalErr(`String(document.getElementById('status-text') && document.getElementById('status-text').textContent)`); err == nil && s != "null" {
			t.Errorf("the panel framed for held.test rendered on other.test, status %q", s)
		}
	}
	if strings.Count(aw.proxy.Logs(), "panel socket refused") != 1 {
		t.Errorf("a socket from the panel framed for held.test reached the proxy:\n%s", tail(aw.proxy.Logs(), 3000))
	}
}

// TestPanelConnectsOnAPlainHTTPPage: over plain http the panel is framed from
// http://remix.proxy/panel?for=http://ORIGIN, served with frame-ancestors of that http origin,
// and its socket names it: the person's panel still connects there.
func TestPanelConnectsOnAPlainHTTPPage(t *testing.T) {
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"plain.test": plainSite()})
	tab.Navigate("http://plain.test/")
	tab.WaitConnected()
	x, y := launcherButtonCenter(t, tab)
	clickAt(t, tab, x, y)
	const want = "http://remix.proxy/panel?for=http://plain.test"
	var panelFrame *childFrame
	for deadline := time.Now().Add(panelTimeout); panelFrame == nil; time.Sleep(50 * time.Millisecond) {
		for _, f := range childFrames(t, tab) {
			if f.URL == want {
				panelFrame = &f
			}
		}
		if panelFrame == nil && time.Now().After(deadline) {
			t.Fatalf("no panel frame at %s: frames %q", want, childFrameURLs(t, tab))
		}
	}
	pf := attachFrame(t, tab, *panelFrame)
	pf.waitFor(t, panelTimeout, "the panel connected and showing its page",
		`document.getElementById('status-text').textContent === 'Connected' && document.getElementById('page-url').textContent.includes('plain.test')`)
}
