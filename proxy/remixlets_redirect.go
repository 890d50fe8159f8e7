package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/sandbox"
)

// The address rule lets a remixlet point a link or an image at the page's own origin (and at its
// own sites and fetch: hosts). A site with an open redirect would turn that into a request
// anywhere: <img src="/redirect?to=https://elsewhere/…">. So the proxy remembers, for a while,
// the addresses it allowed remixlets to write, and when one of them answers with a redirect to
// an origin the remixlet may not load from, the browser gets a 403 from the proxy instead of the
// redirect, and the remixlet's log says so. A redirect within the same origin is followed, and
// its target is remembered in turn.
//
// Addresses are compared by scheme, host, port and decoded path (the query is left out, so a
// different spelling of the query by the browser cannot slip past; the cost is that the page's
// own loads of that path are guarded as well).

const (
	redirectGuardTTL = 10 * time.Minute
	redirectGuardMax = 4096
)

type guardedAddress struct {
	remixlet string
	manifest *sandbox.Manifest
	expires  time.Time
}

// redirectGuard is the set of addresses remixlets were allowed to write.
type redirectGuard struct {
	mu    sync.Mutex
	addrs map[string]guardedAddress
}

// guardKey is the key of an http(s) address, or "" for anything else.
func guardKey(u *url.URL) string {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	path := u.Path
	if path == "" {
		path = "/"
	}
	return u.Scheme + "://" + strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")) + ":" + port + path
}

// add remembers addresses a remixlet was allowed to write.
func (g *redirectGuard) add(remixlet string, m *sandbox.Manifest, addrs []string) {
	if len(addrs) == 0 {
		return
	}
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.addrs == nil {
		g.addrs = map[string]guardedAddress{}
	}
	if len(g.addrs)+len(addrs) > redirectGuardMax {
		for k, a := range g.addrs {
			if now.After(a.expires) {
				delete(g.addrs, k)
			}
		}
	}
	for _, s := range addrs {
		u, err := url.Parse(s)
		if err != nil {
			continue
		}
		if k := guardKey(u); k != "" && len(g.addrs) < redirectGuardMax {
			g.addrs[k] = guardedAddress{remixlet: remixlet, manifest: m, expires: now.Add(redirectGuardTTL)}
		}
	}
}

// lookup returns the guard for u, if any.
func (g *redirectGuard) lookup(u *url.URL) (guardedAddress, bool) {
	k := guardKey(u)
	if k == "" {
		return guardedAddress{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	a, ok := g.addrs[k]
	if ok && time.Now().After(a.expires) {
		delete(g.addrs, k)
		ok = false
	}
	return a, ok
}

// guardRemixletRedirect is called on every upstream response (ModifyResponse in pipeline.go):
// a redirect from an address a remixlet wrote to an origin that remixlet may not load from is
// replaced by a 403.
func (s *Server) guardRemixletRedirect(resp *http.Response) {
	if s.remixlets == nil || resp == nil || resp.Request == nil || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return
	}
	r := s.remixlets
	loc := resp.Header.Get("Location")
	if loc == "" {
		return
	}
	from := resp.Request.URL
	a, ok := r.guard.lookup(from)
	if !ok {
		return
	}
	lu, err := url.Parse(strings.ReplaceAll(strings.TrimSpace(loc), `\`, "/"))
	if err == nil {
		to := from.ResolveReference(lu)
		host := strings.ToLower(to.Hostname())
		if (to.Scheme == "http" || to.Scheme == "https") && to.User == nil &&
			(sameOrigin(to, from) || (a.manifest != nil && a.manifest.StyleHostAllowed(host))) {
			r.guard.add(a.remixlet, a.manifest, []string{to.String()})
			return
		}
	}
	r.logf(a.remixlet, "warn", "refused: %s redirects to %s, which is not on the page's origin or one of the remixlet's sites; the browser got a 403 instead",
		truncate(from.String(), 300), truncate(loc, 300))
	if resp.Body != nil {
		resp.Body.Close()
	}
	body := "remixproxy: a redirect of an address a remixlet wrote was refused\n"
	resp.StatusCode = http.StatusForbidden
	resp.Status = fmt.Sprintf("%d %s", http.StatusForbidden, http.StatusText(http.StatusForbidden))
	resp.Header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Cache-Control": {"no-store"}}
	resp.Body = io.NopCloser(strings.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.TransferEncoding = nil
	resp.Uncompressed = false
}
