package remixlet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// rmx.schedule: a remixlet asks the proxy to run one of three fixed actions later, and no
// remixlet code runs then. The schedules are stored (store.Schedule), so they survive a restart;
// the scheduler below runs the due ones:
//   - {notify: {title, body}}: a line in the remixlet's log, and a text notification
//     (panel.Notify) on each connected page the remixlet's matches cover — never on another
//     site's page, which could read the toast's text from its rendering;
//   - {open: URL}: an address the remixlet's matches cover, shown through a connected page
//     (panel.Open): one at that address is focused, else one of the remixlet's own pages on that
//     origin navigates there; with none connected the log says so and nothing else happens
//     (the system's URL opener is not used);
//   - {message: JSON}: queued in the store for the remixlet's next page load, where
//     rmx.onMessage(callback) receives each message once.
// Every call is checked in Go (the remixlet's standing, then the schedule permission); the
// action is checked when it is scheduled and again when it runs, against the remixlet's active
// manifest then. A schedule of a paused, switched-off or archived remixlet does not run (a
// one-time one whose time passes meanwhile is dropped); one of a remixlet that was deleted or
// whose active version lacks the permission is deleted.

// Limits of rmx.schedule (the count and name limits are the store's).
const (
	minScheduleEvery = time.Minute
	maxScheduleAhead = 366 * 24 * time.Hour
	maxOpenURL       = 2048
	// defaultScheduleTick is how often the scheduler looks for due schedules.
	defaultScheduleTick = 15 * time.Second
)

func needSchedule(h *remixletHost, what string) error {
	if !h.manifest.HasPermission(sandbox.PermSchedule) {
		return &httpx.Refusal{Why: what + " needs the schedule permission in manifest.json"}
	}
	return nil
}

func scheduleName(args []json.RawMessage) (string, error) {
	name, err := rmxString(args, 0, "the schedule name", store.MaxScheduleName, false)
	if err == nil && strings.TrimSpace(name) == "" {
		err = &httpx.Refusal{Why: "the schedule name is empty"}
	}
	return name, err
}

// scheduleSpec reads argument 1, {KEY, action}, returning KEY's raw value and the checked action.
func scheduleSpec(h *remixletHost, args []json.RawMessage, key string) (json.RawMessage, []byte, error) {
	var spec map[string]json.RawMessage
	if len(args) < 2 || json.Unmarshal(args[1], &spec) != nil || spec == nil {
		return nil, nil, &httpx.Refusal{Why: "the second argument must be {" + key + ", action}"}
	}
	for k := range spec {
		if k != key && k != "action" {
			return nil, nil, &httpx.Refusal{Why: "unknown field " + httpx.Clip(k, 40) + "; want {" + key + ", action}"}
		}
	}
	action, err := checkAction(h.manifest, spec["action"])
	if err != nil {
		return nil, nil, err
	}
	return spec[key], action, nil
}

// scheduleAction is the one action of a schedule, as stored.
type scheduleAction struct {
	Notify *struct {
		Title string `json:"title"`
		Body  string `json:"body,omitempty"`
	} `json:"notify,omitempty"`
	Open    string          `json:"open,omitempty"`
	Message json.RawMessage `json:"message,omitempty"`
}

