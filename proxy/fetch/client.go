package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/remixproxy/remixproxy/internal/netaddr"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// Config is what the client needs of the proxy.
type Config struct {
	// Dial connects to an address the way the pipeline does (--resolve mappings, the proxy's
	// own address refused). Required.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Resolvable reports whether host:port has a --resolve entry; such addresses are dialed
	// with Dial. If nil, none has.
	Resolvable func(hostport string) bool
	// OnlyResolved dials every address with Dial, which refuses what --resolve does not name.
	OnlyResolved bool
	// Listen is the proxy's own address, never dialed.
	Listen string
	// DialTimeout bounds connecting and the TLS handshake. If zero, 15 seconds.
	DialTimeout time.Duration
	// Roots verify the sites' certificates. If nil, the system roots.
	Roots *x509.CertPool
}

// Client is the proxy's client for requests sent as the person, with the cookie view and the
// credentials seen for each site. Use New.
type Client struct {
	cfg     Config
	cookies *CookieView
	creds   *Credentials
	http    *http.Client
}

// New makes a client; Close closes its idle connections.
func New(cfg Config) *Client {
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 15 * time.Second
	}
	c := &Client{cfg: cfg, cookies: NewCookieView(), creds: NewCredentials()}
	c.http = &http.Client{
		Transport: &http.Transport{
			Proxy:       nil,
			DialContext: c.dial,
			TLSClientConfig: &tls.Config{
				RootCAs:    cfg.Roots,
				MinVersion: tls.VersionTLS12,
			},
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           64,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    cfg.DialTimeout,
			ResponseHeaderTimeout:  Timeout,
			MaxResponseHeaderBytes: 1 << 20,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// Observe is the pipeline's response tap: the cookie view and the credentials seen read resp
// (and its request, as sent upstream) on its way to the browser. Neither changes a header or a
// byte of the body.
func (c *Client) Observe(resp *http.Response) {
	c.cookies.Observe(resp)
	c.creds.Observe(resp)
}

// Cookies is the client's cookie view.
func (c *Client) Cookies() *CookieView { return c.cookies }

// Credentials are the credential header values the client has seen, for the redaction stage.
func (c *Client) Credentials() *Credentials { return c.creds }

// Close closes the client's idle connections.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
}

// ErrLocalAddress is returned for a host that resolves only to local addresses.
var ErrLocalAddress = errors.New("resolves to a loopback, private, link-local or other non-public address")

// dial connects through --resolve like the pipeline, else to the first public address of the
// name.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if c.cfg.OnlyResolved || c.cfg.Resolvable != nil && c.cfg.Resolvable(addr) {
		return c.cfg.Dial(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	d := net.Dialer{Timeout: c.cfg.DialTimeout, KeepAlive: 30 * time.Second}
	var lastErr error = fmt.Errorf("dialing %s: %w", addr, ErrLocalAddress)
	for _, ip := range ips {
		if !netaddr.IsPublic(ip) { // not loopback, private, link-local, CGNAT/tailnet, NAT64/6to4 of those …
			continue
		}
		target := net.JoinHostPort(ip.Unmap().String(), port)
		if target == c.cfg.Listen {
			return nil, fmt.Errorf("dialing %s: %w", addr, httpx.ErrLoop)
		}
		conn, err := d.DialContext(ctx, network, target)
		if err == nil {
			return conn, nil
		}
		lastErr = fmt.Errorf("dialing %s: %w", addr, err)
	}
	return nil, lastErr
}

// Send sends one request to target as the person, and returns the answer as it is: it never
// follows a redirect. The headers (already checked, CheckHeaders) get the browser's
// User-Agent when they have none and the cookies the view holds for target; the answer's
// credential headers are taken for the redaction stage (its Set-Cookie never into the view:
// the browser never sees it). ctx bounds the whole exchange; the caller closes the body.
func (c *Client) Send(ctx context.Context, method string, target *url.URL, hdr http.Header, body []byte) (*http.Response, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("sending %s %s: %w", method, RedactedURL(target), err)
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	req.Header = hdr.Clone()
	if req.Header.Get("User-Agent") == "" {
		if ua := c.cookies.UserAgent(); ua != "" {
			req.Header.Set("User-Agent", ua)
		}
	}
	if ck := c.cookies.CookieHeader(target); ck != "" {
		req.Header.Set("Cookie", ck)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &httpx.Refusal{Why: fmt.Sprintf("no answer from %s within %v", target.Host, Timeout)}
		}
		return nil, fmt.Errorf("sending %s %s: %w", method, RedactedURL(target), err)
	}
	c.creds.Observe(resp) // its Set-Cookie and the Authorization sent, for the agent's redaction
	return resp, nil
}
