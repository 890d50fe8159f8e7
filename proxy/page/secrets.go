package page

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The secrets pages report, for the agent's redaction stage: the page agent sends the page's
// password values on its own channel ({type:"secrets", fields:[{id, value}], cookies:[…]}, sent
// before each tool's answer and when a password field changes: panel/pageagent/tool_secrets.js),
// with the values of the page's script-visible cookies. Each field keeps its last value that was
// not empty (a value typed a moment ago stays known after the page clears the field; the letters
// of a value being typed replace each other). They are held in memory for that page session
// only, dropped when it ends, and never stored, logged or traced. A chat uses those of every
// open page of its site (Hub.Secrets).

const (
	maxSecretFields   = 32   // password fields remembered per page session
	maxPageCookies    = 64   // script-visible cookie values remembered per page session
	maxSecretsMessage = 64   // entries taken from one report
	maxReportedValue  = 1024 // bytes of a reported password value (longer ones are cut)
	maxReportedCookie = 4096 // bytes of a reported cookie value, as browsers bound a cookie
)

// reports holds the values pages reported.
type reports struct {
	mu        sync.Mutex
	gen       uint64 // counts the changes, so a redactor compiles again only after one
	bySession map[string]*pageReport
}

// pageReport is what one page session's page agent reported.
type pageReport struct {
	site    string
	fields  map[int64]string // password field → its last non-empty value
	order   []int64          // fields, oldest first
	cookies []string         // script-visible cookie values, oldest first
}

// report takes a page agent's secrets message for its session, whose page is pageURL. A
// message that does not parse is ignored: nothing about it is logged.
func (ss *reports) report(sessionID, pageURL string, raw []byte) {
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
		p.cookies = append(p.cookies, httpx.Clip(c, maxReportedCookie))
		if len(p.cookies) > maxPageCookies {
			p.cookies = p.cookies[1:]
		}
	}
}

// dropSession forgets what a page session reported (it ended).
func (ss *reports) dropSession(sessionID string) {
	ss.mu.Lock()
	delete(ss.bySession, sessionID)
	ss.gen++
	ss.mu.Unlock()
}

// Secrets returns the passwords and cookies reported by the page session and every open page of
// site (a registrable domain, weburl.Site), for the agent's redaction stage.
func (h *Hub) Secrets(site, sessionID string) (passwords, cookies []string) {
	return h.secrets.site(site, sessionID)
}

// SecretsGeneration counts the changes to the reported secrets so far: the redaction stage
// gathers its values again only after it changed.
func (h *Hub) SecretsGeneration() uint64 { return h.secrets.generation() }

// site returns the passwords and cookies reported by the page session and every open page of
// the site.
func (ss *reports) site(site, sessionID string) (passwords, cookies []string) {
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
	return passwords, cookies
}

// generation counts the changes so far.
func (ss *reports) generation() uint64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.gen
}

// siteOfURL is the registrable domain of an http(s) URL's host as the browser reads it, or "".
func siteOfURL(raw string) string {
	u, err := weburl.Parse(raw)
	if err != nil || !u.IsHTTP() {
		return ""
	}
	return u.Site()
}
