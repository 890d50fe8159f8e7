package proxy

import (
	"crypto/tls"
	"net"
	"net/http"
	"strings"

	"github.com/elazarl/goproxy"
)

// handleConnect decides what happens to a CONNECT: the magic host and every other host are
// intercepted with a leaf certificate from certs/; --no-mitm hosts are tunnelled untouched; with
// OnlyResolved, hosts that would need DNS are refused at once.
func (s *Server) handleConnect(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
	hostname := strings.ToLower(hostOnly(host))
	if hostname == "" {
		return s.refuseConnect(ctx, http.StatusBadRequest, "CONNECT without a host"), host
	}
	if isMagicHost(hostname) {
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
	return &goproxy.ConnectAction{
		Action: goproxy.ConnectMitm,
		TLSConfig: func(host string, ctx *goproxy.ProxyCtx) (*tls.Config, error) {
			return s.issuer.TLSConfig(host), nil
		},
	}
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

// hostOnly strips the port and IPv6 brackets from a host[:port].
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}
