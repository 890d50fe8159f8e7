package chat

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
)

// frameNav is a frame's navigation as Chromium sends it: fetchSite and referer as for a
// top-level one, Sec-Fetch-Dest iframe.
func frameNav(fetchSite, referer string) []string {
	h := []string{"Sec-Fetch-Dest", "iframe", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", fetchSite}
	if referer != "" {
		h = append(h, "Referer", referer)
	}
	return h
}

// TestNavFrameLease: through the guard's two sides in a pipeline as the proxy's (the whole wiring:
// e2e's TestRedteamAgentFrameForwards). The agent's click in the person's page (not a page the
// agent loaded: no document lease) points a frame at the site's "leaving" page; long after the
// action's window, that frame document forwards — the tab by top.location, or the frame itself
// — to another site, and both are held; within the window, the frame's forward is held too. A
// widget another origin's page frames is left alone. A navigation with activation in the frame
// is held (no page agent there reports the person's clicks). The frame lease ends when the page it was loaded in goes, or
// navDocLoading after the frame's document was answered. (Before the fix every one of these
// forwards went.)
func TestNavFrameLease(t *testing.T) {
	cf, g, clk := newLeasePipeline(t)
	owner := new(int)
	inbox := "https://example.com/inbox"
	frameDoc := "https://example.com/go?to=x"
	var pageAlive atomic.Bool
	pageAlive.Store(true)
	click := func() *navExpect {
		return g.armAs(navOwner{owner: owner, pageAlive: pageAlive.Load}, "click", inbox, "https://example.com", nil, nil)
	}
	const passed = http.StatusBadGateway // witness.test let go: the reverse proxy's error
	get := func(t *testing.T, to string, hdr []string, want int) {
		t.Helper()
		resp, body := cf.get(to, hdr...)
		if resp.StatusCode != want && (want != passed || resp.StatusCode == http.StatusForbidden) {
			t.Fatalf("%s: status = %d, want %d\n%s", to, resp.StatusCode, want, body)
		}
		if want == http.StatusForbidden && strings.Contains(string(body), "4711") {
			t.Errorf("the refusal shows the data:\n%s", body)
		}
	}

	// Within the action's window: the frame's document forwards the frame at once.
	x := click()
	get(t, frameDoc, frameNav("same-origin", inbox), http.StatusOK)
	get(t, "https://witness.test/now?d=4711", frameNav("cross-site", frameDoc), http.StatusForbidden)
	x.settle()
	clk.skip(navWindow + time.Second)

	// After the window: the frame's lease holds the tab's forward and the frame's own, but not
	// the person's click in the frame.
	for _, tt := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"top.location from the frame", testsite.NavHeaders("cross-site", frameDoc), http.StatusForbidden},
		{"the frame's own location", frameNav("cross-site", frameDoc), http.StatusForbidden},
		{"the frame's meta refresh, no-referrer policy", frameNav("cross-site", ""), http.StatusForbidden},
		// A frame has no page agent to report the person's click (navguard_person.go): held.
		{"activation in the frame", append(frameNav("cross-site", frameDoc), "Sec-Fetch-User", "?1"), http.StatusForbidden},
		{"a widget of another origin's page", frameNav("cross-site", "https://news.test/"), passed},
		{"the address bar", testsite.NavHeaders("none", ""), passed},
	} {
		t.Run(tt.name, func(t *testing.T) { get(t, "https://witness.test/later?d=4711", tt.hdr, tt.want) })
	}
	if why := g.stopFor(owner); !strings.Contains(why, "would have left the site example.com") {
		t.Errorf("stopFor = %q", why)
	}

	// The page the frame was loaded in goes: so does the frame, and its lease.
	pageAlive.Store(false)
	get(t, "https://witness.test/gone", testsite.NavHeaders("cross-site", frameDoc), passed)
	if n := g.live.Load(); n != 0 {
		t.Errorf("%d expectations live after the page went, want 0", n)
	}

	// A frame lease lives navDocLoading at most, and a chat has one however many frames load.
	pageAlive.Store(true)
	x = click()
	for i := 0; i < maxNavExpects+10; i++ {
		get(t, "https://example.com/go?n="+strings.Repeat("i", i%7+1), frameNav("same-origin", inbox), http.StatusOK)
	}
	x.settle()
	g.mu.Lock()
	n := len(g.xs)
	g.mu.Unlock()
	if n != 2 {
		t.Errorf("%d expectations after %d frames, want 2 (the action's, one frame lease)", n, maxNavExpects+10)
	}
	clk.skip(navDocLoading)
	get(t, "https://witness.test/expired", testsite.NavHeaders("cross-site", frameDoc), passed)
}

