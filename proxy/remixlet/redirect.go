package remixlet

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// The redirect guard. The address rule lets a remixlet point a link or an image at the page's own
// origin (and at its own sites and fetch: hosts). A site with an open redirect would turn that
// into a request anywhere: <img src="/redirect?to=https://elsewhere/?data">. So every http(s)
// address a remixlet writes is remembered, and when the browser requests one of them and the
// answer redirects (Location, or a Refresh header) to an origin that remixlet may not load from,
// the browser gets a 403 from the proxy instead, and the remixlet's log says so. A redirect within
// the page's origin (or to one of the remixlet's own sites) is followed, and its target is
// remembered in turn.
//
// What is compared is the request the browser actually sent — its scheme, Host and
// request-target as received — against the address as the browser reads it, both through
// weburl (WHATWG parsing, IDNA) and compared by weburl.Key: the whole address including the
// query, so the page's own use of its redirect with any other query is never touched. A spelling
// the proxy and the browser read differently cannot slip past either: the page agent writes an
// address only if the browser reads it as one the proxy remembered (Op.Addrs).
//
// How long: an address stays guarded while the page session that wrote it is open — an image
// loads at once but may load again, and a link loads when someone clicks it, the remixlet
// (dom.click) or the person, which the proxy cannot tell apart and need not: what leaves is what
// the remixlet wrote — and for redirectGuardGrace after the page went away (a page in the
// back/forward cache comes back with its links; Chromium keeps such a page at most ten minutes).
// A page session that starts on a URL an ended one had adopts that one's addresses, so a page
// restored from the cache keeps them for as long as it is open again. The only collateral: a
// request for exactly the same address by the page itself, during that time, is guarded too.
//
// There is no count limit that lets anything through: a remixlet that writes more addresses
// than the guard holds for one page (redirectGuardMaxPerOwner), or when all pages together hold
// redirectGuardMaxTotal, has that operation refused, with an error saying why.

const (
	redirectGuardGrace       = 10 * time.Minute
	redirectGuardMaxPerOwner = 20000
	redirectGuardMaxTotal    = 200000
	redirectGuardMaxBytes    = 64 << 20
)

// guardOwner is one remixlet on one page session, and the addresses it wrote there.
type guardOwner struct {
	remixlet string
	session  string
	manifest *sandbox.Manifest
	site     string              // the site of the page it wrote on: where its writes may send (mayLoadOn)
	urls     map[string]bool     // the page's URLs while it wrote: a session on one of them adopts it
	keys     map[string]struct{} // weburl.Key of each address
	bytes    int
	ended    time.Time // when its page session ended; zero while it is open
	// clones is set once the remixlet cloned page elements on the page: their images' own
	// addresses are guarded too (cloneguard.go).
	clones bool
	// anyPage is set when more pages than maxOwnerPages were added: requests from any page are
	// then taken as its pages' (guardrequester.go).
	anyPage bool
	// named are the sites it named in what it wrote on the page (namedhosts.go).
	named map[string]bool
	// hops are the keys addHop added (a followed redirect or client-side hop), oldest first, and
	// hopSet the same keys: they are in keys too (lookup finds them) but are counted apart from
	// what the remixlet wrote, and bounded per owner (see addHop).
	hops     []string
	hopSet   map[string]struct{}
	hopBytes int
}

type ownerID struct{ session, remixlet string }

