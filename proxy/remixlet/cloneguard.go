package remixlet

import (
	"net/http"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// The redirect guard for clones (red-team pass 6d, OPEN-ITEMS 28). dom.clone copies a page
// element with the page's own addresses; the page agent checks them by the address rule (an
// image only from the page's origin and the remixlet's sites and fetch: hosts), but the proxy
// never sees them, so they were not guarded. An image of the page's own origin that the site
// redirects elsewhere — a comment's image through the site's open redirect,
// /redirect?to=https://elsewhere/0 — was asked for again by every clone, and the redirect sent
// the browser to elsewhere each time: a channel in the number and order of clones, for anything
// the remixlet read (TestRedteamCloneCarriesNoSignalThroughARedirect: 4 clones, 4 requests).
//
// The clone's addresses cannot be guarded before the browser asks for them (the page agent
// makes the clone; the image loads at once). So once a remixlet clones on a page, the page's
// image requests are guarded for it as its own addresses are: an image request (Sec-Fetch-Dest
// image; with no Fetch metadata, an Accept of image/…) made by that page — its Referer is the
// page's address (the default policy sends it whole to the page's own origin), or only the
// page's origin (to another origin), or, with no Referer, the request is same-origin with the
// page — whose answer redirects off the remixlet's sites is refused, while the page is open and
// for the guard's grace after. The collateral: that page's own images that redirect to another
// site, requested after the clone, are refused too (NOTES.deputy6.md).

// addClone records that remixlet cloned page elements on the page session (its URL pageURL).
func (g *redirectGuard) addClone(session, pageURL, remixlet string, m *sandbox.Manifest) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.addLocked(session, pageURL, remixlet, m, nil, 0); err != nil {
		return err
	}
	if o := g.owners[ownerID{session, remixlet}]; o != nil {
		o.clones = true
	}
	return nil
}

// cloneHits are the owners that cloned on the page that made req, an image request (see the top
// of the file); nil for any other request.
func (g *redirectGuard) cloneHits(req *http.Request) []guardHit {
	dest := req.Header.Get("Sec-Fetch-Dest")
	if dest != "image" && (dest != "" || !strings.HasPrefix(req.Header.Get("Accept"), "image/")) {
		return nil
	}
	var refKey, refOrigin, reqOrigin string
	if ref, err := weburl.Parse(req.Header.Get("Referer")); err == nil && ref.IsHTTP() {
		refKey, refOrigin = weburl.Key(ref), ref.Origin()
		if ref.PathQuery() != "/" {
			refOrigin = "" // a whole address: only that page
		}
	} else if req.Header.Get("Sec-Fetch-Site") == "same-origin" || req.Header.Get("Sec-Fetch-Site") == "" {
		if u, err := httpx.RequestedAddress(req); err == nil {
			reqOrigin = u.Origin()
		}
	}
	if refKey == "" && reqOrigin == "" {
		return nil
	}
	grace, _, _ := g.limits()
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock()
	var hits []guardHit
	for _, o := range g.owners {
		if !o.clones || (!o.ended.IsZero() && now.Sub(o.ended) > grace) {
			continue
		}
		for pu := range o.urls {
			u, err := weburl.Parse(pu)
			if err != nil {
				continue
			}
			if weburl.Key(u) == refKey || (refOrigin != "" && u.Origin() == refOrigin) || (reqOrigin != "" && u.Origin() == reqOrigin) {
				hits = append(hits, o.hit(pu))
				break
			}
		}
	}
	return hits
}

// clonePairsAgain reports whether cloneHits will pair the next hop of req's redirect from from
// to to by itself, so it need not be guarded as an address: the browser sends the next hop of
// an image's redirect with the page's Referer again (whole to the page's origin, the origin only
// elsewhere, as the policy reads it for the new target), and with no Referer a same-origin hop
// stays same-origin. Only a hop with no Referer to another origin is not paired again.
func clonePairsAgain(req *http.Request, from, to *weburl.URL) bool {
	if ref, err := weburl.Parse(req.Header.Get("Referer")); err == nil && ref.IsHTTP() {
		return true
	}
	return weburl.SameOrigin(from, to)
}
