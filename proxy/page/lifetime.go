package page

import (
	"errors"
	"time"
)

// A token's lifetime. A page token is the key that opens its document's session, and a token
// can leak (a same-origin popup whose Window its opener holds reads it, a site's own service
// worker sees every document it relays: OPEN-ITEMS 1, 3). Before, a token once read opened its
// page's session at any later time, one at a time. Now a token opens a session without the
// resume key only within tokenLifetime of the response that carried it: the page agent
// connects at once, or right after the page's load, so a real document needs seconds. A live
// tab's reconnections (a dropped socket, the back/forward cache, a proxy restart) present the
// resume key its welcome gave it, and are not bound by the lifetime (claim).
//
// The cost: a document the browser takes from its HTTP cache on a history navigation (back to a
// page that was not kept in the back/forward cache) more than tokenLifetime after it was served
// is refused, and its launcher's title says to reload it, which brings a document with a token of
// its own.

// tokenLifetime bounds how long after its response a token opens a session without the key.
const tokenLifetime = 10 * time.Minute

var errTokenExpired = errors.New("this copy of the page is too old to connect (it came from the browser's history); reload this tab")

// tokenExpired reports whether a token issued at issued may no longer open a session without
// the resume key. A token from the future (the clock was set back) is not refused: it is ours.
func (h *Hub) tokenExpired(issued time.Time) bool {
	return h.now().Sub(issued) > tokenLifetime
}

// The resume key's bound. The key reopened its token's session at any time, so a page that once
// read a session's welcome (a same-origin popup whose Window its opener holds: OPEN-ITEMS 1) kept
// that session for as long as it liked, reconnecting whenever, from any page of its origin. Now a
// key reopens the session only while the token's session is live (a reconnection replaces it, as
// before) or within resumeGrace of the moment it ended, or of the hub's start (a proxy restart:
// the table of ends is empty then). A live tab needs no more: its socket reconnects within
// seconds of a drop (at most 30 s apart while the proxy is away), and the back/forward cache
// keeps a page for at most ten minutes in Chromium. The hub's clock is time.Now, whose
// monotonic reading does not advance while the machine sleeps (Linux, macOS, Windows), so a tab
// whose laptop slept overnight still reconnects on waking.
//
// What stays: a holder that keeps a socket of the session open keeps the session, one at a time,
// like a popup the page leaves open; and for resumeGrace after each proxy start, any key it kept.
// The cost: a page restored from the back/forward cache, or a tab whose proxy was down, more
// than resumeGrace after its socket closed asks to be reloaded (its launcher's title says so).

// resumeGrace bounds how long after its token's session ended (or the hub started) a resume key
// reopens it.
const resumeGrace = 15 * time.Minute

// maxEnded bounds the table of ended sessions' times (claimTable.ended). When it is full of
// entries within their grace, one is forgotten: that tab, if it comes back, is asked to reload.
const maxEnded = 4096

var errResumeTooLate = errors.New("this page was away from the proxy too long to reconnect; reload this tab")

// resumeTooLateLocked reports whether a resume key for the token named key, whose session is
// not live, may no longer reopen it. Called with h.mu held.
func (h *Hub) resumeTooLateLocked(key string, now time.Time) bool {
	if ended, ok := h.claims.ended[key]; ok {
		return now.Sub(ended) > resumeGrace
	}
	return now.Sub(h.started) > resumeGrace
}

// noteEndedLocked records that the live session of the token named key ended at now, keeping the
// table bounded. Called with h.mu held.
func (h *Hub) noteEndedLocked(key string, now time.Time) {
	ended := h.claims.ended
	if _, ok := ended[key]; !ok && len(ended) >= maxEnded {
		for k, at := range ended {
			if now.Sub(at) > resumeGrace {
				delete(ended, k)
			}
		}
		for k := range ended {
			if len(ended) < maxEnded {
				break
			}
			delete(ended, k)
		}
	}
	ended[key] = now
}
