package e2e

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// Red-team pass 5c: the proxy as a hostile page's way into the person's local network.
// Chromium asks the person before a public page reaches a local address (Local Network
// Access), but through a proxy the browser connects only to the proxy, and the proxy dials
// whatever the name answers. Here router.test is served at e2etest.LocalAddr, which the proxy
// is told is local; evil.test and public.test stand for the public web. The hostile page sends
// every kind of request a page can send to both public.test (the control: the browser did send
// such a request) and router.test (which must see none). The person's own navigations to the
// router, and the router's page's own requests, still go. Last, evil.test's name comes to
// answer a local address (DNS rebinding): its page's same-origin fetch must not follow.

// lnAttacks are the paths the hostile page asks each base for.
var lnAttacks = []string{
	"/img", "/img-noreferrer", "/nocors", "/cors", "/post-noreferrer", "/frame", "/sandboxed",
	"/form", "/ws", "/redirected", "/worker", "/preload", "/script.js", "/style.css", "/bg",
	"/beacon",
}

const lnEvilPage = `<!doctype html><html><head><meta charset="utf-8"><title>Win a prize</title></head><body>
<h1>Win a prize</h1>
<script>
window.attack = (base, tag) => {
  const S = base + '/' + tag;
  const add = (tag, props) => { const e = document.createElement(tag); Object.assign(e, props); document.body.append(e); return e; };
  add('img', {src: S + '/img'});
  add('img', {referrerPolicy: 'no-referrer', src: S + '/img-noreferrer'});
  fetch(S + '/nocors', {mode: 'no-cors'}).catch(() => {});
  fetch(S + '/cors').catch(() => {});
  fetch(S + '/post-noreferrer', {method: 'POST', mode: 'no-cors', body: 'reboot=1', referrerPolicy: 'no-referrer'}).catch(() => {});
  add('iframe', {src: S + '/frame'});
  const sb = document.createElement('iframe');
  sb.sandbox = 'allow-scripts';
  sb.srcdoc = '<script>fetch("' + S + '/sandboxed", {mode: "no-cors"}).catch(() => {})<\/script>';
  document.body.append(sb);
  const target = 'f' + Math.random().toString(36).slice(2);
  add('iframe', {name: target});
  const form = add('form', {method: 'POST', action: S + '/form', target});
  form.innerHTML = '<input name="dns" value="6.6.6.6">';
  form.submit();
  try { new WebSocket(S.replace(/^http/, 'ws') + '/ws'); } catch (e) {}
  add('img', {src: '/to?u=' + encodeURIComponent(S + '/redirected')});
  new Worker(URL.createObjectURL(new Blob(['fetch("' + S + '/worker", {mode: "no-cors"}).catch(() => {})'], {type: 'text/javascript'})));
  add('link', {rel: 'preload', as: 'image', href: S + '/preload'});
  add('script', {src: S + '/script.js'});
  add('link', {rel: 'stylesheet', href: S + '/style.css'});
  add('div', {}).style.cssText = 'width:10px;height:10px;background-image:url(' + S + '/bg)';
  navigator.sendBeacon(S + '/beacon', 'x');
};
window.steal = async () => {
  try { window.stolen = String((await fetch('/steal')).status); } catch (e) { window.stolen = 'failed'; }
};
</script></body></html>`

