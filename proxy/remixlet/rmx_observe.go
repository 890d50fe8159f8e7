package remixlet

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/internal/sessionlog"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// network:observe:HOST: the proxy records the responses a page session itself receives from
// HOST, and rmx.network.responses({host, path, since}) hands them to the page's remixlets as
// data; rmx.network.onResponse({host, path}, callback) calls back with each one recorded after
// it was registered (responses claimed late, see below, only reach rmx.network.responses). It
// allows no loads: nothing is sent on a remixlet's behalf.
//
// A response is recorded when its host is observed by some active remixlet (the set is read
// from the store at most every observedHostsTTL, off the response path), the browser hands it
// to the page (httpx.PageCanRead: the page's own origin, or CORS), and its request came
// from a page (not a navigation) whose Referer names a connected page session, matched as
// pagedata.go matches them (the exact page URL; an origin-only Referer by origin; otherwise it
// waits a while for its session to connect). Recording never changes a header or a byte: the
// body streams through while at most maxObservedBody bytes of a text body are copied aside
// (decoded off the streaming path if compressed); other bodies are left out (truncated: true).
// A session keeps its last maxObservedPerPage responses within maxObservedPerPageBytes; they
// go when the session does.

const (
	maxObservedPerPage      = 100
	maxObservedPerPageBytes = 1 << 20
	maxObservedBody         = 256 << 10
	maxObservedUnclaimed    = 64
	maxObserveListeners     = 20 // per remixlet per page
	observedHostsTTL        = 2 * time.Second
	observedHostsRead       = 5 * time.Second  // bounds one read of the store
	observedUnclaimedTTL    = 30 * time.Second // how long a response waits for its session, as the page data's do
	// maxObservedAll bounds every session's record together: any page may fetch from an
	// observed host (CORS), and sessions are bounded per origin, not in all (pass 5d; the page
	// data's maxRecordedAll has the why). Past it, the site holding the most bytes loses its
	// sessions' oldest responses first.
	maxObservedAll = 32 * maxObservedPerPageBytes
)

// ObservedResponse is one response a page received, as rmx.network.responses returns it.
type ObservedResponse struct {
	URL         string `json:"url"`
	Method      string `json:"method"`
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	Body        string `json:"body"`      // text bodies only, at most 256 KiB
	Truncated   bool   `json:"truncated"` // the body was longer, not text, or did not arrive whole
	At          int64  `json:"at"`        // when the response arrived, in milliseconds since 1970

	host string
	path string
}

// Observed holds the responses the page sessions received from observed hosts. Use NewObserved.
type Observed struct {
	pages *page.Hub    // the page sessions responses are filed under
	st    *store.Store // where the observed hosts are read; nil: none is observed
	log   *slog.Logger

	hosts      atomic.Pointer[observedHosts]
	refreshing atomic.Bool

	mu        sync.Mutex
	bySession map[string]*observedSession
	total     int // the bytes of every session's record
	unclaimed []observedUnclaimed
	listeners map[string][]observeListener // rmx.network.onResponse callbacks, by session ID
}

// observeListener is one rmx.network.onResponse callback of a remixlet on a page.
type observeListener struct {
	h        *remixletHost
	listener int64
	host     string
	path     string
}

type observedHosts struct {
	set map[string]bool
	at  time.Time
}

// observedSession is one session's record; its Site is the site of the session's page.
type observedSession = sessionlog.Log[ObservedResponse]

// observedLimits are the bounds of network:observe's records.
var observedLimits = sessionlog.Limits[ObservedResponse]{
	PerSession:      maxObservedPerPage,
	PerSessionBytes: maxObservedPerPageBytes,
	AllBytes:        maxObservedAll,
	Size:            func(r ObservedResponse) int { return len(r.Body) + len(r.URL) },
}

type observedUnclaimed struct {
	referer    string
	originOnly bool // the Referer was only an origin: any page of that origin may claim it
	at         time.Time
	rec        ObservedResponse
}

// NewObserved makes the records of the sessions of pages; the observed hosts are read from the
// active remixlets in st (none when st is nil).
func NewObserved(pages *page.Hub, st *store.Store, log *slog.Logger) *Observed {
	return &Observed{pages: pages, st: st, log: log, bySession: map[string]*observedSession{}, listeners: map[string][]observeListener{}}
}

