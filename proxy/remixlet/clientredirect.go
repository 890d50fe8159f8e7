package remixlet

import (
	"mime"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The client-side redirect guard (red-team pass 6d, OPEN-ITEMS 27). The redirect guard
// (redirect.go) sees a server's redirects only. A site's page that forwards by itself — a
// script's location.href = params.get('to'), location.replace, a timer, window.open into the
// same tab, a form its script submits, top.location from a frame, a <meta http-equiv=refresh> —
// answers 200, and the next request goes to the other host with at most the site's origin as
// Referer: a remixlet's same-origin link to such a page (/go?to=https://elsewhere/?data) carried
// what the remixlet wrote anywhere, by dom.click or the person's click.
//
// So a document that an address a remixlet wrote opened (a navigation, top level or a frame's,
// for an address the redirect guard holds, answered with anything but a redirect) is an opened
// document, owned by the remixlets that wrote that address. Its navigations are the remixlets'
// as much as a redirect would be, and are held as the redirect guard holds redirects: one to an
// origin other than the document's, or a site of the remixlet or a fetch: host of it, gets the
// proxy's 403 before it leaves; one that stays is followed, and its address joins the
// remixlet's guarded addresses, so its own redirects and the document it opens are guarded in
// turn. Every path a page script or the browser may take to navigate arrives here as a request,
// so none needs to be known in advance.
//
// Which navigations are the document's. The proxy does not get a navigation's initiator. It
// pairs a navigation request (Sec-Fetch-Dest document, iframe or frame; on plain http, the
// headers only navigations carry) with an opened document when
//   - its Referer is the document's address (a full Referer: same-origin navigations, or a
//     policy that sends it), or only the document's origin (what the default policy sends to
//     another origin, from any page of that origin), or
//   - it has no Referer (a no-referrer policy) and Sec-Fetch-Site does not rule the document
//     out (same-origin with its origin, same-site with its site, or cross-site or absent).
//
// Never paired: Sec-Fetch-Site "none" (the address bar, a bookmark), and Sec-Fetch-User ?1 (a
// navigation with the person's activation: a link the person clicks in that document goes where
// it goes, and the site's own forwarding page that the person reaches by the site's own link is
// not an opened document at all) — except, for a document opened in a frame, within
// activationBorrowed of its answer: ?1 says only that the frame had activation in the last five
// seconds, and the ninth session measured a frame's script setting top.location with the ?1 of
// the very click that loaded the frame. The tenth session's measurement in the same Chromium
// (TestActivationOfAnOpenedDocument) saw no ?1 on any script navigation of a document the
// person's click had just opened, top level or in a frame, at once or 0.5 s later; so a
// top-level document's ?1 is the person's own click in it, and only frames keep the window (a
// person's click in a frame within its first seconds is rare; the cost stays small there). A
// meta refresh, a timer and a script on load of a top-level document have no activation. Pairing by origin also pairs,
// fail safe, an unactivated navigation to another site from another page of the same origin
// while an opened document lives: it is refused with the same page (the collateral, in NOTES).
// Plain http has no Fetch metadata: every navigation of such a document pairs, the person's
// clicks included.
//
// How long. A top-level opened document lives while the page session the page agent opens in
// it lives (bound when a session starts on its address), and openedAfterEnd after. A frame's
// document has no page agent; it lives while the page session of its parent (the Referer,
// when it is a connected page's address) lives. A document bound to no session lives
// openedLoading after it was answered (a forwarding page forwards before its agent connects).
// A session that starts on the address of an ended opened document (the back/forward cache)
// takes it up again, within redirectGuardGrace.

const (
	// activationBorrowed is how long after a document opened in a frame was answered a
	// navigation with the person's activation (Sec-Fetch-User ?1) is still taken for the
	// document's own: the activation of the click that opened it lasts five seconds in
	// Chromium, and a frame's script that sets top.location within them may borrow it from the
	// page above. Top-level documents do not borrow it (see the top of the file).
	activationBorrowed = 6500 * time.Millisecond
	openedLoading      = 30 * time.Second
	openedAfterEnd     = 5 * time.Second
	maxOpenedDocs      = 4096
	// maxOpenedPerSession bounds the documents one page session's remixlets' addresses opened
	// (by the session of their first owner): a page that opens many cannot fill the table
	// (maxOpenedDocs) that every page shares. Past it, that session's own oldest document that
	// can no longer navigate makes room; when all of them still can, the new one is refused.
	maxOpenedPerSession = 256
)

// openedDoc is one document an address a remixlet wrote opened.
type openedDoc struct {
	keys     map[string]bool // weburl.Key of its address, and of the addresses an SPA moved it to
	address  string          // its address as answered
	origin   string
	site     string // weburl.Site of its host
	owners   []guardHit
	answered time.Time
	session  string    // the page session it lives with (its own, or its parent's for a frame)
	frame    bool      // opened in a frame (its navigations may borrow the opening click's activation)
	ended    time.Time // when that session ended; zero while it is open
	by       string    // the page session of its first owner: whose budget it counts against
}

// openedDocs is the runner's table of opened documents.
type openedDocs struct {
	live atomic.Int32 // len(docs), read without the lock on every request
	mu   sync.Mutex
	docs []*openedDoc
	now  func() time.Time // nil: time.Now
}

func (o *openedDocs) clock() time.Time {
	if o.now != nil {
		return o.now()
	}
	return time.Now()
}

// liveLocked reports whether d may still navigate.
func (d *openedDoc) liveLocked(now time.Time) bool {
	switch {
	case d.session == "":
		return now.Sub(d.answered) < openedLoading
	case d.ended.IsZero():
		return true
	default:
		return now.Sub(d.ended) < openedAfterEnd
	}
}

// keptLocked reports whether d is worth keeping: live, or within the redirect guard's grace
// (a session on its address may take it up again).
func (d *openedDoc) keptLocked(now time.Time) bool {
	if d.liveLocked(now) {
		return true
	}
	end := d.ended
	if end.IsZero() {
		end = d.answered.Add(openedLoading)
	}
	return now.Sub(end) < redirectGuardGrace
}

// sweepLocked drops the documents no longer kept.
func (o *openedDocs) sweepLocked(now time.Time) {
	kept := o.docs[:0]
	for _, d := range o.docs {
		if d.keptLocked(now) {
			kept = append(kept, d)
		}
	}
	clear(o.docs[len(kept):])
	o.docs = kept
	o.live.Store(int32(len(o.docs)))
}

// opened records the document at u, answered to a navigation for an address owners wrote;
// parent is the page session of the frame's parent ("" for a top-level document, or a frame
// whose parent is not a connected page); frame says it was opened in a frame. It reports false when the table is full of documents
// that may still navigate: the caller refuses the document.
func (o *openedDocs) opened(u *weburl.URL, owners []guardHit, parent string, frame bool) bool {
	now := o.clock()
	o.mu.Lock()
	defer o.mu.Unlock()
	k := weburl.Key(u)
	for _, d := range o.docs {
		if d.keys[k] && d.session == parent && d.frame == frame && d.liveLocked(now) {
			d.answered = now // the same document again (a reload)
			d.owners = mergeOwners(d.owners, owners)
			return true
		}
	}
	by := ""
	if len(owners) > 0 {
		by = owners[0].session
	}
	mine := 0
	for _, d := range o.docs {
		if d.by == by {
			mine++
		}
	}
	if mine >= maxOpenedPerSession || len(o.docs) >= maxOpenedDocs {
		o.sweepLocked(now)
		mine = 0
		for _, d := range o.docs {
			if d.by == by {
				mine++
			}
		}
	}
	// Past either bound, drop the session's own oldest that can no longer navigate (never one
	// that can, and never another session's: one page must not starve the others).
	for mine >= maxOpenedPerSession || len(o.docs) >= maxOpenedDocs {
		i := slices.IndexFunc(o.docs, func(d *openedDoc) bool { return d.by == by && !d.liveLocked(now) })
		if i < 0 {
			return false
		}
		o.docs = slices.Delete(o.docs, i, i+1)
		mine--
	}
	o.docs = append(o.docs, &openedDoc{keys: map[string]bool{k: true}, address: u.Request(), origin: u.Origin(), site: weburl.Site(u.HostKey()),
		owners: owners, answered: now, session: parent, frame: frame, by: by})
	o.live.Store(int32(len(o.docs)))
	return true
}

func mergeOwners(have, more []guardHit) []guardHit {
	for _, h := range more {
		found := false
		for _, x := range have {
			if x.remixlet == h.remixlet && x.session == h.session {
				found = true
				break
			}
		}
		if !found {
			have = append(have, h)
		}
	}
	return have
}

// sessionStarted binds the unbound (or ended) top-level documents at pageURL to the page
// session that started there.
func (o *openedDocs) sessionStarted(session, pageURL string) {
	if o.live.Load() == 0 {
		return
	}
	u, err := weburl.Parse(pageURL)
	if err != nil {
		return
	}
	k := weburl.Key(u)
	now := o.clock()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, d := range o.docs {
		if d.keys[k] && (d.session == "" || !d.ended.IsZero()) && d.keptLocked(now) {
			d.session, d.ended = session, time.Time{}
		}
	}
}

// sessionMoved adds the address an SPA navigation moved a page session to (a Referer then
// names it).
func (o *openedDocs) sessionMoved(session, pageURL string) {
	if o.live.Load() == 0 {
		return
	}
	u, err := weburl.Parse(pageURL)
	if err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, d := range o.docs {
		if d.session == session && d.ended.IsZero() && len(d.keys) < maxNavKeys {
			d.keys[weburl.Key(u)] = true
		}
	}
}

// maxNavKeys bounds the addresses one opened document is known by.
const maxNavKeys = 64

// sessionEnded starts the end of the documents that live with the session.
func (o *openedDocs) sessionEnded(session string) {
	if o.live.Load() == 0 {
		return
	}
	now := o.clock()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, d := range o.docs {
		if d.session == session && d.ended.IsZero() {
			d.ended = now
		}
	}
}

// clientNav is what pairing looks at in a navigation request.
type clientNav struct {
	url       *weburl.URL
	referer   *weburl.URL // nil when there is none (or it does not parse)
	fetchSite string
	user      bool // Sec-Fetch-User: ?1
}

// pairsLocked reports whether nav may be a navigation of d (see the top of the file).
func (d *openedDoc) pairsLocked(nav clientNav, now time.Time) bool {
	if nav.user && (!d.frame || now.Sub(d.answered) >= activationBorrowed) {
		return false // the person's click in the document
	}
	if nav.referer != nil {
		if nav.referer.Origin() != d.origin {
			return false
		}
		ref := weburl.Key(nav.referer)
		if d.keys[ref] {
			return true
		}
		// Only the origin (the default policy towards another origin): any page of it.
		return nav.referer.PathQuery() == "/"
	}
	switch nav.fetchSite {
	case "same-origin":
		return nav.url != nil && nav.url.Origin() == d.origin
	case "same-site":
		return nav.url != nil && weburl.Site(nav.url.HostKey()) == d.site
	default: // cross-site, or no Fetch metadata: the initiator is unknown
		return true
	}
}

// GuardClientRedirect is the request side: called for every proxied request before it goes
// upstream, it answers with the proxy's 403 (and returns true) a navigation of an opened
// document that would leave for an origin its remixlets may not load from; a navigation that
// stays has its address guarded for them in turn.
func (r *Runner) GuardClientRedirect(w http.ResponseWriter, req *http.Request) bool {
	if r == nil || r.opened.live.Load() == 0 {
		return false
	}
	top, frame := httpx.NavigationKind(req)
	if !top && !frame {
		return false
	}
	if req.Header.Get("Sec-Fetch-Site") == "none" {
		return false // the person's own: the address bar, a bookmark, the browser's UI
	}
	nav := clientNav{fetchSite: req.Header.Get("Sec-Fetch-Site"), user: req.Header.Get("Sec-Fetch-User") == "?1"}
	to, err := httpx.RequestedAddress(req)
	if err == nil {
		nav.url = to
	}
	if ref, err := weburl.Parse(req.Header.Get("Referer")); err == nil && ref.IsHTTP() {
		nav.referer = ref
	}
	now := r.opened.clock()
	type pairing struct {
		origin  string
		owners  []guardHit
		address string   // the document's address: the followed hop's Referer
		keys    []string // every address it is known by (its SPA moves too)
	}
	var paired []pairing
	r.opened.mu.Lock()
	for _, d := range r.opened.docs {
		if d.liveLocked(now) && d.pairsLocked(nav, now) {
			keys := make([]string, 0, len(d.keys))
			for k := range d.keys {
				keys = append(keys, k)
			}
			paired = append(paired, pairing{d.origin, append([]guardHit(nil), d.owners...), d.address, keys})
		}
	}
	r.opened.mu.Unlock()
	if len(paired) == 0 {
		return false
	}
	var refusedBy []guardHit
	for _, p := range paired {
		for _, h := range p.owners {
			ok := nav.url != nil && nav.url.IsHTTP() && !nav.url.HasCredentials() &&
				(nav.url.Origin() == p.origin || h.mayLoad(nav.url.HostKey()))
			if ok {
				// Followed: its redirects, and the document it opens, are guarded in turn (or it
				// is refused when the guard is full).
				ok = r.guard.addHop(h.session, h.pageURL, h.remixlet, h.manifest, nav.url.Request()) == nil &&
					r.guard.addPage(h.session, h.remixlet, p.address)
			} else if !r.offSiteCarries(nav.url, append([]string{p.address}, p.keys...), h) {
				ok = true // the document's own way off the site (a sign-in, a payment): not followed, not guarded
			}
			if !ok {
				refusedBy = append(refusedBy, h)
			}
		}
	}
	if len(refusedBy) == 0 {
		return false
	}
	shown := req.Host + req.URL.Path
	if nav.url != nil {
		shown = nav.url.Request()
	}
	seen := map[string]bool{}
	for _, h := range refusedBy {
		if !seen[h.remixlet] {
			seen[h.remixlet] = true
			r.logf(h.remixlet, "warn", "refused: a page that an address this remixlet wrote opened tried to go to %s, which is not on that page's origin or one of the remixlet's sites; the browser got a 403 instead",
				httpx.Clip(shown, 300))
		}
	}
	writeRefusal(w, refusalBody("a page that an address a remixlet wrote opened tried to go to another site; refused",
		"a page a remixlet's address opened may go to another site only if the remixlet holds a fetch: permission for that site"))
	return true
}

// offSiteCarries reports whether a navigation of an opened document (known by the addresses
// docAddrs) to dest, off its origin and the remixlet h's sites, is to be refused (review of 6d,
// item 4). A remixlet's path guard (pathsIn) makes a document of any path it writes, "/" and
// "/login" included, an opened document; refusing every one of its unactivated navigations off
// the site refused the site's own sign-in and payment redirects. The attack is the forwarding
// page: it goes where its address tells it (/go?to=https://elsewhere/…), or where the remixlet
// named elsewhere on the page for a script to find. So the navigation is refused when the
// destination's site appears in the document's own address in any shape the guard reads (as
// written, percent-decoded, base64-decoded: sitesIn for bare names, addressesIn for addresses,
// read as the browser reads them, so http://3405803783/ is 203.0.113.7), or is a site the
// owning remixlet named on the page (namedhosts.go). A destination that is an IP address, or
// that is no http(s) address, or carries credentials, is refused always: no sign-in goes
// there, and an IP can be spelled in ways no text search finds. What stays: a site's own
// mapping from a name the remixlet writes to a destination it does not (a link shortener of
// the same site, /s/abc), which carries only the choice of link.
func (r *Runner) offSiteCarries(dest *weburl.URL, docAddrs []string, h guardHit) bool {
	if dest == nil || !dest.IsHTTP() || dest.HasCredentials() {
		return true
	}
	host := dest.HostKey()
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil || strings.HasPrefix(host, "[") {
		return true
	}
	site := weburl.Site(host)
	for _, a := range docAddrs {
		if slices.Contains(sitesIn(a), site) {
			return true
		}
		base, err := weburl.Parse(a)
		if err != nil {
			base = nil
		}
		for _, x := range addressesIn(a) {
			var u *weburl.URL
			if base != nil {
				u, err = weburl.Resolve(base, x)
			} else {
				u, err = weburl.Parse(x)
			}
			if err == nil && weburl.Site(u.HostKey()) == site {
				return true
			}
		}
	}
	return r.guard.ownerNamed(h.session, h.remixlet, site)
}

// NoteOpenedDocument is a response tap, after the redirect guard: a navigation's answer for
// an address a remixlet wrote that is not a redirect is an opened document (see the top of the
// file). When the table cannot hold it, the answer is refused instead.
func (r *Runner) NoteOpenedDocument(resp *http.Response) {
	if resp == nil || resp.Request == nil || !r.guard.holdsAddresses() {
		return // no address a remixlet wrote: nothing to look up (one atomic load, every page)
	}
	top, frame := httpx.NavigationKind(resp.Request)
	if !top && !frame {
		return
	}
	if httpx.RedirectTarget(resp) != "" || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusResetContent {
		return // a redirect is the redirect guard's; a 204 opens no document
	}
	if !mayNavigate(resp.Header.Get("Content-Type")) {
		return // text, images, the guards' own refusals: nothing in them can navigate
	}
	from, err := httpx.RequestedAddress(resp.Request)
	if err != nil {
		return
	}
	hits := r.guard.lookup(weburl.Key(from), requesterOf(resp.Request))
	if len(hits) == 0 {
		return
	}
	parent := ""
	if frame {
		parent = r.sessionAt(resp.Request.Header.Get("Referer"))
	}
	if r.opened.opened(from, hits, parent, frame) {
		return
	}
	for _, h := range hits {
		r.logf(h.remixlet, "warn", "refused: %s was opened by an address this remixlet wrote, and the proxy cannot watch more such pages now", httpx.Clip(from.Request(), 300))
	}
	replaceWithRefusal(resp, refusalBody("too many pages opened by addresses remixlets wrote are open; refused",
		"close some of the pages remixlets' addresses opened, then try again"))
}

// mayNavigate reports whether a document of the media type can run script or refresh itself:
// HTML, XHTML, SVG and XML (which may hold either), and no type at all (the browser sniffs).
func mayNavigate(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return strings.TrimSpace(contentType) == "" || !strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/plain")
	}
	switch mt {
	case "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml":
		return true
	}
	return strings.HasSuffix(mt, "+xml")
}

// sessionAt is the connected page session whose page is at the address ref, "" when none is.
func (r *Runner) sessionAt(ref string) string {
	u, err := weburl.Parse(ref)
	if err != nil || !u.IsHTTP() {
		return ""
	}
	k := weburl.Key(u)
	r.mu.Lock()
	pages := make([]*pageRun, 0, len(r.pages))
	for _, p := range r.pages {
		pages = append(pages, p)
	}
	r.mu.Unlock()
	for _, p := range pages {
		if pu, err := weburl.Parse(p.pc.url()); err == nil && weburl.Key(pu) == k {
			return p.pc.id
		}
	}
	return ""
}
