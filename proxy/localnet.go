package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/remixproxy/remixproxy/internal/netaddr"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// Local network access. Chromium asks the person before a page of the public internet reaches
// a local address (Local Network Access): the person's own machine, their local network, a VPN.
// Through a proxy the browser cannot tell: it connects to the proxy, and the proxy dials
// whatever the site's name resolves to. Without a check of its own the proxy would be any
// page's way into the person's router, printer or development servers — by a name whose DNS
// answer is local, by an address written as a number, or by a public name that later answers
// a local address (DNS rebinding).
//
// So every page request is decided here, before it goes (serveProxied), from what the browser
// set: a request the person could be making — an address typed (Sec-Fetch-Site: none), or a
// navigation that carries no Origin (a link followed, a location set; form posts carry one) —
// may reach any address, as without the proxy; any other request may reach a local address
// only when its initiator (Origin, else the Referer, else the target itself for a same-origin
// request) is itself a local site: one whose name answers only local addresses and was never
// seen at a public one. An unknown initiator (no Origin, no Referer, or "null") is not local.
// Every request goes first through transports whose dial refuses local addresses (dialPublic),
// so a name that answers both, or changes its answer, cannot lead there; only a request that
// may reach them is sent again, when its address was local, through transports of its own
// (scopedTransport), whose connections are never shared with the others.
//
// Left as Chromium itself leaves them, or as the proxy cannot see them: navigations without an
// Origin (over http an <iframe> cannot be told from a top-level navigation: both only say
// Upgrade-Insecure-Requests); --no-mitm tunnels (a CONNECT says nothing of its page); a
// local page that sends no Referer (Referrer-Policy: no-referrer) has its subresources refused.

// errLocalNetwork is a page request's refusal: its address is local and its page is not.
var errLocalNetwork = errors.New("the address is on your own machine or local network, and the page that asked is not")

// maxAddressSpaces bounds the names whose address space is remembered (some 20 MiB at most).
// Once it is full, a name not remembered is no local site (localSite): forgetting that a name
// was public would let it be rebound, so the check fails closed — a page of a local name first
// met after that has its subresources refused until the proxy restarts.
const maxAddressSpaces = 1 << 18

// lookupTimeout bounds the lookup of an initiator's name.
const lookupTimeout = 3 * time.Second

// addressSpaces remembers, per host name, whether the proxy has dialed it at a public address
// (ever: a name seen public stays public, so rebinding it later to a local address does not
// make its pages local) or only at local ones.
type addressSpaces struct {
	mu     sync.RWMutex
	public map[string]bool // name → seen at a public address (true) or only at local ones (false)
}

// note records that host was dialed at a public address (public) or a local one.
func (a *addressSpaces) note(host string, public bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	a.mu.Lock()
	defer a.mu.Unlock()
	if was, ok := a.public[host]; ok {
		a.public[host] = was || public
		return
	}
	if len(a.public) < maxAddressSpaces {
		a.public[host] = public
	}
}

// full reports whether no more names are remembered.
func (a *addressSpaces) full() bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.public) >= maxAddressSpaces
}

// seen reports what is remembered of host.
func (a *addressSpaces) seen(host string) (public, ok bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	public, ok = a.public[strings.ToLower(strings.TrimSuffix(host, "."))]
	return public, ok
}

// isPublic reports whether ip is on the public internet (Config.PublicAddress).
func (s *Server) isPublic(ip netip.Addr) bool {
	ip = ip.Unmap()
	if s.cfg.PublicAddress != nil {
		return s.cfg.PublicAddress(ip)
	}
	return netaddr.IsPublic(ip)
}

// mayReachLocal decides whether a page's request may be sent to a local address (see the top
// of the file). It reads only headers the browser sets and a page cannot.
func (s *Server) mayReachLocal(r *http.Request) bool {
	site, dest := r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Sec-Fetch-Dest")
	if site == "none" {
		return true // typed, a bookmark: the person's own
	}
	origin, hasOrigin := r.Header["Origin"]
	navigation := dest == "document" || dest == "" && site == "" && r.Header.Get("Upgrade-Insecure-Requests") == "1"
	if navigation && !hasOrigin {
		return true // a top-level navigation, as Chromium lets it go; a form post is decided below
	}
	if public, ok := s.spaces.seen(httpx.HostOnly(r.Host)); ok && public {
		// A name seen at a public address goes to public addresses only, whoever else asks:
		// its answer turning local is DNS rebinding (or split-horizon DNS, the same to the
		// proxy), and no initiator need be read.
		return false
	}
	var initiator string
	switch {
	case hasOrigin:
		initiator = origin[0]
	case r.Header.Get("Referer") != "":
		initiator = r.Header.Get("Referer")
	case site == "same-origin":
		initiator = httpx.RequestScheme(r) + "://" + r.Host
	default:
		return false // the browser hid who asked
	}
	u, err := weburl.Parse(initiator)
	if err != nil {
		return false
	}
	if o := u.Origin(); o == "null" {
		return false // an opaque origin: a sandboxed frame, a data: address
	} else if u, err = weburl.Parse(o); err != nil || !u.IsHTTP() {
		return false
	}
	return s.localSite(r.Context(), u.HostKey(), u.Port())
}

// localSite reports whether host is a local site: an address written as a local number, or a
// name never seen at a public address that answers only local ones now.
func (s *Server) localSite(ctx context.Context, host, port string) bool {
	if httpx.IsMagicHost(host) {
		return false
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return !s.isPublic(ip)
	}
	if public, ok := s.spaces.seen(host); ok {
		return !public
	}
	if s.spaces.full() {
		return false // its first answer may have been public: see maxAddressSpaces
	}
	ips, err := s.resolveUpstream(ctx, net.JoinHostPort(host, port))
	if err != nil || len(ips) == 0 {
		return false
	}
	local := s.allLocal(ips)
	s.spaces.note(host, !local)
	return local
}

