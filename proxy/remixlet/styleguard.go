package remixlet

import (
	"errors"
	"slices"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// The redirect guard for stylesheets. A remixlet's style.css and its dom.addStyle pieces may
// load from the page's site and the remixlet's own sites and fetch: hosts
// (rewrite.CheckStylesheet); a site with an open redirect turns that into a load from anywhere,
// with whatever the sheet put into the address:
// url(https://site/redirect?to=https://elsewhere/?data). So the url() addresses of every sheet
// the proxy hands a page are held by the redirect guard (redirect.go) exactly as the addresses
// of attributes are: dom.addStyle's as the call's addresses (checkAddStyle), style.css's when
// the runner sends it (sendStyle) or accepts the page's first-frame copy (planSync), and, for
// the first frame, from the moment the bootstrap carries it, before the page has a session
// (addBeforeSession).

// styleGuardAddrs are a checked sheet's url() addresses as the guard holds them: without their
// fragment (the browser never sends one), each once.
func styleGuardAddrs(addrs []string) []string {
	var out []string
	for _, a := range addrs {
		a = httpx.WithoutFragment(a)
		if u, err := weburl.Parse(a); err == nil && u.IsHTTP() && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// firstFrameSession is the guard's owner for addresses a bootstrap carried into a page served
// from pageURL, before the page agent connects.
func firstFrameSession(pageURL string) string { return firstFramePrefix + pageURL }

const firstFramePrefix = "first frame of "

func isFirstFrameSession(session string) bool { return strings.HasPrefix(session, firstFramePrefix) }

// Bounds on what addBeforeSession holds, since every injected document can make an owner (a page
// can load itself in frames with ever new queries): at most maxFirstFrameOwners not yet adopted,
// for page addresses of at most maxFirstFrameURL bytes. Past them the sheet is not put into the
// first frame; the runner sends it on connect, guarded for the session, as before issue 14.
const (
	maxFirstFrameOwners = 4096
	maxFirstFrameURL    = 2048
)

var errFirstFrameFull = errors.New("the redirect guard holds as many first-frame sheets as it may")

// addBeforeSession holds addresses that go into a page before it has a session: the first-frame
// stylesheets of the bootstrap, whose images load at the first paint, before the page agent has
// connected. They are held as a session on pageURL that has already ended: guarded for the grace
// period, and adopted by the page session that starts on pageURL (sessionStarted), which then
// holds them for as long as it is open.
func (g *redirectGuard) addBeforeSession(pageURL, remixlet string, m *sandbox.Manifest, addrs []string) error {
	if len(addrs) == 0 {
		return nil
	}
	keys, size, err := guardKeys(addrs)
	if err != nil {
		return err
	}
	session := firstFrameSession(pageURL)
	id := ownerID{session, remixlet}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sweepLocked(false) // owners past their grace make room first
	_, had := g.owners[id]
	if !had && (g.firstFrame >= maxFirstFrameOwners || len(pageURL) > maxFirstFrameURL) {
		return errFirstFrameFull
	}
	if err := g.addLocked(session, pageURL, remixlet, m, keys, size); err != nil {
		return err
	}
	if o := g.owners[id]; o != nil {
		if !had {
			g.firstFrame++
		}
		o.ended = g.clock()
	}
	return nil
}
