package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// TestHeaderEncoding: only a charset label the browser knows fixes the encoding (it ignores
// another, and a <meta charset> decides), and ISO-2022-JP leaves ESC meaningful.
func TestHeaderEncoding(t *testing.T) {
	tests := []struct {
		contentType         string
		known, escapesInert bool
	}{
		{"text/html", false, false},
		{"text/html; charset=utf-8", true, true},
		{"text/html; charset=UTF-8", true, true},
		{"text/html; charset=shift_jis", true, true},
		{"text/html; charset=latin1", true, true},
		{"text/html; charset=iso-2022-jp", true, false},
		{"text/html; charset=csISO2022JP", true, false},
		{"text/html; charset=x-unknown", false, false},
		{"text/html; charset=", false, false},
	}
	for _, tc := range tests {
		known, inert := headerEncoding(http.Header{"Content-Type": {tc.contentType}})
		if known != tc.known || inert != tc.escapesInert {
			t.Errorf("%q: known %v, escapes inert %v; want %v, %v", tc.contentType, known, inert, tc.known, tc.escapesInert)
		}
	}
}

// TestShouldInjectReadsContentTypeAsTheBrowser: no tag goes into a document the browser reads
// as UTF-16 by any label, nor into one with several different Content-Types (the browser takes
// the last, the proxy read the first).
func TestShouldInjectReadsContentTypeAsTheBrowser(t *testing.T) {
	tests := []struct {
		contentType []string
		want        bool
	}{
		{[]string{"text/html; charset=utf-8"}, true},
		{[]string{"text/html; charset=windows-1252"}, true},
		{[]string{"text/html; charset=utf-8", "text/html; charset=utf-8"}, true},
		{[]string{"text/html; charset=utf-16"}, false},
		{[]string{"text/html; charset=csunicode"}, false},
		{[]string{"text/html; charset=iso-10646-ucs-2"}, false},
		{[]string{"text/html; charset=unicodeFFFE"}, false},
		{[]string{`text/html; charset=" utf-16le "`}, false},
		{[]string{"text/html; charset=utf-8", "text/html; charset=utf-16le"}, false},
		{[]string{"text/html", "text/xml"}, false},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest("GET", "https://site.test/", nil)
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": tc.contentType}, Body: http.NoBody, Request: req}
		resp.Body = io.NopCloser(strings.NewReader("<p>x"))
		if got := shouldInject(req, resp); got != tc.want {
			t.Errorf("Content-Type %q: injected %v, want %v", tc.contentType, got, tc.want)
		}
	}
}

// TestUninjectedDocumentKeepsItsPolicy: the proxy widens a document's policy only when the tag
// went in. One the injector lets through unchanged (here an escape before the insertion point,
// with no header charset) keeps its own policy: widened, it allowed the page agent's public
// script in a window with no page agent.
func TestUninjectedDocumentKeepsItsPolicy(t *testing.T) {
	const policy = "script-src 'self'; style-src 'self'"
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Security-Policy", policy)
		prefix := ""
		if r.URL.Path == "/escape" {
			prefix = "<!--\x1b(B-->"
		}
		io.WriteString(w, prefix+`<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body><p>x</p></body></html>`)
	})
	resolve, roots := tlsSite(t, siteHost, mux)
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	resp, body := f.get("https://"+siteHost+"/escape", "Sec-Fetch-Dest", "document")
	if got := resp.Header.Values("Content-Security-Policy"); len(got) != 1 || got[0] != policy || strings.Contains(string(body), "data-remixproxy") {
		t.Errorf("not injected: policy %q, body %q; want the page's own policy and no tag", got, httpx.Clip(string(body), 120))
	}
	resp, body = f.get("https://"+siteHost+"/", "Sec-Fetch-Dest", "document")
	if got := resp.Header.Get("Content-Security-Policy"); !strings.Contains(got, "remix.proxy") || !strings.Contains(string(body), "data-remixproxy") {
		t.Errorf("injected: policy %q; want it widened for the tag", got)
	}
}
