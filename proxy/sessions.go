package proxy

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// A page token is minted for each HTML response the proxy injects into and carried by the
// bootstrap tag. It is signed with the per-install secret and names the URL of the response the
// proxy rewrote, so the page agent that presents it is bound to that page (and, by the WebSocket
// Origin check, to that origin) whatever the page claims. Tokens are stateless: a page restored
// from the browser's cache, or open across a proxy restart, still connects.
//
// Format: "v1." base64url(JSON{u,t}) "." base64url(HMAC-SHA256(secret, payload)).

const tokenVersion = "v1"

// maxTokenURL bounds the URL carried in a token; longer URLs keep only origin and path.
const maxTokenURL = 2048

type tokenClaims struct {
	URL    string `json:"u"`
	Issued int64  `json:"t"`
}

// loadSecret reads the per-install secret from dir, creating it (0600) if missing. With no dir, a
// fresh random secret is returned.
func loadSecret(dir string) ([]byte, error) {
	fresh := func() ([]byte, error) {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("making secret: %w", err)
		}
		return b, nil
	}
	if dir == "" {
		return fresh()
	}
	path := filepath.Join(dir, "secret")
	if b, err := os.ReadFile(path); err == nil {
		raw, derr := hex.DecodeString(strings.TrimSpace(string(b)))
		if derr != nil || len(raw) < 32 {
			return nil, fmt.Errorf("reading secret %s: not 64 hex digits; delete the file to make a new one (open pages will reconnect after a reload)", path)
		}
		return raw, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading secret: %w", err)
	}
	b, err := fresh()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("writing secret: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("writing secret: %w", err)
	}
	return b, nil
}

// session is one connected page agent: a page in a tab, from its first connection until it goes.
type session struct {
	ID        string
	URL       string // from the token, then updated by same-origin SPA navigations
	Origin    string
	Title     string
	Connected bool
	Since     time.Time

	panelToken string
	conn       *websocket.Conn
	watchers   map[chan struct{}]struct{} // panels following this session
}

// sessions is the table of page sessions and the token authority.
type sessions struct {
	secret []byte

	mu     sync.Mutex
	byID   map[string]*session
	panels map[string]string // panel token → session ID
}

func newSessions(secret []byte) *sessions {
	return &sessions{secret: secret, byID: map[string]*session{}, panels: map[string]string{}}
}

// mint returns a token for a page served from pageURL.
func (ss *sessions) mint(pageURL *url.URL, now time.Time) string {
	u := pageURL.String()
	if len(u) > maxTokenURL {
		short := *pageURL
		short.RawQuery, short.Fragment = "", ""
		u = short.String()
		if len(u) > maxTokenURL {
			u = pageURL.Scheme + "://" + pageURL.Host + "/"
		}
	}
	payload, _ := json.Marshal(tokenClaims{URL: u, Issued: now.Unix()})
	p := base64.RawURLEncoding.EncodeToString(payload)
	return tokenVersion + "." + p + "." + base64.RawURLEncoding.EncodeToString(ss.sign(p))
}

func (ss *sessions) sign(payload string) []byte {
	m := hmac.New(sha256.New, ss.secret)
	m.Write([]byte(tokenVersion + "." + payload))
	return m.Sum(nil)
}

// verify checks a token's signature and returns the page URL it names.
func (ss *sessions) verify(token string) (*url.URL, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != tokenVersion {
		return nil, errors.New("verifying page token: malformed")
	}
	mac, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(mac, ss.sign(parts[1])) {
		return nil, errors.New("verifying page token: bad signature")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, errors.New("verifying page token: malformed payload")
	}
	var c tokenClaims
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("verifying page token: %w", err)
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, errors.New("verifying page token: bad URL")
	}
	return u, nil
}

// open starts a session for a connected page agent.
func (ss *sessions) open(pageURL *url.URL, conn *websocket.Conn) *session {
	s := &session{
		ID:         randomID(),
		URL:        pageURL.String(),
		Origin:     pageOrigin(pageURL),
		Connected:  true,
		Since:      time.Now(),
		panelToken: randomID(),
		conn:       conn,
		watchers:   map[chan struct{}]struct{}{},
	}
	ss.mu.Lock()
	ss.byID[s.ID] = s
	ss.panels[s.panelToken] = s.ID
	ss.mu.Unlock()
	return s
}

