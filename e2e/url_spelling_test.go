package e2e

import (
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/internal/weburl"
)

// What Chromium requests for each spelling of an address, against what the proxy's reading of it
// (internal/weburl, which every remixlet address check and the redirect guard go through) says
// it will request. Chromium is pointed at a small recording proxy of this test's own, which
// answers everything itself, so any host works and the request line is what Chromium sent.

// spellingCases are written as <img src> on http://spell.test/page; each carries c=N in its
// query so its request can be told apart.
var spellingCases = []string{
	"/a/../r?c=0",
	"/a/%2e%2e/r?c=1",
	"/a/%2E%2e/r?c=2",
	"/a/.%2e/r?c=3",
	`\r2\..\r?c=4`,
	"http://spell\u3002test/r?c=5",
	"http://\uff53\uff50\uff45\uff4c\uff4c.test/r?c=6",
	"HTTP://SPELL.TEST:80/r?c=7",
	"http://spell.test./r?c=8",
	"/re\tdi\nr?c=9",
	"//spell.test/r?c=10",
	`/\spell.test/r?c=11`,
	"http://sp%65ll.test/r?c=12",
	"http://0xC0.0.2.1/r?c=13",
	"http://3221225985/r?c=14",
	"http://0300.0.02.01/r?c=15",
	"/a b/r?c=16",
	"/r?c=17&q='x'",
	"/caf\u00e9?c=18&x=\u00e9",
	"/r?c=19&x=<>\"`{}|^",
	"/p|^`{}/r?c=20",
	"http://b\u00fccher.test/r?c=21",
	"http://spell.test:0080/r?c=22",
	"/%7e/%41/r?c=23",
	"http://\u0440\u0443.test/r?c=24",
	"http://spell\uff0etest\uff0e/r?c=25",
	"/r?c=26#frag",
	"/./r/./?c=27",
	"/r/%2e/?c=28",
	"/a/b/../../r?c=29",
	"  /r?c=30\x01",
	"http://SPELL.test\u3002/r?c=31",
	"/r?c=32&x=%zz%",
}

// httpsSpellings load over https: the recording proxy sees only the CONNECT's host and port.
var httpsSpellings = []string{
	"https://\uff53\uff50\uff45\uff4c\uff4c\u3002test/r?c=h0",
	"https://SPELL.test:443/r?c=h1",
	"https://b\u00fccher\uff0etest:0443/r?c=h2",
}

// recordingProxy answers every proxied request itself and records its target.
type recordingProxy struct {
	ln      net.Listener
	mu      sync.Mutex
	targets []string // request-targets of plain requests (absolute URLs)
	connect []string // CONNECT authorities
	page    string
}

func (rp *recordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rp.mu.Lock()
	if r.Method == http.MethodConnect {
		rp.connect = append(rp.connect, r.RequestURI)
	} else {
		rp.targets = append(rp.targets, r.RequestURI)
	}
	rp.mu.Unlock()
	switch {
	case r.Method == http.MethodConnect:
		http.Error(w, "no tunnels here", http.StatusBadGateway)
	case r.RequestURI == "http://spell.test/page":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, rp.page)
	default:
		w.Header().Set("Content-Type", "image/png")
		w.Write(onePixelPNG)
	}
}

func (rp *recordingProxy) seen() ([]string, []string) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return append([]string(nil), rp.targets...), append([]string(nil), rp.connect...)
}

var caseMarker = regexp.MustCompile(`[?&]c=(h?\d+)(&|$)`)

func TestAddressSpellingsAsChromiumRequestsThem(t *testing.T) {
	const pageURL = "http://spell.test/page"
	var b strings.Builder
	b.WriteString("<!doctype html><meta charset=utf-8><title>spellings</title>\n")
	for _, s := range append(append([]string(nil), spellingCases...), httpsSpellings...) {
		fmt.Fprintf(&b, "<img src=\"%s\">\n", html.EscapeString(s))
	}
	rp := &recordingProxy{page: b.String()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	tab := e2etest.Browser(t, e2etest.BrowserOptions{Name: "recording", ProxyAddr: ln.Addr().String()}).NewTab(t)
	tab.Navigate(pageURL)

	base, err := weburl.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // case marker -> Go's request
	for i, s := range spellingCases {
		u, err := weburl.Resolve(base, s)
		if err != nil {
			t.Fatalf("case %d %q: the proxy cannot read it: %v", i, s, err)
		}
		want[fmt.Sprint(i)] = u.Request()
	}
	var got map[string]string
	var connects []string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		targets, cs := rp.seen()
		got = map[string]string{}
		for _, tg := range targets {
			if m := caseMarker.FindStringSubmatch(tg); m != nil {
				got[m[1]] = tg
			}
		}
		connects = cs
		if len(got) >= len(spellingCases) || time.Now().After(deadline) {
			break
		}
	}
	// Chromium escapes a few characters the URL Standard leaves raw (| and ^ in paths, found
	// here), so the guard compares by weburl.Key, which decodes escapes: the two must have the
	// same key; the spelling is expected to be equal too, except for such escapes.
	same, keyed := 0, 0
	for i, s := range spellingCases {
		k := fmt.Sprint(i)
		g, ok := got[k]
		if !ok {
			t.Errorf("case %d %q: Chromium made no request (the proxy reads it as %s)", i, s, want[k])
			continue
		}
		if g == want[k] {
			same++
			continue
		}
		gu, err := weburl.Parse(g)
		wu, _ := weburl.Parse(want[k])
		if err != nil || weburl.Key(gu) != weburl.Key(wu) {
			t.Errorf("case %d %q: Chromium requested %s, the proxy reads %s (keys %q and %q)", i, s, g, want[k], weburl.Key(gu), weburl.Key(wu))
			continue
		}
		keyed++
		t.Logf("case %d %q: Chromium requested %s, the proxy reads %s: escapes differ, same key", i, s, g, want[k])
	}
	for _, s := range httpsSpellings {
		u, err := weburl.Resolve(base, s)
		if err != nil {
			t.Fatalf("%q: the proxy cannot read it: %v", s, err)
		}
		authority := u.Hostname() + ":" + u.Port()
		found := false
		for _, c := range connects {
			found = found || c == authority
		}
		if !found {
			t.Errorf("%q: the proxy reads host %s; Chromium's CONNECTs were %q", s, authority, connects)
		}
	}
	t.Logf("%d of %d spellings: Chromium's request equals the proxy's reading; %d differ only in escapes (same key); https hosts checked: %d", same, len(spellingCases), keyed, len(httpsSpellings))
	// The test page really went through the recording proxy (the counts above are not empty
	// because nothing loaded).
	if _, err := url.Parse(pageURL); err != nil || len(got) == 0 {
		t.Fatalf("no image request reached the recording proxy")
	}
}
