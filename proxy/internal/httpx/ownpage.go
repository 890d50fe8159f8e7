package httpx

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// MarkerHeader marks responses the proxy made or injected into ("error", "injected", and the
// network rules' "blocked", "redirected"), so the service-worker shim does not relay them again.
const MarkerHeader = "X-Remixproxy"

// PageCSP is the policy of the proxy's own pages that carry no script.
const PageCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

// SetType sets a response's Content-Type and X-Content-Type-Options: nosniff, so the browser
// takes the type as given: every answer of the proxy's own declares its type this way.
func SetType(h http.Header, contentType string) {
	h.Set("Content-Type", contentType)
	NoSniff(h)
}

// NoSniff sets X-Content-Type-Options: nosniff alone, for a handler whose pages set their type
// later with SetType.
func NoSniff(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
}

// OwnPageHeader is the header of a page of the proxy's own with an n-byte body: HTML, no
// script, never cached, framed or sniffed.
func OwnPageHeader(n int) http.Header {
	h := http.Header{
		"Content-Security-Policy": {PageCSP},
		"Cache-Control":           {"no-store"},
		"X-Frame-Options":         {"DENY"},
		"Content-Length":          {strconv.Itoa(n)},
	}
	SetType(h, "text/html; charset=utf-8")
	return h
}

// WriteOwnPage writes one of the proxy's own script-free pages.
func WriteOwnPage(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	for k, v := range OwnPageHeader(len(body)) {
		h[k] = v
	}
	w.WriteHeader(status)
	w.Write(body)
}

// ReplaceResponse puts an answer of the proxy's own in place of an upstream response on its
// way to the browser (ModifyResponse): the upstream body is closed, nothing of it is sent, and
// the header is exactly h.
func ReplaceResponse(resp *http.Response, status int, h http.Header, body []byte) {
	if resp.Body != nil {
		resp.Body.Close()
	}
	resp.StatusCode = status
	resp.Status = fmt.Sprintf("%d %s", status, http.StatusText(status))
	resp.Header = h
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.TransferEncoding = nil
	resp.Uncompressed = false
	resp.Trailer = nil
}

// RedactURL is the request's URL without its query, fragment and user, for logs.
func RedactURL(req *http.Request) string {
	u := *req.URL
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}
