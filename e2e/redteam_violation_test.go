package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// violationSite's pages set a Content-Security-Policy the proxy does not widen, blocking or
// reporting the page agent's socket, and collect the securitypolicyviolation events the
// browser gives the page: a blocked (or, report-only, reported) request's blockedURI is its
// whole address, query included. Each page keeps what it saw in window.seen, and window.use
// opens a session with a token it found, from a same-origin frame that has no such policy.
type violationSite struct{}

const violationScript = `<script>
window.seen = [];
document.addEventListener('securitypolicyviolation', (e) => window.seen.push(e.blockedURI), true);
window.tokenSeen = () => {
  for (const u of window.seen) {
    const m = /[?&]t=([^&]+)/.exec(u);
    if (m) return decodeURIComponent(m[1]);
  }
  return '';
};
window.use = (tok) => new Promise((res) => {
  const f = document.createElement('iframe');
  f.src = '/frame';
  f.onload = () => {
    const W = f.contentWindow.WebSocket;
    const ws = new W((location.protocol === 'https:' ? 'wss' : 'ws') + '://remix.proxy/agent/ws', 'remixproxy~' + tok);
    ws.onopen = () => ws.send(JSON.stringify({type: 'hello', url: location.href, title: 'x', top: true, ready: 'complete'}));
    ws.onmessage = (e) => res(JSON.parse(e.data).type);
    ws.onclose = (e) => res('closed ' + e.code);
    setTimeout(() => res('timeout'), 5000);
  };
  document.body.append(f);
});
</script>`

func (violationSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	head, body := "", "<p>A page that reads its agent's socket address from CSP violations.</p>"
	switch r.URL.Path {
	case "/frame":
		fmt.Fprint(w, `<!doctype html><title>frame</title>`)
		return
	case "/report-only":
		w.Header().Set("Content-Security-Policy-Report-Only", "connect-src 'self'")
	case "/meta-by-script":
		head = `<script>{const m = document.createElement('meta'); m.httpEquiv = 'Content-Security-Policy';
m.content = "connect-src 'self'"; document.head.append(m);}</script>`
	case "/meta-after-head":
		body = `<meta http-equiv="Content-Security-Policy" content="connect-src 'self'">` + body
	}
	fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>Violations</title>%s%s</head>%s</html>`,
		violationScript, head, body)
}

// TestRedteamViolationReportsCarryNoToken: a page whose own policy blocks or reports the page
// agent's socket — a Report-Only header the proxy leaves alone, a <meta> policy a page script
// adds after the page agent started, a <meta> after </head> that the parser moves into the head
// — is told the socket's address by the browser (securitypolicyviolation's blockedURI, and a
// report to its server). The address must hold no secret: a token read there opens a session
// of the page's own from a frame.
// (A Report-Only header is now widened as the enforced policy is, and reports nothing of the
// page agent: TestReportOnlyPolicyReportsNothingOfTheAgent.)
func TestRedteamViolationReportsCarryNoToken(t *testing.T) {
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"violation.test": violationSite{}})
	for _, path := range []string{"/meta-by-script", "/meta-after-head"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			tab.Navigate("https://violation.test" + path)
			tab.WaitFor(20*time.Second, "a violation report of the page agent's socket",
				`window.seen.some((u) => u.includes('remix.proxy/agent/ws'))`)
			seen := e2etest.Eval[[]string](tab, `window.seen`)
			tok := e2etest.Eval[string](tab, `window.tokenSeen()`)
			if tok == "" {
				return
			}
			got, err := e2etest.EvalE[string](tab, `window.use(`+jsString(tok)+`)`)
			if err != nil {
				t.Fatal(err)
			}
			t.Errorf("the page read its agent's token from a violation report (%q); a socket with it: %s", seen, got)
		})
	}
}
