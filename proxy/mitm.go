package proxy

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// Interception. goproxy answers the CONNECT and hands over the raw connection; from there the
// connection is served by an ordinary net/http server (s.inner) fed through connListener: TLS
// with a leaf for the requested name (HTTP/2 or HTTP/1.1 by ALPN), or plain HTTP when the
// browser tunnels ws:// or http:// through CONNECT. net/http gives buffered writes, correct
// chunking and flushing, 100-continue, keep-alive and request-parsing limits; the pipeline
// (pipeline.go) sees every request the same way whichever connection it came on.
//
// goproxy's own MITM loop is not used: it writes each chunk of a changed body as three TLS
// records, drops the connection instead of answering when the upstream fails, and serves HTTP/2
// through a separate path with different semantics.

// handshakeTimeout bounds the TLS handshake with the browser.
const handshakeTimeout = 15 * time.Second

// hijackMITM takes over a CONNECT that is to be intercepted.
func (s *Server) hijackMITM(req *http.Request, client net.Conn, ctx *goproxy.ProxyCtx) {
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		client.Close()
		return
	}
	conn := &watchedConn{Conn: client, closed: make(chan struct{})}
	go s.startIntercepted(conn, req.URL.Host)
	if req.ProtoMajor == 2 {
		// An HTTP/2 CONNECT stream lives only while its handler runs.
		<-conn.closed
	}
}

// startIntercepted looks at the first byte the browser sends through the tunnel: a TLS
// handshake is terminated with a leaf for the requested name; anything else is served as
// plain HTTP.
func (s *Server) startIntercepted(conn *watchedConn, connectHost string) {
	defer httpx.Recovered(s.log, "an intercepted connection")
	conn.SetReadDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReaderSize(conn, 1024)
	first, err := br.Peek(1)
	if err != nil {
		conn.Close()
		return
	}
	conn.SetReadDeadline(time.Time{})
	var c net.Conn = &peekedConn{watchedConn: conn, r: br}
	if first[0] == 0x16 { // TLS handshake record
		cfg := s.issuer.TLSConfig(connectHost)
		cfg.NextProtos = []string{"h2", "http/1.1"}
		c = tls.Server(c, cfg)
	}
	if err := s.mitm.push(c); err != nil {
		c.Close()
	}
}

// connListener is a net.Listener fed with connections by push.
type connListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newConnListener() *connListener {
	return &connListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) error {
	select {
	case l.conns <- c:
		return nil
	case <-l.done:
		return net.ErrClosed
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return interceptAddr{} }

type interceptAddr struct{}

func (interceptAddr) Network() string { return "intercept" }
func (interceptAddr) String() string  { return "intercepted connections" }

// watchedConn tells when the tunnel's connection is closed.
type watchedConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *watchedConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// peekedConn reads through the buffer that holds the peeked first bytes.
type peekedConn struct {
	*watchedConn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
