package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// Where the redaction stage's known values come from (redact.go has what it does with them),
// gathered per chat by a chatRedactor, the agent.Redactor the proxy always gives a turn:
//
//   - the page's password values: the page agent reports them on its own channel
//     ({type:"secrets", fields:[{id, value}], cookies:[…]}, sent before each tool's answer and
//     when a password field changes: panel/pageagent/tool_secrets.js), with the values of the
//     page's script-visible cookies. Each field keeps its last value that was not empty (a value
//     typed a moment ago stays known after the page clears the field; the letters of a value
//     being typed replace each other). They are held in memory for that page session only,
//     dropped when it ends, and never stored, logged or traced. A chat uses those of every open
//     page of its site;
//   - every cookie value the proxy has seen for the chat's site (the cookie view,
//     cookieview.go), and the Cookie, Set-Cookie, Authorization and Proxy-Authorization header
//     values it has seen for the site, on the browser's traffic (pipeline.go) and on its own
//     requests for rmx.fetch and http_request (whose Set-Cookie the view does not take);
//   - the provider keys of the agent's settings.
//
// The site is the registrable domain of the chat's page (as for http_request). Values are
// bounded per page and per site; the set is compiled again only when it changed.

const (
	maxSecretFields   = 32   // password fields remembered per page session
	maxPageCookies    = 64   // script-visible cookie values remembered per page session
	maxSecretsMessage = 64   // entries taken from one report
	maxReportedValue  = 1024 // bytes of a reported password value (longer ones are cut)
	maxHeaderSites    = 256  // sites whose header values are kept
	maxHeaderAuth     = 16   // authorization values kept per site
	maxHeaderCookies  = 128  // cookie values from headers kept per site
)

// secretSources holds the values pages reported and the values seen in the sites' headers. The
// zero value is not usable; use newSecretSources.
type secretSources struct {
	mu        sync.Mutex
	gen       uint64 // counts the changes, so a redactor compiles again only after one
	bySession map[string]*pageReport
	bySite    map[string]*siteHeaderValues
}

// pageReport is what one page session's page agent reported.
type pageReport struct {
	site    string
	fields  map[int64]string // password field → its last non-empty value
	order   []int64          // fields, oldest first
	cookies []string         // script-visible cookie values, oldest first
}

// siteHeaderValues are the credential values seen in one site's headers.
type siteHeaderValues struct {
	used    time.Time
	auth    []string
	cookies []string
}

func newSecretSources() *secretSources {
	return &secretSources{bySession: map[string]*pageReport{}, bySite: map[string]*siteHeaderValues{}}
}

// report takes a page agent's secrets message for its session, whose page is pageURL. A
// message that does not parse is ignored: nothing about it is logged.
func (ss *secretSources) report(sessionID, pageURL string, raw []byte) {
	var m panel.Secrets
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	site := siteOfURL(pageURL)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.gen++
	p := ss.bySession[sessionID]
	if p == nil {
		p = &pageReport{fields: map[int64]string{}}
		ss.bySession[sessionID] = p
	}
	p.site = site
	for i, f := range m.Fields {
		if i >= maxSecretsMessage {
			break
		}
		if f.Value == "" {
			continue // a cleared field keeps the value it had
		}
		v := httpx.Clip(f.Value, maxReportedValue)
		if _, ok := p.fields[f.ID]; ok {
			p.order = slices.DeleteFunc(p.order, func(id int64) bool { return id == f.ID })
		}
		p.fields[f.ID] = v
		p.order = append(p.order, f.ID)
		for len(p.order) > maxSecretFields {
			delete(p.fields, p.order[0])
			p.order = p.order[1:]
		}
	}
	for i, c := range m.Cookies {
		if i >= maxSecretsMessage {
			break
		}
		if c == "" || slices.Contains(p.cookies, c) {
			continue
		}
		p.cookies = append(p.cookies, httpx.Clip(c, maxViewCookieBytes))
		if len(p.cookies) > maxPageCookies {
			p.cookies = p.cookies[1:]
		}
	}
}

// dropSession forgets what a page session reported (it ended).
func (ss *secretSources) dropSession(sessionID string) {
	ss.mu.Lock()
	delete(ss.bySession, sessionID)
	ss.gen++
	ss.mu.Unlock()
}

