package e2etest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Sites are the upstream test websites: one HTTPS and one HTTP server on 127.0.0.1, answering
// for made-up host names (plain.test, csp.test, …) chosen by the Host header and, for TLS, by
// SNI, with a certificate per host name signed by the test CA. The same URLs
// (https://plain.test/) work through the proxy (Config.Resolve) and directly (the direct-mode
// browser's --host-resolver-rules).
type Sites struct {
	// CA signs the certificates of every host but the bad-certificate ones. The proxy is given it
	// as UpstreamRoots.
	CA *TestCA
	// UntrustedCA signs the certificates of the hosts added with HandleBadCert. Nobody trusts it.
	UntrustedCA *TestCA

	httpsLn, httpLn net.Listener
	https, http     *http.Server

	mu       sync.Mutex
	handlers map[string]http.Handler // host → handler
	badCert  map[string]bool
	raw      map[string]*rawServer   // "host:port" → raw TCP server
	local    map[string]net.Listener // "host:port" → listener on LocalAddr (HandleLocal)
	servers  []*http.Server          // HandleLocal's
	counts   map[string]int          // "host/path" → requests seen
	closed   bool
}

// NewSites starts the two servers. Add hosts with Handle, HandleBadCert and HandleRaw before
// the proxy or a direct-mode browser reads Resolve or HostResolverRules.
func NewSites() (*Sites, error) {
	ca, err := NewTestCA("remixproxy e2e upstream CA")
	if err != nil {
		return nil, err
	}
	untrusted, err := NewTestCA("remixproxy e2e untrusted CA")
	if err != nil {
		return nil, err
	}
	s := &Sites{
		CA:          ca,
		UntrustedCA: untrusted,
		handlers:    map[string]http.Handler{},
		badCert:     map[string]bool{},
		raw:         map[string]*rawServer{},
		local:       map[string]net.Listener{},
		counts:      map[string]int{},
	}
	if s.httpsLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("listening for https sites: %w", err)
	}
	if s.httpLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		s.httpsLn.Close()
		return nil, fmt.Errorf("listening for http sites: %w", err)
	}
	quiet := log.New(io.Discard, "", 0) // TLS handshake noise from clients that give up
	s.https = &http.Server{Handler: http.HandlerFunc(s.serve), ErrorLog: quiet}
	s.https.TLSConfig = &tls.Config{GetCertificate: s.certificate, NextProtos: []string{"h2", "http/1.1"}}
	s.http = &http.Server{Handler: http.HandlerFunc(s.serve), ErrorLog: quiet}
	go s.https.ServeTLS(s.httpsLn, "", "")
	go s.http.Serve(s.httpLn)
	return s, nil
}

// StartSites is NewSites for one test: it fails the test on error and closes the sites when
// the test ends.
func StartSites(t testing.TB) *Sites {
	t.Helper()
	s, err := NewSites()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Handle serves host (e.g. "plain.test") over https on port 443 and http on port 80 with h;
// r.TLS tells the two apart.
func (s *Sites) Handle(host string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[host] = h
}

// HandleBadCert is Handle with a certificate from UntrustedCA: a client that verifies refuses it.
func (s *Sites) HandleBadCert(host string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[host] = h
	s.badCert[host] = true
}

// HandleRaw serves host on port 80 and, with TLS (a certificate from CA), on port 443 with raw
// TCP servers of their own: serve gets every accepted connection (and closes it), for upstreams
// that misbehave below HTTP.
func (s *Sites) HandleRaw(host string, serve func(net.Conn)) error {
	for _, port := range []string{"80", "443"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("listening for raw site %s: %w", host, err)
		}
		if port == "443" {
			ln = tls.NewListener(ln, &tls.Config{
				GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.CA.Leaf(host) },
				NextProtos:     []string{"http/1.1"},
			})
		}
		rs := &rawServer{ln: ln, serve: serve, conns: map[net.Conn]bool{}}
		s.mu.Lock()
		s.raw[host+":"+port] = rs
		s.mu.Unlock()
		go rs.run()
	}
	return nil
}

// LocalAddr is the loopback address HandleLocal's hosts are served on: with
// WithPublicAddress, a test makes it stand for the person's local network while the other
// sites stand for the public web.
const LocalAddr = "127.0.0.2"

// HandleLocal is Handle on listeners of its own at LocalAddr (https on 443, http on 80).
func (s *Sites) HandleLocal(host string, h http.Handler) error {
	s.Handle(host, h)
	for _, port := range []string{"80", "443"} {
		ln, err := net.Listen("tcp", LocalAddr+":0")
		if err != nil {
			return fmt.Errorf("listening for local site %s: %w", host, err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(s.serve), ErrorLog: log.New(io.Discard, "", 0)}
		if port == "443" {
			srv.TLSConfig = &tls.Config{GetCertificate: s.certificate, NextProtos: []string{"h2", "http/1.1"}}
			go srv.ServeTLS(ln, "", "")
		} else {
			go srv.Serve(ln)
		}
		s.mu.Lock()
		s.local[host+":"+port] = ln
		s.servers = append(s.servers, srv)
		s.mu.Unlock()
	}
	return nil
}

// Resolve maps "host:port" to the loopback address serving it, for proxy.Config.Resolve.
func (s *Sites) Resolve() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]string{}
	for h := range s.handlers {
		m[h+":443"] = s.httpsLn.Addr().String()
		m[h+":80"] = s.httpLn.Addr().String()
	}
	for hp, ln := range s.local {
		m[hp] = ln.Addr().String()
	}
	for hp, rs := range s.raw {
		m[hp] = rs.ln.Addr().String()
	}
	return m
}

