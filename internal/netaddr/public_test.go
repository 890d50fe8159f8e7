package netaddr

import (
	"net/netip"
	"testing"
)

func TestIsPublic(t *testing.T) {
	for _, tt := range []struct {
		ip   string
		want bool
	}{
		{"93.184.216.34", true},
		{"2606:2800:220:1:248:1893:25c8:1946", true},
		{"64:ff9b::5db8:d822", true},   // NAT64 of 93.184.216.34: how an IPv6-only network reaches it
		{"2002:5db8:d822::1", true},    // 6to4 of 93.184.216.34
		{"::ffff:93.184.216.34", true}, // IPv4-mapped
		{"127.0.0.1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"100.64.0.1", false},      // carrier-grade NAT
		{"100.101.102.103", false}, // a Tailscale node
		{"192.0.0.170", false},
		{"192.0.2.1", false},
		{"198.18.0.1", false},
		{"203.0.113.9", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		{"224.0.0.1", false},
		{"::", false},
		{"::1", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fd00::1", false},
		{"fec0::1", false},
		{"ff02::1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:127.0.0.1", false},
		{"64:ff9b::a00:1", false},   // NAT64 of 10.0.0.1
		{"64:ff9b::7f00:1", false},  // NAT64 of 127.0.0.1
		{"64:ff9b:1::a00:1", false}, // local-use NAT64
		{"2002:a00:1::1", false},    // 6to4 of 10.0.0.1
		{"2002:7f00:1::1", false},   // 6to4 of 127.0.0.1
		{"2001::1", false},          // Teredo
		{"2001:db8::1", false},
		{"100::1", false},
	} {
		ip, err := netip.ParseAddr(tt.ip)
		if err != nil {
			t.Fatalf("%s: %v", tt.ip, err)
		}
		if got := IsPublic(ip); got != tt.want {
			t.Errorf("IsPublic(%s) = %v, want %v", tt.ip, got, tt.want)
		}
	}
}