// TestNavFrameOfAgentsPage: the agent navigates the tab to a page of the site that frames an
// address from its own query (/viewer?doc=/go?to=…) — in an iframe, an <object> or an <embed>
// (their documents' navigations are Sec-Fetch-Dest object or embed, the forward's too: measured
// in Chromium, e2e TestRedteamAgentObjectForwards) — the frame's document forwards itself off
// the site after the window, and so does its top.location: both are held while the viewer
// lives. When the viewer goes, the frame's lease goes with it.
func TestNavFrameOfAgentsPage(t *testing.T) {
	for _, dest := range []string{"iframe", "object", "embed"} {
		t.Run(dest, func(t *testing.T) {
			nav := func(fetchSite, referer string) []string {
				return append(frameNav(fetchSite, referer), "Sec-Fetch-Dest", dest) // the last one counts
			}
			cf, g, clk := newLeasePipeline(t)
			owner := new(int)
			var oldPage, viewerAlive atomic.Bool
			oldPage.Store(true)
			viewer := "https://example.com/viewer?doc=x"
			x := g.armAs(navOwner{owner: owner, pageAlive: oldPage.Load}, "navigate", "https://example.com/", "https://example.com", []string{viewer}, nil)
			if resp, _ := cf.get(viewer, testsite.NavHeaders("same-origin", "https://example.com/")...); resp.StatusCode != http.StatusOK {
				t.Fatalf("the agent's navigate: %d", resp.StatusCode)
			}
			oldPage.Store(false) // the tab left the page the action ran in
			if resp, _ := cf.get("https://example.com/go?to=x", nav("same-origin", viewer)...); resp.StatusCode != http.StatusOK {
				t.Fatalf("the viewer's frame: %d", resp.StatusCode)
			}
			x.settle()
			clk.skip(navWindow + time.Second)
			viewerAlive.Store(true)
			g.docOpened(cf.token(viewer), "viewer", viewerAlive.Load)
			if resp, _ := cf.get("https://witness.test/f?d=4711", nav("cross-site", "https://example.com/go?to=x")...); resp.StatusCode != http.StatusForbidden {
				t.Errorf("the frame's forward off the site: %d, want 403", resp.StatusCode)
			}
			if resp, _ := cf.get("https://witness.test/f?d=4711", testsite.NavHeaders("cross-site", "https://example.com/go?to=x")...); resp.StatusCode != http.StatusForbidden {
				t.Errorf("the frame's top.location off the site: %d, want 403", resp.StatusCode)
			}
			viewerAlive.Store(false)
			if resp, _ := cf.get("https://witness.test/f2", nav("cross-site", "https://example.com/go?to=x")...); resp.StatusCode == http.StatusForbidden {
				t.Errorf("after the viewer went: %d, want let go", resp.StatusCode)
			}
		})
	}
}

// TestNavFrameLeaseBounded: a page that loads frame after frame cannot grow its frame lease's
// origins without bound (past maxNavURLs any origin of the site counts as the lease's: it
// fails safe), nor keep the lease for ever by reloading frames: only the agent's own actions
// move its bound, navFrameLeaseMax.
func TestNavFrameLeaseBounded(t *testing.T) {
	_, g, clk := newLeasePipeline(t)
	owner := new(int)
	x := g.armAs(navOwner{owner: owner, pageAlive: func() bool { return true }}, "click", "https://example.com/", "https://example.com", nil, nil)
	first, _ := weburl.Parse("https://example.com/frame")
	l := g.lease(x, first, true)
	x.settle()
	for i := range 3 * maxNavURLs {
		u, _ := weburl.Parse(fmt.Sprintf("https://h%d.example.com/frame", i))
		if got := g.lease(l, u, true); got != l {
			t.Fatalf("frame %d: a second frame lease", i)
		}
	}
	last := fmt.Sprintf("https://h%d.example.com", 3*maxNavURLs-1)
	g.mu.Lock()
	no, nf := len(l.origins), len(l.frameOrigins)
	held := l.fromFrameLocked(navRequest{referer: last}) && l.pairs(navRequest{referer: last, fetchSite: "same-site"})
	other := l.pairs(navRequest{referer: "https://other.test", fetchSite: "cross-site"})
	g.mu.Unlock()
	if no > maxNavURLs+1 || nf > maxNavURLs+1 {
		t.Errorf("origins %d, frame origins %d; want at most %d", no, nf, maxNavURLs+1)
	}
	if !held {
		t.Errorf("a navigation from the last frame (%s) is not the lease's: past the bound it must fail safe", last)
	}
	if other {
		t.Error("a navigation from another site's page pairs with the lease")
	}

	// The page reloads its frame every minute, long after the action: the lease ends at its bound.
	u, _ := weburl.Parse("https://example.com/frame")
	for d := time.Duration(0); d < navFrameLeaseMax+navDocLoading; d += time.Minute {
		clk.skip(time.Minute)
		g.lease(l, u, true)
	}
	g.mu.Lock()
	live := l.liveLocked(g.clock())
	g.mu.Unlock()
	if live {
		t.Errorf("the frame lease lives %s after the agent's action, its frames reloading; want it ended by navFrameLeaseMax", navFrameLeaseMax+navDocLoading)
	}
}