// checkAction checks an action against m and returns its canonical JSON: exactly one of
// notify (text within rmx.notify's limits), open (an http(s) address m's matches cover) or
// message (JSON within store.MaxMessageBytes).
func checkAction(m *sandbox.Manifest, raw json.RawMessage) ([]byte, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || len(fields) != 1 {
		return nil, &httpx.Refusal{Why: "the action must be exactly one of {notify: {title, body}}, {open: url} or {message: value}"}
	}
	var a scheduleAction
	switch {
	case fields["notify"] != nil:
		var n struct {
			Title *string `json:"title"`
			Body  *string `json:"body"`
		}
		dec := json.NewDecoder(bytes.NewReader(fields["notify"]))
		dec.DisallowUnknownFields()
		if dec.Decode(&n) != nil || n.Title == nil {
			return nil, &httpx.Refusal{Why: "a notify action is {title, body?} with text only"}
		}
		body := ""
		if n.Body != nil {
			body = *n.Body
		}
		title, body, err := checkNotifyText(*n.Title, body)
		if err != nil {
			return nil, err
		}
		a.Notify = &struct {
			Title string `json:"title"`
			Body  string `json:"body,omitempty"`
		}{title, body}
	case fields["open"] != nil:
		var s string
		if json.Unmarshal(fields["open"], &s) != nil {
			return nil, &httpx.Refusal{Why: "an open action is {open: url} with the address as a string"}
		}
		u, err := checkOpenURL(m, s)
		if err != nil {
			return nil, err
		}
		a.Open = u.String()
	case fields["message"] != nil:
		var compact bytes.Buffer
		if err := json.Compact(&compact, fields["message"]); err != nil {
			return nil, &httpx.Refusal{Why: "the message is not JSON"}
		}
		if compact.Len() > store.MaxMessageBytes {
			return nil, &httpx.Refusal{Why: fmt.Sprintf("the message is more than %d bytes", store.MaxMessageBytes)}
		}
		a.Message = compact.Bytes()
	default:
		return nil, &httpx.Refusal{Why: "the action must be exactly one of {notify: {title, body}}, {open: url} or {message: value}"}
	}
	return json.Marshal(a)
}

// checkOpenURL allows an absolute http(s) address without credentials that m's matches cover:
// one of the remixlet's own pages. The address is read as the browser reads it (weburl) and
// returned in that reading, which is what the page is sent to.
func checkOpenURL(m *sandbox.Manifest, s string) (*url.URL, error) {
	if len(s) > maxOpenURL {
		return nil, &httpx.Refusal{Why: "the address is longer than 2048 bytes"}
	}
	w, err := weburl.Parse(s)
	if err != nil || !w.IsHTTP() || w.HasCredentials() {
		return nil, &httpx.Refusal{Why: "open needs an absolute http or https address without a user name or password"}
	}
	u, err := w.Go()
	if err != nil {
		return nil, &httpx.Refusal{Why: "open needs an address Go reads as the browser does; " + err.Error()}
	}
	if !m.MatchesURL(u) {
		return nil, &httpx.Refusal{Why: "open may only show the remixlet's own pages; its matches do not cover " + httpx.Clip(u.Redacted(), 200)}
	}
	return u, nil
}

func rmxScheduleEvery(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	if err := needSchedule(h, "rmx.schedule"); err != nil {
		return nil, err
	}
	name, err := scheduleName(args)
	if err != nil {
		return nil, err
	}
	rawMinutes, action, err := scheduleSpec(h, args, "minutes")
	if err != nil {
		return nil, err
	}
	var minutes float64
	if json.Unmarshal(rawMinutes, &minutes) != nil || math.IsNaN(minutes) {
		return nil, &httpx.Refusal{Why: "minutes must be a number"}
	}
	every := time.Duration(minutes * float64(time.Minute)).Round(time.Millisecond)
	if minutes < 1 || every < minScheduleEvery {
		return nil, &httpx.Refusal{Why: "the interval must be at least one minute"}
	}
	if every > maxScheduleAhead {
		return nil, &httpx.Refusal{Why: "the interval must be at most a year"}
	}
	return nil, h.putSchedule(ctx, store.Schedule{RemixletID: h.id, Name: name, Every: every, Next: h.p.r.clock().Add(every), Action: action})
}

