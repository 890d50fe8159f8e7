package fetch

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"golang.org/x/net/publicsuffix"
)

// The per-host cookie view: what cookies the browser would send to each host, kept from the
// traffic the proxy sees, so rmx.fetch can send a request signed in as the person. It reads
// headers only; the person's own requests and responses are never changed.
//
// Two sources, merged per cookie name, newest first:
//   - Set-Cookie on responses, stored with their Domain, Path, Secure and expiry and checked as a
//     browser checks them (public-suffix list, Secure only from https, __Secure-/__Host-
//     prefixes, SameSite=None only with Secure); a deleting Set-Cookie is kept as a tombstone.
//   - the Cookie header the browser sends: the ground truth for cookies the proxy never saw set
//     (set before the proxy started, or by page scripts through document.cookie). Its cookies
//     have no attributes on the wire, so they are kept per host, and ones seen over https are
//     only used for https. A same-site navigation sends every cookie the browser has for its
//     URL, so a name it lacks is gone from the browser (deleted by a script, or expired).
//
// Not modelled: third-party-cookie blocking and partitioned (CHIPS) cookies, which the browser
// keeps per top-level site; partitioned cookies are left out. Memory is bounded by
// maxViewCookies stored cookies, maxViewHosts hosts and maxViewNames names per host.

const (
	maxViewCookies     = 3000
	viewPurgeCookies   = 300 // dropped at once when the view is full (evictCookie)
	maxViewHosts       = 1000
	maxViewNames       = 100
	maxViewCookieBytes = 4096     // name and value together, as browsers limit them
	maxViewHeaderBytes = 16 << 10 // a longer Cookie header is not taken
	maxCookieAttribute = 1024     // bytes of a Path attribute browsers take (RFC 6265bis), and of a kept path
	maxCookieLifetime  = 400 * 24 * time.Hour
)

// CookieView is the proxy's view of the browser's cookies. The zero value is not usable; use
// NewCookieView.
type CookieView struct {
	now func() time.Time

	mu     sync.Mutex
	stored map[cookieKey]*viewCookie // from Set-Cookie
	hosts  map[string]*hostCookies   // from Cookie headers, by canonical host
	ua     string                    // the browser's last User-Agent
	gen    uint64                    // counts the headers taken: the redaction stage's cue (Generation)
}

type cookieKey struct{ domain, path, name string }

type viewCookie struct {
	value    string
	hostOnly bool
	secure   bool
	expires  time.Time // zero: a session cookie
	setAt    time.Time
	deleted  bool // a tombstone: a Set-Cookie deleted it
}

// hostCookies is what the Cookie headers sent to one host said.
type hostCookies struct {
	at    time.Time // the last header
	seen  map[string]seenCookie
	order []string            // names in the order the browser last sent them
	gone  map[string]goneMark // names a same-site navigation did not send
}

type seenCookie struct {
	value  string
	at     time.Time
	secure bool // seen over https only: never sent over http
}

type goneMark struct {
	at   time.Time
	path string // the navigation's path
}

func NewCookieView() *CookieView {
	return &CookieView{now: time.Now, stored: map[cookieKey]*viewCookie{}, hosts: map[string]*hostCookies{}}
}

// Observe takes what resp and its request (as sent upstream) say about the browser's cookies.
// It only reads them.
func (v *CookieView) Observe(resp *http.Response) {
	req := resp.Request
	if req == nil || req.URL == nil {
		return
	}
	host := viewHost(req.URL.Hostname())
	if host == "" {
		return
	}
	secure := req.URL.Scheme == "https"
	now := v.now()
	setCookies := resp.Header.Values("Set-Cookie")
	cookieHeader := req.Header.Values("Cookie")
	ua := req.Header.Get("User-Agent")
	site := req.Header.Get("Sec-Fetch-Site")
	// A top-level navigation from the same site (or typed by the person) carries every cookie the
	// browser has for its URL; a cross-site request carries only SameSite=None ones, and in a
	// third-party context possibly partitioned ones: its header is not taken.
	authoritative := req.Header.Get("Sec-Fetch-Mode") == "navigate" && req.Header.Get("Sec-Fetch-Dest") == "document" &&
		(site == "none" || site == "same-origin" || site == "same-site")
	if site == "cross-site" {
		cookieHeader = nil
	}
	if len(setCookies) == 0 && len(cookieHeader) == 0 && !authoritative && ua == "" {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if ua != "" && len(ua) < 1024 {
		v.ua = ua
	}
	v.gen++
	if len(cookieHeader) > 0 || authoritative {
		v.takeHeader(host, req.URL.Path, secure, strings.Join(cookieHeader, "; "), authoritative, now)
	}
	for _, line := range setCookies {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			continue
		}
		v.takeSetCookie(host, req.URL, c, now)
	}
}

