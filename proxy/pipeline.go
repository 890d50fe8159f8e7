package proxy

import (
	"log"
	"net/http"
	"net/http/httputil"
	"sync"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The pipeline every proxied request goes through, whether it came as a plain http:// proxy
// request or inside an intercepted connection (every address in it is read as the browser
// reads it, internal/weburl):
//
//  1. serveProxied: count it; remix.proxy is answered in process (magic.go), never dialed;
//     a navigation the agent started that leaves the chat page's site gets the proxy's refusal
//     page (chat_navguard.go); then the remixlets' network rules (netrules.go) may block,
//     redirect or upgrade it, or note request and response header changes that Rewrite and
//     ModifyResponse apply;
//  2. Rewrite: the outbound request is the inbound one aimed at its origin (the inbound request
//     is never modified); no X-Forwarded-* headers are added;
//  3. Transport: upstream.go dials (--resolve) and verifies TLS;
//  4. ModifyResponse: a redirect off the allowed origins of an address a remixlet wrote
//     (remixlets_redirect.go), or off the site of a navigation the agent started
//     (chat_navguard.go), is replaced by a 403; service-worker scripts get the shim
//     (swshim.go), HTML documents the bootstrap (html.go); the cookie view, network:observe,
//     read_page_data and the redaction stage read what passes; everything else streams
//     through untouched;
//  5. ErrorHandler: an upstream failure becomes an error page (errorpage.go).
//
// httputil.ReverseProxy does the rest: hop-by-hop headers, trailers, 1xx responses, WebSocket
// upgrades, and flushing streamed bodies (SSE, unknown length) as soon as they arrive.

func (s *Server) newPipeline(errLog *log.Logger) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = httpx.RequestScheme(pr.In)
			pr.Out.URL.Host = pr.In.Host
			pr.Out.Host = pr.In.Host
			netRulesRequestHeaders(pr) // modifyHeaders rules (netrules.go)
		},
		Transport: s.upstream,
		ModifyResponse: func(resp *http.Response) error {
			lengthKnown := resp.ContentLength >= 0
			netRulesResponseHeaders(resp) // modifyHeaders rules (netrules.go)
			s.guardRemixletRedirect(resp) // a remixlet's address may not redirect off its sites (remixlets_redirect.go)
			s.guardAgentRedirect(resp)    // nor may the agent's own navigation leave the site (chat_navguard.go)
			s.injectHTML(resp.Request, s.shimServiceWorker(resp.Request, resp))
			s.pages.RecordResponse(resp) // JSON for the agent's read_page_data (pagedata.go); never changes a byte
			// The cookie view for rmx.fetch and network:observe's records; reads only.
			s.fetch.Cookies().Observe(resp)
			s.observed.record(resp)
			s.fetch.Credentials().Observe(resp) // credential header values, for the agent's redaction (fetch/credentials.go)
			if lengthKnown && resp.ContentLength == -1 {
				resp.ContentLength = changedLength
			}
			return nil
		},
		ErrorHandler: s.writeUpstreamError,
		BufferPool:   bufferPool{},
		ErrorLog:     errLog,
	}
}

// changedLength is the ContentLength of a response whose upstream sent a Content-Length and
// whose body the pipeline changed (bootstrap, service-worker shim): its length is unknown, but it
// is not a stream. ReverseProxy flushes every write of a body with ContentLength -1 (meant for
// streams whose writes the browser should see at once) and looks at ContentLength for nothing
// else once ModifyResponse has run; with this value the body is written like any body of known
// length, through the server's buffer: a small page goes out in one write with the head
// (net/http then sends a Content-Length itself), a large one in full buffers rather than one TLS
// record and one syscall per read (small pages ~15% faster on the bench). The price: such a
// page that trickles in reaches the browser in buffer-sized pieces (4 KiB), as every unchanged
// body of known length through ReverseProxy already does, rather than read by read. Streams
// (SSE, chunked or read-to-close upstream bodies) keep ContentLength -1 and are flushed as soon
// as each piece arrives (TestInjectedBodyFlushing, e2e TestSSEIsStreamed).
const changedLength = -2

// serveProxied is the entry of the pipeline.
func (s *Server) serveProxied(w http.ResponseWriter, r *http.Request) {
	s.counts.requests.Add(1)
	if r.Host == "" {
		http.Error(w, "remixproxy: request without a host", http.StatusBadRequest)
		return
	}
	if httpx.IsMagicHost(httpx.HostOnly(r.Host)) {
		s.magic.ServeHTTP(w, r)
		return
	}
	// The agent's own navigations stay on the site, redirects included (chat_navguard.go).
	r, rw, navDone, answered := s.guardAgentNavigation(w, r)
	if answered {
		return
	}
	defer navDone()
	r, done := s.applyNetRules(rw, r) // block, redirect, upgradeScheme; header changes ride along (netrules.go)
	if done {
		return
	}
	s.rp.ServeHTTP(w, r)
}

// bufferPool recycles the copy buffers of streamed bodies. They are 64 KiB rather than
// ReverseProxy's 32 KiB: a chunked upstream body fills the buffer within a chunk, and every
// write of a chunked body to an HTTP/1.1 browser costs a 4 KiB TLS record (net/http's buffer
// holding the chunk header) and a 2-byte one (the chunk's CRLF, flushed) on top of the data,
// so larger writes mean fewer small records; 200 KB pages ~5% faster on the bench, 128 KiB no
// better than 64.
type bufferPool struct{}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

func (bufferPool) Get() []byte  { return *(copyBuffers.Get().(*[]byte)) }
func (bufferPool) Put(b []byte) { copyBuffers.Put(&b) }
