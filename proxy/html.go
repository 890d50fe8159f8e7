package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/rewrite"
)

// bootstrap is the page-agent script: served at path on remix.proxy for pages that load it
// (cached by the browser), or inlined with its CSP hash where a page's policy allows only that.
type bootstrap struct {
	script []byte
	hash   string // CSP hash-source of script
	path   string // "/agent/<version>.js", versioned by content so it can be cached for good
}

func newBootstrap() bootstrap {
	js := panel.Bootstrap()
	sum := sha256.Sum256(js)
	return bootstrap{script: js, hash: rewrite.ScriptHash(js), path: "/agent/" + hex.EncodeToString(sum[:8]) + ".js"}
}

// bootstrapFor is the tag to insert into a page from pageURL whose enforced policies are
// policies, and what those policies must allow for it. The page agent is loaded as an external
// script from remix.proxy — a few bytes per page, the script itself cached by the browser —
// unless a policy uses 'strict-dynamic' without a nonce the tag can reuse; then it is inlined
// and allowed by its hash. The tag carries the stylesheets of the remixlets that match the page
// (firstframe.go), which the page agent adopts before the first paint, and tells it to connect
// at once where remixlets run on the page or a chat may follow its tab to it (followed);
// elsewhere it connects after the page's load.
func (s *Server) bootstrapFor(ctx context.Context, pageURL *url.URL, policies []string, followed bool) ([]byte, rewrite.CSPNeeds) {
	nonce := rewrite.PageNonce(policies)
	needs := rewrite.CSPNeeds{
		Nonce:   nonce,
		Connect: magicSources(pageURL.Scheme, true),
		Frame:   magicSources(pageURL.Scheme, false),
	}
	token := s.pages.Mint(pageURL, time.Now())
	s.chats.DocumentMinted(ctx, token) // the agent's lease on this document binds to its session (chat/navguard.go)
	sheets, run := s.firstFrame(ctx, pageURL)
	now := run || followed
	if rewrite.ExternalAllowed(policies, nonce) {
		origin := magicSources(pageURL.Scheme, false)[0]
		needs.ScriptSrc = []string{origin}
		return externalTag(token, nonce, sheets, now, origin+s.boot.path), needs
	}
	needs.ScriptHash = s.boot.hash
	return inlineTag(token, nonce, sheets, now, s.boot.script), needs
}

// shouldInject reports whether resp, the answer to a navigation (injectHTML decides that, with
// httpx.IsNavigation), is an HTML document the bootstrap goes into: a 2xx text/html answer, not
// HEAD, 204, 206, an attachment, or an encoding that is not ASCII-compatible.
func shouldInject(req *http.Request, resp *http.Response) bool {
	if req.Method == http.MethodHead || resp.StatusCode < 200 || resp.StatusCode > 299 ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusResetContent ||
		resp.StatusCode == http.StatusPartialContent || resp.Body == nil || resp.Body == http.NoBody {
		return false
	}
	return injectableHeaders(resp.Header)
}

// injectableHeaders reports whether a document with the response headers h is one the tag may
// go into: one Content-Type, text/html, not read as UTF-16 or another encoding that is not
// ASCII-compatible, not an attachment. The proxy's own answers and the service-worker relay's
// both ask it.
func injectableHeaders(h http.Header) bool {
	if !oneContentType(h) {
		return false
	}
	mediaType, charset, ok := contentType(h.Get("Content-Type"))
	if !ok || mediaType != "text/html" {
		return false
	}
	if cs := strings.ToLower(charset); strings.HasPrefix(cs, "utf-16") || strings.HasPrefix(cs, "utf-32") ||
		cs == "ucs-2" || cs == "utf-7" || strings.HasPrefix(cs, "unicode") || readsAsUTF16(cs) {
		return false
	}
	if cd := h.Get("Content-Disposition"); cd != "" {
		if d, _, err := mime.ParseMediaType(cd); err == nil && d == "attachment" {
			return false
		}
	}
	return true
}

// oneContentType reports whether h holds one Content-Type (or the same one repeated). The
// browser reads several as one list, the last one's type and charset counting (Fetch, "extract
// a MIME type"), where Header.Get reads the first: a page sent "text/html; charset=utf-8" and
// then "text/html; charset=utf-16le" was injected as UTF-8 and read as UTF-16.
func oneContentType(h http.Header) bool {
	vs := h["Content-Type"]
	for _, v := range vs[min(1, len(vs)):] {
		if v != vs[0] {
			return false
		}
	}
	return true
}