// allLocal reports whether ips is not empty and holds no public address.
func (s *Server) allLocal(ips []netip.Addr) bool {
	for _, ip := range ips {
		if s.isPublic(ip) {
			return false
		}
	}
	return len(ips) > 0
}

// resolveUpstream is the addresses addr (host:port) is dialed at: its --resolve mapping, or
// what DNS answers.
func (s *Server) resolveUpstream(ctx context.Context, addr string) ([]netip.Addr, error) {
	target := addr
	if mapped, ok := s.cfg.Resolve[strings.ToLower(addr)]; ok {
		target = mapped
	} else if s.cfg.OnlyResolved {
		return nil, fmt.Errorf("resolving %s: %w", addr, httpx.ErrNotResolved)
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", addr, err)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", addr, err)
	}
	return ips, nil
}

// noteDialed records the address space of the address a connection to addr reached.
func (s *Server) noteDialed(addr string, conn net.Conn) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return
	}
	if ap, err := netip.ParseAddrPort(conn.RemoteAddr().String()); err == nil {
		s.spaces.note(host, s.isPublic(ap.Addr()))
	}
}

// dialPublic is dialUpstream for the requests that may not reach local addresses: each
// address the dialer tries (after --resolve or DNS, Happy Eyeballs included) is checked as it
// is connected to, so a name that answers both kinds, or changes its answer in between,
// cannot lead to a local one.
func (s *Server) dialPublic(ctx context.Context, network, addr string) (net.Conn, error) {
	return s.dial(ctx, network, addr, s.refuseLocal)
}

// refuseLocal is a net.Dialer's ControlContext: it refuses a local address.
func (s *Server) refuseLocal(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("checking %s: %w", address, err)
	}
	if !s.isPublic(ap.Addr()) {
		return errLocalNetwork
	}
	return nil
}

// refuseLocalBeforeCard answers with the local-network refusal a request the send guard is
// about to hold for the person's card (chat.Config.RefusedAnyway) when the dial could only
// refuse it: it may not reach local addresses (mayReachLocal) and its host answers only local
// ones — a host of the chat's site on the person's network (split-horizon DNS, an intranet
// name under the same domain). So the card never asks about a request that can never go. It
// is asked only on the send guard's slow path (a page's non-GET to the chat's site while an
// agent's action runs), and resolves at most once: not for an address written as a number,
// nor for a name already dialed at a public address (the card may let that one go). The
// request it refuses is never dialed, so the name's answer cannot change between this check
// and the dial; a name that answers both kinds, or nothing, gets its card as before.
func (s *Server) refuseLocalBeforeCard(w http.ResponseWriter, r *http.Request) bool {
	if s.mayReachLocal(r) {
		return false
	}
	host, port := httpx.HostOnly(r.Host), "80"
	if _, p, err := net.SplitHostPort(r.Host); err == nil {
		port = p
	} else if httpx.RequestScheme(r) == "https" {
		port = "443"
	}
	local := false
	if ip, err := netip.ParseAddr(host); err == nil {
		local = !s.isPublic(ip)
	} else if public, ok := s.spaces.seen(host); ok && public {
		return false
	} else if ips, err := s.resolveUpstream(r.Context(), net.JoinHostPort(host, port)); err == nil {
		local = s.allLocal(ips)
	}
	if !local {
		return false
	}
	s.writeUpstreamError(w, r, fmt.Errorf("sending a page's request to %s before its card: %w", host, errLocalNetwork))
	return true
}

// publicOnlyKey marks a request's context: it may not reach local addresses.
type publicOnlyKey struct{}

// scopeLocalNetwork marks r for the public-only transports unless it may reach local
// addresses (mayReachLocal).
func (s *Server) scopeLocalNetwork(r *http.Request) *http.Request {
	if s.mayReachLocal(r) {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), publicOnlyKey{}, true))
}

// scopedTransport sends every request through the public-only transports first, so that the
// person's navigations and the page's subresources share their connections to a public site
// (a second pool would cost each site a second connection, a handshake before the page's
// first subresource). Only a request that may reach local addresses and whose address turned
// out local (the public-only dial refused it, having sent nothing) goes again through the
// unchecked transports, whose connections therefore lead to local addresses only and serve
// such requests only.
type scopedTransport struct {
	any, public http.RoundTripper
	// spaces tells a name seen only at local addresses: a request allowed them goes straight
	// to the unchecked transports (no refused dial, no lookup, each time).
	spaces *addressSpaces
}

func (t scopedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if only, _ := req.Context().Value(publicOnlyKey{}).(bool); only {
		return t.public.RoundTrip(req)
	}
	if public, ok := t.spaces.seen(req.URL.Hostname()); ok && !public {
		return t.any.RoundTrip(req)
	}
	body := req.Body
	if body != nil && body != http.NoBody {
		// A transport closes the body on every error; a refused dial has read none of it,
		// and the second attempt sends it whole.
		req.Body = keptOpen{body}
	}
	resp, err := t.public.RoundTrip(req)
	if err == nil || !errors.Is(err, errLocalNetwork) {
		return resp, err
	}
	req.Body = body
	return t.any.RoundTrip(req)
}

// keptOpen is a request body whose Close is left to the caller.
type keptOpen struct{ io.ReadCloser }

func (keptOpen) Close() error { return nil }
