package chat

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
)

// The person's own clicks on a page the agent loaded (red-team pass 6a; OPEN-ITEMS 13). A lease
// (navguard.go, "Documents the agent loaded") must let the person's own link clicks go where
// they go. Chromium's Sec-Fetch-User: ?1 says only that the page had the person's activation in
// the last five seconds — any click or key press in the page, the launcher's, or typing in the
// panel, whose activation the page shares — not that the person chose this address. A site's
// ordinary "click to continue" page the agent was steered to (/leaving?to=https://other.example/
// ?data), whose script forwards on any click to the address in its query, turned the person's
// click anywhere into a forward off the site with ?1, which the lease let go.
//
// So the page agent reports the person's clicks (person_nav.js): a listener at window, capture
// phase, registered before any page script, that takes only trusted click, auxclick and Enter
// events and reports the address of the link (a, area) or the form (its submitter's formaction,
// or its action) they activate, as the browser resolves it. A lease lets a navigation with ?1 go
// as the person's only when it is to exactly an address reported by a page of its Referer's
// origin within personNavTTL (a form: same origin and path; its query is what the person typed);
// any other navigation with ?1 pairs like one without, and is held to the site. A redirect of a
// navigation let go this way is the person's too (its Location is taken as reported).
//
// What a report can do. A page can send reports of its own, for any address; it can then let
// its own script's navigation with ?1 go, which its script could as well do with fetch: a page
// whose own script is hostile gains nothing (the lease is against benign scripts steered by
// text). A report counts only for navigations whose Referer is the reporting page's origin, so
// another origin of the site (attacker.example.com beside mail.example.com) cannot speak for
// the leased one. A benign page never reports an address the person did not click.
//
// A button's script. During the person's trusted click on a button (button, a clickable input,
// role=button) and until the next task, the page agent also reports the address window.open is
// called with and the destination of the window's own navigation (the Navigation API's
// navigate event): a "Sign in with ..." popup or a script's location assignment goes (tenth
// session, OPEN-ITEMS 96; TestLeaseSigninPopupPersonClick). A window.open into a named window
// that is already open comes without ?1 (Chromium drops it there): a GET to exactly a reported
// address, at most personNavFresh after the report, goes as the person's all the same
// (TestLeaseNamedPopupRetry). That gives a page's script nothing: the address is the one the
// person's trusted click went to, so a timer's navigation to exactly it a moment later sends
// nothing the click did not; a form's report (its path only: the query is typed) does not count
// there, nor a POST. Not on a click on a link or on the page's text: a "click anywhere to
// continue" page, or a handler overriding a link, stays held.
//
// What fails safe. A click the page agent cannot see (a link inside a closed shadow root or a
// frame, which has no page agent; "Open link in new tab" from the context menu; a button whose
// script opens a window or navigates after a timer) is held to the site on a page the agent
// loaded, and for navWindow after an agent action (navguard.go); the refusal page says to type
// the address. Without Fetch metadata (plain http) every navigation of the document pairs, as
// before.

const (
	// personNavTTL is how long a report stands: Chromium's activation lasts five seconds.
	personNavTTL = 5 * time.Second
	// personNavFresh is how long a report stands for a navigation without ?1 that matches it
	// exactly: the person's click on a button whose window.open goes into a named window that
	// is already open, which Chromium sends without Sec-Fetch-User (nav7's decision 2).
	personNavFresh = time.Second
	// personNavRace is how long a navigation that an expectation would refuse waits for a
	// report that may trail it (the socket and the request race).
	personNavRace = 750 * time.Millisecond
	// maxPersonNavs bounds the reports kept, maxPersonNavsPerOrigin those of one origin.
	maxPersonNavs          = 256
	maxPersonNavsPerOrigin = 16
)

// personNav is one report: the page origin it came from, the address the person's click
// activates, and when.
type personNav struct {
	origin string
	key    string // weburl.Key of a link's address
	path   string // a form's: its origin and path, without the query
	at     time.Time
}

// personReported records a page agent's report: a page of origin clicked to raw (a form's
// address when form).
func (g *navGuard) personReported(origin string, raw json.RawMessage) {
	if g.live.Load() == 0 {
		return // only an expectation reads them (pairs): every trusted click of every page reports one
	}
	var m panel.PersonNav
	if json.Unmarshal(raw, &m) != nil || m.URL == "" || len(m.URL) > 8192 {
		return
	}
	u, err := weburl.Parse(m.URL)
	if err != nil || !u.IsHTTP() {
		return
	}
	g.notePerson(origin, u, m.Form)
}

