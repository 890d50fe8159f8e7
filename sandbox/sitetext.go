package sandbox

import (
	"strings"

	"golang.org/x/net/publicsuffix"
)

// SiteText is a host pattern of Sites ("shop.example.com", "*.example.com") as the proxy writes
// it for the person. A wildcard on a whole public suffix ("*.com", "*.co.uk", "*.github.io")
// reads like one host but covers every site under that suffix, so it is written as such; every
// other pattern is written as it is.
func SiteText(h string) string {
	base, ok := strings.CutPrefix(h, "*.")
	if !ok {
		return h
	}
	if ps, _ := publicsuffix.PublicSuffix(base); ps == base {
		return "every site under ." + base
	}
	return h
}

// sitesText joins host patterns as SiteText writes them.
func sitesText(hosts []string) string {
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = SiteText(h)
	}
	return strings.Join(out, ", ")
}
