package chat

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/page"
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
//
// A popup is not the tab's next page, though its request names the tab's page as Referer: a
// same-origin popup opened while a chat runs took the chat as soon as its tab navigated within
// followGrace (the arrivals below). So the decision waits for the new page's hello, which says
// whether the document came from no page of its origin in its tab (panel.Hello.NewWindow, the
// Navigation API's activation): such a page never takes a chat. A popup's page agent belongs to
// its opener when the opener patched the popup's reused Window (NOTES, red-team pass 2), and
// then its hello says what the opener likes: what it can take that way is a chat of its own
// origin, whose tab it is.

// followGrace is how long a chat waits for its tab's next page.
const followGrace = 5 * time.Second

// navNoteTTL bounds how long a document's Referer is remembered before its page agent connects.
const navNoteTTL = 30 * time.Second

// maxNavNotes bounds the notes kept, and maxNavNotesPerOrigin those of one origin: a page that
// makes navigations of its own without end (over plain http a fetch that forges a navigation's
// headers is injected, and noted) replaces its own notes, never another site's.
const (
	maxNavNotes          = 512
	maxNavNotesPerOrigin = 64
)

type navNote struct {
	referer string
	origin  string // the document's
	at      time.Time
}

// follow is the hub's table of navigation notes and of chats waiting for a page.
type follow struct {
	mu    sync.Mutex
	notes map[string]navNote // document URL → the Referer it was requested with
	// perOrigin counts the notes of each origin, kept with notes by putNote and dropNote (the
	// only writers of notes), so that noting a navigation walks no table (makeRoom).
	perOrigin map[string]int
	orphans   map[*chat]orphan
	// arrivals are pages that connected before the page they came from was reported gone (the
	// old page's socket can close after the new page's opens), by that Referer and their origin
	// (arrivalKey).
	arrivals map[string]arrival
	// opening are pages that connected with a navigation note, until their hello says whether
	// they may take a chat (Message), by session ID.
	opening map[string]navNote
	grace   time.Duration
}

// arrivalKey is the key of an arrival: the page it came from, and its own origin. A page of
// another origin (of the same site) that came from the same page keeps its own entry, so it
// never displaces the tab's next page.
func arrivalKey(referer, origin string) string { return referer + "\x00" + origin }

type arrival struct {
	sessionID, origin string
	at                time.Time
}

type orphan struct {
	origin, lastURL string
	since           time.Time
}

func newFollow() follow {
	return follow{notes: map[string]navNote{}, perOrigin: map[string]int{}, orphans: map[*chat]orphan{}, arrivals: map[string]arrival{},
		opening: map[string]navNote{}, grace: followGrace}
}

// SetFollowGrace changes how long a chat whose page went waits for its tab's next page
// (followGrace by default); the proxy's integration tests shorten it.
func (h *Hub) SetFollowGrace(d time.Duration) {
	h.follow.mu.Lock()
	defer h.follow.mu.Unlock()
	h.follow.grace = d
}

// NoteNavigation records the Referer of a document the proxy is injecting into (html.go), and
// reports whether a chat may follow its tab to that document: a chat is on the page it came
// from, or waits for its tab's next page from there. The proxy then has the document's page
// agent connect at once rather than after the page's load, so that the chat moves on without
// waiting for the load (and well within followGrace).
func (h *Hub) NoteNavigation(pageURL string, req *http.Request) (followed bool) {
	ref := req.Header.Get("Referer")
	if ref == "" || req.Header.Get("Sec-Fetch-Site") == "cross-site" || !followsOver(req) {
		return false
	}
	if len(pageURL) > page.MaxSessionURL || len(ref) > page.MaxSessionURL {
		// Neither can be a session's URL, so the note could never be taken; and a page that
		// navigates to 200 KiB addresses (a script's chain of them, or over http its fetches
		// that say they are navigations) filled the table with 100 MiB.
		return false
	}
	followed = h.chatFrom(ref)
	f := &h.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	note := navNote{referer: ref, origin: weburl.OriginOf(pageURL), at: now}
	f.makeRoom(note.origin, now)
	f.putNote(pageURL, note)
	return followed
}

