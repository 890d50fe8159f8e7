package page

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The page-agent channel: wss://remix.proxy/agent/ws, the page token in its subprotocol
// (agentCredentials). It carries page events (hello,
// SPA navigations, title) and remixlets' dom operations, their results, dom.on events and
// mutation notices (panel/protocol.go); it grants nothing. The session's URL comes from the signed
// token of the response the proxy rewrote, and the handshake's Origin (set by the browser, not
// by page script) must be that URL's origin.

// WebSocket close codes the page agent (and the panel) understand: they stop reconnecting on both.
const (
	CloseBadToken websocket.StatusCode = 4401
	CloseRefused  websocket.StatusCode = 4403
)

// agentMessage is one message from the page agent.
type agentMessage struct {
	Type  string `json:"type"`
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

// MaxMessage bounds one message from a page. A remixlet's dom.* answer may be as large as the
// sandbox accepts (sandbox.DefaultMaxMessageBytes) plus its envelope.
const MaxMessage = 260 << 10

// Listener hears of every page session's life: the chats and the remixlet runner (proxy.New
// adds them, in that order). Opened is told once the page agent is welcomed, Navigated after a
// same-origin navigation updated the session's URL, Message of every message the channel does
// not handle itself (remixlet traffic: results, events, mutation notices, readiness reports) and
// of each hello (it carries the document's readiness), and Gone when the
// page agent disconnected, before the session is closed (its record is still there); each in
// the order the listeners were added. A listener must not block: the page's messages wait.
type Listener interface {
	Opened(ctx context.Context, s *Session)
	Navigated(ctx context.Context, s *Session)
	Message(ctx context.Context, s *Session, typ string, raw json.RawMessage)
	Gone(s *Session)
}

// AddListener adds l to the listeners of every page session opened from now on. Call it before
// the proxy serves.
func (h *Hub) AddListener(l Listener) { h.listeners = append(h.listeners, l) }

// pingTimeout bounds how long a session has to answer a ping (claims.go).
const pingTimeout = 2 * time.Second

// answers reports whether s's page agent answers a ping: its socket is still there.
func (h *Hub) answers(s *Session) bool {
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	return s.conn.Ping(ctx) == nil
}

// ServeAgentWS is the page agent's channel (see the top of the file).
func (h *Hub) ServeAgentWS(w http.ResponseWriter, r *http.Request) {
	token, key, protocol, inAddress := agentCredentials(r)
	opts := &websocket.AcceptOptions{InsecureSkipVerify: true} // Origin is checked below, against the token
	if protocol != "" {
		opts.Subprotocols = []string{protocol} // the browser fails a socket whose offer is not answered
	}
	c, err := websocket.Accept(w, r, opts)
	if err != nil {
		return // Accept has answered the client
	}
	defer c.CloseNow()
	c.SetReadLimit(MaxMessage)

	if inAddress {
		c.Close(CloseBadToken, "a page token in the socket's address is not read; offer it as the subprotocol "+panel.AgentProtocolPrefix+"TOKEN")
		return
	}
	pageURL, issued, err := h.verify(token)
	if err != nil {
		c.Close(CloseBadToken, "unknown page token")
		return
	}
	if got, want := r.Header.Get("Origin"), httpx.OriginOf(pageURL); got != want {
		h.log.Warn("page agent refused: origin does not match its page", "origin", got, "page", want)
		c.Close(CloseRefused, "origin does not match the page")
		return
	}

	sess := h.newSession(pageURL, c, parseFirstSheets(r.URL.Query().Get(panel.FirstSheetsParam)))
	evicted, err := h.claim(token, issued, key, sess, h.answers) // claims.go
	if evicted != nil {
		go evicted.conn.Close(websocket.StatusNormalClosure, "the page agent reconnected") // Close waits for the peer's answer
	}
	if errors.Is(err, errTokenLive) {
		h.log.Info("page agent refused: its token's page is connected already (a copy from the browser's cache, or a page that read the token)", "page", httpx.Clip(pageURL.String(), 200))
	}
	if errors.Is(err, errBadResume) {
		c.Close(CloseBadToken, err.Error())
		return
	}
	if err != nil {
		c.Close(CloseRefused, err.Error())
		return
	}
	defer h.ended(sess.id) // after close: waiting page tool calls fail, the page's records go
	h.opened(sess)
	h.connections.Add(1)
	defer h.close(sess)

	ctx := r.Context()
	info := sess.Info()
	welcome := panel.Welcome{Type: panel.TypeWelcome, Session: sess.id, URL: info.URL, Panel: sess.panelToken, Resume: h.ResumeKey(token)}
	if err := writeJSON(ctx, c, welcome); err != nil {
		return
	}
	for _, l := range h.listeners {
		l.Opened(ctx, sess)
	}
	defer func() {
		for _, l := range h.listeners {
			l.Gone(sess)
		}
	}()
	navs := newNavRate(time.Now())
	for {
		_, raw, err := c.Read(ctx)
		if err != nil {
			return
		}
		var m agentMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			c.Close(websocket.StatusUnsupportedData, "messages are JSON objects")
			return
		}
		switch m.Type {
		case "hello":
			h.update(sess, func(x *Info) { x.Title = httpx.Clip(m.Title, 512) })
			// The listeners hear the hello too: it says how far the document is (the
			// remixlets' run times, panel.Hello.Ready).
			for _, l := range h.listeners {
				l.Message(ctx, sess, m.Type, raw)
			}
		case "title":
			h.update(sess, func(x *Info) { x.Title = httpx.Clip(m.Title, 512) })
		case "nav":
			// The page says where it went (history.pushState): kept as the browser reads it, and
			// only on the session's origin, so every later check reads the same address. Never
			// with a user name or password: pushState cannot add them (the browser throws), so
			// only a page writing to its own session would (red-team pass 3).
			u, err := weburl.Parse(m.URL)
			if err != nil || !u.IsHTTP() || u.Origin() != info.Origin || u.HasCredentials() {
				writeJSON(ctx, c, map[string]string{"type": "error", "message": "navigation to another origin is not a same-page navigation; reload the page"})
				continue
			}
			h.update(sess, func(x *Info) { x.URL = httpx.Clip(u.Href(), maxTokenURL) })
			// The listeners hear of it at a bounded rate (navrate.go).
			switch now, after := navs.take(time.Now()); {
			case now:
				h.navigated(ctx, sess)
			case after > 0:
				time.AfterFunc(after, func() {
					navs.fire()
					if _, live := h.Get(sess.id); live {
						h.navigated(ctx, sess)
					}
				})
			}
		case "toolResult":
			h.toolResult(sess.id, raw) // an answer to the agent's page tool (tools.go)
		case panel.TypeSecrets:
			// The page's password values, for the agent's redaction stage only: kept in memory
			// for this session, never logged (secrets.go).
			h.secrets.report(sess.id, sess.Info().URL, raw)
		default:
			// Remixlet traffic (results of dom operations, events, page changes) goes to the
			// listeners (the runner takes it); anything else is ignored: newer page agents may
			// send more.
			for _, l := range h.listeners {
				l.Message(ctx, sess, m.Type, raw)
			}
		}
	}
}

