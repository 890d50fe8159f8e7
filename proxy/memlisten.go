package proxy

import (
	"context"
	"errors"
	"net"
	"sync"
)

// memListener is a net.Listener whose connections are in-process pipes. The magic host's server
// listens on one, so remix.proxy is served without a port any other process could reach.
type memListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for the next DialContext.
func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and makes DialContext fail.
func (l *memListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr names the listener.
func (l *memListener) Addr() net.Addr { return memAddr{} }

// DialContext returns the client end of a new pipe whose server end Accept returns.
func (l *memListener) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		client.Close()
		server.Close()
		return nil, errors.New("dialing remix.proxy: proxy is shutting down")
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "remix.proxy" }
