package chat

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

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
// a chat's actions is armed (navguard.go's expectation: from before the page call until navAfter
// after its answer, the same window that pairs its navigations), a request with a method other
// than GET, HEAD or OPTIONS, to the chat page's site (registrable domain), sent by a page of an
// origin the action covers, waits for the person's card — unless "Act may submit forms" is on
// (confirmPost answers at once), or the person already allowed this action on a card (the
// probe's, or this one's: sendHold.allowed). One card per action: every request of the action
// that arrives while it waits waits for the same decision; after "Not now" the action's later
// requests are refused without another card. Allow → they go upstream. Not now, the card going
// (the page left, the turn stopped) or sendHoldMax passing → the proxy answers 403 in the site's
// place, nothing goes upstream, and the action's tool result says so (finish, deniedPost).
//
// Who sent it. HTTP carries no tab: the proxy sees the request's Origin header (Chromium sends
// it with every request whose method is not GET or HEAD; "null" under a no-referrer policy),
// its Referer, and Sec-Fetch-Site — all set by the browser, none by the page's script. The
// initiator is the Origin, else the Referer's origin; it pairs when the action covers it (the
// chat page's origin and the same-site origins its navigations reached). With neither (a
// no-referrer policy), Sec-Fetch-Site decides as for navigations: same-origin with an origin it
// covers, same-site, or cross-site/absent (unknown: counted as the action's); "none" (the
// browser's own) never. Limits, all failing safe: a second tab of the same origin, the person's
// own click in the page, and the page's own timers (autosave, an analytics beacon to the site)
// during the window are held like the agent's — the card names the action, and Not now only
// costs the page that request. Not held: requests to other sites (a site whose API is on another
// registrable domain; a third-party widget), messages on a WebSocket opened before (the proxy
// passes frames through; only the upgrade is a request), a GET that changes something (the
// probe's names still catch a control called delete), and anything the page sends after the
// window (a timer longer than navAfter: the page acting by itself, as it could without the
// agent). A page the agent loaded (a lease) is not held for its lifetime: its autosave and the
// person's own use of it would each need a card.
//
// A synchronous XHR blocks the page's thread while its request waits; the panel and the
// confirmation window are other documents (remix.proxy, another process) and still answer.

// sendHoldMax bounds how long a request waits for the person's decision: past it the request is
// refused and the card withdrawn, so no fetch (or synchronous XHR) of the page waits for long.
const sendHoldMax = 2 * time.Minute

// sendHold is an action's record of the decision about its requests. Guarded by navGuard.mu.
type sendHold struct {
	allowed bool          // the person allowed this action on a card: its requests go
	denied  string        // the refusal's words, once the person refused (later requests refused too)
	asking  chan struct{} // closed when the pending card is decided; nil when none is pending
}

// allowSends lets the action's requests go without a card: the person allowed the action on
// the probe's card (act.go). Nil-safe.
func (x *navExpect) allowSends() {
	if x == nil {
		return
	}
	x.g.mu.Lock()
	x.sends.allowed = true
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

// sendRequest is what the send guard reads from a request.
type sendRequest struct {
	url       *weburl.URL // nil when it cannot be read
	initiator string      // the origin that sent it (Origin, else Referer); "" when unknown
	fetchSite string
	method    string
}

func readSendRequest(r *http.Request) sendRequest {
	sr := sendRequest{fetchSite: r.Header.Get("Sec-Fetch-Site"), method: r.Method}
	if u, err := httpx.RequestedAddress(r); err == nil {
		sr.url = u
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		if ou, err := weburl.Parse(o); err == nil && ou.IsHTTP() {
			sr.initiator = ou.Origin()
		}
	}
	if sr.initiator == "" {
		if ru, err := weburl.Parse(r.Header.Get("Referer")); err == nil && ru.IsHTTP() {
			sr.initiator = ru.Origin()
		}
	}
	return sr
}

// sendPairs reports whether sr may be a request that the action x made the page send (see the
// top of the file). Called with g.mu held.
func (x *navExpect) sendPairs(sr sendRequest) bool {
	if sr.url == nil || x.leaves(sr.url) {
		return false // another site's: not held here
	}
	if sr.initiator != "" {
		return x.origins[sr.initiator]
	}
	switch sr.fetchSite {
	case "none":
		return false
	case "same-origin":
		return x.origins[sr.url.Origin()]
	default: // same-site (the destination is on the site), cross-site or absent: unknown
		return true
	}
}

// actionsSendingLocked returns the live action expectations (not leases) that sr pairs with and
// that have a way to ask the person: of each chat, its newest action only. A chat's actions
// follow each other, and the window of one runs on for navAfter after its answer: a request
// then is the newest action's doing, and is decided (and reported) by it, not refused by the
// decision about the action before.
func (g *navGuard) actionsSendingLocked(sr sendRequest, now time.Time) []*navExpect {
	newest := map[any]*navExpect{}
	var xs []*navExpect
	for _, x := range g.xs {
		if x.doc != nil || x.confirmPost == nil || !x.liveLocked(now) || !x.sendPairs(sr) {
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
	if h.nav.live.Load() == 0 || safeMethod(r.Method) {
		return false
	}
	if top, frame := navigationKind(r); top || frame {
		return false // a navigation: GuardNavigation held it already (holdAgentPost)
	}
	sr := readSendRequest(r)
	g := &h.nav
	g.mu.Lock()
	g.pruneLocked(g.clock())
	xs := g.actionsSendingLocked(sr, g.clock())
	g.mu.Unlock()
	if len(xs) == 0 {
		return false
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
	fmt.Fprintf(w, "remixproxy held back a request that an action of the AI agent made this page send: %s.\n", why)
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
// that needs one shows the card; the others wait for its decision.
func (x *navExpect) decideSend(ctx context.Context, sr sendRequest) string {
	g := x.g
	for {
		g.mu.Lock()
		switch {
		case x.sends.allowed:
			g.mu.Unlock()
			return ""
		case x.sends.denied != "":
			why := x.sends.denied
			g.mu.Unlock()
			return why
		case x.sends.asking != nil:
			wait := x.sends.asking
			g.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return "the page gave up the request while the person decided"
			}
		}
		decided := make(chan struct{})
		x.sends.asking = decided
		g.mu.Unlock()

		// The card's life is the action's, not this request's: requests after it wait for it.
		cctx, cancel := context.WithTimeout(context.Background(), sendHoldMax)
		allow, err := x.confirmPost(cctx, postAsk{method: sr.method, to: sr.url, site: x.site, control: x.control, script: true})
		cancel()
		sent := "the " + x.control + " made the page's script send a request (" + strings.ToUpper(sr.method) + " " + shownAddress(sr.url) + ")"
		g.mu.Lock()
		x.sends.asking = nil
		switch {
		case err == nil && allow:
			x.sends.allowed = true
		case err != nil:
			x.sends.denied = sent + " and the person did not decide (the card was withdrawn: the page left, the turn stopped, or two minutes passed), so it was not sent"
		default:
			x.sends.denied = sent + " and the person chose “Not now”, so it was not sent"
		}
		if d := x.sends.denied; d != "" && len(x.denied) < 4 {
			x.denied = append(x.denied, d)
		}
		close(decided)
		g.mu.Unlock()
	}
}