// navigated tells the listeners that sess's page went to a new address of its origin.
func (h *Hub) navigated(ctx context.Context, sess *Session) {
	for _, l := range h.listeners {
		l.Navigated(ctx, sess)
	}
}

// opened runs when a page agent connects: JSON responses its page loaded before then are
// attributed to it (data.go).
func (h *Hub) opened(s *Session) {
	info := s.Info()
	h.dataOpened(info.ID, info.URL, info.Origin)
}

// ended runs when a page agent has disconnected and its session is closed: its waiting page
// tool calls fail, and its recorded responses and reported secrets are dropped.
func (h *Hub) ended(sessionID string) {
	h.tools.gone(sessionID)
	h.dataGone(sessionID)
	h.secrets.dropSession(sessionID)
}

// agentCredentials is the page token and resume key a page agent's socket carries, and the
// subprotocol they came in (to be answered): the page agent offers one subprotocol,
// panel.AgentProtocolPrefix + token [+ "~" + key], and never puts either in the address, which
// the browser reports to a page whose policy blocks or reports the socket (pass 4a). The
// address form (?t=, &k=) that tools and tests once used is no longer read: a socket whose
// address carries either is refused (inAddress), so that no client goes on sending a token
// where the browser hands it to the page.
func agentCredentials(r *http.Request) (token, key, protocol string, inAddress bool) {
	q := r.URL.Query()
	inAddress = q.Has(panel.TokenParam) || q.Has("k")
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			p = strings.TrimSpace(p)
			rest, ok := strings.CutPrefix(p, panel.AgentProtocolPrefix)
			if !ok {
				continue
			}
			token, key, _ = strings.Cut(rest, "~")
			return token, key, p, inAddress
		}
	}
	return "", "", "", inAddress
}