// readsAsUTF16 reports whether the browser reads a charset label as UTF-16 (WHATWG Encoding:
// besides utf-16*, csunicode, iso-10646-ucs-2, unicodefeff …, and any with spaces around it),
// where the tag's ASCII bytes, two to a character, become text the page reads them back from.
func readsAsUTF16(label string) bool {
	if label == "" || label == "utf-8" {
		return false
	}
	enc, err := htmlindex.Get(label)
	if err != nil {
		return false
	}
	name, _ := htmlindex.Name(enc)
	return name == "utf-16le" || name == "utf-16be"
}

// navigationVary is what an HTML answer to req varies by: the header httpx.IsNavigation reads for
// it. The browser's HTTP cache then serves a stored injected document (and its token) only to
// another navigation, never to the page's own fetch(location.href, {cache: 'force-cache'}) —
// which, with a cacheable page, otherwise reads the token of the document it runs in; and it
// serves a plain copy a page fetched (pjax, Turbo, a prefetcher) never to a navigation.
//
// One header, not both. Over https it is Sec-Fetch-Dest, which the network stack adds and the
// Cache API does not see (a Request object never holds it), so a service worker's cache still
// matches what it stored however it asks (caches.match(url), or with the navigation's request);
// Upgrade-Insecure-Requests is in a navigation's Request object and would make those differ.
// Over http, where there is no fetch metadata and no Cache API, it is Upgrade-Insecure-Requests.
func navigationVary(req *http.Request) []string {
	if _, ok := req.Header["Sec-Fetch-Dest"]; ok {
		return varySecFetchDest
	}
	return varyUpgradeInsecure
}

var (
	varySecFetchDest    = []string{"Sec-Fetch-Dest"}
	varyUpgradeInsecure = []string{"Upgrade-Insecure-Requests"}
)

// isHTML reports whether resp is a 2xx text/html answer.
func isHTML(resp *http.Response) bool {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return false
	}
	mediaType, _, ok := contentType(resp.Header.Get("Content-Type"))
	return ok && mediaType == "text/html"
}

