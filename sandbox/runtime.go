package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// APIVersion is the remixlet API version this runtime implements (rmx.version). From the first
// release the API only grows: a runtime supports every version from MinAPIVersion to APIVersion.
const (
	APIVersion    = 1
	MinAPIVersion = 1
)

// Host answers the dom.* and rmx.* calls of one runtime. Calls cross as JSON data only: ns is
// "dom" or "rmx", method is a name from the allow-lists (DOMMethods, RMXMethods; storage calls
// are "storage.get" and so on), args is a JSON array of the call's arguments. A function passed
// where the API takes a listener crosses as {"$listener": N}; the Host later delivers events for
// it with Runtime.Dispatch. The result is any JSON value (empty means undefined); an error
// rejects the call's Promise with the error's text, which the remixlet sees, so it must not
// carry secrets.
//
// Call runs on its own goroutine, at most Limits.MaxPendingCalls at a time per runtime; ctx is
// cancelled when the runtime stops.
type Host interface {
	Call(ctx context.Context, ns, method string, args json.RawMessage) (json.RawMessage, error)
}

// PageInfo describes the page a runtime runs for.
type PageInfo struct {
	// URL is the page's address. If empty, window and location are throwing getters.
	URL string `json:"url,omitempty"`
	// Title is the page's title when the runtime started.
	Title string `json:"title,omitempty"`
}

// RuntimeConfig configures one remixlet runtime (one per remixlet per page session).
type RuntimeConfig struct {
	// RemixletID names the remixlet in log lines and errors.
	RemixletID string
	// API is the API version stamped into the remixlet's manifest; NewRuntime refuses versions
	// outside MinAPIVersion..APIVersion.
	API int
	// Script is the remixlet's script.js. It runs inside an async function, so top-level await
	// works and top-level declarations are local to the script.
	Script string
	// Host answers dom.* and rmx.* calls. If nil, every such call (except rmx.log) is rejected.
	Host Host
	// Log receives console.*, rmx.log and the runtime's own refusals and stop reasons; level is
	// "debug", "info", "warn" or "error". If nil, lines are discarded. Called from the runtime's
	// goroutines; it must not block for long.
	Log func(level, msg string)
	// Limits bound the runtime; zero fields take their defaults.
	Limits Limits
	// Page is the page the runtime runs for; it feeds the read-only window.location.
	Page PageInfo

	// onTask, if set, is called on the loop goroutine before (true) and after (false) every
	// macrotask. The sandbox host uses it to tell the supervisor which runtime is running.
	onTask func(begin bool)
	// onStuck, if set, is called when a task ignores Interrupt for StuckGrace. The sandbox host
	// exits the process there; without it the runtime is only marked stopped and its goroutine
	// stays busy until the built-in returns.
	onStuck func(reason string)
}

// KilledError is the error of a runtime that was stopped by a limit or a failure rather than by
// Stop. Reason says what happened, in words fit for the remixlet's log.
type KilledError struct {
	RemixletID string
	Reason     string
}

func (e *KilledError) Error() string {
	return fmt.Sprintf("remixlet %s stopped: %s", e.RemixletID, e.Reason)
}

// errInterrupt is the value passed to goja's Interrupt by the watchdog and by Stop.
var errInterrupt = errors.New("sandbox: task interrupted")

// Runtime is one remixlet's goja runtime and its event loop. One goroutine (the loop) owns the
// goja runtime; timers, Host answers and dispatched events are queued to it as macrotasks.
// Runtime's exported methods are safe for concurrent use.
type Runtime struct {
	cfg    RuntimeConfig
	lim    Limits
	vm     *goja.Runtime
	prog   *goja.Program
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex // guards the fields below
	queue      []task
	events     int   // dispatched events queued and not yet run
	eventBytes int64 // their bytes (eventbytes.go)
	keepQueued bool
	stopped    bool
	err        error
	logRate    rateWindow
	logDropped int
	wake       chan struct{}
	done       chan struct{}

	wdMu        sync.Mutex // guards the watchdog state
	inTask      bool
	taskGen     uint64
	interrupted bool
	grace       *time.Timer
	taskCPU0    time.Duration // the process's CPU time when the current task began
	taskWall0   time.Time     // and the wall-clock time

	// Owned by the loop goroutine.
	in           intrinsics
	timers       map[int64]*rtTimer
	nextTimer    int64
	timerRate    rateWindow
	callRate     rateWindow
	pendingCalls int
	refusals     int
	listeners    map[int64]goja.Callable
	keeps        []*keep
	rejected     []*goja.Promise
}

