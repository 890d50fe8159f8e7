package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
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
