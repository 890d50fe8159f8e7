package remixlet

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/fetch"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// The runner is a page.Listener: it hears of every page session (see the package doc for what
// it does with them).

var _ page.Listener = (*Runner)(nil)

// Opened starts the remixlets of a page whose agent has connected and been welcomed.
func (r *Runner) Opened(ctx context.Context, sess *page.Session) {
	r.pageConnected(ctx, r.pageConnOf(sess))
}

// Navigated matches the page's remixlets again against its new URL, after a same-origin SPA
// navigation.
func (r *Runner) Navigated(ctx context.Context, sess *page.Session) {
	r.pageNavigated(ctx, sess.ID())
}

// Message takes a page-agent message of a type the channel does not handle itself.
func (r *Runner) Message(ctx context.Context, sess *page.Session, typ string, raw json.RawMessage) {
	r.pageMessage(sess.ID(), typ, raw)
}

// Gone stops the remixlets of a page whose agent disconnected.
func (r *Runner) Gone(sess *page.Session) {
	r.pageGone(sess.ID())
}

// pageConnOf adapts a page session to what the runner needs of it.
func (r *Runner) pageConnOf(sess *page.Session) pageConn {
	return pageConn{
		id:    sess.ID(),
		url:   func() string { return sess.Info().URL },
		title: func() string { return sess.Info().Title },
		send:  sess.Send,

		firstSheets: sess.FirstSheets(),
		setCommands: sess.SetCommands,
	}
}

// pageConn is one connected page agent, as the runner sees it.
type pageConn struct {
	id    string
	url   func() string                          // the page's current URL
	title func() string                          // its current title
	send  func(ctx context.Context, v any) error // writes one message to the page agent

	firstSheets map[string]int64 // the first-frame sheets the page agent holds (firstframe.go)
	// setCommands gives the page's panel a remixlet's commands (rmx_menu.go); nil in tests
	// that do not need it.
	setCommands func(remixlet, source string, cmds []page.CommandItem, run page.RunFunc)
}

// Defaults of the runner's timings.
const (
	// defaultOpTimeout bounds waiting for the page agent's answer to one dom operation.
	defaultOpTimeout = 5 * time.Second
	// defaultStandingTTL is how long a remixlet's standing in the store (enabled, active
	// version, site paused) is reused before it is read again.
	defaultStandingTTL = 250 * time.Millisecond
)

// Runner runs the remixlets of every connected page. It starts the sandbox supervisor ahead of
// the first page that needs it (warm.go), or on first use, and stops it on Close. Use NewRunner.
type Runner struct {
	st          *store.Store
	log         *slog.Logger
	supCfg      sandbox.SupervisorConfig
	opTimeout   time.Duration
	standingTTL time.Duration
	idleGrace   time.Duration // document_idle's wait for load after DOMContentLoaded (runat.go)

	guard    redirectGuard // addresses remixlets wrote, by page session, checked on redirects (redirect.go)
	opened   openedDocs    // documents those addresses opened, their navigations checked (clientredirect.go)
	embeds   embedGuard    // the embeds pages asked for, asked again while a script runs refused (embedguard.go)
	net      *fetch.Client // rmx.fetch's client (rmx_fetch.go); nil: rmx.fetch is refused
	observed *Observed     // network:observe's records (rmx_observe.go); nil: none
	// now is the clock of the rmx services (rmx.schedule's times, rmx.notify's rate) and of the
	// scheduler; nil: time.Now.
	now func() time.Time
	// State of the rmx services shared by a remixlet's pages.
	fetches     fetchSlots      // rmx.fetch's running fetches (rmx_fetch.go)
	notifyRates notifyRates     // rmx.notify's rate (rmx_notify.go)
	watchers    storageWatching // rmx.storage.onChange's callbacks (rmx_storage_events.go)
	styles      styleChecks     // checked stylesheets by version (firstframe.go)
	standingC   standingCache   // the remixlets' standing for the injection (firstframe.go)

	logs *remixletLogWriter // log lines and runs, batched to the store (logs.go)
	ctx  context.Context
	stop context.CancelFunc

	// The warm sandbox (warm.go): whether the supervisor has started, and a Warm in progress.
	supStarted    atomic.Bool
	warming       atomic.Bool
	standingReads atomic.Int64 // how many times standing read the store (tests, debugging)

	mu       sync.Mutex
	sup      *sandbox.Supervisor
	supErr   error
	supErrAt time.Time           // when supErr happened: the start is tried again supervisorRetry later
	pages    map[string]*pageRun // by session ID
	closed   bool
}

