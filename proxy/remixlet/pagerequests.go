package remixlet

import "net/http"

// The request side of the remixlet guards that look at what a page asks for, in the order the
// pipeline runs them (proxy/pipeline.go calls GuardPageRequests for every proxied request,
// before the network rules and the chat's send guard). Their refusal is refusal.go's.

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
