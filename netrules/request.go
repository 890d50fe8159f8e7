package netrules

import (
	"net"
	"net/http"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// Initiator states.
const (
	// InitiatorUnknown: the request's initiator cannot be told; rules of remixlets that run on
	// some sites do not act on it, and neither do rules with initiator conditions.
	InitiatorUnknown = iota
	// InitiatorNone: the person started the request (a typed address, a bookmark).
	InitiatorNone
	// InitiatorKnown: Request.Initiator is the host of the page that made the request.
	InitiatorKnown
)

// A Request is what rules are matched against. NewRequest builds one.
type Request struct {
	url, lower         string // canonical URL and its lowercase form
	hostStart, hostEnd int    // the host within url
	Scheme             string // "http" or "https"
	Host               string // lowercase, no port, no trailing dot
	Method             string // lowercase: get, post, …, or other
	Type               string // a resource type name (main_frame, image, …)
	InitiatorState     int
	Initiator          string // host of the initiating page when InitiatorState is InitiatorKnown
}

// URL returns the canonical URL rules are matched against.
func (r *Request) URL() string { return r.url }

// NewRequest describes a browser request for matching: u is the absolute http(s) address it
// asks for as the browser reads it (weburl: the proxy reads the request it received, so rules
// match the address the browser sent, in the browser's spelling), h its headers. The resource
// type comes from ResourceType, the initiator from InitiatorOf.
func NewRequest(method string, u *weburl.URL, h http.Header) *Request {
	r := &Request{Scheme: u.Scheme(), Host: normHost(u.HostKey())}
	pq := u.PathQuery()
	var b strings.Builder
	b.Grow(len(r.Host) + len(pq) + 16)
	b.WriteString(r.Scheme)
	b.WriteString("://")
	r.hostStart = b.Len()
	if strings.Contains(r.Host, ":") {
		b.WriteString("[" + r.Host + "]")
	} else {
		b.WriteString(r.Host)
	}
	r.hostEnd = b.Len()
	if p := u.Port(); p != "" && !(r.Scheme == "http" && p == "80" || r.Scheme == "https" && p == "443") {
		b.WriteString(":" + p)
	}
	if pq == "" {
		pq = "/"
	}
	b.WriteString(pq)
	r.url = b.String()
	r.lower = strings.ToLower(r.url)
	r.Method = strings.ToLower(method)
	switch r.Method {
	case "connect", "delete", "get", "head", "options", "patch", "post", "put":
	default:
		r.Method = "other"
	}
	r.Type = ResourceType(h)
	r.InitiatorState, r.Initiator = InitiatorOf(u, h)
	return r
}

// ResourceType derives Chrome's resource type from the request's fetch metadata:
// Sec-Fetch-Dest (document → main_frame, iframe/frame → sub_frame, style → stylesheet,
// script and workers → script, image, font, object/embed → object, audio/video/track → media,
// report → csp_report; "empty" → websocket when Sec-Fetch-Mode is websocket or the request
// upgrades to a WebSocket, ping for <a ping> (Ping-To/Ping-From, text/ping), xmlhttprequest
// otherwise; anything else → other). Without Sec-Fetch-Dest (plain http:// pages, other
// clients) it goes by Upgrade and Accept: text/html → main_frame, text/css → stylesheet,
// image/* → image, anything else → other.
func ResourceType(h http.Header) string {
	if strings.EqualFold(h.Get("Upgrade"), "websocket") {
		return "websocket"
	}
	switch strings.ToLower(h.Get("Sec-Fetch-Dest")) {
	case "document":
		return "main_frame"
	case "iframe", "frame", "fencedframe":
		return "sub_frame"
	case "style":
		return "stylesheet"
	case "script", "worker", "sharedworker", "serviceworker", "audioworklet", "paintworklet", "sharedstorageworklet":
		return "script"
	case "image":
		return "image"
	case "font":
		return "font"
	case "object", "embed":
		return "object"
	case "audio", "video", "track":
		return "media"
	case "report":
		return "csp_report"
	case "empty":
		switch {
		case strings.EqualFold(h.Get("Sec-Fetch-Mode"), "websocket"):
			return "websocket"
		case h.Get("Ping-To") != "" || h.Get("Ping-From") != "" || strings.HasPrefix(h.Get("Content-Type"), "text/ping"):
			return "ping"
		}
		return "xmlhttprequest"
	case "":
		accept := strings.ToLower(h.Get("Accept"))
		switch {
		case strings.HasPrefix(accept, "text/html"):
			return "main_frame"
		case strings.HasPrefix(accept, "text/css"):
			return "stylesheet"
		case strings.HasPrefix(accept, "image/"):
			return "image"
		}
	}
	return "other"
}

// InitiatorOf decides which page made a request to u, from its headers:
//
//   - Sec-Fetch-Site "none": the person started it (InitiatorNone).
//   - "same-origin": the initiator is u's host (an Origin or Referer saying otherwise makes
//     it unknown).
//   - "same-site" and "cross-site": the initiator is the host of Origin, or else of Referer,
//     and it must be on the same site as u (same-site) or another site (cross-site); without
//     either header, or when they disagree with Sec-Fetch-Site, it is unknown.
//   - no Sec-Fetch-Site (plain http:// pages, which get no fetch metadata): Origin, or else
//     Referer; without either, unknown.
//
// A top-level navigation is no exception: its initiator is the page it comes from, its Referer.
// An "Origin: null" (sandboxed frames, opaque origins) is treated as absent.
func InitiatorOf(u *weburl.URL, h http.Header) (state int, host string) {
	claimed := originHost(h.Get("Origin"))
	if claimed == "" {
		claimed = originHost(h.Get("Referer"))
	}
	reqHost := normHost(u.HostKey())
	switch strings.ToLower(h.Get("Sec-Fetch-Site")) {
	case "none":
		return InitiatorNone, ""
	case "same-origin":
		if claimed != "" && claimed != reqHost {
			return InitiatorUnknown, ""
		}
		return InitiatorKnown, reqHost
	case "same-site":
		if claimed == "" || weburl.Site(claimed) != weburl.Site(reqHost) {
			return InitiatorUnknown, ""
		}
		return InitiatorKnown, claimed
	case "cross-site":
		if claimed == "" || weburl.Site(claimed) == weburl.Site(reqHost) {
			return InitiatorUnknown, ""
		}
		return InitiatorKnown, claimed
	case "":
		if claimed == "" {
			return InitiatorUnknown, ""
		}
		return InitiatorKnown, claimed
	}
	return InitiatorUnknown, ""
}

// originHost is the host of an http(s) Origin or Referer value as the browser reads it, or "".
func originHost(v string) string {
	if v == "" || v == "null" {
		return ""
	}
	u, err := weburl.Parse(v)
	if err != nil || !u.IsHTTP() {
		return ""
	}
	h := normHost(u.HostKey())
	if h == "" {
		return ""
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return h
}