// contentType is a Content-Type value's media type and charset parameter as mime.ParseMediaType
// reads them; ok is false where it refuses the value. The few spellings nearly every HTML page
// is sent with are answered without it: every response the pipeline looks at passes here, and
// parsing is most of what deciding costs.
func contentType(v string) (mediaType, charset string, ok bool) {
	switch v {
	case "text/html":
		return "text/html", "", true
	case "text/html; charset=utf-8", "text/html;charset=utf-8":
		return "text/html", "utf-8", true
	case "text/html; charset=UTF-8", "text/html;charset=UTF-8":
		return "text/html", "UTF-8", true
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil {
		return "", "", false
	}
	return mt, params["charset"], true
}

// injectHTML streams an HTML document through the injector: decoded from its Content-Encoding,
// the bootstrap tag inserted, its Content-Security-Policy allowing just the bootstrap and
// remix.proxy (a response tap). Anything that is not an injectable document is left untouched.
func (s *Server) injectHTML(resp *http.Response) {
	req := resp.Request
	if s.cfg.BenchNoInject || httpx.IsMagicHost(req.URL.Hostname()) {
		return
	}
	if !httpx.IsNavigation(req) {
		if isHTML(resp) {
			// A copy the page fetched is stored apart from the navigations' (navigationVary):
			// the HTTP cache must not give a later navigation this copy, without the page agent.
			resp.Header["Vary"] = append(resp.Header["Vary"], navigationVary(req)...)
		}
		return
	}
	if !shouldInject(req, resp) {
		return
	}
	policies := resp.Header.Values("Content-Security-Policy")
	if rewrite.BlocksInjection(policies) {
		return // the page forbids any script of ours: it works unmodified
	}
	body, err := decodedHTML(resp.Body, resp.Header.Get("Content-Encoding"))
	if err != nil {
		s.log.Debug("not injecting", "url", httpx.RedactURL(req), "err", err)
		return
	}

	if s.remixlets != nil {
		s.remixlets.Prepare() // no sandbox host yet: start one now, before the page agent connects
	}
	followed := s.chats.NoteNavigation(req.URL.String(), req) // a chat follows its tab to this page (chat/follow.go)
	tag, needs := s.bootstrapFor(req.Context(), req.URL, policies, followed)
	known, escapesInert := headerEncoding(resp.Header)
	inj := rewrite.NewInjector(body, rewrite.Options{
		Tag:          tag,
		MetaCSP:      func(content string) string { return rewrite.AdjustCSP(content, needs) },
		CharsetKnown: known,
		EscapesInert: escapesInert,
	})
	resp.Body = &injectedBody{Reader: inj, inj: inj, closer: body, done: func() { s.counts.injected.Add(1) }}
	resp.ContentLength = -1
	deleteBodyHeaders(resp.Header)
	resp.Header["Vary"] = append(resp.Header["Vary"], navigationVary(req)...)
	// Decided before any header goes (the injector holds the bytes up to the insertion point
	// anyway): a document it lets through unchanged (an escape before the insertion point, the
	// cap, a body like JSON, a UTF-16 byte order mark, a <meta> policy allowing no script) keeps
	// its own policy. Widened, it would allow remix.proxy in a window where no page agent runs,
	// and markup injected into the page could start the agent's public script as the first,
	// with stylesheets of its own (prologue.js, takeToken).
	inj.Decide()
	if !inj.Injected() {
		return
	}
	if len(policies) > 0 {
		resp.Header.Del("Content-Security-Policy")
		for _, p := range policies {
			resp.Header.Add("Content-Security-Policy", rewrite.AdjustCSP(p, needs))
		}
	}
	// A policy the page only reports is widened as the enforced ones are: left alone, it had
	// the browser report the page agent's script, socket and panel to the site's own endpoint
	// (report-uri, report-to) and to its scripts (securitypolicyviolation) at every load — the
	// site learned, with no script of its own, that the person browses through the proxy.
	if reported := resp.Header.Values("Content-Security-Policy-Report-Only"); len(reported) > 0 {
		resp.Header.Del("Content-Security-Policy-Report-Only")
		for _, p := range reported {
			resp.Header.Add("Content-Security-Policy-Report-Only", rewrite.AdjustCSP(p, needs))
		}
	}
	resp.Header[httpx.MarkerHeader] = []string{"injected"} // Set, without canonicalizing a canonical name
	cacheForHistoryOnly(resp.Header)
	severOpener(resp.Header, req, followed) // a chat's next page gets a Window of its own (openerguard.go)
}

// unconditional removes a navigation's cache validators. A document the browser stores
// carries none once injected (cacheForHistoryOnly), but a plain copy a page fetched does, and
// when the navigation's headers do not match that copy's Vary (navigationVary) Chromium still
// asks with the copy's validators: a 304 would have it render the copy, without the page agent.
func unconditional(h http.Header) {
	delete(h, "If-None-Match")
	delete(h, "If-Modified-Since")
}

// cacheForHistoryOnly makes the browser keep an injected document for history navigations
// (back and forward, a restored tab) but never answer a new navigation with it: every new
// document gets a token of its own, and a token opens one session (proxy/page/claims.go) — a
// second tab opening a cacheable page would otherwise be given the first tab's document and
// token. no-cache keeps the document storable (the back/forward cache and history navigations
// use it) but revalidated; the upstream's validators go (they describe the upstream's bytes,
// not the injected ones), so a revalidation is a full request that the proxy injects anew. A
// no-store answer stays no-store.
func cacheForHistoryOnly(h http.Header) {
	delete(h, "Etag")
	delete(h, "Last-Modified")
	for _, v := range h["Cache-Control"] {
		if strings.Contains(strings.ToLower(v), "no-store") {
			return
		}
	}
	h["Cache-Control"] = []string{"private, no-cache"}
}

// bodyHeaders are the headers that describe the upstream's bytes, not the injected body, in
// their canonical spelling (TestBodyHeadersCanonical): the keys http.Header.Del would delete.
var bodyHeaders = [...]string{"Content-Length", "Content-Encoding", "Content-Md5", "Digest", "Content-Digest", "Repr-Digest", "Accept-Ranges"}

// deleteBodyHeaders removes bodyHeaders from h: Header.Del for each, without canonicalizing
// names that already are.
func deleteBodyHeaders(h http.Header) {
	for _, k := range bodyHeaders {
		delete(h, k)
	}
}

// decodedHTML is httpx.DecodeBody's decoded body, or body itself when it has no
// Content-Encoding: most pages come plain from a local upstream or the cache of a CDN, and
// there is nothing to decode.
func decodedHTML(body io.ReadCloser, contentEncoding string) (io.ReadCloser, error) {
	if contentEncoding == "" {
		return body, nil
	}
	return httpx.DecodeBody(body, contentEncoding)
}

// headerEncoding says whether the response's Content-Type fixes the document's encoding — a
// charset label the browser knows (WHATWG Encoding, as golang.org/x/text's htmlindex reads
// it; the browser ignores one it does not, and a <meta charset> then decides) — and whether
// that encoding reads the byte ESC as an ordinary character: all but ISO-2022-JP, whose escape
// sequences switch the decoder out of ASCII (rewrite.Options.EscapesInert).
func headerEncoding(h http.Header) (known, escapesInert bool) {
	_, label, _ := contentType(h.Get("Content-Type"))
	if label == "" {
		return false, false
	}
	if strings.EqualFold(label, "utf-8") {
		return true, true // nearly every page: no lookup
	}
	enc, err := htmlindex.Get(label)
	if err != nil {
		return false, false
	}
	name, err := htmlindex.Name(enc)
	return true, err == nil && name != "iso-2022-jp"
}

// magicSources are the CSP sources the page agent needs on a page of the given scheme: the
// panel's origin, and with ws also the channel's.
func magicSources(scheme string, ws bool) []string {
	if scheme == "http" {
		if ws {
			return []string{"http://" + httpx.MagicHost, "ws://" + httpx.MagicHost}
		}
		return []string{"http://" + httpx.MagicHost}
	}
	if ws {
		return []string{"https://" + httpx.MagicHost, "wss://" + httpx.MagicHost}
	}
	return []string{"https://" + httpx.MagicHost}
}

// externalTag is the element inserted into a page that loads the page agent from src; sheets
// is the first-frame sheets attribute's value (firstSheetsAttr), if any, and now adds the
// data-remixproxy-now attribute (the page agent connects at once, not after the page's load).
func externalTag(token, nonce, sheets string, now bool, src string) []byte {
	b := make([]byte, 0, 160+len(token)+len(nonce)+len(sheets)+len(src))
	b = append(b, `<script data-remixproxy="`...)
	b = append(b, escapeAttr(token)...)
	if sheets != "" {
		b = append(b, `" data-remixproxy-sheets="`...)
		b = append(b, sheets...)
	}
	if now {
		b = append(b, `" data-remixproxy-now="`...)
	}
	b = append(b, `" src="`...)
	b = append(b, escapeAttr(src)...)
	if nonce != "" {
		b = append(b, `" nonce="`...)
		b = append(b, escapeAttr(nonce)...)
	}
	return append(b, `"></script>`...)
}

// escapeAttr is html.EscapeString of s, without its work for the values that need none (a
// page token is base64url, the agent's address fixed, most nonces base64).
func escapeAttr(s string) string {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '>', '&', '\'', '"':
			return html.EscapeString(s)
		}
	}
	return s
}

