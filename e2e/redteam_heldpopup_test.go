package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 6b: a same-origin popup its opener holds (OPEN-ITEMS 1 and 4). Chromium reuses a
// popup's initial about:blank Window for the first same-origin document it loads, so an opener
// that patches the popup's built-ins right after window.open holds the popup's page-agent
// session: it reads every message and writes the hello as it likes. Such an opener could drop
// the hello's newWindow (the flag that keeps a popup from taking its tab's chat) and then send
// its own tab to about:blank (or off the site): the chat whose tab it was moved into the popup
// it holds, and the agent's next tool calls ran there, out of the person's sight.

// heldPopSite is a site whose page /a opens /b in a popup on a click and takes over the popup's
// page agent before it starts: every message down the popup's socket is kept in window.seen,
// and the hello the popup's agent sends goes without its newWindow flag (window.hellos).
func heldPopSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="unsafe-url"><title>Opener</title></head><body>
<h1>Opener</h1>
<button id="open" style="position:fixed;left:20px;top:80px;width:200px;height:60px">open</button>
<script>
window.seen = [];
window.hellos = [];
document.getElementById('open').onclick = () => {
  const w = window.open(window.popupTarget || '/b');
  window.popup = w;
  try {
    const W = w.WebSocket;
    const send = W.prototype.send;
    W.prototype.send = function (d) {
      try {
        const m = JSON.parse(d);
        if (m && m.type === 'hello') { delete m.newWindow; d = JSON.stringify(m); window.hellos.push(d); }
      } catch (e) {}
      return send.call(this, d);
    };
    w.WebSocket = function (u, p) {
      const s = new W(u, p);
      window.popupSock = s;
      s.addEventListener('message', (e) => window.seen.push(String(e.data)));
      return s;
    };
    w.WebSocket.prototype = W.prototype;
  } catch (e) { window.hijackError = String(e); }
};
document.body.dataset.pageScript = 'ran';
</script></body></html>`)
		default:
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Popup</title></head><body>
<h1>POPUP-PAGE-TEXT</h1>
<script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
		}
	})
}

// waitSessionAt waits until a page session at pageURL is connected to p.
func waitSessionAt(t *testing.T, p *e2etest.Proxy, pageURL string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st, _, _ := p.Status()
		for _, s := range st.Sessions {
			if s.URL == pageURL {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no page session at %s connected\n%s", pageURL, p.StatusText())
		}
	}
}

// popupTurnEnd waits for the end of the chat's turn and returns the stored chat: either the
// agent read the popup's page (the hole), or the turn stopped because its page left the site.
func popupTurnEnd(t *testing.T, aw *agentWorld) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		text := storedChatText(t, aw.proxy.Store)
		if strings.Contains(text, "POPUP-PAGE-TEXT") || strings.Contains(text, "left the site") {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not end\n%s\n%s", head(text, 3000), aw.diagnose())
		}
	}
}

// storedChatText is every stored message and item of the newest chat, joined.
func storedChatText(t *testing.T, st *store.Store) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	chats, err := st.ListChats(ctx, 10)
	if err != nil || len(chats) == 0 {
		return ""
	}
	var b strings.Builder
	bodies, _ := st.ChatMessages(ctx, chats[0].ID)
	for _, m := range bodies {
		b.Write(m)
		b.WriteByte('\n')
	}
	items, _ := st.ChatItems(ctx, chats[0].ID)
	for _, it := range items {
		b.Write(it.Body)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestRedteamHeldPopupTakesNoChatWhenItsTabLeaves: the person's Act chat on /a waits (wait_for);
// the page opens /b in a popup it holds, drops the popup's newWindow from its hello, and sends its
// own tab to about:blank, or off the site. The chat must not move into the popup: the agent's next tool call
// (capture_page) must never read the popup's page. Before the fix the popup, an arrival from
// /a, took the chat as /a went, and the model was shown POPUP-PAGE-TEXT.
//
// The popup may also reach its page through a redirect on another origin of the site (a
// same-site open redirect): its request then says Sec-Fetch-Site: same-site, yet the Window is
// reused, for the document is same-origin with its opener.
func TestRedteamHeldPopupTakesNoChatWhenItsTabLeaves(t *testing.T) {
	for _, tc := range []struct{ name, popup, away string }{
		{"tab to about:blank", "/b", "about:blank"},
		{"tab off the site", "/b", "https://other.test/"},
		{"popup through a same-site redirect", "https://www.held.test/r?to=https://held.test/b", "about:blank"},
	} {
		t.Run(tc.name, func(t *testing.T) { heldPopupTakesNoChat(t, tc.popup, tc.away) })
	}
}

// heldPopupTakesNoChat is TestRedteamHeldPopupTakesNoChatWhenItsTabLeaves with the popup opened
// at popup and the opener's tab sent to away.
func heldPopupTakesNoChat(t *testing.T, popup, away string) {
	other := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><title>Other</title><p>other</p>`)
	})
	redirector := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "wait_for", "arguments": {"text": "never on the page", "timeoutMs": 10000}}]},
		{"tool_calls": [{"name": "capture_page", "arguments": {}}]},
		{"text": "Finished."}
	]}`, map[string]http.Handler{"held.test": heldPopSite(), "other.test": other, "www.held.test": redirector})
	tab := aw.tab
	pf, _ := openActPanel(t, tab, "https://held.test/a")
	chat(t, pf, "wait for it")
	pf.waitFor(t, 30*time.Second, "the wait_for tool running", `document.getElementById('log').innerText.includes('wait_for')`)

	e2etest.Eval[bool](tab, `(window.popupTarget = `+jsString(popup)+`, true)`)
	clickAt(t, tab, 120, 110) // the person's click on the page's button: the popup opens
	waitSessionAt(t, aw.proxy, "https://held.test/b")
	time.Sleep(time.Second) // its hello, sent on open, reaches the proxy
	held := e2etest.Eval[bool](tab, `!!window.popupSock && window.hellos.length > 0`)
	t.Logf("the opener holds the popup's session: %v (hellos %v, hijack error %v, popup closed to the opener: %v)", held,
		e2etest.Eval[[]string](tab, `window.hellos`), e2etest.Eval[any](tab, `window.hijackError || null`), e2etest.Eval[bool](tab, `window.popup.closed`))

	e2etest.Eval[bool](tab, `(location.href = `+jsString(away)+`, true)`)
	text := popupTurnEnd(t, aw)
	if strings.Contains(text, "POPUP-PAGE-TEXT") {
		t.Fatalf("the chat moved into the popup its opener holds, and the agent read the popup's page:\n%s", head(text, 3000))
	}
	for _, r := range aw.model.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(string(m.Raw), "POPUP-PAGE-TEXT") {
				t.Fatalf("the model was shown the popup's page: %s", head(string(m.Raw), 600))
			}
		}
	}
}

// oauthSite is a site whose page /a, on a click, opens a sign-in popup at idp.test, which
// sends the popup back to the site's /callback; the callback posts to its opener and closes.
func oauthSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head><body>
<h1>Shop</h1>
<button id="open" style="position:fixed;left:20px;top:80px;width:200px;height:60px">sign in</button>
<script>
window.signedIn = '';
window.addEventListener('message', (e) => { if (e.origin === location.origin && e.data && e.data.signedIn) window.signedIn = e.data.signedIn; });
document.getElementById('open').onclick = () => { window.popup = window.open('https://idp.test/authorize'); };
document.body.dataset.pageScript = 'ran';
</script></body></html>`)
		case "/callback":
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Callback</title></head><body>
<script>window.opener && window.opener.postMessage({signedIn: 'code-' + location.search.slice(6)}, location.origin);</script></body></html>`)
		}
	})
}

// TestChatKeepsASignInPopupsOpener: while the person chats on a page, a sign-in popup (another
// site that sends it back to the page's site, which then posts to its opener) still reaches its
// opener: the Window of its own that the proxy gives a chat's next page (openerguard.go) is
// only for documents that come from a page of their own origin, and the callback comes from
// the identity provider.
func TestChatKeepsASignInPopupsOpener(t *testing.T) {
	idp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://shop.test/callback?code=42", http.StatusFound)
	})
	aw := newAgentWorld(t, `{"turns": [{"text": "Hello."}]}`, map[string]http.Handler{"shop.test": oauthSite(), "idp.test": idp})
	tab := aw.tab
	pf, _ := askChat(t, tab, "https://shop.test/a", "hello agent")
	pf.waitFor(t, 20*time.Second, "the reply", `document.getElementById('log').innerText.includes('Hello.')`)
	clickAt(t, tab, 120, 110)
	tab.WaitFor(20*time.Second, "the callback's message to its opener", `window.signedIn === 'code-42'`)
}

// panelFrameBut waits for a panel frame in tab other than not.
func panelFrameBut(t *testing.T, tab *e2etest.Tab, not childFrame) childFrame {
	t.Helper()
	for deadline := time.Now().Add(panelTimeout); ; time.Sleep(100 * time.Millisecond) {
		for _, f := range childFrames(t, tab) {
			if strings.HasPrefix(f.URL, panelURLPrefix) && (f.Frame != not.Frame || f.Target != not.Target) {
				return f
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no second panel frame within %v\n%s", panelTimeout, tab.Diagnose())
		}
	}
}

// heldPanelToken waits for the panel token of the popup heldPopSite's /a opened and holds, read
// from the popup's welcome.
func heldPanelToken(t *testing.T, tab *e2etest.Tab) string {
	t.Helper()
	var panelToken string
	for deadline := time.Now().Add(15 * time.Second); panelToken == ""; time.Sleep(100 * time.Millisecond) {
		panelToken = e2etest.Eval[string](tab, `(() => { for (const s of window.seen) { const m = JSON.parse(s); if (m.type === 'welcome') return m.panel; } return ''; })()`)
		if panelToken == "" && time.Now().After(deadline) {
			t.Fatalf("the page does not hold its popup's session (the attack would prove nothing): seen %v", e2etest.Eval[[]string](tab, `window.seen`))
		}
	}
	return panelToken
}

// TestRedteamHeldPopupCannotResumeTheTabsChat (OPEN-ITEMS 7): the person chatted on /a and
// reloaded; no tab holds the chat now, and the tab's remix.proxy sessionStorage keeps its ID.
// The page opens a same-origin popup it holds, reads the popup's panel token from the welcome,
// and frames the real panel unseen in its own tab with that token: the panel read the tab's
// chat ID and resumed the person's chat into the popup's session, by itself. The person's own
// panel then could not have it back. Now the panel resumes only on the person's click on its
// "Continue the chat" offer, seen visible: the unseen frame resumes nothing, and the person's
// panel continues the chat.
func TestRedteamHeldPopupCannotResumeTheTabsChat(t *testing.T) {
	aw := newAgentWorld(t, `{"turns": [{"text": "First answer."}, {"text": "Second answer."}]}`,
		map[string]http.Handler{"held.test": heldPopSite()})
	tab := aw.tab
	pf, _ := askChat(t, tab, "https://held.test/a", "hello agent")
	pf.waitFor(t, 20*time.Second, "the reply", `document.getElementById('log').innerText.includes('First answer.')`)
	tab.Reload()
	tab.WaitConnected()
	time.Sleep(6 * time.Second) // the chat waits followGrace (5 s) for the tab's next page, then no tab holds it

	clickAt(t, tab, 120, 110) // the person's click on the page: the popup opens, held by the page
	panelToken := heldPanelToken(t, tab)
	e2etest.Eval[bool](tab, `(() => {
  const f = document.createElement('iframe');
  f.style.cssText = 'position:fixed;left:0;top:0;width:2px;height:2px;opacity:0.01;border:0';
  f.src = 'https://remix.proxy/panel?for=https://held.test'; // framed by a page of its session's origin
  f.onload = () => f.contentWindow.postMessage({type: 'panel-token', token: `+jsString(panelToken)+`}, 'https://remix.proxy');
  document.body.appendChild(f);
  return true; })()`)
	hiddenFrame := waitPanelFrame(t, tab)
	hidden := attachFrame(t, tab, hiddenFrame)
	hidden.waitFor(t, 20*time.Second, "the unseen panel connected with the popup's token", `document.getElementById('status-text').textContent === 'Connected'`)
	time.Sleep(2 * time.Second) // whatever it sends by itself on connecting, it has sent

	// The person comes back to the tab, opens their own panel and continues their chat (with a
	// click where the panel offers it).
	cdpCall(t, tab, page.BringToFront, cdp.Empty{})
	x, y := launcherButtonCenter(t, tab)
	clickAt(t, tab, x, y)
	f := panelFrameBut(t, tab, hiddenFrame)
	own := attachFrame(t, tab, f)
	own.waitFor(t, panelTimeout, "the person's panel to connect", `document.getElementById('status-text').textContent === 'Connected'`)
	if own.eval(t, `String(!!document.getElementById('resume') && !document.getElementById('resume').hidden)`) == "true" {
		bx, by := pointAt(t, tab, own, f, "#resume-chat")
		own.waitFor(t, 10*time.Second, "the offer armed", `!document.getElementById('resume-chat').disabled`)
		clickAt(t, tab, bx, by)
	}
	own.waitFor(t, 15*time.Second, "the person's chat in their own panel (the unseen panel of the page's popup took it)",
		`document.getElementById('log').innerText.includes('hello agent')`)
	if s := hidden.eval(t, `document.getElementById('log').innerText`); strings.Contains(s, "hello agent") {
		t.Errorf("the unseen panel of the page's popup shows the person's chat: %q", s)
	}
}

// TestRedteamNavigatedPopupTakesNoChat: the page opens its popup before the person chats (held,
// as no chat was there to follow); once the chat runs it navigates the popup to /b2 (the
// request names /a as Referer, so /b2 gets a Window of its own and is no longer held) and sends
// its own tab away. The popup's page came from the popup's /b, not from /a: the chat must not
// move there. Before the hello said where a page came from (panel.Hello.From), the agent went on
// in the popup, out of the person's sight (seen with a probe of this test).
func TestRedteamNavigatedPopupTakesNoChat(t *testing.T) {
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "wait_for", "arguments": {"text": "never on the page", "timeoutMs": 10000}}]},
		{"tool_calls": [{"name": "capture_page", "arguments": {}}]},
		{"text": "Finished."}
	]}`, map[string]http.Handler{"held.test": heldPopSite()})
	tab := aw.tab
	tab.Navigate("https://held.test/a")
	tab.WaitConnected()
	clickAt(t, tab, 120, 110) // the popup opens before any chat
	waitSessionAt(t, aw.proxy, "https://held.test/b")
	pf, _ := openPanel(t, tab)
	actMode(t, pf)
	chat(t, pf, "wait for it")
	pf.waitFor(t, 30*time.Second, "the wait_for tool running", `document.getElementById('log').innerText.includes('wait_for')`)
	e2etest.Eval[bool](tab, `(window.popup.location.href = '/b2', true)`)
	waitSessionAt(t, aw.proxy, "https://held.test/b2")
	time.Sleep(time.Second) // its hello, sent on open, reaches the proxy
	e2etest.Eval[bool](tab, `(location.href = 'about:blank', true)`)
	text := popupTurnEnd(t, aw)
	if strings.Contains(text, "POPUP-PAGE-TEXT") {
		t.Fatalf("the chat moved into the popup its opener navigated:\n%s", head(text, 3000))
	}
}
