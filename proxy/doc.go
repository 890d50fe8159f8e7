// Package proxy is the intercepting HTTP proxy the browser talks to, built on elazarl/goproxy.
//
// Data flow, in the order the stages run (see Server.stages in proxy.go):
//
//	browser ─CONNECT→ connect.go    intercept (TLS with a leaf from certs/) or tunnel (--no-mitm)
//	        ─request→ magic.go      remix.proxy and the listen address are answered here, never dialed
//	                  upstream.go   dial (--resolve), verify TLS (system roots + --upstream-ca)
//	                  errorpage.go  upstream failures become a clear HTML page with 502/504
//	        ←response html.go       2xx HTML documents: decode, inject (rewrite/), adjust CSP
//	                                everything else streams through untouched
//
// It must never: trust an upstream certificate that does not verify, buffer a non-HTML body,
// change a byte of a response it does not inject into, let a page's claim decide which page a
// session belongs to, or go down because of one client, page or upstream.
package proxy
