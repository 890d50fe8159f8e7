// Package weburl reads an address the way a browser does, so that every allow/deny decision the
// proxy makes about an address is about the URL the browser will actually request, not about a
// spelling of it (DESIGN invariant 9).
//
// It sits in front of every address check: the remixlet page policy (href and src values, the
// addresses inside dom.setHTML) resolves and normalises with it before deciding; the redirect
// guard compares the request the browser really sent with the address a remixlet wrote through
// Key; the agent's tools (navigate, open_page, http_request), its navigation guard, rmx.fetch,
// network rules, network:observe and the links in the agent's replies read their addresses and
// hosts here, and Site is the one registrable-domain rule ("same site") for all of them. Parsing follows the WHATWG URL Standard (github.com/nlnwa/whatwg-url, which passes
// the web-platform-tests URL suite): tabs and newlines are removed, leading and trailing C0
// controls and spaces ignored, a backslash is a slash in http(s) addresses, dot segments
// (including %2e spellings) are resolved, IPv4 numbers in any form become dotted decimal, hosts
// are mapped with IDNA/UTS-46 (fullwidth letters, the ideographic full stop U+3002 and upper case
// all become the ASCII host), and the scheme's default port is dropped.
//
// It must never: hand back a spelling the browser would not request, or fold two addresses the
// browser keeps apart into one Origin.
package weburl

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/publicsuffix"
)

// URL is one parsed address, as the browser holds it.
type URL struct {
	u *whatwg.Url
}

// parser follows the standard with no options: what browsers implement.
var parser = whatwg.NewParser()

// Parse reads an absolute address.
func Parse(raw string) (*URL, error) {
	u, err := parser.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parsing address %q: %w", clip(raw), err)
	}
	return &URL{u: u}, nil
}

// Resolve reads ref, absolute or relative, against base, as an element's href or src is read
// against its document's URL. A nil base reads ref as absolute.
func Resolve(base *URL, ref string) (*URL, error) {
	if base == nil {
		return Parse(ref)
	}
	// The whatwg-url parser writes to the base while it resolves against it (it fills the
	// base's search parameters in lazily), so each call resolves against a copy of its own: a
	// URL stays safe to share between goroutines.
	b, err := parser.Parse(base.u.Href(false))
	if err != nil {
		return nil, fmt.Errorf("resolving address %q: the base %q does not parse again: %w", clip(ref), clip(base.Href()), err)
	}
	u, err := b.Parse(ref)
	if err != nil {
		return nil, fmt.Errorf("resolving address %q: %w", clip(ref), err)
	}
	return &URL{u: u}, nil
}

// Href is the whole serialised address, fragment included: what an element's href or src
// property reads back.
func (u *URL) Href() string { return u.u.Href(false) }

// Request is the address the browser requests: Href without the fragment.
func (u *URL) Request() string { return u.u.Href(true) }

// Scheme is the scheme, lower case, without the colon.
func (u *URL) Scheme() string { return u.u.Scheme() }

// Hostname is the host as the browser serialises it: the ASCII (punycode) form of a domain,
// dotted decimal for IPv4, [bracketed] IPv6; a trailing dot is kept, as the browser keeps it.
func (u *URL) Hostname() string { return u.u.Hostname() }

// HostKey is the host name for comparisons with host lists (a manifest's sites, fetch: hosts):
// Hostname without a trailing dot, which names the same DNS host.
func (u *URL) HostKey() string { return strings.TrimSuffix(u.u.Hostname(), ".") }

// Site is the address's site: Site of its HostKey.
func (u *URL) Site() string { return Site(u.HostKey()) }

// PathQuery is the request-target the browser sends for an http(s) address: the path and the
// query ("/a/b?c"), as serialised, without the fragment. "" for other addresses.
func (u *URL) PathQuery() string {
	if !u.IsHTTP() {
		return ""
	}
	r := u.Request()
	rest := r[len(u.u.Scheme())+len("://"):]
	// The host and user info hold no "/" (it ends the authority, and user info escapes it),
	// and an http(s) path always starts with one.
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:]
	}
	return "/"
}

// Go returns the address as Go's net/url holds it, for Go's HTTP client and for code that takes
// a *url.URL: the browser's serialisation read by net/url, which must find the same scheme,
// host and port (else an error: the address is then not one Go can act on as the browser
// would). Percent-escapes in the path may differ in spelling (net/url escapes a few characters
// the Standard leaves raw), never in meaning.
func (u *URL) Go() (*url.URL, error) {
	href := u.Href()
	g, err := url.Parse(href)
	if err != nil {
		return nil, fmt.Errorf("reading address %q for Go: %w", clip(href), err)
	}
	host := strings.Trim(u.Hostname(), "[]")
	if g.Scheme != u.Scheme() || strings.Trim(g.Hostname(), "[]") != host || g.Port() != u.u.Port() || (g.User != nil) != u.HasCredentials() {
		return nil, fmt.Errorf("reading address %q for Go: Go reads another scheme, host or port", clip(href))
	}
	return g, nil
}