// Config is what the runner needs.
type Config struct {
	// Store holds the remixlets, their versions, logs, storage and schedules. Required.
	Store *store.Store
	// Sandbox configures the sandbox supervisor, started ahead of the first page that needs it
	// (Warm, Prepare) or by it. If Sandbox.Log is nil, the supervisor's lines go to Logger.
	Sandbox sandbox.SupervisorConfig
	// Logger receives the runner's own lines (each remixlet's go to its log in the store). If
	// nil, slog.Default().
	Logger *slog.Logger
	// Fetch is rmx.fetch's client. If nil, rmx.fetch is refused.
	Fetch *fetch.Client
	// Observed are network:observe's records. If nil, rmx.network finds nothing.
	Observed *Observed
	// Now is the clock of the rmx services (rmx.schedule's times, rmx.notify's rate) and of
	// the scheduler. If nil, time.Now.
	Now func() time.Time
}

// NewRunner makes a runner; Close stops it.
func NewRunner(cfg Config) *Runner {
	r := newRunner(cfg.Store, cfg.Sandbox, cfg.Logger)
	r.net, r.observed, r.now = cfg.Fetch, cfg.Observed, cfg.Now
	return r
}

func newRunner(st *store.Store, cfg sandbox.SupervisorConfig, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{
		st: st, log: log, supCfg: cfg,
		opTimeout: defaultOpTimeout, standingTTL: defaultStandingTTL, idleGrace: sandbox.IdleGrace,
		logs: newRemixletLogWriter(st, log).start(), ctx: ctx, stop: cancel,
		pages: map[string]*pageRun{},
	}
	if r.supCfg.Log == nil {
		r.supCfg.Log = func(level, msg string) { r.log.Info("sandbox: "+msg, "level", level) }
	}
	return r
}

// clock is the time now, by the runner's clock.
func (r *Runner) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// logf queues a line for a remixlet's log, written in a batch off the caller's goroutine (the
// sandbox supervisor's log callbacks must not block); see remixletLogWriter for the bound.
func (r *Runner) logf(remixlet, level, format string, args ...any) {
	r.logs.add(remixlet, level, fmt.Sprintf(format, args...))
}

// ran records that a remixlet started on the page at pageURL, for the manager's "last run".
func (r *Runner) ran(remixlet, pageURL string) {
	site := ""
	if u, err := url.Parse(pageURL); err == nil {
		site = u.Hostname()
	}
	r.logs.ran(remixlet, site)
}

// supervisor returns the running supervisor, starting it on first use (or ahead of it: Warm).
// A supervisor that could not start is tried again supervisorRetry after the failure.
func (r *Runner) supervisor() (*sandbox.Supervisor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, sandbox.ErrSupervisorClosed
	}
	if r.sup == nil && (r.supErr == nil || time.Since(r.supErrAt) >= supervisorRetry) {
		sup := sandbox.NewSupervisor(r.supCfg)
		if err := sup.Start(r.ctx); err != nil {
			r.supErr, r.supErrAt = err, time.Now()
		} else {
			r.sup, r.supErr = sup, nil
			r.supStarted.Store(true)
		}
	}
	if r.sup != nil {
		return r.sup, nil
	}
	return nil, r.supErr
}

