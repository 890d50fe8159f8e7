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

// Red-team pass 3: what a page-held agent session is worth. A same-origin popup's page agent
// belongs to its opener (NOTES, red-team pass 2): right after window.open the opener replaces
// the popup's WebSocket, before the popup's page agent captures it, and so reads and writes
// every message of the popup's session. These tests hold such a session, in Chromium through
// the proxy, and check that it is worth nothing beyond what the page's origin already has.

// popSite is a site whose page /a opens /b in a popup on a click and, when window.hijack is set,
// takes over the popup's page agent session (hijack): every message the proxy sends down it is
// kept in window.seen, and window.popupSock is the socket, to send on.
func popSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Opener</title></head><body>
<h1>Opener</h1>
<button id="open" style="position:fixed;left:20px;top:80px;width:200px;height:60px">open</button>
<script>
window.seen = [];
document.getElementById('open').onclick = () => {
  const w = window.open('/b');
  window.popup = w;
  if (!window.hijack) return;
  const W = w.WebSocket;
  w.WebSocket = function (u, p) {
    const s = new W(u, p);
    window.popupURL = u;
    window.popupSock = s;
    s.addEventListener('message', (e) => window.seen.push(String(e.data)));
    return s;
  };
  w.WebSocket.prototype = W.prototype;
};
document.body.dataset.pageScript = 'ran';
</script></body></html>`)
		default:
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Page `+r.URL.Path+`</title></head><body>
<h1>Page `+r.URL.Path+`</h1><a id="next" href="/c">next</a>
<script>
document.body.dataset.pageScript = 'ran';
</script></body></html>`)
		}
	})
}

// openPopup clicks /a's open button like a person and waits for the popup's page agent. A
// popup opened while a chat is open on /a gets a Window of its own, out of its opener's reach
// (proxy/openerguard.go): severed is then true, and the popup's connection is the caller's to
// wait for (waitSessionAt).
func openPopup(t *testing.T, tab *e2etest.Tab) (severed bool) {
	t.Helper()
	clickAt(t, tab, 120, 110)
	tab.WaitFor(10*time.Second, "the popup", `(() => { const w = window.popup; if (!w) return false; if (w.closed) return true;
  try { return w.document && w.document.readyState === 'complete' && !!w.document.querySelector('`+e2etest.ConnectedSelector+`'); } catch (e) { return true; } })()`)
	return e2etest.Eval[bool](tab, `(() => { try { return window.popup.closed || !window.popup.document; } catch (e) { return true; } })()`)
}

// TestRedteamSessionPopupTakesNoChat: the person chats on /a, the page opens a same-origin popup
// (/b, its request names /a as Referer) and then the tab goes on to /c within the follow grace.
// The chat stays with the tab: /c's panel shows it. Before the fix the popup's page, connected
// first, took the chat (proxy/chat/follow.go's arrivals) as soon as /a went, and /c's panel was
// empty (the chat, held by the popup, could not be resumed either).
func TestRedteamSessionPopupTakesNoChat(t *testing.T) {
	aw := newAgentWorld(t, `{"turns": [{"text": "First answer."}, {"text": "Second answer."}]}`, map[string]http.Handler{"pop.test": popSite()})
	tab := aw.tab
	pf, _ := askChat(t, tab, "https://pop.test/a", "hello agent")
	pf.waitFor(t, 20*time.Second, "the reply", `document.getElementById('log').innerText.includes('First answer.')`)
	if openPopup(t, tab) {
		waitSessionAt(t, aw.proxy, "https://pop.test/b")
	}
	e2etest.Eval[bool](tab, `(location.href = '/c', true)`)
	tab.WaitFor(10*time.Second, "/c", `location.pathname === '/c' && document.body && document.body.dataset.pageScript === 'ran'`)
	tab.WaitConnected()
	pf2, _ := openPanel(t, tab)
	pf2.waitFor(t, 10*time.Second, "the chat in the tab's next page", `document.getElementById('log').innerText.includes('hello agent')`)
}

