package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/certs"
	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// rulesWorld is a proxy with a store in front of one HTTPS upstream answering for
// www/ads/cdn/witness.example.com (and the hosts given, under a certificate of a CA made for
// the test) and one plain-HTTP upstream for plain.test. The upstream records every request it
// gets.
type rulesWorld struct {
	*managerFixture
	mu   sync.Mutex
	seen []string // "METHOD host/path?query header-of-interest"
}

func newRulesWorld(t *testing.T, moreHosts ...string) *rulesWorld {
	w := &rulesWorld{}
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.seen = append(w.seen, fmt.Sprintf("%s %s%s x-test=%q accept-language=%q", r.Method, r.Host, r.URL.RequestURI(), r.Header.Get("X-Test"), r.Header.Get("Accept-Language")))
		w.mu.Unlock()
		rw.Header().Set("X-Remove-Me", "1")
		rw.Header().Set("Content-Security-Policy", "default-src 'self'")
		rw.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(rw, "upstream %s%s", r.Host, r.URL.Path)
	})
	tls, roots := tlsSite(t, siteHost, h)
	resolve := map[string]string{}
	for _, host := range []string{"www", "ads", "cdn", "witness"} {
		resolve[host+"."+siteHost+":443"] = tls[siteHost+":443"]
	}
	if len(moreHosts) > 0 {
		ca, _, err := certs.LoadOrCreate(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewUnstartedServer(h)
		ts.TLS = certs.NewIssuer(ca, 10).TLSConfig(moreHosts[0])
		ts.StartTLS()
		t.Cleanup(ts.Close)
		roots.AddCert(ca.Cert)
		for _, host := range moreHosts {
			resolve[host+":443"] = ts.Listener.Addr().String()
		}
	}
	w.managerFixture = newManagerFixture(t, fixtureOpts{resolve: merge(resolve, plainSite(t, "plain.test", h)), roots: roots})
	return w
}

func (w *rulesWorld) requests() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// seedRules stores and activates a remixlet with rules.json straight in the store, bypassing
// the save-time checks (as a hostile or damaged store would), then invalidates the rules.
func (w *rulesWorld) seedRules(name, matches, rules string) store.Remixlet {
	w.t.Helper()
	manifest := fmt.Sprintf(`{"name": %q, "api": 1, "matches": [%s], "permissions": [{"name": "netrules", "reason": "r"}]}`, name, matches)
	r, _ := storetest.Create(w.t, w.st, name, store.Files{"manifest.json": []byte(manifest), "script.js": []byte(testScript),
		"rules.json": []byte(rules)})
	w.srv.InvalidateNetRules()
	return r
}

// from returns the headers of a subresource request made by a page on pageHost.
func from(pageHost, dest string) []string {
	return []string{"Sec-Fetch-Dest", dest, "Sec-Fetch-Site", "same-site", "Referer", "https://" + pageHost + "/page"}
}

func (w *rulesWorld) logOf(id string) string {
	w.t.Helper()
	es, err := w.st.Log(context.Background(), id, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.Level + " " + e.Message + "\n")
	}
	return b.String()
}

const wwwMatches = `"https://www.example.com/*"`

func TestNetRulesBlock(t *testing.T) {
	w := newRulesWorld(t)
	w.seedRules("blocker", wwwMatches, `[{"id":1,"action":{"type":"block"},"condition":{"urlFilter":"||ads.example.com^","resourceTypes":["image"]}}]`)

	resp, body := w.get("https://ads.example.com/banner.png", from("www.example.com", "image")...)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Remixproxy") != "blocked" || !strings.Contains(string(body), "rule 1") || strings.Contains(string(body), "blocker") {
		t.Errorf("from its page: got %d %q %q, want a 403 blocked by rule 1 that names no remixlet", resp.StatusCode, resp.Header.Get("X-Remixproxy"), body)
	}
	if got := w.requests(); len(got) != 0 {
		t.Errorf("upstream got %v, want nothing", got)
	}
	// The same request from a page the remixlet does not run on, of another type, or with an
	// initiator that cannot be told, goes through.
	for _, hdr := range [][]string{
		{"Sec-Fetch-Dest", "image", "Sec-Fetch-Site", "cross-site", "Referer", "https://other.test/"},
		from("www.example.com", "script"),
		{"Sec-Fetch-Dest", "image", "Sec-Fetch-Site", "cross-site"},
	} {
		if resp, _ := w.get("https://ads.example.com/banner.png", hdr...); resp.StatusCode != http.StatusOK {
			t.Errorf("%v: got %d, want 200", hdr, resp.StatusCode)
		}
	}
}

