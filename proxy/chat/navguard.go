package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// The agent's own navigations stay on the site, redirects included (issue 11, hole 3; DESIGN
// invariant 11). navigate and a click are checked in Go and in the page before they run, but a
// site's own open redirect (/out?to=https://other.example/…) or the page's script turns an
// address of the site into a request anywhere. So the proxy knows, in Go, which top-level
// navigations the agent started and checks every hop of them.
//
// Who is trusted. The page agent runs in the hostile page's world, so the page cannot be asked
// whether a navigation is the agent's. The proxy arms an expectation itself, before it asks the
// page agent for any action that can navigate (click, set_field, press_keys, select, type,
// hover, scroll, navigate, back, forward: page script may navigate on any event), and keeps it
// from then until navWindow (30 s, the send guard's sendAfter) after the action's answer: a
// page's script may send the tab off the site with what the agent typed on a timer long after
// the action (OPEN-ITEMS 20; e2e TestLateNavigationAfterTypingHeld).
// What the page agent reports (the address navigate goes to, the link a click follows) only
// adds expected addresses; a page that hides them cannot make a hop pass.
//
// Pairing (navExpect.pairs). While an expectation is armed, a request the browser makes for a
// top-level document (Sec-Fetch-Dest: document; with no Fetch metadata, as on plain http, a
// request marked as a navigation by Upgrade-Insecure-Requests or an Accept that starts with
// text/html) or for a frame's document is the agent's when
//   - it is to an address the expectation expects (navigate's target, a hop it followed), or
//   - its Referer is of an origin the expectation covers (the chat page's, and those of the
//     same-site hops it followed), or
//   - it has no Referer (a no-referrer policy) and Sec-Fetch-Site does not rule the
//     expectation out: same-origin with an origin it covers, same-site with its site, or
//     cross-site or absent (the initiator is unknown: counted as the agent's).
//
// Sec-Fetch-Site "none" — the address bar, a bookmark, the person's own browser UI — never
// pairs: a navigation the person starts is never affected. Nor does one with the person's
// activation (Sec-Fetch-User: ?1) to an address the page agent reported them clicking (a link,
// a form, a button's popup or navigation: navguard_person.go). A navigation the person starts
// that the page agent cannot see — "Open link in new tab", a link in a frame of another origin
// or in a closed shadow root, a handler's timer — in a page of the same origin during an armed
// window (this tab or another) pairs, and so does one of a second tab of the same origin; both
// fail safe: such a navigation is held to the site for up to navWindow after the agent's last
// action, which is what the agent's would be, and the refusal page says why.
//
// The check (navExpect.leaves): every address — the request the browser sent, a Location or
// Refresh URL resolved against it, the Referer — is read as the browser reads it
// (internal/weburl: WHATWG URL, IDNA/UTS-46), and a hop leaves the site when it is not http or
// https, carries a user name, or its registrable domain (weburl.Site, as http_request and
// open_page decide the site) is not the chat page's. A top-level
// request that leaves the site is answered by the proxy's refusal page without going upstream
// (a click whose page script navigates off the site directly); a frame's first hop to another
// site is the page's own widget loading (payment, sign-in) and is left alone, but a frame's
// request on the site is marked like a top-level one, so its redirects off the site are held,
// and a frame's navigation off the site from a frame document so loaded is held
// (navguard_frames.go). A marked request's redirect (3xx with a
// Location, or a Refresh header) that leaves the site is replaced by the refusal page; one that
// stays is followed by the browser as a new request, which pairs by its address and Referer
// and is checked in turn, and its origin joins the expectation's (so the next page's own
// navigations within the window are held too). A redirect written by a remixlet's network rule
// is checked the same way. A paired navigation that stays on the site but whose query carries an
// address of another site is refused too: the page may load what it names (navguard_carried.go).
// The chat's tool result says the navigation was stopped, and the chat shows a notice.

const (
	// navAfter is how long after each hop of an action's navigation (and after a navigation
	// that pairs while the action runs) its expectation still pairs navigations.
	navAfter = 3 * time.Second
	// navWindow is how long after an action's answer its expectation pairs navigations: as
	// long as its page's requests are held (sendAfter), since a page's own script may send the
	// tab off the site with what the agent typed on a timer (a "preview", a "redirect after
	// save") as well as post it (OPEN-ITEMS 20). The person's own clicks the page agent
	// reported never pair (navguard_person.go), so their links and sign-in popups go.
	navWindow = sendAfter
	// navMaxRunning bounds how long an action may hold its expectation armed.
	navMaxRunning = 2 * time.Minute
	// maxNavExpects bounds the expectations armed at once; past it the oldest is dropped only
	// when it has expired, else arming fails safe by pairing with it anyway (see arm).
	maxNavExpects = 256
	// maxLeasesPerChat bounds the document leases of one chat (the documents of a chain of
	// navigations whose page agents have not connected, or not yet gone).
	maxLeasesPerChat = 16
	// maxNavURLs bounds the addresses one expectation remembers.
	maxNavURLs = 64
)

