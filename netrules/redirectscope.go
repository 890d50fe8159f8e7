package netrules

import (
	"slices"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// Where a redirect may go on a request (OPEN-ITEMS 99's rule for netrules, as
// proxy/remixlet/sendhosts.go's mayLoadOn for what a remixlet writes). Check bounds a
// redirect's destination by the remixlet's sites, which say where it runs, not where it may
// send: one approved on bank.test and evil.test could otherwise redirect a bank.test page's
// requests, their addresses carried by a regex substitution, to evil.test. So when a redirect
// matches, its destination must also be
//
//   - within the requesting page's site (the registrable domain of the request's initiator,
//     weburl.Site: the public-suffix list with its private part, so alice.github.io is a
//     site), or
//   - within the site the request was going to anyway (a substitution carries only the
//     request's own address, which that site gets without the rule), or
//   - a host one of the remixlet's fetch: permissions names (the person's grant: "Send
//     requests to HOST as you, with your cookies").
//
// It is decided in Set.Match, where every redirect's destination is worked out, and not at
// Compile: one rule acts on requests of many pages, and its destination is known only once the
// request is (a substitution). A redirect refused here leaves the request as it was (the
// remixlet's next ranked redirect is not tried; Chrome's rule of one deciding rule per
// remixlet holds) and is reported in Result.Withheld.
//
// Cost: a remixlet on youtube.com and yewtu.be that sends youtube.com's links to yewtu.be (a
// "privacy redirect") works only with a fetch:yewtu.be grant, which grants more (requests with
// cookies); same for any redirect from one of a remixlet's sites to another of another
// registrable domain.

// redirectAllowed reports whether a redirect of req to host (a HostKey) is within req's
// initiator's site, req's own site or the remixlet's fetch: hosts.
func (s Sites) redirectAllowed(req *Request, host string) bool {
	host = normHost(host)
	if host == "" {
		return false
	}
	if slices.Contains(s.Fetch, host) {
		return true
	}
	site := weburl.Site(host)
	if site == weburl.Site(req.Host) {
		return true
	}
	return req.InitiatorState == InitiatorKnown && site == weburl.Site(req.Initiator)
}