// redirectGuard is the set of addresses remixlets wrote, by owner.
type redirectGuard struct {
	mu       sync.Mutex
	now      func() time.Time // nil: time.Now
	grace    time.Duration    // 0: redirectGuardGrace
	maxOwner int              // 0: redirectGuardMaxPerOwner
	maxTotal int              // 0: redirectGuardMaxTotal
	byKey    map[string][]*guardOwner
	owners   map[ownerID]*guardOwner
	total    int // keys the remixlets wrote, over all owners (hops not counted: see addHop)
	bytes    int // their length over all owners
	hopBytes int // the length of the hops over all owners, each owner's bounded by maxHopBytesPerOwner
	swept    time.Time
	// firstFrame counts the owners addBeforeSession made that no session has adopted yet
	// (styleguard.go), bounded by maxFirstFrameOwners.
	firstFrame int
	// named counts the sites all owners named (namedhosts.go), read without the lock on every
	// request.
	named atomic.Int64
	// namedRefs counts, per site, the owners that named it; namedSet is a copy of its keys,
	// replaced whole (never changed in place) when a site comes or goes, so that every request
	// can be checked against it without the lock (namedhosts.go).
	namedRefs map[string]int
	namedSet  atomic.Pointer[map[string]struct{}]
	// addresses is len(byKey), published by every function that changes byKey before it lets
	// g.mu go (publishAddressesLocked), read without the lock on every navigation's answer
	// (holdsAddresses): while no remixlet wrote an address, no response need be parsed.
	addresses atomic.Int64
}

// publishAddressesLocked publishes len(byKey) for holdsAddresses. With g.mu held; the functions
// that change byKey defer it.
func (g *redirectGuard) publishAddressesLocked() { g.addresses.Store(int64(len(g.byKey))) }

// holdsAddresses reports whether the guard holds any address (lookup can find nothing
// otherwise): one atomic load, for the response taps' fast path.
func (g *redirectGuard) holdsAddresses() bool { return g.addresses.Load() > 0 }

// errGuardFull refuses an operation whose addresses the guard cannot hold.
var errGuardFull = errors.New("the proxy cannot remember more addresses for its redirect guard")

func (g *redirectGuard) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

func (g *redirectGuard) limits() (grace time.Duration, perOwner, total int) {
	grace, perOwner, total = g.grace, g.maxOwner, g.maxTotal
	if grace == 0 {
		grace = redirectGuardGrace
	}
	if perOwner == 0 {
		perOwner = redirectGuardMaxPerOwner
	}
	if total == 0 {
		total = redirectGuardMaxTotal
	}
	return
}

// add remembers the addresses (absolute http(s), as weburl serialises them) remixlet wrote on
// the page session, whose current URL is pageURL. It adds all of them or none: when the guard
// is full it returns an error and the operation must be refused.
func (g *redirectGuard) add(session, pageURL, remixlet string, m *sandbox.Manifest, addrs []string) error {
	if len(addrs) == 0 {
		return nil
	}
	keys, size, err := guardKeys(addrs)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.addLocked(session, pageURL, remixlet, m, keys, size)
}

// guardKeys are the weburl.Keys of addrs, and their length.
func guardKeys(addrs []string) (keys []string, size int, err error) {
	keys = make([]string, 0, len(addrs))
	for _, a := range addrs {
		u, err := weburl.Parse(a)
		if err != nil {
			return nil, 0, fmt.Errorf("redirect guard: %w", err)
		}
		if k := weburl.Key(u); k != "" {
			keys = append(keys, k)
			size += len(k)
		}
	}
	return keys, size, nil
}

