package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The page-agent channel: wss://remix.proxy/agent/ws?t=TOKEN. It carries page events (hello,
// SPA navigations, title) and remixlets' dom operations, their results, dom.on events and
// mutation notices (panel/protocol.go); it grants nothing. The session's URL comes from the signed
// token of the response the proxy rewrote, and the handshake's Origin (set by the browser, not
// by page script) must be that URL's origin.

// WebSocket close codes the page agent understands: it stops reconnecting on both.
const (
	closeBadToken websocket.StatusCode = 4401
	closeRefused  websocket.StatusCode = 4403
)

// agentMessage is one message from the page agent.
type agentMessage struct {
	Type  string `json:"type"`
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

// maxAgentMessage bounds one message from a page. A remixlet's dom.* answer may be as large as
// the sandbox accepts (sandbox.DefaultMaxMessageBytes) plus its envelope.
const maxAgentMessage = 260 << 10

func (s *Server) serveAgentWS(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true}) // Origin is checked below, against the token
	if err != nil {
		return // Accept has answered the client
	}
	defer c.CloseNow()
	c.SetReadLimit(maxAgentMessage)

	pageURL, err := s.sessions.verify(r.URL.Query().Get("t"))
	if err != nil {
		c.Close(closeBadToken, "unknown page token")
		return
	}
	if got, want := r.Header.Get("Origin"), httpx.OriginOf(pageURL); got != want {
		s.log.Warn("page agent refused: origin does not match its page", "origin", got, "page", want)
		c.Close(closeRefused, "origin does not match the page")
		return
	}

	sess := s.sessions.open(pageURL, c)
	defer s.pageToolsGone(sess.ID) // after sessions.close: waiting page tool calls fail (pagetools.go)
	s.pageToolsOpened(sess)
	s.counts.agentConnections.Add(1)
	defer s.sessions.close(sess)

	ctx := r.Context()
	if err := writeJSON(ctx, c, map[string]string{"type": "welcome", "session": sess.ID, "url": sess.URL, "panel": sess.panelToken}); err != nil {
		return
	}
	// The listeners hear of the page in the order they were added: opened now, gone before the
	// session is closed (its record is still there for them).
	for _, l := range s.pageListeners {
		l.Opened(ctx, sess)
	}
	defer func() {
		for _, l := range s.pageListeners {
			l.Gone(sess)
		}
	}()
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
			s.sessions.update(sess, func(x *session) { x.Title = httpx.Clip(m.Title, 512) })
		case "title":
			s.sessions.update(sess, func(x *session) { x.Title = httpx.Clip(m.Title, 512) })
		case "nav":
			// The page says where it went (history.pushState): kept as the browser reads it, and
			// only on the session's origin, so every later check reads the same address.
			u, err := weburl.Parse(m.URL)
			if err != nil || !u.IsHTTP() || u.Origin() != sess.Origin {
				writeJSON(ctx, c, map[string]string{"type": "error", "message": "navigation to another origin is not a same-page navigation; reload the page"})
				continue
			}
			s.sessions.update(sess, func(x *session) { x.URL = httpx.Clip(u.Href(), maxTokenURL) })
			for _, l := range s.pageListeners {
				l.Navigated(ctx, sess)
			}
		case "toolResult":
			s.pageToolResult(sess.ID, raw) // an answer to the agent's page tool (pagetools.go)
		case panel.TypeSecrets:
			// The page's password values, for the agent's redaction stage only: kept in memory
			// for this session, never logged (redact_sources.go).
			s.secrets.report(sess.ID, s.sessions.snapshot(sess).URL, raw)
		default:
			// Remixlet traffic (results of dom operations, events, page changes) goes to the
			// listeners (the runner takes it); anything else is ignored: newer page agents may
			// send more.
			for _, l := range s.pageListeners {
				l.Message(ctx, sess, m.Type, raw)
			}
		}
	}
}

// pageListener hears of every page session's life: the chats (chat_follow.go) and the remixlet
// runner (remixlets.go), added by New in that order. Opened is told once the page agent is
// welcomed, Navigated after a same-origin navigation updated the session's URL, Message of
// every message the channel does not handle itself, and Gone when the page agent disconnected,
// before the session is closed; each in the order the listeners were added.
type pageListener interface {
	Opened(ctx context.Context, sess *session)
	Navigated(ctx context.Context, sess *session)
	Message(ctx context.Context, sess *session, typ string, raw json.RawMessage)
	Gone(sess *session)
}

// panelState is what the panel is told about its page.
type panelState struct {
	Type      string `json:"type"`
	Connected bool   `json:"connected"`
	Session   string `json:"session"`
	URL       string `json:"url"`
	Title     string `json:"title"`
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