func rmxScheduleAt(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	if err := needSchedule(h, "rmx.schedule"); err != nil {
		return nil, err
	}
	name, err := scheduleName(args)
	if err != nil {
		return nil, err
	}
	rawTime, action, err := scheduleSpec(h, args, "time")
	if err != nil {
		return nil, err
	}
	var at time.Time
	var ms float64
	var s string
	switch {
	case json.Unmarshal(rawTime, &ms) == nil && !math.IsNaN(ms) && !math.IsInf(ms, 0):
		at = time.UnixMilli(int64(ms))
	case json.Unmarshal(rawTime, &s) == nil:
		if at, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return nil, &httpx.Refusal{Why: "time must be an ISO 8601 date-time with a time zone (2030-01-01T09:00:00Z) or milliseconds since 1970"}
		}
	default:
		return nil, &httpx.Refusal{Why: "time must be an ISO 8601 date-time or milliseconds since 1970"}
	}
	now := h.p.r.clock()
	switch {
	case !at.After(now):
		return nil, &httpx.Refusal{Why: "the time has passed"}
	case at.Sub(now) > maxScheduleAhead:
		return nil, &httpx.Refusal{Why: "the time is more than a year away"}
	}
	return nil, h.putSchedule(ctx, store.Schedule{RemixletID: h.id, Name: name, Next: at, Action: action})
}

func (h *remixletHost) putSchedule(ctx context.Context, sc store.Schedule) error {
	if err := h.p.r.st.PutSchedule(ctx, sc); err != nil {
		if errors.Is(err, store.ErrInvalid) {
			return &httpx.Refusal{Why: fmt.Sprintf("a remixlet may have at most %d schedules", store.MaxSchedules)}
		}
		return fmt.Errorf("saving a schedule: %w", err)
	}
	h.p.r.logf(h.id, "info", "scheduled %q: next at %s", sc.Name, sc.Next.UTC().Format(time.RFC3339))
	return nil
}

func rmxScheduleCancel(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	if err := needSchedule(h, "rmx.schedule"); err != nil {
		return nil, err
	}
	name, err := scheduleName(args)
	if err != nil {
		return nil, err
	}
	if err := h.p.r.st.DeleteSchedule(ctx, h.id, name); err != nil {
		return nil, fmt.Errorf("cancelling a schedule: %w", err)
	}
	return nil, nil
}

// scheduledMessage is what an rmx.onMessage callback receives.
type scheduledMessage struct {
	Schedule string          `json:"schedule"`
	Data     json.RawMessage `json:"data"`
	At       int64           `json:"at"`
}