// Close stops every sandbox and the supervisor, and writes the last log lines.
func (r *Runner) Close() {
	r.mu.Lock()
	r.closed = true
	pages := r.pages
	r.pages = map[string]*pageRun{}
	sup := r.sup
	r.mu.Unlock()
	for _, p := range pages {
		p.end()
	}
	r.stop()
	if sup != nil {
		select {
		case <-sup.Done():
		case <-time.After(3 * time.Second):
		}
	}
	r.logs.close() // after the sandboxes, so their last lines are written too
}

// candidate is a remixlet that should run on a page.
type candidate struct {
	id        string
	versionID int64
	manifest  *sandbox.Manifest
	script    string
	hasScript bool
	style     []byte
	hasStyle  bool
	site      string // the page's site (weburl.Site): where its writes may send (sendhosts.go)
}

// remixletsFor lists the remixlets that should run on pageURL: enabled, not archived, with an
// active version whose manifest matches the page, on a site that is not paused.
func (r *Runner) remixletsFor(ctx context.Context, pageURL string) ([]candidate, error) {
	return r.remixletsFrom(ctx, r.st, pageURL)
}

// remixletsFrom is remixletsFor reading the remixlets' standing from src: the store, or a
// recent copy of it (firstframe.go).
func (r *Runner) remixletsFrom(ctx context.Context, src remixletSource, pageURL string) ([]candidate, error) {
	u, err := url.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("parsing page URL: %w", err)
	}
	if paused, err := src.IsSitePaused(ctx, u.Hostname()); err != nil || paused {
		return nil, err
	}
	list, err := src.ListRemixlets(ctx)
	if err != nil {
		return nil, err
	}
	site := weburl.Site(u.Hostname())
	var out []candidate
	for _, rx := range list {
		if !rx.Enabled || rx.Archived || rx.ActiveVersionID == 0 {
			continue
		}
		v, ok, err := src.Active(ctx, rx.ID)
		if err != nil || !ok {
			continue
		}
		m, problems := r.manifestOf(v)
		if len(problems) > 0 || m == nil {
			r.logf(rx.ID, "error", "not started: its stored manifest.json does not parse: %v", problems[0].Error())
			continue
		}
		if !m.MatchesURL(u) {
			continue
		}
		script, hasScript := v.Files[sandbox.ScriptFile]
		style, hasStyle := v.Files[sandbox.StyleFile]
		out = append(out, candidate{id: rx.ID, versionID: v.ID, manifest: m,
			script: string(script), hasScript: hasScript, style: style, hasStyle: hasStyle, site: site})
	}
	return out, nil
}

// pageConnected starts the remixlets of a page that just connected.
func (r *Runner) pageConnected(ctx context.Context, pc pageConn) {
	p := r.newPageRun(pc)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	// A session ID is not reused while its page is connected; should it ever be, the old
	// page's remixlets are stopped rather than left running unreachable.
	old := r.pages[pc.id]
	r.pages[pc.id] = p
	r.mu.Unlock()
	if old != nil {
		old.end()
	}
	r.guard.sessionStarted(pc.id, pc.url())  // a page back from the back/forward cache keeps its guarded addresses
	r.opened.sessionStarted(pc.id, pc.url()) // a document a remixlet's address opened lives with its session
	p.sync(ctx)
}

// Rematch matches the remixlets of a connected page again, as after a navigation: for a page
// whose remixlets changed in the store while it stays open (the chat's own tab).
func (r *Runner) Rematch(ctx context.Context, sessionID string) { r.pageNavigated(ctx, sessionID) }

// LastRun is the newest run the runner saw for the remixlet since the proxy started (the store
// has older ones; the newest is written with the next batch, logs.go).
func (r *Runner) LastRun(remixlet string) (store.Run, bool) { return r.logs.lastRun(remixlet) }

// pageNavigated matches the remixlets of a connected page again after an SPA navigation.
func (r *Runner) pageNavigated(ctx context.Context, sessionID string) {
	r.mu.Lock()
	p := r.pages[sessionID]
	r.mu.Unlock()
	if p != nil {
		r.opened.sessionMoved(sessionID, p.pc.url()) // its Referer now names the new address
		r.guard.sessionMoved(sessionID, p.pc.url())
		p.sync(ctx)
	}
}

