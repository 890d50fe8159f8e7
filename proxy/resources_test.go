package proxy

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// One page or one upstream against the proxy's resources, over real TCP to the proxy. A hostile
// upstream's answers may cost the proxy work in proportion to their size, never more: a response
// tap or a policy parse that is quadratic in what one upstream sends is a proxy that one site
// can stall. These tests send the largest headers and heads the proxy accepts; each request has
// the fixture client's 20 s deadline, which is about 30 times what each takes with the fix (and
// well under what each took before). What the proxy keeps of a page's requests is bounded by
// what could ever be used.

// distinctDirectives is a policy of n bytes made of distinct unknown directives ("x0;x1;…"),
// which browsers ignore and the proxy must still parse.
func distinctDirectives(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "x%d;", i)
	}
	return b.String()
}

func TestHugePolicyIsServed(t *testing.T) {
	// Header: a 900 KiB Content-Security-Policy of 120 000 distinct directives, then what the
	// page really enforces. The proxy reads the value four times per page (whether it blocks
	// injection, its nonce, whether an external tag may load, the adjustment): each read was
	// quadratic, about half a minute of CPU for this header.
	headerPolicy := distinctDirectives(900<<10) + "script-src 'self'; object-src 'none'"
	// <meta>: thirty 200 KiB policies in the head, each adjusted for the bootstrap as it
	// passes (the injector hands each at most 256 KiB of it).
	var page strings.Builder
	page.WriteString("<!doctype html><html><head><title>t</title>")
	for range 30 {
		fmt.Fprintf(&page, `<meta http-equiv="Content-Security-Policy" content="%sscript-src 'self'">`, distinctDirectives(200<<10))
	}
	page.WriteString("</head><body><p>served</p></body></html>")

	mux := http.NewServeMux()
	mux.HandleFunc("/header", htmlHandler(plainPage, "Content-Security-Policy", headerPolicy))
	mux.HandleFunc("/meta", htmlHandler(page.String()))
	resolve, roots := tlsSite(t, siteHost, mux)
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})

	t.Run("header", func(t *testing.T) {
		resp, body := f.get("https://" + siteHost + "/header")
		if resp.Header.Get("X-Remixproxy") != "injected" {
			t.Fatalf("the page was not injected: status %d, %q", resp.StatusCode, resp.Header.Get("X-Remixproxy"))
		}
		got := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(got, "object-src 'none'") || !strings.Contains(got, "script-src 'self' https://remix.proxy") {
			t.Errorf("the policy lost a directive or does not allow the bootstrap: …%q", got[max(0, len(got)-200):])
		}
		if _, tag := stripTag(t, body); tag == "" {
			t.Error("no bootstrap in the page")
		}
	})
	t.Run("meta", func(t *testing.T) {
		resp, body := f.get("https://" + siteHost + "/meta")
		if resp.Header.Get("X-Remixproxy") != "injected" || !strings.Contains(string(body), "<p>served</p>") {
			t.Fatalf("the page was not served whole and injected: status %d, %d bytes", resp.StatusCode, len(body))
		}
		if n := strings.Count(string(body), "script-src 'self' https://remix.proxy"); n != 30 {
			t.Errorf("%d of 30 <meta> policies allow the bootstrap", n)
		}
	})
}

