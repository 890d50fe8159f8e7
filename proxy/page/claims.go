package page

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// Claims: a page token opens at most one live session, and only the page agent that opened it
// may open it again.
//
// A token is the key to a session, and a page script runs in the same origin as the document
// it was minted for, so any copy of the document it can read is a way to that key: its own
// address fetched again, the browser's HTTP cache, a same-origin popup's tag read while the
// page agent's script loads. The proxy closes the ways it can (html.go: it injects only into
// navigations, and a stored document answers only another navigation); claims make a token
// that leaks anyway worth as little as possible:
//
//   - The first socket with a token opens its session, and its welcome carries a resume key
//     (HMAC of the token under the install secret, so it survives a proxy restart) that the
//     page agent keeps in its closure and sends with every reconnection (back/forward cache,
//     a dropped connection). A reconnection with the key replaces the token's live session.
//   - A second socket without the key while the token's session is live (it answers a ping;
//     a dead socket not yet noticed is replaced) is refused, and the live session stays. That
//     is a second copy of one document: the browser gave a second tab the stored copy (a
//     duplicated or restored tab; html.go keeps normal navigations from reusing it), or a page
//     that read the token. The proxy cannot tell which socket is the page agent; the one that
//     came first keeps the session, and the other page's launcher says to reload it, which
//     brings a document with a token of its own.
//   - Once the token's session has gone, the token opens a new one without the key: that is a
//     page restored from the browser's HTTP cache on a history navigation, a new document with
//     the old token. Without the key a token opens a session only within its lifetime
//     (lifetime.go); with the key, only within resumeGrace of its last session's end or of the
//     proxy's start (lifetime.go).
//   - An origin has at most maxSessionsPerOrigin live sessions, so a page that mints tokens for
//     itself (over plain http, by forging a navigation's headers: html.go) cannot start the
//     remixlets of its site a thousand times over; and a site (weburl.Site: its registrable
//     domain) at most maxSessionsPerSite, so that one whose pages mint tokens on many
//     subdomains (each an origin) is bounded by the proxy, not by the browser's WebSocket
//     limit (~255): what each session holds (its page data, observed responses, secrets, its
//     remixlets' runtimes) is bounded per session (pass 5d).

// maxSessionsPerOrigin bounds the live sessions of one origin.
const maxSessionsPerOrigin = 64

// maxSessionsPerSite bounds the live sessions of one site, all its origins together.
const maxSessionsPerSite = 2 * maxSessionsPerOrigin

var (
	errTokenLive = errors.New("this copy of the page came from the browser's cache while the page is open elsewhere; reload this tab")
	errTooMany   = errors.New("too many pages of this site are connected; close some of its tabs and reload this one")
	errBadResume = errors.New("wrong resume key")
)

// claimTable is the hub's record of live tokens; guarded by Hub.mu.
type claimTable struct {
	live      map[string]*Session  // token's MAC → its live session
	perOrigin map[string]int       // origin → live sessions
	perSite   map[string]int       // site → live sessions
	ended     map[string]time.Time // token's MAC → when its last live session ended (lifetime.go)
}

func newClaimTable() claimTable {
	return claimTable{live: map[string]*Session{}, perOrigin: map[string]int{}, perSite: map[string]int{}, ended: map[string]time.Time{}}
}

// siteOfOrigin is the site of an origin (scheme://host[:port]).
func siteOfOrigin(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return origin
	}
	return weburl.Site(u.Hostname())
}

// tokenKey is the part of a verified token that names it: its MAC.
func tokenKey(token string) string { return token[strings.LastIndexByte(token, '.')+1:] }

// ResumeKey is the key a page agent presents to reopen its token's session: HMAC-SHA256 of
// "resume." and the token under the install secret.
func (h *Hub) ResumeKey(token string) string { return h.derive("resume.", token) }

// derive is HMAC-SHA256(install secret, label+value), base64url: the hub's keys other than the
// tokens' own MAC (sign), each under a label of its own so that none can stand for another.
func (h *Hub) derive(label, value string) string {
	m := hmac.New(sha256.New, h.secret)
	io.WriteString(m, label)
	io.WriteString(m, value)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// claim decides, atomically with the session's entry into the table, whether a socket with a
// verified token issued at issued (and resume key, "" for none) may open s. On success s is live for the token;
// evicted, if not nil, is the token's previous session, replaced: the caller closes it. A
// previous session met without the key is first asked whether it is still there (alive,
// outside the lock: a ping): a page agent whose welcome was lost with its connection reconnects
// without a key, and its old socket, dead but not yet noticed, must not keep it out.
func (h *Hub) claim(token string, issued time.Time, resume string, s *Session, alive func(*Session) bool) (evicted *Session, err error) {
	key := tokenKey(token)
	withKey := resume != "" && hmac.Equal([]byte(resume), []byte(h.ResumeKey(token)))
	if resume != "" && !withKey {
		return nil, errBadResume
	}
	if !withKey && h.tokenExpired(issued) {
		return nil, errTokenExpired
	}
	var asked *Session // the previous session alive was asked about, and its answer
	var answer bool
	for {
		h.mu.Lock()
		c := &h.claims
		prev := c.live[key]
		if prev == nil && withKey && h.resumeTooLateLocked(key, h.now()) {
			h.mu.Unlock()
			return nil, errResumeTooLate
		}
		if prev != nil && !withKey {
			if prev != asked {
				h.mu.Unlock()
				asked, answer = prev, alive(prev)
				continue // the table may have changed meanwhile
			}
			if answer {
				h.mu.Unlock()
				return nil, errTokenLive
			}
		}
		site := siteOfOrigin(s.info.Origin)
		if prev == nil && (c.perOrigin[s.info.Origin] >= maxSessionsPerOrigin || c.perSite[site] >= maxSessionsPerSite) {
			h.mu.Unlock()
			return nil, errTooMany
		}
		if prev != nil {
			h.dropLocked(prev)
		}
		s.tokenKey = key
		c.live[key] = s
		c.perOrigin[s.info.Origin]++
		c.perSite[site]++
		h.byID[s.id] = s
		h.panels[s.panelToken] = s.id
		h.mu.Unlock()
		return prev, nil
	}
}

// dropLocked takes s out of the table: it is no longer live for its token, its origin or its
// panel. Its socket is the caller's to close.
func (h *Hub) dropLocked(s *Session) {
	if _, ok := h.byID[s.id]; !ok {
		return
	}
	s.info.Connected = false
	delete(h.byID, s.id)
	delete(h.panels, s.panelToken)
	c := &h.claims
	if c.live[s.tokenKey] == s {
		delete(c.live, s.tokenKey)
		h.noteEndedLocked(s.tokenKey, h.now())
	}
	if c.perOrigin[s.info.Origin]--; c.perOrigin[s.info.Origin] <= 0 {
		delete(c.perOrigin, s.info.Origin)
	}
	site := siteOfOrigin(s.info.Origin)
	if c.perSite[site]--; c.perSite[site] <= 0 {
		delete(c.perSite, site)
	}
	h.notifyLocked(s)
}

// WorkerKey is the key the proxy gives the service-worker shim of origin (proxy/swshim.go), with
// which it asks for a document to be injected: HMAC-SHA256 of "sw." and the origin under the
// install secret. Only a service worker's own script request carries it, never a page's fetch.
func (h *Hub) WorkerKey(origin string) string { return h.derive("sw.", origin) }