// UserAgent is the User-Agent the browser last sent, or "".
func (v *CookieView) UserAgent() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ua
}

// takeHeader records one Cookie header sent to host.
func (v *CookieView) takeHeader(host, path string, secure bool, header string, authoritative bool, now time.Time) {
	if len(header) > maxViewHeaderBytes {
		return
	}
	pairs, err := http.ParseCookie(header)
	if err != nil && header != "" {
		// A malformed pair spoils the parse; take the pairs one by one.
		pairs = nil
		for _, part := range strings.Split(header, ";") {
			if cs, err := http.ParseCookie(strings.TrimSpace(part)); err == nil {
				pairs = append(pairs, cs...)
			}
		}
	}
	hc := v.hosts[host]
	if hc == nil {
		if len(v.hosts) >= maxViewHosts {
			v.evictHost()
		}
		hc = &hostCookies{seen: map[string]seenCookie{}, gone: map[string]goneMark{}}
		v.hosts[host] = hc
	}
	hc.at = now
	sent := make(map[string]bool, len(pairs))
	var order []string
	for _, c := range pairs {
		if sent[c.Name] || len(c.Name)+len(c.Value) > maxViewCookieBytes {
			continue // with two cookies of one name (different paths), the first is the most specific
		}
		sent[c.Name] = true
		order = append(order, c.Name)
		prev, had := hc.seen[c.Name]
		hc.seen[c.Name] = seenCookie{value: c.Value, at: now, secure: secure && (!had || prev.secure || prev.value != c.Value)}
		delete(hc.gone, c.Name)
	}
	if authoritative {
		for name := range hc.seen {
			if !sent[name] {
				delete(hc.seen, name)
			}
		}
		for _, name := range v.namesFor(host) {
			if !sent[name] {
				hc.gone[name] = goneMark{at: now, path: clipRequestPath(httpx.CleanPath(path))}
			}
		}
		hc.order = order
	} else {
		for _, name := range hc.order {
			if !sent[name] {
				order = append(order, name)
			}
		}
		hc.order = order
	}
	for len(hc.order) > maxViewNames {
		delete(hc.seen, hc.order[len(hc.order)-1])
		hc.order = hc.order[:len(hc.order)-1]
	}
	for name := range hc.gone {
		if len(hc.gone) <= maxViewNames {
			break
		}
		delete(hc.gone, name)
	}
	// Keep order to the names still seen.
	hc.order = slices.DeleteFunc(hc.order, func(n string) bool { _, ok := hc.seen[n]; return !ok })
}

// namesFor lists the names of stored cookies that apply to host (any path).
func (v *CookieView) namesFor(host string) []string {
	var names []string
	for k, c := range v.stored {
		if !c.deleted && domainApplies(host, k.domain, c.hostOnly) {
			names = append(names, k.name)
		}
	}
	return names
}