// task is one macrotask: its name appears in budget and error messages.
type task struct {
	name string
	fn   func()
}

// NewRuntime creates a runtime for one remixlet, compiles its script and starts its event loop
// with the script's first run as the first macrotask. Errors name the remixlet; a syntax error
// carries the script's line and column.
func NewRuntime(cfg RuntimeConfig) (*Runtime, error) {
	r, err := newRuntime(cfg)
	if err != nil {
		return nil, err
	}
	r.enqueue(task{"script.js", func() {
		if _, err := r.vm.RunProgram(r.prog); err != nil {
			r.uncaught("script.js", err)
		}
	}})
	go r.loop()
	return r, nil
}

// newRuntime builds and tames the runtime without starting its loop.
func newRuntime(cfg RuntimeConfig) (*Runtime, error) {
	lim := cfg.Limits.WithDefaults()
	if cfg.API < MinAPIVersion || cfg.API > APIVersion {
		return nil, fmt.Errorf("starting remixlet %s: API version %d is not supported (this runtime supports %d to %d)",
			cfg.RemixletID, cfg.API, MinAPIVersion, APIVersion)
	}
	if len(cfg.Script) > lim.MaxScriptBytes {
		return nil, fmt.Errorf("starting remixlet %s: script.js is %d bytes, more than the %d allowed",
			cfg.RemixletID, len(cfg.Script), lim.MaxScriptBytes)
	}
	// The prefix has no newline, so line numbers in errors are the script's own.
	prog, err := goja.Compile("script.js", "(async function () {"+cfg.Script+"\n})()", false)
	if err != nil {
		return nil, fmt.Errorf("starting remixlet %s: compiling script.js: %w", cfg.RemixletID, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runtime{
		cfg:       cfg,
		lim:       lim,
		vm:        goja.New(),
		prog:      prog,
		ctx:       ctx,
		cancel:    cancel,
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
		timers:    make(map[int64]*rtTimer),
		listeners: make(map[int64]goja.Callable),
	}
	if err := r.setup(); err != nil {
		cancel()
		return nil, fmt.Errorf("starting remixlet %s: setting up the runtime: %w", cfg.RemixletID, err)
	}
	return r, nil
}

// Done is closed when the runtime has stopped, by Stop or by a limit.
func (r *Runtime) Done() <-chan struct{} { return r.done }

// Err reports why the runtime stopped: nil while running or after Stop, a *KilledError after a
// limit or failure stopped it.
func (r *Runtime) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Stop stops the runtime: a running task is interrupted, pending timers and calls are dropped.
// It does not wait for the loop goroutine.
func (r *Runtime) Stop() { r.stop(nil) }

// Dispatch delivers an event for a listener registered with dom.on (the {"$listener": N} it was
// given). The event is any JSON value; it runs as a macrotask. Events beyond
// Limits.MaxPendingEvents or Limits.MaxMessageBytes are refused with an error.
func (r *Runtime) Dispatch(listener int64, event json.RawMessage) error {
	if len(event) > r.lim.MaxMessageBytes {
		return fmt.Errorf("dispatching to remixlet %s: event of %d bytes is over the %d-byte limit",
			r.cfg.RemixletID, len(event), r.lim.MaxMessageBytes)
	}
	size := int64(len(event))
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return fmt.Errorf("dispatching to remixlet %s: runtime stopped", r.cfg.RemixletID)
	}
	if r.events >= r.lim.MaxPendingEvents {
		r.mu.Unlock()
		r.logf("warn", "event dropped: more than %d events waiting", r.lim.MaxPendingEvents)
		return fmt.Errorf("dispatching to remixlet %s: %d events already waiting", r.cfg.RemixletID, r.lim.MaxPendingEvents)
	}
	if r.eventBytes+size > int64(r.lim.MaxPendingEventBytes) {
		r.mu.Unlock()
		r.logf("warn", "event dropped: more than %d bytes of events waiting", r.lim.MaxPendingEventBytes)
		return fmt.Errorf("dispatching to remixlet %s: %d bytes of events already waiting", r.cfg.RemixletID, r.lim.MaxPendingEventBytes)
	}
	if !processEvents.Take(size) {
		r.mu.Unlock()
		r.logf("warn", "event dropped: the sandbox's runtimes hold %d bytes of events waiting", MaxProcessPendingEventBytes)
		return fmt.Errorf("dispatching to remixlet %s: the sandbox's runtimes hold %d bytes of events waiting", r.cfg.RemixletID, MaxProcessPendingEventBytes)
	}
	r.events++
	r.eventBytes += size
	r.mu.Unlock()
	ev := append(json.RawMessage(nil), event...)
	taken := func() { // the event leaves the queue to run (a stop releases what it leaves)
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.stopped {
			r.events--
			r.eventBytes -= size
			processEvents.Give(size)
		}
	}
	ok := r.enqueue(task{"event listener", func() {
		taken()
		fn, ok := r.listeners[listener]
		if !ok {
			return
		}
		arg, err := r.parseJSON(ev)
		if err != nil {
			r.logf("warn", "event for listener %d was not valid JSON: %v", listener, err)
			return
		}
		if _, err := fn(goja.Undefined(), arg); err != nil {
			r.uncaught("event listener", err)
		}
	}})
	if !ok {
		taken()
		return fmt.Errorf("dispatching to remixlet %s: runtime stopped", r.cfg.RemixletID)
	}
	return nil
}

// Mutated tells the runtime the page changed: every rmx.keep is checked again (and repaired if
// its check fails). Notices that arrive while a check is already queued are merged.
func (r *Runtime) Mutated() error {
	r.mu.Lock()
	if r.keepQueued {
		r.mu.Unlock()
		return nil
	}
	r.keepQueued = true
	r.mu.Unlock()
	if !r.enqueue(task{"rmx.keep check", func() {
		r.mu.Lock()
		r.keepQueued = false
		r.mu.Unlock()
		for _, k := range r.keeps {
			r.runKeep(k)
		}
	}}) {
		return fmt.Errorf("notifying remixlet %s: runtime stopped", r.cfg.RemixletID)
	}
	return nil
}

// enqueue adds a macrotask; it reports false if the runtime has stopped.
func (r *Runtime) enqueue(t task) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return false
	}
	r.queue = append(r.queue, t)
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return true
}

