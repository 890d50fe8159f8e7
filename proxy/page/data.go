package page

import (
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/internal/sessionlog"
)

// The JSON responses a page loaded, for the agent's read_page_data: the proxy sees every fetch
// and XHR of a page and keeps a bounded record per page session of those that are JSON. A
// response is recorded when it is a 2xx answer to a GET or POST, its Content-Type is JSON
// (application/json, text/json, anything +json), and the request came from a page script
// (Sec-Fetch-Dest: empty) whose answer the browser hands the page (httpx.PageCanRead: the
// page's own origin, or CORS; never another origin's answer to a no-cors request, which the
// page gets opaque), with a Referer naming a connected page session:
//   - the most recently connected session whose URL is the Referer (fragment aside);
//   - for a Referer that is only an origin (cross-origin requests under the default referrer
//     policy), the most recently connected session on that origin;
//   - otherwise (typically: the page's first fetches finish before its page agent connects)
//     the response waits, for at most unclaimedTTL, for a session with that URL (or, for an
//     origin-only Referer, on that origin) to connect.
//
// Recording never slows or changes the response: the body streams through untouched while up
// to maxRecordedBody bytes of it are copied aside (decoded at the end, off the streaming path,
// when it was compressed); nothing more is buffered. Only the URL, method, status, content
// type and body are kept: no request header, no Set-Cookie. A session keeps its last
// maxRecordedPerPage responses within maxRecordedTotal bytes; they go when the session closes.

const (
	maxRecordedPerPage = 50
	maxRecordedBody    = 32 << 10
	maxRecordedTotal   = 512 << 10
	// The responses waiting for their page's agent to connect are bounded per page as a
	// session's record is (maxRecordedPerPage, maxRecordedTotal): most pages' agents connect only
	// after their load (data-remixproxy-now), and a page can fetch that much JSON while it loads,
	// so one page loading must not push out another's. All pages together are bounded by
	// maxUnclaimed responses and maxUnclaimedBytes, the oldest going first.
	maxUnclaimed      = 4 * maxRecordedPerPage
	maxUnclaimedBytes = 4 * maxRecordedTotal
	unclaimedTTL      = 30 * time.Second
	// maxRecordedAll bounds every session's record together. Sessions are bounded per origin
	// (maxSessionsPerOrigin), not in all: a site whose pages open sessions from many
	// subdomains, each with its page's whole record, was bounded only by the browser's
	// WebSocket limit (~255 sessions, 128 MiB; pass 4b). Past it, the site holding the most
	// bytes loses its sessions' oldest responses first (recordAll), so one site's many
	// sessions do not push out another's page.
	maxRecordedAll = 32 * maxRecordedTotal
)

// RecordedResponse is one JSON response a page loaded, as read_page_data reports it.
type RecordedResponse struct {
	URL         string `json:"url"`
	Method      string `json:"method"`
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	Body        string `json:"body"`      // JSON text, at most 32 KiB
	Truncated   bool   `json:"truncated"` // the body was longer (or did not arrive whole)
}

// records holds a hub's recorded responses of every connected session (by session ID) and the
// ones waiting for their session.
type records struct {
	mu             sync.Mutex
	bySession      map[string]*sessionRecord
	total          int                 // the bytes of every session's record
	unclaimed      []unclaimedResponse // oldest first
	unclaimedBytes int
}

// sessionRecord is one session's record; its Site is the site of the session's origin's host.
type sessionRecord = sessionlog.Log[RecordedResponse]

// recordLimits are the bounds of the page-data records.
var recordLimits = sessionlog.Limits[RecordedResponse]{
	PerSession:      maxRecordedPerPage,
	PerSessionBytes: maxRecordedTotal,
	AllBytes:        maxRecordedAll,
	Size:            RecordedResponse.size,
}

type unclaimedResponse struct {
	referer string // without fragment
	origin  string // the referer's origin when the referer is only that (RefererIsOrigin), else ""
	at      time.Time
	rec     RecordedResponse
}

// size is what a recorded response counts against the byte bounds.
func (r RecordedResponse) size() int { return len(r.Body) + len(r.URL) }

// dataOpened starts the record of a new session and gives it the responses that were waiting
// for its URL, and those whose Referer was only its origin (another origin's answers, sent
// under the default referrer policy, as RefererSession files them once the session is there).
func (h *Hub) dataOpened(sessionID, pageURL, origin string) {
	want := httpx.WithoutFragment(pageURL)
	pd := &h.data
	pd.mu.Lock()
	defer pd.mu.Unlock()
	r := &sessionRecord{}
	if u, err := url.Parse(origin); err == nil {
		r.Site = weburl.Site(u.Hostname())
	}
	pd.bySession[sessionID] = r
	pd.keepUnclaimed(time.Now(), func(u unclaimedResponse) bool {
		if u.referer == want || (u.origin != "" && u.origin == origin) {
			pd.record(r, u.rec)
			return false
		}
		return true
	})
}

// record adds rec to the session record r within its bounds and the bounds of all sessions
// together (sessionlog.Record). pd.mu is held.
func (pd *records) record(r *sessionRecord, rec RecordedResponse) {
	sessionlog.Record(pd.bySession, &pd.total, r, rec, recordLimits)
}

