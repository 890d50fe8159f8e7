package proxy

import (
	"html"
	"io"
	"mime"
	"net/http"
	"net/textproto"
	"reflect"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
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

// TestDeleteBodyHeadersIsDel: deleteBodyHeaders leaves a response's headers as Header.Del of
// each body header, as the upstream may spell it, does; and the marker is set under its
// canonical name, as Header.Set would.
func TestDeleteBodyHeadersIsDel(t *testing.T) {
	names := []string{"Content-Length", "Content-Encoding", "Content-MD5", "Digest", "Content-Digest", "Repr-Digest", "Accept-Ranges"}
	for _, k := range bodyHeaders {
		if c := textproto.CanonicalMIMEHeaderKey(k); c != k {
			t.Errorf("bodyHeaders holds %q, want its canonical spelling %q", k, c)
		}
	}
	if c := textproto.CanonicalMIMEHeaderKey(httpx.MarkerHeader); c != httpx.MarkerHeader {
		t.Errorf("MarkerHeader = %q, want the canonical %q", httpx.MarkerHeader, c)
	}
	upstream := func() http.Header {
		h := http.Header{}
		for _, k := range append(names, "Content-Type", "content-md5", "Etag", "X-Other") {
			h.Add(k, "v")
		}
		return h
	}
	got, want := upstream(), upstream()
	deleteBodyHeaders(got)
	for _, k := range names {
		want.Del(k)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after deleteBodyHeaders: %v, want (Header.Del of each) %v", got, want)
	}
}

// TestDecodedHTMLPlainIsTheBody: a body without Content-Encoding is read as it is, one with
// one goes through httpx.DecodeBody (an unknown coding is refused there).
func TestDecodedHTMLPlainIsTheBody(t *testing.T) {
	body := io.NopCloser(strings.NewReader("<p>x"))
	if got, err := decodedHTML(body, ""); err != nil || got != body {
		t.Errorf("decodedHTML(body, \"\") = %v, %v; want the body itself", got, err)
	}
	if _, err := decodedHTML(body, "x-unknown"); err == nil {
		t.Errorf("decodedHTML(body, \"x-unknown\"): no error, want DecodeBody's refusal")
	}
}
