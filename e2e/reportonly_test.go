package e2e

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// A page's Content-Security-Policy-Report-Only header was left as it came: the browser reported
// the page agent's bootstrap, script and socket to the site's report endpoint and to its
// scripts at every load, so a site learned that the person browses through the proxy without
// a script of its own (noticed in pass 4a). It is now widened as the enforced policy is.

// reportOnlySite serves a page under a report-only policy that allows only the page's own
// origin, with a report endpoint that keeps what it is sent, and a page script that keeps the
// securitypolicyviolation events it sees in window.seen.
type reportOnlySite struct {
	mu      sync.Mutex
	reports []string
}

func (s *reportOnlySite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/csp-report":
		b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		s.mu.Lock()
		s.reports = append(s.reports, string(b))
		s.mu.Unlock()
		return
	case "/watch.js": // the page's own scripts are its origin's, which its policy allows
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, `window.seen = []; document.addEventListener('securitypolicyviolation', (e) => window.seen.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sample), true);`)
		return
	case "/page.js":
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, `document.body.dataset.pageScript = 'ran';`)
		return
	}
	w.Header().Set("Content-Security-Policy-Report-Only", "default-src 'self'; script-src 'self' 'report-sample'; report-uri /csp-report")
	htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Reports</title>
<script src="/watch.js"></script>
</head><body><p>A page that reports what its policy would block.</p>
<script src="/page.js"></script>
</body></html>`)
}

func (s *reportOnlySite) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reports...)
}

// TestReportOnlyPolicyReportsNothingOfTheAgent: under a report-only policy, the page agent
// connects, and neither the page's scripts nor its report endpoint hear of its loads; the
// policy still reports what the page itself would break (an inline script the test adds), so it
// was widened, not dropped.
func TestReportOnlyPolicyReportsNothingOfTheAgent(t *testing.T) {
	site := &reportOnlySite{}
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"reports.test": site})
	tab.Navigate("https://reports.test/")
	tab.WaitConnected()
	// The page's own violation, reported after the agent's would have been: an inline script.
	e2etest.Eval[bool](tab, `(() => { const s = document.createElement('script'); s.textContent = 'window.pageOwnInline = true'; document.body.append(s); return true; })()`)
	tab.WaitFor(10*time.Second, "the page's own violation", `window.seen.some((v) => v.includes('inline'))`)
	for deadline := time.Now().Add(10 * time.Second); len(site.got()) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the report endpoint heard nothing, not even of the page's own violation")
		}
	}
	seen := e2etest.Eval[[]string](tab, `window.seen`)
	reports := site.got()
	// The page's own violation is the only one. Its report carries the policy as the page got
	// it, the proxy's sources included (as an enforced policy's reports always have): what a
	// report-only policy told the site at every load is now told only with the site's own
	// violations.
	if len(seen) != 1 || !strings.Contains(seen[0], "pageOwnInline") {
		t.Errorf("the page saw %d violations, want its own one: %q", len(seen), seen)
	}
	if len(reports) != 1 || !strings.Contains(reports[0], "pageOwnInline") {
		t.Errorf("the report endpoint got %d reports, want the page's own one:\n%s", len(reports), head(strings.Join(reports, "\n"), 3000))
	}
}
