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
	for _, addr := range []string{"localhost:443", "127.0.0.1:80", "[::1]:443", "10.0.0.1:443", "169.254.169.254:80",
		// A mesh VPN's tailnet and carrier-grade NAT; NAT64 and 6to4 of local addresses.
		"100.100.100.100:443", "100.64.0.1:80", "[64:ff9b::a00:1]:443", "[64:ff9b::7f00:1]:80", "[2002:a00:1::1]:443"} {
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
