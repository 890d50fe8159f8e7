package e2e

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// gadgetSite has an HTML-injection bug under a policy that allows scripts from its own origin
// only and stylesheets likewise: the proxy adds https://remix.proxy to script-src for the page
// agent, and the injected markup loads the page agent's public script a second time, with
// first-frame sheets of its own in data-remixproxy-sheets — a constructable stylesheet, which
// style-src does not govern.
type gadgetSite struct{ agentSrc atomic.Value }

func (s *gadgetSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	prefix := ""
	if r.URL.Path == "/uninjected" {
		// An escape before the insertion point and no charset in the header: the proxy lets
		// the page through without a page agent (rewrite.Options.EscapesInert).
		w.Header().Set("Content-Type", "text/html")
		prefix = "<!--\x1b(B-->"
	}
	w.Header().Set("Content-Security-Policy", "script-src 'self'; style-src 'self'")
	injected := ""
	if src, _ := s.agentSrc.Load().(string); src != "" {
		injected = fmt.Sprintf(`<script src="%s" data-remixproxy="x" data-remixproxy-sheets="[{&quot;remixlet&quot;:&quot;rx_0123456789abcdef0123456789abcdef&quot;,&quot;version&quot;:1,&quot;css&quot;:&quot;body{background-color:rgb(255, 0, 0)}&quot;}]"></script>`, src)
	}
	fmt.Fprintf(w, prefix+`<!DOCTYPE html><html><head><meta charset="utf-8"><title>Gadget</title></head>
<body><p>Search results for: %s</p></body></html>`, injected)
}

// TestRedteamAgentScriptIsNoStyleGadget: markup injected into a page cannot use the page
// agent's public script (allowed in the page's script-src for the real one) to put its own
// stylesheet into the page: a second page agent in a window starts nothing.
func TestRedteamAgentScriptIsNoStyleGadget(t *testing.T) {
	site := &gadgetSite{}
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"gadget.test": site})
	req, _ := http.NewRequest("GET", "https://gadget.test/", nil)
	req.Header.Set("Sec-Fetch-Dest", "document")
	resp, err := p.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`src="(https://remix\.proxy/agent/[0-9a-f]+\.js)"`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no external page agent in %s", head(string(body), 300))
	}
	site.agentSrc.Store(string(m[1]))

	for _, path := range []string{"/", "/uninjected"} {
		t.Run(path, func(t *testing.T) {
			tab.Navigate("https://gadget.test" + path + "?q=injection")
			if path == "/" {
				tab.WaitConnected()
			} else if e2etest.Eval[string](tab, `document.documentElement.outerHTML`) == "" || tab.HasLauncher() {
				t.Fatalf("a page agent runs in the page the proxy let through: the injected markup's own, its policy widened for it")
			}
			if bg := e2etest.Eval[string](tab, `getComputedStyle(document.body).backgroundColor`); bg == "rgb(255, 0, 0)" {
				t.Errorf("the injected markup's stylesheet applies through the page agent's script (body background %s)", bg)
			}
			if n := e2etest.Eval[int](tab, `document.adoptedStyleSheets.length`); n != 0 {
				t.Errorf("%d adopted stylesheets, want none", n)
			}
		})
	}
}
