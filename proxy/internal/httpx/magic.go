package httpx

import "strings"

// MagicHost is the host name the proxy answers itself, over http and https, like mitm.it.
const MagicHost = "remix.proxy"

// IsMagicHost reports whether hostname (without a port) is the magic host, in any case and with
// or without a trailing dot.
func IsMagicHost(hostname string) bool {
	return strings.EqualFold(strings.TrimSuffix(hostname, "."), MagicHost)
}