func TestSetCookieFloodLeavesOtherSitesLoading(t *testing.T) {
	// 40 000 Set-Cookie lines (880 KB, under the 1 MiB the proxy takes of a head). The cookie
	// view and the credentials seen (response taps every answer passes, each under one lock)
	// were quadratic in them: five seconds per answer with both locks held, so a page asking
	// for this answer again and again stalled every other site's answers behind it.
	const cookies = 40000
	flood := func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for i := range cookies {
			h.Add("Set-Cookie", fmt.Sprintf("c%d=%d", i, i))
		}
		h.Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}
	resolveEvil, roots := tlsSite(t, "evil."+siteHost, http.HandlerFunc(flood))
	resolveOK, _ := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: merge(resolveEvil, resolveOK), roots: roots})

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 6 {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", fmt.Sprintf("https://evil.%s/api?%d", siteHost, i), nil)
			req.Header.Set("Sec-Fetch-Dest", "empty")
			resp, err := f.client.Do(req)
			if err != nil {
				errs <- fmt.Errorf("the flooding answer %d: %w", i, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Go(func() {
		req, _ := http.NewRequest("GET", "https://"+siteHost+"/", nil)
		resp, err := f.client.Do(req)
		if err != nil {
			errs <- fmt.Errorf("another site while the flood runs: %w", err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			errs <- fmt.Errorf("another site while the flood runs: status %d", resp.StatusCode)
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLongNavigationAddressesAreNotKept(t *testing.T) {
	// The proxy notes each navigation's Referer, so a chat can follow its tab to the next page
	// (chat/follow.go): at most 512 notes, 64 per origin, for 30 s. A page that navigates to
	// 200 KiB addresses (a chain of pages whose scripts go on, or over http fetches saying
	// Upgrade-Insecure-Requests, which the proxy takes for navigations) filled them with 100 MiB,
	// notes that no page session could ever take (a session's URL is at most 2 KiB).
	resolve := map[string]string{}
	for i := range 10 {
		for k, v := range plainSite(t, fmt.Sprintf("s%d.%s", i, siteHost), htmlHandler(plainPage)) {
			resolve[k] = v
		}
	}
	f := newFixture(t, fixtureOpts{resolve: resolve})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	pad := strings.Repeat("a", 100<<10)
	before := heap()
	for i := range 600 {
		origin := fmt.Sprintf("http://s%d.%s", i%10, siteHost)
		resp, _ := f.get(fmt.Sprintf("%s/p%d?%s", origin, i, pad), "Referer", origin+"/")
		if resp.Header.Get("X-Remixproxy") != "injected" {
			t.Fatalf("navigation %d was not injected: status %d", i, resp.StatusCode)
		}
	}
	f.client.CloseIdleConnections()
	kept := int64(heap()) - int64(before)
	t.Logf("heap after 600 navigations to 100 KiB addresses: %+d KiB", kept>>10)
	if kept > 16<<20 {
		t.Errorf("the proxy keeps %d MiB after 600 navigations to 100 KiB addresses", kept>>20)
	}
}

func TestLongCookiePathsAreNotKept(t *testing.T) {
	// The cookie view (fetch/cookieview.go: the cookies rmx.fetch and http_request send) keeps at
	// most 3000 cookies, name and value at most 4 KiB, but kept each cookie's path whole: an
	// upstream answering with Set-Cookie lines whose Path is 250 KiB (or a page requesting
	// 250 KiB paths, the default Path of a cookie without one) filled 3000 cookies with 750 MiB,
	// kept until newer cookies push them out. Browsers ignore a Path attribute over 1024 bytes.
	longPath := "/" + strings.Repeat("p", 64<<10)
	flood := func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			w.Header().Add("Set-Cookie", fmt.Sprintf("c%d%s=1; Path=%s", i, r.URL.Query().Get("n"), longPath))
		}
		w.Header().Add("Set-Cookie", "d"+r.URL.Query().Get("n")+"=1") // its default path: the request's, 64 KiB
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}
	mux := http.NewServeMux()
	// Every connection is closed after its answer, so what the heap holds afterwards is what the
	// proxy kept, not the last request of a connection kept alive.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		flood(w, r)
	})
	// A cookie for every subdomain that no navigation sends (its Path is elsewhere): each
	// same-site navigation then notes it gone, with the navigation's path.
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Header().Add("Set-Cookie", "g=1; Domain="+siteHost+"; Path=/elsewhere")
	})
	resolve, roots := tlsSite(t, siteHost, mux)
	for i := range 100 {
		resolve[fmt.Sprintf("h%d.%s:443", i, siteHost)] = resolve[siteHost+":443"]
	}
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	t.Run("Set-Cookie", func(t *testing.T) {
		before := heap()
		for i := range 100 {
			resp, _ := f.get(fmt.Sprintf("https://%s%s/x?n=%d", siteHost, longPath, i), "Sec-Fetch-Dest", "empty", "Connection", "close")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("answer %d: status %d", i, resp.StatusCode)
			}
		}
		f.client.CloseIdleConnections()
		kept := int64(heap()) - int64(before)
		t.Logf("heap after 400 cookies with 64 KiB paths: %+d KiB", kept>>10)
		if kept > 8<<20 {
			t.Errorf("the proxy keeps %d MiB after 400 cookies with 64 KiB paths", kept>>20)
		}
	})
	t.Run("navigations", func(t *testing.T) {
		f.get("https://"+siteHost+"/set", "Sec-Fetch-Dest", "empty")
		before := heap()
		// A client of its own, gone before the heap is read: an http.Transport keeps the last
		// request for each host it went to.
		func() {
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(f.ca.CertPEM)
			proxyURL, _ := url.Parse("http://" + f.addr)
			tr := &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
			for i := range 100 {
				req, _ := http.NewRequest("GET", fmt.Sprintf("https://h%d.%s%s/x", i, siteHost, longPath), nil)
				req.Header.Set("Sec-Fetch-Mode", "navigate")
				req.Header.Set("Sec-Fetch-Dest", "document")
				req.Header.Set("Sec-Fetch-Site", "none")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("navigation %d: %v", i, err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("navigation %d: status %d", i, resp.StatusCode)
				}
			}
		}()
		kept := int64(heap()) - int64(before)
		t.Logf("heap after 100 hosts' navigations to 64 KiB paths: %+d KiB", kept>>10)
		if kept > 8<<20 {
			t.Errorf("the proxy keeps %d MiB after 100 hosts' navigations to 64 KiB paths", kept>>20)
		}
	})
}

