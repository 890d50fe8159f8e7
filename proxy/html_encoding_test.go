package proxy

import (
	"net/http"
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