// HostResolverRules is the value for Chromium's --host-resolver-rules that makes the direct-mode
// browser reach the sites under their names, and fail every other name at once.
func (s *Sites) HostResolverRules() string {
	m := s.Resolve()
	var rules []string
	for _, hp := range slices.Sorted(maps.Keys(m)) {
		rules = append(rules, "MAP "+hp+" "+m[hp])
	}
	rules = append(rules, "MAP * ~NOTFOUND")
	return strings.Join(rules, ", ")
}

// Transport returns an HTTP/1.1 transport that reaches the sites directly (no proxy), dialing
// by the Resolve map and trusting the test CA, with automatic decompression off: the reference
// for byte comparisons with the proxy.
func (s *Sites) Transport() *http.Transport {
	m := s.Resolve()
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			a, ok := m[addr]
			if !ok {
				return nil, fmt.Errorf("e2e sites: %s is not a test site", addr)
			}
			return d.DialContext(ctx, network, a)
		},
		TLSClientConfig:    &tls.Config{RootCAs: s.CA.Pool()},
		DisableCompression: true,
	}
}

// Client returns a client using Transport that does not follow redirects.
func (s *Sites) Client() *http.Client {
	return &http.Client{
		Transport:     s.Transport(),
		Timeout:       2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Requests reports how many requests host has received for path (query excluded), on either
// scheme.
func (s *Sites) Requests(host, path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[host+path]
}

// Close stops the servers and closes every connection.
func (s *Sites) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	raw := slices.Collect(maps.Values(s.raw))
	servers := s.servers
	s.mu.Unlock()
	s.https.Close()
	s.http.Close()
	for _, srv := range servers {
		srv.Close()
	}
	for _, rs := range raw {
		rs.close()
	}
}

func (s *Sites) serve(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	s.mu.Lock()
	h := s.handlers[host]
	if !BrowserOwn(r) {
		s.counts[host+r.URL.Path]++
	}
	s.mu.Unlock()
	switch {
	case h == nil:
		http.Error(w, "e2e sites: no such host "+host, http.StatusMisdirectedRequest)
	case r.URL.Path == "/favicon.ico":
		// Every host has an (empty) icon, so the browser's favicon fetch is not a console error.
		w.WriteHeader(http.StatusNoContent)
	default:
		h.ServeHTTP(w, r)
	}
}

func (s *Sites) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	_, known := s.handlers[hello.ServerName]
	bad := s.badCert[hello.ServerName]
	s.mu.Unlock()
	switch {
	case !known:
		return nil, fmt.Errorf("e2e sites: no certificate for %q", hello.ServerName)
	case bad:
		return s.UntrustedCA.Leaf(hello.ServerName)
	default:
		return s.CA.Leaf(hello.ServerName)
	}
}

type rawServer struct {
	ln    net.Listener
	serve func(net.Conn)
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

func (rs *rawServer) run() {
	for {
		c, err := rs.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				log.Printf("e2e raw site: accept: %v", err)
			}
			return
		}
		rs.mu.Lock()
		rs.conns[c] = true
		rs.mu.Unlock()
		rs.wg.Go(func() {
			defer func() {
				c.Close()
				rs.mu.Lock()
				delete(rs.conns, c)
				rs.mu.Unlock()
			}()
			rs.serve(c)
		})
	}
}

func (rs *rawServer) close() {
	rs.ln.Close()
	rs.mu.Lock()
	for c := range rs.conns {
		c.Close()
	}
	rs.mu.Unlock()
	rs.wg.Wait()
}

// BrowserOwn reports whether r is a request the browser made by itself in the background, which
// no page, remixlet or proxy can make: a non-navigation request with Sec-Fetch-Site "none".
// Fetch metadata is set by the browser and cannot be forged by a page, whose requests are always
// same-origin, same-site or cross-site; the proxy's own requests (rmx.fetch, the agent's) carry
// no fetch metadata, nor do plain http:// pages' requests, so they are all still counted.
// Chromium 148 sends one such request to www.google.com (/async/folae?…&udm=50, with Google's
// X-Client-Data) during a test, which a witness for www.google.com counted as a leak although
// the DevTools count, which sees every page request, did not. Sites serve such requests but do
// not count them (Requests, HostRequests); witnesses keep them apart.
func BrowserOwn(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "none") && !strings.EqualFold(r.Header.Get("Sec-Fetch-Mode"), "navigate")
}

// HostRequests reports how many requests host has received in all, for any path, on either
// scheme: what a witness site counts.
func (s *Sites) HostRequests(host string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, c := range s.counts {
		if strings.HasPrefix(k, host+"/") || k == host {
			n += c
		}
	}
	return n
}
