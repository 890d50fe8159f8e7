package remixlet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/rewrite"
	"github.com/remixproxy/remixproxy/sandbox"
)

// The static half of the page policy (DESIGN invariant 4): what can be checked on a dom.* call's
// arguments alone runs here, in Go, before the call is relayed to the page agent. The page agent
// repeats these checks and adds the ones that depend on the DOM (password fields, handles).

// domOps are the dom.* operations the page agent implements, with their minimum and maximum
// number of arguments. It must equal sandbox.DOMMethods (a test checks).
var domOps = map[string][2]int{
	"query": {1, 2}, "queryAll": {1, 2}, "waitFor": {1, 2}, "text": {1, 1}, "attr": {2, 2}, "value": {1, 1},
	"rect": {1, 1}, "style": {2, 2}, "create": {1, 1}, "setText": {2, 2}, "setAttr": {3, 3},
	"addClass": {2, 2}, "removeClass": {2, 2}, "setStyle": {2, 2}, "insert": {2, 3},
	"remove": {1, 1}, "clone": {1, 2}, "hide": {1, 1}, "show": {1, 1}, "on": {3, 3},
	"click": {1, 1}, "focus": {1, 1}, "scrollIntoView": {1, 1}, "addStyle": {1, 1},
	"setHTML": {2, 2},
}

// domEvents are the event types dom.on accepts.
var domEvents = map[string]bool{
	"click": true, "dblclick": true, "mouseenter": true, "mouseleave": true, "input": true,
	"change": true, "focus": true, "blur": true, "keydown": true, "keyup": true,
}

// refusedAttrs are attributes that load or run something. href and src are the exceptions
// handled by the address rule (checkAddress): href on links, src on images.
var refusedAttrs = map[string]bool{
	"src": true, "href": true, "action": true, "formaction": true, "srcdoc": true, "style": true,
	"xlink:href": true, "srcset": true, "imagesrcset": true, "ping": true, "poster": true,
	"background": true, "data": true, "codebase": true, "archive": true, "lowsrc": true,
	"dynsrc": true, "manifest": true, "http-equiv": true, "is": true, "formtarget": true,
	"target": true, "xmlns": true, "attributionsrc": true, "form": true, "formmethod": true,
	"formenctype": true, "formnovalidate": true, "popovertarget": true, "popovertargetaction": true,
	"command": true, "commandfor": true, "integrity": true, "nonce": true, "slot": true,
	"shadowrootmode": true, "shadowrootdelegatesfocus": true, "shadowrootclonable": true,
	"shadowrootserializable": true,
}

// loaderAttrs are attributes that matter only on elements that load, navigate or change how the
// document is fetched, or that change how a load is made: meta content (a refresh), link rel
// and as, referrerpolicy and crossorigin, iframe sandbox, allow and csp, the attribute an SVG
// animation targets, and sizes (it picks among a srcset's candidates: written back and forth on
// a page's image, it makes the browser ask their host again and again, red-team pass 5a). The page agent refuses every attribute write on such elements except a
// few that cannot load (it alone knows the element); Go refuses these names on any element.
var loaderAttrs = map[string]bool{
	"content": true, "charset": true, "rel": true, "as": true, "referrerpolicy": true,
	"crossorigin": true, "sandbox": true, "allow": true, "csp": true, "credentialless": true,
	"attributename": true, "blocking": true, "sizes": true, "imagesizes": true,
}

// createTags are the elements dom.create (and dom.setHTML, in the page agent) may build: layout,
// text, form controls other than form itself, images and simple SVG. Never form, frames, script,
// style, link, meta, object, embed, video, audio, base, template, slot or noscript.
var createTags = map[string]bool{
	"div": true, "span": true, "p": true, "a": true, "b": true, "i": true, "u": true, "s": true,
	"em": true, "strong": true, "small": true, "mark": true, "sub": true, "sup": true,
	"code": true, "pre": true, "kbd": true, "samp": true, "var": true, "q": true,
	"blockquote": true, "cite": true, "abbr": true, "time": true, "br": true, "hr": true,
	"wbr": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"ul": true, "ol": true, "li": true, "dl": true, "dt": true, "dd": true, "table": true,
	"thead": true, "tbody": true, "tfoot": true, "tr": true, "td": true, "th": true,
	"caption": true, "colgroup": true, "col": true, "section": true, "article": true,
	"aside": true, "header": true, "footer": true, "nav": true, "main": true, "figure": true,
	"figcaption": true, "details": true, "summary": true, "address": true, "del": true,
	"ins": true, "dfn": true, "bdi": true, "bdo": true, "ruby": true, "rt": true, "rp": true,
	"label": true, "fieldset": true, "legend": true, "input": true, "button": true,
	"select": true, "option": true, "optgroup": true, "textarea": true, "datalist": true,
	"output": true, "progress": true, "meter": true, "img": true,
	// SVG, created in the SVG namespace.
	"svg": true, "path": true, "circle": true, "rect": true, "line": true, "polyline": true,
	"polygon": true, "g": true, "text": true,
}

