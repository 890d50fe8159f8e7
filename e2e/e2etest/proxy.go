package e2etest

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/certs"
	"github.com/remixproxy/remixproxy/proxy"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Proxy is a remixproxy serving on 127.0.0.1, configured for the test sites: it dials only the
// sites (Resolve, OnlyResolved) and verifies them against the sites' test CA.
type Proxy struct {
	// Addr is the listen address, "127.0.0.1:PORT".
	Addr string
	// CA is the proxy's own CA, freshly created in a temporary data dir.
	CA     *certs.CA
	Server *proxy.Server
	// Store is the remixlet store the proxy uses, when started WithStore; nil otherwise.
	Store *store.Store

	dir  string
	logs *tailBuffer
	done chan error
}

// StartProxy starts a proxy for sites for one test and closes it when the test ends.
func StartProxy(t testing.TB, sites *Sites, opts ...ProxyOption) *Proxy {
	t.Helper()
	p, err := NewProxy(sites, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// NewProxy starts a proxy for sites: a temporary data dir, certs.LoadOrCreate, proxy.New with
// the sites' Resolve map, OnlyResolved and the sites' CA as UpstreamRoots; Serve on
// 127.0.0.1:0. Options add to that configuration (WithStore).
func NewProxy(sites *Sites, opts ...ProxyOption) (*Proxy, error) {
	dir, err := os.MkdirTemp("", "remixproxy-e2e-proxy-")
	if err != nil {
		return nil, fmt.Errorf("creating proxy data dir: %w", err)
	}
	ca, _, err := certs.LoadOrCreate(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("creating proxy CA: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("listening for proxy: %w", err)
	}
	logs := &tailBuffer{max: 256 << 10}
	o := proxyOptions{publicAddress: func(netip.Addr) bool { return true }}
	for _, opt := range opts {
		opt(&o)
	}
	var st *store.Store
	if o.store {
		// The activation rule of cmd/remixproxy's openStore: saves made without a page need
		// approval for anything beyond what the person already allowed.
		st, err = store.Open(filepath.Join(dir, "remixproxy.db"), store.Options{
			NeedsApproval: func(active, next store.Files, chatHost string) (bool, string) {
				return sandbox.FilesNeedApproval(active, next, chatHost)
			},
		})
		if err != nil {
			ln.Close()
			os.RemoveAll(dir)
			return nil, fmt.Errorf("opening proxy store: %w", err)
		}
	}
	srv, err := proxy.New(proxy.Config{
		Store:                 st,
		Listen:                ln.Addr().String(),
		DataDir:               dir,
		CA:                    ca,
		UpstreamRoots:         sites.CA.Pool(),
		Resolve:               sites.Resolve(),
		OnlyResolved:          true,
		Version:               "e2e",
		Logger:                slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		DialTimeout:           5 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
		ModelURL:              o.modelURL,
		ModelAPI:              o.modelAPI,
		BenchNoInject:         o.noInject,
		// The test sites, on loopback, stand for the public web; a test that needs a local
		// address says which (WithPublicAddress).
		PublicAddress: o.publicAddress,
	})
	if err != nil {
		ln.Close()
		if st != nil {
			st.Close()
		}
		os.RemoveAll(dir)
		return nil, fmt.Errorf("creating proxy: %w", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), CA: ca, Server: srv, Store: st, dir: dir, logs: logs, done: make(chan error, 1)}
	go func() { p.done <- srv.Serve(ln) }()
	return p, nil
}

// Close stops the proxy, waits for Serve to return and removes the data dir.
func (p *Proxy) Close() {
	p.Server.Close()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
	if p.Store != nil {
		p.Store.Close()
	}
	os.RemoveAll(p.dir)
}

// ProxyOption adds to the configuration NewProxy makes.
type ProxyOption func(*proxyOptions)

type proxyOptions struct {
	store    bool
	modelURL string
	modelAPI string
	noInject bool
	// publicAddress is proxy.Config.PublicAddress: every address public unless a test says.
	publicAddress func(netip.Addr) bool
}

// WithPublicAddress tells the proxy which addresses stand for the public internet
// (proxy.Config.PublicAddress); without it every test site does.
func WithPublicAddress(public func(netip.Addr) bool) ProxyOption {
	return func(o *proxyOptions) { o.publicAddress = public }
}

// WithModel offers the agent the model endpoint at url (the scripted model server) as
// provider "local", like `remixproxy run --model-url URL --model-api API`. It implies WithStore.
func WithModel(url, api string) ProxyOption {
	return func(o *proxyOptions) { o.store, o.modelURL, o.modelAPI = true, url, api }
}

// WithBenchNoInject starts the proxy in the benchmark-only relay mode (proxy.Config.BenchNoInject,
// `remixproxy run --bench-no-inject`): the same pipeline relaying pages untouched, no page agent.
// Benchmarks use it to split what the proxy adds into the relay's part and the page agent's.
func WithBenchNoInject() ProxyOption {
	return func(o *proxyOptions) { o.noInject = true }
}

// WithStore gives the proxy a remixlet store (remixproxy.db in its data dir, opened as
// cmd/remixproxy opens it), available as Proxy.Store. Without it the proxy has none, as before.
func WithStore() ProxyOption {
	return func(o *proxyOptions) { o.store = true }
}

// Logs returns the end of the proxy's log (debug level and up).
func (p *Proxy) Logs() string { return p.logs.String() }

// ThroughProxy is the options of a browser that sends everything through p and trusts p's CA
// through its NSS database, as a user's browser would.
func ThroughProxy(p *Proxy) BrowserOptions {
	return BrowserOptions{
		Name:      "proxied",
		Trust:     map[string][]byte{"remixproxy-e2e": p.CA.CertPEM},
		ProxyAddr: p.Addr,
		Status:    p.StatusText,
	}
}

// SharedBrowser is the options of one browser that loads the sites directly (as DirectTo) and
// trusts the CA of each of proxies too, so that tabs opened with NewTabThrough reach the same
// sites through each proxy: the direct and the proxied modes of a comparison then run in one
// Chromium.
func SharedBrowser(s *Sites, proxies ...*Proxy) BrowserOptions {
	opts := DirectTo(s)
	opts.Name = "shared"
	// The sites' rules send every other name nowhere; the proxies are dialled by address.
	opts.HostResolverRules += ", EXCLUDE 127.0.0.1"
	for i, p := range proxies {
		opts.Trust[fmt.Sprintf("remixproxy-e2e-%d", i)] = p.CA.CertPEM
	}
	return opts
}

// Status is the proxy's /status.json.
type Status struct {
	Version          string `json:"version"`
	CAFingerprint    string `json:"ca_fingerprint"`
	Requests         int64  `json:"requests"`
	Injected         int64  `json:"injected"`
	AgentConnections int64  `json:"agent_connections"`
	Sessions         []struct {
		ID        string `json:"id"`
		URL       string `json:"url"`
		Title     string `json:"title"`
		Connected bool   `json:"connected"`
	} `json:"sessions"`
}

// Status fetches http://ADDR/status.json (directly, with Host naming the proxy).
func (p *Proxy) Status() (Status, string, error) {
	var st Status
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := c.Get("http://" + p.Addr + "/status.json")
	if err != nil {
		return st, "", fmt.Errorf("fetching status.json: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return st, "", fmt.Errorf("reading status.json: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return st, string(body), fmt.Errorf("status.json: %s", resp.Status)
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, string(body), fmt.Errorf("decoding status.json: %w", err)
	}
	return st, string(body), nil
}

// StatusText is status.json as text, or the error fetching it, for failure messages.
func (p *Proxy) StatusText() string {
	_, raw, err := p.Status()
	if err != nil {
		return fmt.Sprintf("(%v) %s", err, raw)
	}
	return raw
}

// Transport returns an HTTP/1.1 transport that sends every request through the proxy and trusts
// only the proxy's CA, with automatic decompression off so tests see the bytes on the wire.
func (p *Proxy) Transport() *http.Transport {
	return &http.Transport{
		Proxy:               http.ProxyURL(&url.URL{Scheme: "http", Host: p.Addr}),
		TLSClientConfig:     &tls.Config{RootCAs: newPool(p.CA.Cert)},
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		MaxIdleConnsPerHost: 4,
	}
}

// Client returns a client using Transport that does not follow redirects.
func (p *Proxy) Client() *http.Client {
	return &http.Client{
		Transport:     p.Transport(),
		Timeout:       2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