// close ends a session when its page agent disconnects.
func (ss *sessions) close(s *session) {
	ss.mu.Lock()
	s.Connected = false
	delete(ss.byID, s.ID)
	delete(ss.panels, s.panelToken)
	ss.notifyLocked(s)
	ss.mu.Unlock()
}

// update changes a session under the lock and tells its panels.
func (ss *sessions) update(s *session, f func(*session)) {
	ss.mu.Lock()
	f(s)
	ss.notifyLocked(s)
	ss.mu.Unlock()
}

func (ss *sessions) notifyLocked(s *session) {
	for ch := range s.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// byPanelToken finds the session a panel belongs to and registers ch to hear of its changes.
func (ss *sessions) watch(panelToken string, ch chan struct{}) (*session, func(), bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	id, ok := ss.panels[panelToken]
	if !ok {
		return nil, nil, false
	}
	s := ss.byID[id]
	s.watchers[ch] = struct{}{}
	return s, func() {
		ss.mu.Lock()
		delete(s.watchers, ch)
		ss.mu.Unlock()
	}, true
}

// snapshot returns a copy of s's public fields under the lock.
func (ss *sessions) snapshot(s *session) session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return session{ID: s.ID, URL: s.URL, Origin: s.Origin, Title: s.Title, Connected: s.Connected, Since: s.Since}
}

// get returns a copy of the public fields of the connected session id.
func (ss *sessions) get(id string) (session, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byID[id]
	if !ok {
		return session{}, false
	}
	return session{ID: s.ID, URL: s.URL, Origin: s.Origin, Title: s.Title, Connected: s.Connected, Since: s.Since}, true
}

// list returns the connected sessions, oldest first.
func (ss *sessions) list() []session {
	ss.mu.Lock()
	out := make([]session, 0, len(ss.byID))
	for _, s := range ss.byID {
		out = append(out, session{ID: s.ID, URL: s.URL, Origin: s.Origin, Title: s.Title, Connected: s.Connected, Since: s.Since})
	}
	ss.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}

// closeAll disconnects every page agent (on shutdown).
func (ss *sessions) closeAll() {
	ss.mu.Lock()
	conns := make([]*websocket.Conn, 0, len(ss.byID))
	for _, s := range ss.byID {
		conns = append(conns, s.conn)
	}
	ss.mu.Unlock()
	for _, c := range conns {
		c.Close(websocket.StatusGoingAway, "proxy shutting down")
	}
}

func randomID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("reading random bytes: %v", err)) // the OS random source never fails on supported systems
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// pageOrigin is the origin of a page session's address as the browser reads it (weburl), the
// origin every same-origin check of the session compares with.
func pageOrigin(u *url.URL) string {
	if w, err := weburl.Parse(u.String()); err == nil && w.IsHTTP() {
		return w.Origin()
	}
	return httpx.OriginOf(u)
}

// reloadPages asks every connected page whose current URL satisfies match to reload itself
// (message {"type":"reload"}), so that changes a remixlet made are cleared after it is paused,
// restored, switched off or deleted. It returns how many pages were asked.
func (ss *sessions) reloadPages(ctx context.Context, match func(pageURL string) bool) int {
	return ss.reloadPagesExcept(ctx, "", match)
}

// reloadPagesExcept is reloadPages leaving out the session except (a chat's own tab).
func (ss *sessions) reloadPagesExcept(ctx context.Context, except string, match func(pageURL string) bool) int {
	ss.mu.Lock()
	var conns []*websocket.Conn
	for _, s := range ss.byID {
		if s.ID != except && match(s.URL) {
			conns = append(conns, s.conn)
		}
	}
	ss.mu.Unlock()
	for _, c := range conns {
		writeJSON(ctx, c, map[string]string{"type": "reload"})
	}
	return len(conns)
}