// svgTags are the createTags in the SVG namespace; "svg" starts an SVG subtree and the others
// are allowed only inside one.
var svgTags = map[string]bool{
	"svg": true, "path": true, "circle": true, "rect": true, "line": true, "polyline": true,
	"polygon": true, "g": true, "text": true,
}

// insertPositions are dom.insert's positions.
var insertPositions = map[string]bool{"before": true, "after": true, "prepend": true, "append": true}

// clobberNames are id and name values refused on elements a remixlet creates or changes: an
// element with such an id or name shadows a property of document or window for the page's own
// scripts (DOM clobbering). The page agent also checks the live document and window.
var clobberNames = map[string]bool{
	"cookie": true, "location": true, "body": true, "head": true, "document": true,
	"window": true, "domain": true, "forms": true, "images": true, "links": true,
	"scripts": true, "anchors": true, "defaultview": true, "documentelement": true,
	"baseuri": true, "url": true, "referrer": true, "title": true, "top": true, "parent": true,
	"self": true, "frames": true, "opener": true, "name": true, "origin": true,
	"createelement": true, "queryselector": true, "queryselectorall": true,
	"getelementbyid": true, "implementation": true, "currentscript": true, "alert": true,
	"fetch": true, "attributes": true, "nodename": true, "nodetype": true, "parentnode": true,
	"childnodes": true, "firstchild": true, "lastchild": true, "ownerdocument": true,
	"textcontent": true, "innerhtml": true, "outerhtml": true, "activeelement": true,
	"defaultvalue": true, "action": true, "method": true, "submit": true, "reset": true,
	"elements": true, "length": true, "tostring": true, "valueof": true, "constructor": true,
	"__proto__": true, "prototype": true, "hasownproperty": true,
}

// Size limits on dom.* arguments.
const (
	maxSelectorLen  = 1024
	maxAttrNameLen  = 128
	maxAttrValue    = 8 << 10
	maxDataImageLen = 64 << 10
	maxTextLen      = 64 << 10
	maxHTMLLen      = 64 << 10
	maxCSSLen       = 64 << 10
	maxStyleProps   = 64
	maxStyleValue   = 1024
	maxCreateNodes  = 500
	maxCreateDepth  = 16
	maxCreateAttrs  = 32
	// maxOpAddressBytes bounds the resolved addresses one call may write (setHTML's HTML can
	// name thousands); a call over it is refused whole.
	maxOpAddressBytes = 1 << 20
)

// domPolicy is what the static checks of one call need to know: the page's current URL and the
// remixlet's stored manifest (its own sites and fetch: hosts, for addresses).
type domPolicy struct {
	page     *url.URL
	base     *weburl.URL // the page's URL as the browser reads it; nil: read from page
	manifest *sandbox.Manifest
	send     *sendScope // where its writes may send (mayLoad); nil: worked out on each use
}

// domCall is a dom.* call that passed the static checks, ready to relay: the arguments (with
// addresses resolved and stylesheets cleaned), the dom.on listener id (0 for other calls), the
// hosts this call's addresses may load from beyond the page's origin (the remixlet's own sites
// and fetch: hosts, as checked here), and whether an address was written relative.
type domCall struct {
	args      []json.RawMessage
	listener  int64
	hosts     []string
	relative  bool
	addresses []string      // the http(s) addresses the call writes, as the browser requests them (redirectGuard, Op.Addrs)
	addrBytes int           // their length, bounded by maxOpAddressBytes
	wait      time.Duration // dom.waitFor: its timeout, which the relay waits out (waitfor.go)
}

