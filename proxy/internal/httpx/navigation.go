package httpx

import "net/http"

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
