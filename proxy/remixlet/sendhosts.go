package remixlet

import (
	"slices"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/sandbox"
)

// Where what a remixlet writes on a page may make the browser send (OPEN-ITEMS 99). Every send
// rule asks mayLoadOn: the image rule and the address rule's hosts (policy.go, and through
// Op.hosts the page agent's checkAddress), a clone's hosts (cloneHosts), style.css and
// dom.addStyle url()s, custom properties (deputies.go), the redirect guard (redirect.go), the
// client-redirect guard (clientredirect.go) and the named-sites guard (namedhosts.go).
//
// A remixlet's matches say where it runs; the person who approved "bank.test and evil.test" did
// not approve sending what it reads on bank.test to evil.test, and one that runs on every site,
// or on *.github.io (every user's site there), would otherwise send anywhere. So on a page of
// site S (its registrable domain, weburl.Site) the remixlet's sites count only where they are
// in S; its other sites are like any other host. A fetch: permission is the person's grant to
// send to that host ("Send requests to HOST as you, with your cookies", on the card), so its
// hosts count on every page. The page's own origin is allowed by each rule before it asks.
//
// Cost: a remixlet that runs on example.com and example-cdn.com and shows images from the CDN
// on example.com pages needs the page itself to use the CDN (for links: to link there), or a
// fetch:example-cdn.com grant.

// pageSiteOf is the site of a page address, "" when it has no host.
func pageSiteOf(u *weburl.URL) string {
	if u == nil || u.HostKey() == "" {
		return ""
	}
	return weburl.Site(u.HostKey())
}

// sitesOnPage are m's site patterns ("host" or "*.host") narrowed to pageSite: those inside it,
// and "*."+pageSite where a pattern covers the whole site (an every-site remixlet's "*", or
// "*.example.com" on a page of shop.example.com when the list makes example.com a suffix).
func sitesOnPage(m *sandbox.Manifest, pageSite string) []string {
	if m == nil || pageSite == "" {
		return nil
	}
	whole := "*." + pageSite
	sites := m.Sites()
	if sites.Every {
		return []string{whole}
	}
	var out []string
	for _, h := range sites.Hosts {
		switch {
		case sandbox.SitePatternCovers(h, whole):
			out = append(out, whole)
		case weburl.Site(strings.TrimPrefix(h, "*.")) == pageSite:
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// mayLoadOn reports whether what m's remixlet writes on a page of pageSite may make the browser
// send to host (a HostKey): a host of its sites inside pageSite (sitesOnPage), or a host a
// fetch: permission names.
func mayLoadOn(m *sandbox.Manifest, pageSite, host string) bool {
	return newSendScope(m, pageSite).allows(host)
}

// sendScope is mayLoadOn's answer for one manifest and page site, worked out once (a call's
// addresses each ask it: a setHTML may write thousands).
type sendScope struct {
	fetch []string // fetch: hosts
	sites []string // sitesOnPage
}

func newSendScope(m *sandbox.Manifest, pageSite string) *sendScope {
	if m == nil {
		return &sendScope{}
	}
	return &sendScope{fetch: m.FetchHosts(), sites: sitesOnPage(m, pageSite)}
}

// allows is mayLoadOn for the scope's manifest and page site.
func (s *sendScope) allows(host string) bool {
	if host == "" {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if slices.Contains(s.fetch, host) {
		return true
	}
	for _, p := range s.sites {
		if sandbox.SitePatternCovers(p, host) {
			return true
		}
	}
	return false
}