// makeRoom drops notes so that one of origin fits: expired ones, then origin's oldest while it
// holds maxNavNotesPerOrigin, then the oldest of the origin that holds the most. While neither
// bound is reached it drops nothing, not even expired notes, and walks nothing: no one reads an
// expired note (pageOpened drops it unread; noteAfterLocked asks only for notes younger than
// the grace, which is shorter than navNoteTTL), and the walk below drops every expired note before any bound is applied, so the
// notes kept are the same as if each call had dropped them. Called with f.mu held.
func (f *follow) makeRoom(origin string, now time.Time) {
	if f.perOrigin[origin] < maxNavNotesPerOrigin && len(f.notes) < maxNavNotes {
		return
	}
	for k, n := range f.notes {
		if now.Sub(n.at) > navNoteTTL {
			f.dropNote(k)
		}
	}
	for f.perOrigin[origin] >= maxNavNotesPerOrigin {
		f.dropOldest(origin)
	}
	for len(f.notes) >= maxNavNotes {
		most, found := "", false
		for o, n := range f.perOrigin {
			if !found || n > f.perOrigin[most] {
				most, found = o, true
			}
		}
		if !found {
			return
		}
		f.dropOldest(most)
	}
}

// dropOldest drops the oldest note of origin.
func (f *follow) dropOldest(origin string) {
	oldest := ""
	for k, n := range f.notes {
		if n.origin == origin && (oldest == "" || n.at.Before(f.notes[oldest].at)) {
			oldest = k
		}
	}
	if oldest == "" {
		delete(f.perOrigin, origin) // cannot be: perOrigin counts the notes; never loop on it
		return
	}
	f.dropNote(oldest)
}

// putNote notes the document at pageURL, in place of its earlier note. Called with f.mu held.
func (f *follow) putNote(pageURL string, note navNote) {
	f.dropNote(pageURL)
	f.notes[pageURL] = note
	f.perOrigin[note.origin]++
}

// dropNote forgets the note of the document at pageURL, if any. Called with f.mu held.
func (f *follow) dropNote(pageURL string) {
	n, ok := f.notes[pageURL]
	if !ok {
		return
	}
	delete(f.notes, pageURL)
	if f.perOrigin[n.origin]--; f.perOrigin[n.origin] <= 0 {
		delete(f.perOrigin, n.origin)
	}
}

// chatFrom reports whether a chat is on the page at ref (a Referer: no fragment) or waits for
// its tab's next page from it.
func (h *Hub) chatFrom(ref string) bool {
	f := &h.follow
	f.mu.Lock()
	for _, o := range f.orphans {
		if o.lastURL == ref {
			f.mu.Unlock()
			return true
		}
	}
	f.mu.Unlock()
	h.mu.Lock()
	if len(h.bySession) == 0 {
		h.mu.Unlock()
		return false // no chat on any page (the usual answer)
	}
	ids := make([]string, 0, len(h.bySession))
	for id := range h.bySession {
		ids = append(ids, id)
	}
	h.mu.Unlock()
	for _, id := range ids {
		if sess, ok := h.pages.Get(id); ok && httpx.WithoutFragment(sess.URL) == ref {
			return true
		}
	}
	return false
}

