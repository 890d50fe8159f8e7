package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 5c: the proxy's own surfaces seen from a hostile page. The page sends what a
// page can to remix.proxy (over https and http) and to the proxy's listen address: forged
// manager posts in every shape (a form into a frame, no-cors fetches with a form body and with
// text/plain, a sandboxed frame's post with Origin null, a GET with the post's fields),
// credentialed CORS reads of the manager's pages and JSON, script includes of the JSON, the
// service-worker relay without its key, and the panel and page-agent sockets with made-up
// tokens. The store must be unchanged, no read may succeed, no socket may say anything.

const deputyPage = `<!doctype html><html><head><meta charset="utf-8"><title>Prizes</title></head><body>
<script>
window.results = {reads: {}, sockets: {}, scripts: {}};
window.attack = async (listen) => {
  const bases = ['https://remix.proxy', 'http://remix.proxy', 'http://' + listen];
  const add = (tag, props) => { const e = document.createElement(tag); Object.assign(e, props); document.body.append(e); return e; };
  const body = 'host=victim.test&csrf=guessed';
  for (const b of bases) {
    const target = 'f' + Math.random().toString(36).slice(2);
    add('iframe', {name: target});
    const f = add('form', {method: 'POST', action: b + '/manager/sites/pause', target});
    f.innerHTML = '<input name="host" value="victim.test"><input name="csrf" value="guessed">';
    f.submit();
    const tp = add('form', {method: 'POST', action: b + '/manager/sites/pause', target, enctype: 'text/plain'});
    tp.innerHTML = '<input name="host" value="victim.test&csrf=guessed&x">';
    tp.submit();
    await fetch(b + '/manager/sites/pause', {method: 'POST', mode: 'no-cors', credentials: 'include', body: new URLSearchParams(body)}).catch(() => {});
    await fetch(b + '/manager/sites/pause', {method: 'POST', mode: 'no-cors', credentials: 'include', headers: {'Content-Type': 'text/plain'}, body}).catch(() => {});
    await fetch(b + '/manager/sites/pause?' + body, {mode: 'no-cors', credentials: 'include'}).catch(() => {});
    const sb = document.createElement('iframe');
    sb.sandbox = 'allow-scripts allow-forms';
    sb.srcdoc = '<form method=post action="' + b + '/manager/sites/pause"><input name=host value=victim.test><input name=csrf value=guessed></form><script>document.forms[0].submit()<\/script>';
    document.body.append(sb);
    for (const p of ['/manager', '/manager/data', '/manager/settings', '/manager/traces.json', '/manager/traces/export.json', '/status.json', '/panel']) {
      try {
        const r = await fetch(b + p, {credentials: 'include'});
        window.results.reads[b + p] = 'read: ' + (await r.text()).slice(0, 80);
      } catch (e) {
        window.results.reads[b + p] = 'blocked';
      }
    }
    for (const p of ['/manager/traces.json', '/manager/traces/export.json', '/manager/data']) {
      await new Promise((done) => {
        const s = add('script', {src: b + p});
        s.onload = () => { window.results.scripts[b + p] = 'loaded'; done(); };
        s.onerror = () => { window.results.scripts[b + p] = 'error'; done(); };
      });
    }
  }
  try {
    const r = await fetch('https://remix.proxy/sw/inject?url=' + encodeURIComponent(location.href), {method: 'POST',
      headers: {'X-Remixproxy-Sw': 'guessed', 'X-Remixproxy-Headers': '{"content-type": "text/html"}'}, body: '<html><head></head><body>x</body></html>'});
    window.results.reads['sw/inject'] = 'status ' + r.status + ': ' + (await r.text()).slice(0, 200);
  } catch (e) {
    window.results.reads['sw/inject'] = 'blocked';
  }
  const sock = (name, url, protocols) => new Promise((done) => {
    let said = '';
    let ws;
    try { ws = new WebSocket(url, protocols); } catch (e) { window.results.sockets[name] = 'refused by the browser'; done(); return; }
    ws.onmessage = (ev) => { said += String(ev.data).slice(0, 200); };
    ws.onclose = (ev) => { window.results.sockets[name] = 'closed ' + ev.code + (said ? ' after: ' + said : ''); done(); };
    setTimeout(() => { window.results.sockets[name] = 'still open' + (said ? ' after: ' + said : ''); ws.close(); done(); }, 5000);
  });
  await sock('panel', 'wss://remix.proxy/panel/ws?t=guessed');
  await sock('panel over http', 'ws://remix.proxy/panel/ws?t=guessed');
  await sock('panel as confirm', 'wss://remix.proxy/panel/ws?t=guessed&role=confirm');
  await sock('agent', 'wss://remix.proxy/agent/ws', ['remixproxy~guessed']);
  window.results.done = true;
};
</script></body></html>`

