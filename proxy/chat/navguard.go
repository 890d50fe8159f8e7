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
// from then until navAfter after the action's answer (its watch for the page going included).
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
// pairs: a navigation the person starts is never affected. A navigation the person starts by
// clicking in a page of the same origin during an armed window (this tab or another) pairs, and
// so does one of a second tab of the same origin; both fail safe: such a navigation is held to
// the site for a few seconds, which is what the agent's would be, and the refusal page says why.
//
// The check (navExpect.leaves): every address — the request the browser sent, a Location or
// Refresh URL resolved against it, the Referer — is read as the browser reads it
// (internal/weburl: WHATWG URL, IDNA/UTS-46), and a hop leaves the site when it is not http or
// https, carries a user name, or its registrable domain (weburl.Site, as http_request and
// open_page decide the site) is not the chat page's. A top-level
// request that leaves the site is answered by the proxy's refusal page without going upstream
// (a click whose page script navigates off the site directly); a frame's first hop to another
// site is the page's own widget loading (payment, sign-in) and is left alone, but a frame's
// request on the site is marked like a top-level one, so its redirects off the site are held. A marked request's redirect (3xx with a
// Location, or a Refresh header) that leaves the site is replaced by the refusal page; one that
// stays is followed by the browser as a new request, which pairs by its address and Referer
// and is checked in turn, and its origin joins the expectation's (so the next page's own
// navigations within the window are held too). A redirect written by a remixlet's network rule
// is checked the same way. The chat's tool result says the navigation was stopped, and the chat
// shows a notice.

const (
	// navAfter is how long after an action's answer (and after each hop) its expectation
	// still pairs navigations.
	navAfter = 3 * time.Second
	// navMaxRunning bounds how long an action may hold its expectation armed.
	navMaxRunning = 2 * time.Minute
	// maxNavExpects bounds the expectations armed at once; past it the oldest is dropped only
	// when it has expired, else arming fails safe by pairing with it anyway (see arm).
	maxNavExpects = 256
	// maxNavURLs bounds the addresses one expectation remembers.
	maxNavURLs = 64
)

// navGuard is a chat hub's table of armed expectations (chatHub.nav).
type navGuard struct {
	live atomic.Int32 // len(xs), read without the lock on every request
	mu   sync.Mutex
	next uint64
	xs   map[uint64]*navExpect
	now  func() time.Time // nil: time.Now
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
	origins  map[string]bool
	urls     map[string]bool // expected addresses: navigate's target, a followed link, hops
	hops     map[string]int  // hops followed and not yet requested, by address
	running  bool            // the action has not answered yet
	until    time.Time       // when running is false: the end of the window
	started  time.Time
	pending  int      // marked requests not yet answered, and hops followed but not yet requested
	paired   int      // requests paired in all
	refusals []string // what was stopped, in the proxy's words
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
	site := "" // a page whose address cannot be read has no site: every hop leaves
	if u, err := weburl.Parse(pageURL); err == nil && u.IsHTTP() {
		site = u.Site()
	}
	now := g.clock()
	x := &navExpect{g: g, tool: tool, site: site, home: pageOrigin, onRefuse: onRefuse,
		origins: map[string]bool{pageOrigin: true}, urls: map[string]bool{}, hops: map[string]int{}, running: true, started: now}
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
		// Every one is live: drop the oldest rather than refuse to arm (the newest action
		// must be guarded; the oldest is the likeliest to be over).
		var oldest *navExpect
		for _, o := range g.xs {
			if oldest == nil || o.id < oldest.id {
				oldest = o
			}
		}
		delete(g.xs, oldest.id)
	}
	g.next++
	x.id = g.next
	g.xs[x.id] = x
	g.live.Store(int32(len(g.xs)))
	return x
}

// pruneLocked drops expectations whose window has ended.
func (g *navGuard) pruneLocked(now time.Time) {
	for id, x := range g.xs {
		if !x.liveLocked(now) {
			delete(g.xs, id)
		}
	}
	g.live.Store(int32(len(g.xs)))
}

