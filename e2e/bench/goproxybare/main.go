// Command goproxybare is the bench's reference proxy "goproxy-bare": a minimal elazarl/goproxy
// MITM proxy that buffers every HTML response body and inserts a script tag after <head>, and
// does nothing else. It answers the question "how fast is a bare goproxy that injects, on this
// machine, in the same run", against which remixproxy's figures can be judged. The bench starts
// it (e2e/bench/main.go, --goproxy-bare); it is not meant for anything else.
//
// It uses goproxy's own MITM loop (ConnectMitm) with a CA generated here at start — never
// goproxy's built-in CA — written to --ca-out for the load generator to trust. Leaves are cached
// per host name, as remixproxy's are. Upstream TLS is verified against --upstream-ca, and every
// host name is dialed at --site (the bench's test site), as --resolve does for remixproxy.
// The upstream transport is the one goproxy uses by default: net/http's, HTTP/1.1 (a custom
// TLS config without ForceAttemptHTTP2).
package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"mime"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
)

var (
	listen     = flag.String("listen", "127.0.0.1:0", "address to listen on")
	site       = flag.String("site", "", "address every upstream host name is dialed at")
	upstreamCA = flag.String("upstream-ca", "", "PEM file of the CA the upstream's certificate chains to")
	caOut      = flag.String("ca-out", "", "where to write this proxy's CA certificate (PEM)")
	http2Up    = flag.Bool("h2-upstream", false, "let the upstream transport use HTTP/2 (default: goproxy's default, HTTP/1.1)")
)

// tag is what goes into every HTML page: about the size of remixproxy's external tag.
var tag = []byte(`<script data-remixproxy="bench-token-0123456789abcdef0123456789abcdef" src="https://remix.proxy/agent/0123456789abcdef.js"></script>`)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "goproxybare:", err)
		os.Exit(1)
	}
}

func run() error {
	ca, caPEM, err := newCA()
	if err != nil {
		return fmt.Errorf("making the CA: %w", err)
	}
	if err := os.WriteFile(*caOut, caPEM, 0o644); err != nil {
		return fmt.Errorf("writing the CA: %w", err)
	}
	roots := x509.NewCertPool()
	pemBytes, err := os.ReadFile(*upstreamCA)
	if err != nil || !roots.AppendCertsFromPEM(pemBytes) {
		return fmt.Errorf("reading the upstream CA %s: %v", *upstreamCA, err)
	}
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, *site)
	}

	p := goproxy.NewProxyHttpServer()
	p.Logger = log.New(io.Discard, "", 0)
	p.CertStore = &certStore{m: map[string]*tls.Certificate{}}
	p.Tr = &http.Transport{
		DialContext:         dial,
		TLSClientConfig:     &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2:   *http2Up,
		DisableCompression:  true,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
	}
	mitm := &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: goproxy.TLSConfigFromCA(ca)}
	p.OnRequest().HandleConnectFunc(func(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		return mitm, host
	})
	p.OnResponse().DoFunc(inject)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	fmt.Println(ln.Addr().String())
	return http.Serve(ln, p)
}

// inject buffers an HTML body and inserts the tag after <head>, or at the start.
func inject(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
	if resp == nil || resp.StatusCode != http.StatusOK {
		return resp
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "text/html" {
		return resp
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		resp.Body = io.NopCloser(bytes.NewReader(nil))
		return resp
	}
	at := 0
	if i := bytes.Index(body, []byte("<head>")); i >= 0 {
		at = i + len("<head>")
	}
	out := make([]byte, 0, len(body)+len(tag))
	out = append(append(append(out, body[:at]...), tag...), body[at:]...)
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	return resp
}

// certStore caches leaves per host name.
type certStore struct {
	mu sync.Mutex
	m  map[string]*tls.Certificate
}

func (s *certStore) Fetch(host string, gen func() (*tls.Certificate, error)) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.m[host]; ok {
		return c, nil
	}
	c, err := gen()
	if err != nil {
		return nil, err
	}
	s.m[host] = c
	return c, nil
}

// newCA is an ECDSA P-256 CA valid for a day.
func newCA() (*tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "goproxy-bare bench CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
