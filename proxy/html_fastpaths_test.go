package proxy

import (
	"html"
	"mime"
	"testing"
)

// TestContentTypeAgreesWithMime: contentType's answers, the fast spellings included, are
// mime.ParseMediaType's.
func TestContentTypeAgreesWithMime(t *testing.T) {
	for _, v := range []string{
		"text/html", "text/html; charset=utf-8", "text/html;charset=utf-8", "text/html; charset=UTF-8",
		"text/html;charset=UTF-8", "TEXT/HTML; Charset=\"utf-16\"", "text/html; charset=utf-8; x=1",
		"application/json", "text/plain; charset=utf-8", "", "text/html; charset", "garbage;;",
		"text/html ; charset=iso-8859-1",
	} {
		mt, cs, ok := contentType(v)
		wmt, params, err := mime.ParseMediaType(v)
		if ok != (err == nil) || (ok && (mt != wmt || cs != params["charset"])) {
			t.Errorf("contentType(%q) = %q, %q, %v; mime reads %q, %q, %v", v, mt, cs, ok, wmt, params["charset"], err)
		}
	}
}

// TestEscapeAttrIsHTMLEscape: escapeAttr is html.EscapeString for every value.
func TestEscapeAttrIsHTMLEscape(t *testing.T) {
	for _, v := range []string{"", "v1.eyJ1Ijoi.abc-_", "https://remix.proxy/agent/0123.js", `a"b`, "<x>", "a&b", "it's", "ünïcode"} {
		if got, want := escapeAttr(v), html.EscapeString(v); got != want {
			t.Errorf("escapeAttr(%q) = %q, want %q", v, got, want)
		}
	}
}