// isObserved reports whether some active remixlet holds network:observe:host. The set is
// refreshed in the background when it is older than observedHostsTTL.
func (o *Observed) isObserved(host string) bool {
	cur := o.hosts.Load()
	if cur == nil && o.st != nil {
		// The first response after start waits for the store once; later ones never do.
		cur = o.readObservedHosts()
		o.hosts.CompareAndSwap(nil, cur)
	}
	if (cur == nil || time.Since(cur.at) > observedHostsTTL) && o.st != nil && o.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer o.refreshing.Store(false)
			defer httpx.Recovered(o.log, "reading the observed hosts")
			o.hosts.Store(o.readObservedHosts())
		}()
	}
	return cur != nil && cur.set[host]
}

func (o *Observed) readObservedHosts() *observedHosts {
	ctx, cancel := context.WithTimeout(context.Background(), observedHostsRead)
	defer cancel()
	hs := &observedHosts{set: map[string]bool{}, at: time.Now()}
	st := o.st
	list, err := st.ListRemixlets(ctx)
	if err != nil {
		return hs
	}
	for _, rx := range list {
		if !rx.Enabled || rx.Archived || rx.ActiveVersionID == 0 {
			continue
		}
		v, ok, err := st.Active(ctx, rx.ID)
		if err != nil || !ok {
			continue
		}
		m, problems := sandbox.ParseManifest(v.Files[sandbox.ManifestFile])
		if len(problems) > 0 || m == nil {
			continue
		}
		for _, p := range m.Permissions {
			if kind, host, ok := sandbox.PermissionHost(p.Name); ok && kind == sandbox.PermNetworkObservePrefix {
				if canon, err := weburl.Host(host); err == nil {
					hs.set[canon] = true
				}
			}
		}
	}
	return hs
}

// Record is a response tap of the pipeline: it arranges for resp (on its way to the browser) to
// be recorded if a page session received it from an observed host. It only wraps the body.
func (o *Observed) Record(resp *http.Response) {
	req := resp.Request
	if req == nil || req.URL == nil {
		return
	}
	host, err := weburl.Host(req.URL.Hostname())
	if err != nil || !o.isObserved(host) {
		return
	}
	if req.Header.Get("Sec-Fetch-Mode") == "navigate" || resp.StatusCode == http.StatusSwitchingProtocols {
		return
	}
	// What "the responses pages receive" means: what the browser hands the page. Another
	// origin's answer to a no-cors request is opaque to the page; a remixlet on a hostile site
	// holding network:observe:HOST would otherwise read HOST's answers to requests that site's
	// page sent as the person (e2e/redteam_crossread_test.go).
	if !httpx.PageCanRead(req, resp) {
		return
	}
	referer, err := url.Parse(req.Header.Get("Referer"))
	if err != nil || referer.Host == "" || (referer.Scheme != "http" && referer.Scheme != "https") {
		return
	}
	u := *req.URL
	u.User, u.Fragment = nil, ""
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	rec := ObservedResponse{
		URL: u.String(), Method: req.Method, Status: resp.StatusCode, ContentType: mediaType,
		At: time.Now().UnixMilli(), host: host, path: httpx.CleanPath(u.Path),
	}
	noBody := resp.Body == nil || resp.Body == http.NoBody || req.Method == http.MethodHead || resp.ContentLength == 0
	if noBody || !observedTextType(mediaType) || mediaType == "text/event-stream" {
		rec.Truncated = !noBody
		o.attach(referer, rec)
		return
	}
	resp.Body = &httpx.TeeBody{
		RC:    resp.Body,
		Enc:   resp.Header.Get("Content-Encoding"),
		Limit: maxObservedBody,
		Log:   o.log,
		Finish: func(raw []byte, enc string, complete bool) {
			body, truncated, ok := httpx.TextBody(raw, enc, maxObservedBody)
			rec.Body, rec.Truncated = body, !ok || truncated || !complete
			o.attach(referer, rec)
		},
	}
}

// observedTextType reports whether a media type is text a remixlet may read.
func observedTextType(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"), httpx.IsJSONType(mt), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/xml", "application/javascript", "application/ecmascript",
		"application/x-www-form-urlencoded", "application/graphql-response+json":
		return true
	}
	return false
}

