package page

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// A page token is minted for each HTML response the proxy injects into and carried by the
// bootstrap tag. It is signed with the per-install secret and names the URL of the response the
// proxy rewrote, so the page agent that presents it is bound to that page (and, by the WebSocket
// Origin check, to that origin) whatever the page claims. Tokens are stateless: a page restored
// from the browser's cache, or open across a proxy restart, still connects. What the hub
// remembers is which token holds a live session, so that one token opens one (claims.go).
//
// Format: "v1." base64url(JSON{u,t,n}) "." base64url(HMAC-SHA256(secret, payload)).

const tokenVersion = "v1"

// maxTokenURL bounds the URL carried in a token; longer URLs keep only origin and path.
const maxTokenURL = 2048

// MaxSessionURL is the longest URL a page session carries (its token's, then its nav reports'):
// a longer address is never any session's URL, so nothing kept to be matched with one needs it.
const MaxSessionURL = maxTokenURL

type tokenClaims struct {
	URL    string `json:"u"`
	Issued int64  `json:"t"`
	// Serial tells apart two tokens for one URL in one second (two tabs opening it): each
	// token opens one session (claims.go).
	Serial uint64 `json:"n"`
}

// Config is what the page sessions need.
type Config struct {
	// Secret is the per-install secret that signs page tokens. Required.
	Secret []byte
	// Logger receives one line per notable event. If nil, slog.Default().
	Logger *slog.Logger
	// Now is the clock a token's age is read with (lifetime.go). If nil, time.Now.
	Now func() time.Time
}

// Hub is the table of page sessions, the token authority, and what belongs to each session: the
// page agent's channel (channel.go), the page tools' waiting calls (tools.go), the JSON
// responses recorded for the page (data.go) and the secrets the page reported (secrets.go).
// Use New.
type Hub struct {
	secret    []byte
	now       func() time.Time // Config.Now
	started   time.Time        // now() at New: resume keys' grace after a restart (lifetime.go)
	macs      sync.Pool        // of hash.Hash: HMAC-SHA256 keyed with secret, reset before each use
	log       *slog.Logger
	listeners []Listener

	mu     sync.Mutex
	byID   map[string]*Session
	panels map[string]string // panel token → session ID
	claims claimTable        // which token holds which live session (claims.go)

	connections atomic.Int64  // page agents that connected since start
	serial      atomic.Uint64 // the last token's serial; starts at a random value (New)
	tools       toolCalls
	data        records
	secrets     reports
}

// New makes an empty hub.
func New(cfg Config) *Hub {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Hub{secret: cfg.Secret, now: cfg.Now, started: cfg.Now(), log: cfg.Logger, byID: map[string]*Session{}, panels: map[string]string{},
		tools: toolCalls{pending: map[string]map[uint64]chan toolAnswer{}}, data: records{bySession: map[string]*sessionRecord{}},
		secrets: reports{bySession: map[string]*pageReport{}}, claims: newClaimTable()}
	var seed [8]byte
	rand.Read(seed[:])
	h.serial.Store(binary.LittleEndian.Uint64(seed[:]) >> 1) // tokens minted after a restart differ from those before
	return h
}

// Info is a page session's public facts at one moment: a copy, never the session's own state.
type Info struct {
	ID        string
	URL       string // from the token, then updated by same-origin SPA navigations
	Origin    string
	Title     string
	Connected bool
	Since     time.Time
}

// Session is one connected page agent: a page in a tab, from its first connection until it goes.
type Session struct {
	h          *Hub
	id         string
	panelToken string
	conn       *websocket.Conn
	tokenKey   string // the token it was opened with (claims.go); set by claim
	// firstSheets are the first-frame sheets the page agent holds (firstsheets.go); set at open.
	firstSheets map[string]int64

	// Guarded by h.mu.
	info     Info
	watchers map[chan struct{}]struct{} // panels following this session
	commands map[string]commandEntry    // remixlets' commands, by remixlet ID (commands.go)
}

// ID is the session's ID.
func (s *Session) ID() string { return s.id }

// Info returns a copy of the session's public facts.
func (s *Session) Info() Info {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	return s.info
}

