// Package netaddr decides which IP addresses the proxy may send a request to on a remixlet's or
// the agent's behalf (rmx.fetch, http_request) and which a fetch: or network:observe: permission
// may name: public ones only, never the person's own machine, local network or an address that
// leads there. It never dials or resolves anything itself.
package netaddr

import "net/netip"

// notPublic are the special-purpose blocks (IANA's IPv4 and IPv6 special-purpose address
// registries) that are not globally reachable and that Go's IsPrivate, IsLoopback,
// IsLinkLocal… do not already refuse: shared address space (carrier-grade NAT, and the
// tailnets of mesh VPNs such as Tailscale), "this network", the IETF protocol block,
// documentation and benchmarking blocks, reserved space, IPv6 discard-only, local-use NAT64,
// the deprecated site-local block, and Teredo.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001::/32"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fec0::/10"),
}

// Addresses that carry an IPv4 address inside an IPv6 one and lead to it: NAT64's well-known
// prefix (an IPv6-only network's gateway sends 64:ff9b::a00:1 to 10.0.0.1) and 6to4.
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// IsPublic reports whether ip is a globally reachable unicast address: not loopback, private,
// link-local, multicast, unspecified or any block in notPublic, and, for an IPv4-mapped, NAT64
// or 6to4 address, not one whose IPv4 address is any of those. A zone makes it local.
func IsPublic(ip netip.Addr) bool {
	if ip.Zone() != "" {
		return false
	}
	ip = ip.Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			return IsPublic(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixTo4.Contains(ip):
			return IsPublic(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	if !ip.IsGlobalUnicast() || ip.IsPrivate() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}
