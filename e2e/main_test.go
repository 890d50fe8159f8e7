package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// world is shared by every test in the package: the sites, the proxy, and one Chromium per mode.
var world = e2etest.NewWorld(addSites)

func TestMain(m *testing.M) { world.Main(m) }

// addSites wires the test sites, one per feature file.
func addSites(s *e2etest.Sites) error {
	s.Handle("plain.test", plainSite())
	s.Handle("csp.test", cspSite())
	s.Handle("enc.test", encSite())
	s.Handle("charset.test", charsetSite())
	s.Handle("ws.test", wsSite())
	s.Handle("sse.test", newSSESite())
	s.Handle("dl.test", dlSite())
	s.Handle("bytes.test", bytesSite())
	s.Handle("redir.test", redirSite())
	s.Handle("cookie.test", cookieSite())
	s.HandleBadCert("badcert.test", plainSite())
	s.Handle("sw.test", swSite())
	s.Handle("corpus.test", corpusSite())
	return nil
}

// pageScriptRan is set by every test page from its own script (nonce'd or hashed as its CSP
// needs), so a test can tell the page's scripts still ran.
const pageScriptRan = `document.body.dataset.pageScript === 'ran'`

// load is what a test reads from one page load.
type load struct {
	tab        *e2etest.Tab
	status     int64
	headers    map[string]string
	title      string
	text       string
	scriptRan  bool
	connected  bool
	hasScript  bool // a <script data-remixproxy> is still in the document (it removes itself when it runs)
	problems   []e2etest.Problem
	consoleLog string
}

// loadPage navigates tab to url and reads it. With waitAgent, it first waits for the page agent
// to connect (failing the test if it does not).
func loadPage(t *testing.T, tab *e2etest.Tab, url string, waitAgent bool) load {
	t.Helper()
	resp := tab.Navigate(url)
	if waitAgent {
		tab.WaitConnected()
	}
	l := load{
		tab:       tab,
		status:    resp.Status,
		headers:   map[string]string{},
		title:     tab.Title(),
		text:      tab.BodyText(),
		scriptRan: e2etest.Eval[bool](tab, `!!document.body && `+pageScriptRan),
		connected: tab.Connected(),
		hasScript: e2etest.Eval[bool](tab, `document.querySelector('script[data-remixproxy]') !== null`),
		problems:  tab.Problems(),
	}
	for k, v := range resp.Headers {
		l.headers[strings.ToLower(k)] = fmt.Sprint(v)
	}
	l.consoleLog = tab.ConsoleLog()
	return l
}

// loadBoth loads url directly and through the proxy (waiting for the page agent there), in new
// tabs of this test.
func loadBoth(t *testing.T, url string) (direct, proxied load) {
	t.Helper()
	direct = loadPage(t, world.DirectTab(t), url, false)
	proxied = loadPage(t, world.ProxiedTab(t), url, true)
	return direct, proxied
}

// checkLikeDirect asserts what every test page must show through the proxy: the same status,
// title and text as directly, the page's own script ran in both, the page agent connected, and
// no console error, exception or CSP violation that the direct load did not have.
func checkLikeDirect(t *testing.T, direct, proxied load) {
	t.Helper()
	if len(direct.problems) > 0 {
		t.Errorf("the test page itself has problems when loaded directly (fix the page): %v", direct.problems)
	}
	if proxied.status != direct.status {
		t.Errorf("status: proxied %d, direct %d", proxied.status, direct.status)
	}
	if proxied.title != direct.title {
		t.Errorf("title: proxied %q, direct %q", proxied.title, direct.title)
	}
	if proxied.text != direct.text {
		t.Errorf("body text differs:\nproxied: %q\ndirect:  %q", proxied.text, direct.text)
	}
	if !direct.scriptRan {
		t.Errorf("the page's own script did not run when loaded directly (fix the page)")
	}
	if !proxied.scriptRan {
		t.Errorf("the page's own script did not run through the proxy\nconsole:\n%s", proxied.consoleLog)
	}
	if !proxied.connected {
		t.Errorf("the page agent is not connected through the proxy\n%s", proxied.tab.Diagnose())
	}
	if proxied.hasScript {
		t.Errorf("the injected <script data-remixproxy> is still in the document: it did not run (it removes itself when it runs)")
	}
	if added := e2etest.NewProblems(direct.problems, proxied.problems); len(added) > 0 {
		t.Errorf("the proxy added problems:\n%s\nfull console:\n%s", joinProblems(added), proxied.consoleLog)
	}
}

func joinProblems(ps []e2etest.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

// htmlPage writes a UTF-8 HTML response.
func htmlPage(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, body)
}

// head is s cut to n bytes, for failure messages.
func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
