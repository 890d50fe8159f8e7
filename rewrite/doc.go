// Package rewrite holds the streaming transforms the proxy applies to responses on their way to
// the browser: the HTML injector that inserts the page-agent bootstrap as the first script of a
// document (inject.go), and the Content-Security-Policy adjustment that lets that one script (and
// the connections it opens to remix.proxy) run under the page's own policy (csp.go).
//
// Data flow: proxy/ decides that a response is an HTML document, decodes its Content-Encoding and
// hands the body here as an io.Reader; what comes out goes to the browser. For the headers, proxy/
// asks BlocksInjection and PageNonce about the Content-Security-Policy header values, builds the
// tag (with ScriptHash of its text, and the page's nonce if any), rewrites each header value with
// AdjustCSP and passes AdjustCSP as the injector's MetaCSP hook for <meta> policies.
//
// It must never: buffer a whole document (only the prefix needed to find the insertion point, up
// to a cap), change any byte other than the inserted tag, the Content-Security-Policy <meta> tags
// whose policy it adjusts, and a stale bootstrap left by an earlier injection (dropped, so there
// is only ever one), add 'unsafe-inline', or drop or loosen a directive beyond allowing the
// bootstrap's own hash and the remix.proxy origins.
package rewrite
