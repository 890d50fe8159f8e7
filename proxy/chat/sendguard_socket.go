package chat

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// WebSocket messages during the send guard's window (OPEN-ITEMS 19; the lead's decision in the
// eleventh session): not held, said on the send guard's card (sendUnheld), logged, and told to
// the person in the chat. The proxy relays a WebSocket through httputil.ReverseProxy, which
// after the 101 copies bytes both ways; holding a message would stall everything after it on
// the socket, heartbeats included (NOTES, "The send guard — the person's own posts…", §2c). So
// the 101 of a page's socket to a site an agent action covers gets a watch on what the browser
// sends (WatchSocket): when the socket opens during an action's window, or carries a message
// (a data frame that ends one: text, binary, a continuation with FIN; not ping, pong or close)
// while one is live, the proxy's log says so, once per socket and action. And the messages
// are counted to each live action they pair with (each chat's newest, as for requests): once
// the action has answered, its chat shows one note for the person, "During or after the
// agent's click “…”, the page sent N messages on an open connection (WebSocket); such messages
// are not held." (socketNote), updated in place while more come in the window. The note is a
// chat item, as the cards are: the model never reads it. The bytes pass unchanged. The cost is
// one frame-header scan per frame the browser sends on a proxied socket, an atomic load per
// message while no action is live, and while one is, the guard's lock at most once a second
// per socket (or when an action is armed) and an atomic add per message.

// sendUnheld is the send guard card's row that says what it does not hold.
const sendUnheld = "Messages the page sends on open connections (WebSocket) are not held."

// WatchSocket is a response tap: a 101 answer to a WebSocket upgrade gets a watch on the
// frames the browser sends (see the top of the file).
func (h *Hub) WatchSocket(resp *http.Response) {
	if resp == nil || resp.StatusCode != http.StatusSwitchingProtocols || resp.Request == nil ||
		!strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") {
		return
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		return // ReverseProxy refuses such an upgrade itself
	}
	ws := &watchedSocket{ReadWriteCloser: rwc, h: h, sr: readSendRequest(resp.Request)}
	if h.nav.sends.live.Load() != 0 {
		ws.note("a WebSocket opened during an agent action's window; its messages are not held")
	}
	resp.Body = ws
}

// watchedSocket is the connection to the site of a page's WebSocket: what the browser sends is
// written to it by one goroutine (ReverseProxy's copy to the backend).
type watchedSocket struct {
	io.ReadWriteCloser
	h    *Hub
	sr   sendRequest
	scan frameScan
	told uint64    // the newest action it was logged for
	look time.Time // when it last paired with the actions (at most once a socketLook)
	// xs are the live actions it paired with then (of armed actions): its messages count to them.
	xs    []*navExpect
	armed uint64
}

// socketLook is how often a socket's messages look at the actions while one is live: a chat
// app's frames take the guard's lock at most once a second each (and when an action is armed).
const socketLook = time.Second

// Write scans p for the messages in it, and passes it on unchanged.
func (ws *watchedSocket) Write(p []byte) (int, error) {
	if n := ws.scan.scan(p); n > 0 && ws.h.nav.sends.live.Load() != 0 {
		if ws.h.nav.clock().Sub(ws.look) >= socketLook || ws.h.nav.sends.armed.Load() != ws.armed {
			ws.note("the page sent messages on a WebSocket during an agent action's window; they are not held")
		}
		for _, x := range ws.xs {
			ws.h.countSocket(x, n)
		}
	}
	return ws.ReadWriteCloser.Write(p)
}

// note pairs the socket with the live actions, and logs what once for the newest of them that
// it was not yet logged for.
func (ws *watchedSocket) note(what string) {
	g := &ws.h.nav
	now := g.clock()
	ws.look = now
	g.mu.Lock()
	ws.armed = g.sends.armed.Load()
	ws.xs = g.actionsSendingLocked(ws.sr, now)
	var newest *navExpect
	for _, x := range ws.xs {
		if x.id > ws.told && (newest == nil || x.id > newest.id) {
			newest = x
		}
	}
	var site, control string
	if newest != nil {
		ws.told, site, control = newest.id, newest.site, newest.control
	}
	g.mu.Unlock()
	if newest != nil {
		ws.h.log.Info(what, "site", site, "action", control, "to", originShown(ws.sr.url))
	}
}

