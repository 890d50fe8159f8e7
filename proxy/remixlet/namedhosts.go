package remixlet

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"
	"golang.org/x/text/unicode/norm"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// Hosts a remixlet named (red-team pass 6d, OPEN-ITEMS 29). A page script can turn any text into
// a request: an unfurler that fetches the address in a text node, a loader that joins a host
// from one attribute with a path from another. Which transforms a site's scripts apply cannot be
// known; what can be known is where a request goes. A request a page's script makes to carry
// what the remixlet wrote somewhere needs that somewhere's name, and the site's own scripts do
// not know the attacker's host: the remixlet must write it. So every site (registrable domain)
// a remixlet names in what it writes on a page — in text, attribute values, HTML, styles, in
// any shape the address rule reads (as written, percent-decoded, base64-decoded; full-width and
// ideographic spellings folded), as an address or a bare host name — is remembered for that
// page, and a request the page makes to that site (any kind: an image, a fetch, a navigation
// without the person's activation) is answered with the proxy's 403, unless the site is the
// page's own or one the remixlet may load from (its sites and fetch: hosts), or the request is
// for an address exactly as a remixlet of the page that may load from its host wrote it (that
// remixlet's own load: writtenByLoaderLocked).
//
// Which requests are the page's: as the redirect guard decides (guardrequester.go) — a Referer
// of the page or of its origin only; no Referer, unless Sec-Fetch-Site says the request came from
// the named site itself. While the page is open, and openedAfterEnd after. The collateral: while
// such a page is open, other pages of its origin cannot reach a site the remixlet named either,
// and neither can the page's own scripts (a remixlet that writes "fonts.example.com" in a note
// stops the page's later loads from there; the log says so).
//
// What this does not see: a host written in pieces a script joins (two labels in two
// attributes), or in an encoding the rule does not read (hex, char codes, a site's own cipher).

const maxNamedSitesPerOwner = 4096

// hostPattern finds host-like names: labels of letters (any script), digits and hyphens joined
// by dots. A name with letters outside ASCII is read as the browser reads it (weburl.Host:
// IDNA/UTS-46), so "wítness.test" is remembered as the punycode host the browser would ask.
var hostPattern = regexp.MustCompile(`[\p{L}\p{N}](?:[\p{L}\p{N}\p{M}-]{0,62}[\p{L}\p{N}\p{M}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}\p{M}-]{0,62}[\p{L}\p{N}\p{M}])?)+`)

// namedSites returns the sites named in the strings of a dom call's arguments (see the top of
// the file); nil for calls that write nothing.
func namedSites(method string, args json.RawMessage) []string {
	switch method {
	case "setText", "setAttr", "create", "setHTML", "addStyle", "setStyle":
	default:
		return nil
	}
	var v any
	if json.Unmarshal(args, &v) != nil {
		return nil
	}
	texts := collectStrings(v, nil)
	seen := map[string]bool{}
	var out []string
	for _, t := range texts {
		for _, s := range sitesIn(t) {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

func collectStrings(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = collectStrings(e, out)
		}
	case map[string]any:
		for k, e := range x {
			out = append(out, k)
			out = collectStrings(e, out)
		}
	}
	return out
}

// hostFolds are the dots UTS-46 maps to "." (NFKC maps the full-width letters).
var hostFolds = strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".")

// sitesIn returns the sites of the host names in s, as written and in its decoded shapes.
func sitesIn(s string) []string {
	levels := append([]string{s}, decodedLevels(s)...)
	shapes := slices.Clone(levels)
	for _, level := range levels {
		shapes = append(shapes, base64Texts(level)...)
	}
	var out []string
	for _, shape := range shapes {
		folded := hostFolds.Replace(norm.NFKC.String(shape))
		for _, h := range hostPattern.FindAllString(folded, -1) {
			if ascii, err := weburl.Host(h); err == nil {
				h = ascii
			}
			h = strings.ToLower(h)
			if site, ok := namedSite(h); ok {
				out = append(out, site)
			}
		}
	}
	return out
}

// reservedTLDs are the special-use names (RFC 2606, RFC 6761, ICANN's .internal) that the public
// suffix list leaves out but that a browser may still reach through a local resolver or hosts
// file (the red-team tests' witness.test is one): they are counted like real top-level domains.
var reservedTLDs = map[string]bool{"test": true, "example": true, "invalid": true, "localhost": true, "local": true, "internal": true}

