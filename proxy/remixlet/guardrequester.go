package remixlet

import (
	"net/http"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// Whose request it is (red-team pass 6d, OPEN-ITEMS 36). The redirect guard remembers the
// addresses a remixlet wrote on a page; it used to refuse the redirect of any request for such
// an address, from any page, for the grace period: the same site's other tabs and pages, and the
// person typing the address, got the 403 too. A request for an address the remixlet wrote on
// page P comes from P (an image it wrote, a link on P that is clicked, the server's redirect
// hops, which keep P's Referer) or from a document P's navigation opened (clientredirect.go,
// which adds that document to the owner's pages). So a guarded address is guarded for a request
// whose Referer is one of the owner's pages, or only the origin of one (the default policy
// towards another origin, and a page's "origin" policies), or that has no Referer at all (a
// no-referrer policy: it may be P's, fail safe). A Referer of another page is not P's: it
// passes. Sec-Fetch-Site "none" — the address bar, a bookmark — is the person's own and passes.
// The collateral that stays: P's own request for exactly that address (the remixlet's copy and
// the page's own cannot be told apart by the proxy; guarding the page's own would be the
// planted-images channel of red-team pass 5a again).

// requester is what the guard knows of who made a request.
type requester struct {
	typed  bool   // Sec-Fetch-Site: none
	none   bool   // no Referer
	key    string // the Referer's weburl.Key when it names a whole address
	origin string // the Referer's origin when it names only that
}

func requesterOf(req *http.Request) requester {
	if req == nil {
		return requester{none: true}
	}
	if req.Header.Get("Sec-Fetch-Site") == "none" {
		return requester{typed: true}
	}
	ref, err := weburl.Parse(req.Header.Get("Referer"))
	if err != nil || !ref.IsHTTP() {
		return requester{none: true}
	}
	if ref.PathQuery() == "/" {
		return requester{origin: ref.Origin(), key: weburl.Key(ref)}
	}
	return requester{key: weburl.Key(ref)}
}

// mayBe reports whether the request may come from one of o's pages. Called with g.mu held.
func (r requester) mayBe(o *guardOwner) bool {
	if r.none || o.anyPage {
		return true
	}
	for pu := range o.urls {
		u, err := weburl.Parse(pu)
		if err != nil {
			continue
		}
		if weburl.Key(u) == r.key || (r.origin != "" && u.Origin() == r.origin) {
			return true
		}
	}
	return false
}

// addPage adds pageURL to the pages of the owner (session, remixlet): a document its
// navigation opened. It reports false when there is no such owner (nothing is then guarded
// for it, and the caller refuses).
func (g *redirectGuard) addPage(session, remixlet, pageURL string) bool {
	if pageURL == "" {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	o := g.owners[ownerID{session, remixlet}]
	if o == nil {
		return false
	}
	o.addPageLocked(pageURL)
	return true
}

// addPageLocked adds pageURL to o's pages; past maxOwnerPages, o takes every page for its own
// (fail safe: more guarded, never less).
func (o *guardOwner) addPageLocked(pageURL string) {
	if len(o.urls) >= maxOwnerPages {
		o.anyPage = true
		return
	}
	o.urls[pageURL] = true
}

// sessionMoved adds the address an SPA navigation moved a page session to, to the pages of its
// owners (the Referer of its requests now names it).
func (g *redirectGuard) sessionMoved(session, pageURL string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, o := range g.owners {
		if id.session == session {
			o.addPageLocked(pageURL)
		}
	}
}

// maxOwnerPages bounds the pages one owner is known by; past it, the owner guards its addresses
// for requests from any page (anyPage).
const maxOwnerPages = 256