// navGuard is a chat hub's table of armed expectations (Hub.nav).
type navGuard struct {
	live atomic.Int32 // len(xs), read without the lock on every request
	mu   sync.Mutex
	next uint64
	xs   map[uint64]*navExpect // actions' expectations and documents' leases (navDoc)
	now  func() time.Time      // nil: time.Now
	// persons are the reports of the person's clicks (navguard_person.go). Guarded by mu.
	persons []personNav
	// stops are the last refusals by owner (a chat), for a call whose page went (stopFor).
	stops map[any]navStop
	// sends are the recent actions whose page's requests are held (sendguard.go).
	sends sendActs
}

// navExpect is one action's expectation: the navigations it may start, and what became of them.
type navExpect struct {
	g        *navGuard
	id       uint64
	tool     string
	site     string // registrable domain of the chat page's host
	home     string // the chat page's origin
	onRefuse func(why string)

	// Guarded by g.mu.
	origins map[string]bool
	// frameOrigins are the origins of frame documents the expectation's navigations loaded on
	// the site (navguard_frames.go): a frame's navigation off the site from one is held.
	frameOrigins map[string]bool
	urls         map[string]bool // expected addresses: navigate's target, a followed link, hops
	hops         map[string]int  // hops followed and not yet requested, by address
	running      bool            // the action has not answered yet
	until        time.Time       // when running is false: the end of the window
	answered     time.Time       // when the action answered (settle); zero while it runs
	started      time.Time
	pending      int      // marked requests not yet answered, and hops followed but not yet requested
	paired       int      // requests paired in all
	refusals     []string // what was stopped, in the proxy's words

	// owner is the chat whose action this is (nil in tests): its documents' leases name it.
	owner any
	// pageAlive reports whether the page session the action runs in still lives (nil: unknown):
	// a frame its navigation loaded lives no longer (navguard_frames.go).
	pageAlive func() bool
	// doc is non-nil when this is not an action's expectation but the lease of the documents
	// the chat's agent loaded (navDoc): it pairs for as long as the chat's page is one of them.
	doc *navDoc
	// confirmPost asks the person about a form submission (a non-GET navigation) the action
	// caused, and answers at once when "Act may submit forms" is on (submit.go); nil:
	// such a navigation is not held.
	confirmPost func(ctx context.Context, p postAsk) (bool, error)
	// control names the action for the person ("select “Delete my data”"), for confirmPost.
	control string
	// Guarded by g.mu.
	postOK  map[string]int // submissions already allowed (the probe's card), by address key; "" any
	holding int            // submissions waiting for the person
	denied  []string       // submissions the person refused, in the proxy's words
	sends   sendHold       // the person's decision on the requests the page sends (sendguard.go)
}

func (g *navGuard) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

// arm starts an expectation for an action in the page pageURL (origin pageOrigin) of a chat;
// expected are addresses the action is known to go to (navigate's target), and onRefuse is
// told when a hop is refused. The caller must call settle when the action has answered.
func (g *navGuard) arm(tool, pageURL, pageOrigin string, expected []string, onRefuse func(string)) *navExpect {
	return g.armAs(navOwner{}, tool, pageURL, pageOrigin, expected, onRefuse)
}

// navOwner is what a chat adds to its action's expectation: who it is, and how a form
// submission the action causes is put to the person (navExpect's fields of the same names).
type navOwner struct {
	owner       any
	pageAlive   func() bool
	control     string
	confirmPost func(ctx context.Context, p postAsk) (bool, error)
}

