package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// rmx.fetch (permission fetch:HOST): the proxy sends a request itself, signed in as the person
// (the cookies the browser would send, from the cookie view in cookieview.go), to a host a
// fetch: permission names exactly. The request does not go through the browser pipeline
// (pipeline.go), so netrules never act on it.
//
// Checks, each a refusal with its reason in the remixlet's log, before anything is sent:
//   - the address is http or https with no user name, on the scheme's standard port;
//   - the address is read as the browser reads it (internal/weburl: WHATWG URL, IDNA/UTS-46),
//     and the request sent is for that reading: backslashes, dot segments, other full stops,
//     fullwidth letters or IPv4 numbers in another form name the host the browser would;
//   - its host (lowercase, no trailing dot, IDN as punycode, IPv4 dotted decimal) equals a
//     fetch: host read the same way;
//   - every redirect (followed by hand, at most maxFetchRedirects; its Location read against
//     the address that answered, as the browser reads it) is checked the same way
//     before it is followed; Authorization is dropped when a redirect leaves the origin, and
//     cookies are recomputed from the view for each address;
//   - method, headers (no Cookie, Host, Origin, Sec-* … : the browser's forbidden names) and a
//     body of at most maxFetchRequestBody;
//   - the response body is at most maxFetchResponseBody, and the whole exchange at most
//     fetchTimeout; the result must also fit in the sandbox's answer limit
//     (sandbox.Limits.MaxMessageBytes, 256 KiB by default), which bounds request bodies too.
//
// Names not dialed through --resolve are looked up here and refused when they point at a
// loopback, private or link-local address: the permission names a site, never the person's
// own machine or network. Set-Cookie of fetch responses is neither returned to the remixlet
// nor taken into the view (the browser never sees those responses).

const (
	maxFetchRedirects    = 5
	maxFetchRequestBody  = 1 << 20
	maxFetchResponseBody = 5 << 20
	maxFetchHeaders      = 50
	maxFetchHeaderBytes  = 16 << 10
	maxFetchInFlight     = 6 // per remixlet
	fetchTimeout         = 20 * time.Second
)

func init() {
	rmxServices["fetch"] = rmxFetch
}

// rmxNetwork is the proxy's side of rmx.fetch and network:observe: the cookie view, the
// client for fetches and the responses recorded for observers.
type rmxNetwork struct {
	srv      *Server
	cookies  *cookieView
	client   *http.Client
	observed *observeRecords // rmx_observe.go

	mu       sync.Mutex
	inFlight map[string]int // fetches running, by remixlet
}

