package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// What the page's own script sends while the agent acts (red-team pass 6e; OPEN-ITEMS 19;
// DESIGN invariant 11). The probe (submit.go) reads the page's facts about what an action would
// activate, and the navigation guard holds a form the action submits as a navigation. But a
// site's features post by script: a "Send" that is a div with a fetch, a link with an XHR
// handler, sendBeacon, Enter in a field or a combobox, a form whose submit handler posts with
// fetch, a change handler. None of that is a navigation, and none of it need carry a word the
// probe knows. What every such path has in common is a request with a method that changes
// something, which passes through the proxy while the action runs. So that is where it is held.
//
// The rule (GuardSend, called for every proxied request that is not a navigation): while one of
// a chat's actions runs and for sendAfter after its answer (the action's expectation, armed in
// navguard.go before the page call; sendAfter is longer than the navigations' navAfter, since a
// site's "Send" may wait out an undo window first), a request with a method other than GET, HEAD
// or OPTIONS, to the chat page's site (registrable domain), sent by a page of that site, waits
// for the person's card — unless "Act may submit forms" is on (confirmPost answers at once), or
// the person already allowed it: the probe's card allowed the action itself (sendHold.all), or a
// card allowed this request (the same method and address without its query; another request
// gets its own card). Each chat's newest action decides; its card says "during or after" it,
// since which action caused a request cannot be known. While a card waits, the other requests
// wait for its decision; after "Not now" the same request (method and address without query)
// is refused without another card, and another request gets its own. Allow → the request goes
// upstream. Not now, the card going (the page left, the turn stopped) or sendHoldMax passing →
// the proxy answers 403 in the site's place for the requests that waited on the card, nothing
// goes upstream, and the action's tool result says so (finish, deniedPost) when its call still
// runs. A withdrawn card also takes the action out of the guard: no one is there to decide, and
// refusing the rest of its window refused the person's own requests with no card. The window is
// a hard sendAfter from the action's answer: the page's own navigations do not extend it (and
// extend the navigations' window only up to that same bound, extendLocked).
//
// Who sent it. HTTP carries no tab: the proxy sees the request's Origin header (Chromium sends
// it with every request whose method is not GET or HEAD; "null" under a no-referrer policy),
// its Referer, and Sec-Fetch-Site — all set by the browser, none by the page's script. The
// initiator is the Origin, else the Referer's origin; it pairs when it is of the chat page's
// site (the page itself, the origins the action's navigations reached, or a sibling host's
// widget framed in the page that the click messages). With neither (a no-referrer policy),
// Sec-Fetch-Site decides as for navigations: same-origin with an origin the action covers,
// same-site, or cross-site/absent (unknown: counted as the action's); "none" (the browser's
// own) never. A request that comes after the action's call answered (an undo window) is held
// and carded all the same, but no tool result carries the decision to the model.
//
// Limits, all failing safe: a second tab of the site and the page's own timers (autosave, an
// analytics beacon to the site) during the window are held like the agent's — the card names
// the action, and Not now only costs the page that request. The person's own "Send" goes
// uncarded when it closely follows their trusted click on a control or Enter in the page that
// sends it (its Referer), after the action's call answered (sendguard_person.go); their sends the
// page agent cannot tie to such input (from a frame, an undo window later, a select's change, a
// draft saved as they type) still ask on a card.
//
// Requests to another registrable domain are held only when an origin the action covers sends
// them as CORS requests with the person's credentials there (a cookie or an Authorization
// header: a site's API on another domain); the card names that domain. Not held: other sites'
// no-cors beacons and requests without credentials (analytics), a third-party widget's own
// requests (its frame's origin), messages on a WebSocket (the proxy passes frames through; the
// card says so, the log notes a socket used in the window, and the chat tells the person how
// many messages the page sent: sendguard_socket.go), a GET that changes something without
// saying so (the probe's names still catch a control called delete; a GET that names another
// method in a method-override header or a _method query is held as that method, sendMethod),
// and anything the page sends after the window (a timer longer than sendAfter: the page acting
// by itself, as it could without the agent). A page the agent loaded (a lease) is not held for
// its lifetime: its autosave and the person's own use of it would each need a card.
//
// A synchronous XHR blocks the page's thread while its request waits. The panel and the
// confirmation window are other documents (remix.proxy, another renderer); in tests, though,
// DevTools' input to the tab waits for the blocked page, so whether a person's click reaches
// the card then was not shown here. sendHoldMax ends the wait, refused, in any case.

