package proxy

import (
	"log"
	"net/http"
	"net/http/httputil"
	"sync"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/remixlet"
)

// The pipeline every proxied request goes through, whether it came as a plain http:// proxy
// request or inside an intercepted connection (every address in it is read as the browser
// reads it, internal/weburl):
//
//  1. serveProxied: count it; remix.proxy is answered in process (magic.go), never dialed;
//     a navigation the agent started that leaves the chat page's site gets the proxy's refusal
//     page (chat/navguard.go); so does a navigation of a page that an address a remixlet wrote
//     opened, when it leaves that remixlet's sites (remixlet/clientredirect.go), and a page's
//     request to a site a remixlet named on it (remixlet/namedhosts.go); then the remixlets'
//     network rules (remixlet/netrules.go) may block, redirect or upgrade it, or note request
//     and response header changes that Rewrite and the first response tap apply; last, a
//     request that changes something, sent by a page of the chat's site during an agent
//     action, waits for the person's card (chat/sendguard.go). The guards that answer at once
//     come before the one that waits for the person, so no card is shown for a request that a
//     guard after it would refuse anyway;
//  2. Rewrite: the outbound request is the inbound one aimed at its origin (the inbound request
//     is never modified); no X-Forwarded-* headers are added; a navigation goes without cache
//     validators, so the document comes whole, to be injected (html.go, unconditional);
//  3. Transport: upstream.go dials (--resolve) and verifies TLS; a page's request reaches a
//     local address only as the person could send it (localnet.go);
//  4. ModifyResponse: the response taps, in the order responseTaps lists them (a WebSocket's
//     101 among them: the send guard watches what the page sends on it, chat/sendguard_socket.go);
//  5. ErrorHandler: an upstream failure becomes an error page (errorpage.go).
//
// httputil.ReverseProxy does the rest: hop-by-hop headers, trailers, 1xx responses, WebSocket
// upgrades, and flushing streamed bodies (SSE, unknown length) as soon as they arrive.

// responseTap sees, and may change, every upstream response on its way to the browser. The
// taps run in one fixed order (as mitmproxy's ordered addon list), each on what the one before
// left; a tap that replaces a response (a guard's 403) does so for all after it.
type responseTap struct {
	name string // what it does, in the proxy's words
	fn   func(*http.Response)
}

// responseTaps is the order of the response taps. The guards come first, so that nothing after
// them sees a redirect they refuse; the taps that only read come last, so they read what the
// browser gets. Everything not named here streams through untouched.
func (s *Server) responseTaps() []responseTap {
	taps := []responseTap{
		// modifyHeaders rules noted on the request (remixlet/netrules.go).
		{"netrules: response headers", remixlet.ResponseHeaders},
	}
	if s.remixlets != nil {
		// An address a remixlet wrote may not redirect off its sites (remixlet/redirect.go).
		taps = append(taps, responseTap{"remixlet redirect guard", s.remixlets.GuardRedirect},
			// A document such an address opened has its own navigations held too
			// (remixlet/clientredirect.go).
			responseTap{"remixlet opened documents", s.remixlets.NoteOpenedDocument})
	}
	return append(taps,
		// Nor may the agent's own navigation leave the chat's site (chat/navguard.go).
		responseTap{"agent navigation guard", s.chats.GuardRedirect},
		// Service-worker scripts get the navigation relay shim (swshim.go).
		responseTap{"service-worker shim", s.shimServiceWorker},
		// 2xx HTML documents get the bootstrap, their CSP allowing it (html.go).
		responseTap{"HTML injection", s.injectHTML},
		// The rest only read; none changes a header or a byte of the body.
		// JSON for the agent's read_page_data (page/data.go).
		responseTap{"page data", s.pages.RecordResponse},
		// The cookies the browser would send, for rmx.fetch and http_request (fetch/cookieview.go).
		responseTap{"cookie view", s.fetch.Cookies().Observe},
		// network:observe's records (remixlet/rmx_observe.go).
		responseTap{"network:observe", s.observed.Record},
		// Credential header values, for the agent's redaction stage (fetch/credentials.go).
		responseTap{"credentials seen", s.fetch.Credentials().Observe},
		// A page's WebSocket that opens or carries messages during an agent action is logged,
		// not held; its bytes pass unchanged (chat/sendguard_socket.go).
		responseTap{"agent send guard: WebSocket messages", s.chats.WatchSocket},
	)
}

func (s *Server) newPipeline(errLog *log.Logger) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = httpx.RequestScheme(pr.In)
			pr.Out.URL.Host = pr.In.Host
			pr.Out.Host = pr.In.Host
			remixlet.RequestHeaders(pr) // modifyHeaders rules (remixlet/netrules.go)
			if httpx.IsNavigation(pr.In) {
				unconditional(pr.Out.Header) // html.go
			}
		},
		// A page's request that may not reach local addresses goes through transports
		// that refuse them (localnet.go).
		Transport: scopedTransport{any: s.upstreamLocal, public: s.upstream, spaces: &s.spaces},
		ModifyResponse: func(resp *http.Response) error {
			lengthKnown := resp.ContentLength >= 0
			for _, t := range s.taps {
				t.fn(resp)
			}
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
	// The agent's own navigations stay on the site, redirects included (chat/navguard.go).
	r, rw, navDone, answered := s.chats.GuardNavigation(w, r)
	if answered {
		return
	}
	defer navDone()
	// Nor may a page that an address a remixlet wrote opened forward it off the remixlet's
	// sites (remixlet/clientredirect.go), nor a page reach a site a remixlet named on it
	// (remixlet/namedhosts.go).
	if s.remixlets.GuardPageRequests(rw, r) {
		return
	}
	r, done := s.netrules.Apply(rw, r) // block, redirect, upgradeScheme; header changes ride along (remixlet/netrules.go)
	if done {
		return
	}
	// Nor may the page's script send a request that changes something while an action of the
	// agent runs, unless the person allows it (chat/sendguard.go). Last of the guards: it may
	// wait for the person, and a card for a request refused anyway would ask for nothing.
	if s.chats.GuardSend(w, r) {
		return
	}
	// A page may reach the person's machine or local network only as the person could
	// (localnet.go).
	r = s.scopeLocalNetwork(r)
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