func newRMXNetwork(s *Server) *rmxNetwork {
	n := &rmxNetwork{srv: s, cookies: newCookieView(), inFlight: map[string]int{}}
	n.observed = newObserveRecords(s)
	n.client = &http.Client{
		Transport: &http.Transport{
			Proxy:       nil,
			DialContext: n.dial,
			TLSClientConfig: &tls.Config{
				RootCAs:    s.cfg.UpstreamRoots,
				MinVersion: tls.VersionTLS12,
			},
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           64,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    s.cfg.DialTimeout,
			ResponseHeaderTimeout:  fetchTimeout,
			MaxResponseHeaderBytes: 1 << 20,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return n
}

// observeTraffic is the pipeline's hook: the cookie view and the observe recorder read resp on
// its way to the browser. Neither changes a header or a byte of the body.
func (n *rmxNetwork) observeTraffic(resp *http.Response) {
	n.cookies.observe(resp)
	n.observed.record(resp)
}

func (n *rmxNetwork) close() {
	n.client.CloseIdleConnections()
}

// errLocalAddress is returned for a fetch host that resolves only to local addresses.
var errLocalAddress = errors.New("resolves to a loopback, private or link-local address")

// dial connects a fetch: through --resolve like the pipeline, else to the first public address
// of the name.
func (n *rmxNetwork) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	s := n.srv
	if s.resolvable(addr) || s.cfg.OnlyResolved {
		return s.dialUpstream(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	d := net.Dialer{Timeout: s.cfg.DialTimeout, KeepAlive: 30 * time.Second}
	var lastErr error = fmt.Errorf("dialing %s: %w", addr, errLocalAddress)
	for _, ip := range ips {
		if !fetchPublicAddr(ip) {
			continue
		}
		target := net.JoinHostPort(ip.Unmap().String(), port)
		if target == s.cfg.Listen {
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

func fetchPublicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsGlobalUnicast() && !ip.IsPrivate() && ip.Zone() == ""
}

// fetchOptions is the second argument of rmx.fetch.
type fetchOptions struct {
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Body    *string           `json:"body"`
	As      string            `json:"as"` // "text" (default), "json" or "bytes"
}

// fetchResult is what rmx.fetch resolves to: exactly one of text, json and bytes (base64).
type fetchResult struct {
	Status     int               `json:"status"`
	StatusText string            `json:"statusText"`
	OK         bool              `json:"ok"`
	URL        string            `json:"url"`
	Redirected bool              `json:"redirected"`
	Headers    map[string]string `json:"headers"`
	Text       *string           `json:"text,omitempty"`
	JSON       json.RawMessage   `json:"json,omitempty"`
	Bytes      *string           `json:"bytes,omitempty"`
}

var fetchMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true}

// forbiddenFetchHeaders are the request headers a remixlet may not set: the browser's
// forbidden names, and Cookie, which comes from the view.
var forbiddenFetchHeaders = map[string]bool{
	"accept-charset": true, "accept-encoding": true, "access-control-request-headers": true,
	"access-control-request-method": true, "connection": true, "content-length": true, "cookie": true,
	"cookie2": true, "date": true, "dnt": true, "expect": true, "host": true, "keep-alive": true,
	"origin": true, "referer": true, "set-cookie": true, "te": true, "trailer": true,
	"transfer-encoding": true, "upgrade": true, "via": true, "x-http-method": true,
	"x-http-method-override": true, "x-method-override": true, "forwarded": true,
}

// rmxFetch answers rmx.fetch(url, options).
func rmxFetch(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	if len(h.manifest.FetchHosts()) == 0 {
		return nil, &httpx.Refusal{Why: "rmx.fetch needs a fetch:HOST permission in manifest.json"}
	}
	n := h.p.r.net
	if n == nil {
		return nil, &httpx.Refusal{Why: "rmx.fetch is not available in this proxy"}
	}
	var rawURL string
	if len(args) < 1 || json.Unmarshal(args[0], &rawURL) != nil {
		return nil, &httpx.Refusal{Why: "the first argument must be the address, a string"}
	}
	var opts fetchOptions
	if len(args) > 1 && string(args[1]) != "null" {
		if err := json.Unmarshal(args[1], &opts); err != nil {
			return nil, &httpx.Refusal{Why: "options must be {method, headers, body, as} with string values"}
		}
	}
	if !n.acquire(h.id) {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("more than %d fetches at once", maxFetchInFlight)}
	}
	defer n.release(h.id)
	res, err := n.fetch(ctx, h.manifest.FetchHosts(), rawURL, opts)
	if err != nil {
		var ref *httpx.Refusal
		if !errors.As(err, &ref) {
			h.p.r.logf(h.id, "warn", "rmx.fetch failed: %v", err)
		}
		return nil, err
	}
	out, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("rmx.fetch: encoding the result: %w", err)
	}
	if limit := h.p.r.messageLimit(); len(out) > limit {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("the response is %d bytes as a result, more than the %d bytes a remixlet can receive in one answer", len(out), limit)}
	}
	return out, nil
}

func (n *rmxNetwork) acquire(remixlet string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.inFlight[remixlet] >= maxFetchInFlight {
		return false
	}
	n.inFlight[remixlet]++
	return true
}

func (n *rmxNetwork) release(remixlet string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.inFlight[remixlet]--; n.inFlight[remixlet] <= 0 {
		delete(n.inFlight, remixlet)
	}
}

// fetch sends the request to an approved host and follows approved redirects. Refusals are
// *httpx.Refusal; other errors are the network's.
func (n *rmxNetwork) fetch(ctx context.Context, hosts []string, rawURL string, o fetchOptions) (*fetchResult, error) {
	target, err := approvedFetchURL(hosts, rawURL)
	if err != nil {
		return nil, err
	}
	method := strings.ToUpper(o.Method)
	if method == "" {
		method = http.MethodGet
	}
	if !fetchMethods[method] {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("method %q is not allowed (GET, HEAD, POST, PUT, PATCH, DELETE)", o.Method)}
	}
	as := o.As
	if as == "" {
		as = "text"
	}
	if as != "text" && as != "json" && as != "bytes" {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("as must be \"text\", \"json\" or \"bytes\", not %q", o.As)}
	}
	var body []byte
	if o.Body != nil {
		if method == http.MethodGet || method == http.MethodHead {
			return nil, &httpx.Refusal{Why: method + " requests have no body"}
		}
		if len(*o.Body) > maxFetchRequestBody {
			return nil, &httpx.Refusal{Why: fmt.Sprintf("the request body is %d bytes, more than %d", len(*o.Body), maxFetchRequestBody)}
		}
		body = []byte(*o.Body)
	}
	hdr, err := fetchHeaders(o.Headers)
	if err != nil {
		return nil, err
	}
	if hdr.Get("User-Agent") == "" {
		if ua := n.cookies.userAgent(); ua != "" {
			hdr.Set("User-Agent", ua)
		}
	}

	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	redirected := false
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, method, target.String(), bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("rmx.fetch %s: %w", fetchRedactedURL(target), err)
		}
		if body == nil {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		req.Header = hdr.Clone()
		if c := n.cookies.cookieHeader(target); c != "" {
			req.Header.Set("Cookie", c)
		}
		resp, err := n.client.Do(req)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, &httpx.Refusal{Why: fmt.Sprintf("no answer from %s within %v", target.Host, fetchTimeout)}
			}
			return nil, fmt.Errorf("rmx.fetch %s: %w", fetchRedactedURL(target), err)
		}
		n.srv.secrets.observe(resp) // its Set-Cookie, for the agent's redaction (redact_sources.go)
		loc := resp.Header.Get("Location")
		if isFetchRedirect(resp.StatusCode) && loc != "" {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if hop >= maxFetchRedirects {
				return nil, &httpx.Refusal{Why: fmt.Sprintf("more than %d redirects", maxFetchRedirects)}
			}
			next, err := resolveLocation(target, loc)
			if err != nil {
				return nil, &httpx.Refusal{Why: fmt.Sprintf("redirect from %s to an address that does not parse", target.Host)}
			}
			nextURL, err := approvedFetchAddress(hosts, next)
			if err != nil {
				var ref *httpx.Refusal
				if errors.As(err, &ref) {
					return nil, &httpx.Refusal{Why: "redirect from " + target.Host + " refused: " + ref.Why}
				}
				return nil, err
			}
			if fetchOrigin(nextURL) != fetchOrigin(target) {
				hdr.Del("Authorization") // cookies are recomputed for the new address
			}
			switch {
			case resp.StatusCode == http.StatusSeeOther && method != http.MethodHead,
				(resp.StatusCode == http.StatusMovedPermanently || resp.StatusCode == http.StatusFound) && method == http.MethodPost:
				method, body = http.MethodGet, nil
				hdr.Del("Content-Type")
			}
			target, redirected = nextURL, true
			continue
		}
		defer resp.Body.Close()
		return readFetchResponse(resp, target, redirected, as)
	}
}

