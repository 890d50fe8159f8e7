package chat

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// The person's own sends during the send guard's window (tenth session; NOTES "Red-team pass
// 6e", the cost it named). For sendAfter after an agent action, a request that changes something
// sent by a page of the chat's site waits for the person's card (sendguard.go) — the person's own
// "Send", "Like" or Enter on that page included. The page agent reports the person's own
// deliberate input (person_input.js): a trusted click on a control, a trusted Enter, a trusted
// Space outside a text field — not typing (eleventh session: every 250 ms of typing refilled
// the release, so while the person wrote, any late post of the agent's action went). isTrusted
// is set by the browser: the agent's clicks and keys are synthetic, so they never report.
//
// The rule (personSendLocked). A held request goes without a card as the person's when a report
// of the person's input
//   - came from the page that sent it: the request's Referer is the reporting page's address,
//     as the proxy noted it at navigation (the page session's) or as the page agent knows it
//     (its report's, after a same-origin SPA navigation), and the request's initiating origin
//     (Origin, else Referer) is that page's. A report is the page's, not its origin's (eleventh
//     session, OPEN-ITEMS 122): the person's input in another tab of the origin releases
//     nothing of this tab's. A Referer of the page's origin alone plus "/" (the default policy,
//     strict-origin-when-cross-origin, sends that with a cross-origin request: www.example.com
//     posting to its API on api.example.com) names the page only while it is its origin's one
//     live page session, when it reported and when the request comes (soleSession; eleventh session),
//     and only for a request to the site the actions cover: with two tabs of the origin open,
//     either could have sent it, and it is carded. A request whose Referer names no reporting
//     page (a no-referrer policy, a frame's, the origin alone with another tab of it open) is
//     carded;
//   - arrived after every action the request pairs with had answered, and none of them runs now
//     (a send during an action's own call stays held, whatever the person did; a report that
//     came before the agent's newest action cannot release what that action starts: the
//     person's click 1 s before the agent's click releases nothing of the agent's);
//   - arrived at most personSendTTL before the request (or up to personSendRace after it: the
//     report and the request travel on different connections);
//   - is used for at most personSendUses requests, and only within personSendBurst of the first
//     one it released (one "Send" may post the message and a read mark at once; a later post of
//     the agent's action a second on finds the report spent).
//
// Why the agent cannot take it. The agent's own input is never a report. Its action's requests
// that come during its call, or after a report older than its answer, are held. What is left is
// a coincidence the hostile text cannot arrange: a post the agent's action set off late (an undo
// window) in the page the person then uses, landing within personSendTTL after the person's own
// click on a control or Enter there, with that input having released nothing yet. Two tabs on
// one address are one page to this rule. A page whose own script is hostile can send reports
// itself, but such a page can post outside the window or off the site anyway. The sole-session
// rule counts only pages with a page agent: a frame of the origin inside another site's page,
// or a document the proxy did not inject, is not counted, so its late post with the origin alone
// as Referer goes on the person's input in the origin's one counted page.
//
// Costs that stay: the person's sends from a frame (no page agent there), a send more than
// personSendTTL after their input (an undo window, a debounced autosave — a draft saved while
// the person types is carded: typing reports nothing), a select whose change posts (choosing an
// option reports no key or click the page agent counts), requests with no Referer, requests
// with the origin alone as Referer while another tab of the origin is open, or to another
// registrable domain (a credentialed API there), and requests with no initiator are still
// carded.

const (
	// personSendTTL is how long after the person's input a request of the page is taken as theirs:
	// a site's handler posts at once, or after a render or a short debounce.
	personSendTTL = 2 * time.Second
	// personSendRace is how long a request that would be carded waits for a report that may
	// trail it (the page agent sends the report before the page's handler runs, but on another
	// connection).
	personSendRace = 300 * time.Millisecond
	// personSendBurst is how long after the first request a report released it releases more.
	personSendBurst = 500 * time.Millisecond
	// personSendUses bounds the requests one report releases.
	personSendUses = 4
	// maxPersonInputs bounds the reports kept, maxPersonInputsPerPage those of one page session.
	maxPersonInputs        = 64
	maxPersonInputsPerPage = 8
)

// personInput is one report of the person's input: the page session it came from, the page's
// origin and addresses, and when.
type personInput struct {
	session string
	origin  string
	// pages are the weburl.Keys of the page's address as the proxy noted it and as the page
	// agent reported it ("" when none or the same): a request whose Referer is one of them is
	// the page's.
	pages [2]string
	// sole: the page was its origin's only live page session when it reported (soleSession).
	sole  bool
	at    time.Time
	first time.Time // when it first released a request; zero until then
	uses  int
}

// personInputMessage takes a page agent's person-input message raw from sess (Hub.Message):
// dropped with one atomic load when the send guard holds nothing.
func (h *Hub) personInputMessage(sess *page.Session, raw json.RawMessage) {
	if h.nav.sends.live.Load() == 0 {
		return
	}
	p := personInputOf(sess.Info(), raw)
	p.sole = p.session != "" && h.soleSession(p.origin) == p.session
	h.nav.personInputReported(p)
}

// soleSession is the id of origin's only live page session, "" when it has none or more than
// one. Pages without a page agent (a frame, a document the proxy did not inject) are not
// counted.
func (h *Hub) soleSession(origin string) string {
	if h.pages == nil || origin == "" {
		return ""
	}
	id := ""
	for _, s := range h.pages.List() {
		if s.Origin == origin {
			if id != "" {
				return ""
			}
			id = s.ID
		}
	}
	return id
}