// TestRedteamSessionNavFloodIsMerged: the opener of a same-origin popup holds the popup's
// session and writes 2000 nav messages on it, between an address a remixlet matches and one it
// does not. Each made the proxy match the page's remixlets again (store reads, a stylesheet sent
// or emptied, sandboxes started and stopped): about a millisecond of the proxy's time each, at
// the socket's speed, where a page's own pushState is throttled by the browser. Now the
// listeners hear of a session's navigations at a bounded rate (proxy/page/navrate.go): the
// stylesheet messages the flood causes are counted, far fewer than one per nav, and the last
// address still counts.
func TestRedteamSessionNavFloodIsMerged(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"pop.test": popSite()}, e2etest.WithStore())
	saveAndActivate(t, p.Store, "x0 style", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "x0 style", "description": "styles /x0", "api": 1, "matches": ["https://pop.test/x0*"], "permissions": []}`),
		sandbox.StyleFile:    []byte(`h1 { color: rgb(1, 2, 3) }`),
	})
	tab.Navigate("https://pop.test/a")
	tab.WaitConnected()
	e2etest.Eval[bool](tab, `(window.hijack = true, true)`)
	openPopup(t, tab)
	const navs = 2000
	e2etest.Eval[bool](tab, fmt.Sprintf(`(() => {
  for (let i = 0; i < %d; i++) popupSock.send(JSON.stringify({type: 'nav', url: 'https://pop.test/x' + (i %% 2) + '?' + i, kind: 'push'}));
  popupSock.send(JSON.stringify({type: 'nav', url: 'https://pop.test/x0-end', kind: 'push'}));
  return true; })()`, navs))
	styles := func() (n int, last string) {
		raw := e2etest.Eval[[]string](tab, `window.seen.map((m) => JSON.parse(m)).filter((m) => m.type === 'style').map((m) => m.css)`)
		if len(raw) > 0 {
			last = raw[len(raw)-1]
		}
		return len(raw), last
	}
	// Wait for the end: the session at the last address, its stylesheet sent, and no more
	// stylesheet messages for a second.
	for deadline := time.Now().Add(90 * time.Second); ; {
		st, _, _ := p.Status()
		atEnd := false
		for _, s := range st.Sessions {
			atEnd = atEnd || s.URL == "https://pop.test/x0-end"
		}
		n, last := styles()
		if atEnd && last != "" {
			time.Sleep(time.Second)
			if m, _ := styles(); m == n {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the flood did not end: %d stylesheet messages, the last %q\nproxy status: %s", n, last, p.StatusText())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n, _ := styles(); n >= navs/2 {
		t.Errorf("%d navs from a page-held session made %d stylesheet messages: every nav matched the remixlets again", navs, n)
	} else {
		t.Logf("%d navs made %d stylesheet messages", navs, n)
	}
}

// TestRedteamSessionSyntheticPagehideKeepsTheSession: a page that dispatches pagehide and
// pageshow events itself made its page agent close its session and open a new one each time
// (157 new sessions in 300 tries here): each one started the page's remixlets again and ended
// what belonged to the old session (its chat's cards, the lease of a page the agent opened).
// The page agent now listens to the browser's own events only.
func TestRedteamSessionSyntheticPagehideKeepsTheSession(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"pop.test": popSite()}, e2etest.WithStore())
	tab.Navigate("https://pop.test/c")
	tab.WaitConnected()
	before, _, err := p.Status()
	if err != nil {
		t.Fatal(err)
	}
	e2etest.Eval[bool](tab, `(async () => {
  for (let i = 0; i < 300; i++) {
    window.dispatchEvent(new Event('pagehide'));
    window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true}));
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
})()`)
	after, _, err := p.Status()
	if err != nil {
		t.Fatal(err)
	}
	if n := after.AgentConnections - before.AgentConnections; n != 0 {
		t.Errorf("the page's own pagehide and pageshow events opened %d new sessions", n)
	}
	if !tab.Connected() {
		t.Errorf("the page agent is not connected after the page's events\n%s", tab.Diagnose())
	}
}
