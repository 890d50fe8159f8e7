package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// witness is an upstream that records the paths it was asked for.
type witness struct {
	mu   sync.Mutex
	seen map[string]int
}

func (w *witness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	w.seen[r.URL.Path]++
	if len(body) > 0 {
		w.seen[r.URL.Path+"#"+string(body)]++
	}
	w.mu.Unlock()
	rw.Header().Set("Content-Type", "text/plain")
	io.WriteString(rw, "device answer")
}

func (w *witness) saw(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen[path] > 0
}

// listenOn starts h on addr (host:0), over TLS with httptest's certificate (which names
// example.com and its subdomains) when tls is set.
func listenOn(t *testing.T, addr string, h http.Handler, withTLS bool) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		// On Linux, where the suite runs, all of 127.0.0.0/8 is loopback: a failure here is a
		// broken machine, and a skip would hide the local-network checks. Elsewhere (macOS has
		// only 127.0.0.1 unless an alias is added) the test says how to run it.
		if runtime.GOOS == "linux" {
			t.Fatalf("listening on %s, which stands for a local-network address: %v", addr, err)
		}
		t.Skipf("cannot listen on %s, which stands for a local-network address, on %s (add a loopback alias: sudo ifconfig lo0 alias %s): %v", addr, runtime.GOOS, strings.Split(addr, ":")[0], err)
	}
	ts := httptest.NewUnstartedServer(h)
	ts.Listener.Close()
	ts.Listener = ln
	if withTLS {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	return ts
}

// TestPagesReachNoLocalNetwork: a page of a public site may not make the proxy send its
// requests to the person's machine or local network (Chromium's Local Network Access asks the
// person before a public page reaches a local address, but a request through a proxy reaches
// the browser as the proxy's, and the proxy dials whatever the name resolves to). The person's
// own navigations, and a local page's own requests, still go. Here 127.0.0.2 and 127.0.0.3
// (after the flip) stand for local-network addresses, 127.0.0.1 for the public internet.
func TestPagesReachNoLocalNetwork(t *testing.T) {
	lan := &witness{seen: map[string]int{}}
	rebound := &witness{seen: map[string]int{}}
	public := &witness{seen: map[string]int{}}
	router := listenOn(t, "127.0.0.2:0", lan, false)
	nas := listenOn(t, "127.0.0.2:0", lan, true)
	rebind := listenOn(t, "127.0.0.3:0", rebound, false)
	www := listenOn(t, "127.0.0.1:0", public, false)
	roots := x509.NewCertPool()
	roots.AddCert(nas.Certificate())
	var flipped atomic.Bool // after the flip, rebind.example.com's address is a local one
	f := newFixture(t, fixtureOpts{roots: roots, resolve: map[string]string{
		"router.example.com:80": router.Listener.Addr().String(),
		"nas.example.com:443":   nas.Listener.Addr().String(),
		"rebind.example.com:80": rebind.Listener.Addr().String(),
		"www.example.com:80":    www.Listener.Addr().String(),
		"cdn.example.com:80":    www.Listener.Addr().String(),
	}, config: func(c *Config) {
		c.PublicAddress = func(a netip.Addr) bool {
			switch a {
			case netip.MustParseAddr("127.0.0.2"):
				return false
			case netip.MustParseAddr("127.0.0.3"):
				return !flipped.Load()
			}
			return true
		}
	}})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.ca.CertPEM)
	proxyURL, _ := url.Parse("http://" + f.addr)
	tr := &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}
	browser := &http.Client{Transport: tr, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, rawURL string, hdr ...string) int {
		t.Helper()
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader("dns=6.6.6.6")
		}
		req, _ := http.NewRequest(method, rawURL, body)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, rawURL, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	routerIP := "http://" + router.Listener.Addr().String()

	// Requests as Chromium sends them for a page of www.example.com (over http Chromium sends
	// no fetch metadata; over https it does).
	refused := []struct {
		name, method, url string
		hdr               []string
	}{
		{"an <img> with no referrer", "GET", "http://router.example.com/img-noreferrer", []string{"Accept", "image/avif,image/webp,*/*"}},
		{"a no-cors fetch", "GET", "http://router.example.com/nocors", []string{"Referer", "http://www.example.com/page"}},
		{"a CORS fetch", "GET", "http://router.example.com/cors", []string{"Origin", "http://www.example.com", "Referer", "http://www.example.com/page"}},
		{"a form posted into a frame, no referrer", "POST", "http://router.example.com/form", []string{"Origin", "http://www.example.com", "Upgrade-Insecure-Requests", "1"}},
		{"a sandboxed frame's fetch", "POST", "http://router.example.com/null", []string{"Origin", "null"}},
		{"an address written as a number", "GET", routerIP + "/literal", []string{"Referer", "http://www.example.com/page"}},
		{"https, cross-site, no referrer", "GET", "https://nas.example.com/https-img", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "image"}},
		{"https, a frame", "GET", "https://nas.example.com/https-frame", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "iframe", "Referer", "https://www.example.com/"}},
		{"https, a WebSocket", "GET", "https://nas.example.com/https-ws", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "websocket", "Sec-Fetch-Dest", "empty", "Origin", "https://www.example.com",
			"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}},
		{"a blob: worker's fetch", "GET", "http://router.example.com/blob", []string{"Referer", "blob:http://www.example.com/0b7f"}},
	}
	for _, c := range refused {
		status := send(c.method, c.url, c.hdr...)
		path, _ := url.Parse(c.url)
		if lan.saw(path.Path) {
			t.Errorf("%s: the local device was asked for %s (status %d)", c.name, path.Path, status)
		} else if status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403 (the proxy's refusal page)", c.name, status)
		}
	}

	allowed := []struct {
		name, url string
		hdr       []string
	}{
		{"the person types the address (https)", "https://nas.example.com/typed", []string{"Sec-Fetch-Site", "none", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}},
		{"a link followed from a public page (https)", "https://nas.example.com/link", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document", "Referer", "https://www.example.com/"}},
		{"a navigation over http", "http://router.example.com/nav", []string{"Upgrade-Insecure-Requests", "1", "Referer", "http://www.example.com/"}},
		{"the local page's own image", "http://router.example.com/own-img", []string{"Referer", "http://router.example.com/nav"}},
		{"the local page's own fetch", "https://nas.example.com/own-fetch", []string{"Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Dest", "empty"}},
		{"another local page's request", "http://router.example.com/from-nas", []string{"Origin", "https://nas.example.com", "Referer", "https://nas.example.com/x"}},
	}
	for _, c := range allowed {
		status := send("GET", c.url, c.hdr...)
		path, _ := url.Parse(c.url)
		if !lan.saw(path.Path) || status != http.StatusOK {
			t.Errorf("%s: status %d, device asked: %v; want 200 from the device", c.name, status, lan.saw(path.Path))
		}
	}
	// The local page's own form post reaches the device whole (the public-only attempt that
	// found the address local sent nothing of it).
	if status := send("POST", "http://router.example.com/own-post", "Origin", "http://router.example.com", "Upgrade-Insecure-Requests", "1"); status != 200 || !lan.saw("/own-post#dns=6.6.6.6") {
		t.Errorf("the local page's own form post: status %d, its body reached the device: %v", status, lan.saw("/own-post#dns=6.6.6.6"))
	}
	if status := send("GET", "http://cdn.example.com/public", "Referer", "http://www.example.com/"); status != 200 || !public.saw("/public") {
		t.Errorf("a public page's request to a public site: status %d, want 200", status)
	}

	// DNS rebinding: a public site's name later answers a local address; its page's own
	// requests (same origin, to the browser) must not follow it there.
	if status := send("GET", "http://rebind.example.com/page", "Upgrade-Insecure-Requests", "1"); status != 200 {
		t.Fatalf("rebind.example.com's page: status %d", status)
	}
	flipped.Store(true)
	f.srv.closeIdleUpstream()
	send("GET", "http://rebind.example.com/steal", "Referer", "http://rebind.example.com/page")
	send("POST", "http://rebind.example.com/steal-post", "Origin", "http://rebind.example.com")
	for _, p := range []string{"/steal", "/steal-post"} {
		if rebound.saw(p) {
			t.Errorf("rebinding: the page's own request %s reached its name's new, local address", p)
		}
	}
	if t.Failed() {
		t.Logf("local device saw: %v", strings.Join(keys(lan), ", "))
	}
}

