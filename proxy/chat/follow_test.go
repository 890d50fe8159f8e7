package chat

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// TestChatNeverFollowsToAnotherOrigin: a page of another origin whose request names the chat's
// last page as Referer does not take the chat; one of the same origin does.
func TestChatNeverFollowsToAnotherOrigin(t *testing.T) {
	h := newHub(nil, context.Background())
	h.pages = page.New(page.Config{Secret: []byte("k")})
	c := &chat{hub: h, origin: "https://shop.test"}
	wait := make(chan struct{})
	c.waiting = wait
	h.orphan(c, wait, "https://shop.test/a")

	nav := func(pageURL string) page.Info {
		req, _ := http.NewRequest("GET", pageURL, nil)
		req.Header.Set("Referer", "https://shop.test/a")
		h.NoteNavigation(pageURL, req)
		u, _ := url.Parse(pageURL)
		return page.Info{ID: httpx.RandomID(), URL: pageURL, Origin: httpx.OriginOf(u), Connected: true, Since: time.Now()}
	}
	evil := nav("https://evil.test/x")
	h.pageOpened(evil)
	h.mu.Lock()
	_, took := h.bySession[evil.ID]
	h.mu.Unlock()
	if took {
		t.Fatal("a page of another origin took the chat")
	}
	same := nav("https://shop.test/b")
	h.pageOpened(same)
	h.mu.Lock()
	got := h.bySession[same.ID]
	h.mu.Unlock()
	if got != c {
		t.Fatal("the next page of the same origin did not take the chat")
	}
}

// TestNoteNavigationSaysWhenAChatMayFollow: a document requested from the page a chat is on,
// or from the last page of a chat waiting for its tab's next page, is one the chat may follow
// to (the proxy then has its page agent connect at once); a document from another page, from
// another site or with no Referer is not.
func TestNoteNavigationSaysWhenAChatMayFollow(t *testing.T) {
	f := newRedFixture(t)
	h := f.h
	nav := func(pageURL string, hdr ...string) bool {
		t.Helper()
		req, _ := http.NewRequest("GET", pageURL, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		return h.NoteNavigation(pageURL, req)
	}
	from := "https://" + redSite + "/"
	next := "https://" + redSite + "/next"
	if nav(next, "Referer", from) {
		t.Error("no chat yet: a chat may follow")
	}
	h.mu.Lock()
	h.bySession[f.c.sessionID] = f.c
	h.mu.Unlock()
	for _, tc := range []struct {
		name string
		hdr  []string
		want bool
	}{
		{"from the chat's page", []string{"Referer", from, "Sec-Fetch-Site", "same-origin"}, true},
		{"from another page of the site", []string{"Referer", "https://" + redSite + "/other", "Sec-Fetch-Site", "same-origin"}, false},
		{"from another site", []string{"Referer", from, "Sec-Fetch-Site", "cross-site"}, false},
		{"without a Referer", nil, false},
	} {
		if got := nav(next, tc.hdr...); got != tc.want {
			t.Errorf("%s: followed = %v, want %v", tc.name, got, tc.want)
		}
	}

	// A chat whose page went waits for its tab's next page: a document from that page may
	// take it.
	o := &chat{hub: h, origin: "https://shop.test"}
	wait := make(chan struct{})
	o.waiting = wait
	h.orphan(o, wait, "https://shop.test/a#top")
	if !nav("https://shop.test/b", "Referer", "https://shop.test/a") {
		t.Error("from the last page of a waiting chat: a chat may not follow")
	}
	if nav("https://shop.test/b", "Referer", "https://shop.test/c") {
		t.Error("from another page than the waiting chat's: a chat may follow")
	}
}
