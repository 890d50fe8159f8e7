// Package proxy is the intercepting HTTP proxy the browser talks to: interception and wiring
// only. It owns the listener, CONNECT, MITM, the pipeline every request goes through, the
// upstream transport, error pages, the hand-off of HTML documents to rewrite/, the
// service-worker shim and the magic host's routing, and New, which builds the packages below
// and wires them: each gets what it needs passed in (its Config), and none points back at
// Server.
//
// Data flow, in the order the stages run:
//
//	browser ─CONNECT→ connect.go   goproxy answers the CONNECT: intercept, tunnel (--no-mitm) or refuse
//	        ─TLS────→ mitm.go      leaf from certs/, HTTP/2 or HTTP/1.1 by ALPN (plain HTTP too), net/http
//	        ─request→ pipeline.go  one httputil.ReverseProxy for intercepted and plain http:// requests
//	                  magic.go     remix.proxy is answered in process, never dialed; so is the listen address
//	                  ownanswers.go  its redirects and errors: never stored, sniffed or framed
//	                  chat.Hub.GuardNavigation  a navigation the agent started may not leave the
//	                               chat's site (proxy/chat/navguard.go)
//	                  remixlet.NetRules.Apply   active remixlets' network rules: block, redirect,
//	                               upgrade, request headers; never on the proxy's own requests
//	                  upstream.go  dial (--resolve), verify TLS (system roots + --upstream-ca); the
//	                               browser's protocol: HTTP/2 stays HTTP/2, HTTP/1.x goes as HTTP/1.1
//	                  errorpage.go upstream failures become a clear HTML page with 502/504
//	        ←response the response taps, in order (pipeline.go responseTaps): network rules'
//	                  response headers, the remixlet redirect guard, the agent navigation guard,
//	                  swshim.go (service-worker shim), html.go (2xx HTML: decode, inject with
//	                  rewrite/, adjust CSP), then the taps that only read: page data, the cookie
//	                  view, network:observe, credentials seen. Everything else streams through.
//	page agent ─ws──→ proxy/page       page sessions bound to signed tokens, the channel, page tools
//	                  proxy/remixlet   remixlets per page: sandbox calls re-checked, dom.* relayed,
//	                                   rmx services, network rules, schedules, the Activator
//	panel ─ws──────→ proxy/chat       the agent's chat per tab: agent.Run, cards, Act, the guards,
//	                                   the redaction stage's secrets (text work: proxy/internal/redact)
//	manager ───────→ proxy/manager    the manager UI, Settings and Traces (CSRF-checked forms, no script)
//	                  proxy/fetch      requests sent as the person (rmx.fetch, http_request), cookie view
//	                  proxy/internal/httpx  shared helpers (clip, origins, refusals, own-page headers)
//
// Layers, each importing only those below it (layers_test.go enforces the table): proxy →
// manager → chat → remixlet → page, fetch → internal/httpx; internal/redact sits under chat.
// proxy/internal/testsite holds test sites shared by several packages' tests; only tests
// import it.
//
// It must never: trust an upstream certificate that does not verify, buffer a non-HTML body,
// change a byte of a response body it does not inject into, let a page's claim decide which page a
// session belongs to, let a secret it knows reach a model, or go down because of one client,
// page or upstream.
package proxy
