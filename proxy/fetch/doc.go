// Package fetch sends requests as the person: the proxy's own client for rmx.fetch (a
// remixlet's fetch:HOST permission), the agent's http_request and its open_page on another
// origin of the site. It keeps, from the browser traffic the pipeline shows it (Client.Observe,
// a response tap), the cookies the browser would send to each host (cookieview.go) and the
// credential header values seen for each site (credentials.go), which the agent's redaction
// stage also reads.
//
// Data flow: a caller names the hosts it may reach (a permission's, or the chat page's site)
// and the address; Fetch reads the address as the browser would (internal/weburl), refuses any
// other host, a non-standard port, credentials in the address or a forbidden header, dials only
// public addresses (or --resolve entries through Config.Dial), adds the person's cookies from
// the view and follows each redirect by hand after checking it the same way.
//
// It imports only proxy/internal/httpx among the proxy's packages. It must never send a request
// to a host its caller did not name, reach the person's own machine or network through DNS,
// take a Set-Cookie of its own responses into the view, or change a header or byte of the
// browser's traffic it observes.
package fetch
