package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// TestMagicHostSurfaces is the inventory of remix.proxy's answers as a hostile page meets them
// (red-team pass 5c): asked with a foreign Origin, no answer but the agent script (public) lets
// another origin read it (the service-worker relay answers its claimed origin, which must be
// the page's own, and then wants the worker key: TestSWInjectNeedsTheWorkerKey); every
// redirect stays on remix.proxy, however the path is spelled; no answer reflects markup from
// the address; every page served (2xx) declares its type (nosniff), every HTML one but the
// panel (which every page frames, by design) refuses framing, and none but the agent script
// and the public CA certificate may be kept by a cache. Redirects and errors (ServeMux's
// cleaned-path redirects, 404, 426) carry no page and no data, and are never kept, sniffed or
// framed.
func TestMagicHostSurfaces(t *testing.T) {
	f := newFixture(t, fixtureOpts{onlyResolved: true, config: func(c *Config) { c.Store = openApprovalStore(t) }})
	paths := []string{
		"/", "/cert", "/cert/remixproxy-ca.pem", "/panel", "/panel.js", "/panel.css", "/panel/confirm", "/confirm.js",
		f.srv.boot.path, "/sw/inject?url=https://evil.example/", "/agent/ws", "/panel/ws",
		"/manager", "/manager/", "/manager/new", "/manager/data", "/manager/settings", "/manager/traces",
		"/manager/traces.json", "/manager/traces/export.json", "/manager/r/rx_0", "/manager/approval/ap_0",
		"/manager?m=<script>", "/nope",
		// Spellings that a path cleaner might turn into another host.
		"//evil.example/", "//evil.example/manager", "/\\evil.example/", "/.//evil.example/", "/manager/..//evil.example/",
		"/manager/r/x/../..//evil.example", "/%2fevil.example/", "/manager//", "/./manager",
	}
	for _, scheme := range []string{"https", "http"} {
		for _, p := range paths {
			u := scheme + "://remix.proxy" + p
			resp, body := f.get(u, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Dest", "empty")
			h := resp.Header
			if acao := h.Get("Access-Control-Allow-Origin"); acao != "" && p != f.srv.boot.path && !strings.HasPrefix(p, "/sw/inject") {
				t.Errorf("%s: Access-Control-Allow-Origin %q for a foreign page", u, acao)
			}
			if loc := h.Get("Location"); loc != "" {
				base, _ := weburl.Parse(u)
				to, err := weburl.Resolve(base, loc)
				if err != nil || to.HostKey() != "remix.proxy" {
					t.Errorf("%s: redirects to %q, off remix.proxy", u, loc)
				}
			}
			if strings.Contains(string(body), "<script>") {
				t.Errorf("%s: the answer reflects the address's markup", u)
			}
			if resp.StatusCode < 200 || resp.StatusCode > 299 {
				// A redirect or an error (ServeMux's, http.Error's, a handler's): never kept,
				// sniffed or framed (ownAnswers, OPEN-ITEMS 117).
				csp := h.Get("Content-Security-Policy")
				if !strings.Contains(h.Get("Cache-Control"), "no-store") || h.Get("X-Content-Type-Options") != "nosniff" ||
					(h.Get("X-Frame-Options") != "DENY" && !strings.Contains(csp, "frame-ancestors 'none'")) {
					t.Errorf("%s: %d with Cache-Control %q, X-Content-Type-Options %q, X-Frame-Options %q, CSP %q: want no-store, nosniff and no framing",
						u, resp.StatusCode, h.Get("Cache-Control"), h.Get("X-Content-Type-Options"), h.Get("X-Frame-Options"), csp)
				}
				continue
			}
			ct := h.Get("Content-Type")
			if resp.StatusCode != http.StatusSwitchingProtocols && len(body) > 0 && h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s: %d %s without nosniff", u, resp.StatusCode, ct)
			}
			if strings.HasPrefix(ct, "text/html") && p != "/panel" {
				csp := h.Get("Content-Security-Policy")
				if h.Get("X-Frame-Options") != "DENY" && !strings.Contains(csp, "frame-ancestors 'none'") {
					t.Errorf("%s: an HTML page any site may frame (CSP %q)", u, csp)
				}
			}
			if cc := h.Get("Cache-Control"); p != f.srv.boot.path && p != "/cert/remixproxy-ca.pem" && len(body) > 0 && !strings.Contains(cc, "no-store") && !strings.Contains(cc, "no-cache") {
				t.Errorf("%s: %d Cache-Control %q: a cache may keep it", u, resp.StatusCode, cc)
			}
		}
	}
}
