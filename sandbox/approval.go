package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// Change is one activation the approval policy decides on: a remixlet moving from its active
// version to Next.
type Change struct {
	// Active is the manifest of the version running now, the record of what the person allowed;
	// nil for a new remixlet (or one whose active manifest no longer parses: nothing can be read
	// as allowed then, and ActiveUnreadable is set).
	Active *Manifest
	// ActiveUnreadable says that a version runs now whose manifest no longer parses (an older
	// or damaged store): what the person allowed for it cannot be told, so replacing it always
	// needs approval (ReasonUnreadable), as it is not a new remixlet.
	ActiveUnreadable bool
	// Next is the manifest of the version to activate.
	Next *Manifest
	// ChatHost is the host of the page the agent's chat is on, from the proxy's record of the
	// page session (never from the model); "" when the person saves in the manager or the CLI,
	// where no page vouches for any site and the person wrote the change.
	ChatHost string
	// RulesChanged says whether rules.json differs from the active version's (for a new
	// remixlet: whether it has any rules).
	RulesChanged bool
	// CodeChanged says whether the code differs from the active version's: script.js, style.css
	// or rules.json (for a new remixlet: whether it has any code). A stylesheet counts: its url()
	// loads can reach the hosts the remixlet may load from.
	CodeChanged bool
}

// ReasonKind says which rule of the policy a Reason comes from.
type ReasonKind string

// The rules of the approval policy (see NeedsApproval).
const (
	ReasonEverySite     ReasonKind = "every-site"     // runs on every site, and did not
	ReasonMoreSites     ReasonKind = "more-sites"     // runs on sites it did not (new: other than the chat's host)
	ReasonNewPermission ReasonKind = "new-permission" // asks for a permission it did not hold
	ReasonRules         ReasonKind = "rules"          // its network rules changed
	ReasonNarrowed      ReasonKind = "narrowed"       // moved from several sites onto one, keeping permissions
	ReasonOtherSites    ReasonKind = "other-sites"    // agent: a change to a remixlet that runs (or ran) on another site
	ReasonNetworkCode   ReasonKind = "network-code"   // agent: new code under a network permission held before
	ReasonUnreadable    ReasonKind = "unreadable"     // replaces a running version whose manifest no longer parses
)

// Reason is one thing a change needs the person's approval for, in the proxy's fixed words
// (Text) — never a manifest's reasons or any other text the model wrote, only host names and
// permission names the checks accepted.
type Reason struct {
	Kind ReasonKind
	Text string
	// Permission is the permission's name for ReasonNewPermission and ReasonNetworkCode.
	Permission string
	// Sites are the sites a ReasonMoreSites or ReasonOtherSites row is about, every one ("every
	// site" when it runs on every site); Text names at most MaxSitesInText of them.
	Sites []string
	// SitesCut is how many of Sites Text leaves out ("… and 45 more"); a card shows them all
	// elsewhere (proxy/chat's activation card: in the lines the confirmation window shows).
	SitesCut int
}

// MaxSitesInText is the most sites a reason's Text names: a card row naming hundreds of hosts
// would be unreadable and push the buttons and the rest of the card away (OPEN-ITEMS 34).
const MaxSitesInText = 5

// boundedSitesText is sitesText of at most MaxSitesInText hosts, then "and N more"; cut is N.
func boundedSitesText(hosts []string) (text string, cut int) {
	if len(hosts) <= MaxSitesInText {
		return sitesText(hosts), 0
	}
	cut = len(hosts) - MaxSitesInText
	return fmt.Sprintf("%s and %d more", sitesText(hosts[:MaxSitesInText]), cut), cut
}

