package remixlet

import (
	"maps"
	"net/http"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The answer every remixlet guard gives what it refuses, on the request side (a request that
// never leaves) and on the response side (an answer replaced): a 403 in plain text, never cached
// or sniffed.

// refusalHeader is the header of every remixlet guard's refusal.
func refusalHeader() http.Header {
	h := http.Header{"Cache-Control": {"no-store"}}
	httpx.SetType(h, "text/plain; charset=utf-8")
	return h
}

// writeRefusal answers a request a remixlet guard refuses before it leaves, with body
// Headers already set on w (netrules' X-Remixproxy) stay.
func writeRefusal(w http.ResponseWriter, body []byte) {
	maps.Copy(w.Header(), refusalHeader())
	w.WriteHeader(http.StatusForbidden)
	w.Write(body)
}

// replaceWithRefusal replaces an answer a remixlet guard refuses with the same refusal.
func replaceWithRefusal(resp *http.Response, body []byte) {
	httpx.ReplaceResponse(resp, http.StatusForbidden, refusalHeader(), body)
}
