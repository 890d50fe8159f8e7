// Package benchkit starts what the benchmark programs under e2e/ (benchremixlet, agentbench)
// drive: a loopback HTTPS site, the real remixproxy binary, and headless Chromium through it.
//
// It sits outside the proxy's data flow: test infrastructure only, never imported by the binary
// (cmd/remixproxy's import test keeps it out). It must never reach beyond loopback.
package benchkit

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/certs"
	"github.com/remixproxy/remixproxy/e2e/chromeflags"
)

// --- the site ---

// Site is an HTTPS site on loopback with a certificate from its own CA (CAPEM, a file).
type Site struct {
	Addr  string
	CAPEM string // file
	Srv   *http.Server
}

// StartSite serves h over HTTPS for host on 127.0.0.1, with a fresh CA written into dir.
func StartSite(dir, host string, h http.Handler) (*Site, error) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "benchremixlet upstream CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("making site CA: %w", err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("making site certificate: %w", err)
	}
	caFile := filepath.Join(dir, "site-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}},
	}}
	go srv.ServeTLS(ln, "", "")
	return &Site{Addr: ln.Addr().String(), CAPEM: caFile, Srv: srv}, nil
}

// --- the proxy ---

// Proxy is a running remixproxy binary.
type Proxy struct {
	Addr string
	PID  int
	Data string // its data dir
	Out  *Tail  // the end of its output
	Stop func()
}

// StartProxy runs `bin run` on a free loopback port with data as its data dir, trusting the site
// and resolving host to it (--only-resolved), with extra flags; it returns once it listens.
func StartProxy(bin, data string, s *Site, host string, extra ...string) (*Proxy, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	return StartProxyAt(addr, bin, data, s, host, extra...)
}

// FreeAddr is a loopback address with a port nothing listens on now.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// StartProxyAt is StartProxy listening on addr: a proxy restarted at the same address (and with
// the same data dir, so the same CA) is the one a running browser already uses.
func StartProxyAt(addr, bin, data string, s *Site, host string, extra ...string) (*Proxy, error) {
	out := &Tail{Max: 16 << 10}
	cmd := exec.Command(bin, "run", "--listen", addr, "--data-dir", data, "--upstream-ca", s.CAPEM,
		"--only-resolved", "--resolve", host+":443="+s.Addr)
	cmd.Args = append(cmd.Args, extra...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proxy{Addr: addr, PID: cmd.Process.Pid, Data: data, Out: out,
		Stop: func() { cmd.Process.Signal(os.Interrupt); done(cmd, 5*time.Second) }}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("remixproxy did not listen on %s:\n%s", addr, out)
		}
	}
}

// done waits for cmd to exit, killing it after d.
func done(cmd *exec.Cmd, d time.Duration) {
	ch := make(chan struct{})
	go func() { cmd.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(d):
		cmd.Process.Kill()
		<-ch
	}
}

// --- Chromium ---

// Browser is a headless Chromium that uses a Proxy and trusts its CA by key (SPKI).
type Browser struct {
	Ctx   context.Context
	Close func()
}

// StartChromium starts chromium (the executable) with a fresh profile in dir, through px.
func StartChromium(chromium, dir string, px *Proxy) (*Browser, error) {
	ca, _, err := certs.LoadOrCreate(px.Data)
	if err != nil {
		return nil, fmt.Errorf("reading the proxy's CA: %w", err)
	}
	out := &Tail{Max: 16 << 10}
	opts := append(chromeflags.Common(chromium, filepath.Join(dir, "profile")),
		chromedp.Flag("proxy-server", "http://"+px.Addr),
		chromedp.Flag("ignore-certificate-errors-spki-list", ca.SPKIHash()),
		chromedp.Env("HOME="+filepath.Join(dir, "home")),
		chromedp.CombinedOutput(out),
	)
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		allocCancel()
		return nil, fmt.Errorf("starting chromium: %w\n%s", err, out)
	}
	return &Browser{Ctx: ctx, Close: func() { cancel(); allocCancel() }}, nil
}

// Tab opens a new tab; listen, if not nil, gets its DevTools events.
func (b *Browser) Tab(listen func(ev any)) (context.Context, context.CancelFunc, error) {
	var opts []chromedp.ContextOption
	if listen != nil {
		opts = append(opts, chromedp.WithListener(listen))
	}
	ctx, cancel := chromedp.NewContext(b.Ctx, opts...)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, nil, err
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		cancel()
		return nil, nil, err
	}
	return ctx, cancel, nil
}

// Navigate loads url in the tab.
func Navigate(ctx context.Context, url string) error {
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return chromedp.Do(c, chromedp.Navigate(url))
}

// WaitJS polls expr in the tab until it is truthy, for at most d.
func WaitJS(ctx context.Context, d time.Duration, what, expr string) error {
	deadline := time.Now().Add(d)
	for {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		ok, err := chromedp.Run(c, chromedp.Evaluate[bool]("!!("+expr+")"))
		cancel()
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: not true after %v (last error: %v)", what, d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Eval evaluates expr in the tab.
func Eval[T any](ctx context.Context, expr string) (T, error) {
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return chromedp.Run(c, chromedp.Evaluate[T](expr))
}

// Tail keeps the last Max bytes written to it.
type Tail struct {
	mu  sync.Mutex
	Max int
	b   []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.Max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.Max:]...)
	}
	return len(p), nil
}

func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