// orphan records c, whose c.waiting is ch, as waiting for its tab's next page; after the
// grace it gives up.
func (h *Hub) orphan(c *chat, ch chan struct{}, lastURL string) {
	lastURL = httpx.WithoutFragment(lastURL) // a Referer never carries one
	c.mu.Lock()
	origin := c.origin
	c.mu.Unlock()
	f := &h.follow
	f.mu.Lock()
	k := arrivalKey(lastURL, origin)
	a, arrived := f.arrivals[k]
	if arrived {
		delete(f.arrivals, k)
	}
	if !arrived || time.Since(a.at) > f.grace || f.noteAfterLocked(lastURL, origin, a.at) {
		arrived = false
		f.orphans[c] = orphan{origin: origin, lastURL: lastURL, since: time.Now()}
	}
	grace := f.grace
	f.mu.Unlock()
	if arrived {
		if sess, ok := h.pages.Get(a.sessionID); ok && h.adopt(c, sess) {
			return
		}
		f.mu.Lock()
		f.orphans[c] = orphan{origin: origin, lastURL: lastURL, since: time.Now()}
		f.mu.Unlock()
	}
	time.AfterFunc(grace, func() { h.giveUp(c, ch) })
}

// noteAfterLocked reports whether a document of origin was requested from ref after t and has
// not connected yet: the tab's own next page, on its way, when a page that connected at t (an
// arrival) came from ref too, a popup or a tab the page opened (a browser without the
// Navigation API's activation, or a page that wrote its popup's hello: panel.Hello.NewWindow).
// The chat waits for that page rather than move to the other. Called with f.mu held.
func (f *follow) noteAfterLocked(ref, origin string, t time.Time) bool {
	for _, n := range f.notes {
		if n.referer == ref && n.origin == origin && n.at.After(t) {
			return true
		}
	}
	return false
}

