package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/redact"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// Where the redaction stage's known values come from (proxy/internal/redact has what it does
// with them), gathered per chat by a chatRedactor, the agent.Redactor the proxy always gives a
// turn:
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
//     fetch/cookieview.go), and the Cookie, Set-Cookie, Authorization and Proxy-Authorization
//     header values it has seen for the site (fetch/credentials.go), on the browser's traffic
//     (a response tap) and on its own requests for rmx.fetch and http_request (whose
//     Set-Cookie the view does not take);
//   - the provider keys of the agent's settings.
//
// The site is the registrable domain of the chat's page (as for http_request). Values are
// bounded per page and per site; the set is compiled again only when it changed.

// chatRedactor is a chat turn's agent.Redactor: it gathers the secrets the proxy knows for the
// chat's page and site at each use and compiles them when they changed.
type chatRedactor struct {
	c    *chat
	keys []string // the provider keys when the turn started

	mu      sync.Mutex
	lastKey redactorKey // what the compiled set was gathered for
	last    []redact.Secret
	comp    *redact.Redactor
}

// redactorKey names the state a set of secrets was gathered from: when none of it changed, the
// set has not either, and gathering it again (every cookie of the view) is skipped.
type redactorKey struct {
	sessionID, host      string
	reports, creds, view uint64
}

var (
	_ agent.Redactor     = (*chatRedactor)(nil)
	_ agent.PageRedactor = (*chatRedactor)(nil)
)

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

// RedactPage implements agent.PageRedactor: a tool result loses payment card numbers too.
func (r *chatRedactor) RedactPage(text string) string { return r.current().RedactPage(text) }

// RedactPageLines is RedactPage for the lines of one text shown in part (find's outline): see
// redact.Redactor.RedactPageLines.
func (r *chatRedactor) RedactPageLines(lines []string) []string {
	return r.current().RedactPageLines(lines)
}

// Secret implements agent.Redactor.
func (r *chatRedactor) Secret(text string) string { return r.current().Secret(text) }

// current is the compiled set of the secrets known now.
func (r *chatRedactor) current() *redact.Redactor {
	h := r.c.hub
	r.c.mu.Lock()
	key := redactorKey{sessionID: r.c.sessionID, host: r.c.host}
	r.c.mu.Unlock()
	// Read before gathering: a change made meanwhile makes the next use gather again.
	key.reports = h.pages.SecretsGeneration()
	key.creds = h.fetch.Credentials().Generation()
	key.view = h.fetch.Cookies().Generation()
	if sess, ok := h.pages.Get(key.sessionID); ok {
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
		r.comp, r.last = redact.New(list), list
	}
	r.lastKey = key
	return r.comp
}

// collect gathers the accepted secrets for the chat now, sorted.
func (r *chatRedactor) collect() []redact.Secret {
	c := r.c
	h := c.hub
	c.mu.Lock()
	sessionID, host := c.sessionID, c.host
	c.mu.Unlock()
	site := ""
	if sess, ok := h.pages.Get(sessionID); ok {
		site = siteOfURL(sess.URL)
	}
	if site == "" && host != "" {
		site = weburl.Site(strings.TrimSuffix(strings.ToLower(host), "."))
	}
	var out []redact.Secret
	add := func(kind string, values ...string) {
		for _, v := range values {
			if redact.Accept(v, kind) {
				out = append(out, redact.Secret{Value: v, Kind: kind})
			}
			if kind == redact.KindCookie {
				// A cookie value is often percent-encoded; pages show it decoded.
				if d, err := url.QueryUnescape(v); err == nil && d != v && redact.Accept(d, kind) {
					out = append(out, redact.Secret{Value: d, Kind: kind})
				}
			}
		}
	}
	passwords, cookies := h.pages.Secrets(site, sessionID)
	add(redact.KindPassword, passwords...)
	add(redact.KindCookie, cookies...)
	auth, seen := h.fetch.Credentials().Site(site)
	add(redact.KindCookie, seen...)
	add(redact.KindCookie, h.fetch.Cookies().SiteValues(site)...)
	add(redact.KindAuth, auth...)
	add(redact.KindKey, r.keys...)
	slices.SortFunc(out, func(a, b redact.Secret) int {
		if c := strings.Compare(a.Value, b.Value); c != 0 {
			return c
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return slices.CompactFunc(out, func(a, b redact.Secret) bool { return a.Value == b.Value })
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
		settings, _ := e.c.hub.settings()
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
	e.c.hub.pages.Tool(ctx, sessionID, "report_secrets", nil)
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
func (e *chatEnv) refuseSecretAddress(ctx context.Context, sess page.Info, tool string, args json.RawMessage) error {
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

// siteOfURL is the registrable domain of an http(s) URL's host as the browser reads it, or "".
func siteOfURL(raw string) string {
	u, err := weburl.Parse(raw)
	if err != nil || !u.IsHTTP() {
		return ""
	}
	return u.Site()
}
