package proxy

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
	"syscall"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// upstreamFailure is what the person is told about a failed upstream request.
type upstreamFailure struct {
	status int
	title  string
	reason string
	hint   string
}

// classifyUpstreamError turns a transport error into words a person can act on.
func classifyUpstreamError(host string, err error) upstreamFailure {
	var (
		dnsErr     *net.DNSError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		verifyErr  *tls.CertificateVerificationError
		recordErr  tls.RecordHeaderError
		netErr     net.Error
	)
	f := upstreamFailure{status: http.StatusBadGateway, reason: err.Error()}
	switch {
	case errors.Is(err, httpx.ErrNotResolved):
		f.title = "This host is not reachable in offline mode"
		f.hint = "The proxy was started with only --resolve hosts allowed. Add --resolve " + host + ":PORT=ADDR:PORT."
	case errors.Is(err, errLocalNetwork):
		f.status = http.StatusForbidden
		f.title = "This page may not reach your local network"
		f.hint = "A page asked for " + host + ", an address on your own machine or local network, and that page is not itself on your network. remixproxy sends such requests only when you open the address yourself (type it, or follow a link to it), or when a page of your network asks."
	case errors.Is(err, httpx.ErrLoop):
		f.title = "This request would loop back to the proxy"
		f.hint = "The address is remixproxy's own. Open http://remix.proxy/ for its pages."
	case errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalidErr), errors.As(err, &verifyErr):
		f.title = "This site's certificate is not valid"
		f.hint = "remixproxy verifies every site's certificate and will not connect to " + host +
			" with this one. If this is your own development server, start remixproxy with --upstream-ca FILE (your dev CA's certificate)."
	case errors.As(err, &recordErr):
		f.title = "The site did not answer with TLS"
		f.hint = "The server at " + host + " does not speak HTTPS on this port. Try http:// instead."
	case errors.As(err, &dnsErr):
		f.title = "The site's address could not be found"
		f.hint = "Check the spelling of " + host + " and your network connection."
	case errors.Is(err, syscall.ECONNREFUSED):
		f.title = "The site refused the connection"
		f.hint = "Nothing is listening at " + host + ". Is the server running?"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		f.title = "The connection to the site was reset"
		f.hint = "The server at " + host + " closed the connection before answering. Try again."
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		f.status = http.StatusGatewayTimeout
		f.title = "The site took too long to answer"
		f.hint = "The server at " + host + " did not answer in time. Try again later."
	case errors.Is(err, context.Canceled):
		f.title = "The request was cancelled"
		f.hint = "The browser stopped waiting for " + host + "."
	default:
		f.title = "The site could not be reached"
		f.hint = "remixproxy could not get an answer from " + host + "."
	}
	return f
}

// writeUpstreamError is the pipeline's ErrorHandler: the HTML page the browser gets instead of
// the site's answer. req is the outbound request.
func (s *Server) writeUpstreamError(w http.ResponseWriter, req *http.Request, err error) {
	host := req.URL.Host
	if errors.Is(err, context.Canceled) && req.Context().Err() != nil {
		return // the browser went away; nobody is there to read a page
	}
	s.log.Info("upstream failed", "url", httpx.RedactURL(req), "err", err)
	f := classifyUpstreamError(host, err)
	var body bytes.Buffer
	if rerr := panel.RenderError(&body, panel.ErrorPage{
		Status: f.status, Title: f.title, Host: host, URL: httpx.RedactURL(req), Reason: f.reason, Hint: f.hint,
	}); rerr != nil {
		body.Reset()
		fmt.Fprintf(&body, "remixproxy: %s: %s\n", f.title, f.reason)
	}
	h := w.Header()
	h.Set(httpx.MarkerHeader, "error")
	httpx.WriteOwnPage(w, f.status, body.Bytes())
}
