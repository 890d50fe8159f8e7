package chat

import (
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
// name, as written, percent-decoded up to three times, and base64-decoded). Its fragment never
// reaches the proxy, so navigate's fragment is checked before the page agent is asked
// (checkCarriedFragment); a link the agent clicks whose fragment alone carries an address is not
// checked. A frame a page the agent loaded frames by itself (a lease's frame, not one an action
// loaded) is not checked: its address is the page's, and embeds of the site commonly name
// other sites (/embed?url=…). The person's own navigations (the address bar, a click the page
// agent reported) never pair, so they are not affected. The refusal is the navigation guard's:
// the proxy's page in the tab, and the tool's result says why.
//
// The cost: the agent cannot use a page of the site whose address names another site — a site
// search for "example.com" or for an address, a link checker, a "share to" page, a login page
// whose next= is another site's address. The navigation is answered with the proxy's page and
// the model is told why.

// carriedSite is a site other than u's own that u's query or fragment carries, "" when none.
func carriedSite(u *weburl.URL) string {
	if u == nil || !u.IsHTTP() {
		return ""
	}
	href := u.Href()
	if i := strings.IndexAny(href, "?#"); i >= 0 {
		return carriedIn(href[i+1:], u.Site())
	}
	return ""
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

// carriedWhy is the refusal's words for a navigation to u that carries an address of other.
func carriedWhy(u *weburl.URL, other string) string {
	return fmt.Sprintf("the navigation to %s carried an address of %s in its query, which a page of the site may load, so what it carried would have left the site %s", shownAddress(u), other, u.Site())
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
	href := u.Href()
	i := strings.IndexByte(href, '#')
	if i < 0 {
		return nil
	}
	if other := carriedIn(href[i+1:], u.Site()); other != "" {
		return &agent.ToolError{Message: fmt.Sprintf("navigate: the address's fragment carries an address of another site (%s); a page may load what its address names, so the agent's navigations may not carry another site's address. Do not try another way to reach it; tell the person what you found instead", other)}
	}
	return nil
}
