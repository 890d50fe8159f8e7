package chat

import (
	"context"
	"encoding/json"
	"fmt"
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
	openWithHello(h, evil, `{"type": "hello"}`)
	h.mu.Lock()
	_, took := h.bySession[evil.ID]
	h.mu.Unlock()
	if took {
		t.Fatal("a page of another origin took the chat")
	}
	same := nav("https://shop.test/b")
	openWithHello(h, same, `{"type": "hello"}`)
	h.mu.Lock()
	got := h.bySession[same.ID]
	h.mu.Unlock()
	if got != c {
		t.Fatal("the next page of the same origin did not take the chat")
	}
}

// openWithHello is a page agent connecting to snap's session and saying hello.
func openWithHello(h *Hub, snap page.Info, hello string) {
	h.pageOpened(snap)
	h.pageHello(snap, json.RawMessage(hello))
}

// TestChatNeverFollowsToANewWindow: a same-origin page whose request names the chat's last
// page as Referer, but whose hello says it came from no page of its origin in its tab (a popup,
// a new tab), takes no chat, whether it connects before the chat's page went (an arrival) or
// after; the tab's own next page then does.
func TestChatNeverFollowsToANewWindow(t *testing.T) {
	h := newHub(nil, context.Background())
	h.pages = page.New(page.Config{Secret: []byte("k")})
	nav := func(pageURL string) page.Info {
		req, _ := http.NewRequest("GET", pageURL, nil)
		req.Header.Set("Referer", "https://shop.test/a")
		h.NoteNavigation(pageURL, req)
		return page.Info{ID: httpx.RandomID(), URL: pageURL, Origin: "https://shop.test", Connected: true, Since: time.Now()}
	}
	took := func(snap page.Info) *chat {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.bySession[snap.ID]
	}
	// Before the chat's page went: the popup connects first.
	popup := nav("https://shop.test/popup")
	openWithHello(h, popup, `{"type": "hello", "newWindow": true}`)
	c := &chat{hub: h, origin: "https://shop.test"}
	wait := make(chan struct{})
	c.waiting = wait
	h.orphan(c, wait, "https://shop.test/a")
	if took(popup) != nil {
		t.Fatal("a popup that connected before the chat's page went took the chat")
	}
	// After: another popup.
	popup2 := nav("https://shop.test/popup2")
	openWithHello(h, popup2, `{"type": "hello", "newWindow": true}`)
	if took(popup2) != nil {
		t.Fatal("a popup that connected after the chat's page went took the chat")
	}
	next := nav("https://shop.test/b")
	openWithHello(h, next, `{"type": "hello", "url": "https://shop.test/b", "newWindow": false}`)
	if took(next) != c {
		t.Fatal("the tab's next page did not take the chat")
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

// TestNavNotesOfOneOriginEvictNoOther: a page that makes navigations without end (once a
// plain-http page forging a navigation's headers on its fetches; over http nothing is noted now,
// follow_http.go) fills the notes with its own; the note of
// another site's tab, made before, stays, and the flooding origin keeps at most
// maxNavNotesPerOrigin.
func TestNavNotesOfOneOriginEvictNoOther(t *testing.T) {
	h := newHub(nil, context.Background())
	h.pages = page.New(page.Config{Secret: []byte("k")})
	note := func(pageURL, referer string) {
		req, _ := http.NewRequest("GET", pageURL, nil)
		req.Header.Set("Referer", referer)
		h.NoteNavigation(pageURL, req)
	}
	note("https://shop.test/b", "https://shop.test/a")
	for i := 0; i < 5000; i++ {
		note(fmt.Sprintf("https://flood.test/%d", i), "https://flood.test/")
	}
	h.follow.mu.Lock()
	defer h.follow.mu.Unlock()
	if _, ok := h.follow.notes["https://shop.test/b"]; !ok {
		t.Error("another site's note was evicted by one origin's flood")
	}
	n := 0
	for _, nn := range h.follow.notes {
		if nn.origin == "https://flood.test" {
			n++
		}
	}
	if n > maxNavNotesPerOrigin {
		t.Errorf("the flooding origin keeps %d notes, want at most %d", n, maxNavNotesPerOrigin)
	}
	if _, ok := h.follow.notes["https://flood.test/4999"]; !ok {
		t.Error("the flooding origin's newest note is not kept")
	}
}

// TestArrivalOfAnotherOriginDisplacesNone: the tab's next page connects before its last page is
// reported gone (an arrival); a page of another origin of the same site that came from the
// same page connects after it. The next page's arrival stays, for the chat to find.
func TestArrivalOfAnotherOriginDisplacesNone(t *testing.T) {
	h := newHub(nil, context.Background())
	h.pages = page.New(page.Config{Secret: []byte("k")})
	const from = "https://www.example.com/a"
	open := func(pageURL, origin string) page.Info {
		req, _ := http.NewRequest("GET", pageURL, nil)
		req.Header.Set("Referer", from)
		req.Header.Set("Sec-Fetch-Site", "same-site")
		h.NoteNavigation(pageURL, req)
		snap := page.Info{ID: httpx.RandomID(), URL: pageURL, Origin: origin, Connected: true, Since: time.Now()}
		openWithHello(h, snap, `{"type": "hello"}`)
		return snap
	}
	next := open("https://www.example.com/b", "https://www.example.com")
	open("https://evil.example.com/x", "https://evil.example.com")
	h.follow.mu.Lock()
	a, ok := h.follow.arrivals[arrivalKey(from, "https://www.example.com")]
	h.follow.mu.Unlock()
	if !ok || a.sessionID != next.ID {
		t.Fatalf("the arrival of the tab's next page = %+v, %v; want its session %s", a, ok, next.ID)
	}
}

// TestChatNeverFollowsOverPlainHTTP: over plain http a page can make sessions of its own (a
// fetch forging a navigation's headers) and hold them in another window, and the proxy cannot
// give the next page a Window of its own (the browser ignores COOP there), so a chat never
// follows its tab over http: the next page, however it says hello, takes no chat, and no
// document is told a chat may follow. Over https the same navigation takes it.
func TestChatNeverFollowsOverPlainHTTP(t *testing.T) {
	for _, scheme := range []string{"http", "https"} {
		origin := scheme + "://shop.test"
		h, c := waitingChat(origin, origin+"/a")
		req, _ := http.NewRequest("GET", origin+"/b", nil)
		req.Header.Set("Referer", origin+"/a")
		req.Header.Set("Upgrade-Insecure-Requests", "1")
		followed := h.NoteNavigation(origin+"/b", req)
		next := page.Info{ID: httpx.RandomID(), URL: origin + "/b", Origin: origin, Connected: true, Since: time.Now()}
		openWithHello(h, next, `{"type": "hello"}`)
		h.mu.Lock()
		took := h.bySession[next.ID] == c
		h.mu.Unlock()
		if want := scheme == "https"; took != want || followed != want {
			t.Errorf("%s: the next page took the chat %v (followed %v), want %v", scheme, took, followed, want)
		}
	}
}

// TestChatFollowsOnlyFromThePageItReplaced: a page whose request names the chat's page as
// Referer but which came, in its own tab, from another page (a popup its opener navigated:
// panel.Hello.From) takes no chat; one that came from the chat's page does, fragment or not, and
// so does one whose browser does not say where it came from.
func TestChatFollowsOnlyFromThePageItReplaced(t *testing.T) {
	for _, tc := range []struct {
		name, hello string
		want        bool
	}{
		{"came from the popup's own page", `{"type": "hello", "from": "https://shop.test/b"}`, false},
		{"came from the chat's page", `{"type": "hello", "from": "https://shop.test/a#top"}`, true},
		{"says nothing", `{"type": "hello"}`, true},
	} {
		h, c := waitingChat("https://shop.test", "https://shop.test/a")
		req, _ := http.NewRequest("GET", "https://shop.test/b2", nil)
		req.Header.Set("Referer", "https://shop.test/a")
		h.NoteNavigation("https://shop.test/b2", req)
		next := page.Info{ID: httpx.RandomID(), URL: "https://shop.test/b2", Origin: "https://shop.test", Connected: true, Since: time.Now()}
		openWithHello(h, next, tc.hello)
		h.mu.Lock()
		took := h.bySession[next.ID] == c
		h.mu.Unlock()
		if took != tc.want {
			t.Errorf("%s: took the chat %v, want %v", tc.name, took, tc.want)
		}
	}
}

// waitingChat is a hub with a chat of origin whose page at lastURL went: it waits for its tab's
// next page.
func waitingChat(origin, lastURL string) (*Hub, *chat) {
	h := newHub(nil, context.Background())
	h.pages = page.New(page.Config{Secret: []byte("k")})
	c := &chat{hub: h, origin: origin}
	wait := make(chan struct{})
	c.waiting = wait
	h.orphan(c, wait, lastURL)
	return h, c
}

// TestNavNoteCountsFollowTheNotes: the per-origin counts (follow.perOrigin) are the notes'
// own, whatever changes the table — a note replacing the same document's, a page connecting
// with its note, notes expiring and a flood reaching both bounds — and an expired note is gone
// once a bound is reached.
func TestNavNoteCountsFollowTheNotes(t *testing.T) {
	h := newHub(nil, context.Background())
	h.pages = page.New(page.Config{Secret: []byte("k")})
	note := func(pageURL string) {
		req, _ := http.NewRequest("GET", pageURL, nil)
		req.Header.Set("Referer", "https://shop.test/a")
		h.NoteNavigation(pageURL, req)
	}
	check := func(step string) {
		t.Helper()
		h.follow.mu.Lock()
		defer h.follow.mu.Unlock()
		want := map[string]int{}
		for _, n := range h.follow.notes {
			want[n.origin]++
		}
		if fmt.Sprint(want) != fmt.Sprint(h.follow.perOrigin) {
			t.Fatalf("%s: perOrigin = %v, the notes hold %v", step, h.follow.perOrigin, want)
		}
	}
	note("https://shop.test/b")
	note("https://shop.test/b")
	note("https://www.shop.test/c")
	check("a document noted twice")
	h.pageOpened(page.Info{ID: httpx.RandomID(), URL: "https://shop.test/b", Origin: "https://shop.test"})
	check("a page connected with its note")
	h.follow.mu.Lock()
	h.follow.notes["https://www.shop.test/c"] = navNote{referer: "https://shop.test/a", origin: "https://www.shop.test",
		at: time.Now().Add(-2 * navNoteTTL)} // expired
	h.follow.mu.Unlock()
	for i := 0; i < 3*maxNavNotes; i++ {
		note(fmt.Sprintf("https://o%d.test/%d", i%(2*maxNavNotes/maxNavNotesPerOrigin), i))
		if i%97 == 0 {
			check(fmt.Sprintf("flood, note %d", i))
		}
	}
	check("after the flood")
	h.follow.mu.Lock()
	_, kept := h.follow.notes["https://www.shop.test/c"]
	h.follow.mu.Unlock()
	if kept {
		t.Error("an expired note outlived the table reaching its bound")
	}
}
