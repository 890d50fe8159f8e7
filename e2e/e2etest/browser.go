package e2etest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/remixproxy/remixproxy/e2e/chromeflags"
)

// ChromiumPath is Debian's chromium. The README's test command installs it when missing.
const ChromiumPath = "/usr/bin/chromium"

// startTimeout bounds starting Chromium and opening a tab.
const startTimeout = 60 * time.Second

// BrowserOptions choose how a Chromium reaches the test sites.
type BrowserOptions struct {
	// Name tells failure messages which browser they are about, e.g. "proxied" or "direct".
	Name string
	// Trust maps a nickname to a CA certificate (PEM) the browser trusts for TLS servers,
	// through a fresh $HOME/.pki/nssdb — the way a user's Chromium on Linux trusts a CA.
	Trust map[string][]byte
	// ProxyAddr, if set, sends every request through the HTTP proxy at this address.
	ProxyAddr string
	// HostResolverRules, if set, is Chromium's --host-resolver-rules (direct mode).
	HostResolverRules string
	// Status, if set, returns a diagnostic snapshot (the proxy's status.json) for failure
	// messages.
	Status func() string
}

// DirectTo is the options of a browser that loads the sites' URLs directly, trusting their test
// CA: the reference that proxied loads are compared with.
func DirectTo(s *Sites) BrowserOptions {
	return BrowserOptions{
		Name:              "direct",
		Trust:             map[string][]byte{"remixproxy-e2e-sites": s.CA.PEM},
		HostResolverRules: s.HostResolverRules(),
	}
}

// Chromium is one running headless Chromium with its own profile and $HOME. Tabs opened with
// NewTab share the process but not cookies, caches or service workers.
type Chromium struct {
	opts   BrowserOptions
	dir    string
	ctx    context.Context // chromedp browser context; tabs are its children
	cancel context.CancelFunc
	out    *tailBuffer
	once   sync.Once
}

// Browser starts a Chromium for one test and closes it when the test ends. A missing chromium
// fails the test with the command that installs it.
func Browser(t testing.TB, opts BrowserOptions) *Chromium {
	t.Helper()
	c, err := NewChromium(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// NewChromium starts Chromium headless with the flags the project's tests use, a fresh
// --user-data-dir and a temporary $HOME whose NSS database trusts opts.Trust. A start that fails
// is tried once more with a fresh profile: on a loaded machine Chromium's process has exited
// before it printed its DevTools address ("chrome failed to start", once in a full run), which
// says nothing about the proxy. A second failure fails the test with both outputs.
func NewChromium(opts BrowserOptions) (*Chromium, error) {
	if _, err := os.Stat(ChromiumPath); err != nil {
		return nil, fmt.Errorf("chromium not found at %s; install it with: apt-get install -y chromium (%w)", ChromiumPath, err)
	}
	c, err := startChromium(opts)
	if err == nil {
		return c, nil
	}
	c, err2 := startChromium(opts)
	if err2 != nil {
		return nil, fmt.Errorf("%w\nand again: %w", err, err2)
	}
	return c, nil
}

// startChromium is one try of NewChromium.
func startChromium(opts BrowserOptions) (*Chromium, error) {
	dir, err := os.MkdirTemp("", "remixproxy-e2e-chromium-")
	if err != nil {
		return nil, fmt.Errorf("creating browser dir: %w", err)
	}
	c := &Chromium{opts: opts, dir: dir, out: &tailBuffer{max: 64 << 10}}
	home := dir + "/home"
	if err := writeNSSDB(home, opts.Trust); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	flags := append(chromeflags.Common(ChromiumPath, dir+"/profile"),
		chromedp.Env("HOME="+home),
		chromedp.CombinedOutput(c.out),
	)
	if opts.ProxyAddr != "" {
		flags = append(flags, chromedp.Flag("proxy-server", "http://"+opts.ProxyAddr))
	}
	if opts.HostResolverRules != "" {
		flags = append(flags, chromedp.Flag("host-resolver-rules", opts.HostResolverRules))
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), flags...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	c.ctx = ctx
	c.cancel = func() { cancel(); allocCancel() }
	// The first Run starts the browser and binds it to ctx, so it gets no deadline of its own.
	if err := Within(startTimeout, func() error { return chromedp.Do(ctx) }); err != nil {
		c.Close()
		return nil, fmt.Errorf("starting %s chromium: %w\nchromium output:\n%s", opts.Name, err, c.out)
	}
	return c, nil
}

// Name is the browser's name from its options.
func (c *Chromium) Name() string { return c.opts.Name }

// Output returns the end of Chromium's stdout and stderr.
func (c *Chromium) Output() string { return c.out.String() }

// Close stops Chromium and removes its profile and $HOME.
func (c *Chromium) Close() {
	c.once.Do(func() {
		c.cancel()
		os.RemoveAll(c.dir)
	})
}

// status returns the diagnostic snapshot for failure messages.
func (c *Chromium) status() string {
	if c.opts.Status == nil {
		return "(no proxy)"
	}
	return c.opts.Status()
}

var errTimeout = errors.New("timed out")

// Within runs f and waits at most d for it. A chromedp Run that creates a browser or tab, or
// attaches a target, must not get a deadline (the deadline would end the browser, tab or
// attachment too), so it is bounded here.
func Within(d time.Duration, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("%w after %v", errTimeout, d)
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	if len(b.b) > b.max {
		b.b = append(b.b[:0], b.b[len(b.b)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(string(b.b))
}
