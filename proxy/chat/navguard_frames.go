package chat

import (
	"net/http"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// Frames the agent loaded (red-team pass 6a; OPEN-ITEMS 14). An action's navigation may load a
// frame's document rather than the tab's: the agent's click on a control whose script points a
// frame at an address, or a page the agent navigated to that frames an address from its own
// query (/viewer?doc=/go?to=…). A site's benign "you are leaving" page loaded there forwards by
// script — the frame itself (location = to) or the tab (top.location = to) — to an address the
// model chose, seconds later. Such a forward is a hop of the agent's navigation as much as a
// redirect is. So:
//
//   - A frame's request on the site that pairs is marked like a top-level one (its redirects off
//     the site are held), its origin becomes one of the expectation's frame origins, and its
//     2xx answer gives the chat a frame lease (navguard.go, lease): an expectation that pairs
//     navigations from that origin as the action's did, for as long as the frame can live.
//   - A navigation off the site that pairs is held when it is the tab's, as before; when it is a
//     frame's, it is held only when its Referer is of a frame origin (fromFrameLocked): a frame
//     document the agent loaded navigating on. A frame off the site whose Referer is the page's
//     own origin is the page's widget loading (payment, sign-in, a video) and is left alone.
//
// An <object> or <embed> document is such a frame too (embeddedDocument, eleventh session):
// Chromium loads it, and every navigation inside it, as Sec-Fetch-Dest object or embed with
// Sec-Fetch-Mode navigate, which httpx.NavigationKind does not count as a navigation.
//
// What the proxy cannot tell apart: a Referer carries an origin, not a frame (Chromium sends
// only the origin to another site by default). When the frame the agent loaded has the page's
// own origin, a widget the page frames later from that origin is held too, while the lease
// lives: it fails safe (the widget shows the proxy's page). A frame's first hop to another site
// (/viewer?doc=https://other.example/?data) has the page's Referer and is left alone: it is
// indistinguishable there from a widget, and holding every frame of a page the agent opened
// would break most pages (their embeds and payment frames).
//
// How long. A frame has no page agent (html.go injects into top-level documents), so a frame
// lease is bound to no session: it lives navDocLoading after the frame's document was answered,
// and no longer than the page it was loaded in (frameWithin): the session the action ran in,
// or a document the chat's agent loaded. A chat has one frame lease; each frame document its
// navigations load adds its origin, so a page that frames itself many times cannot fill the
// table (maxNavExpects) and push the leases of its tab out. Its origins are bounded (addOrigin),
// and the page's own frame loads renew it only up to navFrameLeaseMax after the agent's last
// action that loaded a frame.

// embeddedDocument reports whether r loads a document into an <object> or an <embed>
// (Sec-Fetch-Dest object or embed, Sec-Fetch-Mode navigate). httpx.NavigationKind does not
// count these as navigations (no page agent goes into them), but their documents are frames to
// this guard: a page the agent loaded may show a page of the site in one, which forwards itself
// off the site as a frame's document does (measured in Chromium: TestRedteamAgentObjectForwards).
func embeddedDocument(r *http.Request) bool {
	if r.Method != http.MethodGet || r.Header.Get("Sec-Fetch-Mode") != "navigate" {
		return false
	}
	dest := r.Header.Get("Sec-Fetch-Dest")
	return dest == "object" || dest == "embed"
}

// navFrameLeaseMax bounds a frame lease from the last action of the agent that loaded a frame
// into it: the page's own frame loads (which pair with the lease itself) renew navDocLoading
// only up to it, so a page that reloads a frame every minute cannot keep the lease for ever.
// Past it the page's frames are the page's own, as a page's are after its lease.
const navFrameLeaseMax = 3 * navDocLoading

// fromFrameLocked reports whether a paired navigation comes from a frame document the
// expectation's navigations loaded: its Referer is of a frame origin, or it has none and there
// is one (a no-referrer policy: counted as the frame's). Called with g.mu held.
func (x *navExpect) fromFrameLocked(nr navRequest) bool {
	if nr.referer != "" {
		return x.hasOriginLocked(x.frameOrigins, nr.referer)
	}
	return len(x.frameOrigins) > 0
}

// frameLeaseLocked is owner's frame lease, nil when it has none. Called with g.mu held.
func (g *navGuard) frameLeaseLocked(owner any) *navExpect {
	for _, o := range g.xs {
		if o.doc != nil && o.doc.frame && o.owner == owner {
			return o
		}
	}
	return nil
}

// frameWithin is how a frame lease started by x knows that the page the frame was loaded in
// still lives: the page session x's action runs in, or any document lease of x's chat (the
// page the action navigated the tab to, which framed the document). Its result is called with
// g.mu held.
func (g *navGuard) frameWithin(x *navExpect) func(now time.Time) bool {
	if x.doc != nil && x.doc.frame {
		return x.doc.within // a frame the chat's frame loaded: where that one lives
	}
	pageAlive, owner := x.pageAlive, x.owner // a document lease's frame: nil, so that lease (below)
	return func(now time.Time) bool {
		if pageAlive != nil && pageAlive() {
			return true
		}
		for _, o := range g.xs {
			if o.doc != nil && !o.doc.frame && o.owner == owner && o.doc.liveLocked(now) {
				return true
			}
		}
		return false
	}
}

// addOrigin adds origin o to an expectation's set m, bounded by maxNavURLs: past it m is marked
// full (its "" key, never an origin) and any origin of the site counts as one of it
// (hasOriginLocked). A page that loads frames from host after host of its site then neither
// grows the set nor gets its navigations out of the lease.
func addOrigin(m map[string]bool, o string) {
	if m[o] {
		return
	}
	if len(m) >= maxNavURLs {
		m[""] = true
		return
	}
	m[o] = true
}

// hasOriginLocked reports whether origin o is in x's set m (addOrigin). Called with g.mu held.
func (x *navExpect) hasOriginLocked(m map[string]bool, o string) bool {
	if o == "" {
		return false
	}
	if m[o] {
		return true
	}
	if !m[""] {
		return false
	}
	u, err := weburl.Parse(o)
	return err == nil && !x.leaves(u)
}
