package proxy

import (
	"net/http"
	"strings"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The answers of remix.proxy and of the listen address that no handler of its own heads:
// ServeMux's 404 and 405 and its redirects to a cleaned path, and http.Error's answers (the
// WebSocket library's 426, a handler's 403, the listen address's 404 and 421). Each is never kept by a cache (a 404 is cacheable by heuristics), sniffed or
// framed, like the pages the proxy serves itself (OPEN-ITEMS 117). What a handler sets itself
// stays.

// ownAnswers wraps the magic host's handler and the listen address's so that every redirect and error it answers with
// carries the proxy's own headers (headOwnAnswer).
func ownAnswers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&ownAnswerWriter{ResponseWriter: w}, r)
	})
}

// ownAnswerWriter heads a redirect or an error when its status is written. It unwraps for
// http.ResponseController and the WebSocket library's hijack.
type ownAnswerWriter struct {
	http.ResponseWriter
	headed bool // the final status is written
}

func (w *ownAnswerWriter) WriteHeader(code int) {
	if !w.headed && code >= 200 { // 1xx (101 of a WebSocket) are not final
		w.headed = true
		if code >= 300 && code != http.StatusNotModified {
			headOwnAnswer(w.Header())
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *ownAnswerWriter) Write(b []byte) (int, error) {
	if !w.headed {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *ownAnswerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// headOwnAnswer gives a redirect's or an error's header what it lacks of the proxy's own:
// never stored, never sniffed, never framed (and no script: the own pages' policy).
func headOwnAnswer(h http.Header) {
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	httpx.NoSniff(h)
	csp := h.Get("Content-Security-Policy")
	if csp == "" {
		h.Set("Content-Security-Policy", httpx.PageCSP)
	}
	if h.Get("X-Frame-Options") == "" && !strings.Contains(csp, "frame-ancestors") {
		h.Set("X-Frame-Options", "DENY")
	}
}
