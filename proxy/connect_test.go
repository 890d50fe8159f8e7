package proxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts the connections the upstream accepts.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// A CONNECT, and the TLS handshake through it, reach no upstream: the proxy answers both itself
// and dials only for the first request. So what the browser does for <link rel=preconnect> or
// dns-prefetch, or for a request a policy then blocks, makes no connection and no DNS lookup
// for the host it names (a host whose labels carry data included). Red-team pass 5a; it held.
func TestConnectDialsNothingBeforeARequest(t *testing.T) {
	ts := httptest.NewUnstartedServer(htmlHandler(plainPage))
	cl := &countingListener{Listener: ts.Listener}
	ts.Listener = cl
	ts.StartTLS()
	t.Cleanup(ts.Close)
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())
	f := newFixture(t, fixtureOpts{resolve: map[string]string{siteHost + ":443": ts.Listener.Addr().String()}, roots: roots, onlyResolved: true})

	c, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "CONNECT "+siteHost+":443 HTTP/1.1\r\nHost: "+siteHost+":443\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.ca.CertPEM)
	tc := tls.Client(c, &tls.Config{ServerName: siteHost, RootCAs: pool, NextProtos: []string{"http/1.1"}})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("TLS through the tunnel: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := cl.n.Load(); n != 0 {
		t.Fatalf("the upstream accepted %d connections after a CONNECT and a handshake, before any request", n)
	}
	// The control: the first request dials.
	io.WriteString(tc, "GET / HTTP/1.1\r\nHost: "+siteHost+"\r\nSec-Fetch-Dest: image\r\nConnection: close\r\n\r\n")
	got, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatalf("request through the tunnel: %v", err)
	}
	body, _ := io.ReadAll(got.Body)
	if !strings.Contains(string(body), "hello") || cl.n.Load() != 1 {
		t.Errorf("the request got %q and the upstream accepted %d connections, want the page and 1", body, cl.n.Load())
	}
}