// Send writes one message to the session's page agent.
func (s *Session) Send(ctx context.Context, v any) error {
	return writeJSON(ctx, s.conn, v)
}

// Mint returns a token for a page served from pageURL.
func (h *Hub) Mint(pageURL *url.URL, now time.Time) string {
	u := pageURL.String()
	if len(u) > maxTokenURL {
		short := *pageURL
		short.RawQuery, short.Fragment = "", ""
		u = short.String()
		if len(u) > maxTokenURL {
			u = pageURL.Scheme + "://" + pageURL.Host + "/"
		}
	}
	return h.mintToken(u, now.Unix(), h.serial.Add(1))
}

// mintToken writes the token of claims {u, issued, serial} in one buffer: the payload is the JSON
// json.Marshal writes for tokenClaims (written directly when u holds no byte JSON escapes, the
// usual case), and the MAC is taken over the token's own first bytes, "v1." and the payload.
// Every injected page mints one; this is json.Marshal, two encodings and a join without their
// allocations (TestMintTokenAgreesWithJSON).
func (h *Hub) mintToken(u string, issued int64, serial uint64) string {
	var raw [512]byte
	var payload []byte
	if jsonPlain(u) {
		payload = append(raw[:0], `{"u":"`...)
		payload = append(payload, u...)
		payload = append(payload, `","t":`...)
		payload = strconv.AppendInt(payload, issued, 10)
		payload = append(payload, `,"n":`...)
		payload = strconv.AppendUint(payload, serial, 10)
		payload = append(payload, '}')
	} else {
		payload, _ = json.Marshal(tokenClaims{URL: u, Issued: issued, Serial: serial})
	}
	enc := base64.RawURLEncoding
	tok := make([]byte, 0, len(tokenVersion)+2+enc.EncodedLen(len(payload))+enc.EncodedLen(sha256.Size))
	tok = append(tok, tokenVersion+"."...)
	tok = enc.AppendEncode(tok, payload)
	m, _ := h.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, h.secret)
	}
	m.Reset()
	m.Write(tok)
	var sum [sha256.Size]byte
	mac := m.Sum(sum[:0])
	h.macs.Put(m)
	tok = append(tok, '.')
	tok = enc.AppendEncode(tok, mac)
	return string(tok)
}

// jsonPlain reports whether json.Marshal writes s between its quotes unchanged: printable
// ASCII without the quote, the backslash, and the <, >, & it escapes for HTML.
func jsonPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// sign is HMAC-SHA256(secret, "v1." payload). The keyed MACs are pooled: every injected page
// mints a token, and keying a new one costs about as much as the rest of the injection's set-up.
func (h *Hub) sign(payload string) []byte {
	m, _ := h.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, h.secret)
	}
	m.Reset()
	io.WriteString(m, tokenVersion+".")
	io.WriteString(m, payload)
	sum := m.Sum(nil)
	h.macs.Put(m)
	return sum
}

// Verify checks a token's signature and returns the page URL it names. It does not look at
// the token's age: whether a token may still open a session is claim's decision (lifetime.go).
func (h *Hub) Verify(token string) (*url.URL, error) {
	u, _, err := h.verify(token)
	return u, err
}

// verify is Verify with the time the token was issued.
func (h *Hub) verify(token string) (*url.URL, time.Time, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != tokenVersion {
		return nil, time.Time{}, errors.New("verifying page token: malformed")
	}
	mac, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(mac, h.sign(parts[1])) {
		return nil, time.Time{}, errors.New("verifying page token: bad signature")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, time.Time{}, errors.New("verifying page token: malformed payload")
	}
	var c tokenClaims
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, time.Time{}, fmt.Errorf("verifying page token: %w", err)
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, time.Time{}, errors.New("verifying page token: bad URL")
	}
	return u, time.Unix(c.Issued, 0), nil
}

// newSession is a session for a connected page agent; claim enters it into the table.
func (h *Hub) newSession(pageURL *url.URL, conn *websocket.Conn, firstSheets map[string]int64) *Session {
	s := &Session{
		h:          h,
		id:         httpx.RandomID(),
		panelToken: httpx.RandomID(),
		conn:       conn,
		watchers:   map[chan struct{}]struct{}{},
	}
	s.firstSheets = firstSheets
	s.info = Info{ID: s.id, URL: pageURL.String(), Origin: pageOrigin(pageURL), Connected: true, Since: time.Now()}
	return s
}