// sync brings the page's remixlets in line with its current URL: the candidates for it
// (remixletsFor, the same rules on connect and after a navigation) that the page has not taken on
// yet get their stylesheet and sandbox; the ones it took on that are no longer candidates are
// stopped and their stylesheet emptied; the others are left alone. Calls for one page are
// serialized.
func (p *pageRun) sync(ctx context.Context) {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if p.isEnded() {
		return
	}
	cands, err := p.r.remixletsFor(ctx, p.pc.url())
	if err != nil {
		// Keep what runs: the Host checks every call against the page's URL anyway.
		p.r.log.Warn("listing remixlets for a page", "err", err)
		return
	}
	plan, ok := p.planSync(cands)
	if !ok {
		return
	}
	p.applySync(ctx, plan)
}

// syncPlan is what one sync does once the page's state is updated, in the order applySync
// does it.
type syncPlan struct {
	stopped  []*runningRemixlet // sandboxes to stop
	failed   []pendingOp        // their operations in flight, to fail
	clear    []string           // stylesheets to empty
	released []string           // remixlets to release in the page
	styles   []candidate        // stylesheets to send
	scripts  []candidate        // scripts to start now
}

// planSync updates the page's state for cands, the remixlets that match it now, and returns
// what is left to do outside the lock; ok is false when the page has ended.
func (p *pageRun) planSync(cands []candidate) (plan syncPlan, ok bool) {
	want := make(map[string]int64, len(cands))
	for _, c := range cands {
		want[c.id] = c.versionID
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return plan, false
	}
	// On the first sync, the first-frame sheets the page holds count as sent (firstframe.go).
	firstKept, firstEmpty := p.r.acceptFirstSheets(p.firstSheets, cands)
	p.firstSheets = nil
	for _, c := range cands {
		// A first-frame sheet's addresses are guarded for this session as a sent one's are
		// (styleguard.go); one the guard cannot hold is sent again, and emptied by sendStyle.
		if firstKept[c.id] && p.r.guard.add(p.pc.id, p.pc.url(), c.id, c.manifest, p.r.checkedStyle(c).addrs) != nil {
			delete(firstKept, c.id)
		}
	}
	plan.clear = append(plan.clear, firstEmpty...)
	p.dropUnwanted(want, &plan)
	p.takeOn(cands, firstKept, &plan)
	return plan, true
}

// dropUnwanted lets go of the remixlets the page took on whose version is not in want: no
// longer a candidate (out of its matches, paused, switched off, deleted), or another version
// is active now. Each is stopped and released in the page, its operations in flight fail, and
// its stylesheet is emptied unless a new version takes it over (takeOn). p.mu is held.
func (p *pageRun) dropUnwanted(want map[string]int64, plan *syncPlan) {
	gone := map[string]bool{}
	for id, version := range p.matched {
		if want[id] == version {
			continue
		}
		delete(p.matched, id)
		delete(p.waiting, id)
		gone[id] = true
		plan.released = append(plan.released, id)
		if rr := p.running[id]; rr != nil {
			rr.host.stopped = true
			delete(p.running, id)
			plan.stopped = append(plan.stopped, rr)
		}
		if p.styled[id] {
			delete(p.styled, id)
			if want[id] == 0 {
				plan.clear = append(plan.clear, id)
			}
		}
	}
	if len(plan.stopped) > 0 {
		for opID, op := range p.pending {
			if gone[op.remixlet] {
				delete(p.pending, opID)
				plan.failed = append(plan.failed, op)
			}
		}
	}
}

