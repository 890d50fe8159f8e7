package remixlet

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// One page driving many long hops — its document navigating within its origin, its images
// redirecting within it after a clone — must not use up the budget the other pages' remixlet
// writes share (review of pass 6d, item 1). Before the fix every followed hop was added with
// guard.add and counted against redirectGuardMaxTotal/redirectGuardMaxBytes: with a budget of 50
// addresses, s2's write below was refused with errGuardFull.
func TestPageDrivenHopsDoNotStarveOtherPages(t *testing.T) {
	g := newGuardTest(t)
	g.r.guard.maxTotal = 50
	pad := strings.Repeat("p", 2000)
	const first = "/r?to=0"
	if err := g.r.guard.add("s1", "https://shop.test/", g.id, g.m, []string{"https://shop.test" + first}); err != nil {
		t.Fatal(err)
	}
	// A server redirect chain within the origin, 3*maxHopsPerOwner hops long: each is followed
	// (the page's own oldest hops make room), none is refused.
	target := first
	for i := 1; i <= 3*maxHopsPerOwner; i++ {
		next := fmt.Sprintf("/r?to=%d&%s", i, pad[:i%len(pad)])
		if g.redirect(t, "shop.test", target, next) {
			t.Fatalf("hop %d within the origin was refused", i)
		}
		target = next
	}
	// The document the last hop opened navigates within its origin, again and again.
	g.openDocument(t, target, "document", "")
	ref := "https://shop.test" + target
	for i := 0; i < 2*maxHopsPerOwner; i++ {
		to := fmt.Sprintf("https://shop.test/n?%d&%s", i, pad)
		if g.navigate(t, to, navHeader("document", "same-origin", "", ref)) {
			t.Fatalf("navigation %d within the origin was refused", i)
		}
	}
	g.r.guard.mu.Lock()
	o := g.r.guard.owners[ownerID{"s1", g.id}]
	hops, hopBytes, total := len(o.hops), o.hopBytes, g.r.guard.total
	g.r.guard.mu.Unlock()
	if hops > maxHopsPerOwner || hopBytes > maxHopBytesPerOwner {
		t.Errorf("s1 holds %d hops, %d bytes: over the per-owner bound (%d, %d)", hops, hopBytes, maxHopsPerOwner, maxHopBytesPerOwner)
	}
	if total != 1 {
		t.Errorf("the written budget holds %d addresses, want 1 (s1's own write; hops apart)", total)
	}
	// The newest hop is still guarded: its redirect off the origin is refused.
	if !g.redirect(t, "shop.test", fmt.Sprintf("/n?%d&%s", 2*maxHopsPerOwner-1, pad), "https://witness.test/x") {
		t.Error("the newest hop's redirect off the origin was let through")
	}
	// Another page's remixlet can still write.
	if err := g.r.guard.add("s2", "https://shop.test/other", g.id, g.m, []string{"https://shop.test/mine?x=1"}); err != nil {
		t.Fatalf("s2's write was refused after s1's hops: %v", err)
	}
}

// A clone's image hop that cloneHits pairs again by itself is not added to the guard at all.
func TestCloneHopsAreNotHeld(t *testing.T) {
	g := newGuardTest(t)
	if err := g.r.guard.addClone("s1", "https://shop.test/p", g.id, g.m); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		u, _ := url.Parse(fmt.Sprintf("https://shop.test/img%d", i))
		req := &http.Request{URL: u, Host: "shop.test", RequestURI: u.RequestURI(), Header: http.Header{
			"Sec-Fetch-Dest": {"image"}, "Sec-Fetch-Site": {"same-origin"}, "Referer": {"https://shop.test/p"}}}
		resp := &http.Response{StatusCode: http.StatusFound, Header: http.Header{"Location": {fmt.Sprintf("/img%d", i+1)}}, Request: req}
		g.r.GuardRedirect(resp)
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("clone image hop %d within the origin was refused", i)
		}
	}
	g.r.guard.mu.Lock()
	n := len(g.r.guard.owners[ownerID{"s1", g.id}].keys)
	g.r.guard.mu.Unlock()
	if n != 0 {
		t.Errorf("the guard holds %d addresses for clone hops that cloneHits pairs again, want 0", n)
	}
}

// One page session opening many documents cannot fill the table every page shares: past
// maxOpenedPerSession its own are refused, another session's are still recorded. Before the
// fix the bound was global (maxOpenedDocs), and s2's document was refused once s1 held them all.
func TestOpenedDocumentsBoundedPerSession(t *testing.T) {
	g := newGuardTest(t)
	now := time.Unix(1_000_000, 0)
	g.r.opened.now = func() time.Time { return now }
	h1 := []guardHit{{remixlet: g.id, session: "s1", pageURL: "https://shop.test/"}}
	h2 := []guardHit{{remixlet: g.id, session: "s2", pageURL: "https://shop.test/b"}}
	refused := 0
	for i := 0; i < maxOpenedDocs+10; i++ {
		u := mustURL(t, fmt.Sprintf("https://shop.test/d%d", i))
		if !g.r.opened.opened(u, h1, "", false) {
			refused++
		}
	}
	if refused == 0 {
		t.Error("s1 opened more than maxOpenedPerSession live documents")
	}
	if !g.r.opened.opened(mustURL(t, "https://shop.test/s2doc"), h2, "", false) {
		t.Fatal("s2's document was refused after s1 opened many")
	}
	// s1's documents that can no longer navigate make room for its new ones.
	now = now.Add(openedLoading + time.Second)
	if !g.r.opened.opened(mustURL(t, "https://shop.test/later"), h1, "", false) {
		t.Error("s1's new document was refused though its old ones can no longer navigate")
	}
}

func mustURL(t *testing.T, a string) *weburl.URL {
	t.Helper()
	u, err := weburl.Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