// GoHostKey is Go with the host in HostKey's form (no trailing dot; it names the same DNS
// host): for a request the proxy sends itself, so that the host Go dials is the host that was
// checked, and for a link the proxy writes.
func (u *URL) GoHostKey() (*url.URL, error) {
	g, err := u.Go()
	if err != nil {
		return nil, err
	}
	if h := u.Hostname(); strings.HasSuffix(h, ".") {
		g.Host = u.HostKey()
		if p := u.u.Port(); p != "" {
			g.Host += ":" + p
		}
	}
	return g, nil
}

// Port is the port the browser connects to: the explicit one, or the scheme's default ("" for
// schemes without one).
func (u *URL) Port() string {
	if p := u.u.Port(); p != "" {
		return p
	}
	switch u.u.Scheme() {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	case "ftp":
		return "21"
	}
	return ""
}

// HasCredentials reports whether the address carries a user name or password.
func (u *URL) HasCredentials() bool { return u.u.Username() != "" || u.u.Password() != "" }

// IsHTTP reports whether the address is http or https with a host.
func (u *URL) IsHTTP() bool {
	s := u.u.Scheme()
	return (s == "http" || s == "https") && u.u.Hostname() != ""
}

// Origin is the address's origin serialised as a browser does (scheme://host[:port], the port
// only when it is not the default), or "null" for an address without a tuple origin.
func (u *URL) Origin() string {
	switch u.u.Scheme() {
	case "http", "https", "ws", "wss", "ftp":
		return u.u.Scheme() + "://" + u.u.Host()
	case "blob":
		// A blob: address has the origin of the http(s) address in its path.
		if inner, err := Parse(u.u.Pathname()); err == nil && inner.IsHTTP() {
			return inner.Origin()
		}
	}
	return "null"
}

// OriginOf is the origin of the http(s) address raw as the browser reads it (Origin), "" when
// raw is not an http(s) address with a host. An address whose scheme and host are already in
// the parser's own spelling — "https://" or "http://", a host plainHost takes as it is, an
// optional port of digits without a leading zero, then '/', '?', '#' or the end — is read
// without the parser (the injection asks for every navigation: chat.Hub.NoteNavigation); the
// path cannot make the parser refuse an http(s) address. TestOriginOfAgreesWithTheParser holds
// the two together.
func OriginOf(raw string) string {
	if o, ok := plainOrigin(raw); ok {
		return o
	}
	u, err := Parse(raw)
	if err != nil || !u.IsHTTP() {
		return ""
	}
	return u.Origin()
}

// plainOrigin is OriginOf's way without the parser; ok is false for anything else.
func plainOrigin(raw string) (string, bool) {
	scheme, rest, defaultPort := "https", strings.TrimPrefix(raw, "https://"), "443"
	if len(rest) == len(raw) {
		scheme, rest, defaultPort = "http", strings.TrimPrefix(raw, "http://"), "80"
		if len(rest) == len(raw) {
			return "", false
		}
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	hostPort := rest[:end]
	host, port, hasPort := strings.Cut(hostPort, ":")
	if _, ok := plainHost(host); !ok { // (a trailing dot stays in the origin, as the parser keeps it)
		return "", false
	}
	if !hasPort {
		return raw[:len(raw)-len(rest)+len(host)], true // scheme://host, as raw spells it
	}
	if port == defaultPort {
		return scheme + "://" + host, true
	}
	if port == "" || len(port) > 5 || port[0] == '0' {
		return "", false
	}
	n := 0
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", false
		}
		n = n*10 + int(port[i]-'0')
	}
	if n > 65535 {
		return "", false
	}
	return scheme + "://" + hostPort, true
}

// SameOrigin reports whether a and b have the same tuple origin.
func SameOrigin(a, b *URL) bool {
	return a != nil && b != nil && a.Origin() != "null" && a.Origin() == b.Origin()
}

// Key is the comparison key of an http(s) address, the one the redirect guard stores and looks
// up: scheme, host (without a trailing dot), effective port, path and query with every
// percent-escape decoded, no fragment. Two spellings a browser could send for one request — one
// that escapes a character and one that leaves it raw, as browsers differ in which characters
// they escape — get the same key; different paths or queries never do (decoding can only join
// what a server would read alike, e.g. %41 and A). "" for anything that is not http(s).
func Key(u *URL) string {
	if u == nil || !u.IsHTTP() {
		return ""
	}
	var b strings.Builder
	b.WriteString(u.u.Scheme())
	b.WriteString("://")
	b.WriteString(u.HostKey())
	b.WriteString(":")
	b.WriteString(u.Port())
	// The decoded path keeps % and ? escaped, so it cannot run into the query or another
	// escape.
	b.WriteString(keyPathEscapes.Replace(percentDecode(u.u.Pathname())))
	if q := u.u.Query(); q != "" {
		b.WriteString("?")
		b.WriteString(percentDecode(q))
	}
	return b.String()
}

