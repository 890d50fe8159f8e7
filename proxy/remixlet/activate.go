package remixlet

import (
	"context"
	"net/url"

	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Activator brings the running proxy in line with a change of the remixlets in the store: a
// version activated or restored, a remixlet switched off, archived or deleted, a site paused.
// The chat (after the agent's save) and the manager (after the person's) both use it, so a
// change applies the same way whoever made it: the network rules are rebuilt before any page
// reloads, the open pages the old or the new version runs on reload (clearing what the old one
// did), and a page that must stay (the chat's own tab, whose reload would end the chat's turn)
// has its remixlets matched again in place.
type Activator struct {
	// Rules are the network rules to rebuild. If nil, there are none.
	Rules *NetRules
	// Pages are the open pages. Required.
	Pages *page.Hub
	// Runner re-matches a page that stays. If nil, no remixlet runs.
	Runner *Runner
}

// Applied is told that a remixlet changed from old to next (either may be nil: created,
// deleted, or a manifest that no longer parses): pages either covers reload, except keep (a
// page session ID, or ""), which is matched again in place.
func (a *Activator) Applied(ctx context.Context, keep string, old, next *sandbox.Manifest) {
	a.Rules.Invalidate() // the changed rules apply before pages reload
	for _, m := range []*sandbox.Manifest{old, next} {
		if m == nil {
			continue
		}
		a.Pages.ReloadWhere(ctx, keep, func(pageURL string) bool {
			u, err := url.Parse(pageURL)
			return err == nil && m.MatchesURL(u)
		})
	}
	if a.Runner != nil && keep != "" {
		a.Runner.Rematch(ctx, keep)
	}
	if a.Runner != nil {
		a.Runner.Warm() // the first remixlet with a script switched on: its sandbox host starts now (warm.go)
	}
}

// SitePaused is told that remixlets were paused on host (store.NormalizeHost's form): its open
// pages reload, without their remixlets.
func (a *Activator) SitePaused(ctx context.Context, host string) {
	a.Rules.Invalidate()
	a.Pages.ReloadWhere(ctx, "", func(pageURL string) bool {
		u, err := url.Parse(pageURL)
		if err != nil {
			return false
		}
		h, err := store.NormalizeHost(u.Host)
		return err == nil && h == host
	})
}

// StoreChanged is told of any other change of the remixlets' standing in the store (a site
// resumed, data deleted): the network rules are rebuilt at the next request.
func (a *Activator) StoreChanged() { a.Rules.Invalidate() }

// ActiveManifest returns the remixlet's active version and its manifest; m is nil when none is
// active or its manifest no longer parses.
func ActiveManifest(ctx context.Context, st *store.Store, id string) (store.Version, *sandbox.Manifest, error) {
	v, ok, err := st.Active(ctx, id)
	if err != nil || !ok {
		return store.Version{}, nil, err
	}
	m, probs := sandbox.ParseManifest(v.Files[sandbox.ManifestFile])
	if len(probs) > 0 {
		return v, nil, nil
	}
	return v, m, nil
}