// takeOn takes on the candidates the page does not run yet: a stylesheet to send unless the
// page holds it since its first frame (firstKept), a script to start now or when the page
// reaches its run time (runat.go). Candidates already taken on are left as they run. p.mu is
// held.
func (p *pageRun) takeOn(cands []candidate, firstKept map[string]bool, plan *syncPlan) {
	for _, c := range cands {
		if _, ok := p.matched[c.id]; ok {
			continue // still matches, same version: left running as it is
		}
		p.matched[c.id] = c.versionID
		if c.hasStyle {
			p.styled[c.id] = true
			if firstKept[c.id] {
				if !c.hasScript {
					p.r.ran(c.id, p.pc.url()) // in the page since its first frame
				}
			} else {
				plan.styles = append(plan.styles, c)
			}
		}
		if c.hasScript {
			if p.due(c.manifest.RunAt) {
				plan.scripts = append(plan.scripts, c)
			} else {
				p.waiting[c.id] = c // started when the page reaches its run time (runat.go)
			}
		}
	}
}

// applySync does what planSync left to do: stops, failures and releases first, then the
// stylesheets (they need no sandbox, and they hide what they hide before any script has
// started), then the scripts.
func (p *pageRun) applySync(ctx context.Context, plan syncPlan) {
	r, pc := p.r, p.pc
	for _, rr := range plan.stopped {
		if rr.handle != nil {
			rr.handle.Stop()
		}
	}
	for _, op := range plan.failed {
		op.ch <- opResult{err: "the page no longer matches the remixlet"}
	}
	for _, id := range plan.clear {
		r.sendCSS(ctx, pc, id, "", "")
	}
	for _, id := range plan.released {
		r.sendRelease(ctx, pc, id)
	}
	for _, c := range plan.styles {
		r.sendStyle(ctx, pc, c)
		if !c.hasScript {
			r.ran(c.id, pc.url()) // a style-only remixlet runs by being inserted
		}
	}
	p.startScripts(plan.scripts)
}

// sendStyle checks a remixlet's style.css again, for this insertion, and sends what passes to
// the page. Each refused part goes to the remixlet's log; this runs once each time the
// remixlet starts matching the page (on connect, or after a navigation into its matches).
func (r *Runner) sendStyle(ctx context.Context, pc pageConn, c candidate) {
	cs := r.checkedStyle(c)
	clean, own, problems := cs.clean, cs.own, cs.problems
	for _, p := range problems {
		r.logf(c.id, "warn", "refused: %s %d:%d: %s; left out of the stylesheet", sandbox.StyleFile, p.Line, p.Column, p.Reason)
	}
	// What the sheet loads is guarded before the page has it (redirect.go).
	if err := r.guard.add(pc.id, pc.url(), c.id, c.manifest, cs.addrs); err != nil {
		r.logf(c.id, "warn", "refused: %s was not inserted: %v", sandbox.StyleFile, err)
		clean, own = nil, nil // empties a first-frame copy the page may hold
	}
	r.sendCSS(ctx, pc, c.id, string(clean), string(own))
}

// sendCSS sends a remixlet's stylesheet and its own copy (panel.Style) to the page; empty ones
// empty the sheets.
func (r *Runner) sendCSS(ctx context.Context, pc pageConn, remixlet, css, own string) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	if err := pc.send(ctx, panel.Style{Type: panel.TypeStyle, Remixlet: remixlet, CSS: css, Own: own}); err != nil {
		r.log.Debug("sending a remixlet's stylesheet", "remixlet", remixlet, "err", err)
	}
}

// sendRelease tells the page agent a remixlet stopped on the page: it drops the remixlet's
// handles and dom.on listeners and empties its stylesheet (panel.Release).
func (r *Runner) sendRelease(ctx context.Context, pc pageConn, remixlet string) {
	ctx, cancel := context.WithTimeout(ctx, r.opTimeout)
	defer cancel()
	if pc.setCommands != nil {
		pc.setCommands(remixlet, "", nil, nil)
	}
	if err := pc.send(ctx, panel.Release{Type: panel.TypeRelease, Remixlet: remixlet}); err != nil {
		r.log.Debug("releasing a remixlet in the page", "remixlet", remixlet, "err", err)
	}
}

