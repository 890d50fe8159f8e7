package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

func TestServiceWorkerScriptGetsShim(t *testing.T) {
	const sw = "self.addEventListener('fetch', e => {});\n"
	resolve, roots := tlsSite(t, siteHost, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, sw)
	}))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	resp, body := f.get("https://"+siteHost+"/sw.js", "Service-Worker", "script", "Sec-Fetch-Dest", "serviceworker")
	key := f.srv.pages.WorkerKey("https://" + siteHost)
	want := bytes.Replace(swShim, []byte(swKeyPlaceholder), []byte(key), 1)
	if !bytes.HasPrefix(body, want) || !bytes.HasSuffix(body, []byte(sw)) || !bytes.Contains(want, []byte(`K="`+key+`"`)) {
		t.Errorf("service worker = %q, want shim with the origin's worker key + original", httpx.Clip(string(body), 200))
	}
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("shimmed script Cache-Control = %q, want no-store (a page's fetch must not find the key in the cache)", got)
	}
	if bytes.Contains(swShim, []byte("\n")) && bytes.IndexByte(swShim, '\n') != len(swShim)-1 {
		t.Errorf("shim spans lines: the worker's line numbers would move")
	}
	for _, hdr := range [][]string{
		{"Sec-Fetch-Dest", "script"},
		{"Service-Worker", "script", "Sec-Fetch-Dest", "empty"}, // a page's fetch that names the header
		{"Service-Worker", "script"},
	} {
		_, body = f.get("https://"+siteHost+"/sw.js", hdr...)
		if string(body) != sw {
			t.Errorf("%v: script changed: %q", hdr, httpx.Clip(string(body), 100))
		}
	}
}

func TestSWInjectRelay(t *testing.T) {
	f := newFixture(t, fixtureOpts{onlyResolved: true})
	key := f.srv.pages.WorkerKey("https://sw.test")
	post := func(origin, pageURL string, headers map[string]string) *http.Response {
		hj, _ := json.Marshal(headers)
		req, _ := http.NewRequest("POST", "https://remix.proxy/sw/inject?url="+url.QueryEscape(pageURL), strings.NewReader(plainPage))
		req.Header.Set("Origin", origin)
		req.Header.Set("X-Remixproxy-Headers", string(hj))
		req.Header.Set("X-Remixproxy-Sw", key)
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("https://sw.test", "https://sw.test/page.html", map[string]string{
		"content-type": "text/html", "content-security-policy": "script-src 'self'",
	})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	rest, _ := stripTag(t, body)
	if string(rest) != plainPage {
		t.Errorf("relayed page minus tag = %q", rest)
	}
	var csp []string
	if err := json.Unmarshal([]byte(resp.Header.Get("X-Remixproxy-Csp")), &csp); err != nil || len(csp) != 1 || !strings.Contains(csp[0], "script-src 'self' https://remix.proxy") {
		t.Errorf("X-Remixproxy-Csp = %q, want the policy allowing the page agent's origin", resp.Header.Get("X-Remixproxy-Csp"))
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "https://sw.test" {
		t.Errorf("Access-Control-Allow-Origin = %q", got)
	}

	resp = post("https://evil.test", "https://sw.test/page.html", map[string]string{"content-type": "text/html"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("cross-origin relay: status %d ACAO %q, want 403 without CORS", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}

	// The worker's claim is read as the browser reads it: its origin, not a spelling of it, is
	// compared with the Origin the browser set.
	for _, tt := range []struct {
		claim  string
		status int
	}{
		{"https://SW.TEST:443/page.html", http.StatusOK},
		{"https://\uff53\uff57.test/page.html", http.StatusOK},
		{"https://sw.test\\@evil.test/page.html", http.StatusOK}, // the host is sw.test
		{"https://evil.test\\@sw.test/page.html", http.StatusForbidden},
		{"https://sw.test\u3002evil.test/page.html", http.StatusForbidden},
		{"https:evil.test/page.html", http.StatusForbidden},
		{"https://user@sw.test/page.html", http.StatusBadRequest},
		{"/page.html", http.StatusBadRequest},
	} {
		resp := post("https://sw.test", tt.claim, map[string]string{"content-type": "text/html"})
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("claim %q with Origin https://sw.test: status %d, want %d", tt.claim, resp.StatusCode, tt.status)
		}
	}
}

// TestSWInjectNeedsTheWorkerKey: sw/inject answers a page's own fetch (right Origin, no worker
// key, or another origin's key) with 403 and no document: it would hold a fresh page token.
func TestSWInjectNeedsTheWorkerKey(t *testing.T) {
	f := newFixture(t, fixtureOpts{onlyResolved: true})
	for name, key := range map[string]string{
		"no key":               "",
		"another origin's key": f.srv.pages.WorkerKey("https://other.test"),
		"a made-up key":        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	} {
		req, _ := http.NewRequest("POST", "https://remix.proxy/sw/inject?url="+url.QueryEscape("https://sw.test/page.html"), strings.NewReader(plainPage))
		req.Header.Set("Origin", "https://sw.test")
		req.Header.Set("X-Remixproxy-Headers", `{"content-type": "text/html"}`)
		if key != "" {
			req.Header.Set("X-Remixproxy-Sw", key)
		}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || bytes.Contains(body, []byte("data-remixproxy")) {
			t.Errorf("%s: status %d, body %q; want 403 without a document", name, resp.StatusCode, httpx.Clip(string(body), 120))
		}
	}
}

// TestSWInjectReadsTheWorkersHeadersAsTheBrowser: the relay injects only what the proxy would
// inject with the worker's headers — no tag into a document the browser reads as UTF-16 (the
// tag would be text the page reads back), and none after an ISO-2022-JP escape.
func TestSWInjectReadsTheWorkersHeadersAsTheBrowser(t *testing.T) {
	f := newFixture(t, fixtureOpts{onlyResolved: true})
	for _, tc := range []struct {
		name, contentType, doc string
		status                 int
		injected               bool
	}{
		{"utf-8", "text/html; charset=utf-8", plainPage, http.StatusOK, true},
		{"utf-16 by another label", "text/html; charset=csunicode", plainPage, http.StatusConflict, false},
		{"an attachment", "text/html", plainPage, http.StatusConflict, false},
		{"an escape before the insertion point", "text/html; charset=iso-2022-jp", "<!--\x1b$B--><title>J</title><p>x", http.StatusConflict, false},
	} {
		req, _ := http.NewRequest("POST", "https://remix.proxy/sw/inject?url="+url.QueryEscape("https://sw.test/page.html"), strings.NewReader(tc.doc))
		req.Header.Set("Origin", "https://sw.test")
		hdrs := `{"content-type": "` + tc.contentType + `"}`
		if tc.name == "an attachment" {
			hdrs = `{"content-type": "text/html", "content-disposition": "attachment"}`
		}
		req.Header.Set("X-Remixproxy-Headers", hdrs)
		req.Header.Set("X-Remixproxy-Sw", f.srv.pages.WorkerKey("https://sw.test"))
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || bytes.Contains(body, []byte("data-remixproxy")) != tc.injected {
			t.Errorf("%s: status %d, body %q; want %d, injected %v", tc.name, resp.StatusCode, httpx.Clip(string(body), 120), tc.status, tc.injected)
		}
	}
}
