package chat

import (
	"io"
	"net/http"
	"strings"
	"time"
)

// WebSocket messages during the send guard's window (OPEN-ITEMS 19; the lead's decision in the
// eleventh session): not held, said on the send guard's card (sendUnheld), and logged. The
// proxy relays a WebSocket through httputil.ReverseProxy, which after the 101 copies bytes both
// ways; holding a message would stall everything after it on the socket, heartbeats included
// (NOTES, "The send guard — the person's own posts…", §2c). So the 101 of a page's socket to a
// site an agent action covers gets a watch on what the browser sends (WatchSocket): when the
// socket opens during an action's window, or carries a data frame (text, binary, a
// continuation; not ping, pong or close) while one is live, the proxy's log says so, once per
// socket and action. The bytes pass unchanged. The cost is one frame-header scan per frame the
// browser sends on a proxied socket, and an atomic load per frame while no action is live.

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
	look time.Time // when a data frame last looked at the actions (at most once a socketLook)
}

// socketLook is how often a socket's data frames look at the actions while one is live: a
// chat app's frames take the guard's lock at most once a second each.
const socketLook = time.Second

// Write scans p for the start of a data frame, and passes it on unchanged.
func (ws *watchedSocket) Write(p []byte) (int, error) {
	if ws.scan.scan(p) && ws.h.nav.sends.live.Load() != 0 && ws.h.nav.clock().Sub(ws.look) >= socketLook {
		ws.note("the page sent messages on a WebSocket during an agent action's window; they are not held")
	}
	return ws.ReadWriteCloser.Write(p)
}

// note logs what once for the newest live action the socket pairs with that it was not yet
// logged for.
func (ws *watchedSocket) note(what string) {
	g := &ws.h.nav
	now := g.clock()
	ws.look = now
	g.mu.Lock()
	var newest *navExpect
	for _, x := range g.actionsSendingLocked(ws.sr, now) {
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

// frameScan follows the frame boundaries of a WebSocket stream from the browser (RFC 6455 §5.2)
// across writes: it keeps a header until it is whole and skips payloads by their length.
type frameScan struct {
	hdr  [14]byte // a header being read: 2 bytes, up to 8 of length, 4 of mask
	n    int      // bytes of hdr read
	left uint64   // payload bytes of the current frame not yet seen
}

// scan reads p and reports whether a data frame (opcode 0, 1 or 2) started in it.
func (f *frameScan) scan(p []byte) (data bool) {
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
		if f.hdr[0]&0x0f <= 2 {
			data = true
		}
		f.left, f.n = length, 0
	}
	return data
}
