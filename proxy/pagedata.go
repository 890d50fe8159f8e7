package proxy

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The JSON responses a page loaded, for the agent's read_page_data: the proxy sees every fetch
// and XHR of a page and keeps a bounded record per page session of those that are JSON. A
// response is recorded when it is a 2xx answer to a GET or POST, its Content-Type is JSON
// (application/json, text/json, anything +json), and the request came from a page script
// (Sec-Fetch-Dest: empty) with a Referer naming a connected page session:
//   - the most recently connected session whose URL is the Referer (fragment aside);
//   - for a Referer that is only an origin (cross-origin requests under the default referrer
//     policy), the most recently connected session on that origin;
//   - otherwise (typically: the page's first fetches finish before its page agent connects)
//     the response waits, for at most unclaimedTTL, for a session with that URL to connect.
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
	maxUnclaimed       = 32
	unclaimedTTL       = 30 * time.Second
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

// pageRecords holds a Server's recorded responses of every connected session (by session ID)
// and the ones waiting for their session.
type pageRecords struct {
	mu        sync.Mutex
	bySession map[string]*sessionRecord
	unclaimed []unclaimedResponse
}

type sessionRecord struct {
	list  []RecordedResponse
	bytes int
}

type unclaimedResponse struct {
	referer string // without fragment
	at      time.Time
	rec     RecordedResponse
}

// pageDataOpened starts the record of a new session and gives it the responses that were
// waiting for its URL.
func (s *Server) pageDataOpened(sessionID, pageURL string) {
	want := withoutFragment(pageURL)
	pd := s.pageData
	pd.mu.Lock()
	defer pd.mu.Unlock()
	r := &sessionRecord{}
	pd.bySession[sessionID] = r
	now := time.Now()
	kept := pd.unclaimed[:0]
	for _, u := range pd.unclaimed {
		switch {
		case now.Sub(u.at) > unclaimedTTL:
		case u.referer == want:
			r.add(u.rec)
		default:
			kept = append(kept, u)
		}
	}
	clear(pd.unclaimed[len(kept):])
	pd.unclaimed = kept
}

// pageDataGone drops a session's record.
func (s *Server) pageDataGone(sessionID string) {
	s.pageData.mu.Lock()
	delete(s.pageData.bySession, sessionID)
	s.pageData.mu.Unlock()
}

// pageResponses returns the JSON responses recorded for a session, oldest first.
func (s *Server) pageResponses(sessionID string) []RecordedResponse {
	s.pageData.mu.Lock()
	defer s.pageData.mu.Unlock()
	r := s.pageData.bySession[sessionID]
	if r == nil {
		return []RecordedResponse{}
	}
	return append([]RecordedResponse{}, r.list...)
}

func (r *sessionRecord) add(rec RecordedResponse) {
	size := len(rec.Body) + len(rec.URL)
	r.list = append(r.list, rec)
	r.bytes += size
	for len(r.list) > maxRecordedPerPage || (r.bytes > maxRecordedTotal && len(r.list) > 1) {
		r.bytes -= len(r.list[0].Body) + len(r.list[0].URL)
		r.list[0] = RecordedResponse{}
		r.list = r.list[1:]
	}
}

// attach files a finished response under its page session, or keeps it waiting.
func (s *Server) attach(referer *url.URL, rec RecordedResponse) {
	ref := withoutFragment(referer.String())
	originOnly := (referer.Path == "" || referer.Path == "/") && referer.RawQuery == ""
	origin := originOf(referer)
	var exact, sameOrigin string
	for _, ss := range s.sessions.list() { // oldest first: the last match is the newest
		if withoutFragment(ss.URL) == ref {
			exact = ss.ID
		}
		if ss.Origin == origin {
			sameOrigin = ss.ID
		}
	}
	id := exact
	if id == "" && originOnly {
		id = sameOrigin
	}
	pd := s.pageData
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if r := pd.bySession[id]; id != "" && r != nil {
		r.add(rec)
		return
	}
	if len(pd.unclaimed) >= maxUnclaimed {
		pd.unclaimed[0] = unclaimedResponse{}
		pd.unclaimed = pd.unclaimed[1:]
	}
	pd.unclaimed = append(pd.unclaimed, unclaimedResponse{referer: ref, at: time.Now(), rec: rec})
}

func withoutFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
}

// isJSONType reports whether a media type is JSON.
func isJSONType(mediaType string) bool {
	return mediaType == "application/json" || mediaType == "text/json" || strings.HasSuffix(mediaType, "+json")
}

// recordPageResponse arranges for resp (a response on its way to the browser) to be recorded
// if it is a JSON response to a page's fetch or XHR. It only wraps the body.
func (s *Server) recordPageResponse(resp *http.Response) {
	req := resp.Request
	if req == nil || resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	if (req.Method != http.MethodGet && req.Method != http.MethodPost) || resp.StatusCode < 200 || resp.StatusCode > 299 ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusPartialContent {
		return
	}
	if req.Header.Get("Sec-Fetch-Dest") != "empty" {
		return
	}
	mediaType, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || !isJSONType(mediaType) {
		return
	}
	referer, err := url.Parse(req.Header.Get("Referer"))
	if err != nil || referer.Host == "" || (referer.Scheme != "http" && referer.Scheme != "https") {
		return
	}
	u := *req.URL
	u.User = nil
	resp.Body = &teeBody{
		rc:    resp.Body,
		enc:   resp.Header.Get("Content-Encoding"),
		limit: maxRecordedBody,
		finish: func(raw []byte, enc string, complete bool) {
			body, truncated, ok := textBody(raw, enc, maxRecordedBody)
			if !ok {
				return
			}
			s.attach(referer, RecordedResponse{
				URL: u.String(), Method: req.Method, Status: resp.StatusCode, ContentType: mediaType,
				Body: body, Truncated: truncated || !complete,
			})
		},
	}
}

// textBody decodes what was copied of a body (at most limit bytes, as sent) and returns at
// most limit bytes of valid UTF-8 text; ok is false for a body that is not text. Both the page
// data record (here) and network:observe (rmx_observe.go) keep bodies this way.
func textBody(raw []byte, enc string, limit int) (body string, truncated, ok bool) {
	truncated = len(raw) > limit
	if truncated {
		raw = raw[:limit]
	}
	if e := strings.TrimSpace(enc); e != "" && !strings.EqualFold(e, "identity") {
		d, err := decodeBody(io.NopCloser(bytes.NewReader(raw)), enc)
		if err != nil {
			return "", false, false
		}
		var out bytes.Buffer
		_, rerr := io.Copy(&out, io.LimitReader(d, int64(limit)+1))
		d.Close()
		if rerr != nil {
			truncated = true // a prefix of a compressed stream decodes as far as it goes
		}
		raw = out.Bytes()
		if len(raw) > limit {
			raw, truncated = raw[:limit], true
		}
	}
	// Cut at a character boundary; a body that is not text is not recorded.
	for i := 0; i < utf8.UTFMax && len(raw) > 0 && !utf8.Valid(raw); i++ {
		raw = raw[:len(raw)-1]
	}
	if !utf8.Valid(raw) {
		return "", false, false
	}
	return string(raw), truncated, true
}

// teeBody passes a body through unchanged and copies its first limit+1 bytes aside; finish
// runs once, on its own goroutine, at the end of the body or when it is closed.
type teeBody struct {
	rc     io.ReadCloser
	enc    string
	limit  int
	buf    []byte
	finish func(raw []byte, enc string, complete bool)
	once   sync.Once
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if n > 0 && len(t.buf) <= t.limit {
		take := min(n, t.limit+1-len(t.buf))
		t.buf = append(t.buf, p[:take]...)
	}
	if err == io.EOF {
		t.done(true)
	}
	return n, err
}

func (t *teeBody) Close() error {
	t.done(false)
	return t.rc.Close()
}

func (t *teeBody) done(complete bool) {
	t.once.Do(func() {
		buf := t.buf
		t.buf = nil
		go func() {
			defer recovered(nil, "keeping a copy of a response body")
			t.finish(buf, t.enc, complete)
		}()
	})
}