const (
	// sendHoldMax bounds how long a request waits for the person's decision: past it the
	// request is refused and the card withdrawn, so no fetch (or synchronous XHR) of the page
	// waits for long.
	sendHoldMax = 2 * time.Minute
	// sendAfter is how long after an action's answer the page's requests are still held: a
	// site's "Send" often waits out an undo window of a few seconds (webmail's "Undo send")
	// before it posts, longer than navAfter, the window of the action's navigations.
	sendAfter = 30 * time.Second
)

// sendHold is an action's record of the decisions about its requests. Guarded by navGuard.mu.
type sendHold struct {
	all     bool              // the person allowed the action itself (the probe's card): its requests go
	allowed map[string]bool   // requests the person allowed on a card, by key (method and address without query)
	refused map[string]string // requests the person refused on a card ("Not now"), by key: the refusal's words
	gone    bool              // a card of the action was withdrawn: it left the send guard (dropSendLocked)
	card    *sendCard         // the pending card; nil when none is pending
	socket  socketCount       // the messages pages sent on WebSockets in its window (sendguard_socket.go)
}

// sendCard is one card of the send guard, which the requests that come while it shows wait on.
type sendCard struct {
	decided chan struct{} // closed when the card is decided
	refused string        // set before decided closes when the card refused: its waiters are refused too
}

// sendActs are a navGuard's recent actions, for the send guard: an action's expectation leaves
// navGuard.xs navAfter after its answer, its requests are held for sendAfter. Guarded by
// navGuard.mu but live.
type sendActs struct {
	live  atomic.Int32  // len(xs), read without the lock on every request
	armed atomic.Uint64 // actions added (noteSendLocked): a WebSocket's watch pairs again when it moves
	xs    []*navExpect
	// late are refusals, by chat (owner), of requests that came after the action's call had
	// answered (an undo window): the chat's next page tool says so (lateSends).
	late      map[any][]string
	lateOrder []any // the owners in late, oldest first
	// inputs are the recent reports of the person's own input (sendguard_person.go): a request
	// that follows one closely goes as the person's.
	inputs []personInput
}

// noteLateLocked keeps a refusal for owner's next page tool. Bounded: past maxNavExpects chats
// the oldest chat's notes go, not every chat's (a chat would lose its "held back" note to
// others filling the map).
func (a *sendActs) noteLateLocked(owner any, why string) {
	if owner == nil {
		return
	}
	if a.late == nil {
		a.late = map[any][]string{}
	}
	if _, ok := a.late[owner]; !ok {
		if len(a.late) >= maxNavExpects && len(a.lateOrder) > 0 {
			a.dropLateLocked(a.lateOrder[0])
		}
		a.lateOrder = append(a.lateOrder, owner)
	}
	if len(a.late[owner]) < 4 {
		a.late[owner] = append(a.late[owner], why)
	}
}

// dropLateLocked forgets owner's notes (told, or the oldest evicted).
func (a *sendActs) dropLateLocked(owner any) {
	delete(a.late, owner)
	for i, o := range a.lateOrder {
		if o == owner {
			a.lateOrder = append(a.lateOrder[:i], a.lateOrder[i+1:]...)
			break
		}
	}
}

// lateSends adds to the answer (or the tool error) of the chat's next page tool, as the model
// gets it (chatEnv.PageTool, around the searches' inner calls), the requests the proxy refused
// after an earlier action's call had answered, once: the model would otherwise take that
// action as done. An answer that is not a JSON object (none is) keeps the note for later.
func lateSends(c *chat, out json.RawMessage, err error) (json.RawMessage, error) {
	var te *agent.ToolError
	if err != nil && !errors.As(err, &te) {
		return out, err
	}
	g := &c.hub.nav
	g.mu.Lock()
	defer g.mu.Unlock()
	notes := g.sends.late[c]
	if len(notes) == 0 {
		return out, err
	}
	note := "after an earlier action the proxy held back what the page then sent: " + strings.Join(notes, "; ") +
		". Nothing of it was sent; do not try another way to send it, and do not tell the person it was done."
	if te != nil {
		g.sends.dropLateLocked(c)
		return out, &agent.ToolError{Message: te.Message + ". Also, " + note}
	}
	with := withField(out, "heldBack", note)
	if !bytes.Equal(with, out) {
		g.sends.dropLateLocked(c)
	}
	return with, nil
}

