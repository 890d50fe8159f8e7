package e2etest

import (
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
)

// World is what the tests of one package share, because Chromium is slow to start on a small
// machine: the test sites, one proxy in front of them, and one Chromium per mode (through the
// proxy, and direct for comparison). Each part starts on first use; a failure to start fails
// every test that asks for it, with the same message. Tests get a fresh tab (and browser
// context) each.
//
// Use it from TestMain:
//
//	var world = e2etest.NewWorld(addSites)
//	func TestMain(m *testing.M) { world.Main(m) }
type World struct {
	addSites func(*Sites) error

	sitesOnce sync.Once
	sites     *Sites
	proxy     *Proxy
	sitesErr  error

	proxied lazyBrowser
	direct  lazyBrowser
}

type lazyBrowser struct {
	once sync.Once
	c    *Chromium
	err  error
}

// NewWorld returns a world whose sites are set up by addSites (which calls Handle and friends).
func NewWorld(addSites func(*Sites) error) *World {
	return &World{addSites: addSites}
}

// Main runs the tests and then stops everything the world started.
func (w *World) Main(m *testing.M) {
	code := m.Run()
	w.Close()
	os.Exit(code)
}

func (w *World) start() {
	w.sitesOnce.Do(func() {
		s, err := NewSites()
		if err != nil {
			w.sitesErr = err
			return
		}
		if err := w.addSites(s); err != nil {
			s.Close()
			w.sitesErr = fmt.Errorf("adding test sites: %w", err)
			return
		}
		p, err := NewProxy(s)
		if err != nil {
			s.Close()
			w.sitesErr = err
			return
		}
		w.sites, w.proxy = s, p
	})
}

// Sites returns the shared test sites, starting them and the proxy on first use.
func (w *World) Sites(t testing.TB) *Sites {
	t.Helper()
	w.start()
	if w.sitesErr != nil {
		t.Fatal(w.sitesErr)
	}
	return w.sites
}

// Proxy returns the shared proxy.
func (w *World) Proxy(t testing.TB) *Proxy {
	t.Helper()
	w.Sites(t)
	return w.proxy
}

// Proxied returns the shared Chromium that browses through the proxy.
func (w *World) Proxied(t testing.TB) *Chromium {
	t.Helper()
	p := w.Proxy(t)
	return w.proxied.get(t, func() BrowserOptions { return ThroughProxy(p) })
}

// Direct returns the shared Chromium that loads the sites directly.
func (w *World) Direct(t testing.TB) *Chromium {
	t.Helper()
	s := w.Sites(t)
	return w.direct.get(t, func() BrowserOptions { return DirectTo(s) })
}

// ProxiedTab opens a tab in the proxied browser for this test.
func (w *World) ProxiedTab(t testing.TB) *Tab {
	t.Helper()
	return w.Proxied(t).NewTab(t)
}

// DirectTab opens a tab in the direct browser for this test.
func (w *World) DirectTab(t testing.TB) *Tab {
	t.Helper()
	return w.Direct(t).NewTab(t)
}

func (lb *lazyBrowser) get(t testing.TB, opts func() BrowserOptions) *Chromium {
	t.Helper()
	lb.once.Do(func() { lb.c, lb.err = NewChromium(opts()) })
	if lb.err != nil {
		t.Fatal(lb.err)
	}
	return lb.c
}

// Close stops the browsers, the proxy and the sites.
func (w *World) Close() {
	for _, lb := range []*lazyBrowser{&w.proxied, &w.direct} {
		lb.once.Do(func() {}) // no start after Close
		if lb.c != nil {
			lb.c.Close()
		}
	}
	w.sitesOnce.Do(func() {})
	if w.proxy != nil {
		w.proxy.Close()
	}
	if w.sites != nil {
		w.sites.Close()
	}
}

// StartProxied is one test's own world: test sites serving hosts (name → handler), a proxy in
// front of them started with opts, and a Chromium browsing through it, with a fresh tab; all
// stop when the test ends. For tests that need a proxy of their own (a store, a scripted
// model); tests that can share one use World.
func StartProxied(t testing.TB, hosts map[string]http.Handler, opts ...ProxyOption) (*Sites, *Proxy, *Tab) {
	t.Helper()
	sites := StartSites(t)
	for host, h := range hosts {
		sites.Handle(host, h)
	}
	p := StartProxy(t, sites, opts...)
	return sites, p, Browser(t, ThroughProxy(p)).NewTab(t)
}