// takeSetCookie stores one Set-Cookie from a response to u, checked as a browser checks it.
func (v *CookieView) takeSetCookie(host string, u *url.URL, c *http.Cookie, now time.Time) {
	if c.Name == "" || len(c.Name)+len(c.Value) > maxViewCookieBytes || c.Partitioned {
		return
	}
	secureOrigin := u.Scheme == "https"
	if c.Secure && !secureOrigin {
		return // browsers refuse Secure cookies from http
	}
	if c.SameSite == http.SameSiteNoneMode && !c.Secure {
		return // Chromium refuses SameSite=None without Secure
	}
	domain, hostOnly := host, true
	if d := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(c.Domain), ".")); d != "" {
		d = strings.TrimSuffix(d, ".")
		if _, err := netip.ParseAddr(host); err == nil {
			if d != host {
				return
			}
		} else {
			if host != d && !strings.HasSuffix(host, "."+d) {
				return // a Domain the host is not in
			}
			if ps, _ := publicsuffix.PublicSuffix(d); ps == d {
				if d != host {
					return // a public suffix (com, co.uk, test …) as Domain
				}
			} else {
				domain, hostOnly = d, false
			}
		}
	}
	path := c.Path
	if path == "" || path[0] != '/' || len(path) > maxCookieAttribute {
		path = defaultCookiePath(u.Path) // RFC 6265bis: a longer Path attribute is ignored
	}
	if len(path) > maxCookieAttribute {
		// A default path from a long request path: not kept, as the view would hold up to
		// maxViewCookies of them (an upstream answering 250 KiB paths filled it with 750 MiB);
		// rmx.fetch and http_request then go without this cookie.
		return
	}
	switch {
	case strings.HasPrefix(c.Name, "__Secure-") && !c.Secure:
		return
	case strings.HasPrefix(c.Name, "__Host-") && (!c.Secure || !hostOnly || path != "/"):
		return
	}
	var expires time.Time
	deleted := false
	switch {
	case c.MaxAge < 0:
		deleted = true
	case c.MaxAge > 0:
		expires = now.Add(min(time.Duration(c.MaxAge)*time.Second, maxCookieLifetime))
	case !c.Expires.IsZero():
		if !c.Expires.After(now) {
			deleted = true
		} else {
			expires = c.Expires
			if expires.Sub(now) > maxCookieLifetime {
				expires = now.Add(maxCookieLifetime)
			}
		}
	}
	k := cookieKey{domain: domain, path: path, name: c.Name}
	if _, ok := v.stored[k]; !ok && len(v.stored) >= maxViewCookies {
		v.evictCookie(now)
	}
	v.stored[k] = &viewCookie{value: c.Value, hostOnly: hostOnly, secure: c.Secure, expires: expires, setAt: now, deleted: deleted}
}

// cookiesFor returns the cookies the browser would send with a request to u, most specific
// path first.
func (v *CookieView) cookiesFor(u *url.URL) []*http.Cookie {
	host := viewHost(u.Hostname())
	secure := u.Scheme == "https"
	path := httpx.CleanPath(u.Path)
	now := v.now()
	v.mu.Lock()
	defer v.mu.Unlock()
	hc := v.hosts[host]

	type found struct {
		k cookieKey
		c *viewCookie
	}
	var stored []found
	latest := map[string]time.Time{} // per name, the newest stored cookie (or tombstone) that applies
	for k, c := range v.stored {
		if !domainApplies(host, k.domain, c.hostOnly) || !pathMatches(path, k.path) || (c.secure && !secure) {
			continue
		}
		if !c.deleted && !c.expires.IsZero() && !c.expires.After(now) {
			continue
		}
		if c.setAt.After(latest[k.name]) {
			latest[k.name] = c.setAt
		}
		if hc != nil {
			if g, ok := hc.gone[k.name]; ok && g.at.After(c.setAt) && pathMatches(g.path, k.path) {
				continue // a same-site navigation this cookie applied to did not send it
			}
		}
		stored = append(stored, found{k, c})
	}
	useSeen := map[string]bool{}
	if hc != nil {
		for name, sc := range hc.seen {
			if (!sc.secure || secure) && sc.at.After(latest[name]) {
				useSeen[name] = true
			}
		}
	}
	slices.SortFunc(stored, func(a, b found) int {
		if d := len(b.k.path) - len(a.k.path); d != 0 {
			return d
		}
		return a.c.setAt.Compare(b.c.setAt)
	})
	var out []*http.Cookie
	for _, f := range stored {
		if f.c.deleted || useSeen[f.k.name] {
			continue
		}
		out = append(out, &http.Cookie{Name: f.k.name, Value: f.c.value})
	}
	if hc != nil {
		for _, name := range hc.order {
			if useSeen[name] {
				out = append(out, &http.Cookie{Name: name, Value: hc.seen[name].value})
			}
		}
	}
	return out
}

