package remixlet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/rewrite"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Stylesheets in the first frame (issue 14). When the proxy injects the bootstrap into a page it
// asks FirstFrame for the stylesheets of the remixlets that match the page — the same
// candidates (remixletsFor) and the same check (checkedStyle) as the runner's insertion on
// connect — and puts them into the bootstrap tag, so the page agent adopts them before the
// first paint. The page agent then tells which it holds when it connects (page.Session's
// FirstSheets); the runner's sync takes those as sent (acceptFirstSheets) and empties any it
// holds that are no longer current. A paused, switched-off or changed remixlet is so reflected
// on the next load by the injection, and live on open tabs by sync as before.

// maxFirstFrameCSS bounds the stylesheet bytes put into one page's bootstrap; remixlets past it
// get their stylesheet from the runner on connect, as before.
const maxFirstFrameCSS = 128 << 10

// maxCheckedStyles bounds the checked-stylesheet cache; when full it is emptied.
const maxCheckedStyles = 512

// checkedStyle is a remixlet version's style.css as every insertion uses it: what
// rewrite.CheckStylesheet keeps, and the parts it refused.
type checkedStyle struct {
	clean    []byte
	own      []byte   // rewrite.OwnSheet's copy of clean, kept after the first key of a secret
	addrs    []string // the addresses its url()s load, for the redirect guard (styleguard.go)
	problems []rewrite.StyleProblem
}

// styleChecks caches checkedStyle by version ID and page site: a stored version never changes,
// and the hosts a stylesheet may load from are its own manifest's sites within the page's site
// and its fetch: hosts (mayLoadOn), so one check per version and site is the check of every
// insertion of it there. The zero value is ready.
type styleChecks struct {
	mu        sync.Mutex
	byVersion map[styleKey]checkedStyle
	manifests map[int64]parsedManifest // manifestOf's
}

// styleKey is what a checked stylesheet depends on: the version and the page's site.
type styleKey struct {
	version int64
	site    string
}

// parsedManifest is a version's manifest.json as sandbox.ParseManifest reads it.
type parsedManifest struct {
	m        *sandbox.Manifest
	problems []sandbox.Problem
}

// manifestOf returns version v's parsed manifest, parsing it on first use: a stored version
// never changes, and a parsed manifest is only read. The zero value of styleChecks holds none.
func (r *Runner) manifestOf(v store.Version) (*sandbox.Manifest, []sandbox.Problem) {
	sc := &r.styles
	sc.mu.Lock()
	pm, ok := sc.manifests[v.ID]
	sc.mu.Unlock()
	if ok {
		return pm.m, pm.problems
	}
	m, problems := sandbox.ParseManifest(v.Files[sandbox.ManifestFile])
	sc.mu.Lock()
	if sc.manifests == nil || len(sc.manifests) >= maxCheckedStyles {
		sc.manifests = map[int64]parsedManifest{}
	}
	sc.manifests[v.ID] = parsedManifest{m: m, problems: problems}
	sc.mu.Unlock()
	return m, problems
}

// checkedStyle returns the checked stylesheet of candidate c, checking it on first use.
func (r *Runner) checkedStyle(c candidate) checkedStyle {
	sc := &r.styles
	sc.mu.Lock()
	key := styleKey{c.versionID, c.site}
	cs, ok := sc.byVersion[key]
	sc.mu.Unlock()
	if ok {
		return cs
	}
	clean, addrs, problems := rewrite.CheckStylesheetAddresses(c.style, newSendScope(c.manifest, c.site).allows)
	if clean != nil {
		// Custom properties a page script may read an address from (deputies.go).
		var dropped []rewrite.StyleProblem
		clean, dropped = rewrite.DropCustomProperties(clean, styleSheetTextRefusal(c.manifest, c.site))
		problems = append(problems, dropped...)
	}
	cs = checkedStyle{clean: clean, own: rewrite.OwnSheet(clean, panel.OwnAttr), addrs: styleGuardAddrs(addrs), problems: problems}
	sc.mu.Lock()
	if sc.byVersion == nil || len(sc.byVersion) >= maxCheckedStyles {
		sc.byVersion = map[styleKey]checkedStyle{}
	}
	sc.byVersion[key] = cs
	sc.mu.Unlock()
	return cs
}

// firstFrameable reports whether c's stylesheet goes into the bootstrap: it has one, and the
// check refused no part of it (a stylesheet with refused parts is inserted by the runner on
// connect, which logs what it left out, as before).
func (r *Runner) firstFrameable(c candidate) (checkedStyle, bool) {
	if !c.hasStyle {
		return checkedStyle{}, false
	}
	cs := r.checkedStyle(c)
	return cs, len(cs.problems) == 0 && len(cs.clean) > 0
}