// giveUp ends the wait of c if no page took it.
func (h *Hub) giveUp(c *chat, ch chan struct{}) {
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

// The hub is a pageListener (page/channel.go): Opened is pageOpened, Gone is pageGone (chat.go).

// Opened moves a waiting chat to the page that just connected (pageOpened).
func (h *Hub) Opened(ctx context.Context, sess *page.Session) {
	snap := sess.Info()
	h.nav.docOpened(sess.TokenID(), snap.ID, func() bool { _, ok := h.pages.Get(snap.ID); return ok }) // navguard.go
	h.pageOpened(snap)
}

// Navigated does nothing: a same-origin navigation keeps the page's chat.
func (h *Hub) Navigated(context.Context, *page.Session) {}

// Message takes a page's hello, which decides whether the page may take a chat (pageHello),
// its reports of the person's clicks, for the navigation guard (navguard_person.go), and of the
// person's input, for the send guard (sendguard_person.go), and of a new page an action's
// handler started (act_leaving.go); the chats take no other page-agent traffic.
func (h *Hub) Message(_ context.Context, sess *page.Session, typ string, raw json.RawMessage) {
	if typ == panel.TypeHello {
		h.pageHello(sess.Info(), raw)
	}
	if typ == panel.TypePerson {
		h.nav.personReported(sess.Info().Origin, raw) // the person's click (navguard_person.go)
	}
	if typ == panel.TypePersonInput {
		h.personInputMessage(sess, raw) // the person's input (sendguard_person.go)
	}
	if typ == panel.TypeLeaving {
		h.acts.leaves.note(sess.ID(), time.Now()) // a new page just after an action (act_leaving.go)
	}
}

// Gone lets the page's chat wait for the tab's next page (pageGone).
func (h *Hub) Gone(sess *page.Session) {
	f := &h.follow
	f.mu.Lock()
	delete(f.opening, sess.ID())
	f.mu.Unlock()
	h.pageGone(sess.ID())
}

// pageOpened runs when a page agent connects: a page whose navigation was noted waits for its
// hello (pageHello) before a chat may move to it.
func (h *Hub) pageOpened(snap page.Info) {
	f := &h.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	note, ok := f.notes[snap.URL]
	f.dropNote(snap.URL)
	if !ok || time.Since(note.at) > navNoteTTL {
		return
	}
	now := time.Now()
	if len(f.opening) >= maxNavNotes {
		for k, o := range f.opening {
			if now.Sub(o.at) > navNoteTTL || len(f.opening) >= maxNavNotes {
				delete(f.opening, k)
			}
		}
	}
	f.opening[snap.ID] = note
}

// pageHello runs on a page's hello: the first after its page agent connected with a navigation
// note decides whether it is the tab's next page. A page that came from no page of its origin
// in its tab (a popup, a new tab: panel.Hello.NewWindow) is not, and takes no chat.
func (h *Hub) pageHello(snap page.Info, raw json.RawMessage) {
	f := &h.follow
	f.mu.Lock()
	note, ok := f.opening[snap.ID]
	delete(f.opening, snap.ID)
	f.mu.Unlock()
	if !ok {
		return
	}
	var hello panel.Hello
	if json.Unmarshal(raw, &hello) != nil || hello.NewWindow || !cameFromReferer(hello, note) {
		return
	}
	h.arrive(snap, note)
}

// cameFromReferer reports whether a page came, in its own tab, from the page its request named
// as Referer (panel.Hello.From). A popup that its opener navigates (window.open earlier, then
// popup.location = …) is requested with the opener's page as Referer, but came from the popup's
// own previous page: before, it took the opener's chat once the opener's tab went away, and the
// agent went on in a window the person was not looking at (red-team pass 6b). The hello is the
// page agent's own word, and a page agent's world may belong to another page (a same-origin
// popup's reused Window); but a page a chat may follow to is sent with a policy that gives it a
// Window of its own (proxy/openerguard.go), so there the hello is true. A browser without the
// Navigation API's activation says nothing, and the Referer decides as before.
func cameFromReferer(hello panel.Hello, note navNote) bool {
	return hello.From == "" || httpx.WithoutFragment(hello.From) == note.referer
}

// arrive runs for the tab's next page, noted with note: a chat whose page was its Referer moves
// to it (or will, if that page is reported gone in the next moments).
func (h *Hub) arrive(snap page.Info, note navNote) {
	f := &h.follow
	f.mu.Lock()
	var found *chat
	var newest time.Time
	for c, o := range f.orphans {
		if o.origin == snap.Origin && o.lastURL == note.referer && o.since.After(newest) {
			found, newest = c, o.since
		}
	}
	if found != nil {
		delete(f.orphans, found)
	} else {
		now := time.Now()
		for k, a := range f.arrivals {
			if now.Sub(a.at) > f.grace {
				delete(f.arrivals, k)
			}
		}
		if len(f.arrivals) < maxNavNotes {
			f.arrivals[arrivalKey(note.referer, snap.Origin)] = arrival{sessionID: snap.ID, origin: snap.Origin, at: now}
		}
	}
	f.mu.Unlock()
	if found != nil {
		h.adopt(found, snap)
	}
}

// adopt moves chat c to the page session snap; false if that page already has a chat.
func (h *Hub) adopt(c *chat, snap page.Info) bool {
	h.mu.Lock()
	if _, taken := h.bySession[snap.ID]; taken {
		h.mu.Unlock()
		return false
	}
	h.bySession[snap.ID] = c
	h.mu.Unlock()
	c.mu.Lock()
	c.sessionID = snap.ID
	if c.waiting != nil {
		close(c.waiting)
		c.waiting = nil
	}
	c.mu.Unlock()
	c.broadcastState()
	return true
}

var errPageLeft = errors.New("The page was closed or left the site, so the agent stopped. Open the panel on the site again to go on.")

// waitPage returns the chat's page, waiting while its tab loads the next page of the site.
func (c *chat) waitPage(ctx context.Context) (page.Info, error) {
	for {
		c.mu.Lock()
		id, ch := c.sessionID, c.waiting
		c.mu.Unlock()
		if id != "" {
			if sess, ok := c.hub.pages.Get(id); ok {
				return sess, nil
			}
		}
		if ch == nil {
			return page.Info{}, c.pageLeftError() // navguard.go
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return page.Info{}, ctx.Err()
		}
	}
}

// beforeStep is the loop's BeforeStep: a turn goes on only on a page of the chat's site.
func (c *chat) beforeStep(ctx context.Context) error {
	_, err := c.waitPage(ctx)
	return err
}
