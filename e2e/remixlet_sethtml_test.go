package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// dom.setHTML against every vector of DOMPurify's test suite: one remixlet sets each payload as
// the content of its own element on one page, in real Chromium through the proxy. No script may
// run (the page's alert, confirm, prompt and print set a canary, and no dialog may open), and
// nothing may reach any host the vectors name (each is a witness here) or the witness.

var xssVectorsFile = sharedCorpusFile("xss/dompurify-vectors.json")

type xssVector struct {
	Title   string `json:"title"`
	Payload string `json:"payload"`
}

// xssHosts are the hosts the vectors' addresses name, served by witnesses.
var xssHosts = []string{"witness.test", "www.w3.org", "example.com", "html5sec.org", "www.example.org",
	"www.wapforum.org", "example.org", "google.com", "foo.bar", "attacker.org", "code.jquery.com",
	"ha.ckers.org", "evil.com", "www.google.com"}

func xssSite(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/xss" {
			// Relative addresses in the vectors resolve to the page's origin, which the address
			// rule allows: they are answered with nothing.
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "<div class=v id=v-%d></div>\n", i)
		}
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>XSS</title><link rel="icon" href="https://xss.test/favicon.ico">
<script>
window.__pwned = 0;
window.__pwnedBy = [];
for (const name of ['alert', 'confirm', 'prompt', 'print']) {
  window[name] = function (x) { window.__pwned++; window.__pwnedBy.push(name + ':' + String(x)); };
}
</script></head>
<body><h1>XSS</h1><p id="done"></p>
`+b.String()+`
</body></html>`)
	})
}

func TestRemixletSetHTMLWithEveryDOMPurifyVector(t *testing.T) {
	raw, err := os.ReadFile(xssVectorsFile)
	if err != nil {
		noCorpus(t, "no XSS vectors at %s (the shared corpus is not checked out here; see ../shared/corpus/README.md): %v", xssVectorsFile, err)
	}
	var vectors []xssVector
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	payloads := make([]string, len(vectors))
	for i, v := range vectors {
		payloads[i] = v.Payload
	}
	pj, _ := json.Marshal(payloads)

	wit := &witness{}
	hosts := map[string]http.Handler{"xss.test": xssSite(len(vectors))}
	for _, h := range xssHosts {
		hosts[h] = wit
	}
	sites, p, tab := e2etest.StartProxied(t, hosts, e2etest.WithStore())
	st := p.Store
	script := `const P = ` + string(pj) + `;
const errs = [];
for (let i = 0; i < P.length; i++) {
  try { await dom.setHTML(await dom.query('#v-' + i), P[i]); }
  catch (e) { errs.push(i + ': ' + e.message); }
}
await dom.setText(await dom.query('#done'), JSON.stringify(errs));
`
	rx := saveUnchecked(t, st, "xss vectors", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "xss vectors", "description": "setHTML with every DOMPurify vector.", "api": 1, "matches": ["https://xss.test/*"], "permissions": []}`),
		sandbox.ScriptFile:   []byte(script),
	})
	tab.Navigate("https://xss.test/xss")
	tab.WaitConnected()
	if err := waitTrue(tab, 60*time.Second, `document.getElementById('done').textContent !== ''`); err != nil {
		t.Fatalf("the remixlet did not finish: %v\nlog:\n%s\nproxy:\n%s", err, remixletLog(t, st, rx.ID), tail(p.Logs(), 2000))
	}
	var errs []string
	if err := json.Unmarshal([]byte(e2etest.Eval[string](tab, `document.getElementById('done').textContent`)), &errs); err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Errorf("%d setHTML calls failed: %s", len(errs), strings.Join(errs, "\n"))
	}
	// Give anything queued (onerror, onload, animations, focus) time to run.
	e2etest.Eval[bool](tab, `(() => { document.querySelectorAll('[autofocus], input, a, button').forEach((e) => e.focus && e.focus()); window.scrollTo(0, document.body.scrollHeight); return true; })()`)
	time.Sleep(1500 * time.Millisecond)

	if n := e2etest.Eval[int](tab, `window.__pwned`); n != 0 {
		t.Errorf("BUG: script ran %d times: %v", n, e2etest.Eval[[]string](tab, `window.__pwnedBy`))
	}
	if c := tab.ConsoleLog(); strings.Contains(c, "dialog.") {
		t.Errorf("BUG: a dialog opened:\n%s", c)
	}
	bad := e2etest.Eval[[]string](tab, `[...document.querySelectorAll('.v *')].filter((e) =>
	  ['script', 'iframe', 'object', 'embed', 'style', 'link', 'meta', 'base', 'form', 'use', 'image', 'foreignObject', 'animate', 'set', 'math', 'template', 'noscript'].includes(e.localName) ||
	  [...e.attributes].some((a) => /^on|^style$|^srcset$|^xlink:|^formaction$|^action$/i.test(a.name) || /^\s*(javascript|vbscript|data:text)/i.test(a.value))
	).map((e) => e.outerHTML.slice(0, 200))`)
	if len(bad) > 0 {
		t.Errorf("BUG: %d refused elements or attributes were inserted:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	kept := e2etest.Eval[int](tab, `[...document.querySelectorAll('.v')].filter((e) => e.childNodes.length > 0).length`)
	t.Logf("%d vectors, %d left some content after filtering", len(vectors), kept)
	if kept < len(vectors)/3 {
		t.Errorf("only %d of %d vectors kept any content: the filter drops too much to be useful", kept, len(vectors))
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(remixletLog(t, st, rx.ID), "refused: dom.setHTML: left out"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the remixlet's log does not list what was left out:\n%s", remixletLog(t, st, rx.ID))
			break
		}
	}
	n := 0
	for _, h := range xssHosts {
		n += sites.HostRequests(h)
	}
	if n != 0 || len(wit.requests()) != 0 {
		t.Errorf("BUG: requests reached the witnesses (%d): %s", n, strings.Join(wit.requests(), "\n"))
	}
	if strings.Contains(p.Logs(), "upstream failed\" url=https://xss.test") {
		t.Logf("proxy log: %s", tail(p.Logs(), 1000))
	}
}