// armAs is arm for an action of a chat (o).
func (g *navGuard) armAs(o navOwner, tool, pageURL, pageOrigin string, expected []string, onRefuse func(string)) *navExpect {
	site := "" // a page whose address cannot be read has no site: every hop leaves
	if u, err := weburl.Parse(pageURL); err == nil && u.IsHTTP() {
		site = u.Site()
	}
	now := g.clock()
	x := &navExpect{g: g, tool: tool, site: site, home: pageOrigin, onRefuse: onRefuse,
		origins: map[string]bool{pageOrigin: true}, frameOrigins: map[string]bool{}, urls: map[string]bool{}, hops: map[string]int{}, running: true, started: now,
		owner: o.owner, pageAlive: o.pageAlive, control: o.control, confirmPost: o.confirmPost}
	for _, e := range expected {
		if eu, err := weburl.Parse(e); err == nil {
			if k := weburl.Key(eu); k != "" {
				x.urls[k] = true
			}
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.xs == nil {
		g.xs = map[uint64]*navExpect{}
	}
	g.pruneLocked(now)
	if len(g.xs) >= maxNavExpects {
		g.dropOldestLocked()
	}
	g.next++
	x.id = g.next
	g.xs[x.id] = x
	g.storeLiveLocked()
	g.noteSendLocked(x, now) // sendguard.go
	return x
}

// dropOldestLocked makes room when every expectation is live: the oldest goes rather than the
// newest be refused (the newest action must be guarded; the oldest is the likeliest to be over).
func (g *navGuard) dropOldestLocked() {
	var oldest *navExpect
	for _, o := range g.xs {
		if oldest == nil || o.id < oldest.id {
			oldest = o
		}
	}
	if oldest != nil {
		delete(g.xs, oldest.id)
	}
}

// storeLiveLocked publishes, for the checks made without the lock, how many expectations there
// are (live): with none, navigations are not looked at and the person's click reports are
// dropped at once (personReported). Every change of g.xs ends with it; an expectation that
// lapsed without a prune is still counted, which only makes the slow path run.
func (g *navGuard) storeLiveLocked() {
	g.live.Store(int32(len(g.xs)))
}

// pruneLocked drops expectations whose window has ended.
func (g *navGuard) pruneLocked(now time.Time) {
	for id, x := range g.xs {
		if !x.liveLocked(now) {
			delete(g.xs, id)
		}
	}
	g.storeLiveLocked()
}

func (x *navExpect) liveLocked(now time.Time) bool {
	if x.doc != nil {
		return x.doc.liveLocked(now)
	}
	if x.running {
		return now.Sub(x.started) < navMaxRunning
	}
	return now.Before(x.until) || x.pending > 0 && now.Sub(x.until) < navMaxRunning
}

// expect adds an address the action goes to (the link a click followed, as the page agent
// reported it). Nil-safe.
func (x *navExpect) expect(raw string) {
	if x == nil || raw == "" {
		return
	}
	u, err := weburl.Parse(raw)
	if err != nil {
		return
	}
	if k := weburl.Key(u); k != "" {
		x.g.mu.Lock()
		if len(x.urls) < maxNavURLs {
			x.urls[k] = true
		}
		x.g.mu.Unlock()
	}
}

// settle ends the action's own run: the window closes navWindow from now. Nil-safe.
func (x *navExpect) settle() {
	if x == nil {
		return
	}
	x.g.mu.Lock()
	defer x.g.mu.Unlock()
	x.running = false
	now := x.g.clock()
	x.answered = now
	if end := now.Add(navWindow); end.After(x.until) {
		x.until = end
	}
}

// extendLocked moves the end of the action's navigation window to navAfter from now (a
// navigation or hop it started, paired after its answer), but never past its hard cap,
// sendAfter after its answer: else a page that keeps navigating (a frame reloading itself
// every second) would keep the window — and with it the hold on its requests — open for ever.
func (x *navExpect) extendLocked(now time.Time) {
	end := now.Add(navAfter)
	if !x.running && !x.answered.IsZero() {
		if limit := x.answered.Add(sendAfter); end.After(limit) {
			end = limit
		}
	}
	if end.After(x.until) {
		x.until = end
	}
}

// refusal is what was stopped, in the proxy's words; "" when nothing was. Nil-safe.
func (x *navExpect) refusal() string {
	if x == nil {
		return ""
	}
	x.g.mu.Lock()
	defer x.g.mu.Unlock()
	return strings.Join(x.refusals, "; ")
}

// waitOutcome waits, up to max, while navigations of the action are under way (a marked request
// not answered yet, or a hop followed and not yet requested), so that a refusal is known before
// the tool answers. Nil-safe.
func (x *navExpect) waitOutcome(ctx context.Context, max time.Duration) {
	if x == nil {
		return
	}
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	expired := false
	for {
		x.g.mu.Lock()
		busy := x.pending > 0 && len(x.refusals) == 0 && len(x.denied) == 0
		holding := x.holding > 0 // a submission waits for the person: wait for the decision
		x.g.mu.Unlock()
		if !holding && (!busy || expired) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			expired = true
		case <-tick.C:
		}
	}
}

// waitStart waits, up to max, for the action's first navigation request (or a refusal).
func (x *navExpect) waitStart(ctx context.Context, max time.Duration) {
	pollUntil(ctx, max, func() bool {
		x.g.mu.Lock()
		defer x.g.mu.Unlock()
		return x.paired > 0 || len(x.refusals) > 0
	})
}

// finish ends an action's expectation after its page call and watch: when a hop of its
// navigation was refused, the tool's result is an error saying so, whatever the page answered.
// navigating is true when the page agent said the action loads a page (navigate, a link, a
// form): the navigation's first request is then waited for too. Nil-safe.
func (x *navExpect) finish(ctx context.Context, tool string, navigating bool, out json.RawMessage, err error) (json.RawMessage, error) {
	if x == nil {
		return out, err
	}
	if navigating {
		x.waitStart(ctx, navSettle)
	}
	x.waitOutcome(ctx, navSettle)
	x.settle()
	if why := x.deniedPost(); why != "" {
		return nil, &agent.ToolError{Message: tool + ": stopped by the proxy: " + why + ". Nothing was sent: the proxy answered in the site's place. Do not try another way to submit it; tell the person what you found instead."}
	}
	if why := x.refusal(); why != "" {
		return nil, &agent.ToolError{Message: tool + ": stopped by the proxy: " + why + ". The agent's own navigations stay on this site, so the tab now shows the proxy's page saying so and this page's session has ended; nothing was sent to the other site. Do not try another way to reach it; tell the person what you found instead."}
	}
	return out, err
}

// navRequest is what pairing looks at in a request.
type navRequest struct {
	url       *weburl.URL // as the browser sent it; nil when it cannot be read (it then leaves)
	key       string      // weburl.Key(url)
	origin    string
	referer   string // the Referer's origin, "" when there is none
	fetchSite string // Sec-Fetch-Site, "" when absent
	user      bool   // Sec-Fetch-User: ?1, a navigation with the person's activation
	method    string
}

// pairs reports whether nr may be a navigation of the action x (see the top of the file).
// Called with g.mu held.
func (x *navExpect) pairs(nr navRequest) bool {
	if nr.fetchSite == "none" {
		return false // the person's own: address bar, bookmark, the browser's UI
	}
	if x.g.personClickedLocked(nr, x.origins, x.site) {
		return false // the person's own click the page agent reported (navguard_person.go)
	}
	if x.urls[nr.key] {
		return true
	}
	if nr.referer != "" {
		return x.hasOriginLocked(x.origins, nr.referer)
	}
	switch nr.fetchSite {
	case "same-origin":
		return x.hasOriginLocked(x.origins, nr.origin)
	case "same-site":
		return !x.leaves(nr.url)
	default: // cross-site, or no Fetch metadata: the initiator is unknown
		return true
	}
}

// refusesLocked reports whether x refuses nr, a navigation that pairs with it (frame: a frame's;
// carrying: its query carries another site's address): it leaves the site, unless it is a
// frame's first hop off the site from the page (a widget loading: navguard_frames.go), or it
// stays but carries an address (navguard_carried.go; a lease's frame's own embed excepted).
// Called with g.mu held.
func (x *navExpect) refusesLocked(nr navRequest, frame, carrying bool) bool {
	if x.leaves(nr.url) {
		return !frame || nr.method != http.MethodGet || x.fromFrameLocked(nr)
	}
	return carrying && (!frame || x.doc == nil)
}

// leaves reports whether u (as weburl reads it) is off the expectation's site (see the top of
// the file).
func (x *navExpect) leaves(u *weburl.URL) bool {
	if u == nil || !u.IsHTTP() || u.HasCredentials() {
		return true
	}
	host := u.HostKey()
	if host == "" || httpx.IsMagicHost(host) {
		return true
	}
	return weburl.Site(host) != x.site
}

// navMarkKey is the request-context key of the expectations a request was paired with.
type navMarkKey struct{}

// navMark is a paired request's record: its expectations, the address the browser requested
// (what its redirects are resolved against), and whether its answer was seen.
type navMark struct {
	xs       []*navExpect
	from     *weburl.URL
	top      bool // a top-level document: its answer is a document the agent loaded (navDoc)
	answered atomic.Bool
	// leases are the leases its answer started (loaded), for the page token the proxy mints
	// for that document (DocumentMinted). Written and read in the response's taps, in order.
	leases []*navExpect
}

// readNavRequest builds what pairing needs from an incoming request, read as the browser sent
// it. A Referer that does not parse counts as none (pairing then falls back to Sec-Fetch-Site).
func readNavRequest(r *http.Request) navRequest {
	nr := navRequest{fetchSite: r.Header.Get("Sec-Fetch-Site"), user: r.Header.Get("Sec-Fetch-User") == "?1", method: r.Method}
	if u, err := httpx.RequestedAddress(r); err == nil {
		nr.url, nr.key, nr.origin = u, weburl.Key(u), u.Origin()
	}
	if ru, err := weburl.Parse(r.Header.Get("Referer")); err == nil && ru.IsHTTP() {
		nr.referer = ru.Origin()
	}
	return nr
}

// GuardNavigation is the request side of the check, called for every proxied request before
// the network rules (the proxy's pipeline). It returns the request (with its mark in the
// context when paired), a writer for the network rules' own answers (their redirects are
// checked too), a function to call when the request is done, and true when the proxy has
// answered it.
func (h *Hub) GuardNavigation(w http.ResponseWriter, r *http.Request) (*http.Request, http.ResponseWriter, func(), bool) {
	nothing := func() {}
	if h.nav.live.Load() == 0 {
		return r, w, nothing, false
	}
	top, frame := httpx.NavigationKind(r)
	frame = frame || embeddedDocument(r) // <object>/<embed> documents (navguard_frames.go)
	if !top && !frame {
		return r, w, nothing, false
	}
	nr := readNavRequest(r)
	g := &h.nav
	carried := carriedSite(nr.url) // an address of another site in its query (navguard_carried.go)
	if nr.user && g.personRace(nr, frame, carried != "") {
		// The report of the person's click can trail the request by a moment. Not waited for
		// without ?1: the agent's own navigations, refused, would all come 750 ms later (and
		// after its tool's answer); a window.open's report is sent before the window opens.
		g.waitPersonReport(r.Context(), nr)
	}
	now := g.clock()
	var xs []*navExpect
	var off []*navExpect
	g.mu.Lock()
	g.pruneLocked(now)
	for _, x := range g.xs {
		if !x.pairs(nr) {
			continue
		}
		if x.hops[nr.key] > 0 { // a hop it followed, now requested
			x.hops[nr.key]--
			x.pending--
		}
		if x.refusesLocked(nr, frame, carried != "") {
			off = append(off, x)
			x.paired++
			continue
		}
		if x.leaves(nr.url) {
			continue // a frame loading another site (a payment widget, a sign-in): its own load
		}
		xs = append(xs, x)
		addOrigin(x.origins, nr.origin)
		if frame {
			addOrigin(x.frameOrigins, nr.origin) // its navigations off the site are held (navguard_frames.go)
		}
		x.pending++
		x.paired++
		if !x.running {
			x.extendLocked(now)
		}
	}
	var running []*navExpect // the same chats' running actions: a lease's refusal is theirs too
	if len(off) > 0 {
		running = g.runningOfLocked(off)
	}
	person := len(off) == 0 && len(xs) == 0 && g.personClickedLocked(nr, nil, "")
	g.mu.Unlock()
	if person {
		r = g.markPerson(r, nr) // its redirects are the person's too (navguard_person.go)
	}
	if len(off) > 0 {
		why := fmt.Sprintf("the navigation would have left the site %s for %s", off[0].site, shownAddress(nr.url))
		pageWhy := "" // the refusal page's default words
		if !off[0].leaves(nr.url) {
			why = carriedWhy(nr.url, carried)
			pageWhy = why
		}
		for _, x := range off {
			x.refuse(why)
		}
		for _, x := range running {
			x.refuse(why)
		}
		for _, x := range xs {
			x.refuse(why)
			x.done()
		}
		h.log.Info("refused an agent navigation off the site", "site", off[0].site, "to", originShown(nr.url), "carrying", carried)
		writeNavRefusal(w, off[0].site, nr.url, pageWhy)
		return r, w, nothing, true
	}
	if len(xs) == 0 {
		return r, w, nothing, false
	}
	mark := &navMark{xs: xs, from: nr.url, top: top}
	if nr.method != http.MethodGet {
		// A form submission the agent's action caused waits for the person (submit.go).
		if why, site := holdAgentPost(r.Context(), nr, xs); why != "" {
			mark.answer()
			h.log.Info("refused a form submission of the agent's", "site", site, "to", originShown(nr.url))
			writeSubmitRefusal(w, site, why)
			return r, w, nothing, true
		}
	}
	r = r.WithContext(context.WithValue(r.Context(), navMarkKey{}, mark))
	return r, &navRuleWriter{ResponseWriter: w, mark: mark, from: nr.url}, mark.answer, false
}

// answer ends the marked request for its expectations, once: when its answer's head was
// checked, or when the request ended without one.
func (m *navMark) answer() {
	if m.answered.CompareAndSwap(false, true) {
		for _, x := range m.xs {
			x.done()
		}
	}
}

// done ends one marked request of x.
func (x *navExpect) done() {
	x.g.mu.Lock()
	if x.pending > 0 {
		x.pending--
	}
	x.g.mu.Unlock()
}

// refuse records a refused hop and tells the chat.
func (x *navExpect) refuse(why string) {
	x.g.mu.Lock()
	first := len(x.refusals) == 0
	if len(x.refusals) < 4 {
		x.refusals = append(x.refusals, why)
	}
	x.g.stopLocked(x.owner, why)
	x.g.mu.Unlock()
	if first && x.onRefuse != nil {
		go x.onRefuse(why)
	}
}

// checkHop checks a redirect (or Refresh) of a marked request from `from` to the raw address
// loc, read against `from` as the browser reads a Location (a hop that cannot be read is
// refused): it returns the refusal's words when it leaves the site of one of the request's
// expectations; otherwise the hop joins each of them (address expected, origin covered).
func (m *navMark) checkHop(from *weburl.URL, loc, kind string) (string, string) {
	to, err := weburl.Resolve(from, loc)
	ok := err == nil && from != nil
	for _, x := range m.xs {
		if !ok || x.leaves(to) {
			shown := "an address that cannot be read"
			if ok {
				shown = shownAddress(to)
			}
			why := fmt.Sprintf("the site answered %s with %s to %s, which would have left the site %s", shownAddress(from), kind, shown, x.site)
			for _, y := range m.xs {
				y.refuse(why)
			}
			return why, x.site
		}
	}
	k := weburl.Key(to)
	for _, x := range m.xs {
		x.g.mu.Lock()
		if len(x.urls) < maxNavURLs {
			x.urls[k] = true
		}
		addOrigin(x.origins, to.Origin())
		if len(x.hops) < maxNavURLs {
			x.hops[k]++
			x.pending++ // until the browser requests it
		}
		x.extendLocked(x.g.clock())
		x.g.mu.Unlock()
	}
	return "", ""
}

// GuardRedirect is the response side, a response tap of the pipeline: a redirect or Refresh of
// a marked request that leaves the site is replaced by the refusal page.
func (h *Hub) GuardRedirect(resp *http.Response) {
	if resp == nil || resp.Request == nil {
		return
	}
	personRedirect(resp) // a redirect of the person's own click (navguard_person.go)
	mark, ok := resp.Request.Context().Value(navMarkKey{}).(*navMark)
	if !ok {
		return
	}
	defer mark.answer() // after a followed hop is counted, so the action's wait does not end between
	from := mark.from   // the browser resolves the Location against what it requested
	var why, site string
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		why, site = mark.checkHop(from, loc, fmt.Sprintf("a redirect (%d)", resp.StatusCode))
		if why == "" && resp.Request.Method != http.MethodGet && (resp.StatusCode == http.StatusTemporaryRedirect || resp.StatusCode == http.StatusPermanentRedirect) {
			mark.carryAllowance(from, loc) // the same submission, sent on (submit.go)
		}
	}
	if ref := httpx.RefreshURL(resp.Header.Get("Refresh")); why == "" && ref != "" {
		why, site = mark.checkHop(from, ref, "a Refresh header")
	}
	if why == "" {
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			mark.loaded(from) // a document (or a frame's) the agent's navigation loaded (navDoc)
		}
		return
	}
	h.log.Info("refused an agent navigation's redirect off the site", "site", site, "from", httpx.RedactURL(resp.Request))
	var body bytes.Buffer
	renderNavRefusal(&body, site, nil, why)
	hdr := httpx.OwnPageHeader(body.Len())
	hdr.Set(httpx.MarkerHeader, "error")
	httpx.ReplaceResponse(resp, http.StatusForbidden, hdr, body.Bytes())
}