// opAddrs is the Op.Addrs of the call: its addresses, each once.
func (c *domCall) opAddrs() []string {
	if len(c.addresses) == 0 {
		return nil
	}
	out := make([]string, 0, len(c.addresses))
	seen := make(map[string]bool, len(c.addresses))
	for _, a := range c.addresses {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// addAddress records an http(s) address the call writes. The only bound is on memory, and
// crossing it refuses the call; nothing is ever left unrecorded.
func (c *domCall) addAddress(a string) error {
	if c.addrBytes+len(a) > maxOpAddressBytes {
		return fmt.Errorf("the call writes more addresses than the proxy checks at once (over %d bytes once resolved); split it into smaller calls", maxOpAddressBytes)
	}
	c.addrBytes += len(a)
	c.addresses = append(c.addresses, a)
	return nil
}

// checkDOMCall applies the static page policy to one dom.* call.
func checkDOMCall(pol domPolicy, method string, raw json.RawMessage) (call domCall, err error) {
	want, ok := domOps[method]
	if !ok {
		return call, errors.New("is not available (available: " + strings.Join(sandbox.DOMMethods, ", ") + ")")
	}
	var args []json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return call, errors.New("arguments are not a JSON array")
	}
	if len(args) < want[0] || len(args) > want[1] {
		return call, fmt.Errorf("takes %d to %d arguments, got %d", want[0], want[1], len(args))
	}
	call.args = args
	if pol.send == nil {
		pol.send = newSendScope(pol.manifest, pageSiteOf(pol.pageBase()))
	}
	switch method {
	case "query", "queryAll":
		if err := checkSelector(args); err != nil {
			return call, err
		}
		if len(args) == 2 && string(args[1]) != "null" {
			if err := handleArg(args, 1); err != nil {
				return call, err
			}
		}
		return call, nil
	case "waitFor":
		return call, checkWaitFor(&call)
	case "create":
		return call, pol.checkCreate(&call)
	case "addStyle":
		return call, pol.checkAddStyle(&call)
	}
	if err := handleArg(args, 0); err != nil {
		return call, err
	}
	switch method {
	case "attr":
		_, err = attrNameArg(args, 1)
	case "style":
		err = checkStyleNames(args[1])
	case "setText":
		_, err = stringArg(args, 1, "text", maxTextLen)
	case "setAttr":
		err = pol.checkSetAttr(&call)
	case "addClass", "removeClass":
		err = checkClassName(args)
	case "setStyle":
		err = checkSetStyle(args[1])
		if err == nil {
			err = pol.checkStyleTexts(&call, args[1]) // custom properties page scripts read (deputies.go)
		}
	case "on":
		call.listener, err = checkOn(args)
	case "insert":
		err = checkInsert(args)
	case "clone":
		call.hosts = pol.cloneHosts()
		if len(args) == 2 {
			var deep *bool
			if json.Unmarshal(args[1], &deep) != nil {
				err = errors.New("argument 2 (deep) must be true or false")
			}
		}
	case "setHTML":
		err = pol.checkSetHTML(&call)
	}
	return call, err
}

func stringArg(args []json.RawMessage, i int, what string, max int) (string, error) {
	var s string
	if err := json.Unmarshal(args[i], &s); err != nil {
		return "", fmt.Errorf("argument %d (%s) must be a string", i+1, what)
	}
	if len(s) > max {
		return "", fmt.Errorf("argument %d (%s) is %d bytes, more than %d", i+1, what, len(s), max)
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return "", fmt.Errorf("argument %d (%s) is not valid text", i+1, what)
	}
	return s, nil
}

// handleArg checks that args[i] is a handle, {"$h": N} with N a positive integer.
func handleArg(args []json.RawMessage, i int) error {
	var h map[string]any
	d := json.NewDecoder(bytes.NewReader(args[i]))
	d.UseNumber()
	if err := d.Decode(&h); err != nil || len(h) != 1 {
		return fmt.Errorf("argument %d must be an element handle from dom.query or dom.queryAll", i+1)
	}
	num, ok := h["$h"].(json.Number)
	n, err := num.Int64()
	if !ok || err != nil || n <= 0 {
		return fmt.Errorf("argument %d must be an element handle from dom.query or dom.queryAll", i+1)
	}
	return nil
}

func attrNameArg(args []json.RawMessage, i int) (string, error) {
	name, err := stringArg(args, i, "attribute name", maxAttrNameLen)
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", errors.New("the attribute name is empty")
	}
	for _, r := range name {
		if r <= ' ' || r == '"' || r == '\'' || r == '>' || r == '/' || r == '=' || r == 0x7f {
			return "", fmt.Errorf("%q is not an attribute name", name)
		}
	}
	return strings.ToLower(name), nil
}

// refusedAttr says why an attribute may not be written, or "" when it may. href and src are
// left to the address rule (addressAttr).
func refusedAttr(name string) string {
	switch {
	case strings.HasPrefix(name, "on"):
		return "event handler attributes (on*) run code"
	case name == "href" || name == "src":
		return ""
	case refusedAttrs[name]:
		return name + " loads or runs something"
	case loaderAttrs[name]:
		return name + " matters only on elements that load or navigate, or changes how a load is made"
	case strings.HasPrefix(name, "data-remixlet-"):
		return "attributes starting with data-remixlet- are the remixlets' marks"
	case strings.Contains(name, ":"):
		return "namespaced attributes (" + name + ") are not allowed"
	}
	return ""
}

// refusedAttrValue says why a value may not be written to an attribute other than href and src,
// or "": SVG presentation attributes (fill, filter, mask …) are CSS and can load with url() or
// image-set(), and a value that reads as a script address is refused whatever the attribute
// (the page agent applies the same rules, and refuses CSS escapes on SVG elements).
func refusedAttrValue(value string) string {
	v := strings.ToLower(value)
	if strings.Contains(v, "url(") || strings.Contains(v, "image-set(") {
		return "its value may not contain url( or image-set("
	}
	squeezed := strings.Map(func(r rune) rune {
		if r <= ' ' {
			return -1
		}
		return r
	}, v)
	for _, p := range []string{"javascript:", "vbscript:", "data:text/"} {
		if strings.HasPrefix(squeezed, p) {
			return "its value reads as a script address"
		}
	}
	return ""
}