// resync matches the page's remixlets again, off the caller's goroutine: a remixlet's Host
// calls it when its standing changed (paused, switched off, deleted, another version active),
// so the page releases it, or runs the new version, without waiting for a navigation.
func (p *pageRun) resync() {
	p.r.mu.Lock()
	registered := p.r.pages[p.pc.id] == p
	p.r.mu.Unlock()
	if registered {
		go func() {
			defer httpx.Recovered(p.r.log, "matching a page's remixlets again")
			p.sync(p.r.ctx)
		}()
	}
}

// pageGone stops the remixlets of a page whose agent disconnected.
func (r *Runner) pageGone(sessionID string) {
	r.mu.Lock()
	p := r.pages[sessionID]
	delete(r.pages, sessionID)
	r.mu.Unlock()
	if p != nil {
		// Wait for a connect or navigation in progress, so nothing starts after this returns.
		p.syncMu.Lock()
		p.end()
		p.syncMu.Unlock()
		r.guard.sessionEnded(sessionID, p.pc.url()) // its addresses stay guarded for the grace period
		r.opened.sessionEnded(sessionID)
	}
}

// pageMessage handles the remixlet traffic of a page: results, events, mutation notices.
func (r *Runner) pageMessage(sessionID, typ string, raw json.RawMessage) {
	r.mu.Lock()
	p := r.pages[sessionID]
	r.mu.Unlock()
	if p == nil {
		return
	}
	p.receive(typ, raw)
}

// pageRun is the remixlets running for one page session.
type pageRun struct {
	r  *Runner
	pc pageConn

	// syncMu serializes matching (connect, navigations) and the end of the page (pageGone).
	syncMu sync.Mutex

	mu      sync.Mutex
	ended   bool
	nextOp  uint64
	pending map[uint64]pendingOp
	running map[string]*runningRemixlet // by remixlet ID
	matched map[string]int64            // remixlets taken on for the page's current URL: their version
	styled  map[string]bool             // remixlets whose stylesheet the page has
	// Run times (runat.go): how far the document is, whether document_idle's point is reached,
	// its grace timer, and the scripts taken on that wait for their point, by remixlet ID.
	ready     readiness
	idle      bool
	idleTimer *time.Timer
	waiting   map[string]candidate
	// firstSheets are the first-frame sheets the page agent held when it connected, until the
	// first sync takes them (firstframe.go).
	firstSheets map[string]int64
}

type pendingOp struct {
	remixlet string
	ch       chan opResult
}

type opResult struct {
	ok    bool
	value json.RawMessage
	err   string
}

type runningRemixlet struct {
	host      *remixletHost
	handle    *sandbox.Handle
	listeners map[int64]bool // dom.on listeners relayed for it; guarded by pageRun.mu
	// started is closed when the sandbox's start is over, with handle set or not (start); nil
	// when there was nothing to wait for.
	started chan struct{}
}

func (r *Runner) newPageRun(pc pageConn) *pageRun {
	return &pageRun{r: r, pc: pc, pending: map[uint64]pendingOp{}, running: map[string]*runningRemixlet{},
		matched: map[string]int64{}, styled: map[string]bool{}, waiting: map[string]candidate{}, firstSheets: pc.firstSheets}
}

func (p *pageRun) isEnded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

// start runs one remixlet for the page.
func (p *pageRun) start(sup *sandbox.Supervisor, c candidate) {
	host := p.newHost(c.id, c.versionID, c.manifest)
	rr := &runningRemixlet{host: host, listeners: map[int64]bool{}, started: make(chan struct{})}
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		return
	}
	p.running[c.id] = rr
	p.mu.Unlock()
	defer close(rr.started) // after handle is set, or the start failed
	id := c.id
	h, err := sup.StartRemixlet(sandbox.RemixletConfig{
		RemixletID: c.id,
		API:        c.manifest.API,
		Script:     c.script,
		Page:       sandbox.PageInfo{URL: p.pc.url(), Title: p.pc.title()},
		Host:       host,
		Log:        func(level, msg string) { p.r.logf(id, level, "%s", msg) },
	})
	if err != nil {
		p.r.logf(id, "error", "not started: %v", err)
		p.mu.Lock()
		delete(p.running, c.id)
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		h.Stop()
		return
	}
	rr.handle = h
	p.mu.Unlock()
	p.r.ran(id, p.pc.url())
	// Read the remixlet's standing now, while the sandbox starts the script, so that its first
	// call finds it cached (standingTTL) instead of waiting for the store.
	go func() {
		defer httpx.Recovered(p.r.log, "reading a remixlet's standing")
		host.checkStanding(p.r.ctx)
	}()
}

