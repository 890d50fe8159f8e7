package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func caPool(ca *CA) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pool
}

func TestLeafVerifiesAgainstCA(t *testing.T) {
	ca := newTestCA(t)
	iss := NewIssuer(ca, 0)
	tests := []struct {
		name     string
		host     string
		wantName string // what the leaf is for, and what Verify checks
		wantIP   bool
	}{
		{"DNS name", "example.com", "example.com", false},
		{"uppercase with port", "Example.COM:443", "example.com", false},
		{"trailing dot", "sub.example.co.uk.", "sub.example.co.uk", false},
		{"made-up TLD", "site.test", "site.test", false},
		{"magic host", "remix.proxy", "remix.proxy", false},
		{"single label", "intranet", "intranet", false},
		{"underscore", "my_host.internal", "my_host.internal", false},
		{"IPv4", "127.0.0.1", "127.0.0.1", true},
		{"IPv4 with port", "10.1.2.3:8443", "10.1.2.3", true},
		{"IPv6 bare", "::1", "::1", true},
		{"IPv6 bracketed with port", "[2001:DB8::1]:443", "2001:db8::1", true},
		{"IPv6 bracketed", "[::1]", "::1", true},
		{"IPv4-mapped IPv6", "::ffff:192.0.2.1", "192.0.2.1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cert, err := iss.Certificate(tc.host)
			if err != nil {
				t.Fatalf("Certificate(%q): %v", tc.host, err)
			}
			leaf := cert.Leaf
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: caPool(ca), DNSName: tc.wantName}); err != nil {
				t.Errorf("Verify for %s: %v", tc.wantName, err)
			}
			if got := leaf.Subject.CommonName; got != tc.wantName {
				t.Errorf("CommonName %q, want %q", got, tc.wantName)
			}
			if tc.wantIP {
				if len(leaf.IPAddresses) != 1 || len(leaf.DNSNames) != 0 {
					t.Errorf("SANs: IPs %v, DNS %v; want one IP and no DNS", leaf.IPAddresses, leaf.DNSNames)
				}
			} else if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != tc.wantName || len(leaf.IPAddresses) != 0 {
				t.Errorf("SANs: DNS %v, IPs %v; want DNS [%s] only", leaf.DNSNames, leaf.IPAddresses, tc.wantName)
			}
		})
	}
}

func TestLeafShape(t *testing.T) {
	ca := newTestCA(t)
	iss := NewIssuer(ca, 0)
	now := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	iss.now = func() time.Time { return now }
	cert, err := iss.Certificate("shape.test")
	if err != nil {
		t.Fatal(err)
	}
	leaf := cert.Leaf
	checks := []struct {
		name      string
		got, want any
	}{
		{"public key is the CA's", ca.Key.PublicKey.Equal(leaf.PublicKey), true},
		{"private key is the CA's", cert.PrivateKey == any(ca.Key), true},
		{"chain length", len(cert.Certificate), 2},
		{"chain[0] is the leaf", string(cert.Certificate[0]) == string(leaf.Raw), true},
		{"chain[1] is the CA", string(cert.Certificate[1]) == string(ca.Cert.Raw), true},
		{"NotBefore", leaf.NotBefore, now.Add(-time.Hour)},
		{"NotAfter", leaf.NotAfter, now.Add(90 * 24 * time.Hour)},
		{"IsCA", leaf.IsCA, false},
		{"ExtKeyUsage", fmt.Sprint(leaf.ExtKeyUsage), fmt.Sprint([]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth})},
		{"serial positive, at most 128 bits", leaf.SerialNumber.Sign() > 0 && leaf.SerialNumber.BitLen() <= 128, true},
		{"issuer", leaf.Issuer.String(), ca.Cert.Subject.String()},
	}
	for _, tc := range checks {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if err := leaf.CheckSignatureFrom(ca.Cert); err != nil {
		t.Errorf("leaf not signed by the CA: %v", err)
	}
	other, _ := iss.Certificate("other.test")
	if other.Leaf.SerialNumber.Cmp(leaf.SerialNumber) == 0 {
		t.Errorf("two leaves share serial %v", leaf.SerialNumber)
	}
}

