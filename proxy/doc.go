// Package proxy is the intercepting HTTP proxy the browser talks to.
//
// Data flow, in the order the stages run:
//
//	browser ─CONNECT→ connect.go   goproxy answers the CONNECT: intercept, tunnel (--no-mitm) or refuse
//	        ─TLS────→ mitm.go      leaf from certs/, HTTP/2 or HTTP/1.1 by ALPN (plain HTTP too), net/http
//	        ─request→ pipeline.go  one httputil.ReverseProxy for intercepted and plain http:// requests
//	                  magic.go     remix.proxy is answered in process, never dialed; so is the listen address
//	                  chat_navguard.go  a navigation the agent started may not leave the chat's
//	                               site: first hops and redirects off it get the proxy's page
//	                  netrules.go  active remixlets' network rules (netrules/): block, redirect, upgrade,
//	                               request headers; never on the proxy's own requests
//	                  upstream.go  dial (--resolve), verify TLS (system roots + --upstream-ca); the
//	                               browser's protocol: HTTP/2 stays HTTP/2, HTTP/1.x goes as HTTP/1.1
//	                  errorpage.go upstream failures become a clear HTML page with 502/504
//	        ←response swshim.go    service-worker scripts get the navigation relay shim
//	                  html.go      2xx HTML documents: decode (decode.go), inject (rewrite/), adjust CSP
//	                               everything else streams through untouched
//	                  netrules.go  response headers; pagedata.go records a page's JSON responses
//	page agent ─ws──→ agentws.go   page sessions bound to signed tokens (sessions.go)
//	                  remixlets*.go  remixlets per page: sandbox calls re-checked, dom.* relayed;
//	                               rmx_*.go  rmx services (fetch, observe, clipboard, notify, menu)
//	                  pagetools.go the agent's page tools, relayed to the page agent
//	panel ─ws──────→ chat*.go     the agent's chat per tab: agent.Run, cards, the confirmation window
//	                  redact*.go   the redaction stage's secrets (page reports, the site's cookies and
//	                               credential headers, keys) and text work, before every model request
//	                  manager*.go  the manager UI, Settings and Traces (CSRF-checked forms, no script)
//	                  schedule.go  remixlets' schedules: three fixed actions, no remixlet code
//
// It must never: trust an upstream certificate that does not verify, buffer a non-HTML body,
// change a byte of a response body it does not inject into, let a page's claim decide which page a
// session belongs to, let a secret it knows reach a model, or go down because of one client,
// page or upstream.
package proxy
