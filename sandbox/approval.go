package sandbox

import (
	"fmt"
	"strings"
)

// NeedsApproval decides whether activating next needs the person's "Allow and apply". active is
// the manifest of the version running now, which is the record of what the person allowed (nil
// for a new remixlet); chatHost is the host of the page the chat started on ("" when the save
// comes from the manager or the CLI, where no page vouches for any site); rulesChanged says
// whether rules.json differs from the active version's (for a new remixlet: whether it has any
// rules).
//
// Approval is needed, and each applicable reason is returned in fixed words (never the
// manifest's reasons), when next:
//   - runs on every site and active did not;
//   - runs on sites active does not cover (for a new remixlet: on any site but chatHost);
//   - asks for a permission active does not hold (for a new remixlet: any permission);
//   - changes its network rules;
//   - moves a remixlet that ran on more than one site (or every site) onto a single site while
//     keeping permissions, which puts approved capabilities in a new, narrower context.
//
// Otherwise — the same or fewer sites and permissions, the same rules — it activates at once.
// Sites are compared by host (see Manifest.Sites): exclude_matches and paths never widen or
// narrow what needs approval.
func NeedsApproval(active, next *Manifest, chatHost string, rulesChanged bool) (bool, []string) {
	var reasons []string
	nextSites := next.Sites()
	chatHost = strings.ToLower(strings.TrimSuffix(chatHost, "."))

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
		reasons = append(reasons, "Run on every site")
	case !allowed.Covers(nextSites):
		var more []string
		for _, h := range nextSites.Hosts {
			if !allowed.CoversHost(h) {
				more = append(more, h)
			}
		}
		if active == nil {
			reasons = append(reasons, "Run on sites other than this page's: "+strings.Join(more, ", "))
		} else {
			reasons = append(reasons, "Run on more sites: "+strings.Join(more, ", "))
		}
	}

	for _, p := range next.Permissions {
		if !allowedPerms[p.Name] {
			reasons = append(reasons, "New permission: "+PermissionText(p.Name))
		}
	}

	if rulesChanged {
		reasons = append(reasons, "Change what pages load (its network rules changed)")
	}

	if active != nil && len(next.Permissions) > 0 && !nextSites.Every && len(nextSites.Hosts) == 1 &&
		(allowed.Every || len(allowed.Hosts) > 1) {
		reasons = append(reasons, fmt.Sprintf("Move a remixlet that runs on several sites onto just %s, keeping its permissions", nextSites.Hosts[0]))
	}
	return len(reasons) > 0, reasons
}
