package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// TestRedteamPageGetsNoTokenFromTheSWRelay: the service-worker relay (https://remix.proxy/sw/inject,
// proxy/swshim.go) injects the bootstrap into a document a worker serves from its cache. It
// answers the worker's origin with CORS, so a page script of that origin — no worker needed —
// could post any HTML there and read a fresh page token from the answer: an agent session of
// its own, each call a new one (the ways of e2e/hostile_token_test.go all closed, this one
// open). Only the shim the proxy put in a worker script the browser fetched as one may use it.
func TestRedteamPageGetsNoTokenFromTheSWRelay(t *testing.T) {
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"token.test": tokenSite{}})
	tab.Navigate("https://token.test/")
	tab.WaitConnected()
	got, err := e2etest.EvalE[string](tab, `(async () => {
  const out = [];
  const ways = {
    'the page itself': {'content-type': 'application/octet-stream', 'x-remixproxy-headers': '{"content-type":"text/html"}'},
    'the page, a made-up worker key': {'content-type': 'application/octet-stream', 'x-remixproxy-headers': '{"content-type":"text/html"}', 'x-remixproxy-sw': 'AAAA'},
  };
  for (const [name, headers] of Object.entries(ways)) {
    let html = '';
    try {
      const r = await fetch('https://remix.proxy/sw/inject?url=' + encodeURIComponent(location.href), {method: 'POST', body: '<!doctype html><html><head></head><body>x</body></html>', headers, credentials: 'omit', cache: 'no-store', mode: 'cors'});
      html = r.ok ? await r.text() : 'status ' + r.status;
    } catch (e) { out.push(name + ': no copy (' + e.name + ')'); continue; }
    const tok = tokenIn(html);
    out.push(name + ': ' + (tok ? 'token; socket: ' + await sock(tok) : 'no token (' + html.slice(0, 80) + ')'));
  }
  return out.join('\n');
})()`)
	if err != nil {
		t.Fatalf("relay attempts: %v", err)
	}
	t.Logf("attempts:\n%s", got)
	for _, line := range strings.Split(got, "\n") {
		if !strings.Contains(line, ": no ") {
			t.Errorf("a page got a token from the service-worker relay: %s", line)
		}
	}
	if !e2etest.Eval[bool](tab, `!!document.querySelector(`+jsString(e2etest.ConnectedSelector)+`)`) {
		t.Errorf("the page's own page agent is not connected after the attempts")
	}
}