// NeedsApproval decides whether activating c.Next needs the person's "Allow and apply", and
// returns each applicable reason; none means it activates at once.
//
// For every change, approval is needed when Next:
//   - runs on every site and Active did not (ReasonEverySite);
//   - runs on sites Active does not cover (for a new remixlet: on any host but ChatHost)
//     (ReasonMoreSites);
//   - asks for a permission Active does not hold (for a new remixlet: any permission)
//     (ReasonNewPermission);
//   - changes its network rules (ReasonRules);
//   - moves a remixlet that ran on more than one site (or every site) onto a single site while
//     keeping permissions, which puts approved capabilities in a new, narrower context
//     (ReasonNarrowed);
//   - replaces a running version whose manifest no longer parses (ReasonUnreadable): what was
//     allowed for it cannot be read, and it may have run on other sites with permissions, so
//     it is not taken for a new remixlet (OPEN-ITEMS 104).
//
// For a change the agent made (ChatHost set) to an existing remixlet, also (DESIGN invariant 11):
//   - when Active or Next covers a site other than the chat page's site (registrable domain, see
//     weburl.Site; every site counts), any change of substance — code, sites, excluded pages,
//     permissions or API version; a description alone is none — needs approval, naming those
//     sites (ReasonOtherSites). A chat on one site never vouches for code on another: the new
//     code could carry what it reads there to the chat's site through its storage, and moving a
//     remixlet off a site keeps what it stored there;
//   - when its code changed and Next holds a network permission (fetch:HOST,
//     network:observe:HOST, netrules) that Active already held, the person who allowed that
//     permission for the old code is asked again for the new code (ReasonNetworkCode). A
//     network permission new in Next is a ReasonNewPermission: its own row says what is at
//     stake.
//
// Otherwise — a new remixlet for the chat page's host without permissions, or a change on the
// same or fewer sites with no new permission, no new code under a network permission and the
// same rules — it activates at once. Sites are compared by host (see Manifest.Sites):
// exclude_matches and paths never widen or narrow what needs approval.
func NeedsApproval(c Change) (bool, []Reason) {
	active, next := c.Active, c.Next
	var reasons []Reason
	nextSites := next.Sites()
	chatHost := strings.ToLower(strings.TrimSuffix(c.ChatHost, "."))

	var allowed Sites
	var allowedPerms map[string]bool
	if active != nil {
		allowed = active.Sites()
		allowedPerms = map[string]bool{}
		for _, p := range active.Permissions {
			allowedPerms[p.Name] = true
		}
	} else if chatHost != "" {
		allowed = Sites{Hosts: []string{chatHost}}
	}

	switch {
	case nextSites.Every && !allowed.Every:
		reasons = append(reasons, Reason{Kind: ReasonEverySite, Text: "Run on every site"})
	case !allowed.Covers(nextSites):
		var more []string
		for _, h := range nextSites.Hosts {
			if !allowed.CoversHost(h) {
				more = append(more, h)
			}
		}
		list, cut := boundedSitesText(more)
		text := "Run on more sites: " + list
		if active == nil {
			text = "Run on sites other than this page's: " + list
		}
		reasons = append(reasons, Reason{Kind: ReasonMoreSites, Text: text, Sites: more, SitesCut: cut})
	}

	if active != nil && chatHost != "" {
		reasons = append(reasons, otherSiteReasons(c, chatHost)...)
	}

	for _, p := range next.Permissions {
		if !allowedPerms[p.Name] {
			reasons = append(reasons, Reason{Kind: ReasonNewPermission, Text: "New permission: " + PermissionText(p.Name), Permission: p.Name})
		}
	}

	if active != nil && chatHost != "" && c.CodeChanged {
		for _, p := range next.Permissions {
			if allowedPerms[p.Name] && IsNetworkPermission(p.Name) {
				reasons = append(reasons, Reason{Kind: ReasonNetworkCode, Permission: p.Name,
					Text: "Run new code with a permission you allowed for its old code: " + PermissionText(p.Name)})
			}
		}
	}

	if c.ActiveUnreadable {
		reasons = append(reasons, Reason{Kind: ReasonUnreadable,
			Text: "Replace a version whose manifest can no longer be read, so what you allowed for it cannot be told"})
	}

	if c.RulesChanged {
		reasons = append(reasons, Reason{Kind: ReasonRules, Text: "Change what pages load (its network rules changed)"})
	}

	if active != nil && len(next.Permissions) > 0 && !nextSites.Every && len(nextSites.Hosts) == 1 &&
		(allowed.Every || len(allowed.Hosts) > 1) {
		reasons = append(reasons, Reason{Kind: ReasonNarrowed,
			Text: fmt.Sprintf("Move a remixlet that runs on several sites onto just %s, keeping its permissions", SiteText(nextSites.Hosts[0]))})
	}
	return len(reasons) > 0, reasons
}

