package fetch

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"golang.org/x/net/http/httpguts"
)

// Fetch: the proxy sends a request itself, signed in as the person (the cookies the browser
// would send, from the cookie view in cookieview.go), to a host its caller names exactly (for
// rmx.fetch, a fetch: permission). The request does not go through the browser pipeline, so
// netrules never act on it.
//
// Checks, each a refusal (*httpx.Refusal) saying why, before anything is sent:
//   - the address is http or https with no user name, on the scheme's standard port;
//   - the address is read as the browser reads it (internal/weburl: WHATWG URL, IDNA/UTS-46),
//     and the request sent is for that reading: backslashes, dot segments, other full stops,
//     fullwidth letters or IPv4 numbers in another form name the host the browser would;
//   - its host (lowercase, no trailing dot, IDN as punycode, IPv4 dotted decimal) equals a
//     fetch: host read the same way;
//   - every redirect (followed by hand, at most MaxRedirects; its Location read against
//     the address that answered, as the browser reads it) is checked the same way
//     before it is followed; Authorization is dropped when a redirect leaves the origin, and
//     cookies are recomputed from the view for each address;
//   - method, headers (no Cookie, Host, Origin, Sec-* … : the browser's forbidden names) and a
//     body of at most MaxRequestBody;
//   - the response body is at most MaxResponseBody, and the whole exchange at most
//     Timeout; for rmx.fetch the result must also fit in the sandbox's answer limit
//     (sandbox.Limits.MaxMessageBytes, 256 KiB by default), which bounds request bodies too.
//
// Names not dialed through --resolve are looked up here and refused when they point at a
// loopback, private or link-local address: the permission names a site, never the person's
// own machine or network. Set-Cookie of fetch responses is neither returned to the remixlet
// nor taken into the view (the browser never sees those responses).

const (
	// MaxRedirects is how many redirects a fetch follows.
	MaxRedirects = 5
	// MaxRequestBody bounds a request's body.
	MaxRequestBody = 1 << 20
	// MaxResponseBody bounds a response's body.
	MaxResponseBody = 5 << 20
	maxHeaders      = 50
	maxHeaderBytes  = 16 << 10
	// Timeout bounds a whole exchange, redirects included.
	Timeout = 20 * time.Second
)

// Options are a fetch's method, headers, body and the form of its result (rmx.fetch's second
// argument).
type Options struct {
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Body    *string           `json:"body"`
	As      string            `json:"as"` // "text" (default), "json" or "bytes"
}

// Result is what a fetch answers (what rmx.fetch resolves to): exactly one of text, json and bytes (base64).
type Result struct {
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

var methods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true}

// forbiddenHeaders are the request headers a remixlet may not set: the browser's
// forbidden names, and Cookie, which comes from the view.
var forbiddenHeaders = map[string]bool{
	"accept-charset": true, "accept-encoding": true, "access-control-request-headers": true,
	"access-control-request-method": true, "connection": true, "content-length": true, "cookie": true,
	"cookie2": true, "date": true, "dnt": true, "expect": true, "host": true, "keep-alive": true,
	"origin": true, "referer": true, "set-cookie": true, "te": true, "trailer": true,
	"transfer-encoding": true, "upgrade": true, "via": true, "x-http-method": true,
	"x-http-method-override": true, "x-method-override": true, "forwarded": true,
}

