package sandbox

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// A Pattern is a parsed Chrome match pattern: "<all_urls>" or scheme://host/path, where
//   - scheme is "http", "https" or "*" (either of them; the proxy sees no other scheme),
//   - host is "*" (every host), "*.example.com" (example.com and every subdomain) or an exact
//     host, optionally followed by ":port" (":*" or no port: any port),
//   - path starts with "/" and may use "*" for any run of characters; it is matched against the
//     URL's path and query, never the fragment.
type Pattern struct {
	raw        string
	allURLs    bool
	scheme     string // "http", "https" or "*"
	host       string // "" means every host
	subdomains bool   // host was "*.host"
	port       string // "" means any port
	path       string
}

// ParsePattern parses a Chrome match pattern. Its errors say what is wrong with the pattern.
func ParsePattern(s string) (*Pattern, error) {
	if s == "<all_urls>" {
		return &Pattern{raw: s, allURLs: true, scheme: "*", path: "/*"}, nil
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, errors.New("contains a space or control character")
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil, errors.New(`missing "://" after the scheme`)
	}
	switch scheme {
	case "*", "http", "https":
	case "":
		return nil, errors.New("missing scheme")
	default:
		return nil, fmt.Errorf("scheme %q is not supported: use http, https or *", scheme)
	}
	host, path, ok := strings.Cut(rest, "/")
	if !ok {
		return nil, errors.New(`missing path: add "/*" after the host`)
	}
	path = "/" + path
	p := &Pattern{raw: s, scheme: scheme, path: path}
	h, port, hasPort := strings.Cut(host, ":")
	if strings.HasPrefix(host, "[") {
		// An IPv6 address: its port, if any, comes after the closing bracket.
		h, port, hasPort = host, "", false
		if i := strings.Index(host, "]:"); i >= 0 {
			h, port, hasPort = host[:i+1], host[i+2:], true
		}
	}
	if hasPort {
		if port != "*" {
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
				return nil, fmt.Errorf("port %q is not a number from 1 to 65535 or *", port)
			}
			p.port = port
		}
		host = h
	}
	switch {
	case host == "":
		return nil, errors.New("missing host")
	case host == "*":
		// every host
	case strings.HasPrefix(host, "*."):
		p.subdomains = true
		p.host = host[2:]
	default:
		p.host = host
	}
	if p.host != "" || host != "*" {
		if strings.Contains(p.host, "*") {
			return nil, errors.New(`"*" in the host must be the whole host or come first, followed by "."`)
		}
		if err := checkPatternHost(p.host); err != nil {
			return nil, err
		}
	}
	p.host = strings.ToLower(p.host)
	return p, nil
}

func checkPatternHost(h string) error {
	if h == "" {
		return errors.New("missing host after \"*.\"")
	}
	if strings.HasPrefix(h, "[") {
		if !strings.HasSuffix(h, "]") || !strings.Contains(h, ":") || strings.ContainsFunc(h[1:len(h)-1], func(r rune) bool {
			return !(r == ':' || r == '.' || isHexDigit(r))
		}) {
			return fmt.Errorf("host %q is not an IPv6 address", h)
		}
		// As the browser writes it (compressed, lowercase), which is what Match compares.
		return hostAsWritten(h, "is not an IPv6 address")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			return fmt.Errorf("host %q has an empty label", h)
		}
		if strings.ContainsFunc(label, func(r rune) bool {
			return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) {
			return fmt.Errorf("host %q may contain only letters, digits, '-' and '.' (write non-ASCII names in punycode)", h)
		}
	}
	// The host as the browser reads it (DESIGN invariant 9) must be the host written: a name
	// of numbers ("127.1", "0x7f.1") is an IPv4 address to a browser, and punycode must decode.
	return hostAsWritten(h, "is not a host a browser can read")
}

// hostAsWritten checks that the browser reads h (lowercased) as written; unread says what h
// is not when the browser cannot read it at all.
func hostAsWritten(h, unread string) error {
	lower := strings.ToLower(h)
	read, err := weburl.Host(lower)
	if err != nil {
		return fmt.Errorf("host %q %s", h, unread)
	}
	if read != lower {
		return fmt.Errorf("host %q is %s to a browser: write that", h, read)
	}
	return nil
}

func isHexDigit(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
}

// String returns the pattern as written.
func (p *Pattern) String() string { return p.raw }