// namedSite is the site of the host name h (lower case, ASCII) when h counts as naming a site,
// and false otherwise (review of 6d, item 3). A remixlet that copies page text writes many dotted
// tokens that are no host ("file.txt", "e.g", "v1.2"); counting each as a site refused the page's
// own later loads from such a site and, with enough of them, the remixlet's writes
// (maxNamedSitesPerOwner). So a token counts only when its last label is a top-level domain the
// public suffix list holds as ICANN's (or a reserved one, above) and it has a registrable domain
// under it ("co.uk" alone names none); an IPv4 address counts as itself (a page script can load
// from one). Tokens whose last label happens to be a real TLD ("readme.md", "setup.py") still
// count: the rule is narrower, not exact.
func namedSite(h string) (string, bool) {
	if ip, err := netip.ParseAddr(h); err == nil {
		return h, ip.Is4()
	}
	tld := h[strings.LastIndexByte(h, '.')+1:]
	if !reservedTLDs[tld] {
		if ps, icann := publicsuffix.PublicSuffix(tld); !icann || ps != tld {
			return "", false
		}
	}
	site, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return "", false
	}
	return site, true
}

// addNamed remembers sites a remixlet named on a page session. It adds all of them or none.
func (g *redirectGuard) addNamed(session, pageURL, remixlet string, m *sandbox.Manifest, sites []string) error {
	if len(sites) == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.addLocked(session, pageURL, remixlet, m, nil, 0); err != nil {
		return err
	}
	o := g.owners[ownerID{session, remixlet}]
	if o.named == nil {
		o.named = map[string]bool{}
	}
	fresh := 0
	for _, s := range sites {
		if !o.named[s] {
			fresh++
		}
	}
	if len(o.named)+fresh > maxNamedSitesPerOwner {
		return fmt.Errorf("%w: this remixlet already named %d sites on this page, and the proxy watches at most %d", errGuardFull, len(o.named), maxNamedSitesPerOwner)
	}
	for _, s := range sites {
		if !o.named[s] {
			o.named[s] = true
			g.nameLocked(s)
		}
	}
	return nil
}

// nameLocked counts one more owner naming site, and publishes a new namedSet when the site is
// new. With g.mu held.
func (g *redirectGuard) nameLocked(site string) {
	g.named.Add(1)
	if g.namedRefs == nil {
		g.namedRefs = map[string]int{}
	}
	g.namedRefs[site]++
	if g.namedRefs[site] == 1 {
		g.publishNamedLocked()
	}
}

// unnameLocked counts one owner fewer naming site. With g.mu held.
func (g *redirectGuard) unnameLocked(site string) {
	g.named.Add(-1)
	if g.namedRefs[site]--; g.namedRefs[site] <= 0 {
		delete(g.namedRefs, site)
		g.publishNamedLocked()
	}
}

// publishNamedLocked replaces namedSet with a copy of namedRefs' sites. A copy costs as many
// sites as are named, and is made only when a site comes or goes: a remixlet's write, never a
// request.
func (g *redirectGuard) publishNamedLocked() {
	set := make(map[string]struct{}, len(g.namedRefs))
	for site := range g.namedRefs {
		set[site] = struct{}{}
	}
	g.namedSet.Store(&set)
}