// rmxOnMessage registers the callback and hands it the messages queued for the remixlet, each
// once. The listener is not one the page agent's events may reach: messages come only from
// here.
func rmxOnMessage(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	if err := needSchedule(h, "rmx.onMessage"); err != nil {
		return nil, err
	}
	listener, err := listenerArg(args, 0, "the callback")
	if err != nil {
		return nil, err
	}
	st := h.p.r.st
	msgs, err := st.TakeMessages(ctx, h.id)
	if err != nil {
		return nil, fmt.Errorf("taking queued messages: %w", err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	go func() {
		defer httpx.Recovered(h.p.r.log, "delivering scheduled messages")
		for i, m := range msgs {
			err := h.p.dispatch(h, listener, scheduledMessage{Schedule: m.Schedule, Data: m.Data, At: m.Created.UnixMilli()})
			if err != nil {
				// Not delivered (the page went): the rest wait for the next page load.
				for _, back := range msgs[i:] {
					if _, qerr := st.QueueMessage(h.p.r.ctx, h.id, back.Schedule, back.Data); qerr != nil {
						h.p.r.logf(h.id, "warn", "a scheduled message was lost: %v", qerr)
					}
				}
				return
			}
		}
		h.p.r.logf(h.id, "info", "delivered %d scheduled message(s)", len(msgs))
	}()
	return nil, nil
}

// Scheduler runs the due schedules of every remixlet. Use NewScheduler.
type Scheduler struct {
	st   *store.Store
	log  *slog.Logger
	now  func() time.Time
	tick time.Duration
	// logf writes a line to a remixlet's log.
	logf func(remixlet, level, format string, args ...any)
	// send writes v to the connected pages that match, and reports how many it reached.
	send func(ctx context.Context, match func(page.Info) bool, v any) int

	runMu sync.Mutex // one run at a time
	stop  context.CancelFunc
	done  chan struct{}
}

// NewScheduler makes the scheduler of the remixlets in st: it shows notifications and opens
// pages through pages, writes to the remixlets' logs and reads the clock of r (rmx.schedule
// measures from it too). Start runs it; Close stops it.
func NewScheduler(st *store.Store, log *slog.Logger, pages *page.Hub, r *Runner) *Scheduler {
	if log == nil {
		log = slog.Default()
	}
	return &Scheduler{st: st, log: log, now: r.clock, tick: defaultScheduleTick, send: pages.SendWhere, logf: r.logf}
}

// Start runs the scheduler until Close.
func (sc *Scheduler) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	sc.stop, sc.done = cancel, make(chan struct{})
	go func() {
		defer close(sc.done)
		defer httpx.Recovered(sc.log, "the scheduler")
		t := time.NewTicker(sc.tick)
		defer t.Stop()
		for {
			if _, err := sc.RunDue(ctx, sc.now()); err != nil && ctx.Err() == nil {
				sc.log.Warn("running schedules", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Close stops the scheduler and waits for a run in progress.
func (sc *Scheduler) Close() {
	if sc.stop != nil {
		sc.stop()
		<-sc.done
	}
}

// RunDue runs every schedule due at now and reports how many actions ran: the scheduler does
// this every few seconds; tests call it for a clock jump.
func (sc *Scheduler) RunDue(ctx context.Context, now time.Time) (int, error) {
	sc.runMu.Lock()
	defer sc.runMu.Unlock()
	ran := 0
	for {
		due, err := sc.st.DueSchedules(ctx, now, 100)
		if err != nil {
			return ran, fmt.Errorf("running schedules: %w", err)
		}
		if len(due) == 0 {
			return ran, nil
		}
		for _, s := range due {
			ok, err := sc.runOne(ctx, s, now)
			if err != nil {
				return ran, fmt.Errorf("running schedule %q of %s: %w", s.Name, s.RemixletID, err)
			}
			if ok {
				ran++
			}
		}
	}
}

// runOne runs one due schedule if its remixlet may run it now, and moves it on (or drops it).
func (sc *Scheduler) runOne(ctx context.Context, s store.Schedule, now time.Time) (bool, error) {
	next := time.Time{}
	if s.Every > 0 {
		next = s.Next.Add(s.Every)
		if !next.After(now) {
			next = now.Add(s.Every) // missed runs (the proxy was off) are not caught up
		}
	}
	m, why, err := sc.standing(ctx, s.RemixletID)
	if err != nil {
		return false, err
	}
	switch {
	case m == nil && why == "":
		return false, sc.st.DeleteSchedules(ctx, s.RemixletID) // deleted, or no longer allowed
	case m == nil:
		if s.Every == 0 {
			sc.logf(s.RemixletID, "warn", "schedule %q did not run and was dropped: %s", s.Name, why)
		}
		_, err := sc.st.FinishSchedule(ctx, s, next)
		return false, err
	}
	// Finish first: an action runs at most once per due time, even if the proxy stops midway.
	if changed, err := sc.st.FinishSchedule(ctx, s, next); err != nil || !changed {
		return false, err
	}
	var a scheduleAction
	if err := json.Unmarshal(s.Action, &a); err != nil {
		sc.logf(s.RemixletID, "error", "schedule %q: its stored action does not parse", s.Name)
		return false, nil
	}
	switch {
	case a.Notify != nil:
		title, body, err := checkNotifyText(a.Notify.Title, a.Notify.Body)
		if err != nil {
			sc.logf(s.RemixletID, "warn", "refused: schedule %q: %v", s.Name, err)
			return false, nil
		}
		// Only on the remixlet's own pages: a page of another site must not see what the
		// remixlet says (it could read the toast's text from the rendering, e.g. window.find).
		n := sc.send(ctx, func(p page.Info) bool {
			u, err := url.Parse(p.URL)
			return err == nil && m.MatchesURL(u)
		}, panel.Notify{Type: panel.TypeNotify, Remixlet: s.RemixletID, Source: m.Name, Title: title, Body: body})
		sc.logf(s.RemixletID, "info", "schedule %q: notification (shown on %d of its open pages): %s", s.Name, n, oneLine(title, body))
	case a.Open != "":
		u, err := checkOpenURL(m, a.Open)
		if err != nil {
			sc.logf(s.RemixletID, "warn", "refused: schedule %q: %v", s.Name, err)
			return false, nil
		}
		if paused, err := sc.st.IsSitePaused(ctx, u.Hostname()); err != nil || paused {
			sc.logf(s.RemixletID, "warn", "schedule %q: not opened: remixlets are paused on %s", s.Name, u.Hostname())
			return false, err
		}
		if n := sc.open(ctx, u, m); n == 0 {
			sc.logf(s.RemixletID, "warn", "schedule %q: %s not opened: none of its pages on %s is open", s.Name, httpx.Clip(u.String(), 200), httpx.OriginOf(u))
		} else {
			sc.logf(s.RemixletID, "info", "schedule %q: opened %s", s.Name, httpx.Clip(u.String(), 200))
		}
	case a.Message != nil:
		dropped, err := sc.st.QueueMessage(ctx, s.RemixletID, s.Name, a.Message)
		if err != nil {
			sc.logf(s.RemixletID, "error", "schedule %q: the message was not queued: %v", s.Name, err)
			return false, nil
		}
		if dropped > 0 {
			sc.logf(s.RemixletID, "warn", "schedule %q: %d old message(s) dropped; at most %d wait for a page load", s.Name, dropped, store.MaxMessages)
		}
	default:
		return false, nil
	}
	return true, nil
}

// standing returns the active manifest of a remixlet whose schedules may run now. Otherwise m is
// nil and why says why they wait (paused, switched off, archived), or is empty when they must
// go (deleted, or the active version lacks the schedule permission).
func (sc *Scheduler) standing(ctx context.Context, id string) (m *sandbox.Manifest, why string, err error) {
	rx, err := sc.st.Remixlet(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, "", nil
	case err != nil:
		return nil, "", fmt.Errorf("checking the remixlet: %w", err)
	case !rx.Enabled:
		return nil, "the remixlet is paused", nil
	case rx.Archived:
		return nil, "the remixlet is archived", nil
	}
	v, ok, err := sc.st.Active(ctx, id)
	if err != nil {
		return nil, "", fmt.Errorf("reading the active version: %w", err)
	}
	if !ok {
		return nil, "the remixlet has no active version", nil
	}
	m, problems := sandbox.ParseManifest(v.Files[sandbox.ManifestFile])
	if len(problems) > 0 || m == nil || !m.HasPermission(sandbox.PermSchedule) {
		sc.logf(id, "warn", "its schedules were deleted: the active version does not allow schedule")
		return nil, "", nil
	}
	return m, "", nil
}

// open shows u through a connected page of its origin: one already at u is focused; else the
// oldest page of the origin that m's matches also cover (one of the remixlet's own pages, so a
// page the person works in elsewhere on the site is not taken away) navigates there.
func (sc *Scheduler) open(ctx context.Context, u *url.URL, m *sandbox.Manifest) int {
	origin, target := httpx.OriginOf(u), u.String()
	msg := panel.Open{Type: panel.TypeOpen, URL: target, Source: m.Name}
	if n := sc.send(ctx, func(s page.Info) bool { return s.URL == target }, msg); n > 0 {
		return n
	}
	sent := false
	return sc.send(ctx, func(s page.Info) bool {
		if sent || s.Origin != origin {
			return false
		}
		pu, err := url.Parse(s.URL)
		if err != nil || !m.MatchesURL(pu) {
			return false
		}
		sent = true
		return true
	}, msg)
}
