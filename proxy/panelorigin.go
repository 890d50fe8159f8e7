package proxy

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The panel's frame: only inside a page of the origin its address names.
//
// The panel token is in the welcome on the page agent's socket, and a page can hold a session
// of its own origin (a same-origin popup whose Window its opener patched, a forged navigation
// over plain http: OPEN-ITEMS 1, 2). With frame-ancestors * such a page could show the real
// panel of that session framed on any other site. Now the page agent loads the panel at
// /panel?for=ORIGIN (its own origin), the panel is served with frame-ancestors ORIGIN alone, so
// the browser renders it only where every ancestor is of that origin, and the panel sends the
// same ORIGIN on its socket, where the proxy refuses it unless it is the session's origin
// (proxy/chat/panelorigin.go). A page that frames /panel?for=its-own-origin gets a panel whose
// socket names its own origin, refused for another origin's token; one that frames
// /panel?for=the-token's-origin gets nothing rendered. Unlike location.ancestorOrigins (not in
// Firefox), frame-ancestors is enforced by every browser with CSP 2.

// panelFrameCSP is the panel page's policy for request r: frame-ancestors the origin of its
// FrameOriginParam, or 'none' when that is not an origin a policy can name.
func panelFrameCSP(r *http.Request) string {
	origin := r.URL.Query().Get(panel.FrameOriginParam)
	if !framableOrigin(origin) {
		return panelSources + "frame-ancestors 'none'"
	}
	return panelSources + "frame-ancestors " + origin
}

// framableOrigin reports whether origin is an http(s) origin as location.origin writes it
// (lower case, no default port) that a CSP host-source names exactly: a host of letters,
// digits, dots and hyphens (an IPv6 literal cannot be written in a host-source).
func framableOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if host == "" || strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" {
		return false
	}
	return origin == httpx.OriginOf(u) // a default port written out is not as location.origin writes it
}