// keyPathEscapes re-escapes what Key's decoded path keeps escaped. One Replacer for every call:
// a Replacer builds its tables on first use, which cost every Key call an allocation-heavy build
// when it was made per call.
var keyPathEscapes = strings.NewReplacer("%", "%25", "?", "%3F")

// percentDecode decodes every valid %XX escape; a % not followed by two hex digits stays.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// ErrNotHost is wrapped by Host's errors.
var ErrNotHost = errors.New("not a host")

// Host reads a bare host — a permission's HOST, a host list's entry, the Host a request names
// (without its port) — as the browser reads the host of an http(s) address: IDNA/UTS-46
// (fullwidth letters, other full stops and upper case fold to ASCII), IPv4 numbers in any form
// as dotted decimal, IPv6 compressed in brackets (a bare IPv6 address is accepted too), and
// without a trailing dot (HostKey's form). Anything that is more than a host (a port, a path,
// user info, a query) or that the browser cannot read as a host is an error wrapping ErrNotHost.
func Host(s string) (string, error) {
	if h, ok := plainHost(s); ok {
		return h, nil // what the parser would return, without its cost (every response asks)
	}
	if s == "" {
		return "", fmt.Errorf("reading host %q: %w: it is empty", s, ErrNotHost)
	}
	if strings.ContainsAny(s, `/\?#@`) {
		return "", fmt.Errorf("reading host %q: %w: it holds a path, query or user name", clip(s), ErrNotHost)
	}
	if strings.Contains(s, ":") && !strings.HasPrefix(s, "[") {
		ip, err := netip.ParseAddr(s)
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", fmt.Errorf("reading host %q: %w: a host has no port", clip(s), ErrNotHost)
		}
		s = "[" + s + "]"
	}
	u, err := Parse("http://" + s + "/")
	if err != nil {
		return "", fmt.Errorf("reading host %q: %w: %w", clip(s), ErrNotHost, err)
	}
	if u.u.Port() != "" || strings.HasSuffix(strings.TrimSpace(s), ":") || u.Request() != "http://"+u.Hostname()+"/" {
		return "", fmt.Errorf("reading host %q: %w: it is more than a host", clip(s), ErrNotHost)
	}
	h := u.HostKey()
	if h == "" {
		return "", fmt.Errorf("reading host %q: %w", clip(s), ErrNotHost)
	}
	return h, nil
}

// plainHost returns s without one trailing dot when the parser would read s as exactly that:
// labels of lowercase ASCII letters, digits and '-', none empty, none punycode ("xn--", which
// the parser decodes to check), and a last label that does not start with a digit (a number
// there makes the whole host an IPv4 address) or '-' (whatwg-url reads "-0" as a number too,
// and refuses the host). ok is false for anything else, which then takes the parser's way.
// TestPlainHostAgreesWithTheParser holds the two together.
func plainHost(s string) (string, bool) {
	h := strings.TrimSuffix(s, ".")
	if h == "" || len(h) > 253 {
		return "", false
	}
	labelStart := 0
	for i := 0; i <= len(h); i++ {
		if i < len(h) && h[i] != '.' {
			c := h[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return "", false
			}
			continue
		}
		if i == labelStart || strings.HasPrefix(h[labelStart:i], "xn--") {
			return "", false
		}
		if i == len(h) && ('0' <= h[labelStart] && h[labelStart] <= '9' || h[labelStart] == '-') {
			return "", false
		}
		labelStart = i + 1
	}
	return h, true
}

// Site is the site of a host as Host or HostKey read it: its registrable domain (eTLD+1 by the
// public-suffix list), so that www.shop.test and shop.test are one site; an IP address, or a name
// the list gives no registrable domain (a public suffix itself, "localhost"), is its own site.
// It does not parse: a host in another spelling must be read by Host first (it only lowercases
// and drops a trailing dot).
func Site(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if strings.HasPrefix(host, "[") || strings.Contains(host, ":") {
		return host // IPv6
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// ErrNotHTTP is returned by RequestTarget for a request that names no http(s) address.
var ErrNotHTTP = errors.New("not an http(s) request")

// RequestTarget reads the address of a request the browser sent: scheme, the Host it named and
// the request-target exactly as received (origin form "/path?query", or an absolute URL as a
// plain proxy request carries it). It goes through the same parser as the addresses remixlets
// write, so Key compares both sides alike.
func RequestTarget(scheme, host, target string) (*URL, error) {
	if scheme != "http" && scheme != "https" {
		return nil, ErrNotHTTP
	}
	if strings.HasPrefix(target, "/") {
		if host == "" {
			return nil, ErrNotHTTP
		}
		return Parse(scheme + "://" + host + target)
	}
	u, err := Parse(target)
	if err != nil {
		return nil, err
	}
	if !u.IsHTTP() {
		return nil, ErrNotHTTP
	}
	return u, nil
}

// clip shortens an address for an error message.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