// addressAttr reports whether name is an attribute the address rule governs.
func addressAttr(name string) bool { return name == "href" || name == "src" }

// checkAttrValue checks one attribute write: the name against refusedAttr, id and name values
// against clobberNames, and href and src against the address rule. It returns the value to
// write (an address resolved to its absolute form).
func (pol domPolicy) checkAttrValue(call *domCall, name, value string) (string, error) {
	if why := refusedAttr(name); why != "" {
		return "", fmt.Errorf("attribute %s refused: %s", name, why)
	}
	if (name == "id" || name == "name") && clobberNames[strings.ToLower(strings.TrimSpace(value))] {
		return "", fmt.Errorf("attribute %s=%q refused: it would shadow document.%s or window.%s for the page's scripts", name, value, value, value)
	}
	if !addressAttr(name) {
		if why := refusedAttrValue(value); why != "" {
			return "", fmt.Errorf("attribute %s refused: %s", name, why)
		}
		// A page script may load what an attribute holds (lazy loaders copy data-src to src),
		// so an address anywhere in the value follows the address rule too; the value itself
		// is written as given.
		for _, a := range addressesIn(value) {
			resolved, err := pol.allowAddress(call, a)
			if err != nil {
				return "", fmt.Errorf("attribute %s refused: its value holds the address %s: %v", name, a, err)
			}
			// A page script that loads it loads it now: an image's rule, never a link's (the
			// page agent applies the same, checkAddress with link false).
			if !pol.imageAllowed(resolved) {
				return "", fmt.Errorf("attribute %s (its value holds the address %s) refused: %s is not on the page's origin or one of the remixlet's sites or fetch: hosts (a page script may load it)", name, a, resolved)
			}
		}
		// A path in it may be where a page script goes (a router's data-go): guarded like an
		// address the remixlet wrote (deputies.go).
		if err := pol.guardPaths(call, value); err != nil {
			return "", fmt.Errorf("attribute %s refused: %w", name, err)
		}
		return value, nil
	}
	resolved, err := pol.allowAddress(call, value)
	if err != nil {
		return "", fmt.Errorf("attribute %s refused: %v", name, err)
	}
	if name == "src" && !pol.imageAllowed(resolved) {
		return "", fmt.Errorf("attribute src refused: %s is not on the page's origin or one of the remixlet's sites or fetch: hosts (an image from another host, even one the page shows, needs a fetch: permission for it)", resolved)
	}
	return resolved, nil
}

// imageAllowed reports whether an image may load from resolved (checkAddress's result): a data:
// image, the page's origin, or a host of the remixlet's own sites or fetch: permissions. An
// address the page itself loads does not count, unlike for links: a remixlet that writes it
// makes the browser ask its host again, as often and in the order it likes, which two images a
// comment planted on the page (evil/0, evil/1) turned into a channel to their host for anything
// the remixlet read (red-team pass 5a). The page agent applies the same rule, to setHTML's
// images and clones too (checkAddress in panel/pageagent/rx_addresses.js).
func (pol domPolicy) imageAllowed(resolved string) bool {
	if strings.HasPrefix(resolved, "data:") {
		return true
	}
	u, err := weburl.Parse(resolved)
	if err != nil {
		return false
	}
	base := pol.pageBase()
	if base != nil && weburl.SameOrigin(u, base) {
		return true
	}
	return pol.mayLoad(u.HostKey())
}

// pageBase is the page's URL as the browser reads it (nil without a page).
func (pol domPolicy) pageBase() *weburl.URL {
	if pol.base == nil && pol.page != nil {
		base, _ := weburl.Parse(pol.page.String())
		return base
	}
	return pol.base
}

// mayLoad reports whether what the remixlet writes on this page may make the browser send to
// host beyond the page's origin: its sites within the page's site, and its fetch: hosts
// (mayLoadOn, sendhosts.go).
func (pol domPolicy) mayLoad(host string) bool {
	if pol.send != nil {
		return pol.send.allows(host)
	}
	return mayLoadOn(pol.manifest, pageSiteOf(pol.pageBase()), host)
}

// cloneHosts is what a clone's images may load from beyond the page's origin, for the page
// agent: the remixlet's sites within the page's site as patterns ("*.example.com" covers
// example.com and its subdomains; sitesOnPage) and its fetch: hosts — mayLoad's hosts. A clone
// writes addresses the proxy never sees (the page's own, copied in the page), so the page
// agent gets the allowance whole.
func (pol domPolicy) cloneHosts() []string {
	if pol.manifest == nil {
		return nil
	}
	send := pol.send
	if send == nil {
		send = newSendScope(pol.manifest, pageSiteOf(pol.pageBase()))
	}
	return slices.Concat(send.sites, send.fetch)
}

