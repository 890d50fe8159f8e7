package chat

import (
	"net/http"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
)

// TestNavActionWindow (OPEN-ITEMS 20): an action's expectation pairs navigations for navWindow
// (sendAfter) after its answer, not only navAfter. On a page the agent did not load (no lease),
// the page's own navigation off the site 10 s after the agent typed — a timer's, without or with
// the person's activation — is held; the person's click the page agent reported goes, and so does
// a no-referrer click reported by a page of another site (another tab); a sibling origin's report
// does not count. Past navWindow the page's navigations are its own again. (With the window at
// navAfter, the 10 s navigation went.)
func TestNavActionWindow(t *testing.T) {
	cf, g, clk := newLeasePipeline(t)
	page := "https://example.com/"
	x := g.armAs(navOwner{owner: new(int)}, "type", page, "https://example.com", nil, nil)
	x.settle()
	clk.skip(10 * time.Second)

	const passed = http.StatusBadGateway // let go: the reverse proxy's error for witness.test
	status := func(to string, hdr ...string) int {
		t.Helper()
		resp, _ := cf.get(to, hdr...)
		if resp.StatusCode == http.StatusForbidden {
			return http.StatusForbidden
		}
		return passed
	}
	timer := testsite.NavHeaders("cross-site", page)
	activated := append(testsite.NavHeaders("cross-site", page), "Sec-Fetch-User", "?1")
	noRef := append(testsite.NavHeaders("cross-site", ""), "Sec-Fetch-User", "?1")
	for _, tt := range []struct {
		name   string
		report func()
		to     string
		hdr    []string
		want   int
	}{
		{"the page's timer, 10 s after the action", func() {}, "https://witness.test/preview?t=4711", timer, http.StatusForbidden},
		{"activation alone", func() {}, "https://witness.test/c?d=4711", activated, http.StatusForbidden},
		{"the person's reported click", func() { personClicks(t, g, "https://example.com", "https://witness.test/help") }, "https://witness.test/help", activated, passed},
		{"a reported click on another address", func() { personClicks(t, g, "https://example.com", "https://witness.test/other") }, "https://witness.test/c?d=1", activated, http.StatusForbidden},
		{"no Referer, another site's page reported it", func() { personClicks(t, g, "https://news.test", "https://witness.test/story") }, "https://witness.test/story", noRef, passed},
		{"no Referer, a sibling origin reported it", func() { personClicks(t, g, "https://evil.example.com", "https://witness.test/c?d=2") }, "https://witness.test/c?d=2", noRef, http.StatusForbidden},
		{"no Referer, no report", func() {}, "https://witness.test/c?d=3", noRef, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.report()
			if got := status(tt.to, tt.hdr...); got != tt.want {
				t.Errorf("status = %d, want %d", got, tt.want)
			}
		})
	}

	clk.skip(navWindow)
	if got := status("https://witness.test/preview?t=4711", timer...); got != passed {
		t.Errorf("past navWindow, the page's own navigation: %d, want let go", got)
	}
}
