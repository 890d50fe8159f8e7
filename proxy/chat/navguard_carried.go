package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/proxy/remixlet"
)

// What an agent navigation carries (OPEN-ITEMS 14, tenth session). A navigation of the agent's
// stays on the site (navguard.go), but the page it loads may read its own query and load what
// it names: a viewer setting img.src, iframe.src, <object data>, <embed src> or <link
// rel=prefetch> from ?doc= sends the address — and whatever the model put into it — to another
// site as the page's own subresource or a frame's first hop, which no navigation check can tell
// from a widget. So an agent navigation (one that pairs with an action's expectation or a lease:
// navigate, a link or a form the agent's click submits, a frame its action loads, what a page
// the agent loaded does by itself) is refused when its query carries an address of another site
// (remixlet.CarriedSites: http(s) or scheme-relative addresses, and fields that read as a host
// name, as written, percent-decoded up to three times, and base64-decoded), or its path does
// (remixlet.CarriedInPath, eleventh session: addresses with a scheme only, in the same shapes —
// "/viewer/https://…", "/https:/…", "/viewer/https%3A%2F%2F…", a base64 segment; a host-looking
// segment, "/domain/example.com", is not read: too many sites have those). Its fragment never
// reaches the proxy, so navigate's fragment is checked before the page agent is asked
// (checkCarriedFragment), and so is the fragment of a link the agent clicks (checkCarriedLink,
// eleventh session). A frame a page the agent loaded frames by itself (a lease's frame, not one an action
// loaded) is not checked: its address is the page's, and embeds of the site commonly name
// other sites (/embed?url=…). The person's own navigations (the address bar, a click the page
// agent reported) never pair, so they are not affected. The refusal is the navigation guard's:
// the proxy's page in the tab, and the tool's result says why.
//
// The cost: the agent cannot use a page of the site whose address names another site — a site
// search for "example.com" or for an address, a link checker, a "share to" page or path, a login
// page whose next= is another site's address, a web archive's snapshot (/web/2020/https://…), a
// viewer or proxy path (/viewer/https://…). The navigation is answered with the proxy's page,
// and the model and the person are told why and that the person can open it themselves
// (carriedCost).

// carriedSite is a site other than u's own that u's path, query or fragment carries, "" when
// none. The path is read for addresses with a scheme only (remixlet.CarriedInPath): a
// host-looking segment ("/domain/example.com") is too common to read.
func carriedSite(u *weburl.URL) string {
	site, _ := carriedWhere(u)
	return site
}

// carriedWhere is carriedSite with where u carries it: "path", or "query" (its query or
// fragment).
func carriedWhere(u *weburl.URL) (string, string) {
	if u == nil || !u.IsHTTP() {
		return "", ""
	}
	path, _, _ := strings.Cut(u.PathQuery(), "?")
	for _, s := range remixlet.CarriedInPath(path) {
		if s != u.Site() {
			return s, "path"
		}
	}
	href := u.Href()
	if i := strings.IndexAny(href, "?#"); i >= 0 {
		return carriedIn(href[i+1:], u.Site()), "query"
	}
	return "", ""
}

// carriedIn is a site other than own that part of an address carries, "" when none.
func carriedIn(part, own string) string {
	for _, s := range remixlet.CarriedSites(part) {
		if s != own {
			return s
		}
	}
	return ""
}

// carriedInFragment is a site other than u's own that u's fragment carries, "" when none (or
// when u has no fragment): the part of an address the proxy never sees, read before the page
// agent is asked to go there (navigate, a link's click).
func carriedInFragment(u *weburl.URL) string {
	href := u.Href()
	i := strings.IndexByte(href, '#')
	if i < 0 {
		return ""
	}
	return carriedIn(href[i+1:], u.Site())
}

// carriedCost is what a carried-address refusal tells the model and the person: what the agent
// cannot do, and that the person can.
const carriedCost = "the agent cannot open a page whose address names another site (a viewer, a link checker, a web archive, a share page), but the person can open it themselves"

// carriedWhy is the refusal's words for a navigation to u that carries an address of other.
// The path is not shown when it carries the address (it may carry the data too), as the query
// never is (shownAddress).
func carriedWhy(u *weburl.URL, other string) string {
	shown := shownAddress(u)
	_, where := carriedWhere(u)
	if where == "path" {
		shown = u.Origin() + "/…"
	}
	return fmt.Sprintf("the navigation to %s carried an address of %s in its %s, which a page of the site may load, so what it carried would have left the site %s; %s", shown, other, where, u.Site(), carriedCost)
}

// checkCarriedFragment refuses navigate's target (args read as the page tool reads them, from
// the page sess) when its fragment carries an address of another site: the proxy never sees a
// fragment, so it is checked before the page agent is asked. Its query is checked where every
// navigation of the agent's passes (GuardNavigation). nil when navigate would refuse the
// target anyway (the page tool says why).
func checkCarriedFragment(sess page.Info, args json.RawMessage) error {
	u, err := page.NavigateTarget(sess, args)
	if err != nil {
		return nil
	}
	if other := carriedInFragment(u); other != "" {
		return &agent.ToolError{Message: fmt.Sprintf("navigate: the address's fragment carries an address of another site (%s); a page may load what its address names, so the agent's navigations may not carry another site's address: %s. Do not try another way to reach it; tell the person what you found instead", other, carriedCost)}
	}
	return nil
}

// checkCarriedLink refuses a click whose link's fragment carries an address of another site
// (eleventh session). A link the agent clicks is the page's, but a benign page may copy what the
// agent typed into one (a "preview" link built from a field), and its fragment never reaches
// the proxy while the page it opens (or this page, for a same-document link) may load what it
// names. So the proxy asks the page agent where the click goes before it clicks — the probe
// submit.go's card uses, reused when gateSubmit ran it (facts; the click is then sent bound to
// it, expect), run here when it did not (the chat's "Act may submit forms" switch on; the click
// is sent unbound, as before: only the page's own script could change the link in the moment
// between, and a page script already holds what the agent typed) — and reads the fragment with
// the rule navigate's fragment and every agent navigation's address are read with (carriedIn).
// Nothing is checked for a page without the probe (no submitGate).
//
// Why here and not in the page agent (tool_click.js): the rule needs the public suffix list and
// the URL parser's IDNA and IPv4 readings (remixlet.CarriedSites), which the page agent does not
// carry; a port would be a second copy to keep in step (as rx_addresses.js is for the address
// rule) for one check, and it would run in the page's realm. The cost: with the switch on, each
// click is one more call to the page (the probe).
func checkCarriedLink(ctx context.Context, pg actPage, args map[string]json.RawMessage, facts *submitFacts) error {
	if _, ok := pg.(submitGate); !ok {
		return nil
	}
	if facts == nil {
		f, err := probeFacts(ctx, pg, "click", args)
		if err != nil || f == nil {
			return err
		}
		facts = f
	}
	u, err := weburl.Parse(facts.Link)
	if err != nil || !u.IsHTTP() {
		return nil
	}
	if other := carriedInFragment(u); other != "" {
		return &agent.ToolError{Message: fmt.Sprintf("click: not clicked: the link's fragment carries an address of another site (%s); a page may load what its address names, so the agent's clicks may not follow a link carrying another site's address: %s. Do not try another way to reach it; tell the person what you found instead", other, carriedCost)}
	}
	return nil
}