// allowAddress applies checkAddress to one address the call writes and records, for the page
// agent and the redirect guard, the host it may load from, whether it was relative, and the
// resolved address.
func (pol domPolicy) allowAddress(call *domCall, value string) (string, error) {
	resolved, host, rel, err := pol.checkAddress(value)
	if err != nil {
		return "", err
	}
	if host != "" && !slices.Contains(call.hosts, host) {
		call.hosts = append(call.hosts, host)
	}
	call.relative = call.relative || rel
	if !strings.HasPrefix(resolved, "data:") {
		if err := call.addAddress(httpx.WithoutFragment(resolved)); err != nil {
			return "", err
		}
	}
	return resolved, nil
}

// addressesIn finds the addresses an attribute value holds anywhere in it, as a page script
// that loads them would read them: those plainAddressesIn finds in it as written, then those in
// its percent-decoded and base64-decoded forms (encodedAddressesIn, deputies.go). The page agent
// (addressesIn in panel/pageagent/rx_addresses.js) finds the same.
func addressesIn(value string) []string {
	return append(plainAddressesIn(value), encodedAddressesIn(value)...)
}

// plainAddressesIn finds the addresses a value holds as written: with tabs and newlines removed
// (the URL parser drops them), every http:, https:, ws: or wss: address, and every
// scheme-relative one (//host, ///host, with any slash written as a backslash), up to a space,
// quote, comma or bracket.
func plainAddressesIn(value string) []string {
	v := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, value)
	lb := []byte(v)
	for i, c := range lb {
		if c >= 'A' && c <= 'Z' {
			lb[i] = c + 'a' - 'A'
		}
	}
	lower := string(lb)
	var out []string
	for p := 0; p < len(v); p++ {
		start := -1
		for _, scheme := range []string{"https:", "http:", "wss:", "ws:"} {
			if strings.HasPrefix(lower[p:], scheme) && (p == 0 || !schemeByte(lower[p-1])) {
				start = p
				break
			}
		}
		if start < 0 && p+1 < len(v) && isSlash(v[p]) && isSlash(v[p+1]) && (p == 0 || v[p-1] != ':' && !isSlash(v[p-1])) {
			h := p + 2
			for h < len(v) && isSlash(v[h]) {
				h++
			}
			if h < len(v) && hostStart(v[h]) {
				start = p
			}
		}
		if start < 0 {
			continue
		}
		end := start
		for end < len(v) && !strings.ContainsRune(addressEnds, rune(v[end])) {
			end++
		}
		out = append(out, v[start:end])
		p = end
	}
	return out
}

// addressEnds are the bytes that end an address found in an attribute value.
const addressEnds = " \f\"'`,;<>()[]{}|^"

func schemeByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '+' || b == '-' || b == '.'
}

func isSlash(b byte) bool { return b == '/' || b == '\\' }

func hostStart(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '[' || b >= 0x80
}

// dataImage matches the data: addresses allowed for images (raster formats only, never SVG).
// The type is read without regard to case, as the browser reads it (the page agent's
// DATA_IMAGE_TYPES does too; TestImageRuleMatchesThePageAgent).
var dataImage = regexp.MustCompile(`^data:(?i:image/(png|gif|jpeg|webp)(;base64)?),[A-Za-z0-9+/=%._~-]*$`)