// addLocked is add's work on parsed keys (size: their length), with g.mu held.
func (g *redirectGuard) addLocked(session, pageURL, remixlet string, m *sandbox.Manifest, keys []string, size int) error {
	defer g.publishAddressesLocked()
	_, perOwner, total := g.limits()
	g.sweepLocked(false)
	if g.byKey == nil {
		g.byKey = map[string][]*guardOwner{}
		g.owners = map[ownerID]*guardOwner{}
	}
	id := ownerID{session, remixlet}
	o := g.owners[id]
	if o == nil {
		o = &guardOwner{remixlet: remixlet, session: session, manifest: m, urls: map[string]bool{}, keys: map[string]struct{}{}}
	}
	fresh := 0
	for _, k := range keys {
		_, have := o.keys[k]
		if _, hop := o.hopSet[k]; !have || hop {
			fresh++
		}
	}
	written := len(o.keys) - len(o.hopSet)
	switch {
	case written+fresh > perOwner:
		return fmt.Errorf("%w: this remixlet already wrote %d addresses on this page, and the guard holds at most %d per page; write fewer addresses", errGuardFull, written, perOwner)
	case g.total+fresh > total || g.bytes+size > redirectGuardMaxBytes:
		return fmt.Errorf("%w: the guard holds %d addresses for all open pages (at most %d); try again when pages have closed", errGuardFull, g.total, total)
	}
	g.owners[id] = o
	o.manifest = m
	if pageURL != "" {
		if o.site == "" {
			o.site = pageSiteOf(parsedOrNil(pageURL))
		}
		o.addPageLocked(pageURL)
	}
	for _, k := range keys {
		if _, hop := o.hopSet[k]; hop {
			// Written now as well: it counts as written, and eviction no longer drops it.
			o.dropHopLocked(g, k)
			g.total++
			g.bytes += len(k)
			continue
		}
		if _, ok := o.keys[k]; ok {
			continue
		}
		o.keys[k] = struct{}{}
		o.bytes += len(k)
		g.total++
		g.bytes += len(k)
		g.byKey[k] = append(g.byKey[k], o)
	}
	return nil
}

// sessionEnded starts the grace period of the addresses written on a page session that went
// away; lastURL is the page's URL when it left.
func (g *redirectGuard) sessionEnded(session, lastURL string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock()
	for id, o := range g.owners {
		if id.session == session && o.ended.IsZero() {
			o.ended = now
			if lastURL != "" {
				o.addPageLocked(lastURL)
			}
		}
	}
	g.sweepLocked(false)
}

// sessionStarted gives a page session that starts on pageURL the addresses of ended sessions
// that were on that URL (the same document back from the back/forward cache, or a reload that
// restores nothing — then the addresses are guarded for longer than needed, never shorter).
func (g *redirectGuard) sessionStarted(session, pageURL string) {
	if pageURL == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	defer g.publishAddressesLocked()
	g.sweepLocked(false)
	for id, o := range g.owners {
		if o.ended.IsZero() || !o.urls[pageURL] || id.session == session {
			continue
		}
		nid := ownerID{session, id.remixlet}
		if cur := g.owners[nid]; cur != nil {
			// The new session already has addresses of this remixlet: fold the old ones in.
			for k := range o.keys {
				if _, hop := o.hopSet[k]; hop {
					if _, ok := cur.keys[k]; !ok {
						cur.keys[k] = struct{}{}
						g.byKey[k] = append(g.byKey[k], cur)
						cur.noteHopLocked(g, k)
					}
					continue
				}
				if _, ok := cur.keys[k]; !ok {
					cur.keys[k] = struct{}{}
					cur.bytes += len(k)
					g.byKey[k] = append(g.byKey[k], cur)
					g.total++
					g.bytes += len(k)
				}
			}
			for u := range o.urls {
				cur.addPageLocked(u)
			}
			cur.clones = cur.clones || o.clones
			for site := range o.named {
				if cur.named == nil {
					cur.named = map[string]bool{}
				}
				if !cur.named[site] {
					cur.named[site] = true
					g.nameLocked(site)
				}
			}
			cur.anyPage = cur.anyPage || o.anyPage
			g.removeLocked(id, o)
			continue
		}
		delete(g.owners, id)
		if isFirstFrameSession(id.session) {
			g.firstFrame--
		}
		o.session = session
		o.ended = time.Time{}
		g.owners[nid] = o
	}
}

// sweepLocked drops the owners whose grace period is over (at most once a second unless forced).
func (g *redirectGuard) sweepLocked(force bool) {
	now := g.clock()
	if !force && now.Sub(g.swept) < time.Second {
		return
	}
	g.swept = now
	grace, _, _ := g.limits()
	for id, o := range g.owners {
		if !o.ended.IsZero() && now.Sub(o.ended) > grace {
			g.removeLocked(id, o)
		}
	}
}