// gzipBomb is n zero bytes gzipped, then the result gzipped again layers-1 times: a small body
// whose Content-Encoding ("gzip, gzip" for two layers) decodes to n bytes.
func gzipBomb(t *testing.T, prefix string, n int, layers int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	io.WriteString(zw, prefix)
	zeros := make([]byte, 1<<20)
	for range n >> 20 {
		zw.Write(zeros)
	}
	zw.Close()
	out := b.Bytes()
	for range layers - 1 {
		var next bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&next, gzip.BestCompression)
		zw.Write(out)
		zw.Close()
		out = next.Bytes()
	}
	return out
}

func TestCompressionBombsStayBounded(t *testing.T) {
	// What the proxy decodes of a body: a navigation's HTML, streamed through the injector as the
	// browser reads it; and the first 32 KiB of a JSON answer the page data tap keeps (the body
	// itself passes encoded). A nested gzip bomb (a few KiB that decode to 64 MiB) costs neither
	// more memory than those bounds, and once the browser stops reading, nothing goes on.
	html := gzipBomb(t, "<!doctype html><html><head><title>bomb</title></head><body>", 64<<20, 2)
	jsonBomb := gzipBomb(t, `{"a":"`, 64<<20, 2)
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip, gzip")
		w.Write(html)
	})
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip, gzip")
		w.Write(jsonBomb)
	})
	resolve, roots := tlsSite(t, siteHost, mux)
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	// Memory: what stays after the bombs, and what was allocated while they ran (a bomb decoded
	// into memory, even for a moment, allocates its 64 MiB).
	mem := func() (kept, allocated uint64) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, m.TotalAlloc
	}
	f.get("https://"+siteHost+"/api", "Sec-Fetch-Dest", "empty") // the pools and caches a first answer fills
	f.client.CloseIdleConnections()
	baseline := settledGoroutines()
	keptBefore, allocBefore := mem()

	// The JSON answer passes encoded, byte for byte; the tap decodes at most its bound.
	for range 20 {
		resp, body := f.get("https://"+siteHost+"/api", "Sec-Fetch-Dest", "empty", "Referer", "https://"+siteHost+"/")
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, jsonBomb) {
			t.Fatalf("the JSON answer: status %d, %d bytes, want the upstream's %d unchanged", resp.StatusCode, len(body), len(jsonBomb))
		}
	}
	// The page is decoded as it is read: the bootstrap in the first bytes, then the browser
	// leaves after 4 MiB of 64.
	for range 4 {
		req, _ := http.NewRequest("GET", "https://"+siteHost+"/page", nil)
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 4<<20)
		n, _ := io.ReadFull(resp.Body, head)
		resp.Body.Close()
		if !bytes.Contains(head[:n], []byte("<script data-remixproxy=")) || n != len(head) {
			t.Fatalf("the page: status %d, %d bytes read, bootstrap %v", resp.StatusCode, n, bytes.Contains(head[:n], []byte("data-remixproxy")))
		}
	}
	f.client.CloseIdleConnections()
	keptAfter, allocAfter := mem()
	kept, allocated := int64(keptAfter)-int64(keptBefore), allocAfter-allocBefore
	t.Logf("20 JSON and 4 HTML bombs of 64 MiB: heap %+d KiB after, %d MiB allocated while they ran", kept>>10, allocated>>20)
	if kept > 16<<20 {
		t.Errorf("the proxy keeps %d MiB after 20 JSON and 4 HTML bombs", kept>>20)
	}
	if allocated > 256<<20 {
		t.Errorf("%d MiB allocated for 20 JSON and 4 HTML bombs: one was decoded into memory", allocated>>20)
	}
	n := settledGoroutines()
	for i := 0; i < 100 && n > baseline+2; i++ {
		time.Sleep(100 * time.Millisecond)
		n = settledGoroutines()
	}
	if n > baseline+2 {
		t.Errorf("%d goroutines after the bombs, %d before: the decoding goes on after the browser left", n, baseline)
	}
}

// settledGoroutines waits briefly for the goroutine count to stop falling and returns it.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 20 {
		time.Sleep(50 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return max(m, n)
		}
		n = m
	}
	return n
}