// socketCount is an action's count of the messages pages sent on WebSockets in its window, and
// its note in the chat (navExpect.sends.socket).
type socketCount struct {
	sent atomic.Int64 // messages counted
	due  atomic.Bool  // a note is scheduled (socketNoteAfter)
	// Guarded by navGuard.mu.
	shown int64  // the count the note shows
	id    string // the note's chat item; "" until shown
}

// socketNoteAfter is how long after a message (and at least after the action's answer) its
// action's note shows or is updated: one update a second at most while a page keeps sending.
const socketNoteAfter = time.Second

// countSocket counts n messages to the action x, and schedules its note.
func (h *Hub) countSocket(x *navExpect, n int) {
	x.sends.socket.sent.Add(int64(n))
	if x.sends.socket.due.CompareAndSwap(false, true) {
		time.AfterFunc(socketNoteAfter, func() { h.socketNote(x) })
	}
}

// socketNote shows (or updates) the note of x's messages in its chat, once its call has
// answered; while it runs, it looks again socketNoteAfter later.
func (h *Hub) socketNote(x *navExpect) {
	g := &h.nav
	s := &x.sends.socket
	g.mu.Lock()
	if x.running && g.clock().Sub(x.started) < navMaxRunning {
		g.mu.Unlock()
		time.AfterFunc(socketNoteAfter, func() { h.socketNote(x) })
		return
	}
	s.due.Store(false) // a message from now on schedules another look
	n := s.sent.Load()
	if n == s.shown {
		g.mu.Unlock()
		return
	}
	if s.id == "" {
		s.id = "n" + httpx.RandomID()[:12]
	}
	s.shown = n
	id, owner, control := s.id, x.owner, x.control
	g.mu.Unlock()
	c, ok := owner.(*chat)
	if !ok {
		return // an action of no chat (tests)
	}
	if control == "" {
		control = "action"
	}
	messages := "1 message"
	if n != 1 {
		messages = fmt.Sprintf("%d messages", n)
	}
	// Plain text: control quotes the page's words.
	c.put(chatItem{ID: id, Kind: "notice", MD: panel.PlainNodes("During or after the agent's " + control + ", the page sent " +
		messages + " on an open connection (WebSocket); such messages are not held.")}, true)
}

// frameScan follows the frame boundaries of a WebSocket stream from the browser (RFC 6455 §5.2)
// across writes: it keeps a header until it is whole and skips payloads by their length.
type frameScan struct {
	hdr  [14]byte // a header being read: 2 bytes, up to 8 of length, 4 of mask
	n    int      // bytes of hdr read
	left uint64   // payload bytes of the current frame not yet seen
}

// scan reads p and returns how many messages ended in it: data frames (opcode 0, 1 or 2) with
// FIN, counted at their header.
func (f *frameScan) scan(p []byte) (messages int) {
	for len(p) > 0 {
		if f.left > 0 {
			k := min(uint64(len(p)), f.left)
			f.left -= k
			p = p[k:]
			continue
		}
		f.hdr[f.n] = p[0]
		f.n++
		p = p[1:]
		if f.n < 2 {
			continue
		}
		need, ext := 2, 0
		switch f.hdr[1] & 0x7f {
		case 126:
			ext = 2
		case 127:
			ext = 8
		}
		need += ext
		if f.hdr[1]&0x80 != 0 {
			need += 4 // the mask: every frame a browser sends has one
		}
		if f.n < need {
			continue
		}
		length := uint64(f.hdr[1] & 0x7f)
		if ext > 0 {
			length = 0
			for _, b := range f.hdr[2 : 2+ext] {
				length = length<<8 | uint64(b)
			}
		}
		if f.hdr[0]&0x0f <= 2 && f.hdr[0]&0x80 != 0 {
			messages++
		}
		f.left, f.n = length, 0
	}
	return messages
}