// attach files a finished response under its page session, or keeps it waiting for one.
func (o *Observed) attach(referer *url.URL, rec ObservedResponse) {
	ref := httpx.WithoutFragment(referer.String())
	originOnly := page.RefererIsOrigin(referer)
	sessions := o.pages.List()
	id := page.RefererSession(referer, sessions)
	live := make(map[string]bool, len(sessions))
	for _, ss := range sessions {
		live[ss.ID] = true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.bySession)+len(o.listeners) > 2*len(live)+16 {
		for sid, r := range o.bySession {
			if !live[sid] {
				o.total -= r.Bytes
				delete(o.bySession, sid)
			}
		}
		for sid := range o.listeners {
			if !live[sid] {
				delete(o.listeners, sid)
			}
		}
	}
	if id != "" {
		r := o.bySession[id]
		if r == nil {
			r = &observedSession{}
			for _, ss := range sessions {
				if ss.ID == id {
					r.Site = siteOf(ss.URL)
				}
			}
			o.bySession[id] = r
		}
		o.record(r, rec)
		var to []observeListener
		for _, l := range o.listeners[id] {
			if l.host == rec.host && (l.path == "" || strings.HasPrefix(rec.path, l.path)) {
				to = append(to, l)
			}
		}
		if len(to) > 0 {
			go func() {
				defer httpx.Recovered(o.log, "delivering an observed response")
				deliverObserved(to, rec)
			}()
		}
		return
	}
	if len(o.unclaimed) >= maxObservedUnclaimed {
		o.unclaimed[0] = observedUnclaimed{}
		o.unclaimed = o.unclaimed[1:]
	}
	o.unclaimed = append(o.unclaimed, observedUnclaimed{referer: ref, originOnly: originOnly, at: time.Now(), rec: rec})
}

// siteOf is the site of an address's host ("" when it has none).
func siteOf(address string) string {
	u, err := url.Parse(address)
	if err != nil {
		return ""
	}
	return weburl.Site(u.Hostname())
}

// record adds rec to the session record r within its bounds and within maxObservedAll for all
// sessions (sessionlog.Record). o.mu is held.
func (o *Observed) record(r *observedSession, rec ObservedResponse) {
	sessionlog.Record(o.bySession, &o.total, r, rec, observedLimits)
}

// Responses returns what the session at pageURL received from host, oldest first: under
// pathPrefix if it is not empty, and after since (milliseconds since 1970) if it is not zero.
func (o *Observed) Responses(sessionID, pageURL, host, pathPrefix string, since int64) []ObservedResponse {
	want := httpx.WithoutFragment(pageURL)
	wantOrigin := ""
	if pu, err := url.Parse(pageURL); err == nil {
		wantOrigin = httpx.OriginOf(pu) + "/"
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.bySession[sessionID]
	kept := o.unclaimed[:0]
	for _, u := range o.unclaimed {
		switch {
		case time.Since(u.at) > observedUnclaimedTTL:
		case u.referer == want || (u.originOnly && u.referer == wantOrigin):
			if r == nil {
				r = &observedSession{Site: siteOf(pageURL)}
				o.bySession[sessionID] = r
			}
			o.record(r, u.rec)
		default:
			kept = append(kept, u)
		}
	}
	clear(o.unclaimed[len(kept):])
	o.unclaimed = kept
	out := []ObservedResponse{}
	if r == nil {
		return out
	}
	for _, rec := range r.Items {
		if rec.host == host && (pathPrefix == "" || strings.HasPrefix(rec.path, pathPrefix)) && rec.At > since {
			out = append(out, rec)
		}
	}
	return out
}

// rmxNetworkResponses answers rmx.network.responses({host, path, since}).
func rmxNetworkResponses(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	var q struct {
		Host  string `json:"host"`
		Path  string `json:"path"`
		Since int64  `json:"since"`
	}
	if len(args) < 1 || json.Unmarshal(args[0], &q) != nil || q.Host == "" {
		return nil, &httpx.Refusal{Why: "the argument must be {host, path?, since?} with host a string"}
	}
	host, err := weburl.Host(q.Host)
	if err != nil {
		return nil, &httpx.Refusal{Why: err.Error()}
	}
	if !h.observes(host) {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("rmx.network.responses for %s needs the network:observe:%s permission in manifest.json", host, host)}
	}
	o := h.p.r.observed
	if o == nil {
		return json.RawMessage("[]"), nil
	}
	rs := o.Responses(h.p.pc.id, h.p.pc.url(), host, q.Path, q.Since)
	return json.Marshal(fitObserved(rs, h.p.r.messageLimit()))
}

