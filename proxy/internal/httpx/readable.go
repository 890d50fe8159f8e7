package httpx

import (
	"net/http"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// PageCanRead reports whether the browser hands resp to the page script that sent req (a fetch
// or an XMLHttpRequest), as the Fetch Standard decides: an answer from the page's own origin, or
// an answer from another origin to a request in CORS mode that passes the CORS check. An answer
// from another origin to a no-cors request is opaque to the page (and Chromium's ORB keeps JSON
// and HTML out of the page's process): the proxy sees it whole, but what it records of "the
// responses a page received" (page data for the agent, network:observe for remixlets) must not
// give a page, or the model it steers, what the browser keeps from it — an intranet's or another
// site's answers to requests the page sent as the person.
//
// The page's origin is read from Sec-Fetch-Site, which no script can set; where the browser
// sends no fetch metadata (plain http), from the Referer, which a script can only set to an
// address of its own origin. A credentialed request (a Cookie header) passes the CORS check only
// with the request's own Origin allowed and Access-Control-Allow-Credentials: true, as in the
// browser; without cookies an answer allowing every origin ("*") counts as readable.
func PageCanRead(req *http.Request, resp *http.Response) bool {
	if req == nil || resp == nil || req.URL == nil {
		return false
	}
	mode := req.Header.Get("Sec-Fetch-Mode")
	switch mode {
	case "navigate", "websocket":
		return false
	}
	// A document, and a service worker's script, as the browser gets them carry what the proxy
	// put in (a page token in the bootstrap, proxy/html.go; the shim and its relay key,
	// proxy/swshim.go): no page's fetch gets that text. Over http, where no fetch metadata
	// comes, a navigation is told by Upgrade-Insecure-Requests, as the injection tells it.
	switch dest := req.Header.Get("Sec-Fetch-Dest"); {
	case IsNavigation(req), dest == "iframe", dest == "frame", dest == "serviceworker",
		req.Header.Get("Service-Worker") == "script":
		return false
	}
	if sameOrigin(req) {
		return true
	}
	if mode == "no-cors" || mode == "same-origin" {
		return false
	}
	origin := req.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return false // every CORS request from another origin carries its Origin
	}
	allowed := resp.Header.Values("Access-Control-Allow-Origin")
	if len(allowed) != 1 {
		return false
	}
	credentialed := req.Header.Get("Cookie") != ""
	switch {
	case allowed[0] == "*":
		return !credentialed
	case allowed[0] != origin:
		return false
	case credentialed:
		return resp.Header.Get("Access-Control-Allow-Credentials") == "true"
	}
	return true
}

// sameOrigin reports whether req was sent by a page of the origin it is sent to.
func sameOrigin(req *http.Request) bool {
	if site := req.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	ref, err := weburl.Parse(req.Header.Get("Referer"))
	if err != nil || !ref.IsHTTP() {
		return false
	}
	target, err := weburl.Parse(req.URL.String())
	if err != nil || !target.IsHTTP() {
		return false
	}
	return ref.Origin() == target.Origin()
}