func readFetchResponse(resp *http.Response, target *url.URL, redirected bool, as string) (*fetchResult, error) {
	if resp.ContentLength > maxFetchResponseBody {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("the response is %d bytes, more than %d", resp.ContentLength, maxFetchResponseBody)}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchResponseBody+1))
	if err != nil {
		return nil, fmt.Errorf("rmx.fetch %s: reading the response: %w", fetchRedactedURL(target), err)
	}
	if len(b) > maxFetchResponseBody {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("the response is more than %d bytes", maxFetchResponseBody)}
	}
	res := &fetchResult{
		Status: resp.StatusCode, StatusText: http.StatusText(resp.StatusCode),
		OK:  resp.StatusCode >= 200 && resp.StatusCode <= 299,
		URL: target.String(), Redirected: redirected, Headers: map[string]string{},
	}
	for name, vals := range resp.Header {
		lower := strings.ToLower(name)
		if lower == "set-cookie" || lower == "set-cookie2" {
			continue
		}
		res.Headers[lower] = strings.Join(vals, ", ")
	}
	switch as {
	case "json":
		if len(bytes.TrimSpace(b)) == 0 || !json.Valid(b) {
			return nil, fmt.Errorf("rmx.fetch %s: the response (status %d) is not JSON", fetchRedactedURL(target), resp.StatusCode)
		}
		res.JSON = json.RawMessage(b)
	case "bytes":
		s := base64.StdEncoding.EncodeToString(b)
		res.Bytes = &s
	default:
		s := string(b)
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
		}
		res.Text = &s
	}
	return res, nil
}

func isFetchRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

func fetchOrigin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// redactedURL is u without its query, for errors and logs.
func fetchRedactedURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment, c.User = "", "", nil
	return c.String()
}

// fetchHeaders checks the remixlet's request headers.
func fetchHeaders(in map[string]string) (http.Header, error) {
	if len(in) > maxFetchHeaders {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("more than %d headers", maxFetchHeaders)}
	}
	h := http.Header{}
	total := 0
	for name, val := range in {
		lower := strings.ToLower(name)
		total += len(name) + len(val)
		switch {
		case !httpguts.ValidHeaderFieldName(name):
			return nil, &httpx.Refusal{Why: fmt.Sprintf("header name %q is not valid", name)}
		case !httpguts.ValidHeaderFieldValue(val):
			return nil, &httpx.Refusal{Why: fmt.Sprintf("the value of header %s is not valid", name)}
		case forbiddenFetchHeaders[lower] || strings.HasPrefix(lower, "sec-") || strings.HasPrefix(lower, "proxy-"):
			return nil, &httpx.Refusal{Why: fmt.Sprintf("header %s may not be set (the proxy sends the person's cookies itself)", name)}
		}
		h.Set(name, val)
	}
	if total > maxFetchHeaderBytes {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("the headers are more than %d bytes", maxFetchHeaderBytes)}
	}
	return h, nil
}

// approvedFetchURL reads rawURL as the browser reads an absolute address (weburl: WHATWG URL,
// IDNA/UTS-46 hosts, IPv4 numbers in any form as dotted decimal) and returns it, as Go holds
// that reading, if its host is one of hosts (from fetch: permissions); otherwise a refusal
// saying why. The request Go then sends is for the address that was checked.
func approvedFetchURL(hosts []string, rawURL string) (*url.URL, error) {
	u, err := weburl.Parse(rawURL)
	if err != nil {
		return nil, &httpx.Refusal{Why: "the address does not parse as a full address (only absolute http and https addresses can be fetched)"}
	}
	return approvedFetchAddress(hosts, u)
}

// approvedFetchAddress is approvedFetchURL for an address already read.
func approvedFetchAddress(hosts []string, u *weburl.URL) (*url.URL, error) {
	if s := u.Scheme(); s != "http" && s != "https" {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("only http and https addresses can be fetched, not %q", s)}
	}
	if !u.IsHTTP() {
		return nil, &httpx.Refusal{Why: "the address has no host"}
	}
	if u.HasCredentials() {
		return nil, &httpx.Refusal{Why: "addresses with a user name or password are refused"}
	}
	host := u.HostKey()
	if httpx.IsMagicHost(host) {
		return nil, &httpx.Refusal{Why: host + " is the proxy's own host"}
	}
	if !fetchHostApproved(hosts, host) {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("%s is not an approved host (approved here: %s)", host, strings.Join(hosts, ", "))}
	}
	if p := u.Port(); !(u.Scheme() == "https" && p == "443" || u.Scheme() == "http" && p == "80") {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("port %s refused: a fetch: permission allows the standard port of http or https only", p)}
	}
	g, err := u.GoHostKey()
	if err != nil {
		return nil, &httpx.Refusal{Why: "the address cannot be sent as the browser reads it"}
	}
	g.Fragment, g.RawFragment = "", ""
	return g, nil
}

// resolveLocation reads a redirect's Location against the address that answered, as the
// browser reads it.
func resolveLocation(from *url.URL, loc string) (*weburl.URL, error) {
	base, err := weburl.Parse(from.String())
	if err != nil {
		return nil, err
	}
	return weburl.Resolve(base, loc)
}

// fetchHostApproved compares a host as weburl reads it with the fetch: hosts, each read the
// same way (so IP addresses compare by value and names by their ASCII form).
func fetchHostApproved(hosts []string, host string) bool {
	for _, p := range hosts {
		if h, err := weburl.Host(p); err == nil && h == host {
			return true
		}
	}
	return false
}

// messageLimit is the largest answer a remixlet's sandbox accepts (sandbox.Limits.MaxMessageBytes).
func (r *remixletRunner) messageLimit() int {
	return r.supCfg.Limits.WithDefaults().MaxMessageBytes
}