// end stops every remixlet of the page and fails their waiting operations.
func (p *pageRun) end() {
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		return
	}
	p.ended = true
	if p.idleTimer != nil {
		p.idleTimer.Stop()
	}
	p.waiting = map[string]candidate{}
	running := p.running
	p.running = map[string]*runningRemixlet{}
	pending := p.pending
	p.pending = map[uint64]pendingOp{}
	p.mu.Unlock()
	for _, rr := range running {
		if rr.handle != nil {
			rr.handle.Stop()
		}
	}
	for _, op := range pending {
		op.ch <- opResult{err: "the page went away"}
	}
}

// receive handles one page-agent message for the remixlets.
func (p *pageRun) receive(typ string, raw json.RawMessage) {
	switch typ {
	case panel.TypeHello, panel.TypeReady:
		p.readinessMessage(typ, raw)
	case panel.TypeResult:
		var m struct {
			ID    uint64          `json:"id"`
			Ok    bool            `json:"ok"`
			Value json.RawMessage `json:"value"`
			Error string          `json:"error"`
		}
		if json.Unmarshal(raw, &m) != nil {
			return
		}
		p.mu.Lock()
		op, ok := p.pending[m.ID]
		delete(p.pending, m.ID)
		p.mu.Unlock()
		if ok {
			op.ch <- opResult{ok: m.Ok, value: m.Value, err: httpx.Clip(m.Error, 1000)}
		}
	case panel.TypeEvent:
		var m struct {
			Remixlet string          `json:"remixlet"`
			Listener int64           `json:"listener"`
			Event    json.RawMessage `json:"event"`
		}
		if json.Unmarshal(raw, &m) != nil {
			return
		}
		p.mu.Lock()
		rr := p.running[m.Remixlet]
		var h *sandbox.Handle
		if rr != nil && rr.listeners[m.Listener] {
			h = rr.handle
		}
		p.mu.Unlock()
		if h != nil { // events for another remixlet's or an unknown listener are dropped
			h.Dispatch(m.Listener, m.Event)
		}
	case panel.TypeMutated:
		p.mu.Lock()
		var rrs []*runningRemixlet
		for _, rr := range p.running {
			if rr.handle != nil {
				rrs = append(rrs, rr)
			}
		}
		p.mu.Unlock()
		for _, rr := range rrs {
			// A paused remixlet's keeps are not woken: their calls would only be refused.
			if rr.host.allowed(p.r.ctx, "rmx.keep checks") {
				rr.handle.Mutated()
			}
		}
	}
}

// relay sends one dom operation of a remixlet to the page agent and waits for its answer
// (ask, rmx_clipboard.go). A dom.on call's listener is registered first, so the events it
// brings are delivered.
func (p *pageRun) relay(ctx context.Context, h *remixletHost, op string, call domCall) (json.RawMessage, error) {
	if call.listener != 0 {
		p.mu.Lock()
		if rr := p.running[h.id]; rr != nil && rr.host == h && !p.ended && !h.stopped {
			rr.listeners[call.listener] = true
		}
		p.mu.Unlock()
	}
	anyArgs := make([]any, len(call.args))
	for i, a := range call.args {
		anyArgs[i] = a
	}
	wait := p.r.opTimeout
	if call.wait > 0 {
		wait = call.wait + waitForRelayMargin
	}
	return p.askWithin(ctx, h, wait, func(id uint64) any {
		return panel.Op{Type: panel.TypeOp, ID: id, Remixlet: h.id, Op: op, Args: anyArgs,
			Hosts: call.hosts, Relative: call.relative, Addrs: call.opAddrs()}
	})
}