// next waits for the next macrotask; it reports false once the runtime has stopped.
func (r *Runtime) next() (task, bool) {
	for {
		r.mu.Lock()
		if r.stopped {
			r.mu.Unlock()
			return task{}, false
		}
		if len(r.queue) > 0 {
			t := r.queue[0]
			r.queue[0] = task{}
			r.queue = r.queue[1:]
			r.mu.Unlock()
			return t, true
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-r.done:
		}
	}
}

// loop is the goroutine that owns the goja runtime.
func (r *Runtime) loop() {
	defer r.teardown()
	for {
		t, ok := r.next()
		if !ok {
			return
		}
		r.runTask(t)
	}
}

// runTask runs one macrotask and the microtasks it queues under the task budget.
func (r *Runtime) runTask(t task) {
	r.wdMu.Lock()
	r.taskGen++
	gen := r.taskGen
	r.inTask, r.interrupted = true, false
	r.taskCPU0, _ = processCPU()
	r.taskWall0 = time.Now()
	r.wdMu.Unlock()
	if r.cfg.onTask != nil {
		r.cfg.onTask(true)
	}
	wd := time.AfterFunc(r.lim.TaskBudget, func() { r.watchdog(gen) })
	r.rejected = r.rejected[:0]
	panicked := r.safely(func() {
		t.fn()
		r.drain()
	})
	wd.Stop()
	r.wdMu.Lock()
	r.inTask = false
	interrupted := r.interrupted
	if r.grace != nil {
		r.grace.Stop()
		r.grace = nil
	}
	r.wdMu.Unlock()
	if r.cfg.onTask != nil {
		r.cfg.onTask(false)
	}
	switch {
	case panicked != nil:
		r.kill(fmt.Sprintf("internal error in %s: %v", t.name, panicked))
	case interrupted:
		r.vm.ClearInterrupt()
		r.kill(fmt.Sprintf("%s ran longer than its %v budget (an endless loop?)", t.name, r.lim.TaskBudget))
	default:
		r.reportUnhandled()
	}
}

// safely runs fn and returns what it panicked with, if anything, so that a bug in a binding
// stops one runtime instead of the process.
func (r *Runtime) safely(fn func()) (panicked any) {
	defer func() { panicked = recover() }()
	fn()
	return nil
}