// noteSendLocked adds a newly armed action (navGuard.armAs) to the send guard's list, dropping
// the actions whose window is over (and, past maxNavExpects, the oldest: each chat's newest
// action is the one that decides).
func (g *navGuard) noteSendLocked(x *navExpect, now time.Time) {
	g.pruneSendsLocked(now)
	if len(g.sends.xs) >= maxNavExpects {
		g.sends.xs = append(g.sends.xs[:0], g.sends.xs[1:]...)
	}
	g.sends.xs = append(g.sends.xs, x)
	g.sends.live.Store(int32(len(g.sends.xs)))
	g.sends.armed.Add(1)
}

// pruneSendsLocked drops the actions whose window is over.
func (g *navGuard) pruneSendsLocked(now time.Time) {
	kept := g.sends.xs[:0]
	for _, o := range g.sends.xs {
		if o.sendLiveLocked(now) {
			kept = append(kept, o)
		}
	}
	clear(g.sends.xs[len(kept):])
	g.sends.xs = kept
	g.sends.live.Store(int32(len(kept)))
}

// dropSendLocked takes x out of the send guard: its card was withdrawn (the turn stopped, the
// page left, sendHoldMax passed), so no one is there to decide its requests. Refusing them all
// for the rest of its window instead refused the person's own requests on the next page with a
// 403 and no card.
func (g *navGuard) dropSendLocked(x *navExpect) {
	x.sends.gone = true
	kept := g.sends.xs[:0]
	for _, o := range g.sends.xs {
		if o != x {
			kept = append(kept, o)
		}
	}
	clear(g.sends.xs[len(kept):])
	g.sends.xs = kept
	g.sends.live.Store(int32(len(kept)))
}

// sendLiveLocked reports whether the page's requests are still held for the action x. After the
// answer the window is a hard sendAfter from it: the page's own navigations that pair with the
// action move its navigation window (until) on, but must not keep its requests held.
func (x *navExpect) sendLiveLocked(now time.Time) bool {
	if x.running {
		return now.Sub(x.started) < navMaxRunning
	}
	if !x.answered.IsZero() {
		return now.Before(x.answered.Add(sendAfter))
	}
	return now.Before(x.until.Add(sendAfter - navWindow)) // until is navWindow after the answer
}

// allowSends lets the action's requests go without a card: the person allowed the action on
// the probe's card (act.go). Nil-safe.
func (x *navExpect) allowSends() {
	if x == nil {
		return
	}
	x.g.mu.Lock()
	x.sends.all = true
	x.g.mu.Unlock()
}

// nameControl names the action on the cards by the control the probe found (a click whose
// target the proxy resolved to a ref is otherwise shown by that ref). Nil-safe; called before
// the action is sent, so before any request can pair with it.
func (x *navExpect) nameControl(control string) {
	if x == nil || control == "" {
		return
	}
	x.g.mu.Lock()
	x.control = control
	x.g.mu.Unlock()
}

// safeMethod reports whether a request with method changes nothing by the HTTP rules.
func safeMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return false
}

// methodOverrides are the headers web frameworks read as the request's real method (Rails and
// Rack, Laravel/Symfony, ASP.NET, Express's method-override, Google's APIs).
var methodOverrides = []string{"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"}

// sendMethod is the method r asks the site for: a GET, HEAD or OPTIONS that names a method which
// changes something in a method-override header or a _method query parameter is taken as that
// method (OPEN-ITEMS 19: a page's script "GET /api/thread/1" with X-HTTP-Method-Override: DELETE
// deletes on a site that honours it). Another request's method is its own.
func sendMethod(r *http.Request) string {
	if !safeMethod(r.Method) {
		return r.Method
	}
	named := func(v string) (string, bool) {
		m := strings.ToUpper(strings.TrimSpace(v))
		return m, m != "" && !safeMethod(m)
	}
	for _, h := range methodOverrides {
		for _, v := range r.Header.Values(h) {
			if m, ok := named(v); ok {
				return m
			}
		}
	}
	// The name as frameworks read it, percent-decoded: a query without "_method" spelt out or
	// any escape cannot name it (a parse only then).
	if r.URL != nil && (strings.Contains(r.URL.RawQuery, "_method") || strings.Contains(r.URL.RawQuery, "%")) {
		for _, v := range r.URL.Query()["_method"] {
			if m, ok := named(v); ok {
				return m
			}
		}
	}
	return r.Method
}

