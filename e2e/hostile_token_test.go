package e2e

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// tokenSite is a site whose pages try to get a page token of their own, the key to an agent
// session (proxy/page/claims.go): every way a page script can read a copy of an injected
// document — its own address fetched again (as pjax and Turbo sites do), the browser's HTTP
// cache (force-cache, only-if-cached), another page of the site the tab visited before, an
// XMLHttpRequest — and, where a copy holds a token, a socket opened with it. Its pages are
// cacheable (max-age, with validators), as many sites' are. It also asks the proxy's service-worker relay for an
// injected copy, as the service-worker shim does.
type tokenSite struct{}

func (tokenSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=3600")
	w.Header().Set("Last-Modified", "Mon, 30 Nov 2026 10:00:00 GMT")
	if r.Header.Get("If-None-Match") == `"v1"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("ETag", `"v1"`)
	fmt.Fprint(w, `<!doctype html><html><head><meta charset="utf-8"><title>Token</title></head><body>
<p>A page that looks for an agent token of its own.</p>
<script>
const sock = (tok) => new Promise((res) => {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  let ws;
  try { ws = new WebSocket(scheme + '://remix.proxy/agent/ws', 'remixproxy~' + tok); } catch (e) { res('throw ' + e); return; }
  ws.onopen = () => ws.send(JSON.stringify({type: 'hello', url: location.href, title: 'x', top: true, ready: 'complete'}));
  ws.onmessage = (e) => { const m = JSON.parse(e.data); res(m.type === 'welcome' ? 'WELCOMED' + (m.panel ? ' with a panel token' : '') : 'message ' + m.type); };
  ws.onclose = (e) => res('closed ' + e.code);
  setTimeout(() => res('timeout'), 5000);
});
const tagRe = new RegExp('data-remix' + 'proxy="([^"]+)"'); // not spelled whole: this page's own text must not match
const tokenIn = (html) => { const m = html.match(tagRe); return m ? m[1].replace(/&amp;/g, '&') : ''; };
const xhr = (u) => new Promise((res) => { const x = new XMLHttpRequest(); x.open('GET', u); x.onload = () => res(x.responseText); x.onerror = () => res(''); x.send(); });
const FORGED = 'fetch with a navigation\'s headers';
window.tryTokens = async (other) => {
  // The browser's cache first (a fetch that reaches the proxy may replace what it holds), then
  // the network.
  const ways = {
    'fetch, force-cache': () => fetch(location.href, {cache: 'force-cache'}).then((r) => r.text()),
    'fetch, only-if-cached': () => fetch(location.href, {cache: 'only-if-cached', mode: 'same-origin'}).then((r) => r.text()),
    'fetch of the page visited before, only-if-cached': () => fetch(other, {cache: 'only-if-cached', mode: 'same-origin'}).then((r) => r.text()),
    'fetch of the page visited before, force-cache': () => fetch(other, {cache: 'force-cache'}).then((r) => r.text()),
    'fetch': () => fetch(location.href).then((r) => r.text()),
    'fetch as Turbo does': () => fetch(location.href, {cache: 'no-store', headers: {Accept: 'text/html, application/xhtml+xml'}}).then((r) => r.text()),
    'XMLHttpRequest': () => xhr(location.href + '?xhr'),
    'the service-worker relay (remix.proxy/sw/inject)': () => fetch((location.protocol === 'https:' ? 'https' : 'http') + '://remix.proxy/sw/inject?url=' + encodeURIComponent(location.href),
      {method: 'POST', mode: 'cors', body: '<!doctype html><html><head></head><body>x</body></html>', headers: {'x-remixproxy-headers': '{"content-type":"text/html"}'}}).then((r) => r.text()),
    [FORGED]: () => fetch(location.href, {cache: 'no-store', headers: {'Upgrade-Insecure-Requests': '1', Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'}}).then((r) => r.text()),
  };
  const out = {};
  for (const [name, get] of Object.entries(ways)) {
    let html = '';
    try { html = await get(); } catch (e) { out[name] = 'no copy (' + e.name + ')'; continue; }
    const tok = tokenIn(html);
    out[name] = tok ? 'token; socket: ' + await sock(tok) : 'no token in the copy';
  }
  return JSON.stringify(out);
};
// A token got by a way not closed: two sockets with it.
window.twice = async (tok) => {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const first = new WebSocket(scheme + '://remix.proxy/agent/ws', 'remixproxy~' + tok);
  const got = [];
  const firstDone = new Promise((res) => {
    first.onmessage = (e) => { got.push('first: ' + JSON.parse(e.data).type); res(); };
    first.onclose = (e) => { got.push('first closed ' + e.code); res(); };
  });
  await firstDone;
  const firstClosed = new Promise((res) => { first.onclose = (e) => { got.push('first closed ' + e.code); res(); }; setTimeout(res, 1500); });
  got.push('second: ' + await sock(tok));
  await firstClosed;
  return got.join('; ');
};
document.body.dataset.pageScript = 'ran';
</script></body></html>`)
}

// TestHostilePageGetsNoToken: a page script tries every way it has to read a copy of an
// injected document (see tokenSite): on https none holds a token; on plain http none does
// either, except a fetch that forges a navigation's headers (Upgrade-Insecure-Requests), which
// over http the proxy cannot tell from a navigation (proxy/html.go). A token got anyway (here:
// handed to the page by the test, as a same-origin popup's tag read while its page agent loads
// would give it) opens one session, and a second socket with it is refused. Throughout, the
// page's own page agent stays connected.
func TestHostilePageGetsNoToken(t *testing.T) {
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"token.test": tokenSite{}})
	for _, scheme := range []string{"https", "http"} {
		t.Run(scheme, func(t *testing.T) {
			other := scheme + "://token.test/other"
			tab.Navigate(other)
			tab.WaitConnected()
			tab.Navigate(scheme + "://token.test/")
			tab.WaitConnected()
			raw, err := e2etest.EvalE[string](tab, `window.tryTokens(`+jsString(other)+`)`)
			if err != nil {
				t.Fatalf("tryTokens: %v", err)
			}
			var ways map[string]string
			if err := json.Unmarshal([]byte(raw), &ways); err != nil {
				t.Fatalf("tryTokens answered %q: %v", raw, err)
			}
			if len(ways) != 9 {
				t.Fatalf("tryTokens tried %d ways, want 9: %s", len(ways), raw)
			}
			for name, res := range ways {
				closed := strings.HasPrefix(res, "no ")
				if name == "fetch with a navigation's headers" && scheme == "http" {
					t.Logf("%s (open over http, proxy/html.go): %s", name, res)
					continue
				}
				if !closed {
					t.Errorf("%s: %s", name, res)
				}
			}

			// A token the page got anyway opens one session; a second socket is refused.
			req, _ := http.NewRequest("GET", scheme+"://token.test/stolen", nil)
			req.Header.Set("Sec-Fetch-Dest", "document")
			req.Header.Set("Upgrade-Insecure-Requests", "1")
			resp, err := p.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			m := regexp.MustCompile(`data-remixproxy="([^"]+)"`).FindSubmatch(body)
			if m == nil {
				t.Fatalf("no token in the page the test fetched as a navigation: %s", head(string(body), 300))
			}
			got, err := e2etest.EvalE[string](tab, `window.twice(`+jsString(html.UnescapeString(string(m[1])))+`)`)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, "first: welcome") || !strings.Contains(got, "second: closed 4403") || strings.Contains(got, "first closed") {
				t.Errorf("two sockets with one token: %s; want the first welcomed and kept, the second refused (4403)", got)
			}
			if !e2etest.Eval[bool](tab, `!!document.querySelector(`+jsString(e2etest.ConnectedSelector)+`)`) {
				t.Errorf("the page's own page agent is not connected after the attempts")
			}
		})
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