// observe takes the credential header values of a request (as sent upstream) and its
// response: Authorization, Proxy-Authorization, Cookie and Set-Cookie. It only reads them.
func (ss *secretSources) observe(resp *http.Response) {
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
	ss.addSiteValues(siteOfURL(req.URL.String()), auth, cookies)
}

// addSiteValues records header values seen for site.
func (ss *secretSources) addSiteValues(site string, auth, cookies []string) {
	if site == "" {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.gen++
	h := ss.bySite[site]
	if h == nil {
		if len(ss.bySite) >= maxHeaderSites {
			oldest := ""
			for s, v := range ss.bySite {
				if oldest == "" || v.used.Before(ss.bySite[oldest].used) {
					oldest = s
				}
			}
			delete(ss.bySite, oldest)
		}
		h = &siteHeaderValues{}
		ss.bySite[site] = h
	}
	h.used = time.Now()
	h.auth = addBounded(h.auth, auth, maxHeaderAuth)
	h.cookies = addBounded(h.cookies, cookies, maxHeaderCookies)
}

// addBounded appends the new values of add to list (moving seen ones to the end), keeping the
// last n.
func addBounded(list, add []string, n int) []string {
	for _, v := range add {
		if v == "" || len(v) > maxSecretLen {
			continue
		}
		list = slices.DeleteFunc(list, func(x string) bool { return x == v })
		list = append(list, v)
	}
	if len(list) > n {
		list = append([]string(nil), list[len(list)-n:]...)
	}
	return list
}

// site returns the known values for a site and a page session: the passwords and cookies
// reported by that session and every open page of the site, and the site's header values.
func (ss *secretSources) site(site, sessionID string) (passwords, cookies, auth []string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for id, p := range ss.bySession {
		if id != sessionID && (site == "" || p.site != site) {
			continue
		}
		for _, v := range p.fields {
			passwords = append(passwords, v)
		}
		cookies = append(cookies, p.cookies...)
	}
	if h := ss.bySite[site]; h != nil && site != "" {
		auth = append(auth, h.auth...)
		cookies = append(cookies, h.cookies...)
	}
	return passwords, cookies, auth
}

// generation counts the changes so far.
func (ss *secretSources) generation() uint64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.gen
}

// generation counts the headers the view has taken so far.
func (v *cookieView) generation() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.gen
}

