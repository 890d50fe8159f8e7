// Package netrules parses, checks and matches a remixlet's declarative network rules
// (rules.json): a documented subset of Chrome's declarativeNetRequest rule JSON.
//
// Where it sits: sandbox.CheckFiles calls Parse and Check when a remixlet is saved, so a rule that
// breaks a limit is refused with its id, field and reason. The proxy (proxy/remixlet/netrules.go) calls
// Compile for the active version of every enabled remixlet with the netrules permission (a rule
// that breaks a limit is left out there too, and the proxy logs which and why), joins them in a
// Set, and calls Set.Match on every request the browser sends through the pipeline, before it
// leaves; the Result blocks it, redirects it, or changes its request and response headers.
//
// Supported: action types block, allow, redirect (url or regexSubstitution), upgradeScheme and
// modifyHeaders (requestHeaders/responseHeaders with set, remove and append); condition fields
// urlFilter (||, |, ^, * as Chrome), regexFilter (RE2, as Chrome), isUrlFilterCaseSensitive,
// requestDomains, excludedRequestDomains, initiatorDomains, excludedInitiatorDomains,
// resourceTypes, excludedResourceTypes, requestMethods and excludedRequestMethods. Everything
// else in Chrome's format (allowAllRequests, redirect.transform, redirect.extensionPath,
// tabIds, requestHeaders/responseHeaders conditions, domainType) is refused with a reason.
//
// Precedence is Chrome's: the matching rule of highest priority decides; at equal priority
// allow beats block beats upgradeScheme beats redirect. A request that is neither blocked nor
// redirected gets every matching modifyHeaders rule whose priority is above the deciding allow
// rule's (if any), in descending priority, with Chrome's rules for the same header (after a
// remove or set, lower rules may not change it, except appends to a header the same remixlet
// set; after an append, lower rules may only append). Across remixlets (Chrome: across
// extensions) a block from any of them wins, then the first redirect or upgrade in Set order.
//
// Scope: a remixlet that runs on some sites (Sites) has rules that act only on requests its
// pages make. The initiator of a request is decided from Sec-Fetch-Site, Origin and Referer
// (see InitiatorOf); where it cannot be told the rules of such a remixlet do not act. A
// top-level navigation's initiator is the page it comes from (its Referer's host); a navigation
// the person started (typed address, bookmark: Sec-Fetch-Site none) has no initiator, so only
// every-site remixlets act on it. A remixlet that runs on every site acts on every request.
// modifyHeaders rules of a remixlet that runs on some sites act on a navigation (main_frame,
// sub_frame) only when its destination is one of those sites as well.
//
// It must never: let a rule redirect anything but a GET, redirect to anything but an https
// address on the remixlet's own sites (for an every-site remixlet: the registrable domain of the
// hosts the rule names), redirect a request out of both its page's site and its own site to a
// host no fetch: permission names (redirectscope.go), touch a security header (ForbiddenHeader), act on requests of pages the
// remixlet does not run on, or take time that grows with the number of rules installed for
// unrelated hosts (rules are indexed by host). It sends nothing and knows nothing of the proxy's
// own requests: the proxy never passes them to Match.
package netrules
