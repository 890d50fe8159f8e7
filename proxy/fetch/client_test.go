package fetch

import (
	"context"
	"errors"
	"net"
	"testing"
)

// A fetch host that is not in --resolve is dialed only at a public address: a name pointing at
// the person's own machine or network is refused.
func TestDialRefusesLocalAddresses(t *testing.T) {
	dialed := false
	c := New(Config{Dial: func(context.Context, string, string) (net.Conn, error) {
		dialed = true
		return nil, errors.New("the pipeline's dialer was used")
	}})
	for _, addr := range []string{"localhost:443", "127.0.0.1:80", "[::1]:443", "10.0.0.1:443", "169.254.169.254:80"} {
		conn, err := c.dial(context.Background(), "tcp", addr)
		if err == nil {
			conn.Close()
		}
		if !errors.Is(err, ErrLocalAddress) {
			t.Errorf("dial %s = %v; want %v", addr, err, ErrLocalAddress)
		}
	}
	if dialed {
		t.Error("an address without a --resolve entry was dialed with the pipeline's dialer")
	}
}
