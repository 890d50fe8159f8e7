package chat

import (
	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
)

// What the agent's own requests carry (OPEN-ITEMS 14, eleventh session). open_page (the page
// agent's fetch_page on the page's origin, the proxy's fetch on another origin of the site,
// open.go) and http_request (request.go) reach the site with whatever path and query the model
// writes. A site whose server fetches what its address names — a server-rendered link preview,
// a link checker, an image proxy (/img?src=), an oEmbed endpoint, an "import from URL" — then
// sends what the model put there to another site from its own server, where no check of the
// proxy's sees it; and open_page's page may load it as a navigation's page would. So the agent's
// own requests follow the navigation guard's rule (navguard_carried.go): a request whose path or
// query carries an address of another site (carriedWhere: remixlet.CarriedSites for the query,
// remixlet.CarriedInPath — addresses with a scheme only — for the path) is refused before
// anything is sent, whatever its method (a mutating request is refused before its card), in
// the navigation guard's words. The fragment is not read: a request never sends it.
//
// Where: no one function carries every agent request — open_page on the page's own origin is
// fetched by the page agent, in the browser, and never reaches the proxy's fetch client nor
// sameSiteRequestURL — so each tool checks its address with refuseCarriedRequest on entry,
// next to the secret check (chatEnv.PageTool for open_page, HTTPRequest for http_request), as
// navigate's fragment is checked before the page agent is asked. Redirects the site answers
// with are the site's own addresses and are not read (fetch follows them within the site;
// fetch_page's are the browser's).
//
// The cost: the agent cannot read a page or an API endpoint of the site whose address names
// another site (a link preview, a site search for an address, a share page, a web archive's
// snapshot, /api/import?url=…, /img?src=https://…); it is told that the person can open it
// themselves.

// refuseCarriedRequest refuses tool's request to raw, read against the page at pageURL as the
// browser reads it, when its path or query carries an address of another site; nil when it
// carries none, or when the tool refuses the address anyway (unreadable, not http(s), another
// site: the tool says why in its own words).
func refuseCarriedRequest(tool, pageURL, raw string) error {
	pageAddr, err := weburl.Parse(pageURL)
	if err != nil {
		return nil
	}
	u, err := weburl.Resolve(pageAddr, raw)
	if err != nil || !u.IsHTTP() || u.Site() != pageAddr.Site() {
		return nil
	}
	if u, err = weburl.Parse(u.Request()); err != nil { // what is sent: no fragment
		return nil
	}
	other, _ := carriedWhere(u)
	if other == "" {
		return nil
	}
	return &agent.ToolError{Message: tool + " refused: " + carriedWords("request", "the site's server (or the page) may fetch", u, other) +
		". Nothing was sent. Do not try another way to reach it; tell the person what you found instead"}
}