func (x *navExpect) liveLocked(now time.Time) bool {
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

// settle ends the action's own run: the window closes navAfter from now (or from its last hop).
// Nil-safe.
func (x *navExpect) settle() {
	if x == nil {
		return
	}
	x.g.mu.Lock()
	defer x.g.mu.Unlock()
	x.running = false
	if end := x.g.clock().Add(navAfter); end.After(x.until) {
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
	for {
		x.g.mu.Lock()
		busy := x.pending > 0 && len(x.refusals) == 0
		x.g.mu.Unlock()
		if !busy {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}

// waitStart waits, up to max, for the action's first navigation request (or a refusal).
func (x *navExpect) waitStart(ctx context.Context, max time.Duration) {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		x.g.mu.Lock()
		started := x.paired > 0 || len(x.refusals) > 0
		x.g.mu.Unlock()
		if started {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
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
}

// navigationKind reports whether r is a navigation of a top-level document or of a frame: by its
// Fetch metadata, or, without any (plain http), by the headers browsers send only with
// navigations (counted as top-level: the two cannot be told apart there).
func navigationKind(r *http.Request) (top, frame bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return false, false
	}
	dest, mode := r.Header.Get("Sec-Fetch-Dest"), r.Header.Get("Sec-Fetch-Mode")
	if dest != "" || mode != "" {
		if mode != "" && mode != "navigate" {
			return false, false
		}
		return dest == "document", dest == "iframe" || dest == "frame"
	}
	return r.Header.Get("Upgrade-Insecure-Requests") == "1" || strings.HasPrefix(strings.TrimSpace(r.Header.Get("Accept")), "text/html"), false
}

// pairs reports whether nr may be a navigation of the action x (see the top of the file).
// Called with g.mu held.
func (x *navExpect) pairs(nr navRequest) bool {
	if nr.fetchSite == "none" {
		return false // the person's own: address bar, bookmark, the browser's UI
	}
	if x.urls[nr.key] {
		return true
	}
	if nr.referer != "" {
		return x.origins[nr.referer]
	}
	switch nr.fetchSite {
	case "same-origin":
		return x.origins[nr.origin]
	case "same-site":
		return !x.leaves(nr.url)
	default: // cross-site, or no Fetch metadata: the initiator is unknown
		return true
	}
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
	answered atomic.Bool
}

// readNavRequest builds what pairing needs from an incoming request, read as the browser sent
// it. A Referer that does not parse counts as none (pairing then falls back to Sec-Fetch-Site).
func readNavRequest(r *http.Request) navRequest {
	nr := navRequest{fetchSite: r.Header.Get("Sec-Fetch-Site")}
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
	top, frame := navigationKind(r)
	if !top && !frame {
		return r, w, nothing, false
	}
	nr := readNavRequest(r)
	g := &h.nav
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
		if x.leaves(nr.url) {
			if frame {
				continue // a frame loading another site (a payment widget, a sign-in): its own load
			}
			off = append(off, x)
			x.paired++
			continue
		}
		xs = append(xs, x)
		x.origins[nr.origin] = true
		x.pending++
		x.paired++
		if !x.running {
			if end := now.Add(navAfter); end.After(x.until) {
				x.until = end
			}
		}
	}
	g.mu.Unlock()
	if len(off) > 0 {
		why := fmt.Sprintf("the navigation would have left the site %s for %s", off[0].site, shownAddress(nr.url))
		for _, x := range off {
			x.refuse(why)
		}
		for _, x := range xs {
			x.refuse(why)
			x.done()
		}
		h.log.Info("refused an agent navigation off the site", "site", off[0].site, "to", originShown(nr.url))
		writeNavRefusal(w, off[0].site, nr.url, "")
		return r, w, nothing, true
	}
	if len(xs) == 0 {
		return r, w, nothing, false
	}
	mark := &navMark{xs: xs, from: nr.url}
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
		x.origins[to.Origin()] = true
		if len(x.hops) < maxNavURLs {
			x.hops[k]++
			x.pending++ // until the browser requests it
		}
		if end := x.g.clock().Add(navAfter); end.After(x.until) {
			x.until = end
		}
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
	mark, ok := resp.Request.Context().Value(navMarkKey{}).(*navMark)
	if !ok {
		return
	}
	defer mark.answer() // after a followed hop is counted, so the action's wait does not end between
	from := mark.from   // the browser resolves the Location against what it requested
	var why, site string
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		why, site = mark.checkHop(from, loc, fmt.Sprintf("a redirect (%d)", resp.StatusCode))
	}
	if ref := httpx.RefreshURL(resp.Header.Get("Refresh")); why == "" && ref != "" {
		why, site = mark.checkHop(from, ref, "a Refresh header")
	}
	if why == "" {
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
	return c.hub.nav.arm(tool, p.sess.URL, p.sess.Origin, expected, c.navRefused)
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