func (g *redirectGuard) removeLocked(id ownerID, o *guardOwner) {
	defer g.publishAddressesLocked()
	delete(g.owners, id)
	for site := range o.named {
		g.unnameLocked(site)
	}
	if isFirstFrameSession(id.session) {
		g.firstFrame--
	}
	for k := range o.keys {
		g.unlistLocked(k, o)
		if _, hop := o.hopSet[k]; hop {
			g.hopBytes -= len(k)
			continue
		}
		g.total--
		g.bytes -= len(k)
	}
}

// unlistLocked takes o off the owners of address key k, and k off the guard when no owner is
// left. Called with g.mu held.
func (g *redirectGuard) unlistLocked(k string, o *guardOwner) {
	list := g.byKey[k]
	for i, x := range list {
		if x == o {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(g.byKey, k)
	} else {
		g.byKey[k] = list
	}
}

// Hops (review of pass 6d). A followed redirect's target and a followed client-side hop of an
// opened document are guarded in turn, but how many there are is the page's doing, not the
// remixlet's: a page whose images redirect within its origin, or a document that navigates
// within its origin, with long addresses, used to fill the budget that every page's remixlet
// writes share (redirectGuardMaxTotal, redirectGuardMaxBytes), and every remixlet write on
// every page was refused for the grace period. So hops are held apart: at most
// maxHopsPerOwner of them and maxHopBytesPerOwner bytes per owner (one remixlet on one page
// session), evicting that owner's own oldest hop, and not counted against what remixlets
// write. An evicted hop is one the browser already asked for (a hop is added just before its
// request goes); only a later request for exactly it again (a reload of it) is then no longer
// guarded. A single hop longer than maxHopBytesPerOwner is refused.
const (
	maxHopsPerOwner     = 1024
	maxHopBytesPerOwner = 1 << 20
)

// addHop guards the address of a hop the owner (session, remixlet) follows (see above). It
// returns an error, and the caller refuses the hop, when the address does not parse or is too
// long, or the owner cannot be held.
func (g *redirectGuard) addHop(session, pageURL, remixlet string, m *sandbox.Manifest, addr string) error {
	u, err := weburl.Parse(addr)
	if err != nil {
		return fmt.Errorf("redirect guard hop: %w", err)
	}
	k := weburl.Key(u)
	if k == "" {
		return nil
	}
	if len(k) > maxHopBytesPerOwner {
		return fmt.Errorf("redirect guard hop: %w: an address of %d bytes (at most %d)", errGuardFull, len(k), maxHopBytesPerOwner)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	defer g.publishAddressesLocked()
	if err := g.addLocked(session, pageURL, remixlet, m, nil, 0); err != nil {
		return fmt.Errorf("redirect guard hop: %w", err)
	}
	o := g.owners[ownerID{session, remixlet}]
	if _, ok := o.keys[k]; ok {
		return nil
	}
	for len(o.hops) > 0 && (len(o.hops) >= maxHopsPerOwner || o.hopBytes+len(k) > maxHopBytesPerOwner) {
		old := o.hops[0]
		o.dropHopLocked(g, old)
		delete(o.keys, old)
		g.unlistLocked(old, o)
	}
	o.keys[k] = struct{}{}
	g.byKey[k] = append(g.byKey[k], o)
	o.noteHopLocked(g, k)
	return nil
}

// noteHopLocked counts k, already in o.keys and g.byKey, as one of o's hops.
func (o *guardOwner) noteHopLocked(g *redirectGuard, k string) {
	if o.hopSet == nil {
		o.hopSet = map[string]struct{}{}
	}
	o.hopSet[k] = struct{}{}
	o.hops = append(o.hops, k)
	o.hopBytes += len(k)
	g.hopBytes += len(k)
}

// dropHopLocked stops counting k as one of o's hops (it stays in o.keys: the caller decides).
func (o *guardOwner) dropHopLocked(g *redirectGuard, k string) {
	delete(o.hopSet, k)
	if i := slices.Index(o.hops, k); i >= 0 {
		o.hops = slices.Delete(o.hops, i, i+1)
	}
	o.hopBytes -= len(k)
	g.hopBytes -= len(k)
}

// guardHit is one owner of a guarded address, as lookup reports it.
type guardHit struct {
	remixlet string
	session  string
	pageURL  string
	manifest *sandbox.Manifest
	site     string // the owner's page site (guardOwner.site)
}

// hit is the guardHit of o for a request from page pageURL.
func (o *guardOwner) hit(pageURL string) guardHit {
	return guardHit{remixlet: o.remixlet, session: o.session, pageURL: pageURL, manifest: o.manifest, site: o.site}
}

// mayLoad reports whether the owner's remixlet may send to host from the page it wrote on
// (mayLoadOn, sendhosts.go).
func (h guardHit) mayLoad(host string) bool { return mayLoadOn(h.manifest, h.site, host) }

// parsedOrNil is the address a parsed as the browser reads it, or nil.
func parsedOrNil(a string) *weburl.URL {
	u, err := weburl.Parse(a)
	if err != nil {
		return nil
	}
	return u
}

// lookup returns the owners that guard the address with key k for a request from `from`
// (requesterOf; see guardrequester.go).
func (g *redirectGuard) lookup(k string, from requester) []guardHit {
	if k == "" || from.typed {
		return nil
	}
	grace, _, _ := g.limits()
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock()
	var hits []guardHit
	for _, o := range g.byKey[k] {
		if (!o.ended.IsZero() && now.Sub(o.ended) > grace) || !from.mayBe(o) {
			continue
		}
		page := ""
		for u := range o.urls {
			page = u
			break
		}
		hits = append(hits, o.hit(page))
	}
	return hits
}

// GuardRedirect is a response tap of the pipeline, run on every upstream response: a redirect
// from an address a remixlet wrote to an origin that remixlet may not load from is replaced by a
// 403 (see the top of the file).
func (r *Runner) GuardRedirect(resp *http.Response) {
	if resp == nil || resp.Request == nil {
		return
	}
	loc := httpx.RedirectTarget(resp)
	if loc == "" {
		return
	}
	from, err := httpx.RequestedAddress(resp.Request)
	if err != nil {
		return
	}
	hits := r.guard.lookup(weburl.Key(from), requesterOf(resp.Request))
	cloned := false
	if len(hits) == 0 {
		hits = r.guard.cloneHits(resp.Request) // an image a remixlet's clone asks for again (cloneguard.go)
		cloned = true
	}
	if len(hits) == 0 {
		return
	}
	to, err := weburl.Resolve(from, loc)
	var refusedBy []guardHit
	for _, h := range hits {
		ok := err == nil && to.IsHTTP() && !to.HasCredentials() &&
			(weburl.SameOrigin(to, from) || h.mayLoad(to.HostKey()))
		if ok && !(cloned && clonePairsAgain(resp.Request, from, to)) {
			// Followed: the next hop is guarded in turn, among the owner's hops (addHop; or
			// refused when it cannot be held).
			ok = r.guard.addHop(h.session, h.pageURL, h.remixlet, h.manifest, to.Request()) == nil
		}
		if !ok {
			refusedBy = append(refusedBy, h)
		}
	}
	if len(refusedBy) == 0 {
		return
	}
	seen := map[string]bool{}
	for _, h := range refusedBy {
		if !seen[h.remixlet] {
			seen[h.remixlet] = true
			r.logf(h.remixlet, "warn", "refused: %s redirects to %s, which is not on the page's origin or one of the remixlet's sites; the browser got a 403 instead",
				httpx.Clip(from.Request(), 300), httpx.Clip(loc, 300))
		}
	}
	replaceWithRefusal(resp, refusalBody("a redirect of an address a remixlet wrote was refused",
		"an address a remixlet wrote may redirect to another site only if the remixlet holds a fetch: permission for that site"))
}
