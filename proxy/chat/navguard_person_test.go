package chat

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
)

// personClicks is the page agent's report that the person clicked, on a page of origin, a link
// to rawURL (as the "person" message reaches the hub).
func personClicks(t *testing.T, g *navGuard, origin, rawURL string) {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"type": "person", "url": rawURL})
	if err != nil {
		t.Fatal(err)
	}
	g.personReported(origin, raw)
}

// TestNavPersonClicks (OPEN-ITEMS 13): on a page the agent loaded (its lease), a navigation off
// the site with the person's activation (Sec-Fetch-User: ?1) goes only to an address the page
// agent reported the person clicking, from a page of the navigation's Referer origin, within
// personNavTTL: a link's exact address, a form's origin and path. Activation alone — a site's
// "click anywhere to continue" script, the panel's typing — is held, and so is a report of
// another address, another origin's report (with no Referer, one not of the lease's origins),
// and an old one. A redirect of the person's click
// is theirs too, and a report that trails the request by a moment still counts. (Before the
// fix, every navigation with ?1 went.)
func TestNavPersonClicks(t *testing.T) {
	leaving := "https://example.com/leaving?to=x"
	cf, g, clk := newLeasedPage(t, leaving)

	const passed = http.StatusBadGateway // let go: the reverse proxy's error for witness.test
	clicked := func(to, fetchSite string) int {
		t.Helper()
		resp, _ := cf.get(to, append(testsite.NavHeaders(fetchSite, leaving), "Sec-Fetch-User", "?1")...)
		if resp.StatusCode == http.StatusForbidden {
			return http.StatusForbidden
		}
		if fetchSite == "cross-site" {
			return passed
		}
		return resp.StatusCode
	}
	for _, tt := range []struct {
		name     string
		report   func()
		to       string
		want     int
		skipTime time.Duration
	}{
		{"activation alone (a click anywhere, the panel)", func() {}, "https://witness.test/c?d=4711", http.StatusForbidden, 0},
		{"the person's click on that link", func() { personClicks(t, g, "https://example.com", "https://witness.test/mine") }, "https://witness.test/mine", passed, 0},
		{"a click on another link", func() { personClicks(t, g, "https://example.com", "https://witness.test/other") }, "https://witness.test/c?d=4711", http.StatusForbidden, 0},
		{"another origin's report", func() { personClicks(t, g, "https://evil.example.com", "https://witness.test/c?d=1") }, "https://witness.test/c?d=1", http.StatusForbidden, 0},
		{"an old report", func() { personClicks(t, g, "https://example.com", "https://witness.test/old") }, "https://witness.test/old", http.StatusForbidden, personNavTTL},
		{"the person's search form", func() {
			g.personReported("https://example.com", json.RawMessage(`{"type":"person","url":"https://witness.test/search?x=1","form":true}`))
		}, "https://witness.test/search?q=typed", passed, 0},
		{"a form's report is for its own path", func() {
			g.personReported("https://example.com", json.RawMessage(`{"type":"person","url":"https://witness.test/search","form":true}`))
		}, "https://witness.test/collect?q=typed", http.StatusForbidden, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.report()
			clk.skip(tt.skipTime)
			if got := clicked(tt.to, "cross-site"); got != tt.want {
				t.Errorf("status = %d, want %d", got, tt.want)
			}
		})
	}

	// Through the site's own redirector: the person's click is followed to where it leads; a
	// script's navigation with activation is held at the redirect.
	out := "https://example.com/out?to=" + url.QueryEscape("https://witness.test/via")
	personClicks(t, g, "https://example.com", out)
	resp, _ := cf.get(out, append(testsite.NavHeaders("same-origin", leaving), "Sec-Fetch-User", "?1")...)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("the person's click through the redirector: %d, want 302", resp.StatusCode)
	}
	if got := clicked(resp.Header.Get("Location"), "cross-site"); got != passed {
		t.Errorf("the redirect of the person's click: %d, want let go", got)
	}
	script := "https://example.com/out?to=" + url.QueryEscape("https://witness.test/c?d=4711")
	if got := clicked(script, "same-origin"); got != http.StatusForbidden {
		t.Errorf("a script's navigation with activation through the redirector: %d, want 403", got)
	}

	// A no-referrer policy: the report must come from the lease's own origin.
	noRef := append(testsite.NavHeaders("cross-site", ""), "Sec-Fetch-User", "?1")
	personClicks(t, g, "https://evil.example.com", "https://witness.test/nr1")
	if resp, _ := cf.get("https://witness.test/nr1", noRef...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("no Referer, another origin's report: %d, want 403", resp.StatusCode)
	}
	personClicks(t, g, "https://example.com", "https://witness.test/nr2")
	if resp, _ := cf.get("https://witness.test/nr2", noRef...); resp.StatusCode == http.StatusForbidden {
		t.Errorf("no Referer, the page's own report: %d, want let go", resp.StatusCode)
	}

	// The report trails the request (the socket and the request race).
	go func() {
		time.Sleep(personNavRace / 3)
		personClicks(t, g, "https://example.com", "https://witness.test/late")
	}()
	if got := clicked("https://witness.test/late", "cross-site"); got != passed {
		t.Errorf("a click whose report trails the request: %d, want let go", got)
	}
}

