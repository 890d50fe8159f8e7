package proxy

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// A chat follows its tab to the next page of the same site. A full page load ends the page
// session the chat belongs to (every document gets its own), yet a click on a link, a form the
// agent submitted or the person's own navigation within the site is still the same tab and the
// same task. The proxy cannot see tabs, so it links the two pages by the navigation itself: when
// it injects a document it notes the request's Referer, and when that document's page agent
// connects, a chat whose page went in the last followGrace and whose last address is that Referer
// (same origin) moves to the new page. Another site never gets the chat: a navigation to it
// leaves the chat waiting until the grace ends, and its turn then stops at the next step
// (BeforeStep) with a notice. Cards are never carried over: they expire when their page goes.
//
// The link is a heuristic a page can influence only within its own origin (it can set a
// referrer policy that sends no Referer, which just ends the chat); a chat never moves to
// another origin.

// followGrace is how long a chat waits for its tab's next page.
const followGrace = 5 * time.Second

// navNoteTTL bounds how long a document's Referer is remembered before its page agent connects.
const navNoteTTL = 30 * time.Second

// maxNavNotes bounds the notes kept.
const maxNavNotes = 512

type navNote struct {
	referer string
	at      time.Time
}

// follow is the hub's table of navigation notes and of chats waiting for a page.
type follow struct {
	mu      sync.Mutex
	notes   map[string]navNote // document URL → the Referer it was requested with
	orphans map[*chat]orphan
	grace   time.Duration
}

type orphan struct {
	origin, lastURL string
	since           time.Time
}

func newFollow() follow {
	return follow{notes: map[string]navNote{}, orphans: map[*chat]orphan{}, grace: followGrace}
}

// noteNavigation records the Referer of a document the proxy is injecting into (html.go).
func (h *chatHub) noteNavigation(pageURL string, req *http.Request) {
	ref := req.Header.Get("Referer")
	if ref == "" || req.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return
	}
	f := &h.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if len(f.notes) >= maxNavNotes {
		for k, n := range f.notes {
			if now.Sub(n.at) > navNoteTTL || len(f.notes) >= maxNavNotes {
				delete(f.notes, k)
			}
		}
	}
	f.notes[pageURL] = navNote{referer: ref, at: now}
}

// orphan records c, whose c.waiting is ch, as waiting for its tab's next page; after the
// grace it gives up.
func (h *chatHub) orphan(c *chat, ch chan struct{}, lastURL string) {
	lastURL = withoutFragment(lastURL) // a Referer never carries one
	c.mu.Lock()
	origin := c.origin
	c.mu.Unlock()
	f := &h.follow
	f.mu.Lock()
	f.orphans[c] = orphan{origin: origin, lastURL: lastURL, since: time.Now()}
	grace := f.grace
	f.mu.Unlock()
	time.AfterFunc(grace, func() { h.giveUp(c, ch) })
}

// giveUp ends the wait of c if no page took it.
func (h *chatHub) giveUp(c *chat, ch chan struct{}) {
	f := &h.follow
	f.mu.Lock()
	delete(f.orphans, c)
	f.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting == ch {
		c.waiting = nil
		close(ch)
	}
}

// pageOpened runs when a page agent connects: a chat whose page was this document's Referer
// moves to it.
func (h *chatHub) pageOpened(sess *session) {
	snap := h.s.sessions.snapshot(sess)
	f := &h.follow
	f.mu.Lock()
	note, ok := f.notes[snap.URL]
	delete(f.notes, snap.URL)
	var found *chat
	if ok && time.Since(note.at) <= navNoteTTL {
		var newest time.Time
		for c, o := range f.orphans {
			if o.origin == snap.Origin && o.lastURL == note.referer && o.since.After(newest) {
				found, newest = c, o.since
			}
		}
		if found != nil {
			delete(f.orphans, found)
		}
	}
	f.mu.Unlock()
	if found == nil {
		return
	}
	h.mu.Lock()
	if _, taken := h.bySession[snap.ID]; taken {
		h.mu.Unlock()
		return
	}
	h.bySession[snap.ID] = found
	h.mu.Unlock()
	found.mu.Lock()
	found.sessionID = snap.ID
	if found.waiting != nil {
		close(found.waiting)
		found.waiting = nil
	}
	found.mu.Unlock()
	found.broadcastState()
}

var errPageLeft = errors.New("The page was closed or left the site, so the agent stopped. Open the panel on the site again to go on.")

// waitPage returns the chat's page, waiting while its tab loads the next page of the site.
func (c *chat) waitPage(ctx context.Context) (session, error) {
	for {
		c.mu.Lock()
		id, ch := c.sessionID, c.waiting
		c.mu.Unlock()
		if id != "" {
			if sess, ok := c.hub.s.sessions.get(id); ok {
				return sess, nil
			}
		}
		if ch == nil {
			return session{}, errPageLeft
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return session{}, ctx.Err()
		}
	}
}

// beforeStep is the loop's BeforeStep: a turn goes on only on a page of the chat's site.
func (c *chat) beforeStep(ctx context.Context) error {
	_, err := c.waitPage(ctx)
	return err
}