// navRuleWriter checks the redirects that a remixlet's network rule answers a marked request
// with (netrules.go writes them itself, without going upstream).
type navRuleWriter struct {
	http.ResponseWriter
	mark     *navMark
	from     *weburl.URL
	replaced bool
}

func (w *navRuleWriter) WriteHeader(code int) {
	if loc := w.Header().Get("Location"); loc != "" && code >= 300 && code <= 399 {
		if why, site := w.mark.checkHop(w.from, loc, "a remixlet's redirect rule"); why != "" {
			w.replaced = true
			for k := range w.Header() {
				w.Header().Del(k)
			}
			writeNavRefusal(w.ResponseWriter, site, nil, why)
			return
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *navRuleWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *navRuleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// shownAddress is an address as the refusal shows it: origin and path, without the query (it
// may carry the data a page wanted sent).
func shownAddress(u *weburl.URL) string {
	if u == nil {
		return ""
	}
	if !u.IsHTTP() {
		return httpx.Clip(u.Scheme(), 40) + ": address"
	}
	p, q, _ := strings.Cut(u.PathQuery(), "?")
	if q != "" {
		p += "?…"
	}
	return httpx.Clip(u.Origin()+p, 300)
}

// originShown is u's origin for a log line; "" for none.
func originShown(u *weburl.URL) string {
	if u == nil {
		return ""
	}
	return u.Origin()
}

// renderNavRefusal writes the refusal page: the project's error page, in the proxy's words.
func renderNavRefusal(w io.Writer, site string, to *weburl.URL, why string) {
	if why == "" {
		why = "the navigation would have left the site " + site + " for " + shownAddress(to)
	}
	err := panel.RenderError(w, panel.ErrorPage{
		Status: http.StatusForbidden,
		Title:  "remixproxy stopped the agent's navigation",
		Lead:   "The AI agent started this navigation, and it would have left " + site + ", the site the agent works on.",
		Reason: why,
		Hint:   "The agent's own navigations stay on the site, so nothing was sent to the other site. Go back to return to the page. To open the other address yourself, type it into the address bar.",
	})
	if err != nil {
		fmt.Fprintf(w, "remixproxy stopped the agent's navigation: %s\n", why)
	}
}

// writeNavRefusal answers a request with the refusal page.
func writeNavRefusal(w http.ResponseWriter, site string, to *weburl.URL, why string) {
	var body bytes.Buffer
	renderNavRefusal(&body, site, to, why)
	w.Header().Set(httpx.MarkerHeader, "error")
	httpx.WriteOwnPage(w, http.StatusForbidden, body.Bytes())
}

// navArmer is an actPage that arms the proxy's check before an action (chatActPage).
type navArmer interface {
	armNavigation(tool string, args json.RawMessage) *navExpect
}

// navigatingTools are the page actions that may start a navigation: page script can navigate
// on any event they cause.
var navigatingTools = map[string]bool{
	"click": true, "set_field": true, "press_keys": true, "select": true, "type": true,
	"hover": true, "scroll": true, "navigate": true, "back": true, "forward": true,
}

// armFor arms the check for tool when page can and the tool may navigate; nil otherwise.
func armFor(pg actPage, tool string, args json.RawMessage) *navExpect {
	a, ok := pg.(navArmer)
	if !ok || !navigatingTools[tool] {
		return nil
	}
	return a.armNavigation(tool, args)
}

// armNavigation arms the check for an action of the chat's agent in its page; navigate's
// target (resolved as the page tool resolves it, page.NavigateTarget) is expected.
func (p chatActPage) armNavigation(tool string, args json.RawMessage) *navExpect {
	var expected []string
	if tool == "navigate" {
		if u, err := page.NavigateTarget(p.sess, args); err == nil {
			expected = append(expected, u.Href())
		}
	}
	c := p.c
	id, pages := p.sess.ID, c.hub.pages
	alive := func() bool { _, ok := pages.Get(id); return ok }
	o := navOwner{owner: c, pageAlive: alive, control: actionShown(tool, args), confirmPost: p.confirmPost}
	return c.hub.nav.armAs(o, tool, p.sess.URL, p.sess.Origin, expected, c.navRefused)
}

// navRefused is told when a hop of one of the chat's actions was refused: the person sees a
// notice, and the turn's stop says why (pageLeftError).
func (c *chat) navRefused(why string) {
	c.mu.Lock()
	c.navStop = navStop{why: why, at: time.Now()}
	c.mu.Unlock()
	// Plain text: the addresses in why are shown, not linked.
	c.put(chatItem{ID: "n" + httpx.RandomID()[:12], Kind: "notice", MD: panel.PlainNodes("remixproxy stopped the agent's navigation: " + why +
		". The agent's own navigations stay on the site, so nothing was sent there; the tab shows the proxy's page. Go back to return to the page.")}, true)
}

// navStop is a chat's last refused navigation.
type navStop struct {
	why string
	at  time.Time
}

// pageLeftError is the error of a turn whose page went: errPageLeft, or, just after the proxy
// refused one of the chat's navigations, one that says so.
func (c *chat) pageLeftError() error {
	c.mu.Lock()
	st := c.navStop
	c.mu.Unlock()
	if st.why != "" && time.Since(st.at) < time.Minute {
		return errors.New("the proxy stopped the agent's navigation because it would have left the site, so the tab shows the proxy's page and the agent stopped. Go back to the page and open the panel to go on")
	}
	return errPageLeft
}

// Documents the agent loaded (issue 11's open hole: a page the agent opened that forwards itself
// off the site later). An action's expectation ends navAfter after its answer, but a document
// its navigation loaded runs on: a <meta refresh> with a delay, a script's location assignment
// or form.submit() after a timer, a Refresh header. Such a navigation is the agent's as much as
// a redirect is, and may carry what the agent put into the address. So when a request paired
// with one of a chat's actions (or with its lease, for a chain) is answered with a document
// (2xx, top level), the chat gets a lease: an expectation with no time window that pairs
// navigations from that document as the action's did, and holds them to the site.
//
// How long. The lease lives while the page session of that document lives, i.e. until the tab
// goes elsewhere or is closed. Which session is the document's is decided by the page token the
// proxy mints for that very response (html.go tells DocumentMinted; docOpened binds the lease to
// the session that token opens, and to its reconnections), not by its address: a popup or a
// second tab of the same address, opened and closed by the page, neither binds nor ends it
// (red-team pass 6a; OPEN-ITEMS 6). A document that never connects (a CSP that forbids the page
// agent, a page that is not HTML) keeps it for navDocLoading after it was answered. A new page
// the person opens ends it: its session is not the lease's. Each document has its lease; a
// frame's document has one too, bound differently (navguard_frames.go).
//
// The person's own clicks. Chromium sends Sec-Fetch-User: ?1 only with a navigation that has
// the person's activation (a real click or key press in the page, or in one of its frames — the
// panel among them — within the last five seconds); the page agent's synthetic events have
// none, nor has a meta refresh or a timer. Activation is not a choice of address, though: a
// page's script may forward on any click. So a lease lets ?1 go only to an address the page
// agent reported the person clicking (navguard_person.go); any other navigation pairs. Plain
// http has no Fetch metadata: there every navigation of the document pairs (fails safe: the
// person's own click off the site is refused, with a page that says to type the address).

const (
	// navDocLoading is how long a lease waits for its document's page agent.
	navDocLoading = navMaxRunning
	// navStopRecent is how long after a refusal a page that went is taken to have gone by it.
	navStopRecent = 15 * time.Second
)

// navDoc is a lease's record of its document. Guarded by navGuard.mu.
type navDoc struct {
	// token names the page token the proxy minted for the document (page.TokenID), "" until
	// it is minted (none for a frame, or a document the page agent does not go into): only the
	// session opened with that token binds the lease (docOpened), not another page of the same
	// address (a popup, a frame).
	token   string
	session string      // the page session of the document, "" until it connects
	alive   func() bool // whether that session is still connected
	loaded  time.Time   // when the document was answered
	// frame is true for a frame's document (navguard_frames.go): it has no page session of
	// its own, and lives while within reports the page it was loaded in lives.
	frame  bool
	within func(now time.Time) bool
	// bound is when a frame lease ends however often the page loads frames: navFrameLeaseMax
	// after the last of the agent's actions that loaded one (navguard_frames.go).
	bound time.Time
}

func (d *navDoc) liveLocked(now time.Time) bool {
	if d.session != "" {
		return d.alive != nil && d.alive()
	}
	if now.Sub(d.loaded) >= navDocLoading || !d.bound.IsZero() && !now.Before(d.bound) {
		return false
	}
	return d.within == nil || d.within(now)
}

// loaded gives the chats of a marked request, answered with a document from `from`, a lease on
// it (a frame's document too: navguard_frames.go).
func (m *navMark) loaded(from *weburl.URL) {
	if from == nil {
		return
	}
	for _, x := range m.xs {
		if x.owner != nil {
			m.leases = append(m.leases, x.g.lease(x, from, !m.top))
		}
	}
}

// lease starts a lease of x's owner on the document at u, which x's navigation loaded; frame
// is true when it is a frame's document.
func (g *navGuard) lease(x *navExpect, u *weburl.URL, frame bool) *navExpect {
	now := g.clock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.xs == nil {
		g.xs = map[uint64]*navExpect{}
	}
	g.pruneLocked(now)
	if frame {
		if l := g.frameLeaseLocked(x.owner); l != nil {
			addOrigin(l.origins, u.Origin())
			addOrigin(l.frameOrigins, u.Origin())
			if x.doc == nil { // the agent's action loaded it: the bound starts again
				l.doc.bound = now.Add(navFrameLeaseMax)
			}
			l.doc.loaded, l.doc.within = now, g.frameWithin(x)
			return l
		}
	}
	g.dropOwnersOldestLeaseLocked(x.owner)
	if len(g.xs) >= maxNavExpects {
		g.dropOldestLocked()
	}
	g.next++
	l := &navExpect{g: g, id: g.next, tool: "the page it opened", site: x.site, home: x.home, onRefuse: x.onRefuse,
		owner: x.owner, confirmPost: x.confirmPost, control: "the page it opened",
		origins: map[string]bool{u.Origin(): true}, frameOrigins: map[string]bool{}, urls: map[string]bool{}, hops: map[string]int{}, started: now,
		doc: &navDoc{loaded: now, frame: frame}}
	if frame {
		l.frameOrigins[u.Origin()] = true
		l.doc.within = g.frameWithin(x)
		l.doc.bound = now.Add(navFrameLeaseMax)
	}
	g.xs[l.id] = l
	g.storeLiveLocked()
	return l
}

// dropOwnersOldestLeaseLocked keeps a chat's document leases under maxLeasesPerChat, so that a
// page the agent loaded that loads page after page of its site (each a lease) cannot fill the
// table and push other chats' expectations out. It drops the chat's oldest lease whose document
// has not connected; only when every one has, the oldest (a document that is open keeps its
// lease longest).
func (g *navGuard) dropOwnersOldestLeaseLocked(owner any) {
	var oldest, oldestUnbound *navExpect
	n := 0
	for _, o := range g.xs {
		if o.doc == nil || o.doc.frame || o.owner != owner {
			continue
		}
		n++
		if oldest == nil || o.id < oldest.id {
			oldest = o
		}
		if o.doc.session == "" && (oldestUnbound == nil || o.id < oldestUnbound.id) {
			oldestUnbound = o
		}
	}
	if n < maxLeasesPerChat {
		return
	}
	if oldestUnbound != nil {
		oldest = oldestUnbound
	}
	delete(g.xs, oldest.id)
}

// DocumentMinted is told of the page token the proxy mints for the document a request's answer
// brings (html.go, with the request's context): a lease that answer started is bound to the
// session that token opens, and to no other (docOpened).
func (h *Hub) DocumentMinted(ctx context.Context, token string) {
	mark, ok := ctx.Value(navMarkKey{}).(*navMark)
	if !ok || !mark.top || len(mark.leases) == 0 {
		return
	}
	id := page.TokenID(token)
	h.nav.mu.Lock()
	defer h.nav.mu.Unlock()
	for _, l := range mark.leases {
		l.doc.token = id
	}
}

// docOpened binds the lease of the document whose page token is tokenID to the page session
// sessionID opened with it, whose liveness alive reports (chat/follow.go: every page agent that
// connects). A session of the same token that reconnects (the back/forward cache, a dropped
// socket) is the same document: the lease follows it.
func (g *navGuard) docOpened(tokenID, sessionID string, alive func() bool) {
	if g.live.Load() == 0 || tokenID == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, x := range g.xs {
		if x.doc != nil && x.doc.token == tokenID {
			x.doc.session, x.doc.alive = sessionID, alive
		}
	}
}

// runningOfLocked returns the live action expectations of the owners of xs that are not in xs:
// a call of that chat in progress learns of a refusal of its lease.
func (g *navGuard) runningOfLocked(xs []*navExpect) []*navExpect {
	var out []*navExpect
	for _, o := range g.xs {
		if o.doc != nil || o.owner == nil {
			continue
		}
		for _, x := range xs {
			if x.doc != nil && x.owner == o.owner && o != x {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

// stopLocked records the last refusal of owner's navigations.
func (g *navGuard) stopLocked(owner any, why string) {
	if owner == nil {
		return
	}
	if g.stops == nil {
		g.stops = map[any]navStop{}
	}
	if len(g.stops) >= maxNavExpects {
		for k, st := range g.stops {
			if g.clock().Sub(st.at) > time.Minute {
				delete(g.stops, k)
			}
		}
	}
	g.stops[owner] = navStop{why: why, at: g.clock()}
}

// stopFor is owner's refusal of the last moments (navStopRecent), "" when none: a call whose page went away
// says the proxy stopped its navigation rather than "the page went away".
func (g *navGuard) stopFor(owner any) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	st, ok := g.stops[owner]
	if !ok || g.clock().Sub(st.at) > navStopRecent {
		return ""
	}
	return st.why
}

// deniedPost is the submissions the person refused, in the proxy's words; "" when none.
func (x *navExpect) deniedPost() string {
	if x == nil {
		return ""
	}
	x.g.mu.Lock()
	defer x.g.mu.Unlock()
	return strings.Join(x.denied, "; ")
}

// navStopOf is the recent refusal of the chat whose page pg is, "" when none.
func navStopOf(pg actPage) string {
	p, ok := pg.(chatActPage)
	if !ok {
		return ""
	}
	return p.c.hub.nav.stopFor(p.c)
}