// siteValues returns the cookie values the view holds for hosts and domains of site.
func (v *cookieView) siteValues(site string) []string {
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

// siteOfURL is the registrable domain of an http(s) URL's host as the browser reads it, or "".
func siteOfURL(raw string) string {
	u, err := weburl.Parse(raw)
	if err != nil || !u.IsHTTP() {
		return ""
	}
	return u.Site()
}

// chatRedactor is a chat turn's agent.Redactor: it gathers the secrets the proxy knows for the
// chat's page and site at each use and compiles them when they changed.
type chatRedactor struct {
	c    *chat
	keys []string // the provider keys when the turn started

	mu      sync.Mutex
	lastKey redactorKey // what the compiled set was gathered for
	last    []secret
	comp    *redactor
}

// redactorKey names the state a set of secrets was gathered from: when none of it changed, the
// set has not either, and gathering it again (every cookie of the view) is skipped.
type redactorKey struct {
	sessionID, host string
	sources, view   uint64
}

var _ agent.Redactor = (*chatRedactor)(nil)

// newRedactor returns the redactor for a turn of c; settings give the provider keys.
func (c *chat) newRedactor(settings *agent.Settings) *chatRedactor {
	r := &chatRedactor{c: c}
	if settings != nil {
		for _, p := range settings.Providers {
			if p.APIKey != "" {
				r.keys = append(r.keys, p.APIKey)
			}
		}
	}
	return r
}

// Redact implements agent.Redactor.
func (r *chatRedactor) Redact(text string) string { return r.current().Redact(text) }

// Secret implements agent.Redactor.
func (r *chatRedactor) Secret(text string) string { return r.current().Secret(text) }

// current is the compiled set of the secrets known now.
func (r *chatRedactor) current() *redactor {
	s := r.c.hub.s
	r.c.mu.Lock()
	key := redactorKey{sessionID: r.c.sessionID, host: r.c.host}
	r.c.mu.Unlock()
	// Read before gathering: a change made meanwhile makes the next use gather again.
	key.sources = s.secrets.generation()
	if s.rmxNet != nil {
		key.view = s.rmxNet.cookies.generation()
	}
	if sess, ok := s.sessions.get(key.sessionID); ok {
		key.host = sess.URL // the page's address decides its site
	}
	r.mu.Lock()
	if r.comp != nil && key == r.lastKey {
		defer r.mu.Unlock()
		return r.comp
	}
	r.mu.Unlock()
	list := r.collect()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.comp == nil || !slices.Equal(list, r.last) {
		r.comp, r.last = newRedactor(list), list
	}
	r.lastKey = key
	return r.comp
}

// collect gathers the accepted secrets for the chat now, sorted.
func (r *chatRedactor) collect() []secret {
	c := r.c
	s := c.hub.s
	c.mu.Lock()
	sessionID, host := c.sessionID, c.host
	c.mu.Unlock()
	site := ""
	if sess, ok := s.sessions.get(sessionID); ok {
		site = siteOfURL(sess.URL)
	}
	if site == "" && host != "" {
		site = weburl.Site(viewHost(host))
	}
	var out []secret
	add := func(kind string, values ...string) {
		for _, v := range values {
			if acceptSecret(v, kind) {
				out = append(out, secret{v, kind})
			}
			if kind == kindCookie {
				// A cookie value is often percent-encoded; pages show it decoded.
				if d, err := url.QueryUnescape(v); err == nil && d != v && acceptSecret(d, kind) {
					out = append(out, secret{d, kind})
				}
			}
		}
	}
	passwords, cookies, auth := s.secrets.site(site, sessionID)
	add(kindPassword, passwords...)
	add(kindCookie, cookies...)
	if s.rmxNet != nil {
		add(kindCookie, s.rmxNet.cookies.siteValues(site)...)
	}
	add(kindAuth, auth...)
	add(kindKey, r.keys...)
	slices.SortFunc(out, func(a, b secret) int {
		if c := strings.Compare(a.value, b.value); c != 0 {
			return c
		}
		return strings.Compare(a.kind, b.kind)
	})
	return slices.CompactFunc(out, func(a, b secret) bool { return a.value == b.value })
}

// withArticle is a kind of secret with its indefinite article: "a password", "an authorization".
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// redactor is the turn's redactor; a chatEnv made without one gets one (never none).
func (e *chatEnv) redactor() *chatRedactor {
	if e.red == nil {
		settings, _ := e.c.hub.s.chatSettings()
		e.red = e.c.newRedactor(settings)
	}
	return e.red
}

// refreshSecrets asks the page agent for its password values now (the page tool
// report_secrets answers nothing; the page agent reports before every answer), so that a
// value a page script set without an event is known before the proxy sends or fetches
// anything for the agent. A page that does not answer in time changes nothing.
func (e *chatEnv) refreshSecrets(ctx context.Context, sessionID string) {
	ctx, cancel := context.WithTimeout(ctx, secretsRefreshTimeout)
	defer cancel()
	e.c.hub.s.pageTool(ctx, sessionID, "report_secrets", nil)
}

// secretsRefreshTimeout bounds refreshSecrets.
const secretsRefreshTimeout = 3 * time.Second

// refuseSecret is the check every address the agent builds passes in Go before anything is
// sent (navigate and open_page resolved against the page, http_request's address, headers and
// body): a text carrying a known secret is refused with a tool error naming its kind.
func (e *chatEnv) refuseSecret(tool, what string, texts ...string) error {
	red := e.redactor()
	for _, t := range texts {
		if kind := red.Secret(t); kind != "" {
			return &agent.ToolError{Message: fmt.Sprintf("%s refused: a secret was in the %s (%s value the proxy knows); nothing was sent. Secrets never leave through the agent.", tool, what, withArticle(kind))}
		}
	}
	return nil
}

// refuseSecretAddress checks the address of navigate or open_page, as given and as the browser
// reads it against the page (weburl: the address that would be requested, where case folding,
// fullwidth letters, tabs and escapes in the given text are undone).
func (e *chatEnv) refuseSecretAddress(ctx context.Context, sess session, tool string, args json.RawMessage) error {
	var a struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(args, &a) != nil || strings.TrimSpace(a.URL) == "" {
		return nil // the tool refuses it in its own words
	}
	e.refreshSecrets(ctx, sess.ID)
	texts := []string{a.URL}
	if page, err := weburl.Parse(sess.URL); err == nil {
		if u, err := weburl.Resolve(page, a.URL); err == nil {
			texts = append(texts, u.Href())
		}
	}
	return e.refuseSecret(tool, "address", texts...)
}
