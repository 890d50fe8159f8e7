package proxy

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/elazarl/goproxy"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// newConnectHandler is goproxy configured for CONNECT only: it parses and answers the CONNECT,
// runs handleConnect, tunnels --no-mitm hosts with half-close handling, and hands intercepted
// connections to hijackMITM.
func (s *Server) newConnectHandler() *goproxy.ProxyHttpServer {
	gp := goproxy.NewProxyHttpServer()
	gp.Logger = goproxyLogger{s.log}
	gp.Tr = s.upstream
	gp.ConnectDialWithReq = func(req *http.Request, network, addr string) (net.Conn, error) {
		return s.dialUpstream(req.Context(), network, addr)
	}
	gp.OnRequest().HandleConnectFunc(s.handleConnect)
	return gp
}

// handleConnect decides what happens to a CONNECT: the magic host and every other host are
// intercepted; --no-mitm hosts are tunnelled untouched; with OnlyResolved, hosts that would need
// DNS are refused at once.
func (s *Server) handleConnect(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
	hostname := strings.ToLower(httpx.HostOnly(host))
	if hostname == "" {
		return s.refuseConnect(ctx, http.StatusBadRequest, "CONNECT without a host"), host
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(hostname, "443")
	}
	if httpx.IsMagicHost(hostname) {
		return s.mitmAction(), host
	}
	if s.cfg.OnlyResolved && !s.resolvable(host) {
		return s.refuseConnect(ctx, http.StatusBadGateway, "host not in --resolve (offline mode)"), host
	}
	if matchHostPatterns(s.cfg.NoMITM, hostname) {
		return goproxy.OkConnect, host
	}
	return s.mitmAction(), host
}

func (s *Server) mitmAction() *goproxy.ConnectAction {
	return &goproxy.ConnectAction{Action: goproxy.ConnectHijack, Hijack: s.hijackMITM}
}

// refuseConnect answers a CONNECT with status and reason and closes the connection.
func (s *Server) refuseConnect(ctx *goproxy.ProxyCtx, status int, reason string) *goproxy.ConnectAction {
	ctx.Resp = goproxy.NewResponse(ctx.Req, goproxy.ContentTypeText, status, "remixproxy: "+reason+"\n")
	ctx.Resp.Header.Set("Connection", "close")
	return goproxy.RejectConnect
}

// matchHostPatterns reports whether host matches one of patterns: "example.com" matches exactly,
// "*.example.com" matches any subdomain (not example.com itself), "*" matches everything.
func matchHostPatterns(patterns []string, host string) bool {
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		switch {
		case p == "*":
			return true
		case strings.HasPrefix(p, "*."):
			if strings.HasSuffix(host, p[1:]) {
				return true
			}
		case p == host:
			return true
		}
	}
	return false
}

// goproxyLogger sends goproxy's own warnings (a client that went away, a failed handshake) to
// the debug level: they are routine for a browser's proxy and never actionable one by one.
type goproxyLogger struct{ log *slog.Logger }

func (l goproxyLogger) Printf(format string, args ...any) {
	l.log.Debug(strings.TrimSpace(fmt.Sprintf(format, args...)), "from", "goproxy")
}
