// Package rewrite holds the streaming transforms the proxy applies to responses on their way to
// the browser: the HTML injector that inserts the page-agent bootstrap as the first script of a
// document, and the Content-Security-Policy adjustment that lets that one script (and the
// connections it opens to remix.proxy) run under the page's own policy.
//
// Data flow: proxy/ decides that a response is an HTML document, decodes its Content-Encoding and
// hands the body here as an io.Reader; what comes out goes to the browser.
//
// It must never: buffer a whole document (only the prefix needed to find the insertion point, up
// to a cap), change any byte other than the inserted tag and the content of Content-Security-Policy
// <meta> tags, add 'unsafe-inline', or drop or loosen a directive beyond allowing the bootstrap's
// own hash and the remix.proxy origins.
package rewrite
