package fetch

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// The credential header values seen for each site, for the agent's redaction stage: the
// Authorization, Proxy-Authorization and Cookie values of requests, and the Set-Cookie values
// of their answers, on the browser's traffic (Client.Observe, a response tap) and on the
// client's own requests (Client.Send), whose Set-Cookie the cookie view does not take. The site
// is the registrable domain of the request's host as the browser reads it (weburl.Site). Held
// in memory only, bounded per site and in sites; never logged.

const (
	maxHeaderSites   = 256  // sites whose header values are kept
	maxHeaderAuth    = 16   // authorization values kept per site
	maxHeaderCookies = 128  // cookie values from headers kept per site
	maxCredentialLen = 4096 // bytes of one value kept (the redaction's own bound on a known value)
)

// Credentials are the credential header values seen per site. The zero value is not usable;
// use NewCredentials.
type Credentials struct {
	mu     sync.Mutex
	gen    uint64 // counts the changes, so the redaction gathers again only after one
	bySite map[string]*siteCredentials
}

// siteCredentials are the credential values seen in one site's headers.
type siteCredentials struct {
	used    time.Time
	auth    []string
	cookies []string
}

// NewCredentials makes an empty set.
func NewCredentials() *Credentials {
	return &Credentials{bySite: map[string]*siteCredentials{}}
}

// Observe takes the credential header values of a request (as sent upstream) and its
// response: Authorization, Proxy-Authorization, Cookie and Set-Cookie. It only reads them.
func (cr *Credentials) Observe(resp *http.Response) {
	req := resp.Request
	if req == nil || req.URL == nil {
		return
	}
	var auth, cookies []string
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		for _, v := range req.Header.Values(name) {
			v = strings.TrimSpace(v)
			auth = append(auth, v)
			if _, cred, ok := strings.Cut(v, " "); ok {
				auth = append(auth, strings.TrimSpace(cred))
			}
		}
	}
	for _, line := range req.Header.Values("Cookie") {
		if len(line) > maxViewHeaderBytes {
			continue
		}
		for _, part := range strings.Split(line, ";") {
			if _, v, ok := strings.Cut(part, "="); ok {
				cookies = append(cookies, strings.TrimSpace(v))
			}
		}
	}
	for _, line := range resp.Header.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil {
			cookies = append(cookies, c.Value)
		}
	}
	if len(auth) == 0 && len(cookies) == 0 {
		return
	}
	cr.add(siteOfURL(req.URL.String()), auth, cookies)
}

// add records header values seen for site.
func (cr *Credentials) add(site string, auth, cookies []string) {
	if site == "" {
		return
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.gen++
	h := cr.bySite[site]
	if h == nil {
		if len(cr.bySite) >= maxHeaderSites {
			oldest := ""
			for s, v := range cr.bySite {
				if oldest == "" || v.used.Before(cr.bySite[oldest].used) {
					oldest = s
				}
			}
			delete(cr.bySite, oldest)
		}
		h = &siteCredentials{}
		cr.bySite[site] = h
	}
	h.used = time.Now()
	h.auth = addBounded(h.auth, auth, maxHeaderAuth)
	h.cookies = addBounded(h.cookies, cookies, maxHeaderCookies)
}

// addBounded appends the new values of add to list (moving seen ones to the end), keeping the
// last n: the n most recently seen distinct values, oldest first. It walks back from the newest
// and stops at n, so one response with 40 000 Set-Cookie lines costs what 128 do (the old loop
// deleted from a list it let grow to all of them: quadratic, seconds under the lock every
// response's tap takes).
func addBounded(list, add []string, n int) []string {
	kept := make([]string, 0, n)
	seen := make(map[string]struct{}, n)
	for _, from := range [][]string{add, list} {
		for i := len(from) - 1; i >= 0 && len(kept) < n; i-- {
			v := from[i]
			if v == "" || len(v) > maxCredentialLen {
				continue
			}
			if _, dup := seen[v]; dup {
				continue
			}
			seen[v] = struct{}{}
			kept = append(kept, v)
		}
	}
	slices.Reverse(kept)
	return kept
}

// Site returns the authorization and cookie values seen in site's headers.
func (cr *Credentials) Site(site string) (auth, cookies []string) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if h := cr.bySite[site]; h != nil && site != "" {
		auth = append(auth, h.auth...)
		cookies = append(cookies, h.cookies...)
	}
	return auth, cookies
}

// Generation counts the changes so far.
func (cr *Credentials) Generation() uint64 {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return cr.gen
}

// siteOfURL is the registrable domain of an http(s) URL's host as the browser reads it, or "".
func siteOfURL(raw string) string {
	u, err := weburl.Parse(raw)
	if err != nil || !u.IsHTTP() {
		return ""
	}
	return u.Site()
}
