package proxy

import (
	"bytes"
	"crypto/hmac"
	_ "embed"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/rewrite"
)

// Pages a service worker serves from its cache never reach the proxy, so they would miss the
// bootstrap. The proxy therefore prepends a small shim to every service-worker script (requests
// carrying "Service-Worker: script" and "Sec-Fetch-Dest: serviceworker", which no page script
// can send). The shim wraps FetchEvent.respondWith for navigations: when
// the worker answers with an HTML document that did not come through the proxy's injector, the
// shim posts it to https://remix.proxy/sw/inject, which runs the same Go injector and CSP
// adjustment as for network responses, and the page gets that instead. The worker's own logic,
// caching and offline behaviour are unchanged; if the relay fails, the worker's response is used
// as it was. The shim is one line with no newline, so the worker's line numbers do not move.
//
// sw/inject answers with a document holding a fresh page token, so it must not answer a page's
// own script (which would then open an agent session of its own: proxy/page/claims.go). The
// shim carries the origin's worker key (page.Hub.WorkerKey), written into it as it is served and
// held in its closure; the shimmed script is never stored by the browser's HTTP cache
// (no-store), so a page's fetch of the script finds neither the shim nor the key. What remains:
// a site's own worker code runs in the shim's global and could hook the built-ins the shim's
// answer passes through — the site's first-party code sees its navigations anyway.
const swKeyPlaceholder = "__REMIXPROXY_SW_KEY__"

//go:embed swshim.js
var swShim []byte

// shimServiceWorker prepends the shim to a service-worker script (a response tap).
func (s *Server) shimServiceWorker(resp *http.Response) {
	req := resp.Request
	if req.Header.Get("Service-Worker") != "script" || req.Header.Get("Sec-Fetch-Dest") != "serviceworker" ||
		resp.StatusCode < 200 || resp.StatusCode > 299 ||
		resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	origin, err := weburl.Parse(req.URL.String()) // as serveSWInject reads the worker's claim
	if err != nil || !origin.IsHTTP() {
		return
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mediaType {
	case "text/javascript", "application/javascript", "application/x-javascript", "application/ecmascript", "text/ecmascript":
	default:
		return
	}
	body, err := httpx.DecodeBody(resp.Body, resp.Header.Get("Content-Encoding"))
	if err != nil {
		s.log.Info("service worker not shimmed", "url", httpx.RedactURL(req), "err", err)
		return
	}
	shim := bytes.Replace(swShim, []byte(swKeyPlaceholder), []byte(s.pages.WorkerKey(origin.Origin())), 1)
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(shim), body), body}
	resp.Header.Set("Cache-Control", "no-store") // the key is for the worker, not for a page's fetch of the script
	resp.ContentLength = -1
	for _, h := range []string{"Content-Length", "Content-Encoding", "Content-MD5", "Digest", "Content-Digest", "Repr-Digest", "ETag"} {
		resp.Header.Del(h)
	}
	if policies := resp.Header.Values("Content-Security-Policy"); len(policies) > 0 {
		needs := rewrite.CSPNeeds{Connect: []string{"https://" + httpx.MagicHost}}
		resp.Header.Del("Content-Security-Policy")
		for _, p := range policies {
			resp.Header.Add("Content-Security-Policy", rewrite.AdjustCSP(p, needs))
		}
	}
}

// maxSWDocument bounds a document relayed by the shim.
const maxSWDocument = 32 << 20