// Fetch sends the request to one of hosts and follows approved redirects. Refusals are
// *httpx.Refusal; other errors are the network's.
func (c *Client) Fetch(ctx context.Context, hosts []string, rawURL string, o Options) (*Result, error) {
	target, err := ApprovedURL(hosts, rawURL)
	if err != nil {
		return nil, err
	}
	method := strings.ToUpper(o.Method)
	if method == "" {
		method = http.MethodGet
	}
	if !methods[method] {
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
		if len(*o.Body) > MaxRequestBody {
			return nil, &httpx.Refusal{Why: fmt.Sprintf("the request body is %d bytes, more than %d", len(*o.Body), MaxRequestBody)}
		}
		body = []byte(*o.Body)
	}
	hdr, err := CheckHeaders(o.Headers)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	redirected := false
	for hop := 0; ; hop++ {
		resp, err := c.Send(ctx, method, target, hdr, body)
		if err != nil {
			return nil, err
		}
		loc := resp.Header.Get("Location")
		if IsRedirect(resp.StatusCode) && loc != "" {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if hop >= MaxRedirects {
				return nil, &httpx.Refusal{Why: fmt.Sprintf("more than %d redirects", MaxRedirects)}
			}
			next, err := ResolveLocation(target, loc)
			if err != nil {
				return nil, &httpx.Refusal{Why: fmt.Sprintf("redirect from %s to an address that does not parse", target.Host)}
			}
			nextURL, err := ApprovedAddress(hosts, next)
			if err != nil {
				var ref *httpx.Refusal
				if errors.As(err, &ref) {
					return nil, &httpx.Refusal{Why: "redirect from " + target.Host + " refused: " + ref.Why}
				}
				return nil, err
			}
			if Origin(nextURL) != Origin(target) {
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
		return ReadResponse(resp, target, redirected, as)
	}
}

// ReadResponse reads a fetch's final answer from target into a Result: as text (made valid
// UTF-8), JSON or bytes (base64), without Set-Cookie; a body over MaxResponseBody is refused.
func ReadResponse(resp *http.Response, target *url.URL, redirected bool, as string) (*Result, error) {
	if resp.ContentLength > MaxResponseBody {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("the response is %d bytes, more than %d", resp.ContentLength, MaxResponseBody)}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody+1))
	if err != nil {
		return nil, fmt.Errorf("fetching %s: reading the response: %w", RedactedURL(target), err)
	}
	if len(b) > MaxResponseBody {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("the response is more than %d bytes", MaxResponseBody)}
	}
	res := &Result{
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
			return nil, fmt.Errorf("fetching %s: the response (status %d) is not JSON", RedactedURL(target), resp.StatusCode)
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

// IsRedirect reports whether code is a redirect a fetch follows (with a Location).
func IsRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// Origin is u's scheme and host: a redirect to another drops Authorization.
func Origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// RedactedURL is u without its query, for errors and logs.
func RedactedURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment, c.User = "", "", nil
	return c.String()
}

// CheckHeaders checks the remixlet's request headers.
func CheckHeaders(in map[string]string) (http.Header, error) {
	if len(in) > maxHeaders {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("more than %d headers", maxHeaders)}
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
		case forbiddenHeaders[lower] || strings.HasPrefix(lower, "sec-") || strings.HasPrefix(lower, "proxy-"):
			return nil, &httpx.Refusal{Why: fmt.Sprintf("header %s may not be set (the proxy sends the person's cookies itself)", name)}
		}
		h.Set(name, val)
	}
	if total > maxHeaderBytes {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("the headers are more than %d bytes", maxHeaderBytes)}
	}
	return h, nil
}

// ApprovedURL reads rawURL as the browser reads an absolute address (weburl: WHATWG URL,
// IDNA/UTS-46 hosts, IPv4 numbers in any form as dotted decimal) and returns it, as Go holds
// that reading, if its host is one of hosts (from fetch: permissions); otherwise a refusal
// saying why. The request Go then sends is for the address that was checked.
func ApprovedURL(hosts []string, rawURL string) (*url.URL, error) {
	u, err := weburl.Parse(rawURL)
	if err != nil {
		return nil, &httpx.Refusal{Why: "the address does not parse as a full address (only absolute http and https addresses can be fetched)"}
	}
	return ApprovedAddress(hosts, u)
}

// ApprovedAddress is ApprovedURL for an address already read.
func ApprovedAddress(hosts []string, u *weburl.URL) (*url.URL, error) {
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
	if !hostApproved(hosts, host) {
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

// ResolveLocation reads a redirect's Location against the address that answered, as the
// browser reads it.
func ResolveLocation(from *url.URL, loc string) (*weburl.URL, error) {
	base, err := weburl.Parse(from.String())
	if err != nil {
		return nil, err
	}
	return weburl.Resolve(base, loc)
}

// hostApproved compares a host as weburl reads it with the fetch: hosts, each read the
// same way (so IP addresses compare by value and names by their ASCII form).
func hostApproved(hosts []string, host string) bool {
	for _, p := range hosts {
		if h, err := weburl.Host(p); err == nil && h == host {
			return true
		}
	}
	return false
}