// TestPersonReportsBounded: the reports kept are bounded, and a page that floods reports pushes
// out only its own origin's, not the person's click reported by another site's page.
func TestPersonReportsBounded(t *testing.T) {
	var g navGuard
	g.live.Store(1) // an expectation is live: reports are kept (TestPersonReportsOnlyWithAnExpectation)
	personClicks(t, &g, "https://news.test", "https://other.test/story")
	for i := 0; i < 10*maxPersonNavs; i++ {
		personClicks(t, &g, "https://spam.test", "https://witness.test/"+string(rune('a'+i%26)))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.persons); n > maxPersonNavsPerOrigin+1 {
		t.Errorf("%d reports kept, want at most %d", n, maxPersonNavsPerOrigin+1)
	}
	r := httptest.NewRequest("GET", "https://other.test/story", nil)
	for i, h := 0, append(testsite.NavHeaders("cross-site", "https://news.test/"), "Sec-Fetch-User", "?1"); i+1 < len(h); i += 2 {
		r.Header.Set(h[i], h[i+1])
	}
	nr := readNavRequest(r)
	if !g.personClickedLocked(nr, nil, "") {
		t.Error("the person's click on the news page was pushed out by another page's reports")
	}
}

// TestPersonReportsOnlyWithAnExpectation: the person's click reports (every trusted click of
// every page sends one) are kept only while some chat holds an expectation (an action's, for
// navWindow after its answer, or a lease), the only reader of them; with none they are dropped
// before the lock.
func TestPersonReportsOnlyWithAnExpectation(t *testing.T) {
	var g navGuard
	clk := &leaseClock{}
	g.now = clk.now
	kept := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.persons)
	}
	personClicks(t, &g, "https://news.test", "https://other.test/story")
	if n := kept(); n != 0 {
		t.Fatalf("%d reports kept with no expectation, want none", n)
	}
	x := g.armAs(navOwner{owner: new(int)}, "click", "https://news.test/", "https://news.test", nil, nil)
	personClicks(t, &g, "https://news.test", "https://other.test/story")
	if n := kept(); n != 1 {
		t.Errorf("%d reports kept with an action's expectation, want 1", n)
	}
	x.settle()
	clk.skip(navWindow + time.Second)
	g.mu.Lock()
	g.pruneLocked(g.clock())
	g.mu.Unlock()
	personClicks(t, &g, "https://news.test", "https://other.test/later")
	if n := kept(); n != 1 {
		t.Errorf("%d reports kept after the action's window, want the 1 from before", n)
	}
}

// TestNavPersonFreshReport (nav7's decision 2): Chromium sends a window.open into a named
// window that is already open without Sec-Fetch-User. On a page the agent loaded, a navigation
// without ?1 goes as the person's only to exactly an address the page agent reported from the
// Referer's origin at most personNavFresh before: a GET, a link's or window.open's address. A
// staler report, a form's path, a POST, another address, another origin's report: held.
func TestNavPersonFreshReport(t *testing.T) {
	signin := "https://example.com/signin"
	cf, g, clk := newLeasedPage(t, signin)

	noUser := testsite.NavHeaders("cross-site", signin)
	status := func(method, to string) int {
		t.Helper()
		resp, _ := cf.do(method, to, nil, noUser...)
		if resp.StatusCode == http.StatusForbidden {
			return http.StatusForbidden
		}
		return http.StatusBadGateway
	}
	const passed = http.StatusBadGateway
	for _, tt := range []struct {
		name   string
		report func()
		skip   time.Duration
		method string
		to     string
		want   int
	}{
		{"the retry's window.open, just reported", func() { personClicks(t, g, "https://example.com", "https://witness.test/oauth?c=1") }, 0, "GET", "https://witness.test/oauth?c=1", passed},
		{"a report older than personNavFresh", func() { personClicks(t, g, "https://example.com", "https://witness.test/oauth?c=2") }, personNavFresh, "GET", "https://witness.test/oauth?c=2", http.StatusForbidden},
		{"another address", func() { personClicks(t, g, "https://example.com", "https://witness.test/oauth?c=3") }, 0, "GET", "https://witness.test/c?d=4711", http.StatusForbidden},
		{"another origin's report", func() { personClicks(t, g, "https://evil.example.com", "https://witness.test/oauth?c=4") }, 0, "GET", "https://witness.test/oauth?c=4", http.StatusForbidden},
		{"a form's path", func() {
			g.personReported("https://example.com", json.RawMessage(`{"type":"person","url":"https://witness.test/search","form":true}`))
		}, 0, "GET", "https://witness.test/search?q=typed", http.StatusForbidden},
		{"a POST to the reported address", func() { personClicks(t, g, "https://example.com", "https://witness.test/post") }, 0, "POST", "https://witness.test/post", http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.report()
			clk.skip(tt.skip)
			if got := status(tt.method, tt.to); got != tt.want {
				t.Errorf("status = %d, want %d", got, tt.want)
			}
		})
	}
}

// newLeasedPage is newLeasePipeline with the agent's navigate from https://example.com/ to `to`
// done, its action's window over, and that document's page agent connected: a page the agent
// loaded, under its lease.
func newLeasedPage(t *testing.T, to string) (*guardPipeline, *navGuard, *leaseClock) {
	t.Helper()
	cf, g, clk := newLeasePipeline(t)
	cf.agentNavigated(clk, new(int), "https://example.com/", to)
	var alive atomic.Bool
	alive.Store(true)
	g.docOpened(cf.token(to), "s1", alive.Load)
	return cf, g, clk
}
