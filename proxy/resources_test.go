package proxy

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
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
	pad := strings.Repeat("a", 200<<10)
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
	t.Logf("heap after 600 navigations to 200 KiB addresses: %+d KiB", kept>>10)
	if kept > 32<<20 {
		t.Errorf("the proxy keeps %d MiB after 600 navigations to 200 KiB addresses", kept>>20)
	}
}