// watchdog interrupts task gen if it is still running at the end of its budget, and arms the
// stuck timer for built-ins that ignore Interrupt.
func (r *Runtime) watchdog(gen uint64) {
	r.wdMu.Lock()
	defer r.wdMu.Unlock()
	if !r.inTask || r.taskGen != gen {
		return
	}
	// A task the machine kept waiting is not an endless loop: while the whole process has used
	// less CPU than the budget since the task began (so the task has too), the task gets the rest
	// of its budget, up to taskWallCap budgets of wall-clock time. When the process itself is
	// busy (other runtimes), this proves nothing and the budget is wall-clock time as before.
	if used, ok := processCPU(); ok && time.Since(r.taskWall0) < taskWallCap*r.lim.TaskBudget {
		if spent := used - r.taskCPU0; spent < r.lim.TaskBudget {
			time.AfterFunc(max(r.lim.TaskBudget-spent, time.Millisecond), func() { r.watchdog(gen) })
			return
		}
	}
	r.interrupted = true
	r.vm.Interrupt(errInterrupt)
	r.grace = time.AfterFunc(r.lim.StuckGrace, func() { r.stuck(gen) })
}

// stuck handles a task that did not yield within StuckGrace of its interrupt.
func (r *Runtime) stuck(gen uint64) {
	r.wdMu.Lock()
	still := r.inTask && r.taskGen == gen
	r.wdMu.Unlock()
	if !still {
		return
	}
	reason := fmt.Sprintf("a built-in did not yield within %v after the %v task budget (catastrophic regular expression or huge string?)",
		r.lim.StuckGrace, r.lim.TaskBudget)
	if r.cfg.onStuck != nil {
		r.cfg.onStuck(reason)
	}
	r.kill(reason)
}

// drain runs the microtasks queued so far: goja runs its job queue when a call from Go returns.
func (r *Runtime) drain() {
	if _, err := r.in.noop(goja.Undefined()); err != nil {
		r.uncaught("a microtask", err)
	}
}

// kill stops the runtime with a reason that becomes its error and a log line.
func (r *Runtime) kill(reason string) {
	r.mu.Lock()
	stopped := r.stopped
	r.mu.Unlock()
	if stopped {
		return
	}
	// Logged before the stop becomes visible, so the line is sent before whoever waits on
	// Done reports the end.
	r.logLine("error", "stopped: "+reason, true)
	r.stop(&KilledError{RemixletID: r.cfg.RemixletID, Reason: reason})
}

// stop marks the runtime stopped with err (nil for Stop); it reports whether this call did it.
func (r *Runtime) stop(err error) bool {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return false
	}
	r.stopped, r.err = true, err
	r.queue = nil
	// The events left in the queue will not run: their bytes go back to the process's bound.
	processEvents.Give(r.eventBytes)
	r.events, r.eventBytes = 0, 0
	close(r.done)
	r.mu.Unlock()
	r.cancel()
	r.vm.Interrupt(errInterrupt)
	return true
}

// teardown releases what the loop owned once it has returned.
func (r *Runtime) teardown() {
	for id, t := range r.timers {
		t.t.Stop()
		delete(r.timers, id)
	}
	clear(r.listeners)
	r.keeps = nil
}

// uncaught logs an exception that escaped a callback. Interrupts are the watchdog's business.
func (r *Runtime) uncaught(where string, err error) {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		return
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		r.logf("error", "error in %s: the call stack is deeper than %d calls (endless recursion?)", where, r.lim.MaxCallDepth)
		return
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		r.logf("error", "uncaught exception in %s: %s", where, ex.Error())
		return
	}
	r.logf("error", "error in %s: %v", where, err)
}

// reportUnhandled logs promise rejections that nothing handled during the last task.
func (r *Runtime) reportUnhandled() {
	for _, p := range r.rejected {
		if p.State() == goja.PromiseStateRejected {
			r.logf("error", "unhandled promise rejection: %s", r.describe(p.Result()))
		}
	}
	r.rejected = r.rejected[:0]
}

// logf sends one line to the remixlet's log, within the log rate limit.
func (r *Runtime) logf(level, format string, args ...any) {
	r.logLine(level, fmt.Sprintf(format, args...), false)
}

// logLine sends msg to the log; force skips the rate limit (for the one line saying why the
// runtime stopped).
func (r *Runtime) logLine(level, msg string, force bool) {
	if r.cfg.Log == nil {
		return
	}
	r.mu.Lock()
	if !r.logRate.allow(time.Now(), r.lim.MaxLogLinesPerSecond) && !force {
		r.logDropped++
		r.mu.Unlock()
		return
	}
	dropped := r.logDropped
	r.logDropped = 0
	r.mu.Unlock()
	if len(msg) > r.lim.MaxLogLineBytes {
		msg = msg[:r.lim.MaxLogLineBytes] + "… (truncated)"
	}
	if dropped > 0 {
		msg = fmt.Sprintf("(%d lines dropped: more than %d per second) %s", dropped, r.lim.MaxLogLinesPerSecond, msg)
	}
	r.cfg.Log(level, msg)
}