func TestRedteamPageReachesNoLocalNetwork(t *testing.T) {
	device := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/typed" {
			htmlPage(w, `<!doctype html><html><head><title>Router</title></head><body><h1>Router admin</h1>
<img src="/own-img"><script>fetch('/own-fetch')</script></body></html>`)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("device"))
	})
	sites := e2etest.StartSites(t)
	evil := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The proxy keeps no connection of its page: the page's fetch after the flip below
		// makes a new one, which is where the name's answer matters.
		w.Header().Set("Connection", "close")
		if r.URL.Path == "/to" {
			http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
			return
		}
		htmlPage(w, lnEvilPage)
	})
	sites.Handle("evil.test", evil)
	sites.Handle("public.test", device)
	sites.Handle("rebind.test", evil)
	// rebind.test's name first answers a public address (the sites), then a local one: a
	// device of the person's own (lan). The proxy dials rebind.test at a forwarder, which
	// stands for the name's answer: connections made before the flip go on to the sites, as
	// they would to the first address outside the test.
	lan := &lnWitness{seen: map[string]int{}}
	lanSrv := httptest.NewUnstartedServer(lan)
	lanLn, err := net.Listen("tcp", e2etest.LocalAddr+":0")
	if err != nil {
		noSecondLoopback(t, err)
	}
	lanSrv.Listener.Close()
	lanSrv.Listener = lanLn
	lanSrv.Start()
	t.Cleanup(lanSrv.Close)
	var rebound atomic.Bool // rebind.test's name answers a local address
	sitesHTTP := sites.Resolve()["public.test:80"]
	if err := sites.HandleRaw("rebind.test", func(c net.Conn) {
		to := sitesHTTP
		if rebound.Load() {
			to = lanLn.Addr().String()
		}
		up, err := net.Dial("tcp", to)
		if err != nil {
			return
		}
		defer up.Close()
		go io.Copy(up, c)
		io.Copy(c, up)
	}); err != nil {
		t.Fatal(err)
	}
	if err := sites.HandleLocal("router.test", device); err != nil {
		noSecondLoopback(t, err)
	}
	p := e2etest.StartProxy(t, sites, e2etest.WithPublicAddress(func(a netip.Addr) bool {
		switch a {
		case netip.MustParseAddr(e2etest.LocalAddr):
			return false
		case netip.MustParseAddr("127.0.0.1"):
			// After the flip, 127.0.0.1 is the forwarder's answer for rebind.test: local.
			return !rebound.Load()
		}
		return true
	}))
	tab := e2etest.Browser(t, e2etest.ThroughProxy(p)).NewTab(t)

	// Over https (fetch metadata) and over http (none), each page attacking its own scheme
	// (an https page's http requests are mixed content the browser blocks itself).
	for _, scheme := range []string{"https", "http"} {
		tab.Navigate(scheme + "://evil.test/")
		e2etest.Eval[any](tab, "attack('"+scheme+"://public.test', '"+scheme+"'), attack('"+scheme+"://router.test', '"+scheme+"'), 1")
		// The control: the browser sent every kind of request (to the public site).
		err := lnPoll(60*time.Second, func() error {
			var missing []string
			for _, path := range lnAttacks {
				if sites.Requests("public.test", "/"+scheme+path) == 0 {
					missing = append(missing, path)
				}
			}
			if len(missing) > 0 {
				return errors.New("public.test has not been asked for " + strings.Join(missing, " "))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("the %s page's control requests: %v\nconsole:\n%s", scheme, err, tab.ConsoleLog())
		}
		// The same requests to the local device were sent at the same moment; give them time
		// to arrive if they were going to.
		lnPoll(3*time.Second, func() error {
			for _, path := range lnAttacks {
				if sites.Requests("router.test", "/"+scheme+path) > 0 {
					return nil
				}
			}
			return errors.New("none")
		})
		for _, path := range lnAttacks {
			if scheme == "http" && path == "/frame" {
				// Over http no fetch metadata tells a frame from a top-level navigation, and a
				// navigation without an Origin goes, as without the proxy (a GET the page can
				// send as well with window.open or by leaving): see proxy/localnet.go.
				continue
			}
			if n := sites.Requests("router.test", "/"+scheme+path); n > 0 {
				t.Errorf("the public %s page's request %s reached the local device (%d times)", scheme, path, n)
			}
		}
	}

	// The person opens the router's page: it loads, and its own requests go.
	tab.Navigate("https://router.test/typed")
	if err := lnPoll(30*time.Second, func() error {
		if sites.Requests("router.test", "/own-img") == 0 || sites.Requests("router.test", "/own-fetch") == 0 {
			return errors.New("the router page's own image and fetch have not arrived")
		}
		return nil
	}); err != nil {
		t.Errorf("the person's own visit to the local device: %v", err)
	}
	// A link from the public page to the router (a top-level navigation) goes, as without the
	// proxy.
	tab.Navigate("https://evil.test/")
	e2etest.Eval[any](tab, `location.href = 'https://router.test/linked', 1`)
	if err := lnPoll(30*time.Second, func() error {
		if sites.Requests("router.test", "/linked") == 0 {
			return errors.New("not yet")
		}
		return nil
	}); err != nil {
		t.Errorf("a link from the public page to the local device was not followed: %v", err)
	}

	// DNS rebinding: the page was loaded from a public address; its name now answers a local one.
	for _, scheme := range []string{"http", "https"} {
		tab.Navigate(scheme + "://rebind.test/")
		rebound.Store(true)
		e2etest.Eval[any](tab, `steal(), 1`)
		tab.WaitFor(30*time.Second, "the page's same-origin fetch to end", `window.stolen !== undefined`)
		if lan.saw("/steal") {
			t.Errorf("rebinding over %s: the page's same-origin fetch reached its name's new, local address (status %s)", scheme, e2etest.Eval[string](tab, `window.stolen`))
		}
		rebound.Store(false)
	}
}

// lnWitness records the paths it was asked for.
type lnWitness struct {
	mu   sync.Mutex
	seen map[string]int
}

func (w *lnWitness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	w.seen[r.URL.Path]++
	w.mu.Unlock()
	rw.Write([]byte("device"))
}

func (w *lnWitness) saw(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen[path] > 0
}

// lnPoll calls f every 100 ms until it returns nil or d has passed, and returns its last error.
func lnPoll(d time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noSecondLoopback ends the test when e2etest.LocalAddr cannot be bound. On Linux, where the
// suite runs, all of 127.0.0.0/8 is loopback, so that is a failure (a skip would hide the
// local-network check); elsewhere (macOS has only 127.0.0.1 unless an alias is added) a skip
// that says how to run it.
func noSecondLoopback(t *testing.T, err error) {
	t.Helper()
	if runtime.GOOS == "linux" {
		t.Fatalf("binding %s, the address that stands for the local network: %v", e2etest.LocalAddr, err)
	}
	t.Skipf("no second loopback address to stand for the local network on %s (add one: sudo ifconfig lo0 alias %s): %v", runtime.GOOS, e2etest.LocalAddr, err)
}
