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
	shim := bytes.Replace(swShim, []byte(swRelayKeyMark), []byte(f.srv.swRelayKey("https://"+siteHost)), 1)
	if bytes.Equal(shim, swShim) || !bytes.HasPrefix(body, shim) || !bytes.HasSuffix(body, []byte(sw)) {
		t.Errorf("service worker = %q, want shim with its origin's relay key + original", httpx.Clip(string(body), 200))
	}
	if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Sec-Fetch-Dest") {
		t.Errorf("Vary = %q: the HTTP cache could give the shim to a page's fetch", resp.Header.Values("Vary"))
	}
	// The shim's relay key goes only into what the browser fetched as a service worker: a page
	// can set Service-Worker itself, not Sec-Fetch-Dest.
	_, body = f.get("https://"+siteHost+"/sw.js", "Service-Worker", "script", "Sec-Fetch-Dest", "empty")
	if string(body) != sw {
		t.Errorf("a page's fetch with Service-Worker: script got %q, want the script unchanged", httpx.Clip(string(body), 100))
	}
	if bytes.Contains(swShim, []byte("\n")) && bytes.IndexByte(swShim, '\n') != len(swShim)-1 {
		t.Errorf("shim spans lines: the worker's line numbers would move")
	}
	_, body = f.get("https://"+siteHost+"/sw.js", "Sec-Fetch-Dest", "script")
	if string(body) != sw {
		t.Errorf("ordinary script changed: %q", httpx.Clip(string(body), 100))
	}
}

func TestSWInjectRelay(t *testing.T) {
	f := newFixture(t, fixtureOpts{onlyResolved: true})
	key := f.srv.swRelayKey("https://sw.test")
	post := func(origin, pageURL string, headers map[string]string) *http.Response {
		hj, _ := json.Marshal(headers)
		req, _ := http.NewRequest("POST", "https://remix.proxy/sw/inject?url="+url.QueryEscape(pageURL), strings.NewReader(plainPage))
		req.Header.Set("Origin", origin)
		if key != "" {
			req.Header.Set("X-Remixproxy-Sw", key)
		}
		req.Header.Set("X-Remixproxy-Headers", string(hj))
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

	// Only the shim may use the relay: no key, or another origin's, is refused (a page of the
	// origin would read a fresh token from the answer).
	for _, k := range []string{"", f.srv.swRelayKey("https://evil.test"), "AAAA"} {
		key = k
		resp := post("https://sw.test", "https://sw.test/page.html", map[string]string{"content-type": "text/html"})
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || bytes.Contains(body, []byte("data-remixproxy")) {
			t.Errorf("relay key %q: status %d, want 403 and no token", k, resp.StatusCode)
		}
	}
}