// serveSWInject injects the bootstrap into a document a service worker is about to serve. The
// page URL is the worker's claim, but the browser-set Origin header must be that URL's origin,
// so a worker can only obtain a token for its own origin.
func (s *Server) serveSWInject(w http.ResponseWriter, r *http.Request) {
	// The worker's claim is read as the browser reads it (weburl), and the page's token names
	// that reading: the origin checked is the origin the session gets.
	claim, err := weburl.Parse(r.URL.Query().Get("url"))
	if err != nil || !claim.IsHTTP() || claim.HasCredentials() {
		http.Error(w, "remixproxy: sw/inject needs ?url= with an http(s) page URL", http.StatusBadRequest)
		return
	}
	pageURL, err := claim.Go()
	if err != nil {
		http.Error(w, "remixproxy: sw/inject needs ?url= with an http(s) page URL", http.StatusBadRequest)
		return
	}
	origin := claim.Origin()
	if r.Header.Get("Origin") != origin {
		http.Error(w, "remixproxy: sw/inject is for the page's own origin", http.StatusForbidden)
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Vary", "Origin")
	h.Set("Cache-Control", "no-store")
	switch r.Method {
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "POST")
		h.Set("Access-Control-Allow-Headers", "content-type, x-remixproxy-headers, x-remixproxy-sw")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodPost:
	default:
		http.Error(w, "remixproxy: sw/inject takes POST", http.StatusMethodNotAllowed)
		return
	}
	if key := r.Header.Get("X-Remixproxy-Sw"); !hmac.Equal([]byte(key), []byte(s.pages.WorkerKey(origin))) {
		http.Error(w, "remixproxy: sw/inject answers only the service-worker shim the proxy served", http.StatusForbidden)
		return
	}
	var cached map[string]string
	if err := json.Unmarshal([]byte(r.Header.Get("X-Remixproxy-Headers")), &cached); err != nil {
		http.Error(w, "remixproxy: sw/inject needs the response headers as JSON in X-Remixproxy-Headers", http.StatusBadRequest)
		return
	}
	// The document is read by the browser with the worker's headers: the same checks as for
	// the proxy's own answers (html.go), its encoding included.
	docHeader := http.Header{}
	for _, k := range []string{"Content-Type", "Content-Disposition"} {
		if v := cached[strings.ToLower(k)]; v != "" {
			docHeader.Set(k, v)
		}
	}
	if !injectableHeaders(docHeader) {
		http.Error(w, "remixproxy: sw/inject takes an HTML document the browser reads in an ASCII-compatible encoding", http.StatusConflict)
		return
	}
	charsetKnown, escapesInert := headerEncoding(docHeader)
	var policies []string
	if v := cached["content-security-policy"]; v != "" {
		policies = []string{v}
	}
	if rewrite.BlocksInjection(policies) {
		http.Error(w, "remixproxy: the page's policy forbids the bootstrap", http.StatusConflict)
		return
	}
	// The navigation is the service worker's to see, not the proxy's (no Referer to follow a
	// chat by): the page agent connects at once, as it does where a chat follows.
	tag, needs := s.bootstrapFor(r.Context(), pageURL, policies, true)
	adjusted := make([]string, 0, len(policies))
	for _, p := range policies {
		adjusted = append(adjusted, rewrite.AdjustCSP(p, needs))
	}
	inj := rewrite.NewInjector(http.MaxBytesReader(w, r.Body, maxSWDocument), rewrite.Options{
		Tag:          tag,
		MetaCSP:      func(content string) string { return rewrite.AdjustCSP(content, needs) },
		CharsetKnown: charsetKnown,
		EscapesInert: escapesInert,
	})
	// As for the proxy's own answers (html.go): a document the injector lets through keeps its
	// own policy; the shim keeps the worker's answer on a refusal.
	if inj.Decide(); !inj.Injected() {
		http.Error(w, "remixproxy: sw/inject: the document takes no bootstrap (its bytes before the insertion point may read otherwise, or none was found)", http.StatusConflict)
		return
	}
	cspJSON, _ := json.Marshal(adjusted)
	h.Set("Access-Control-Expose-Headers", "X-Remixproxy-Csp")
	h.Set("X-Remixproxy-Csp", string(cspJSON))
	h.Set("Content-Type", "text/html")
	if _, err := io.Copy(w, inj); err != nil {
		s.log.Info("sw/inject copy failed", "page", httpx.RedactURL(&http.Request{URL: pageURL}), "err", err)
		return
	}
	s.counts.injected.Add(1)
}