// close ends a session when its page agent disconnects (or claim took it out already).
func (h *Hub) close(s *Session) {
	h.mu.Lock()
	h.dropLocked(s)
	h.mu.Unlock()
}

// update changes a session under the lock and tells its panels.
func (h *Hub) update(s *Session, f func(*Info)) {
	h.mu.Lock()
	f(&s.info)
	h.notifyLocked(s)
	h.mu.Unlock()
}

func (h *Hub) notifyLocked(s *Session) {
	for ch := range s.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Watch finds the session a panel belongs to by its panel token and registers ch to hear of
// its changes; the returned func stops that. ok is false for an unknown token.
func (h *Hub) Watch(panelToken string, ch chan struct{}) (s *Session, unwatch func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id, ok := h.panels[panelToken]
	if !ok {
		return nil, nil, false
	}
	s = h.byID[id]
	s.watchers[ch] = struct{}{}
	return s, func() {
		h.mu.Lock()
		delete(s.watchers, ch)
		h.mu.Unlock()
	}, true
}

// Get returns the public facts of the connected session id.
func (h *Hub) Get(id string) (Info, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.byID[id]
	if !ok {
		return Info{}, false
	}
	return s.info, true
}

// List returns the connected sessions, oldest first.
func (h *Hub) List() []Info {
	h.mu.Lock()
	out := make([]Info, 0, len(h.byID))
	for _, s := range h.byID {
		out = append(out, s.info)
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}

// Connections counts the page agents that connected since start.
func (h *Hub) Connections() int64 { return h.connections.Load() }

// CloseAll disconnects every page agent (on shutdown).
func (h *Hub) CloseAll() {
	h.mu.Lock()
	conns := make([]*websocket.Conn, 0, len(h.byID))
	for _, s := range h.byID {
		conns = append(conns, s.conn)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.Close(websocket.StatusGoingAway, "proxy shutting down")
	}
}

// pageOrigin is the origin of a page session's address as the browser reads it (weburl), the
// origin every same-origin check of the session compares with.
func pageOrigin(u *url.URL) string {
	if w, err := weburl.Parse(u.String()); err == nil && w.IsHTTP() {
		return w.Origin()
	}
	return httpx.OriginOf(u)
}

// ReloadWhere asks every connected page whose current URL satisfies match, but the session
// except (a chat's own tab, or ""), to reload itself (message {"type":"reload"}), so that
// changes a remixlet made are cleared after it is paused, restored, switched off or deleted.
// It returns how many pages were asked.
func (h *Hub) ReloadWhere(ctx context.Context, except string, match func(pageURL string) bool) int {
	h.mu.Lock()
	var conns []*websocket.Conn
	for _, s := range h.byID {
		if s.id != except && match(s.info.URL) {
			conns = append(conns, s.conn)
		}
	}
	h.mu.Unlock()
	for _, c := range conns {
		writeJSON(ctx, c, map[string]string{"type": "reload"})
	}
	return len(conns)
}

// SendWhere writes v to every connected page session that match accepts (in the order they
// connected) and reports how many it reached.
func (h *Hub) SendWhere(ctx context.Context, match func(Info) bool, v any) int {
	n := 0
	for _, s := range h.List() {
		if !s.Connected || !match(s) {
			continue
		}
		h.mu.Lock()
		full := h.byID[s.ID]
		h.mu.Unlock()
		if full == nil || full.conn == nil {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := writeJSON(wctx, full.conn, v)
		cancel()
		if err == nil {
			n++
		}
	}
	return n
}

// conn returns the connection and public facts of a connected session.
func (h *Hub) conn(id string) (*websocket.Conn, Info, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.byID[id]
	if !ok || !s.info.Connected {
		return nil, Info{}, false
	}
	return s.conn, s.info, true
}

func writeJSON(ctx context.Context, c *websocket.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.Write(ctx, websocket.MessageText, b)
}