// mayBeNamed reports whether the host of req (its Host header, as the proxy received it) may be
// on a named site: whether the host or one of its parent domains is in namedSet. A site is a
// registrable domain, so it is one of the host's dot-suffixes; looking them up costs no
// public-suffix lookup, no parse of the request's address or Referer, and no lock. A host that
// is not plain (an IPv6 literal, anything weburl.Host does not read as it is) answers true: the
// slow path decides.
func (g *redirectGuard) mayBeNamed(req *http.Request) bool {
	p := g.namedSet.Load()
	if p == nil || len(*p) == 0 {
		return false
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.HasPrefix(host, "[") || strings.Contains(host, ":") {
		return true
	}
	h, err := weburl.Host(host)
	if err != nil {
		return true
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	for {
		if _, ok := (*p)[h]; ok {
			return true
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			return false
		}
		h = h[i+1:]
	}
}

// ownerNamed reports whether the remixlet named site on the page session (or on an ended one
// this session adopted).
func (g *redirectGuard) ownerNamed(session, remixlet, site string) bool {
	if p := g.namedSet.Load(); p == nil {
		return false
	} else if _, ok := (*p)[site]; !ok {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	o := g.owners[ownerID{session, remixlet}]
	return o != nil && o.named[site]
}

// namedHits are the owners that named the site of u and may have made req (see the top of the
// file), and may not load from it.
func (g *redirectGuard) namedHits(req *http.Request, u *weburl.URL) []guardHit {
	fs := req.Header.Get("Sec-Fetch-Site")
	if fs == "none" || fs == "same-origin" || fs == "same-site" {
		return nil // the browser's UI, or a request from the named site itself
	}
	site := weburl.Site(u.HostKey())
	from := requesterOf(req)
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock()
	if g.writtenByLoaderLocked(weburl.Key(u), u.HostKey(), from, now) {
		return nil
	}
	var hits []guardHit
	for _, o := range g.owners {
		if !o.named[site] || (!o.ended.IsZero() && now.Sub(o.ended) > openedAfterEnd) || !from.mayBe(o) {
			continue
		}
		if mayLoadOn(o.manifest, o.site, u.HostKey()) {
			continue
		}
		page := ""
		own := false
		for pu := range o.urls {
			page = pu
			if p, err := weburl.Parse(pu); err == nil && weburl.Site(p.HostKey()) == site {
				own = true
			}
		}
		if own {
			continue
		}
		hits = append(hits, o.hit(page))
	}
	return hits
}

// writtenByLoaderLocked reports whether the address with key k (on host) is one a remixlet
// wrote on a page the request may come from, and that remixlet may load from host (its sites
// and fetch: hosts): the request is then that remixlet's own load, which its grant allows. A
// request cannot say which remixlet of a page made it, so without this another remixlet on the
// same page that merely named the site — even in a part of its write the page agent left out —
// refused a granted remixlet's image from its fetch: host (TestRedteamLoadsCorpus, path htmlg:
// the ungranted "html" remixlet's refused <img src="https://granted.test/…"> named
// granted.test). Only the exact address counts, as the remixlet wrote it (not a redirect's or
// a page-driven hop's, addHop): any other address on the site still carries what the naming
// remixlet could put in it and stays refused. With g.mu held.
func (g *redirectGuard) writtenByLoaderLocked(k, host string, from requester, now time.Time) bool {
	if k == "" {
		return false
	}
	for _, o := range g.byKey[k] {
		if _, hop := o.hopSet[k]; hop {
			continue
		}
		if (!o.ended.IsZero() && now.Sub(o.ended) > openedAfterEnd) || !from.mayBe(o) {
			continue
		}
		if mayLoadOn(o.manifest, o.site, host) {
			return true
		}
	}
	return false
}

// guardNamedHosts answers with the proxy's 403 (and returns true) a request a page makes to a
// site a remixlet named on it and may not load from (see the top of the file).
func (r *Runner) guardNamedHosts(w http.ResponseWriter, req *http.Request) bool {
	if !r.guard.mayBeNamed(req) {
		return false // the common case: no request header read beyond Host, no lock
	}
	if top, frame := httpx.NavigationKind(req); (top || frame) && req.Header.Get("Sec-Fetch-User") == "?1" {
		return false // the person's click on a link to it
	}
	u, err := httpx.RequestedAddress(req)
	if err != nil {
		return false
	}
	hits := r.guard.namedHits(req, u)
	if len(hits) == 0 {
		return false
	}
	seen := map[string]bool{}
	for _, h := range hits {
		if !seen[h.remixlet] {
			seen[h.remixlet] = true
			r.logf(h.remixlet, "warn", "refused: the page asked for %s, on a site this remixlet named in what it wrote on the page and may not load from; the browser got a 403 instead",
				httpx.Clip(u.Request(), 300))
		}
	}
	writeRefusal(w, refusalBody("a request to a site a remixlet named on this page was refused",
		"a remixlet may make the page load from another site only if it holds a fetch: permission for that site"))
	return true
}
