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
