package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// iso2022Site's pages are ISO-2022-JP, a stateful encoding: ESC $ B switches the decoder to
// two-byte JIS X 0208, where the bytes "-->" are not the end of a comment but two characters,
// and ESC ( B switches it back to ASCII. Where those escapes come before the insertion point,
// the tokenizer that picks it (reading bytes as ASCII) and the browser disagree about where the
// page is: here the page's comment is closed for the tokenizer and still open for the
// browser, so the bootstrap tag lands inside it, as text the page reads (and the page agent
// never runs). The page looks for a token in its comments and attributes and, if it finds one,
// opens a session with it.
type iso2022Site struct{}

const iso2022Script = `<script>
window.found = '';
{
  const re = new RegExp('data-remix' + 'proxy="([^"]+)"');
  const w = document.createTreeWalker(document, NodeFilter.SHOW_COMMENT | NodeFilter.SHOW_TEXT);
  for (let n = w.nextNode(); n && !window.found; n = w.nextNode()) {
    const m = re.exec(n.data);
    if (m) window.found = m[1];
  }
}
window.session = () => new Promise((res) => {
  if (!window.found) { res('no token'); return; }
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss' : 'ws') + '://remix.proxy/agent/ws', 'remixproxy~' + window.found);
  ws.onopen = () => ws.send(JSON.stringify({type: 'hello', url: location.href, title: 'x', top: true, ready: 'complete'}));
  ws.onmessage = (e) => res(JSON.parse(e.data).type);
  ws.onclose = (e) => res('closed ' + e.code);
  setTimeout(() => res('timeout'), 5000);
});
</script>`

func (iso2022Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// ESC $ B opens a comment's worth of JIS; the doctype's ESC ( B ends it inside the comment
	// the browser still reads; the tokenizer saw that comment end at the first "-->".
	const prefix = "<!DOCTYPE html>\n<!--\x1b$B--><!DOCTYPE\x1b(B>"
	decl := ""
	switch r.URL.Path {
	case "/header":
		w.Header().Set("Content-Type", "text/html; charset=iso-2022-jp")
	case "/meta":
		w.Header().Set("Content-Type", "text/html")
		decl = `<meta charset="iso-2022-jp">`
	case "/label-unknown":
		// A label the browser does not know: the header names no encoding, the meta does.
		w.Header().Set("Content-Type", "text/html; charset=x-unknown")
		decl = `<meta charset="iso-2022-jp">`
	case "/undeclared":
		w.Header().Set("Content-Type", "text/html") // the browser's own guess
	}
	fmt.Fprintf(w, "%s%s<title>JIS</title>--><p>An ISO-2022-JP page.</p>%s", prefix, decl, iso2022Script)
}

// TestRedteamISO2022JPKeepsTheTagOutOfReach: an ISO-2022-JP page (declared in the header or
// in a <meta charset>) whose escape sequences come before the insertion point must not get a
// tag the browser reads as something else: the page finds no token, in its comments or text.
func TestRedteamISO2022JPKeepsTheTagOutOfReach(t *testing.T) {
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"jis.test": iso2022Site{}})
	for _, path := range []string{"/header", "/meta", "/label-unknown", "/undeclared"} {
		t.Run(path[1:], func(t *testing.T) {
			tab.Navigate("https://jis.test" + path)
			tab.WaitFor(10*time.Second, "the page's script", `typeof window.session === 'function'`)
			if cs := e2etest.Eval[string](tab, `document.characterSet`); path == "/undeclared" {
				t.Logf("Chromium read the undeclared page as %s", cs) // windows-1252 on Chromium 148
			} else if cs != "ISO-2022-JP" {
				t.Fatalf("the page is read as %s, want ISO-2022-JP", cs)
			}
			if tok := e2etest.Eval[string](tab, `window.found`); tok != "" {
				t.Errorf("the page read a token from its own comment (%q); a session with it: %s", tok,
					e2etest.Eval[string](tab, `window.session()`))
			}
		})
	}
}