func TestLeafLongNameHasNoCommonName(t *testing.T) {
	iss := NewIssuer(newTestCA(t), 0)
	host := strings.Repeat("a", 60) + ".example.com" // 72 characters: over the CN bound, fine for a SAN
	cert, err := iss.Certificate(host)
	if err != nil {
		t.Fatal(err)
	}
	if got := cert.Leaf.Subject.CommonName; got != "" {
		t.Errorf("CommonName %q, want none for a name over 64 characters", got)
	}
	if got := cert.Leaf.DNSNames; len(got) != 1 || got[0] != host {
		t.Errorf("DNSNames %v, want [%s]", got, host)
	}
}

func TestInvalidHosts(t *testing.T) {
	iss := NewIssuer(newTestCA(t), 0)
	var signs atomic.Int32
	iss.onSign = func(string) { signs.Add(1) }
	tests := []struct {
		name, host, wantIn string
	}{
		{"empty", "", "empty host"},
		{"port only", ":443", "empty host"},
		{"empty brackets", "[]", "empty host"},
		{"wildcard", "*.example.com", "wildcard"},
		{"space", "exa mple.com", "not allowed"},
		{"slash", "example.com/path", "not allowed"},
		{"double dot", "a..b", "empty label"},
		{"leading dot", ".example.com", "empty label"},
		{"only a dot", ".", "empty label"},
		{"non-ASCII", "bücher.de", "punycode"},
		{"IPv6 zone", "fe80::1%eth0", "zone"},
		{"long label", strings.Repeat("a", 64) + ".com", "63"},
		{"long name", strings.Repeat("abcdefghi.", 26) + "com", "253"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cert, err := iss.Certificate(tc.host)
			if err == nil {
				t.Fatalf("Certificate(%q) = leaf for %v, want an error", tc.host, cert.Leaf.DNSNames)
			}
			if !errors.Is(err, ErrInvalidHost) {
				t.Errorf("error %v is not ErrInvalidHost", err)
			}
			if !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("error %q does not contain %q", err, tc.wantIn)
			}
		})
	}
	if n := signs.Load(); n != 0 {
		t.Errorf("signed %d leaves for invalid hosts, want 0", n)
	}
}

func TestCacheReturnsSamePointer(t *testing.T) {
	iss := NewIssuer(newTestCA(t), 0)
	first, err := iss.Certificate("cache.test")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, host string
		same       bool
	}{
		{"same name", "cache.test", true},
		{"case and port differ", "CACHE.test:443", true},
		{"trailing dot", "cache.test.", true},
		{"another host", "other.test", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := iss.Certificate(tc.host)
			if err != nil {
				t.Fatal(err)
			}
			if (got == first) != tc.same {
				t.Errorf("Certificate(%q) same pointer as for cache.test: got %v, want %v", tc.host, got == first, tc.same)
			}
		})
	}
}

func TestSingleFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		iss := NewIssuer(newTestCA(t), 0)
		release := make(chan struct{})
		var signs atomic.Int32
		iss.onSign = func(string) {
			signs.Add(1)
			<-release // hold the first generation until every caller is waiting
		}
		const n = 50
		got := make([]*tls.Certificate, n)
		var wg sync.WaitGroup
		for k := range n {
			wg.Go(func() {
				c, err := iss.Certificate("flight.test")
				if err != nil {
					t.Errorf("caller %d: %v", k, err)
				}
				got[k] = c
			})
		}
		synctest.Wait() // all callers blocked: one in onSign, the rest on its result
		close(release)
		wg.Wait()
		if n := signs.Load(); n != 1 {
			t.Errorf("signatures for %d concurrent callers: got %d, want 1", len(got), n)
		}
		for k := range got {
			if got[k] != got[0] || got[k] == nil {
				t.Fatalf("caller %d got %p, want the shared %p", k, got[k], got[0])
			}
		}
	})
}

func TestLRUEviction(t *testing.T) {
	iss := NewIssuer(newTestCA(t), 2)
	var signed []string
	iss.onSign = func(h string) { signed = append(signed, h) }
	steps := []struct {
		host     string
		wantSign bool
	}{
		{"a.test", true},
		{"b.test", true},
		{"a.test", false}, // cached; now most recently used
		{"c.test", true},  // evicts b, the least recently used
		{"a.test", false}, // still cached
		{"b.test", true},  // was evicted: signed again, evicts c
		{"c.test", true},
	}
	for k, s := range steps {
		before := len(signed)
		if _, err := iss.Certificate(s.host); err != nil {
			t.Fatal(err)
		}
		if got := len(signed) > before; got != s.wantSign {
			t.Errorf("step %d (%s): signed %v, want %v", k, s.host, got, s.wantSign)
		}
		if got := iss.lru.Len(); got > 2 {
			t.Errorf("step %d: cache holds %d leaves, want at most 2", k, got)
		}
	}
	if got, want := len(iss.byHost), iss.lru.Len(); got != want {
		t.Errorf("index has %d hosts, list %d; want equal", got, want)
	}
}

func TestNewIssuerDefaultBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  int
		want int
	}{{"zero", 0, 1000}, {"negative", -5, 1000}, {"given", 7, 7}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewIssuer(nil, tc.max).max; got != tc.want {
				t.Errorf("NewIssuer(ca, %d) bound: got %d, want %d", tc.max, got, tc.want)
			}
		})
	}
}

func TestNearExpiryReissued(t *testing.T) {
	iss := NewIssuer(newTestCA(t), 0)
	start := time.Now()
	now := start
	iss.now = func() time.Time { return now }
	first, err := iss.Certificate("renew.test")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		after time.Duration
		same  bool
	}{
		{"fresh", time.Hour, true},
		{"8 days before expiry", 82 * 24 * time.Hour, true},
		{"6 days before expiry", 84 * 24 * time.Hour, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now = start.Add(tc.after)
			got, err := iss.Certificate("renew.test")
			if err != nil {
				t.Fatal(err)
			}
			if (got == first) != tc.same {
				t.Errorf("after %v: same leaf %v, want %v", tc.after, got == first, tc.same)
			}
			if !tc.same && !got.Leaf.NotAfter.After(now.Add(80*24*time.Hour)) {
				t.Errorf("reissued leaf expires %v, want about 90 days after %v", got.Leaf.NotAfter, now)
			}
		})
	}
}

func TestTLSConfigUsesSNIThenFallback(t *testing.T) {
	ca := newTestCA(t)
	iss := NewIssuer(ca, 0)
	tests := []struct {
		name       string
		serverName string // client's ServerName; Go sends no SNI for IP addresses
		fallback   string
		wantName   string // the leaf's SAN
		wantErr    bool
	}{
		{"SNI wins over fallback", "site.test", "other.test:443", "site.test", false},
		{"no SNI for IPv4 uses fallback", "127.0.0.1", "127.0.0.1:443", "127.0.0.1", false},
		{"no SNI for IPv6 uses fallback", "::1", "[::1]:443", "::1", false},
		{"no SNI and no fallback fails", "127.0.0.1", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clientConn, serverConn := net.Pipe()
			defer clientConn.Close()
			defer serverConn.Close()
			server := tls.Server(serverConn, iss.TLSConfig(tc.fallback))
			serverErr := make(chan error, 1)
			go func() {
				err := server.Handshake()
				serverConn.Close() // unblock the client if the server gave up
				serverErr <- err
			}()
			client := tls.Client(clientConn, &tls.Config{ServerName: tc.serverName, RootCAs: caPool(ca)})
			err := client.Handshake()
			sErr := <-serverErr
			if tc.wantErr {
				if err == nil || sErr == nil {
					t.Fatalf("handshake errors: client %v, server %v; want both to fail", err, sErr)
				}
				if !errors.Is(sErr, ErrInvalidHost) {
					t.Errorf("server error %v, want ErrInvalidHost", sErr)
				}
				return
			}
			if err != nil || sErr != nil {
				t.Fatalf("handshake errors: client %v, server %v; want none", err, sErr)
			}
			peer := client.ConnectionState().PeerCertificates
			if len(peer) != 2 {
				t.Fatalf("server sent %d certificates, want leaf and CA", len(peer))
			}
			if err := peer[0].VerifyHostname(tc.wantName); err != nil {
				t.Errorf("leaf is not for %s: %v", tc.wantName, err)
			}
		})
	}
}

// BenchmarkIssueLeaf measures signing one new leaf (no cache).
func BenchmarkIssueLeaf(b *testing.B) {
	iss := NewIssuer(newTestCA(b), 0)
	n := 0
	for b.Loop() {
		n++
		if _, err := iss.issue(fmt.Sprintf("h%d.bench.test", n), netip.Addr{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCachedLeaf measures a cache hit, the common case for a browsing session.
func BenchmarkCachedLeaf(b *testing.B) {
	iss := NewIssuer(newTestCA(b), 0)
	if _, err := iss.Certificate("cached.bench.test"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := iss.Certificate("cached.bench.test:443"); err != nil {
			b.Fatal(err)
		}
	}
}