// personInputOf is the report raw of the page session snap. The page agent's address counts
// only within the page's origin: a page cannot speak for another origin's.
func personInputOf(snap page.Info, raw json.RawMessage) personInput {
	p := personInput{session: snap.ID, origin: snap.Origin}
	if u, err := weburl.Parse(snap.URL); err == nil && u.Origin() == snap.Origin {
		p.pages[0] = weburl.Key(u)
	}
	var m panel.PersonInput
	if json.Unmarshal(raw, &m) == nil && m.URL != "" && len(m.URL) <= 8192 {
		if u, err := weburl.Parse(m.URL); err == nil && u.Origin() == snap.Origin && weburl.Key(u) != p.pages[0] {
			p.pages[1] = weburl.Key(u)
		}
	}
	return p
}

// isPage reports whether sr came from the reporting page: its Referer is the page's address,
// or — for a request that stays on the actions' site (onSite) — the origin plus "/" (sr.bare),
// while the page is its origin's only live page session, both when it reported and now
// (sr.sole), so no other tab of the origin can have sent it.
func (p *personInput) isPage(sr sendRequest, onSite bool) bool {
	if sr.referer != "" && (p.pages[0] == sr.referer || p.pages[1] == sr.referer) {
		return true
	}
	return onSite && sr.bare && p.sole && sr.sole == p.session
}

// personInputReported records a page agent's report p of the person's input (personInputOf).
// Reports matter only while the send guard holds something: otherwise dropped without the lock.
func (g *navGuard) personInputReported(p personInput) {
	if g.sends.live.Load() == 0 || p.origin == "" || p.pages == [2]string{} {
		return
	}
	p.at = g.clock()
	now := p.at
	g.mu.Lock()
	defer g.mu.Unlock()
	// Old reports go first; then the session's own oldest when it holds maxPersonInputsPerPage
	// (a page's flood pushes out only its own), else the oldest of all past maxPersonInputs.
	kept, mine, oldest := g.sends.inputs[:0], 0, -1
	for _, q := range g.sends.inputs {
		if now.Sub(q.at) < personSendTTL+personSendRace {
			if q.session == p.session {
				if mine == 0 {
					oldest = len(kept)
				}
				mine++
			}
			kept = append(kept, q)
		}
	}
	clear(g.sends.inputs[len(kept):])
	g.sends.inputs = kept
	switch {
	case mine >= maxPersonInputsPerPage:
		g.sends.inputs = append(g.sends.inputs[:oldest], g.sends.inputs[oldest+1:]...)
	case len(g.sends.inputs) >= maxPersonInputs:
		g.sends.inputs = append(g.sends.inputs[:0], g.sends.inputs[1:]...)
	}
	g.sends.inputs = append(g.sends.inputs, p)
}

// personSend reports whether sr, a request the send guard would hold, goes as the person's own
// (see the top of the file), waiting up to personSendRace for a report that may trail it — only
// when a report could release it: its initiator and Referer are known and no action it pairs
// with runs.
func (h *Hub) personSend(ctx context.Context, sr sendRequest, arrived time.Time) bool {
	if sr.initiator == "" || sr.referer == "" {
		return false
	}
	if sr.bare {
		sr.sole = h.soleSession(sr.initiator)
	}
	g := &h.nav
	released, hopeless := false, false
	pollUntil(ctx, personSendRace, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		released, hopeless = g.personSendLocked(sr, arrived, g.clock())
		return released || hopeless
	})
	return released
}

// personSendLocked reports whether a report of the person's input releases sr, which arrived at
// arrived, now; hopeless when no report can (an action it pairs with runs). It uses the report.
// A request that arrived before that answer came during the call: hopeless too. Called with
// g.mu held.
func (g *navGuard) personSendLocked(sr sendRequest, arrived, now time.Time) (released, hopeless bool) {
	xs := g.actionsSendingLocked(sr, now)
	if len(xs) == 0 {
		return true, false // nothing holds it any more (the window ended while it waited)
	}
	var after time.Time // the newest answer among the actions it pairs with
	for _, x := range xs {
		if x.running || x.answered.IsZero() {
			return false, true
		}
		if x.answered.After(after) {
			after = x.answered
		}
	}
	if arrived.Before(after) {
		return false, true // it came during an action's call, which has answered since
	}
	// A Referer of the origin alone names the page only on the site the actions cover.
	onSite := !slices.ContainsFunc(xs, func(x *navExpect) bool { return x.leaves(sr.url) })
	best := -1
	for i := range g.sends.inputs {
		p := &g.sends.inputs[i]
		if p.origin != sr.initiator || !p.isPage(sr, onSite) || !p.at.After(after) || arrived.Sub(p.at) > personSendTTL || p.at.Sub(arrived) > personSendRace {
			continue
		}
		if p.uses > 0 && (p.uses >= personSendUses || now.Sub(p.first) > personSendBurst) {
			continue
		}
		// A report already releasing (its burst) before a fresh one: a fresh one is kept for
		// the person's next control.
		if best < 0 || p.uses > 0 && g.sends.inputs[best].uses == 0 {
			best = i
		}
	}
	if best < 0 {
		return false, false
	}
	p := &g.sends.inputs[best]
	if p.uses == 0 {
		p.first = now
	}
	p.uses++
	return true, false
}