// EverySite reports whether the pattern matches pages on every host.
func (p *Pattern) EverySite() bool { return p.allURLs || p.host == "" }

// Match reports whether the URL is one the pattern covers. Only http and https URLs match.
func (p *Pattern) Match(u *url.URL) bool {
	if u == nil {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return false
	}
	if p.scheme != "*" && p.scheme != scheme {
		return false
	}
	if p.allURLs {
		return true
	}
	if p.port != "" && p.port != portOf(u) {
		return false
	}
	if p.host != "" && !hostCovered(p.host, p.subdomains, patternHostOf(u)) {
		return false
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		path += "?" + u.RawQuery
	}
	return globMatch(p.path, path)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// patternHostOf is u's host as a pattern's host is written: lowercase, and an IPv6 address in
// brackets as the browser writes it (net/url's Hostname drops the brackets; OPEN-ITEMS 105).
func patternHostOf(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	if strings.Contains(h, ":") {
		if read, err := weburl.Host(h); err == nil {
			return read
		}
		return "[" + h + "]"
	}
	return h
}

// hostCovered reports whether host is base itself or, with subdomains, a subdomain of base.
func hostCovered(base string, subdomains bool, host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == base {
		return true
	}
	return subdomains && strings.HasSuffix(host, "."+base)
}

// globMatch matches s against a pattern in which '*' stands for any run of characters.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return strings.HasSuffix(s, last)
}

// patterns returns the parsed matches and excludes. A Manifest from ParseManifest has them
// already; for one built by hand they are parsed on each call (never cached, so a Manifest is
// safe to share between goroutines) and invalid patterns are skipped: they match nothing.
func (m *Manifest) patterns() (matches, excludes []*Pattern) {
	matches, excludes = m.matches, m.excludes
	if matches == nil {
		matches = parseValid(m.Matches)
	}
	if excludes == nil {
		excludes = parseValid(m.ExcludeMatches)
	}
	return matches, excludes
}

func parseValid(raw []string) []*Pattern {
	var out []*Pattern
	for _, s := range raw {
		if p, err := ParsePattern(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// MatchesURL reports whether the remixlet runs on the page at u: some pattern in matches covers
// it and no pattern in exclude_matches does.
func (m *Manifest) MatchesURL(u *url.URL) bool {
	matches, excludes := m.patterns()
	hit := false
	for _, p := range matches {
		if p.Match(u) {
			hit = true
			break
		}
	}
	if !hit {
		return false
	}
	for _, p := range excludes {
		if p.Match(u) {
			return false
		}
	}
	return true
}

// Sites says where a remixlet may run, at host granularity: Every, or a set of host patterns.
// Each host is an exact host ("example.com") or a host with all its subdomains
// ("*.example.com"). exclude_matches are not subtracted: Sites is an upper bound, which is what
// approvals compare.
type Sites struct {
	Every bool
	Hosts []string // sorted, without duplicates; nil when Every
}

// Sites returns the hosts the remixlet's matches cover.
func (m *Manifest) Sites() Sites {
	matches, _ := m.patterns()
	var hosts []string
	for _, p := range matches {
		if p.EverySite() {
			return Sites{Every: true}
		}
		h := p.host
		if p.subdomains {
			h = "*." + h
		}
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	// Drop hosts another entry already covers ("www.a.com" under "*.a.com").
	var out []string
	for _, h := range hosts {
		covered := false
		for _, o := range hosts {
			if o != h && SitePatternCovers(o, h) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, h)
		}
	}
	return Sites{Hosts: out}
}

// CoversHost reports whether a page on host could be one the sites cover.
func (s Sites) CoversHost(host string) bool {
	if s.Every {
		return true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, h := range s.Hosts {
		if SitePatternCovers(h, host) {
			return true
		}
	}
	return false
}

// Covers reports whether every page the other sites cover is covered by s.
func (s Sites) Covers(other Sites) bool {
	if s.Every {
		return true
	}
	if other.Every {
		return false
	}
	for _, h := range other.Hosts {
		if !s.CoversHost(h) {
			return false
		}
	}
	return true
}

// SitePatternCovers reports whether the host pattern a ("example.com" or "*.example.com")
// covers the host pattern b.
func SitePatternCovers(a, b string) bool {
	if a == b {
		return true
	}
	base, sub := strings.CutPrefix(a, "*.")
	if !sub {
		return false
	}
	b = strings.TrimPrefix(b, "*.")
	return b == base || strings.HasSuffix(b, "."+base)
}