func TestRedteamProxySurfacesFromAPage(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"evil.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { htmlPage(w, deputyPage) }),
	}, e2etest.WithStore())
	tab.Navigate("https://evil.test/")
	e2etest.Eval[any](tab, `attack('`+p.Addr+`'), 1`)
	tab.WaitFor(90*time.Second, "the attacks to end", `window.results.done === true`)
	var res struct {
		Reads, Sockets, Scripts map[string]string
	}
	raw := e2etest.Eval[string](tab, `JSON.stringify(window.results)`)
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatalf("results %q: %v", raw, err)
	}
	for what, got := range res.Reads {
		switch {
		case what == "sw/inject":
			if !strings.HasPrefix(got, "status 403") || strings.Contains(got, "data-remixproxy") {
				t.Errorf("the service-worker relay without its key answered the page: %s", got)
			}
		case strings.HasSuffix(what, "/panel"):
			// The panel's HTML is the same public file for everyone; reading it is no loss (and
			// is not possible: no CORS).
			if got != "blocked" && strings.Contains(got, "t=") {
				t.Errorf("%s: %s", what, got)
			}
		case got != "blocked":
			t.Errorf("the page read %s: %s", what, got)
		}
	}
	if len(res.Reads) < 20 {
		t.Errorf("only %d reads were tried: %v", len(res.Reads), res.Reads)
	}
	for what, got := range res.Scripts {
		if got != "error" {
			t.Errorf("<script src=%s>: %s, want an error (no script may load the manager's JSON)", what, got)
		}
	}
	for what, got := range res.Sockets {
		if strings.Contains(got, "after:") || strings.HasPrefix(got, "still open") {
			t.Errorf("the %s socket with a made-up token: %s", what, got)
		}
	}
	// Give the forms in frames time to land, then look at the store.
	time.Sleep(2 * time.Second)
	paused, err := p.Store.PausedSites(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(paused) > 0 {
		t.Errorf("a hostile page paused sites through the manager: %v", paused)
	}
	t.Logf("reads: %v\nscripts: %v\nsockets: %v", res.Reads, res.Scripts, res.Sockets)
}

// TestRedteamManagerTakesNoClickMeantForAPage: double-click-jacking. A page asks for a double
// click and, on its first mousedown, sends the window to a manager page, so that the second
// click lands on the button now under the pointer — here "Switch off" of a remixlet the person
// keeps on (the same works for Allow on a pending approval, Resume site, Delete all chats).
// The manager's buttons take a click only once the window has had the focus for a moment and
// the pointer has moved since (manager_arm.js); the person's own click, after that, works.
func TestRedteamManagerTakesNoClickMeantForAPage(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"evil.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Verify</title></head><body>
<button id="go" style="position: fixed; left: 0; top: 0; width: 100vw; height: 100vh">Double-click to prove you are human</button>
<script>
document.getElementById('go').addEventListener('mousedown', () => { location.href = new URLSearchParams(location.search).get('to'); });
</script></body></html>`)
		}),
	}, e2etest.WithStore())
	ctx := context.Background()
	rx := saveAndActivate(t, p.Store, "kept on", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "kept on", "api": 1, "matches": ["https://plain.test/*"], "permissions": []}`),
		sandbox.ScriptFile:   []byte("rmx.log('on');\n"),
	})
	if r, _ := p.Store.Remixlet(ctx, rx.ID); !r.Enabled {
		t.Fatal("the remixlet is not on to begin with")
	}
	manager := "https://remix.proxy/manager/r/" + rx.ID
	const switchButton = `form[action$="/switch"] button[type=submit]`
	focusTab(t, tab)
	tab.Navigate("https://evil.test/?to=" + url.QueryEscape(manager))

	// The first click of the double click, on the page.
	cctx, cancel := context.WithTimeout(tab.Context(), cdpTimeout)
	defer cancel()
	if err := chromedp.Do(cctx, chromedp.MouseEvent(chromedp.MouseMoved, 200, 200), chromedp.MouseClickXY(200, 200)); err != nil {
		t.Fatalf("the first click: %v", err)
	}
	// The second, as soon as the manager is shown, on its button, the pointer not moved since.
	var x, y float64
	err := lnPoll(20*time.Second, func() error {
		got, err := e2etest.EvalE[string](tab, fmt.Sprintf(`(() => {
			const b = location.href === %q && document.readyState === 'complete' && document.querySelector(%q);
			if (!b) return '';
			const r = b.getBoundingClientRect();
			return (r.left + r.width / 2) + ' ' + (r.top + r.height / 2);
		})()`, manager, switchButton))
		if err != nil || got == "" {
			return errors.New("the manager page is not shown yet")
		}
		fmt.Sscan(got, &x, &y)
		return nil
	})
	if err != nil {
		t.Fatalf("the page did not send the window to the manager: %v", err)
	}
	if err := chromedp.Do(cctx, chromedp.MouseClickXY(x, y, chromedp.ClickCount(2))); err != nil {
		t.Fatalf("the second click: %v", err)
	}
	// A click that went through loads the manager's answer (?m=off); give it time to.
	lnPoll(3*time.Second, func() error {
		if r, _ := p.Store.Remixlet(ctx, rx.ID); !r.Enabled {
			return nil
		}
		return errors.New("still on")
	})
	if r, _ := p.Store.Remixlet(ctx, rx.ID); !r.Enabled {
		t.Fatalf("the second click of a double click the page asked for switched the remixlet off")
	}

	// The person's own click, once the page has been shown and the pointer moved, works.
	managerClick(t, tab, switchButton)
	tab.WaitFor(managerWait, "the manager's answer", `location.search.includes('m=off')`)
	if r, _ := p.Store.Remixlet(ctx, rx.ID); r.Enabled {
		t.Error("the person's click on Switch off did not switch it off")
	}
}
