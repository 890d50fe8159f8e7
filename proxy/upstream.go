package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// errNotResolved is returned for upstream hosts that OnlyResolved forbids dialing.
var errNotResolved = errors.New("host not in --resolve and the proxy runs with only resolved hosts")

// errLoop is returned when a request would be sent back to the proxy itself.
var errLoop = errors.New("the request points back at the proxy itself")

// newUpstreamTransport is the client side towards real sites: TLS verified against the system
// roots (or cfg.UpstreamRoots), HTTP/2 when the site offers it, compression left to the browser.
func (s *Server) newUpstreamTransport() *http.Transport {
	return &http.Transport{
		Proxy:       nil, // remixproxy talks to sites directly
		DialContext: s.dialUpstream,
		TLSClientConfig: &tls.Config{
			RootCAs:    s.cfg.UpstreamRoots,
			MinVersion: tls.VersionTLS12,
		},
		ForceAttemptHTTP2:      true,
		DisableCompression:     true, // pass the browser's Accept-Encoding and bodies through untouched
		MaxIdleConns:           512,
		MaxIdleConnsPerHost:    32,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    s.cfg.DialTimeout,
		ResponseHeaderTimeout:  s.cfg.ResponseHeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// resolvable reports whether host:port has a --resolve entry.
func (s *Server) resolvable(hostport string) bool {
	_, ok := s.cfg.Resolve[strings.ToLower(hostport)]
	return ok
}

// dialUpstream connects to addr, or to its --resolve mapping.
func (s *Server) dialUpstream(ctx context.Context, network, addr string) (net.Conn, error) {
	target := addr
	if mapped, ok := s.cfg.Resolve[strings.ToLower(addr)]; ok {
		target = mapped
	} else if s.cfg.OnlyResolved {
		return nil, fmt.Errorf("dialing %s: %w", addr, errNotResolved)
	}
	if target == s.cfg.Listen {
		return nil, fmt.Errorf("dialing %s: %w", addr, errLoop)
	}
	d := net.Dialer{Timeout: s.cfg.DialTimeout, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(ctx, network, target)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	return conn, nil
}

// redactURL is the request's URL without its query, for logs.
func redactURL(req *http.Request) string {
	u := *req.URL
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}