// FirstFrame tells the bootstrap of a page served from pageURL what the remixlets need of it.
//
// sheets lists, for each remixlet that would run on the page, its checked stylesheet, exactly as
// the runner would send it, unless the check refused part of it; at most maxFirstFrameCSS bytes
// in all. Nil when the runner is nil, or on a store error (the runner sends the stylesheets on
// connect then).
//
// run reports whether any remixlet would run on the page, or the store could not say: the page
// agent then connects at once, so that the remixlets act while the page loads; on other pages
// it connects after the load (page agent, start.js), off the person's wait.
func (r *Runner) FirstFrame(ctx context.Context, pageURL string) (sheets []panel.FirstSheet, run bool) {
	if r == nil {
		return nil, false
	}
	src, err := r.standing(ctx)
	if err != nil {
		r.log.Debug("reading the remixlets for a page's first frame", "err", err)
		return nil, true
	}
	if len(src.active) == 0 {
		return nil, false // no remixlet on: none is a candidate, on any page (no address to parse)
	}
	cands, err := r.remixletsFrom(ctx, src, pageURL)
	if err != nil {
		r.log.Debug("listing remixlets for a page's first frame", "err", err)
		return nil, true
	}
	if len(cands) == 0 {
		return nil, false
	}
	var out []panel.FirstSheet
	size := 0
	for _, c := range cands {
		cs, ok := r.firstFrameable(c)
		if !ok || size+len(cs.clean)+len(cs.own) > maxFirstFrameCSS {
			continue
		}
		if err := r.guard.addBeforeSession(pageURL, c.id, c.manifest, cs.addrs); err != nil {
			// Not held, so not sent here: the runner sends it on connect, or logs why not.
			continue
		}
		size += len(cs.clean) + len(cs.own)
		out = append(out, panel.FirstSheet{Remixlet: c.id, Version: c.versionID, CSS: string(cs.clean), Own: string(cs.own)})
	}
	return out, true
}

// acceptFirstSheets decides, on a page's first sync, which of the first-frame sheets the page
// agent holds (held: remixlet ID → version) count as inserted: the candidate's stylesheet of
// that very version, one the proxy would have put into the bootstrap. It returns those, and the
// held sheets to empty (a remixlet no longer a candidate, or whose stylesheet is gone); a held
// sheet of another version is neither: the runner sends the current one, which replaces it.
func (r *Runner) acceptFirstSheets(held map[string]int64, cands []candidate) (accepted map[string]bool, empty []string) {
	if len(held) == 0 {
		return nil, nil
	}
	accepted = map[string]bool{}
	styled := map[string]bool{}
	for _, c := range cands {
		if !c.hasStyle {
			continue
		}
		styled[c.id] = true
		if v, ok := held[c.id]; ok && v == c.versionID {
			if _, ok := r.firstFrameable(c); ok {
				accepted[c.id] = true
			}
		}
	}
	for id := range held {
		if !styled[id] {
			empty = append(empty, id)
		}
	}
	return accepted, empty
}

// remixletSource is what the runner's matching reads of the store.
type remixletSource interface {
	IsSitePaused(ctx context.Context, host string) (bool, error)
	ListRemixlets(ctx context.Context) ([]store.Remixlet, error)
	Active(ctx context.Context, remixletID string) (store.Version, bool, error)
}

var _ remixletSource = (*store.Store)(nil)

// standingMaxAge bounds how long the injection reuses a copy of the remixlets' standing when
// this process wrote nothing to the store: a change another process made (the CLI) reaches the
// first frame within it, and the runner's own matching on connect reads the store itself.
const standingMaxAge = time.Second

// standingCopy is a copy of what remixletSource reads: the paused sites, the remixlets, the
// active versions of the enabled ones. It serves the matching for the injection, which runs
// for every page the proxy injects into (the store's reads cost about a millisecond there), and
// is read again after any write of this process (store.Generation) or after standingMaxAge.
type standingCopy struct {
	gen    uint64
	at     time.Time
	paused map[string]bool
	list   []store.Remixlet
	active map[string]store.Version
}

// standingCache holds the current standingCopy. The zero value is ready.
type standingCache struct {
	mu  sync.Mutex
	cur *standingCopy
}

// standing returns a current copy of the remixlets' standing, reading the store when needed.
func (r *Runner) standing(ctx context.Context) (*standingCopy, error) {
	gen, now := r.st.Generation(), r.clock()
	r.standingC.mu.Lock()
	cur := r.standingC.cur
	r.standingC.mu.Unlock()
	if cur != nil && cur.gen == gen && now.Sub(cur.at) < standingMaxAge && now.Sub(cur.at) >= 0 {
		return cur, nil
	}
	r.standingReads.Add(1)
	paused, err := r.st.PausedSites(ctx)
	if err != nil {
		return nil, err
	}
	list, err := r.st.ListRemixlets(ctx)
	if err != nil {
		return nil, err
	}
	c := &standingCopy{gen: gen, at: now, paused: map[string]bool{}, list: list, active: map[string]store.Version{}}
	for _, h := range paused {
		c.paused[h] = true
	}
	for _, rx := range list {
		if !rx.Enabled || rx.Archived || rx.ActiveVersionID == 0 {
			continue
		}
		v, ok, err := r.st.Active(ctx, rx.ID)
		if err != nil {
			return nil, err
		}
		if ok {
			c.active[rx.ID] = v
		}
	}
	r.standingC.mu.Lock()
	r.standingC.cur = c
	r.standingC.mu.Unlock()
	return c, nil
}

// anyScript reports whether an enabled remixlet's active version has a script: a sandbox host
// is needed (warm.go).
func (c *standingCopy) anyScript() bool {
	for _, v := range c.active {
		if _, ok := v.Files[sandbox.ScriptFile]; ok {
			return true
		}
	}
	return false
}

// IsSitePaused is store.Store's, on the copy.
func (c *standingCopy) IsSitePaused(_ context.Context, host string) (bool, error) {
	h, err := store.NormalizeHost(host)
	if err != nil {
		return false, fmt.Errorf("checking paused site: %w", err)
	}
	return c.paused[h], nil
}

// ListRemixlets is store.Store's, on the copy.
func (c *standingCopy) ListRemixlets(context.Context) ([]store.Remixlet, error) { return c.list, nil }

// Active is store.Store's, on the copy (for the enabled remixlets: the ones matching reads).
func (c *standingCopy) Active(_ context.Context, id string) (store.Version, bool, error) {
	v, ok := c.active[id]
	return v, ok, nil
}

var _ remixletSource = (*standingCopy)(nil)
