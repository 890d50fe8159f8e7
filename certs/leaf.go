package certs

import (
	"container/list"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

const (
	// leafValidity is how long a leaf is valid: well under the 200-day limit browsers apply to
	// public roots, although they do not apply it to a locally trusted one.
	leafValidity = 90 * 24 * time.Hour
	// leafBackdate covers clients whose clocks are a little behind.
	leafBackdate = time.Hour
	// leafRenewBefore is how close to expiry a cached leaf is issued again.
	leafRenewBefore = 7 * 24 * time.Hour
	// defaultMaxEntries bounds the leaf cache when NewIssuer is given no bound.
	defaultMaxEntries = 1000
	// maxCommonName is the X.509 upper bound for a CommonName (RFC 5280 ub-common-name).
	maxCommonName = 64
)

// Issuer signs leaf certificates for hosts with the CA. Leaves reuse the CA's key pair (as
// mitmproxy's do), so issuing one is a single ECDSA signature and Chromium's
// --ignore-certificate-errors-spki-list with the CA's SPKI hash covers them. Leaves are kept in a
// bounded LRU cache; concurrent requests for the same host share one signature.
// An Issuer is safe for concurrent use.
type Issuer struct {
	ca  *CA
	max int

	// now is the clock; tests replace it. If nil, time.Now.
	now func() time.Time
	// onSign, if not nil, is called once per leaf signature (tests count them).
	onSign func(host string)

	mu       sync.Mutex
	lru      *list.List               // of *leafEntry, most recently used first
	byHost   map[string]*list.Element // host → element in lru
	inflight map[string]*leafCall     // host → generation in progress
}

type leafEntry struct {
	host string
	cert *tls.Certificate
}

// leafCall is one generation in progress; callers for the same host wait on done.
type leafCall struct {
	done chan struct{}
	cert *tls.Certificate
	err  error
}

// NewIssuer returns an Issuer signing with ca whose cache holds at most maxEntries leaves
// (maxEntries <= 0 means 1000).
func NewIssuer(ca *CA, maxEntries int) *Issuer {
	if maxEntries <= 0 {
		maxEntries = defaultMaxEntries
	}
	return &Issuer{
		ca:       ca,
		max:      maxEntries,
		lru:      list.New(),
		byHost:   make(map[string]*list.Element),
		inflight: make(map[string]*leafCall),
	}
}

func (i *Issuer) clock() time.Time {
	if i.now != nil {
		return i.now()
	}
	return time.Now()
}

// Certificate returns a leaf for host, a DNS name or an IP address, optionally with a port
// ("example.com:443", "[::1]:443"). The chain is leaf then CA; Leaf is set. The same
// *tls.Certificate is returned for the same host while it is cached and not near expiry.
func (i *Issuer) Certificate(host string) (*tls.Certificate, error) {
	name, ip, err := normalizeHost(host)
	if err != nil {
		return nil, err
	}

	i.mu.Lock()
	if el, ok := i.byHost[name]; ok {
		e := el.Value.(*leafEntry)
		if i.clock().Add(leafRenewBefore).Before(e.cert.Leaf.NotAfter) {
			i.lru.MoveToFront(el)
			i.mu.Unlock()
			return e.cert, nil
		}
		i.lru.Remove(el)
		delete(i.byHost, name)
	}
	if c, ok := i.inflight[name]; ok {
		i.mu.Unlock()
		<-c.done
		return c.cert, c.err
	}
	c := &leafCall{done: make(chan struct{})}
	i.inflight[name] = c
	i.mu.Unlock()

	defer func() {
		i.mu.Lock()
		delete(i.inflight, name)
		if c.err == nil && c.cert != nil {
			i.byHost[name] = i.lru.PushFront(&leafEntry{host: name, cert: c.cert})
			for i.lru.Len() > i.max {
				old := i.lru.Back()
				i.lru.Remove(old)
				delete(i.byHost, old.Value.(*leafEntry).host)
			}
		}
		i.mu.Unlock()
		close(c.done)
	}()
	c.err = fmt.Errorf("issuing certificate for %s: signing did not finish", name) // if issue panics
	c.cert, c.err = i.issue(name, ip)
	return c.cert, c.err
}

// issue signs a new leaf for a normalized name; ip is valid when name is an IP address.
func (i *Issuer) issue(name string, ip netip.Addr) (*tls.Certificate, error) {
	serial, err := randomSerial()
	if err != nil {
		return nil, fmt.Errorf("issuing certificate for %s: %w", name, err)
	}
	now := i.clock()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		NotBefore:             now.Add(-leafBackdate),
		NotAfter:              now.Add(leafValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if len(name) <= maxCommonName {
		tmpl.Subject = pkix.Name{CommonName: name}
	}
	if ip.IsValid() {
		tmpl.IPAddresses = []net.IP{ip.AsSlice()}
	} else {
		tmpl.DNSNames = []string{name}
	}
	if i.onSign != nil {
		i.onSign(name)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, i.ca.Cert, &i.ca.Key.PublicKey, i.ca.Key)
	if err != nil {
		return nil, fmt.Errorf("issuing certificate for %s: %w", name, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("issuing certificate for %s: parsing it back: %w", name, err)
	}
	return &tls.Certificate{
		Certificate: [][]byte{der, i.ca.Cert.Raw},
		PrivateKey:  i.ca.Key,
		Leaf:        leaf,
	}, nil
}

// TLSConfig returns a server config whose GetCertificate uses the client's SNI, falling back to
// fallbackHost (the CONNECT host, may carry a port) when there is none, e.g. for IP addresses.
// NextProtos is left empty: the caller sets the protocols it serves.
func (i *Issuer) TLSConfig(fallbackHost string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			host := hello.ServerName
			if host == "" {
				host = fallbackHost
			}
			return i.Certificate(host)
		},
	}
}

// ErrInvalidHost is wrapped by the errors Certificate returns for hosts it will not sign.
var ErrInvalidHost = errors.New("invalid host")

// normalizeHost turns "Example.COM:443", "[::1]:8443", "::1" or "10.0.0.1" into the name a
// leaf is issued and cached for: a lowercase DNS name without trailing dot, or the canonical
// form of an IP address (then ip is valid).
func normalizeHost(host string) (name string, ip netip.Addr, err error) {
	orig := host
	fail := func(why string) (string, netip.Addr, error) {
		return "", netip.Addr{}, fmt.Errorf("issuing certificate for %q: %s: %w", orig, why, ErrInvalidHost)
	}
	if host == "" {
		return fail("empty host name (the client sent no SNI and there is no CONNECT host)")
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if host == "" {
		return fail("empty host name")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return fail("IPv6 zone identifiers cannot be in a certificate; use the address without %zone")
		}
		a = a.Unmap()
		return a.String(), a, nil
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if len(host) > 253 {
		return fail("longer than 253 characters")
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" {
			return fail("empty label (two dots in a row, or a leading dot)")
		}
		if len(label) > 63 {
			return fail("a label is longer than 63 characters")
		}
		for _, r := range label {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			case r == '*':
				return fail("wildcards are not issued; ask for the concrete host name")
			case r > 0x7f:
				return fail("non-ASCII name; use its punycode (xn--) form")
			default:
				return fail(fmt.Sprintf("character %q is not allowed in a host name", r))
			}
		}
	}
	return host, netip.Addr{}, nil
}