func keys(w *witness) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for k := range w.seen {
		out = append(out, k)
	}
	return out
}

// TestAddressSpacesFullFailsClosed: once the proxy remembers as many names as it may, a name
// it does not remember is no local site, whatever it answers now — a page that made the proxy
// meet a quarter of a million names must not be able to rebind a fresh one to a local address.
func TestAddressSpacesFullFailsClosed(t *testing.T) {
	lan := listenOn(t, "127.0.0.2:0", &witness{seen: map[string]int{}}, false)
	f := newFixture(t, fixtureOpts{resolve: map[string]string{"fresh.example.com:80": lan.Listener.Addr().String()},
		config: func(c *Config) {
			c.PublicAddress = func(a netip.Addr) bool { return a != netip.MustParseAddr("127.0.0.2") }
		}})
	ctx := t.Context()
	if !f.srv.localSite(ctx, "fresh.example.com", "80") {
		t.Fatal("a name answering a local address is not a local site while the memory has room")
	}
	f.srv.spaces.mu.Lock()
	delete(f.srv.spaces.public, "fresh.example.com")
	for i := 0; len(f.srv.spaces.public) < maxAddressSpaces; i++ {
		f.srv.spaces.public[fmt.Sprintf("n%d.evil.example", i)] = true
	}
	f.srv.spaces.mu.Unlock()
	if f.srv.localSite(ctx, "fresh.example.com", "80") {
		t.Error("with the memory full, a name not remembered counts as a local site")
	}
}

// TestNavigationAndSubresourcesShareConnections: the local-network check costs a public site no
// second connection — the person's navigation and the page's requests after it go through the
// same upstream connection (a second pool would add a handshake before the first subresource).
func TestNavigationAndSubresourcesShareConnections(t *testing.T) {
	var conns atomic.Int32
	ts := httptest.NewUnstartedServer(htmlHandler(plainPage))
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	f := newFixture(t, fixtureOpts{resolve: map[string]string{"www.example.com:80": ts.Listener.Addr().String()}})
	f.get("http://www.example.com/")
	for _, p := range []string{"/a.css", "/b.js", "/c.png"} {
		f.get("http://www.example.com"+p, "Sec-Fetch-Dest", "empty", "Referer", "http://www.example.com/")
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("a navigation and three requests of its page took %d upstream connections, want 1", n)
	}
}
