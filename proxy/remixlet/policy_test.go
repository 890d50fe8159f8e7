package remixlet

import (
	"encoding/json"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/sandbox"
)

func testPolicy(t *testing.T, pageURL string, permissions string) domPolicy {
	t.Helper()
	m, problems := sandbox.ParseManifest([]byte(`{"name": "p", "description": "test", "api": 1,
		"matches": ["https://shop.test/*", "https://img.shop.test/*", "https://*.cdn-own.test/*"], "permissions": [` + permissions + `]}`))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	u, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	return domPolicy{page: u, manifest: m}
}

func TestDOMOpsMatchTheSandboxAPI(t *testing.T) {
	var ops []string
	for op := range domOps {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	want := slices.Clone(sandbox.DOMMethods)
	sort.Strings(want)
	if !slices.Equal(ops, want) {
		t.Fatalf("domOps %v\nsandbox.DOMMethods %v", ops, want)
	}
}

func TestCheckAddress(t *testing.T) {
	pol := testPolicy(t, "https://shop.test/list/page?x=1", `{"name": "fetch:api.partner.test", "reason": "prices"}`)
	tests := []struct {
		in       string
		resolved string // "" means refused
		host     string
		relative bool
		why      string // part of the refusal
	}{
		{in: "https://shop.test/a.png", resolved: "https://shop.test/a.png"},
		{in: "/img/a.png", resolved: "https://shop.test/img/a.png", relative: true},
		{in: "b.png", resolved: "https://shop.test/list/b.png", relative: true},
		{in: "  ../c.png\n", resolved: "https://shop.test/c.png", relative: true},
		{in: "?y=2", resolved: "https://shop.test/list/page?y=2", relative: true},
		{in: "#top", resolved: "https://shop.test/list/page?x=1#top", relative: true},
		{in: "https://img.shop.test/x.png", resolved: "https://img.shop.test/x.png", host: "img.shop.test"},
		// The remixlet's sites outside the page's site are like any other host (OPEN-ITEMS 99):
		// relayed without an allowance.
		{in: "https://img.cdn-own.test/x.png", resolved: "https://img.cdn-own.test/x.png"},
		{in: "https://API.partner.test/p", resolved: "https://api.partner.test/p", host: "api.partner.test"},
		// Other hosts are relayed without an allowance: the page agent allows them only if the
		// page already loads them exactly.
		{in: "https://witness.test/x", resolved: "https://witness.test/x"},
		{in: "//witness.test/x", resolved: "https://witness.test/x", relative: true},
		{in: `/\witness.test/x`, resolved: "https://witness.test/x", relative: true},
		{in: `\\witness.test\x`, resolved: "https://witness.test/x", relative: true},
		{in: "https:witness.test/x", resolved: ""},
		{in: "https://shop.test@witness.test/", why: "user name"},
		{in: "https://shop.test:443@witness.test/", why: "user name"},
		{in: "data:image/png;base64,iVBORw0KGgo=", resolved: "data:image/png;base64,iVBORw0KGgo="},
		{in: "DATA:image/webp,abc", resolved: "data:image/webp,abc"},
		{in: "data:image/svg+xml,<svg/onload=alert(1)>", why: "not svg"},
		{in: "data:text/html,<script>alert(1)</script>", why: "not svg"},
		{in: "javascript:alert(1)", why: "javascript: addresses"},
		{in: "JaVaScRiPt:alert(1)", why: "javascript: addresses"},
		{in: "java\tscript:alert(1)", why: "javascript: addresses"},
		{in: "\x01javascript:alert(1)", why: "javascript: addresses"},
		{in: "blob:https://shop.test/1234", why: "blob: addresses"},
		{in: "ftp://shop.test/x", why: "ftp: addresses"},
		{in: "https://shop .test/", why: "spaces"},
		{in: "", why: "empty"},
	}
	for _, tt := range tests {
		resolved, host, rel, err := pol.checkAddress(tt.in)
		if tt.why != "" || tt.resolved == "" {
			if err == nil {
				if tt.resolved == "" && tt.why == "" && host == "" && !strings.Contains(resolved, "shop.test") {
					continue // relayed without an allowance: fine for an address on another host
				}
				t.Errorf("%q: allowed as %q (host %q), want refused", tt.in, resolved, host)
			} else if !strings.Contains(err.Error(), tt.why) {
				t.Errorf("%q: refused with %q, want %q", tt.in, err, tt.why)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: refused: %v", tt.in, err)
			continue
		}
		if resolved != tt.resolved || host != tt.host || rel != tt.relative {
			t.Errorf("%q: got %q host %q relative %v, want %q host %q relative %v", tt.in, resolved, host, rel, tt.resolved, tt.host, tt.relative)
		}
	}
}

func TestCheckDOMCallNewSurface(t *testing.T) {
	pol := testPolicy(t, "https://shop.test/list", `{"name": "fetch:api.partner.test", "reason": "prices"}`)
	tests := []struct {
		method, args string
		refused      string // "" means allowed
		wantArgs     string // the relayed arguments, when checked
		hosts        []string
		relative     bool
	}{
		{method: "create", args: `[{"tag": "DIV", "attrs": {"Class": "x"}, "text": "hi", "children": [{"tag": "a", "attrs": {"href": "/cart"}}]}]`,
			wantArgs: `[{"tag":"div","attrs":{"class":"x"},"text":"hi","children":[{"tag":"a","attrs":{"href":"https://shop.test/cart"}}]}]`, relative: true},
		{method: "create", args: `[{"tag": "img", "attrs": {"src": "https://img.shop.test/a.png"}}]`, hosts: []string{"img.shop.test"}},
		{method: "create", args: `[{"tag": "img", "attrs": {"src": "https://img.cdn-own.test/a.png"}}]`, refused: "not on the page's origin"},
		{method: "create", args: `[{"tag": "svg", "children": [{"tag": "circle"}, {"tag": "g", "children": [{"tag": "path"}]}]}]`},
		{method: "create", args: `[{"tag": "script"}]`, refused: "<script> refused"},
		{method: "create", args: `[{"tag": "form"}]`, refused: "<form> refused"},
		{method: "create", args: `[{"tag": "div", "children": [{"tag": "iframe"}]}]`, refused: "<iframe> refused"},
		{method: "create", args: `[{"tag": "svg", "children": [{"tag": "use"}]}]`, refused: "<use> refused"},
		{method: "create", args: `[{"tag": "svg", "children": [{"tag": "div"}]}]`, refused: "refused inside svg"},
		{method: "create", args: `[{"tag": "circle"}]`, refused: "outside svg"},
		{method: "create", args: `[{"tag": "div", "attrs": {"onclick": "x()"}}]`, refused: "on*"},
		{method: "create", args: `[{"tag": "div", "attrs": {"style": "color: red"}}]`, refused: "style"},
		{method: "create", args: `[{"tag": "div", "attrs": {"href": "/x"}}]`, refused: "only links"},
		{method: "create", args: `[{"tag": "a", "attrs": {"src": "/x"}}]`, refused: "only images"},
		{method: "create", args: `[{"tag": "a", "attrs": {"href": "javascript:alert(1)"}}]`, refused: "javascript:"},
		{method: "create", args: `[{"tag": "img", "attrs": {"srcset": "/x 1x"}}]`, refused: "srcset"},
		{method: "create", args: `[{"tag": "svg", "attrs": {"xlink:href": "/x"}}]`, refused: "xlink:href"},
		{method: "create", args: `[{"tag": "input", "attrs": {"type": "image"}}]`, refused: "image"},
		{method: "create", args: `[{"tag": "input", "attrs": {"id": "cookie"}}]`, refused: "shadow document.cookie"},
		{method: "create", args: `[{"tag": "button", "attrs": {"formaction": "/x"}}]`, refused: "formaction"},
		{method: "create", args: `[{"tag": "div", "onload": "x"}]`, refused: "element spec"},
		{method: "create", args: `[{"tag": "div", "children": [null]}]`, refused: "null"},
		{method: "setAttr", args: `[{"$h":1}, "HREF", "../a?b#c"]`, wantArgs: `[{"$h":1},"href","https://shop.test/a?b#c"]`, relative: true},
		{method: "setAttr", args: `[{"$h":1}, "src", "https://api.partner.test/p.png"]`, hosts: []string{"api.partner.test"}},
		{method: "setAttr", args: `[{"$h":1}, "src", "blob:https://shop.test/x"]`, refused: "blob:"},
		{method: "setAttr", args: `[{"$h":1}, "imagesrcset", "/x 1x"]`, refused: "imagesrcset"},
		{method: "setAttr", args: `[{"$h":1}, "name", "location"]`, refused: "shadow"},
		{method: "setAttr", args: `[{"$h":1}, "fill", "URL(https://evil.test/#x)"]`, refused: "url("},
		{method: "setAttr", args: `[{"$h":1}, "title", " java\tscript:alert(1)"]`, refused: "script address"},
		{method: "setAttr", args: `[{"$h":1}, "title", "see https://shop.test/"]`},
		{method: "insert", args: `[{"$h":1}, {"$h":2}, "after"]`},
		{method: "insert", args: `[{"$h":1}, {"$h":2}]`},
		{method: "insert", args: `[{"$h":1}, {"$h":2}, "inside"]`, refused: "position"},
		{method: "insert", args: `[{"$h":1}, "<b>x</b>", "after"]`, refused: "handle"},
		// A clone's images keep only the remixlet's sites within the page's site and its fetch:
		// hosts (cloneHosts): not *.cdn-own.test, another of its sites.
		{method: "clone", args: `[{"$h":1}, true]`, hosts: []string{"img.shop.test", "shop.test", "api.partner.test"}},
		{method: "clone", args: `[{"$h":1}, "deep"]`, refused: "deep"},
		{method: "rect", args: `[{"$h":1}]`},
		{method: "style", args: `[{"$h":1}, ["color", "fontWeight", "--x"]]`},
		{method: "style", args: `[{"$h":1}, "color"]`},
		{method: "style", args: `[{"$h":1}, ["behavior"]]`, refused: "runs code"},
		{method: "style", args: `[{"$h":1}, [1]]`, refused: "property name"},
		{method: "click", args: `[{"$h":1}]`},
		{method: "focus", args: `[{"$h":1}]`},
		{method: "scrollIntoView", args: `[{"$h":1}]`},
		{method: "click", args: `[]`, refused: "arguments"},
		{method: "setHTML", args: `[{"$h":1}, "<b>x</b><img src=https://img.shop.test/a.png><a href=https://witness.test/>w</a>"]`, hosts: []string{"img.shop.test"}},
		{method: "setHTML", args: `[{"$h":1}, "<img src=https://img.cdn-own.test/a.png>"]`},
		{method: "setHTML", args: `[{"$h":1}, 3]`, refused: "string"},
		{method: "addStyle", args: `[".x { color: red }"]`, wantArgs: `[".x { color: red }",".x:where([data-remixlet-own]){ color: red }"]`},
		{method: "addStyle", args: `[".x { background: url(https://img.shop.test/a.png) }"]`},
		{method: "addStyle", args: `[".x { background: url(https://img.cdn-own.test/a.png) }"]`, refused: "refused"},
		{method: "addStyle", args: `["@import 'https://witness.test/a.css';"]`, refused: "refused"},
		{method: "addStyle", args: `[".x { background: u\\72l(https://witness.test/) }"]`, refused: "refused"},
		{method: "addStyle", args: `["@font-face { src: url(https://shop.test/f.woff) }"]`, refused: "refused"},
		{method: "addStyle", args: `[".x { --a: url(https://witness.test/) }"]`, refused: "refused"},
	}
	for _, tt := range tests {
		call, err := checkDOMCall(pol, tt.method, json.RawMessage(tt.args))
		name := tt.method + " " + tt.args
		if tt.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tt.refused) {
				t.Errorf("%s: got %v, want a refusal containing %q", name, err, tt.refused)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: refused: %v", name, err)
			continue
		}
		if tt.wantArgs != "" {
			got, _ := json.Marshal(call.args)
			if string(got) != tt.wantArgs {
				t.Errorf("%s: relayed %s, want %s", name, got, tt.wantArgs)
			}
		}
		if !slices.Equal(call.hosts, tt.hosts) || call.relative != tt.relative {
			t.Errorf("%s: hosts %v relative %v, want %v %v", name, call.hosts, call.relative, tt.hosts, tt.relative)
		}
	}
}

// TestCheckDOMCallPagePolicy covers issue 12's static half: attributes that matter only on
// elements that load or navigate, addresses held in any attribute's value, field-sizing, and
// stylesheet pieces that do not end at the top level or test field contents.
func TestCheckDOMCallPagePolicy(t *testing.T) {
	pol := testPolicy(t, "https://shop.test/list", `{"name": "fetch:api.partner.test", "reason": "prices"}`)
	tests := []struct {
		name, method, args string
		refused            string // "" means allowed
		hosts              []string
		addresses          []string
		relative           bool
	}{
		{name: "meta refresh content", method: "setAttr", args: `[{"$h":1}, "content", "0;url=https://witness.test/?d"]`, refused: "attribute content refused: content matters only on elements that load"},
		{name: "content uppercase", method: "setAttr", args: `[{"$h":1}, "CONTENT", "5"]`, refused: "attribute content refused"},
		{name: "rel", method: "setAttr", args: `[{"$h":1}, "rel", "stylesheet"]`, refused: "attribute rel refused"},
		{name: "referrerpolicy", method: "setAttr", args: `[{"$h":1}, "referrerPolicy", "unsafe-url"]`, refused: "attribute referrerpolicy refused"},
		{name: "crossorigin", method: "setAttr", args: `[{"$h":1}, "crossorigin", "use-credentials"]`, refused: "attribute crossorigin refused"},
		{name: "iframe sandbox", method: "setAttr", args: `[{"$h":1}, "sandbox", "allow-scripts"]`, refused: "attribute sandbox refused"},
		{name: "svg animation target", method: "setAttr", args: `[{"$h":1}, "attributeName", "href"]`, refused: "attribute attributename refused"},
		{name: "create with rel", method: "create", args: `[{"tag": "a", "attrs": {"href": "/x", "rel": "opener"}}]`, refused: "attribute rel refused"},
		// An address in another attribute is loaded by page scripts at once: an image's rule
		// (red-team pass 6d: the page agent refused these; Go now does too).
		{name: "data-src to another host", method: "setAttr", args: `[{"$h":1}, "data-src", "https://witness.test/x.png"]`, refused: "is not on the page's origin"},
		{name: "data-src own site", method: "setAttr", args: `[{"$h":1}, "data-src", "https://img.shop.test/a.png"]`, hosts: []string{"img.shop.test"}, addresses: []string{"https://img.shop.test/a.png"}},
		{name: "data-src another of its sites", method: "setAttr", args: `[{"$h":1}, "data-src", "https://img.cdn-own.test/a.png"]`, refused: "is not on the page's origin"},
		{name: "data-srcset scheme-relative", method: "setAttr", args: `[{"$h":1}, "data-srcset", "a.png 1x,//witness.test/b.png 2x"]`, refused: "is not on the page's origin"},
		{name: "backslashes", method: "setAttr", args: `[{"$h":1}, "data-src", "\\\\witness.test\\x"]`, refused: "is not on the page's origin"},
		{name: "tab in scheme", method: "setAttr", args: `[{"$h":1}, "data-src", "ht\ttps://witness.test/t"]`, refused: "is not on the page's origin"},
		{name: "json", method: "setAttr", args: `[{"$h":1}, "data-config", "{\"u\":\"https://witness.test/j\"}"]`, refused: "is not on the page's origin"},
		{name: "websocket", method: "setAttr", args: `[{"$h":1}, "data-socket", "wss://witness.test/s"]`, refused: "holds the address wss://witness.test/s: wss: addresses are not allowed"},
		{name: "user name", method: "setAttr", args: `[{"$h":1}, "data-src", "https://shop.test@witness.test/"]`, refused: "user name"},
		{name: "create with data-src", method: "create", args: `[{"tag": "img", "attrs": {"data-src": "blob:x https://shop.test@witness.test/"}}]`, refused: "user name"},
		{name: "prose with slashes", method: "setAttr", args: `[{"$h":1}, "title", "and // or, a/b"]`},
		{name: "same-origin address", method: "setAttr", args: `[{"$h":1}, "title", "see https://shop.test/help"]`, addresses: []string{"https://shop.test/help"}},
		{name: "field-sizing", method: "setStyle", args: `[{"$h":1}, {"fieldSizing": "content"}]`, refused: "style fieldSizing refused: it makes a field's size follow its text"},
		{name: "field-sizing kebab", method: "setStyle", args: `[{"$h":1}, {"field-sizing": "content"}]`, refused: "follow its text"},
		{name: "text-security", method: "setStyle", args: `[{"$h":1}, {"webkitTextSecurity": "none"}]`, refused: "style webkitTextSecurity refused: it could unmask a field"},
		{name: "text-security kebab", method: "setStyle", args: `[{"$h":1}, {"-webkit-text-security": "none"}]`, refused: "unmask"},
		{name: "text-security Webkit", method: "setStyle", args: `[{"$h":1}, {"WebkitTextSecurity": "none"}]`, refused: "unmask"},
		{name: "all", method: "setStyle", args: `[{"$h":1}, {"all": "unset"}]`, refused: "style all refused: it could unmask a field"},
		{name: "addStyle text-security", method: "addStyle", args: `["#pin{-webkit-text-security:none}"]`, refused: "text-security is refused"},
		{name: "addStyle ending in a comment", method: "addStyle", args: `["a{color:red} /*"]`, refused: "ends inside a comment"},
		{name: "addStyle ending in a string", method: "addStyle", args: `["a{content:\"*/ b{background:url(https://witness.test/)}"]`, refused: "ends inside a string"},
		{name: "addStyle value selector", method: "addStyle", args: `["#pw[value^=\"h\"]{width:11px}"]`, refused: "value attribute"},
		{name: "addStyle placeholder-shown", method: "addStyle", args: `["#pw:placeholder-shown{width:11px}"]`, refused: ":placeholder-shown"},
		{name: "addStyle infinite animation on everything", method: "addStyle", args: `["*{animation:spin 1s infinite}"]`, refused: "animations are refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := checkDOMCall(pol, tt.method, json.RawMessage(tt.args))
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("got %v, want a refusal containing %q", err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !slices.Equal(call.hosts, tt.hosts) || !slices.Equal(call.addresses, tt.addresses) || call.relative != tt.relative {
				t.Errorf("got hosts %v addresses %v relative %v, want %v %v %v", call.hosts, call.addresses, call.relative, tt.hosts, tt.addresses, tt.relative)
			}
		})
	}
}

func TestAddressesIn(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"https://a.test/x", []string{"https://a.test/x"}},
		{"HTTP://A.test/x y", []string{"HTTP://A.test/x"}},
		{"a.png 1x, https://a.test/b.png 2x", []string{"https://a.test/b.png"}},
		{"x,//a.test/y", []string{"//a.test/y"}},
		{`///a.test/y`, []string{"///a.test/y"}},
		{`/\a.test/y`, []string{`/\a.test/y`}},
		{"url('https://a.test/q')", []string{"https://a.test/q"}},
		{"ht\ntps://a.test/n", []string{"https://a.test/n"}},
		{"wss://a.test/s", []string{"wss://a.test/s"}},
		{"xhttps://a.test/", nil}, // another scheme: not a load
		{"and // or", nil},
		{"a/b", nil},
		{"mailto:x@a.test", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := addressesIn(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("addressesIn(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// An image loads only from the page's origin, the remixlet's sites within the page's site and its
// fetch: hosts: an
// address the page itself loads (two images a comment planted, evil/0 and evil/1) is refused in
// Go for setAttr and create, where it was relayed for the page agent to allow (red-team pass
// 5a: the order and number of such writes were a channel to their host). Links keep the rule.
func TestImagesLoadOnlyFromAllowedHosts(t *testing.T) {
	pol := testPolicy(t, "https://shop.test/list", `{"name": "fetch:api.partner.test", "reason": "prices"}`)
	tests := []struct {
		method, args, refused string
	}{
		{"setAttr", `[{"$h":1}, "src", "https://planted.test/0"]`, "needs a fetch: permission"},
		{"setAttr", `[{"$h":1}, "SRC", "//planted.test/1"]`, "needs a fetch: permission"},
		{"create", `[{"tag":"img","attrs":{"src":"https://planted.test/0"}}]`, "needs a fetch: permission"},
		{"create", `[{"tag":"div","children":[{"tag":"img","attrs":{"src":"http://planted.test/0"}}]}]`, "needs a fetch: permission"},
		{"setAttr", `[{"$h":1}, "src", "https://shop.test/pic.png"]`, ""},
		{"setAttr", `[{"$h":1}, "src", "/pic.png"]`, ""},
		{"setAttr", `[{"$h":1}, "src", "https://img.shop.test/a.png"]`, ""},
		// Another of the remixlet's sites is like any other host on this page (OPEN-ITEMS 99).
		{"setAttr", `[{"$h":1}, "src", "https://img.cdn-own.test/a.png"]`, "needs a fetch: permission"},
		{"setAttr", `[{"$h":1}, "src", "https://api.partner.test/a.png"]`, ""},
		{"setAttr", `[{"$h":1}, "src", "data:image/png;base64,iVBORw0KGgo="]`, ""},
		{"create", `[{"tag":"img","attrs":{"src":"https://img.shop.test/a.png"}}]`, ""},
		{"create", `[{"tag":"img","attrs":{"src":"https://img.cdn-own.test/a.png"}}]`, "needs a fetch: permission"},
		// sizes flips a page's srcset between its candidates, each flip a request.
		{"setAttr", `[{"$h":1}, "sizes", "900px"]`, "changes how a load is made"},
		{"create", `[{"tag":"img","attrs":{"sizes":"auto"}}]`, "changes how a load is made"},
		// A link the page has is still the page agent's to allow.
		{"setAttr", `[{"$h":1}, "href", "https://planted.test/0"]`, ""},
		{"create", `[{"tag":"a","attrs":{"href":"https://planted.test/0"}}]`, ""},
	}
	for _, tt := range tests {
		_, err := checkDOMCall(pol, tt.method, json.RawMessage(tt.args))
		switch {
		case tt.refused == "" && err != nil:
			t.Errorf("%s %s: refused: %v", tt.method, tt.args, err)
		case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
			t.Errorf("%s %s: got %v, want a refusal containing %q", tt.method, tt.args, err, tt.refused)
		}
	}
}

// imageRuleCase is a row of panel/testdata/pageagent/image_rule.json: the image rule (Go's
// imageAllowed, through checkDOMCall and cloneHosts) and the page agent's checkAddress with
// link false (rx_addresses_test.js) must decide every row alike. hosts is the interface between
// the two: what Go sends the page agent as Op.hosts (for a refused setAttr, what the page agent
// is tested with: none), addrs its Op.addrs.
type imageRuleCase struct {
	Name    string   `json:"name"`
	Page    string   `json:"page"`
	Matches []string `json:"matches"`
	Fetch   []string `json:"fetch"`
	Op      string   `json:"op"` // setAttr (src), or clone (the page's own address, copied)
	Value   string   `json:"value"`
	Allowed bool     `json:"allowed"`
	Hosts   []string `json:"hosts"`
	Addrs   []string `json:"addrs"`
}

func TestImageRuleMatchesThePageAgent(t *testing.T) {
	raw, err := os.ReadFile("../../panel/testdata/pageagent/image_rule.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []imageRuleCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		perms := make([]string, 0, len(c.Fetch))
		for _, h := range c.Fetch {
			perms = append(perms, `{"name": "fetch:`+h+`", "reason": "r"}`)
		}
		matches, _ := json.Marshal(c.Matches)
		m, problems := sandbox.ParseManifest([]byte(`{"name": "i", "description": "test", "api": 1, "matches": ` + string(matches) + `, "permissions": [` + strings.Join(perms, ",") + `]}`))
		if len(problems) > 0 {
			t.Fatalf("%s: %v", c.Name, problems)
		}
		page, _ := url.Parse(c.Page)
		pol := domPolicy{page: page, manifest: m}
		switch c.Op {
		case "setAttr":
			args, _ := json.Marshal([]any{map[string]int{"$h": 1}, "src", c.Value})
			call, err := checkDOMCall(pol, "setAttr", args)
			if allowed := err == nil; allowed != c.Allowed {
				t.Errorf("%s: Go allowed %v (%v), want %v", c.Name, allowed, err, c.Allowed)
				continue
			}
			if err == nil && (!slices.Equal(call.hosts, c.Hosts) && len(call.hosts)+len(c.Hosts) > 0 || !slices.Equal(call.opAddrs(), c.Addrs) && len(call.opAddrs())+len(c.Addrs) > 0) {
				t.Errorf("%s: Go sends hosts %q addrs %q, the table says %q %q", c.Name, call.hosts, call.opAddrs(), c.Hosts, c.Addrs)
			}
		case "clone":
			if got := pol.cloneHosts(); !slices.Equal(got, c.Hosts) {
				t.Errorf("%s: cloneHosts = %q, the table says %q", c.Name, got, c.Hosts)
			}
			resolved, _, _, err := pol.checkAddress(c.Value)
			if allowed := err == nil && pol.imageAllowed(resolved); allowed != c.Allowed {
				t.Errorf("%s: Go's image rule allows %v, want %v", c.Name, allowed, c.Allowed)
			}
		default:
			t.Fatalf("%s: unknown op %q", c.Name, c.Op)
		}
	}
}