// urlScheme finds a scheme at the start of an address, as the URL parser does.
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// checkAddress applies the address rule to an href or src value (DESIGN invariants 4 and 9).
// The value is read as the browser reads it, by weburl (WHATWG URL parsing, IDNA/UTS-46),
// relative to the page's URL: tabs and newlines removed, backslashes as slashes, dot segments and
// their %2e spellings resolved, hosts mapped (fullwidth letters, U+3002 and friends, upper case),
// default ports dropped. relative is true when the value has no scheme (the page agent refuses it
// where a <base> element would resolve it elsewhere). Allowed: an http(s) address on the page's
// origin, on a host the remixlet's matches cover or a fetch: permission names (host is returned:
// the page agent allows that host for this call), or, for a link only, any other http(s) address
// the page agent finds the page already has exactly (imageAllowed); and data:image/png, gif,
// jpeg or webp. Everything else —
// javascript:, blob:, data: of other types, other schemes, user names in addresses, spaces and
// control characters inside, an http(s) scheme without "//" — is refused. resolved is what the
// element gets: the browser's own serialisation, which the page agent checks it reads alike.
func (pol domPolicy) checkAddress(value string) (resolved, host string, relative bool, err error) {
	v := strings.TrimFunc(value, func(r rune) bool { return r <= ' ' })
	v = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, v)
	for _, r := range v {
		if r <= ' ' || r == 0x7f {
			return "", "", false, errors.New("the address contains spaces or control characters")
		}
	}
	if v == "" {
		return "", "", false, errors.New("the address is empty")
	}
	scheme := ""
	if m := urlScheme.FindString(v); m != "" {
		scheme = strings.ToLower(strings.TrimSuffix(m, ":"))
	}
	switch scheme {
	case "data":
		if len(v) > maxDataImageLen {
			return "", "", false, fmt.Errorf("the data: address is longer than %d bytes", maxDataImageLen)
		}
		if !dataImage.MatchString("data:" + v[5:]) {
			return "", "", false, errors.New("only data:image/png, gif, jpeg or webp addresses are allowed (not svg, not other types)")
		}
		return "data:" + v[5:], "", false, nil
	case "http", "https":
		// "https:host/path" reads as a path on the page's origin when the page is https and as
		// a host otherwise: refused as ambiguous rather than guessed.
		if rest := v[len(scheme)+1:]; !strings.HasPrefix(rest, "//") && !strings.HasPrefix(rest, `\\`) &&
			!strings.HasPrefix(rest, `/\`) && !strings.HasPrefix(rest, `\/`) {
			return "", "", false, errors.New("the address is not a full http(s) address (write it with //)")
		}
	case "":
	default:
		return "", "", false, fmt.Errorf("%s: addresses are not allowed (only http, https and data: images)", scheme)
	}
	if len(v) > maxAttrValue {
		return "", "", false, fmt.Errorf("the address is longer than %d bytes", maxAttrValue)
	}
	base := pol.pageBase()
	if scheme == "" {
		if base == nil {
			return "", "", false, errors.New("relative addresses need the page's address")
		}
		relative = true
	}
	u, perr := weburl.Resolve(base, v)
	if perr != nil {
		return "", "", false, errors.New("the address does not parse as a browser reads it")
	}
	if !u.IsHTTP() {
		return "", "", false, errors.New("the address is not a full http(s) address")
	}
	if u.HasCredentials() {
		return "", "", false, errors.New("addresses with a user name are not allowed")
	}
	h := u.HostKey()
	if h == "" {
		return "", "", false, errors.New("the address has no valid host")
	}
	resolved = u.Href()
	if len(resolved) > maxAttrValue {
		return "", "", false, fmt.Errorf("the address is longer than %d bytes once resolved", maxAttrValue)
	}
	if base != nil && weburl.SameOrigin(u, base) {
		return resolved, "", relative, nil
	}
	if pol.mayLoad(h) {
		return resolved, h, relative, nil
	}
	// Anything else must be a link the page already has, exactly; only the page agent can
	// tell, so it is relayed without an allowance (images are refused: imageAllowed).
	return resolved, "", relative, nil
}

func (pol domPolicy) checkSetAttr(call *domCall) error {
	args := call.args
	name, err := attrNameArg(args, 1)
	if err != nil {
		return err
	}
	max := maxAttrValue
	if name == "src" {
		max = maxDataImageLen
	}
	value, err := stringArg(args, 2, "value", max)
	if err != nil {
		return err
	}
	v, err := pol.checkAttrValue(call, name, value)
	if err != nil {
		return err
	}
	args[1], _ = json.Marshal(name)
	args[2], _ = json.Marshal(v)
	return nil
}

// elementSpec is dom.create's argument.
type elementSpec struct {
	Tag      string            `json:"tag"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	Text     *string           `json:"text,omitempty"`
	Children []*elementSpec    `json:"children,omitempty"`
}

// checkCreate checks dom.create's ElementSpec: tags from createTags (SVG ones only inside svg,
// nothing but SVG inside svg), attributes as setAttr checks them (href only on a, src only on
// img), at most maxCreateNodes elements maxCreateDepth deep. The spec is relayed with its tags
// and attribute names lower-cased and its addresses resolved.
func (pol domPolicy) checkCreate(call *domCall) error {
	d := json.NewDecoder(bytes.NewReader(call.args[0]))
	d.DisallowUnknownFields()
	var spec elementSpec
	if err := d.Decode(&spec); err != nil {
		return fmt.Errorf("argument 1 must be an element spec {tag, attrs?, text?, children?}: %v", err)
	}
	count := 0
	if err := pol.checkSpec(call, &spec, false, 0, &count); err != nil {
		return err
	}
	raw, err := json.Marshal(&spec)
	if err != nil {
		return err
	}
	call.args[0] = raw
	return nil
}

func (pol domPolicy) checkSpec(call *domCall, s *elementSpec, inSVG bool, depth int, count *int) error {
	if s == nil {
		return errors.New("a child is null; each child must be an element spec")
	}
	*count++
	if *count > maxCreateNodes {
		return fmt.Errorf("more than %d elements", maxCreateNodes)
	}
	if depth >= maxCreateDepth {
		return fmt.Errorf("nested deeper than %d elements", maxCreateDepth)
	}
	tag := strings.ToLower(s.Tag)
	if !createTags[tag] {
		return fmt.Errorf("element <%s> refused: dom.create builds only layout, text, form control (not form), img and simple SVG elements (svg, path, circle, rect, line, polyline, polygon, g, text)", s.Tag)
	}
	if inSVG && !svgTags[tag] {
		return fmt.Errorf("element <%s> refused inside svg: only path, circle, rect, line, polyline, polygon, g and text", tag)
	}
	if !inSVG && svgTags[tag] && tag != "svg" {
		return fmt.Errorf("element <%s> refused outside svg: put it inside an svg element", tag)
	}
	s.Tag = tag
	if len(s.Attrs) > maxCreateAttrs {
		return fmt.Errorf("<%s> has more than %d attributes", tag, maxCreateAttrs)
	}
	attrs := make(map[string]string, len(s.Attrs))
	for name, value := range s.Attrs {
		raw, _ := json.Marshal([]string{name, value})
		var pair []json.RawMessage
		_ = json.Unmarshal(raw, &pair)
		n, err := attrNameArg(pair, 0)
		if err != nil {
			return fmt.Errorf("<%s>: %v", tag, err)
		}
		if len(value) > maxDataImageLen || (n != "src" && len(value) > maxAttrValue) {
			return fmt.Errorf("<%s %s>: the value is too long", tag, n)
		}
		if n == "href" && tag != "a" {
			return fmt.Errorf("<%s> attribute href refused: only links (a) may have an href", tag)
		}
		if n == "src" && tag != "img" {
			return fmt.Errorf("<%s> attribute src refused: only images (img) may have a src", tag)
		}
		if n == "type" && tag == "input" && strings.EqualFold(strings.TrimSpace(value), "image") {
			return errors.New(`<input type="image"> refused: use an img inside a button`)
		}
		v, err := pol.checkAttrValue(call, n, value)
		if err != nil {
			return fmt.Errorf("<%s> %v", tag, err)
		}
		attrs[n] = v
	}
	s.Attrs = attrs
	if s.Text != nil && len(*s.Text) > maxTextLen {
		return fmt.Errorf("<%s>: the text is longer than %d bytes", tag, maxTextLen)
	}
	if s.Text != nil && !utf8.ValidString(*s.Text) {
		return fmt.Errorf("<%s>: the text is not valid UTF-8", tag)
	}
	for _, c := range s.Children {
		if err := pol.checkSpec(call, c, inSVG || tag == "svg", depth+1, count); err != nil {
			return err
		}
	}
	return nil
}

// checkAddStyle checks dom.addStyle's CSS with the rules of style.css (rewrite.CheckStylesheet
// with the manifest's hosts). A stylesheet with any refused part is refused whole, naming
// each part; what passes is relayed as the checker wrote it. Its url() addresses are the call's
// addresses, held by the redirect guard like those of attributes: an allowed host's open
// redirect would otherwise carry the address, and what the script put into it, anywhere.
func (pol domPolicy) checkAddStyle(call *domCall) error {
	css, err := stringArg(call.args, 0, "css", maxCSSLen)
	if err != nil {
		return err
	}
	clean, addrs, problems := rewrite.CheckStylesheetAddresses([]byte(css), pol.mayLoad)
	if len(problems) > 0 {
		parts := make([]string, 0, len(problems))
		for i, p := range problems {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("and %d more", len(problems)-5))
				break
			}
			parts = append(parts, fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p.Reason))
		}
		return errors.New("the stylesheet is refused: " + strings.Join(parts, "; "))
	}
	// Custom properties a page script may read an address from (deputies.go).
	if _, problems := rewrite.DropCustomProperties(clean, pol.textRefusal(call)); len(problems) > 0 {
		return errors.New("the stylesheet is refused: " + problems[0].Error())
	}
	for _, a := range addrs {
		if err := call.addAddress(httpx.WithoutFragment(a)); err != nil {
			return err
		}
	}
	call.args[0], _ = json.Marshal(string(clean))
	// Its own copy (panel.Style.Own), the page agent's second argument.
	own, _ := json.Marshal(string(rewrite.OwnSheet(clean, panel.OwnAttr)))
	call.args = append(call.args, own)
	return nil
}