// notePerson records that the person's click from a page of origin goes to u.
func (g *navGuard) notePerson(origin string, u *weburl.URL, form bool) {
	p := personNav{origin: origin, at: g.clock()}
	if form {
		p.path = formKey(u)
	} else {
		p.key = weburl.Key(u)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// Old reports go first; then one origin's flood pushes out only its own (a page spamming
	// reports cannot push out the person's click on another site's page).
	kept, mine := g.persons[:0], 0
	for _, q := range g.persons {
		if p.at.Sub(q.at) < personNavTTL {
			kept = append(kept, q)
			if q.origin == origin {
				mine++
			}
		}
	}
	g.persons = kept
	if mine >= maxPersonNavsPerOrigin || len(g.persons) >= maxPersonNavs {
		for i, q := range g.persons {
			if q.origin == origin || mine < maxPersonNavsPerOrigin {
				g.persons = append(g.persons[:i], g.persons[i+1:]...)
				break
			}
		}
	}
	g.persons = append(g.persons, p)
}

// formKey is a form submission's address without its query: origin and path.
func formKey(u *weburl.URL) string {
	if u == nil {
		return ""
	}
	path, _, _ := strings.Cut(u.PathQuery(), "?")
	return u.Origin() + path
}

// personClickedLocked reports whether nr goes to an address the person clicked on a page of its
// Referer's origin — with no Referer (a no-referrer policy, a link's rel=noreferrer), of one of
// origins, those of the expectation that would hold it (nil: any), or of a page of another site
// than that expectation's site (site; "": none), which is another tab and cannot be the page it
// holds. A navigation with ?1 matches a report up to personNavTTL old; one without (a
// window.open into a named window already open: Chromium drops ?1 there) only a GET to exactly a
// reported address (a link's, a window.open's, a navigate event's; not a form's path) up to
// personNavFresh old. Called with g.mu held.
func (g *navGuard) personClickedLocked(nr navRequest, origins map[string]bool, site string) bool {
	if nr.url == nil {
		return false
	}
	ttl := personNavTTL
	if !nr.user {
		if nr.method != http.MethodGet {
			return false
		}
		ttl = personNavFresh
	}
	now := g.clock()
	fk := formKey(nr.url)
	for _, p := range g.persons {
		if now.Sub(p.at) >= ttl || now.Before(p.at) || !nr.user && p.key == "" {
			continue
		}
		// p.origin "" is never one of origins: "" marks a full set (addOrigin).
		if nr.referer != "" && p.origin != nr.referer || nr.referer == "" && origins != nil && (p.origin == "" || !origins[p.origin]) && !otherSite(p.origin, site) {
			continue
		}
		if p.key != "" && p.key == nr.key || p.path != "" && p.path == fk {
			return true
		}
	}
	return false
}

// otherSite reports whether origin is of a site other than site ("" is of none).
func otherSite(origin, site string) bool {
	if origin == "" || site == "" {
		return false
	}
	u, err := weburl.Parse(origin)
	return err == nil && u.IsHTTP() && u.Site() != site
}

// personRace reports whether an expectation would refuse nr, a navigation with ?1 (frame: a
// frame's; carrying: its query carries another site's address), for want of a report of the
// person's click: worth waiting personNavRace for one.
func (g *navGuard) personRace(nr navRequest, frame, carrying bool) bool {
	now := g.clock()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, x := range g.xs {
		if x.liveLocked(now) && x.pairs(nr) && x.refusesLocked(nr, frame, carrying) {
			return true
		}
	}
	return false
}

// waitPersonReport waits, up to personNavRace, for the report of the person's click that would
// let nr go (personRace).
func (g *navGuard) waitPersonReport(ctx context.Context, nr navRequest) {
	pollUntil(ctx, personNavRace, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.personClickedLocked(nr, nil, "")
	})
}

// personMarkKey is the request-context key of a navigation let go as the person's click.
type personMarkKey struct{}

// personMark is such a navigation: its redirects are the person's too.
type personMark struct {
	g      *navGuard
	origin string // the Referer's origin the report was matched on
	from   *weburl.URL
}

// markPerson marks r, a navigation a lease let go as the person's click.
func (g *navGuard) markPerson(r *http.Request, nr navRequest) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), personMarkKey{}, &personMark{g: g, origin: nr.referer, from: nr.url}))
}

// personRedirect takes the redirect of a navigation let go as the person's click as reported:
// the browser follows it with ?1 and the first page's Referer.
func personRedirect(resp *http.Response) {
	pm, ok := resp.Request.Context().Value(personMarkKey{}).(*personMark)
	if !ok || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return
	}
	if to, err := weburl.Resolve(pm.from, loc); err == nil && to.IsHTTP() {
		pm.g.notePerson(pm.origin, to, false)
	}
}