// sendRequest is what the send guard reads from a request.
type sendRequest struct {
	url       *weburl.URL // nil when it cannot be read
	initiator string      // the origin that sent it (Origin, else Referer); "" when unknown
	referer   string      // the weburl.Key of its Referer: the page that sent it; "" when none
	// bare is a Referer of the initiator's origin alone plus "/" (what the default policy
	// sends cross-origin); sole is then the origin's only live page session, when it has one
	// (set on the held path only: Hub.personSend).
	bare      bool
	sole      string
	fetchSite string
	method    string
	// credentialed is a CORS request carrying the person's credentials for its destination (a
	// cookie, or an Authorization header): to another site, it acts as the person there.
	credentialed bool
}

// key is what a card's Allow covers: the method and the address without its query (a site's
// request to the same endpoint with a new timestamp is the same request to the person).
func (sr sendRequest) key() string {
	p, _, _ := strings.Cut(sr.url.PathQuery(), "?")
	return sr.method + " " + sr.url.Origin() + p
}

func readSendRequest(r *http.Request) sendRequest {
	sr := sendRequest{fetchSite: r.Header.Get("Sec-Fetch-Site"), method: sendMethod(r),
		credentialed: r.Header.Get("Sec-Fetch-Mode") == "cors" && (r.Header.Get("Cookie") != "" || r.Header.Get("Authorization") != "")}
	if u, err := httpx.RequestedAddress(r); err == nil {
		sr.url = u
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		if ou, err := weburl.Parse(o); err == nil && ou.IsHTTP() {
			sr.initiator = ou.Origin()
		}
	}
	if ru, err := weburl.Parse(r.Header.Get("Referer")); err == nil && ru.IsHTTP() {
		sr.referer = weburl.Key(ru)
		if sr.initiator == "" {
			sr.initiator = ru.Origin()
		}
		sr.bare = r.Header.Get("Referer") == sr.initiator+"/"
	}
	return sr
}

// sendPairs reports whether sr may be a request that the action x made the page send (see the
// top of the file). Called with g.mu held.
func (x *navExpect) sendPairs(sr sendRequest) bool {
	if sr.url == nil {
		return false
	}
	if x.leaves(sr.url) {
		// Another site's (OPEN-ITEMS 19): held only when an origin the action covers sends it
		// as a CORS request with the person's credentials there (a site's API on another
		// domain). Analytics beacons (no-cors, or no credentials) and other origins' requests
		// (a third-party widget's frame) go.
		return sr.credentialed && sr.initiator != "" && x.hasOriginLocked(x.origins, sr.initiator)
	}
	if sr.initiator != "" {
		// An origin the action reached, or another of the site's own (a comments widget on a
		// sibling host, framed in the page, that the action's click messages).
		if x.hasOriginLocked(x.origins, sr.initiator) {
			return true
		}
		iu, err := weburl.Parse(sr.initiator)
		return err == nil && !x.leaves(iu)
	}
	switch sr.fetchSite {
	case "none":
		return false
	case "same-origin":
		return x.hasOriginLocked(x.origins, sr.url.Origin())
	default: // same-site (the destination is on the site), cross-site or absent: unknown
		return true
	}
}

// actionsSendingLocked returns the recent actions (sendActs: not leases) that sr pairs with and
// that have a way to ask the person: of each chat, its newest action only. A chat's actions
// follow each other, and the window of one runs on for sendAfter after its answer: a request
// then is decided (and reported) by the newest, not refused by the decision about the action
// before. The card says "during or after", since which of them caused it cannot be known.
func (g *navGuard) actionsSendingLocked(sr sendRequest, now time.Time) []*navExpect {
	newest := map[any]*navExpect{}
	var xs []*navExpect
	for _, x := range g.sends.xs {
		if x.doc != nil || x.confirmPost == nil || !x.sendLiveLocked(now) || !x.sendPairs(sr) {
			continue
		}
		if x.owner == nil {
			xs = append(xs, x)
		} else if o := newest[x.owner]; o == nil || x.id > o.id {
			newest[x.owner] = x
		}
	}
	for _, x := range newest {
		xs = append(xs, x)
	}
	return xs
}

