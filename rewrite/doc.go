// Package rewrite holds the transforms the proxy applies to what reaches the browser: the
// streaming HTML injector that inserts the page-agent bootstrap as the first script of a document
// (inject.go), the Content-Security-Policy adjustment that lets that one script (and the
// connections it opens to remix.proxy) run under the page's own policy (csp.go), and the checks
// of a remixlet's stylesheet before it is saved, activated or inserted (stylecheck.go).
//
// Data flow: proxy/ decides that a response is an HTML document, decodes its Content-Encoding and
// hands the body here as an io.Reader; what comes out goes to the browser. For the headers, proxy/
// asks BlocksInjection, PageNonce and ExternalAllowed about the Content-Security-Policy header
// values, builds the tag (an external <script src> from remix.proxy, or the inline agent with its
// ScriptHash), rewrites each header value with AdjustCSP and passes AdjustCSP as the injector's
// MetaCSP hook for <meta> policies. A <meta> policy that comes before the insertion point is in
// force when the tag runs, so the injector checks the tag against it as adjusted: the tag goes in
// front of a policy that would still block it, and a policy that allows no script at all leaves
// the document unmodified. sandbox/ runs CheckStylesheet on every save; the proxy runs it
// again on every insertion and inserts only the clean output.
//
// It must never: buffer a whole document (only the prefix needed to find the insertion point, up
// to a cap), change any byte other than the inserted tag (with a copy of the page's charset
// declaration when the tag would push it out of the pre-scan window), the Content-Security-Policy
// <meta> tags whose policy it adjusts, and a stale bootstrap left by an earlier injection
// (dropped, so there is only ever one), add 'unsafe-inline', drop or loosen a directive beyond
// allowing the bootstrap and the remix.proxy origins, or let a stylesheet load anything from a
// host the remixlet was not allowed.
package rewrite