// checkSetHTML checks dom.setHTML's HTML string for size and finds every address in it, for the
// page agent (the hosts the remixlet's manifest allows, and Op.Addrs) and the redirect guard. The
// HTML itself is parsed and filtered in the page, in an inert document (DESIGN invariant 4). Go
// finds the addresses with the same parse the browser makes (findHTMLAddresses: the HTML tree
// builder, so foreign content that the builder moves, such as <svg><style><img src>, is seen
// where the browser puts it), and the page agent writes an http(s) address only if it is one of
// those: a difference between the two parsers can only leave an address out, never let one
// through unguarded.
func (pol domPolicy) checkSetHTML(call *domCall) error {
	s, err := stringArg(call.args, 1, "html", maxHTMLLen)
	if err != nil {
		return err
	}
	values, err := findHTMLAddresses(s)
	if err != nil {
		return err
	}
	for _, v := range values {
		resolved, host, _, err := pol.checkAddress(v)
		if err != nil {
			continue // refused here; the page agent leaves it out with its reason
		}
		if host != "" && !slices.Contains(call.hosts, host) {
			call.hosts = append(call.hosts, host)
		}
		if !strings.HasPrefix(resolved, "data:") {
			if err := call.addAddress(httpx.WithoutFragment(resolved)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkStyleNames checks dom.style's property list: one name or an array of names.
func checkStyleNames(raw json.RawMessage) error {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if why := refusedStyleProperty(one); why != "" {
			return errors.New(why)
		}
		return nil
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return errors.New("argument 2 must be a CSS property name or an array of them")
	}
	if len(names) == 0 || len(names) > maxStyleProps {
		return fmt.Errorf("argument 2 must name 1 to %d properties", maxStyleProps)
	}
	for _, n := range names {
		if why := refusedStyleProperty(n); why != "" {
			return errors.New(why)
		}
	}
	return nil
}

// checkInsert checks dom.insert(target, node, position?).
func checkInsert(args []json.RawMessage) error {
	if err := handleArg(args, 1); err != nil {
		return err
	}
	if len(args) == 3 && string(args[2]) != "null" {
		var pos string
		if json.Unmarshal(args[2], &pos) != nil || !insertPositions[pos] {
			return errors.New(`argument 3 (position) must be "before", "after", "prepend" or "append"`)
		}
	}
	return nil
}

func checkClassName(args []json.RawMessage) error {
	c, err := stringArg(args, 1, "class name", maxAttrNameLen)
	if err != nil {
		return err
	}
	if c == "" || strings.ContainsAny(c, " \t\n\r\f") {
		return fmt.Errorf("%q is not one class name", c)
	}
	return nil
}

// refusedStyle says why an inline style value may not be set, or "" when it may. CSS escapes
// and comments are refused outright, so nothing can hide a load behind them.
func refusedStyle(value string) string {
	v := strings.ToLower(value)
	switch {
	case strings.Contains(v, `\`):
		return "CSS escapes (\\) are not allowed in inline styles"
	case strings.Contains(v, "/*"):
		return "CSS comments are not allowed in inline styles"
	}
	for _, bad := range []string{"url(", "@import", "expression(", "image-set(", "image(", "element(", "cross-fade(", "src(", "paint(", "javascript:"} {
		if strings.Contains(v, bad) {
			return "inline styles may not contain " + bad
		}
	}
	for _, r := range v {
		if r < ' ' && r != '\t' {
			return "control characters are not allowed in inline styles"
		}
	}
	return ""
}

// refusedStyleProperty says why an inline style property may not be set, or "".
func refusedStyleProperty(name string) string {
	if name == "" {
		return "the property name is empty"
	}
	for _, r := range name {
		if !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Sprintf("%q is not a CSS property name", name)
		}
	}
	switch l := strings.ToLower(name); l {
	case "behavior", "-moz-binding", "binding":
		return name + " runs code"
	}
	return ""
}

// kebabCase turns fieldSizing into field-sizing, as the page agent names properties.
func kebabCase(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func checkSetStyle(raw json.RawMessage) error {
	var styles map[string]json.RawMessage
	if err := json.Unmarshal(raw, &styles); err != nil || styles == nil {
		return errors.New("argument 2 must be an object of CSS property names and values")
	}
	if len(styles) > maxStyleProps {
		return fmt.Errorf("more than %d style properties", maxStyleProps)
	}
	for name, rv := range styles {
		if why := refusedStyleProperty(name); why != "" {
			return fmt.Errorf("style refused: %s", why)
		}
		switch strings.TrimPrefix(strings.TrimPrefix(kebabCase(name), "-"), "webkit-") {
		case "field-sizing":
			return fmt.Errorf("style %s refused: it makes a field's size follow its text, so a password's length would show in the layout", name)
		case "text-security", "all":
			return fmt.Errorf("style %s refused: it could unmask a field the page shows as dots", name)
		}
		var v string
		if err := json.Unmarshal(rv, &v); err != nil {
			return fmt.Errorf("style %s: the value must be a string", name)
		}
		if len(v) > maxStyleValue {
			return fmt.Errorf("style %s: the value is longer than %d bytes", name, maxStyleValue)
		}
		if why := refusedStyle(v); why != "" {
			return fmt.Errorf("style %s refused: %s", name, why)
		}
	}
	return nil
}

func checkOn(args []json.RawMessage) (int64, error) {
	typ, err := stringArg(args, 1, "event type", 32)
	if err != nil {
		return 0, err
	}
	if !domEvents[typ] {
		return 0, fmt.Errorf("event %q is not supported (supported: click, dblclick, mouseenter, mouseleave, input, change, focus, blur, keydown, keyup)", typ)
	}
	var l struct {
		Listener int64 `json:"$listener"`
	}
	if err := json.Unmarshal(args[2], &l); err != nil || l.Listener <= 0 {
		return 0, errors.New("argument 3 must be a listener function")
	}
	return l.Listener, nil
}