func TestNetRulesRedirectAndUpgrade(t *testing.T) {
	w := newRulesWorld(t)
	w.seedRules("redirector", wwwMatches+`, "http://plain.test/*"`, `[
		{"id":1,"action":{"type":"redirect","redirect":{"url":"https://www.example.com/new.js"}},"condition":{"urlFilter":"||cdn.example.com/old.js","resourceTypes":["script"]}},
		{"id":2,"action":{"type":"upgradeScheme"},"condition":{"requestDomains":["plain.test"],"resourceTypes":["main_frame","image"]}}]`)

	resp, _ := w.get("https://cdn.example.com/old.js", from("www.example.com", "script")...)
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "https://www.example.com/new.js" {
		t.Errorf("GET: got %d Location %q, want 307 to https://www.example.com/new.js", resp.StatusCode, resp.Header.Get("Location"))
	}
	// A POST is never redirected.
	req, _ := http.NewRequest("POST", "https://cdn.example.com/old.js", strings.NewReader("x"))
	for i, h := 0, from("www.example.com", "script"); i < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	presp, err := w.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	presp.Body.Close()
	if presp.StatusCode != http.StatusOK {
		t.Errorf("POST: got %d, want 200 (not redirected)", presp.StatusCode)
	}
	// upgradeScheme: http → https, a navigation from its own page.
	resp, _ = w.get("http://plain.test/a?b=1", "Accept", "text/html", "Referer", "http://plain.test/")
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "https://plain.test/a?b=1" {
		t.Errorf("upgrade: got %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestNetRulesModifyHeaders(t *testing.T) {
	w := newRulesWorld(t)
	w.seedRules("headers", wwwMatches, `[
		{"id":1,"action":{"type":"modifyHeaders","requestHeaders":[{"header":"X-Test","operation":"set","value":"from-rule"},{"header":"Accept-Language","operation":"append","value":"fr"}],
			"responseHeaders":[{"header":"X-Remove-Me","operation":"remove"},{"header":"X-Added","operation":"set","value":"yes"}]},"condition":{"requestDomains":["cdn.example.com"]}}]`)
	resp, _ := w.get("https://cdn.example.com/lib.js", append(from("www.example.com", "script"), "Accept-Language", "en")...)
	if resp.Header.Get("X-Remove-Me") != "" || resp.Header.Get("X-Added") != "yes" || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("response headers %v: want X-Remove-Me removed, X-Added set, CSP kept", resp.Header)
	}
	got := w.requests()
	if len(got) != 1 || !strings.Contains(got[0], `x-test="from-rule" accept-language="en, fr"`) {
		t.Errorf("upstream saw %v, want X-Test set and fr appended", got)
	}
}

// A store holding hostile rules (saved around the checks): each is left out when installed,
// with a log line, and the good rule beside them still applies.
func TestNetRulesRefusedAtInstall(t *testing.T) {
	w := newRulesWorld(t)
	rx := w.seedRules("hostile", wwwMatches, `[
		{"id":1,"action":{"type":"block"},"condition":{"urlFilter":"/blocked.png","resourceTypes":["image"]}},
		{"id":2,"action":{"type":"redirect","redirect":{"url":"https://witness.example.com/steal"}},"condition":{"urlFilter":"/a.js"}},
		{"id":3,"action":{"type":"redirect","redirect":{"url":"http://www.example.com/b.js"}},"condition":{"urlFilter":"/b.js"}},
		{"id":4,"action":{"type":"redirect","redirect":{"url":"https://www.example.com/c.js"}},"condition":{"urlFilter":"/c.js","requestMethods":["post"]}},
		{"id":5,"action":{"type":"modifyHeaders","responseHeaders":[{"header":"content-security-policy","operation":"remove"}]},"condition":{"urlFilter":"/d.js"}},
		{"id":6,"action":{"type":"block"},"condition":{"urlFilter":"/e.png","initiatorDomains":["other.test"]}}]`)

	if resp, _ := w.get("https://cdn.example.com/blocked.png", from("www.example.com", "image")...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the good rule: got %d, want 403", resp.StatusCode)
	}
	for _, path := range []string{"/a.js", "/b.js", "/d.js"} {
		resp, _ := w.get("https://cdn.example.com"+path, from("www.example.com", "script")...)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s: got %d (CSP %q), want 200 with the CSP untouched", path, resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
		}
	}
	if resp, _ := w.get("https://cdn.example.com/e.png", "Sec-Fetch-Dest", "image", "Sec-Fetch-Site", "cross-site", "Referer", "https://other.test/"); resp.StatusCode != http.StatusOK {
		t.Errorf("another site's request: got %d, want 200", resp.StatusCode)
	}
	for _, r := range w.requests() {
		if strings.Contains(r, "witness") {
			t.Errorf("the witness got %s", r)
		}
	}
	log := w.logOf(rx.ID)
	for _, want := range []string{"rule 2 (rules[1].action.redirect.url)", "rule 3 (rules[2].action.redirect.url)",
		"rule 4 (rules[3].condition.requestMethods[0])", "rule 5 (rules[4].action.responseHeaders[0].header)",
		"rule 6 (rules[5].condition.initiatorDomains[0])", "1 rules in effect"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestNetRulesOffWhenPausedSwitchedOffOrOnTheProxy(t *testing.T) {
	w := newRulesWorld(t)
	rx := w.seedRules("everywhere", `"<all_urls>"`, `[{"id":1,"action":{"type":"block"},"condition":{"urlFilter":"/x.png"}},
		{"id":2,"action":{"type":"block"},"condition":{"urlFilter":"||remix.proxy^","resourceTypes":["main_frame","xmlhttprequest","script","image","other"]}}]`)
	get := func() int {
		resp, _ := w.get("https://ads.example.com/x.png", from("www.example.com", "image")...)
		return resp.StatusCode
	}
	if got := get(); got != http.StatusForbidden {
		t.Fatalf("active: got %d, want 403", got)
	}
	// The proxy's own host is never touched.
	if resp, _ := w.get("https://remix.proxy/cert", "Sec-Fetch-Dest", "document", "Sec-Fetch-Site", "none"); resp.StatusCode != http.StatusOK {
		t.Errorf("remix.proxy: got %d, want 200", resp.StatusCode)
	}
	ctx := context.Background()
	if err := w.st.PauseSite(ctx, "www.example.com"); err != nil {
		t.Fatal(err)
	}
	w.srv.InvalidateNetRules()
	if got := get(); got != http.StatusOK {
		t.Errorf("paused site: got %d, want 200", got)
	}
	if err := w.st.ResumeSite(ctx, "www.example.com"); err != nil {
		t.Fatal(err)
	}
	if err := w.st.SetEnabled(ctx, rx.ID, false); err != nil {
		t.Fatal(err)
	}
	w.srv.InvalidateNetRules()
	if got := get(); got != http.StatusOK {
		t.Errorf("switched off: got %d, want 200", got)
	}
	if err := w.st.SetEnabled(ctx, rx.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := w.st.SetArchived(ctx, rx.ID, true); err != nil {
		t.Fatal(err)
	}
	w.srv.InvalidateNetRules()
	if got := get(); got != http.StatusOK {
		t.Errorf("archived: got %d, want 200", got)
	}
}

func TestNetRulesManagerTable(t *testing.T) {
	w := newRulesWorld(t)
	rx := w.seedRules("table", wwwMatches, `[
		{"id":7,"priority":2,"action":{"type":"redirect","redirect":{"url":"https://www.example.com/scripts/replacement.js?v=2"}},"condition":{"urlFilter":"||cdn.example.com/lib.js","resourceTypes":["script"]}},
		{"id":8,"action":{"type":"redirect","redirect":{"url":"https://witness.example.com/x"}},"condition":{"urlFilter":"/y.js"}}]`)
	body := w.page("https://remix.proxy/manager/r/" + rx.ID)
	for _, want := range []string{"Network rules", "<td>7</td><td>2</td><td>redirect",
		"https://www.example.com/scripts/replacement.js?v=2", "address matches ||cdn.example.com/lib.js", "types script",
		"left out:</strong> rules[1].action.redirect.url: goes to witness.example.com"} {
		if !strings.Contains(body, want) {
			t.Errorf("manager page lacks %q", want)
		}
	}
}

// A change made by another process (the CLI) reaches the proxy without an invalidation.
func TestNetRulesSeeOutsideChanges(t *testing.T) {
	w := newRulesWorld(t)
	rx := w.seedRules("outside", wwwMatches, `[{"id":1,"action":{"type":"block"},"condition":{"urlFilter":"/x.png"}}]`)
	if resp, _ := w.get("https://ads.example.com/x.png", from("www.example.com", "image")...); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("got %d, want 403", resp.StatusCode)
	}
	if err := w.st.SetEnabled(context.Background(), rx.ID, false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, _ := w.get("https://ads.example.com/x.png", from("www.example.com", "image")...)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the switched-off remixlet's rule still applies")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
