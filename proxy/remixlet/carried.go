package remixlet

import (
	"net/netip"
	"regexp"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// CarriedSites are the sites a piece of an address (a query, a fragment) carries in a shape a
// page script may load from, read as the address rule reads attribute values (deputies.go): as
// written, percent-decoded up to three times (escaped tabs and newlines dropped too, as the URL
// parser drops them once a script decoded them), and base64-decoded. Two kinds count:
//   - every http, https, ws, wss or scheme-relative address in any shape (plainAddressesIn),
//     read against an https page and, when it has a scheme, alone (new URL reads "https:/x.test"
//     as x.test's);
//   - a field of a shape — the text between the query's separators ? # & ; = — that reads as a
//     host name with an optional port and path ("witness.example/i?d=1", "10.0.0.7"), which a
//     script completes with "https://", when its name counts as naming a site (namedSite: a
//     real or reserved top-level domain, so "v1.2" and "file.txt" do not).
//
// The chat's navigation guard refuses an agent navigation whose query or fragment carries a site
// other than its own (OPEN-ITEMS 14; proxy/chat/navguard_carried.go). An address a script
// assembles from pieces, a host with no dot, or any other encoding is not seen (as in deputies.go).
func CarriedSites(s string) []string {
	return carriedSites(s, true)
}

// CarriedAddresses are the sites CarriedSites reads from addresses (with a scheme, or
// scheme-relative), not from fields that only read as a host name: what a page script loads as
// written. The chat reads a clicked link's fragment with it (navguard_carried.go), where a
// host-looking field is as often an in-page anchor ("#setup.py").
func CarriedAddresses(s string) []string {
	return carriedSites(s, false)
}

// carriedSites is CarriedSites, with host-looking fields read when fields is set.
func carriedSites(s string, fields bool) []string {
	var c siteSet
	base, _ := weburl.Parse("https://carried.invalid/")
	for _, shape := range CarriedShapes(s) {
		for _, a := range plainAddressesIn(shape) {
			if !isSlash(a[0]) {
				// Read alone too, as new URL(a) reads it: "https:/witness.test" and
				// "https:witness.test" are that site's there, a path of the page's against it.
				if u, err := weburl.Parse(a); err == nil && u.HostKey() != "" {
					c.add(weburl.Site(u.HostKey()))
				}
			}
			u, err := weburl.Resolve(base, a)
			if err != nil || u.HostKey() == "" || u.HostKey() == "carried.invalid" {
				continue
			}
			if isSlash(a[0]) && !strings.Contains(u.HostKey(), ".") {
				continue // "a//b" in a search is no address a script would load
			}
			c.add(weburl.Site(u.HostKey()))
		}
		for _, m := range ipv6Address.FindAllStringSubmatch(shape, -1) {
			c.add(ipv6Site(m[1]))
		}
		if !fields {
			continue
		}
		for _, field := range strings.FieldsFunc(shape, queryBreak) {
			c.add(fieldSite(strings.TrimSpace(field)))
		}
	}
	return c.out
}

// CarriedInPath are the sites a path carries as addresses with a scheme, in the shapes
// CarriedSites reads (as written, percent-decoded up to three times, escaped tabs and newlines
// dropped, base64-decoded: a segment that is base64 of an address): "/viewer/https://x.test/…",
// "/https:/x.test", "/viewer/https%3A%2F%2Fx.test%2F…", "/b/aHR0cHM6Ly94LnRlc3Qv". An address
// written with two slashes after its scheme counts whatever its host; with one or none
// ("https:/x.test", "https:x.test", which new URL reads as x.test's) only when its host names a
// site (namedSite), so "/wiki/HTTP:_The_Definitive_Guide" does not; so does a scheme-relative
// address ("/v///x.test/i", eleventh session: a viewer may complete it with the page's scheme),
// so a doubled slash before a file name ("/images//logo.gif") does not, though one before a
// name on a real top-level domain ("/docs//readme.md") does. Host-looking segments
// ("/example.com/", "/wiki/Example.com") are not read: too many sites have such paths (a
// domain's page, a wiki's title).
//
// The chat's navigation guard refuses an agent navigation whose path carries a site other than
// its own, as it does one whose query does (OPEN-ITEMS 14; proxy/chat/navguard_carried.go).
func CarriedInPath(path string) []string {
	var c siteSet
	for _, shape := range CarriedShapes(path) {
		addrs := plainAddressesIn(shape)
		for len(addrs) > 0 {
			a := addrs[0]
			addrs = addrs[1:]
			colon := strings.IndexByte(a, ':')
			if isSlash(a[0]) {
				colon = 1
			}
			// One inside another, as a web archive's snapshot of a redirect holds it.
			addrs = append(addrs, plainAddressesIn(a[colon+1:])...)
			if isSlash(a[0]) {
				// Scheme-relative ("/v///x.test/i"): only a host that names a site, so a doubled
				// slash before a name ("/images//logo.gif", "/ab//shared.js") does not count.
				if u, err := weburl.Parse("https:" + a); err == nil {
					if site, ok := namedSite(strings.ToLower(u.HostKey())); ok {
						c.add(site)
					}
				}
				continue
			}
			u, err := weburl.Parse(a)
			if err != nil || u.HostKey() == "" {
				continue
			}
			if len(a) > colon+2 && isSlash(a[colon+1]) && isSlash(a[colon+2]) {
				c.add(weburl.Site(u.HostKey()))
			} else if site, ok := namedSite(strings.ToLower(u.HostKey())); ok {
				c.add(site)
			}
		}
		for _, m := range ipv6Address.FindAllStringSubmatch(shape, -1) {
			if !isSlash(m[0][0]) {
				c.add(ipv6Site(m[1]))
			}
		}
	}
	return c.out
}

// CarriedShapes are the shapes of s a page script may load an address from, which CarriedSites
// and CarriedInPath read: s as written, its percent-decoded levels (decodedLevels), those again
// with escaped tabs and newlines dropped (escapedBreaks), and the base64 texts of all of them
// (base64Texts).
func CarriedShapes(s string) []string {
	if s == "" {
		return nil
	}
	shapes := append([]string{s}, decodedLevels(s)...)
	for _, level := range shapes[:len(shapes):len(shapes)] {
		if d := escapedBreaks.Replace(level); d != level {
			shapes = append(append(shapes, d), decodedLevels(d)...)
		}
	}
	for _, level := range shapes[:len(shapes):len(shapes)] {
		shapes = append(shapes, base64Texts(level)...)
	}
	return shapes
}

// siteSet collects sites once each, in the order first added; "" is never added.
type siteSet struct {
	seen map[string]bool
	out  []string
}

func (c *siteSet) add(site string) {
	if site == "" || c.seen[site] {
		return
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[site] = true
	c.out = append(c.out, site)
}

// ipv6Site is the site of an IPv6 literal host ("[2001:db8::7]"), "" when it does not parse.
func ipv6Site(host string) string {
	u, err := weburl.Parse("http://" + host + "/")
	if err != nil {
		return ""
	}
	return weburl.Site(u.HostKey())
}

// escapedBreaks drops the escaped tabs and newlines that decodePrintable keeps: decoded (by
// URLSearchParams, decodeURIComponent), the URL parser drops them wherever they stand, so
// "ht%09tps://witness.test/" and "witness%0A.test" load as written without them.
var escapedBreaks = strings.NewReplacer("%09", "", "%0a", "", "%0A", "", "%0d", "", "%0D", "")

// fieldSite is the site a field names when it reads as a host name, an optional port and an
// optional path (hostField), "" when it does not or the name names no site (namedSite). A user
// name before the host counts (the URL parser drops it) where no mail address has one: with a
// password ("d:4711@witness.test") or with a port or path after the host
// ("d4711@witness.test/i"); a plain mail address does not. A field with escapes left or other
// than ASCII characters (full-width letters, "witness%E3%80%82test") is read as the URL parser
// reads it after "https://" (IDNA maps those to ASCII).
func fieldSite(field string) string {
	hostEnd := strings.IndexAny(field, `/\`)
	if hostEnd < 0 {
		hostEnd = len(field)
	}
	if at := strings.LastIndexByte(field[:hostEnd], '@'); at >= 0 {
		if hostEnd == len(field) && !strings.Contains(field, ":") {
			return "" // a mail address, as common in queries as it is
		}
		field = field[at+1:] // user:password@host, user@host/path: no mail address
	}
	if strings.ContainsFunc(field, func(r rune) bool { return r == '%' || r >= 0x80 }) {
		if u, err := weburl.Parse("https://" + field); err == nil {
			field = u.HostKey()
		}
	}
	m := hostField.FindStringSubmatch(field)
	if m == nil {
		return ""
	}
	if ip := spelledIPv4(m[1]); ip != "" {
		return ip
	}
	if site, ok := namedSite(strings.ToLower(strings.TrimSuffix(m[1], "."))); ok {
		return site
	}
	return ""
}

// spelledIPv4 is the IPv4 address the URL parser reads a host of four numbers, or of numbers one
// of which is hex, as ("0xcb.0.113.9", "0313.0.0161.011": 203.0.113.9), "" for any other host.
// Fewer decimal numbers ("2.05", "1.2.3") are version numbers far more often than addresses.
func spelledIPv4(host string) string {
	lower := strings.ToLower(host)
	if strings.Count(lower, ".") != 3 && !strings.Contains(lower, "0x") {
		return ""
	}
	u, err := weburl.Parse("https://" + host)
	if err != nil {
		return ""
	}
	if ip, err := netip.ParseAddr(u.HostKey()); err == nil && ip.Is4() {
		return ip.String()
	}
	return ""
}

// ipv6Address matches an address whose host is an IPv6 literal ("http://[2001:db8::7]/x",
// "//[2001:db8::7]"), the host in group 1. plainAddressesIn ends an address at its "[" (the
// address rule then refuses the unparsable "http://" in an attribute, which is safe there), so
// CarriedSites, which must name the site, reads these apart.
var ipv6Address = regexp.MustCompile(`(?i)(?:(?:https?|wss?):)?[/\\]{2,}(\[[0-9a-f:.]+\])`)

// queryBreak separates the fields of a query or fragment.
func queryBreak(r rune) bool {
	return r == '?' || r == '#' || r == '&' || r == ';' || r == '='
}

// hostField matches a field that is a host name (dotted labels), an optional port, and an
// optional path.
var hostField = regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+\.?)(?::[0-9]{1,5})?(?:[/\\].*)?$`)
