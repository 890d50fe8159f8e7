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
// eleventh session: an address with a scheme, or a host-looking one holding what the agent
// typed; the page wrote the rest, and in-page anchors such as "#setup.py" read as hosts). A frame a page the agent loaded frames by itself (a lease's frame, not one an action
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
func carriedWhy(u *weburl.URL, other string) string {
	return carriedWords("navigation", "a page of the site may load", u, other)
}

// carriedWords are a carried-address refusal's words for an agent's navigation or request
// (what) to u that carries an address of other, which the site may fetch or load (how). The
// path is not shown when it carries the address (it may carry the data too), as the query never
// is (shownAddress).
func carriedWords(what, how string, u *weburl.URL, other string) string {
	shown := shownAddress(u)
	_, where := carriedWhere(u)
	if where == "path" {
		shown = u.Origin() + "/…"
	}
	return fmt.Sprintf("the %s to %s carried an address of %s in its %s, which %s, so what it carried would have left the site %s; %s", what, shown, other, where, how, u.Site(), carriedCost)
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
// that the agent, not the page, may have put there (eleventh session; linkCarries). A link the
// agent clicks is the page's, but a benign page may copy what the agent typed into one (a
// "preview" link built from a field), and its fragment never reaches the proxy while the page it
// opens (or this page, for a same-document link) may load what it names. So the proxy asks the
// page agent where the click goes before it clicks — the probe submit.go's card uses, reused
// when gateSubmit ran it (facts; the click is then sent bound to it, expect), run here when it
// did not (the chat's "Act may submit forms" switch on; the click is sent unbound, as before:
// only the page's own script could change the link in the moment between, and a page script
// already holds what the agent typed) — and reads the fragment in the shapes navigate's fragment
// and every agent navigation's address are read in. typed are the values the agent typed, set
// or selected in this chat (actState.noteTyped). Nothing is checked for a page without the
// probe (no submitGate).
//
// Why here and not in the page agent (tool_click.js): the rule needs the public suffix list and
// the URL parser's IDNA and IPv4 readings (remixlet.CarriedSites), which the page agent does not
// carry; a port would be a second copy to keep in step (as rx_addresses.js is for the address
// rule) for one check, and it would run in the page's realm. The cost: with the switch on, each
// click is one more call to the page (the probe).
func checkCarriedLink(ctx context.Context, pg actPage, args map[string]json.RawMessage, facts *submitFacts, typed []string) error {
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
	href := u.Href()
	i := strings.IndexByte(href, '#')
	if i < 0 {
		return nil
	}
	if other, withTyped := linkCarries(href[i+1:], u.Site(), typed); other != "" {
		held := ""
		if withTyped {
			held = " with a value the agent entered on this site"
		}
		return &agent.ToolError{Message: fmt.Sprintf("click: not clicked: the link's fragment carries an address of another site (%s)%s; a page may load what its address names, so the agent's clicks may not follow a link carrying another site's address: %s. Do not try another way to reach it; tell the person what you found instead", other, held, carriedCost)}
	}
	return nil
}

// linkCarries is the site other than own that a clicked link's fragment frag carries by the
// click's rule, "" when none, and whether a typed value made it count:
//   - an address with a scheme or scheme-relative (remixlet.CarriedAddresses: as written,
//     percent-encoded, base64) counts whatever the page: no in-page anchor looks like one;
//   - a field that only reads as a host name ("#witness.test/i?d=4711") counts when the
//     fragment holds a value the agent typed (typedIn). Without one the link is the page's own
//     text, which the model did not choose, and such fields are as often in-page anchors whose
//     ids end in a real top-level domain ("#setup.py", "#readme.md", "#config.io").
func linkCarries(frag, own string, typed []string) (string, bool) {
	for _, s := range remixlet.CarriedAddresses(frag) {
		if s != own {
			return s, false
		}
	}
	var shapes []string
	for _, s := range remixlet.CarriedSites(frag) {
		if s == own {
			continue
		}
		if shapes == nil {
			for _, shape := range remixlet.CarriedShapes(frag) { // base64 is read before lower-casing
				shapes = append(shapes, strings.ToLower(shape))
			}
		}
		if typedIn(shapes, s, typed) {
			return s, true
		}
	}
	return "", false
}

// typedIn says whether one of the fragment's shapes (lower-cased) holds a typed value (lower-cased,
// at least minTyped characters: actState.noteTyped) whole, other than one within the carried
// site's name: a search for "setup.py" or "setup" does not make the anchor "#setup.py" the
// agent's, while "4711", "witness.test/i?d=4711" or "4711.witness.test" make
// "#witness.test/i?d=4711" or "#4711.witness.test" so. A page that rewrites the value (keeps
// part of it, re-encodes it in a shape the rule does not read) is not seen.
func typedIn(shapes []string, site string, typed []string) bool {
	for _, v := range typed {
		if strings.Contains(site, v) {
			continue
		}
		for _, shape := range shapes {
			if strings.Contains(shape, v) {
				return true
			}
		}
	}
	return false
}
