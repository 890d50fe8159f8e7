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