// keepUnclaimed keeps, in order, the waiting responses that are not past unclaimedTTL at now and
// that keep accepts. pd.mu is held.
func (pd *records) keepUnclaimed(now time.Time, keep func(unclaimedResponse) bool) {
	kept := pd.unclaimed[:0]
	for _, u := range pd.unclaimed {
		if now.Sub(u.at) <= unclaimedTTL && keep(u) {
			kept = append(kept, u)
		} else {
			pd.unclaimedBytes -= u.rec.size()
		}
	}
	clear(pd.unclaimed[len(kept):])
	pd.unclaimed = kept
}

// dataGone drops a session's record.
func (h *Hub) dataGone(sessionID string) {
	h.data.mu.Lock()
	if r := h.data.bySession[sessionID]; r != nil {
		h.data.total -= r.Bytes
		delete(h.data.bySession, sessionID)
	}
	h.data.mu.Unlock()
}

// Responses returns the JSON responses recorded for a session, oldest first.
func (h *Hub) Responses(sessionID string) []RecordedResponse {
	h.data.mu.Lock()
	defer h.data.mu.Unlock()
	r := h.data.bySession[sessionID]
	if r == nil {
		return []RecordedResponse{}
	}
	return append([]RecordedResponse{}, r.Items...)
}

// attach files a finished response under its page session, or keeps it waiting.
func (h *Hub) attach(referer *url.URL, rec RecordedResponse) {
	ref := httpx.WithoutFragment(referer.String())
	id := RefererSession(referer, h.List())
	pd := &h.data
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if r := pd.bySession[id]; id != "" && r != nil {
		pd.record(r, rec)
		return
	}
	u := unclaimedResponse{referer: ref, at: time.Now(), rec: rec}
	if RefererIsOrigin(referer) {
		u.origin = httpx.OriginOf(referer)
	}
	pd.waitUnclaimed(u)
}

// waitUnclaimed keeps u waiting for its page's session: first it drops what is past
// unclaimedTTL, then the oldest of u's page beyond a session's bounds, then the oldest of any
// page beyond maxUnclaimed and maxUnclaimedBytes. pd.mu is held.
func (pd *records) waitUnclaimed(u unclaimedResponse) {
	pd.keepUnclaimed(u.at, func(unclaimedResponse) bool { return true })
	pd.unclaimed = append(pd.unclaimed, u)
	pd.unclaimedBytes += u.rec.size()
	n, bytes := 0, 0
	for _, w := range pd.unclaimed {
		if w.referer == u.referer {
			n, bytes = n+1, bytes+w.rec.size()
		}
	}
	pd.keepUnclaimed(u.at, func(w unclaimedResponse) bool {
		if w.referer != u.referer || n <= 1 || (n <= maxRecordedPerPage && bytes <= maxRecordedTotal) {
			return true
		}
		n, bytes = n-1, bytes-w.rec.size()
		return false
	})
	for len(pd.unclaimed) > 1 && (len(pd.unclaimed) > maxUnclaimed || pd.unclaimedBytes > maxUnclaimedBytes) {
		pd.unclaimedBytes -= pd.unclaimed[0].rec.size()
		pd.unclaimed[0] = unclaimedResponse{}
		pd.unclaimed = pd.unclaimed[1:]
	}
}

// RecordResponse is a response tap of the pipeline: it arranges for resp (a response on its way
// to the browser) to be recorded if it is a JSON response to a page's fetch or XHR. It only
// wraps the body.
func (h *Hub) RecordResponse(resp *http.Response) {
	req := resp.Request
	if req == nil || resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	if (req.Method != http.MethodGet && req.Method != http.MethodPost) || resp.StatusCode < 200 || resp.StatusCode > 299 ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusPartialContent {
		return
	}
	if req.Header.Get("Sec-Fetch-Dest") != "empty" || !httpx.PageCanRead(req, resp) {
		return // not a page script's request, or an answer the browser keeps from the page
	}
	mediaType, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || !httpx.IsJSONType(mediaType) {
		return
	}
	referer, err := url.Parse(req.Header.Get("Referer"))
	if err != nil || referer.Host == "" || (referer.Scheme != "http" && referer.Scheme != "https") {
		return
	}
	u := *req.URL
	u.User = nil
	resp.Body = &httpx.TeeBody{
		RC:    resp.Body,
		Enc:   resp.Header.Get("Content-Encoding"),
		Limit: maxRecordedBody,
		Log:   h.log,
		Finish: func(raw []byte, enc string, complete bool) {
			body, truncated, ok := recordedBody(raw, enc, complete)
			if !ok {
				return
			}
			h.attach(referer, RecordedResponse{
				URL: u.String(), Method: req.Method, Status: resp.StatusCode, ContentType: mediaType,
				Body: body, Truncated: truncated,
			})
		},
	}
}

// recordedBody is the text of a body as read_page_data shows it. A body cut (at maxRecordedBody,
// or one that did not arrive whole) ends with "…", the cut mark the redaction knows
// (proxy/internal/redact, cards.go): the first ten digits or more of a card number cut there go,
// where at a bare end they would show — and a cut chosen well leaves the Luhn check only the
// last digit to give.
func recordedBody(raw []byte, enc string, complete bool) (body string, truncated, ok bool) {
	body, truncated, ok = httpx.TextBody(raw, enc, maxRecordedBody)
	truncated = truncated || !complete
	if ok && truncated {
		body += "…"
	}
	return body, truncated, ok
}
