package remixlet

import (
	"maps"
	"net/http"
	"strings"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The answer every remixlet guard gives what it refuses, on the request side (a request that
// never leaves) and on the response side (an answer replaced): a 403 in plain text, never cached
// or sniffed, whose first line says what was refused and whose second says what to do — what a
// remixlet would need, and where the manager shows the remixlets' logs of the refusal. The log
// names the remixlet and the address; the body names neither (refusalBody says why).

// managerAddress is where a person finds a remixlet's log of what its guards refused.
const managerAddress = "https://" + httpx.MagicHost + "/manager"

// refusalHeader is the header of every remixlet guard's refusal.
func refusalHeader() http.Header {
	h := http.Header{"Cache-Control": {"no-store"}}
	httpx.SetType(h, "text/plain; charset=utf-8")
	return h
}

// writeRefusal answers a request a remixlet guard refuses before it leaves, with body
// (refusalBody). Headers already set on w (netrules' X-Remixproxy) stay.
func writeRefusal(w http.ResponseWriter, body []byte) {
	maps.Copy(w.Header(), refusalHeader())
	w.WriteHeader(http.StatusForbidden)
	w.Write(body)
}

// replaceWithRefusal replaces an answer a remixlet guard refuses with the same refusal.
func replaceWithRefusal(resp *http.Response, body []byte) {
	httpx.ReplaceResponse(resp, http.StatusForbidden, refusalHeader(), body)
}

// refusalBody is a refusal's text: "remixproxy: " what, then on its own line todo and where the
// remixlets' logs are. It never names a remixlet: a page's own script reads a refusal of a
// request to its own origin (its fetch of a redirecting address, a same-origin popup's
// document), and the names of the person's remixlets are not the page's to learn. The log in the
// manager names the remixlet and the address.
func refusalBody(what, todo string) []byte {
	var b strings.Builder
	b.WriteString("remixproxy: ")
	b.WriteString(what)
	b.WriteString("\n")
	if todo != "" {
		b.WriteString(strings.ToUpper(todo[:1]) + todo[1:] + "; ")
	}
	b.WriteString("the logs of the page's remixlets in " + managerAddress + " say which remixlet, which address and why.\n")
	return []byte(b.String())
}
