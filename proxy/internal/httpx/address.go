package httpx

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// OriginOf is the serialized origin of u ("https://example.com", port only when not default).
func OriginOf(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		return u.Scheme + "://" + host
	}
	return u.Scheme + "://" + host + ":" + port
}

// WithoutFragment is an address without its fragment.
func WithoutFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
}

// CleanPath is a request path, "/" when it is empty.
func CleanPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// HostOnly strips the port and IPv6 brackets from a host[:port].
func HostOnly(hostport string) string {
	if !strings.Contains(hostport, ":") {
		// No port: what SplitHostPort's error path gives, without the error it allocates (the
		// usual Host inside an intercepted connection; asked on every request).
		return strings.Trim(hostport, "[]")
	}
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// RequestScheme is the scheme the browser used: https inside an intercepted TLS connection,
// otherwise the absolute URL's (plain proxy requests), otherwise http (tunnelled plain HTTP).
func RequestScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	if r.URL.Scheme != "" {
		return r.URL.Scheme
	}
	return "http"
}

// RequestedAddress is the address a request was sent for, as received from the browser: the
// scheme it used, the Host it named and its request-target (RequestURI, which the outgoing
// request of the pipeline keeps from the incoming one), read as the browser reads addresses.
func RequestedAddress(req *http.Request) (*weburl.URL, error) {
	scheme := req.URL.Scheme
	if scheme == "" {
		scheme = RequestScheme(req)
	}
	target := req.RequestURI
	if target == "" || target == "*" {
		target = req.URL.RequestURI()
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	return weburl.RequestTarget(scheme, host, target)
}

// RefreshURL is the address of a Refresh header or a <meta http-equiv=refresh> content value
// ("N; url=ADDRESS"), or "" when it names none. As the HTML Standard's declarative refresh
// steps read it: "url" (any case) is skipped, with or without the "=" after it.
func RefreshURL(v string) string {
	i := strings.IndexAny(v, ";,")
	if i < 0 {
		return ""
	}
	rest := strings.TrimSpace(v[i+1:])
	if len(rest) >= 3 && strings.EqualFold(rest[:3], "url") {
		rest = strings.TrimSpace(rest[3:])
		if after, ok := strings.CutPrefix(rest, "="); ok {
			rest = strings.TrimSpace(after)
		}
	}
	return strings.Trim(rest, `"'`)
}

// RedirectTarget is where a response sends the browser next: its Location on a 3xx, or the URL
// of a Refresh header; "" when it sends it nowhere.
func RedirectTarget(resp *http.Response) string {
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		if loc := resp.Header.Get("Location"); loc != "" {
			return loc
		}
	}
	return RefreshURL(resp.Header.Get("Refresh"))
}
