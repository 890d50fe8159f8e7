package page

import (
	"net/url"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// A page's fetches and XHRs carry its address as their Referer; that is how a response on its
// way to the browser is filed under the page session that asked for it (the recorded page data,
// data.go, and network:observe, remixlet/rmx_observe.go).

// RefererIsOrigin reports whether referer is a bare origin (no path beyond "/", no query), as a
// strict-origin referrer policy sends it: any page of that origin may then be the one it names.
func RefererIsOrigin(referer *url.URL) bool {
	return (referer.Path == "" || referer.Path == "/") && referer.RawQuery == ""
}

// RefererSession names the page session among sessions (oldest first, as List gives them) that
// a response whose request carried referer belongs to: the newest whose address is the
// referer's (fragments aside), or, when the referer is a bare origin, the newest page of that
// origin; "" when there is none.
func RefererSession(referer *url.URL, sessions []Info) string {
	ref := httpx.WithoutFragment(referer.String())
	origin := httpx.OriginOf(referer)
	var exact, sameOrigin string
	for _, ss := range sessions { // oldest first: the last match is the newest
		if httpx.WithoutFragment(ss.URL) == ref {
			exact = ss.ID
		}
		if ss.Origin == origin {
			sameOrigin = ss.ID
		}
	}
	if exact == "" && RefererIsOrigin(referer) {
		return sameOrigin
	}
	return exact
}
