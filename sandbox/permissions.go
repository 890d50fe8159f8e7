package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/remixproxy/remixproxy/internal/netaddr"
	"github.com/remixproxy/remixproxy/internal/weburl"
)

// The permissions a remixlet can ask for. Network permissions are always scoped to one named
// host: there is no permission for every host.
const (
	PermStorage       = "storage"       // rmx.storage, the remixlet's own data in the proxy
	PermClipboard     = "clipboard"     // write text to the clipboard; never read it
	PermNotifications = "notifications" // text-only notifications
	PermMenu          = "menu"          // commands in the remixlet menu
	PermSchedule      = "schedule"      // one of three fixed actions, later
	PermNetRules      = "netrules"      // declarative network rules (rules.json)

	PermFetchPrefix          = "fetch:"           // + HOST: rmx.fetch to that host, as the person
	PermNetworkObservePrefix = "network:observe:" // + HOST: read responses the page gets from HOST
)

// knownPermissionForms is the list shown in problems about unknown permissions.
var knownPermissionForms = []string{
	PermStorage, PermClipboard, PermNotifications, PermMenu, PermSchedule,
	PermFetchPrefix + "HOST", PermNetworkObservePrefix + "HOST", PermNetRules,
}

// permissionTexts are the fixed descriptions shown to the person. They are the only words the
// approval dialog uses for a permission; the reason in the manifest never replaces them.
var permissionTexts = map[string]string{
	PermStorage:       "Keep its own data in the proxy",
	PermClipboard:     "Write text to your clipboard (it cannot read the clipboard)",
	PermNotifications: "Show you text notifications",
	PermMenu:          "Add commands to the remixlet menu",
	PermSchedule:      "Act later without the page open: show a text notification, open one of its own pages, or leave a message for its next run",
	PermNetRules:      "Change what pages load: block or redirect requests and change their headers",
}

// PermissionHost splits a host-scoped permission name ("fetch:api.example.com") into its kind
// ("fetch:") and host. For other names it returns ok false.
func PermissionHost(name string) (kind, host string, ok bool) {
	for _, prefix := range []string{PermFetchPrefix, PermNetworkObservePrefix} {
		if h, found := strings.CutPrefix(name, prefix); found {
			return prefix, h, true
		}
	}
	return "", "", false
}

// ValidatePermission reports whether name is a known permission with, where it names one, a
// valid host. Its error says what is wrong.
func ValidatePermission(name string) error {
	if _, ok := permissionTexts[name]; ok {
		return nil
	}
	if kind, host, ok := PermissionHost(name); ok {
		if err := ValidatePermissionHost(host); err != nil {
			return fmt.Errorf("%s: %w", strings.TrimSuffix(kind, ":"), err)
		}
		return nil
	}
	if strings.HasPrefix(name, "network:") {
		return fmt.Errorf("unknown permission %q (the network permission is network:observe:HOST)", name)
	}
	return fmt.Errorf("unknown permission %q", name)
}

// proxyOwnHost is the host the proxy answers itself (proxy/internal/httpx.MagicHost; proxy's
// TestNoPermissionCardForTheProxysOwnHost fails if the two differ).
const proxyOwnHost = "remix.proxy"

// ValidatePermissionHost checks the HOST of fetch:HOST and network:observe:HOST: one lowercase
// host name with at least two labels, or a public IP address (IPv6 in brackets); no wildcard,
// scheme, user, port or path, and no address that is not public (netaddr.IsPublic: loopback,
// private, link-local, carrier-grade NAT and tailnets, NAT64 or 6to4 of those, …). Nor the
// proxy's own host: rmx.fetch never asks it and nothing there is observed, so the permission
// would be inert, and a card must not ask the person for it (OPEN-ITEMS 117).
func ValidatePermissionHost(host string) error {
	switch {
	case host == "":
		return errors.New("missing host: name one host, e.g. api.example.com")
	case host == proxyOwnHost:
		return fmt.Errorf("%s is the proxy's own host: no remixlet fetches or observes it", host)
	case strings.Contains(host, "*"):
		return errors.New("wildcards are not allowed: name each host, e.g. api.example.com")
	case strings.Contains(host, "://"):
		return errors.New("write the host only, without a scheme")
	case strings.ContainsAny(host, "/?#"):
		return errors.New("write the host only, without a path")
	case strings.Contains(host, "@"):
		return errors.New("write the host only, without a user name")
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if strings.Contains(host, ":") && !(strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")) {
			return errors.New("write an IPv6 address in brackets")
		}
		// The proxy makes these requests itself: never to its own machine or local network.
		if !netaddr.IsPublic(ip) {
			return fmt.Errorf("%s is a loopback, private or otherwise local address", host)
		}
		return nil
	}
	if strings.Contains(host, ":") {
		return errors.New("write the host only, without a port")
	}
	if len(host) > 253 {
		return errors.New("host name is too long")
	}
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return fmt.Errorf("%q is not a full host name, e.g. api.example.com", host)
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("%q is not a valid host name", host)
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return fmt.Errorf("%q may contain only lowercase letters, digits, '-' and '.' (write non-ASCII names in punycode)", host)
			}
		}
	}
	// The host as the browser reads it (DESIGN invariant 9) must be the host written: a name
	// of numbers ("127.1", "0x7f.1") is an IPv4 address to a browser, and punycode must decode.
	read, err := weburl.Host(host)
	if err != nil {
		return fmt.Errorf("%q is not a valid host name", host)
	}
	if read != host {
		if ip, err := netip.ParseAddr(read); err == nil {
			return fmt.Errorf("%q is the IP address %s to a browser: write an IP address in its usual form, and never a local one", host, ip)
		}
		return fmt.Errorf("%q reads as %q in a browser: write that", host, read)
	}
	return nil
}

// PermissionText returns the fixed text the proxy shows a person for a permission, or "" for a
// permission that is not valid. It depends on the permission name alone, never on the reason
// a remixlet gives for it.
func PermissionText(name string) string {
	if t, ok := permissionTexts[name]; ok {
		return t
	}
	if ValidatePermission(name) != nil {
		return ""
	}
	kind, host, _ := PermissionHost(name)
	switch kind {
	case PermFetchPrefix:
		return "Send requests to " + host + " as you, with your cookies"
	case PermNetworkObservePrefix:
		return "Read the responses pages receive from " + host
	}
	return ""
}

// HasPermission reports whether the manifest lists the permission.
func (m *Manifest) HasPermission(name string) bool {
	for _, p := range m.Permissions {
		if p.Name == name {
			return true
		}
	}
	return false
}

// FetchHosts returns the hosts named by the manifest's fetch: permissions.
func (m *Manifest) FetchHosts() []string {
	var hosts []string
	for _, p := range m.Permissions {
		if kind, host, ok := PermissionHost(p.Name); ok && kind == PermFetchPrefix {
			hosts = append(hosts, host)
		}
	}
	return hosts
}

// StyleHostAllowed reports whether style.css may load from host on some page: a host the
// remixlet's matches cover (any host for a remixlet that runs on every site) or one a fetch:
// permission names. A network:observe: permission allows no loads. It is the save-time bound;
// on a page the proxy allows only the matches' hosts within the page's site (and fetch: hosts:
// proxy/remixlet/sendhosts.go), since where a remixlet runs is not where it may send.
func (m *Manifest) StyleHostAllowed(host string) bool {
	host = strings.ToLower(host)
	if m.Sites().CoversHost(host) {
		return true
	}
	for _, h := range m.FetchHosts() {
		if h == host {
			return true
		}
	}
	return false
}
