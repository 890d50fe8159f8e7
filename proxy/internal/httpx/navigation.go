package httpx

import (
	"net/http"
	"strings"
)

// IsNavigation reports whether req is a browser's navigation to a document: the requests the
// proxy injects its page agent into (proxy/html.go) and whose answers a page's script never
// reads (PageCanRead). Over https Chromium says so in Sec-Fetch-Dest, which no page script can
// set; a page's own fetch or XMLHttpRequest says "empty", an iframe "iframe". Over plain http
// browsers send no fetch metadata, and a navigation is told by Upgrade-Insecure-Requests: 1,
// which every browser sends on navigations and no fetch, XMLHttpRequest or pjax/Turbo-style
// page swap sends unless its script adds it. That is not proof: a page that forges the header
// gets a document with a token of its own (proxy/page/claims.go says what such a token is
// worth).
func IsNavigation(req *http.Request) bool {
	switch req.Header.Get("Sec-Fetch-Dest") {
	case "document":
		return true
	case "":
		return req.Header.Get("Upgrade-Insecure-Requests") == "1"
	}
	return false // subresources, iframes, workers: not a page the person is looking at
}

// NavigationKind reports whether r is a navigation of a top-level document or of a frame: by
// its Fetch metadata, or, without any (plain http), by the headers browsers send only with
// navigations (counted as top-level: the two cannot be told apart there). The remixlet guards
// read requests so (proxy/remixlet/clientredirect.go); the agent's navigation guard has the same
// reading (navigationKind in proxy/chat/navguard.go).
func NavigationKind(r *http.Request) (top, frame bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return false, false
	}
	dest, mode := r.Header.Get("Sec-Fetch-Dest"), r.Header.Get("Sec-Fetch-Mode")
	if dest != "" || mode != "" {
		if mode != "" && mode != "navigate" {
			return false, false
		}
		return dest == "document", dest == "iframe" || dest == "frame"
	}
	return r.Header.Get("Upgrade-Insecure-Requests") == "1" || strings.HasPrefix(strings.TrimSpace(r.Header.Get("Accept")), "text/html"), false
}