// CookieHeader is cookiesFor as a Cookie header value, or "".
func (v *CookieView) CookieHeader(u *url.URL) string {
	cs := v.cookiesFor(u)
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// evictCookie drops expired cookies, or else the viewPurgeCookies set longest ago, as
// Chromium's cookie store purges 300 at once when it is over its limit. Dropping one at a time
// cost a scan of the whole view per new cookie: a response with 40 000 Set-Cookie lines held the
// view's lock (which every response's tap takes) for seconds.
func (v *CookieView) evictCookie(now time.Time) {
	type aged struct {
		k  cookieKey
		at time.Time
	}
	live := make([]aged, 0, len(v.stored))
	dropped := false
	for k, c := range v.stored {
		if !c.expires.IsZero() && !c.expires.After(now) {
			delete(v.stored, k)
			dropped = true
			continue
		}
		live = append(live, aged{k, c.setAt})
	}
	if dropped {
		return
	}
	slices.SortFunc(live, func(a, b aged) int { return a.at.Compare(b.at) })
	for _, c := range live[:min(viewPurgeCookies, len(live))] {
		delete(v.stored, c.k)
	}
}

// evictHost drops the host whose Cookie header is oldest.
func (v *CookieView) evictHost() {
	var oldest string
	var at time.Time
	for h, hc := range v.hosts {
		if at.IsZero() || hc.at.Before(at) {
			oldest, at = h, hc.at
		}
	}
	delete(v.hosts, oldest)
}

// viewHost is a host name as the view keys it: lowercase, without a trailing dot.
func viewHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// domainApplies reports whether a cookie for domain (host-only or not) is sent to host.
func domainApplies(host, domain string, hostOnly bool) bool {
	if host == domain {
		return true
	}
	if hostOnly || net.ParseIP(host) != nil {
		return false
	}
	return strings.HasSuffix(host, "."+domain)
}

// clipRequestPath is p cut to maxCookieAttribute+1 bytes: what pathMatches(p, cookiePath)
// reads of it for every path a kept cookie can have (at most maxCookieAttribute bytes), so a
// gone mark holds no more of a long request path than that.
func clipRequestPath(p string) string {
	if len(p) > maxCookieAttribute+1 {
		return strings.Clone(p[:maxCookieAttribute+1])
	}
	return p
}

// pathMatches is RFC 6265's path-match.
func pathMatches(reqPath, cookiePath string) bool {
	if reqPath == cookiePath {
		return true
	}
	if !strings.HasPrefix(reqPath, cookiePath) {
		return false
	}
	return strings.HasSuffix(cookiePath, "/") || reqPath[len(cookiePath)] == '/'
}

// defaultCookiePath is RFC 6265's default-path of a request path.
func defaultCookiePath(p string) string {
	if p == "" || p[0] != '/' {
		return "/"
	}
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/"
	}
	return p[:i]
}

// Generation counts the headers the view has taken so far: the redaction stage gathers its
// values again only after it changed.
func (v *CookieView) Generation() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.gen
}

// SiteValues returns the cookie values the view holds for the hosts and domains of site (a
// registrable domain, weburl.Site), for the redaction stage.
func (v *CookieView) SiteValues(site string) []string {
	if site == "" {
		return nil
	}
	sites := map[string]string{} // host or domain → its site
	siteOf := func(h string) string {
		s, ok := sites[h]
		if !ok {
			s = weburl.Site(h)
			sites[h] = s
		}
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for k, c := range v.stored {
		if c.value != "" && siteOf(k.domain) == site {
			out = append(out, c.value)
		}
	}
	for host, hc := range v.hosts {
		if siteOf(host) != site {
			continue
		}
		for _, sc := range hc.seen {
			if sc.value != "" {
				out = append(out, sc.value)
			}
		}
	}
	return out
}
