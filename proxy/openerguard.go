package proxy

import (
	"net/http"
	"net/url"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// A chat's next page is never a Window another page holds (red-team pass 6b, OPEN-ITEMS 1 and 4).
//
// Chromium reuses a popup's initial about:blank Window for the first same-origin document it
// loads, so an opener that patches the popup's built-ins right after window.open holds the
// popup's page agent: every message of its session, the hello included. Nothing in the page's
// world can tell (every check calls something the opener may have replaced), and no request
// header says "popup". Such an opener removed the hello's newWindow flag and sent its own tab
// away: the chat of its tab moved into the popup it holds (chat/follow.go), and the agent's
// tool calls went on there, out of the person's sight.
//
// What the proxy can decide is the window a document gets. A document a chat may follow to
// (the request came from a page with a chat, or from one whose chat waits for its tab's next
// page: chat.Hub.NoteNavigation) is sent with Cross-Origin-Opener-Policy:
// noopener-allow-popups when its Referer is of its own origin (a document that can take a
// chat; the browser reuses a Window only for a document of its opener's origin). The browser then gives it a Window of its own, in a
// new browsing context group, and severs its opener, whatever the opener's own policy: so the
// page agent of every document that could take a chat captured its built-ins in a Window no
// other page has touched, and its hello (a popup says newWindow) is its own. The document may
// still open popups and keep them (allow-popups).
//
// The cost, only while a chat is open on the page a document came from: a same-origin popup
// opened from that page loses its window.opener (a site's own pop-out that calls back into
// its opener stops working while the person chats there, and so does a sign-in popup on another
// origin of the site that sends itself back without the person's input, keeping the Referer;
// a sign-in popup through another site keeps it: its request is cross-site, never followed); popups the tab opened before lose
// their link to it; and a page that was cross-origin isolated (COOP same-origin with COEP)
// is not, on that one document. Over plain http the browser ignores COOP (a secure-context
// feature), and the hole stays open there as the rest of the http residual (OPEN-ITEMS 2).

// openerPolicy is the policy a chat's next page is sent with.
const openerPolicy = "noopener-allow-popups"

// severOpener sets openerPolicy on the headers of an injected document that a chat may follow
// to (followed) and whose Referer is of its own origin: the only documents that can take a
// chat (a chat moves to a page of its origin whose Referer is the chat's page: chat/follow.go).
//
// The Referer, not Sec-Fetch-Site: a popup sent through a redirect on another origin of the
// site (a same-site open redirect) arrives with Sec-Fetch-Site: same-site, yet its document is
// same-origin with its opener, and the browser reuses the Window; with a referrer policy of
// unsafe-url its Referer is the opener's page, the chat's (found by
// TestRedteamHeldPopupTakesNoChatWhenItsTabLeaves, which a Sec-Fetch-Site test let through).
func severOpener(h http.Header, req *http.Request, followed bool) {
	if !followed || !refererOfOwnOrigin(req) {
		return
	}
	h["Cross-Origin-Opener-Policy"] = []string{openerPolicy}
}

// refererOfOwnOrigin reports whether a navigation's Referer is a page of its own origin.
func refererOfOwnOrigin(req *http.Request) bool {
	ref, err := url.Parse(req.Header.Get("Referer"))
	return err == nil && ref.Host != "" && httpx.OriginOf(ref) == httpx.OriginOf(req.URL)
}