// otherSiteReasons is the rule for an agent's change to a remixlet that runs, or ran, on a site
// other than the chat page's (see NeedsApproval).
func otherSiteReasons(c Change, chatHost string) []Reason {
	site := weburl.Site(chatHost)
	nextSites := c.Next.Sites()
	nextOther := otherSites(nextSites, site)
	var oldOnly []string // other sites it ran on that it leaves
	for _, h := range otherSites(c.Active.Sites(), site) {
		if h == everySite && !nextSites.Every || h != everySite && !nextSites.Covers(Sites{Hosts: []string{h}}) {
			oldOnly = append(oldOnly, h)
		}
	}
	if len(nextOther) == 0 && len(oldOnly) == 0 || !c.substanceChanged() {
		return nil
	}
	var out []Reason
	if len(nextOther) > 0 {
		list, cut := boundedSitesText(nextOther)
		text := "Change code that also runs on other sites than this page's (" + site + "): " + list
		if len(nextOther) == 1 && nextOther[0] == everySite {
			text = "Change code that runs on every site, not only on this page's (" + site + ")"
		}
		out = append(out, Reason{Kind: ReasonOtherSites, Text: text, Sites: nextOther, SitesCut: cut})
	}
	if len(oldOnly) > 0 {
		list, cut := boundedSitesText(oldOnly)
		text := "Change a remixlet that ran on other sites than this page's (" + site + "), keeping what it stored there: " + list
		if len(oldOnly) == 1 && oldOnly[0] == everySite {
			text = "Change a remixlet that ran on every site, keeping what it stored there"
		}
		out = append(out, Reason{Kind: ReasonOtherSites, Text: text, Sites: oldOnly, SitesCut: cut})
	}
	return out
}

// everySite stands for "every site" in a Reason's Sites.
const everySite = "every site"

// otherSites returns the host patterns of s whose site is not site, or everySite.
func otherSites(s Sites, site string) []string {
	if s.Every {
		return []string{everySite}
	}
	var out []string
	for _, h := range s.Hosts {
		if weburl.Site(strings.TrimPrefix(h, "*.")) != site {
			out = append(out, h)
		}
	}
	return out
}

// substanceChanged reports whether the change alters anything but a description or the
// reasons given for permissions: code, rules, matches, exclude_matches, permissions or API.
func (c Change) substanceChanged() bool {
	if c.CodeChanged || c.RulesChanged || c.Active == nil {
		return true
	}
	a, n := c.Active, c.Next
	return a.API != n.API || !sameSet(a.Matches, n.Matches) || !sameSet(a.ExcludeMatches, n.ExcludeMatches) ||
		!sameSet(permissionNames(a), permissionNames(n))
}

func permissionNames(m *Manifest) []string {
	out := make([]string, 0, len(m.Permissions))
	for _, p := range m.Permissions {
		out = append(out, p.Name)
	}
	return out
}

// sameSet reports whether a and b hold the same strings, in any order and number.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// IsNetworkPermission reports whether name is a permission that reaches the network: fetch:HOST,
// network:observe:HOST or netrules.
func IsNetworkPermission(name string) bool {
	if name == PermNetRules {
		return true
	}
	_, _, ok := PermissionHost(name)
	return ok
}
