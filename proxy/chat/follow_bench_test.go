package chat

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/page"
)

// BenchmarkNoteNavigation is NoteNavigation as the injection calls it for every same-site
// navigation with a Referer (proxy/html.go), in the hub's usual states: no chat and no note
// ("quiet"); no chat and the notes of a few minutes' browsing still in the table ("notes": 100
// of 10 origins, none yet connected); a chat waiting for its tab's next page on another page of
// the site ("waiting chat"); and chats on 20 pages ("20 chats"). The same document is noted
// each time (its note replaces the last one), so the table keeps its size.
func BenchmarkNoteNavigation(b *testing.B) {
	const pageURL, referer = "https://example.com/thread/2", "https://example.com/thread/1"
	req, _ := http.NewRequest("GET", pageURL, nil)
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Referer", referer)
	for _, state := range []string{"quiet", "notes", "waiting chat", "20 chats"} {
		b.Run(state, func(b *testing.B) {
			h := newHub(nil, context.Background())
			h.pages = page.New(page.Config{Secret: []byte("k")})
			h.SetFollowGrace(time.Hour) // a waiting chat keeps waiting while the benchmark runs
			switch state {
			case "notes":
				for i := range 100 {
					u := fmt.Sprintf("https://site%d.test/%d", i%10, i)
					r, _ := http.NewRequest("GET", u, nil)
					r.Header.Set("Referer", fmt.Sprintf("https://site%d.test/", i%10))
					h.NoteNavigation(u, r)
				}
			case "waiting chat":
				c := &chat{hub: h, origin: "https://example.com"}
				wait := make(chan struct{})
				c.waiting = wait
				h.orphan(c, wait, "https://example.com/other")
			case "20 chats":
				h.mu.Lock()
				for i := range 20 {
					h.bySession[fmt.Sprintf("session-%d", i)] = &chat{hub: h, origin: "https://example.com"}
				}
				h.mu.Unlock()
			}
			b.ReportAllocs()
			for b.Loop() {
				if h.NoteNavigation(pageURL, req) {
					b.Fatal("followed: no chat is on the Referer's page")
				}
			}
		})
	}
}
