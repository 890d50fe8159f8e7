package remixlet

import (
	"net/http"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The request side of the remixlet guards that look at what a page asks for, in the order the
// pipeline runs them (proxy/pipeline.go calls GuardPageRequests for every proxied request,
// before the network rules and the chat's send guard), and the refusal they answer with.

// GuardPageRequests is the request side of the remixlet guards that look at what a page asks
// for (called for every proxied request before it goes upstream): navigations of documents a
// remixlet's address opened (clientredirect.go), requests to sites a remixlet named
// (namedhosts.go) and a page's embeds asked again while a remixlet runs (embedguard.go). It
// returns true when the proxy has answered.
func (r *Runner) GuardPageRequests(w http.ResponseWriter, req *http.Request) bool {
	if r == nil {
		return false
	}
	return r.GuardClientRedirect(w, req) || r.guardNamedHosts(w, req) || r.guardEmbedRefetch(w, req)
}

// writeRefusal answers a request the remixlet guards refuse before it leaves: a 403 in plain
// text, never cached.
func writeRefusal(w http.ResponseWriter, body string) {
	h := w.Header()
	httpx.SetType(h, "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	w.Write([]byte(body))
}
