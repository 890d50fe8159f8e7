package proxy

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

func TestClassifyUpstreamError(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("dialing example.com:443: %w", err) }
	cases := []struct {
		name   string
		err    error
		status int
		title  string
	}{
		{"dns", wrap(&net.DNSError{Err: "no such host", Name: "example.com", IsNotFound: true}), 502, "address could not be found"},
		{"refused", wrap(&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), 502, "refused"},
		{"reset", wrap(&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), 502, "reset"},
		{"eof", wrap(io.ErrUnexpectedEOF), 502, "reset"},
		{"timeout", wrap(context.DeadlineExceeded), 504, "too long"},
		{"unknown authority", wrap(x509.UnknownAuthorityError{}), 502, "certificate is not valid"},
		{"wrong host", wrap(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "example.com"}), 502, "certificate is not valid"},
		{"offline", wrap(httpx.ErrNotResolved), 502, "offline mode"},
		{"loop", wrap(httpx.ErrLoop), 502, "loop back"},
		{"other", errors.New("something odd"), 502, "could not be reached"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := classifyUpstreamError("example.com:443", c.err)
			if f.status != c.status || !strings.Contains(f.title, c.title) {
				t.Errorf("got %d %q, want %d and a title containing %q", f.status, f.title, c.status, c.title)
			}
			if f.hint == "" || f.reason == "" {
				t.Errorf("hint %q reason %q: both must say something", f.hint, f.reason)
			}
		})
	}
}