// GuardSend is the pipeline's hold on requests the page's script sends while an action of the
// agent runs (see the top of the file), called for every proxied request after GuardNavigation.
// It returns true when it answered the request itself (refused; nothing went upstream).
func (h *Hub) GuardSend(w http.ResponseWriter, r *http.Request) bool {
	if h.nav.sends.live.Load() == 0 || safeMethod(sendMethod(r)) {
		return false // nothing is held, or the request changes nothing (a GET not overridden)
	}
	if top, frame := httpx.NavigationKind(r); top || frame {
		return false // a navigation: GuardNavigation held it already (holdAgentPost)
	}
	sr := readSendRequest(r)
	g := &h.nav
	now := g.clock()
	g.mu.Lock()
	g.pruneSendsLocked(now)
	xs := g.actionsSendingLocked(sr, now)
	g.mu.Unlock()
	if len(xs) == 0 || h.personSend(r.Context(), sr, now) {
		return false // nothing holds it, or it follows the person's own input (sendguard_person.go)
	}
	if h.cfg.RefusedAnyway != nil && h.cfg.RefusedAnyway(w, r) {
		return true // answered with a later stage's refusal: no card for it (Config.RefusedAnyway)
	}
	why, site := holdSend(r.Context(), sr, xs)
	if why == "" {
		return false
	}
	h.log.Info("refused a request the page sent during an agent action", "site", site, "to", originShown(sr.url))
	w.Header().Set(httpx.MarkerHeader, "error")
	httpx.SetType(w.Header(), "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "remixproxy held back a request this page sent during or just after an action of the AI agent: %s.\n", why)
	return true
}

// holdSend waits for the person's decision on the actions xs that sr pairs with; it returns the
// refusal's words and the site when the request must not go.
func holdSend(ctx context.Context, sr sendRequest, xs []*navExpect) (why, site string) {
	g := xs[0].g
	g.mu.Lock()
	for _, x := range xs {
		x.holding++ // the action's tool result waits for the decision (waitOutcome)
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		for _, x := range xs {
			x.holding--
		}
		g.mu.Unlock()
	}()
	for _, x := range xs {
		if why := x.decideSend(ctx, sr); why != "" {
			return why, x.site
		}
	}
	return "", ""
}

// decideSend is x's decision on sr: "" to let it go, else the refusal's words. The first request
// that needs one shows the card; the others wait for its decision. A card refused ("Not now")
// or withdrawn refuses the requests that waited on it; after "Not now" the same request (key)
// is refused without another card, another one gets its own card; after a withdrawn card the
// action is out of the guard (dropSendLocked) and its later requests go.
func (x *navExpect) decideSend(ctx context.Context, sr sendRequest) string {
	g := x.g
	k := sr.key()
	for {
		g.mu.Lock()
		switch {
		case x.sends.all || x.sends.allowed[k] || x.sends.gone:
			g.mu.Unlock()
			return ""
		case x.sends.refused[k] != "":
			why := x.sends.refused[k]
			g.mu.Unlock()
			return why
		case x.sends.card != nil:
			card := x.sends.card
			g.mu.Unlock()
			select {
			case <-card.decided:
				if card.refused != "" {
					return card.refused
				}
				continue
			case <-ctx.Done():
				return "the page gave up the request while the person decided"
			}
		}
		card := &sendCard{decided: make(chan struct{})}
		x.sends.card = card
		g.mu.Unlock()

		// The card's life is the action's, not this request's: requests after it wait for it.
		cctx, cancel := context.WithTimeout(context.Background(), sendHoldMax)
		site := x.site
		if x.leaves(sr.url) {
			site = weburl.Site(sr.url.HostKey()) // the card says where it acts as the person
		}
		allow, err := x.confirmPost(cctx, postAsk{method: sr.method, to: sr.url, site: site, control: x.control, script: true})
		cancel()
		sent := "the page's script sent a request (" + strings.ToUpper(sr.method) + " " + shownAddress(sr.url) + ") during or after the " + x.control
		g.mu.Lock()
		x.sends.card = nil
		switch {
		case err == nil && allow:
			if x.sends.allowed == nil {
				x.sends.allowed = map[string]bool{}
			}
			if len(x.sends.allowed) < maxNavURLs {
				x.sends.allowed[k] = true
			}
		case err != nil:
			card.refused = sent + " and the person did not decide (the card was withdrawn: the page left, the turn stopped, or two minutes passed), so it was not sent"
			g.dropSendLocked(x)
		default:
			card.refused = sent + " and the person chose “Not now”, so it was not sent"
			if x.sends.refused == nil {
				x.sends.refused = map[string]string{}
			}
			if len(x.sends.refused) < maxNavURLs { // past it, the same request asks again
				x.sends.refused[k] = card.refused
			}
		}
		if d := card.refused; d != "" {
			if !x.running {
				g.sends.noteLateLocked(x.owner, d) // its call has answered (finish): no result carries it
			} else if len(x.denied) < 4 {
				x.denied = append(x.denied, d)
			}
		}
		close(card.decided)
		g.mu.Unlock()
		if card.refused != "" {
			return card.refused
		}
	}
}