// inlineTag is the element inserted into a page that carries the page agent inline, built
// with a single allocation; sheets and now as for externalTag.
func inlineTag(token, nonce, sheets string, now bool, script []byte) []byte {
	token, nonce = escapeAttr(token), escapeAttr(nonce)
	const open, nonceAttr, sheetsAttr, nowAttr, close = `<script data-remixproxy="`, `" nonce="`, `" data-remixproxy-sheets="`, `" data-remixproxy-now="`, "</script>"
	b := make([]byte, 0, len(open)+len(token)+len(sheetsAttr)+len(sheets)+len(nowAttr)+len(nonceAttr)+len(nonce)+2+len(script)+len(close))
	b = append(b, open...)
	b = append(b, token...)
	if sheets != "" {
		b = append(b, sheetsAttr...)
		b = append(b, sheets...)
	}
	if now {
		b = append(b, nowAttr...)
	}
	if nonce != "" {
		b = append(b, nonceAttr...)
		b = append(b, nonce...)
	}
	b = append(b, '"', '>')
	b = append(b, script...)
	return append(b, close...)
}

// injectedBody is the injector's output as a response body; closing it closes the decoders and
// the upstream body, and counts the page if the bootstrap went in.
type injectedBody struct {
	io.Reader
	inj    *rewrite.Injector
	closer io.Closer
	done   func()
	closed bool
}

func (b *injectedBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.inj.Injected() {
		b.done()
	}
	return b.closer.Close()
}
