package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// newUpstreamTransport is the client side towards real sites: TLS verified against the system
// roots (or cfg.UpstreamRoots), compression left to the browser. The upstream protocol follows
// the browser's: a request the browser sent over HTTP/2 goes out over HTTP/2 when the site offers
// it, as the browser would have sent it without the proxy; a request that came over HTTP/1.x
// (or plain http://, or a WebSocket upgrade) goes out over HTTP/1.1. Go's HTTP/2 client costs
// more per request than its HTTP/1.1 client (the request is written by a goroutine of its own,
// the response handed over by the connection's read loop, body bytes through a pipe), and the
// site's HTTP/2 server more than its HTTP/1.1 one: with HTTP/1.1 browsers on the bench (e2e/bench)
// small pages went ~25% and 200 KB pages ~35% faster. HTTP/2 browsers (Chromium) keep HTTP/2
// upstream: one multiplexed connection per site rather than one per concurrent request.
//
// The returned transport speaks HTTP/1.1 only; the HTTP/2-capable one is registered in it for
// https (browserProtocol), so one CloseIdleConnections closes the idle connections of both
// (TestUpstreamProtocolFollowsBrowser checks that).
//
// dial is dialPublic (every request goes first to public addresses only), or dialUpstream for
// the requests that may reach a local address and did (localnet.go): one pair of transports
// each, so their connections are never shared.
func (s *Server) newUpstreamTransport(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	h1 := s.upstreamTransport(false, dial)
	h1.RegisterProtocol("https", browserProtocol{H2: s.upstreamTransport(true, dial)})
	return h1
}

// upstreamTransport is one upstream transport; with h2 it negotiates HTTP/2 when the site offers it.
func (s *Server) upstreamTransport(h2 bool, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	t := &http.Transport{
		Proxy:       nil, // remixproxy talks to sites directly
		DialContext: dial,
		TLSClientConfig: &tls.Config{
			RootCAs:    s.cfg.UpstreamRoots,
			MinVersion: tls.VersionTLS12,
		},
		ForceAttemptHTTP2:      h2,
		DisableCompression:     true, // pass the browser's Accept-Encoding and bodies through untouched
		MaxIdleConns:           512,
		MaxIdleConnsPerHost:    32,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    s.cfg.DialTimeout,
		ResponseHeaderTimeout:  s.cfg.ResponseHeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	if !h2 {
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // never HTTP/2
	}
	return t
}

// browserProtocol is registered for https in the HTTP/1.1 upstream transport: requests the
// browser sent over HTTP/2 are sent by H2; the rest get http.ErrSkipAltProtocol, which makes the
// HTTP/1.1 transport send them itself. net/http never offers WebSocket upgrades to it.
//
// It must stay a struct with one exported field holding the HTTP/2 transport: that is how
// http.Transport.CloseIdleConnections finds a registered HTTP/2 transport to close as well
// (net/http's onceSetNextProtoDefaults, Go issue 22891).
type browserProtocol struct {
	H2 *http.Transport
}

func (b browserProtocol) RoundTrip(req *http.Request) (*http.Response, error) {
	// ReverseProxy's outbound request keeps the inbound request's protocol version.
	if req.ProtoMajor == 2 {
		return b.H2.RoundTrip(req)
	}
	return nil, http.ErrSkipAltProtocol
}

// resolvable reports whether host:port has a --resolve entry.
func (s *Server) resolvable(hostport string) bool {
	_, ok := s.cfg.Resolve[strings.ToLower(hostport)]
	return ok
}

// dialUpstream connects to addr, or to its --resolve mapping.
func (s *Server) dialUpstream(ctx context.Context, network, addr string) (net.Conn, error) {
	return s.dial(ctx, network, addr, nil)
}

// dial is dialUpstream with control, if not nil, as the dialer's ControlContext (dialPublic).
func (s *Server) dial(ctx context.Context, network, addr string, control func(context.Context, string, string, syscall.RawConn) error) (net.Conn, error) {
	target := addr
	if mapped, ok := s.cfg.Resolve[strings.ToLower(addr)]; ok {
		target = mapped
	} else if s.cfg.OnlyResolved {
		return nil, fmt.Errorf("dialing %s: %w", addr, httpx.ErrNotResolved)
	}
	if target == s.cfg.Listen {
		return nil, fmt.Errorf("dialing %s: %w", addr, httpx.ErrLoop)
	}
	d := net.Dialer{Timeout: s.cfg.DialTimeout, KeepAlive: 30 * time.Second, ControlContext: control}
	conn, err := d.DialContext(ctx, network, target)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	s.noteDialed(addr, conn) // the address space of the name, for localnet.go
	return conn, nil
}

// closeIdleUpstream closes the idle connections to sites, of both pairs of transports.
func (s *Server) closeIdleUpstream() {
	s.upstream.CloseIdleConnections()
	s.upstreamLocal.CloseIdleConnections()
}