// fitObserved keeps the newest responses whose JSON fits in limit bytes (the sandbox's answer
// limit), cutting the body of the newest if it alone is too large; the rest can be asked for
// again with since.
func fitObserved(rs []ObservedResponse, limit int) []ObservedResponse {
	budget := limit - 64
	start := len(rs)
	for start > 0 {
		b, _ := json.Marshal(rs[start-1])
		if len(b)+1 > budget {
			break
		}
		budget -= len(b) + 1
		start--
	}
	if start == len(rs) && len(rs) > 0 {
		return []ObservedResponse{fitOneObserved(rs[len(rs)-1], limit-64)}
	}
	return rs[start:]
}

// fitOneObserved cuts rec's body (at a character boundary) until its JSON fits in limit bytes.
func fitOneObserved(rec ObservedResponse, limit int) ObservedResponse {
	for {
		b, _ := json.Marshal(rec)
		if len(b) <= limit || rec.Body == "" {
			return rec
		}
		cut := len(rec.Body) - (len(b) - limit) - 16
		if cut < 0 {
			cut = 0
		}
		for cut > 0 && !utf8.RuneStart(rec.Body[cut]) {
			cut--
		}
		rec.Body, rec.Truncated = rec.Body[:cut], true
	}
}

// observes reports whether the remixlet holds network:observe: for the canonical host.
func (h *remixletHost) observes(host string) bool {
	for _, p := range h.manifest.Permissions {
		if kind, ph, ok := sandbox.PermissionHost(p.Name); ok && kind == sandbox.PermNetworkObservePrefix {
			if canon, err := weburl.Host(ph); err == nil && canon == host {
				return true
			}
		}
	}
	return false
}

// rmxNetworkOnResponse answers rmx.network.onResponse({host, path}, callback): the callback gets
// each response recorded for this page from then on, as rmx.network.responses returns them.
func rmxNetworkOnResponse(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	var q struct {
		Host string `json:"host"`
		Path string `json:"path"`
	}
	if len(args) < 1 || json.Unmarshal(args[0], &q) != nil || q.Host == "" {
		return nil, &httpx.Refusal{Why: "the first argument must be {host, path?} with host a string"}
	}
	host, err := weburl.Host(q.Host)
	if err != nil {
		return nil, &httpx.Refusal{Why: err.Error()}
	}
	if !h.observes(host) {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("rmx.network.onResponse for %s needs the network:observe:%s permission in manifest.json", host, host)}
	}
	var l struct {
		ID int64 `json:"$listener"`
	}
	if len(args) < 2 || json.Unmarshal(args[1], &l) != nil || l.ID <= 0 {
		return nil, &httpx.Refusal{Why: "the callback must be a function"}
	}
	o := h.p.r.observed
	if o == nil {
		return nil, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	sid := h.p.pc.id
	count := 0
	for _, x := range o.listeners[sid] {
		if x.h.id == h.id {
			count++
		}
	}
	if count >= maxObserveListeners {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("more than %d rmx.network.onResponse callbacks on one page", maxObserveListeners)}
	}
	o.listeners[sid] = append(o.listeners[sid], observeListener{h: h, listener: l.ID, host: host, path: q.Path})
	return nil, nil
}

// deliverObserved dispatches rec to each listener whose remixlet still runs on its page and
// may act there now (not paused, page still covered).
func deliverObserved(to []observeListener, rec ObservedResponse) {
	for _, l := range to {
		p := l.h.p
		raw, err := json.Marshal(fitOneObserved(rec, p.r.messageLimit()-64))
		if err != nil {
			continue
		}
		if !l.h.allowed(p.r.ctx, "rmx.network.onResponse") {
			continue
		}
		p.mu.Lock()
		rr := p.running[l.h.id]
		var handle *sandbox.Handle
		if !p.ended && !l.h.stopped && rr != nil && rr.host == l.h {
			handle = rr.handle
		}
		p.mu.Unlock()
		if handle != nil {
			if err := handle.Dispatch(l.listener, raw); err != nil {
				p.r.logf(l.h.id, "warn", "rmx.network.onResponse: %v", err)
			}
		}
	}
}
