package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Supervisor runs remixlet runtimes in a sandbox host child process and keeps the proxy safe
// from them.
//
// Process model: one shared sandbox host child for all runtimes, restarted on death. The
// alternative, one child per remixlet per page session, isolates best but costs a Go process
// each. Measured (BenchmarkHostMemory, linux/amd64): an idle child is about 7.4 MiB RSS, and
// each runtime of a small remixlet adds about 190 KiB to a shared child (150 runtimes: 35 MiB).
// The target is 50 page sessions × 3 remixlets under 200 MiB for the whole proxy; 150
// children would need about 1.1 GiB. The price of sharing is that a remixlet that kills the child (a stuck built-in, a
// memory bomb) takes the other runtimes with it. So the others are restarted transparently in
// the new child (their script runs again from the start, an EventRemixletRestarted is emitted)
// and only the culprit is stopped. The culprit is known from the child's frames: the runtime
// that announced itself stuck ("dying"), or else the runtime that was running a task ("busy")
// when the child died. A death nobody can be blamed for restarts everyone, but a runtime that
// is present at three such deaths in a row is stopped, so a crash loop ends.
//
// The Supervisor never blocks its callers on the child: frames to the child go through a
// bounded queue (a full queue is an error), Host calls run on their own goroutines, and
// restarts happen on a timer with exponential backoff.
type Supervisor struct {
	cfg SupervisorConfig

	mu       sync.Mutex
	child    *hostChild // nil between a death and the restart
	handles  map[uint64]*Handle
	nextID   uint64
	backoff  time.Duration
	closed   bool
	started  bool
	restartT *time.Timer
	done     chan struct{}
}

// SupervisorConfig configures a Supervisor. Zero fields take the defaults stated.
type SupervisorConfig struct {
	// Command is the sandbox host's executable and arguments. If empty, the running executable
	// (os.Executable) with the argument "sandbox-host".
	Command []string
	// Env is added to the inherited environment of the child.
	Env []string
	// Limits apply to every runtime; zero fields take their defaults.
	Limits Limits
	// HostLimits are the OS limits the child sets on itself; zero fields take their defaults.
	HostLimits HostLimits
	// MaxFrameBytes is the largest protocol frame either side accepts. Default
	// DefaultMaxFrameBytes.
	MaxFrameBytes int
	// MinBackoff and MaxBackoff bound the delay before a dead child is restarted; it doubles
	// after each death of a child that ran for less than a minute. Defaults 100ms and 10s.
	MinBackoff, MaxBackoff time.Duration
	// Log receives the supervisor's own lines: child starts, deaths and restarts. If nil, they
	// are discarded. It must not block.
	Log func(level, msg string)
	// Events receives lifecycle events. If nil, none are sent. It must not block.
	Events func(Event)
}

// EventKind names a supervisor event.
type EventKind string

// Supervisor events.
const (
	// EventHostStarted: a sandbox host child started (PID set).
	EventHostStarted EventKind = "host-started"
	// EventHostDied: the child died; Reason says how, RemixletID names the culprit if known.
	EventHostDied EventKind = "host-died"
	// EventRemixletKilled: a remixlet's runtime was stopped by a limit or for killing the child.
	EventRemixletKilled EventKind = "remixlet-killed"
	// EventRemixletRestarted: a remixlet's runtime was started again in a new child.
	EventRemixletRestarted EventKind = "remixlet-restarted"
)

// Event is one supervisor event.
type Event struct {
	Kind       EventKind
	RemixletID string
	HandleID   uint64
	PID        int
	Reason     string
}

// RemixletConfig is one remixlet runtime to run under a Supervisor.
type RemixletConfig struct {
	RemixletID string
	API        int
	Script     string
	Page       PageInfo
	// Host answers the runtime's dom.* and rmx.* calls, in the proxy process. Required.
	Host Host
	// Log receives the runtime's log lines and its stop reason. If nil, discarded.
	Log func(level, msg string)
}

// ErrSupervisorClosed is the error of handles still running when the Supervisor's context ends.
var ErrSupervisorClosed = errors.New("sandbox supervisor closed")

// NewSupervisor returns a Supervisor; Start launches the child.
func NewSupervisor(cfg SupervisorConfig) *Supervisor {
	cfg.Limits = cfg.Limits.WithDefaults()
	cfg.HostLimits = cfg.HostLimits.WithDefaults()
	if cfg.MaxFrameBytes <= 0 {
		cfg.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 10 * time.Second
	}
	return &Supervisor{cfg: cfg, handles: make(map[uint64]*Handle), backoff: cfg.MinBackoff, done: make(chan struct{})}
}

// Start launches the sandbox host child. It returns an error if the child cannot be started at
// all (the executable is missing); later deaths are handled by restarts. When ctx ends, the
// child is told to exit (killed if it does not), every handle ends with ErrSupervisorClosed,
// and Done is closed.
func (s *Supervisor) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("starting the sandbox supervisor: already started")
	}
	s.started = true
	c, err := s.startChild()
	if err != nil {
		s.closed = true
		close(s.done)
		s.mu.Unlock()
		return err
	}
	s.child = c
	s.mu.Unlock()
	s.emit(Event{Kind: EventHostStarted, PID: c.pid})
	go func() {
		<-ctx.Done()
		s.shutdown()
	}()
	return nil
}

// Done is closed when the Supervisor has shut down after its context ended.
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// StartRemixlet starts a runtime for one remixlet in the child. It returns at once: the
// runtime's start, log lines and end arrive through the handle and cfg.Log. An error means the
// remixlet was refused before reaching the child (no Host, script too large, supervisor
// closed); errors of the script itself (syntax, API version) end the handle with a
// *KilledError.
func (s *Supervisor) StartRemixlet(cfg RemixletConfig) (*Handle, error) {
	if cfg.Host == nil {
		return nil, fmt.Errorf("starting remixlet %s: no Host", cfg.RemixletID)
	}
	if len(cfg.Script) > s.cfg.Limits.MaxScriptBytes {
		return nil, fmt.Errorf("starting remixlet %s: script.js is %d bytes, more than the %d allowed",
			cfg.RemixletID, len(cfg.Script), s.cfg.Limits.MaxScriptBytes)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("starting remixlet %s: %w", cfg.RemixletID, ErrSupervisorClosed)
	}
	s.nextID++
	ctx, cancel := context.WithCancel(context.Background())
	h := &Handle{s: s, id: s.nextID, cfg: cfg, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	start, err := encodeFrame(h.startFrame(s.cfg.Limits), s.cfg.MaxFrameBytes)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("starting remixlet %s: %w", cfg.RemixletID, err)
	}
	s.handles[h.id] = h
	if s.child != nil {
		if err := s.child.sendBytes(start); err != nil {
			delete(s.handles, h.id)
			cancel()
			return nil, fmt.Errorf("starting remixlet %s: %w", cfg.RemixletID, err)
		}
	}
	return h, nil
}

// Handle is one remixlet runtime under a Supervisor.
type Handle struct {
	s       *Supervisor
	id      uint64
	cfg     RemixletConfig
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	pending atomic.Int32

	// Guarded by s.mu.
	err      error
	finished bool
	strikes  int // unattributed child deaths in a row while this handle ran
}

// ID is the handle's id, unique within its Supervisor.
func (h *Handle) ID() uint64 { return h.id }

// Done is closed when the runtime has ended, by Stop, a limit, or the Supervisor closing.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Err reports why the runtime ended: nil while running or after Stop, a *KilledError after a
// limit or a child death it caused, ErrSupervisorClosed after shutdown.
func (h *Handle) Err() error {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.err
}

// Stop ends the runtime. It does not wait for the child.
func (h *Handle) Stop() {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.finished {
		return
	}
	if s.child != nil {
		_ = s.child.send(&frameMsg{Op: "stop", RT: h.id})
	}
	h.finishLocked(nil)
}

// Dispatch delivers an event for a dom.on listener to the runtime.
func (h *Handle) Dispatch(listener int64, event json.RawMessage) error {
	if len(event) > h.s.cfg.Limits.MaxMessageBytes {
		return fmt.Errorf("dispatching to remixlet %s: event of %d bytes is over the %d-byte limit",
			h.cfg.RemixletID, len(event), h.s.cfg.Limits.MaxMessageBytes)
	}
	return h.sendToChild(&frameMsg{Op: "dispatch", RT: h.id, Listener: listener, Event: event}, "dispatching to")
}

// Mutated tells the runtime that the page changed, so its rmx.keep checks run.
func (h *Handle) Mutated() error {
	return h.sendToChild(&frameMsg{Op: "mutated", RT: h.id}, "notifying")
}

func (h *Handle) sendToChild(m *frameMsg, what string) error {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case h.finished:
		return fmt.Errorf("%s remixlet %s: runtime ended", what, h.cfg.RemixletID)
	case s.child == nil:
		return fmt.Errorf("%s remixlet %s: sandbox host restarting", what, h.cfg.RemixletID)
	}
	if err := s.child.send(m); err != nil {
		return fmt.Errorf("%s remixlet %s: %w", what, h.cfg.RemixletID, err)
	}
	return nil
}

func (h *Handle) startFrame(lim Limits) *frameMsg {
	page := h.cfg.Page
	return &frameMsg{Op: "start", RT: h.id, Remixlet: h.cfg.RemixletID, API: h.cfg.API, Script: h.cfg.Script, Page: &page, Limits: &lim}
}

// finishLocked ends the handle with err; s.mu must be held.
func (h *Handle) finishLocked(err error) {
	if h.finished {
		return
	}
	h.finished, h.err = true, err
	delete(h.s.handles, h.id)
	h.cancel()
	close(h.done)
}

func (h *Handle) log(level, msg string) {
	if h.cfg.Log != nil {
		h.cfg.Log(level, msg)
	}
}

// hostChild is one sandbox host process.
type hostChild struct {
	s       *Supervisor
	cmd     *exec.Cmd
	pid     int
	stdin   io.WriteCloser
	sendq   chan []byte
	stderr  *tailBuffer
	started time.Time
	exited  chan struct{} // closed after cmd.Wait returned

	mu     sync.Mutex // guards busy and dying
	busy   map[uint64]time.Time
	dying  uint64
	dyingR string
}

// sendQueueLen bounds the frames waiting to be written to a child.
const sendQueueLen = 4096

// errSendQueueFull is returned when the child does not read its frames.
var errSendQueueFull = errors.New("sandbox host is not reading (send queue full)")

// startChild launches a child; s.mu must be held.
func (s *Supervisor) startChild() (*hostChild, error) {
	argv := s.cfg.Command
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("starting the sandbox host: finding the executable: %w", err)
		}
		argv = []string{exe, "sandbox-host"}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), s.cfg.Env...)
	c := &hostChild{s: s, cmd: cmd, sendq: make(chan []byte, sendQueueLen), stderr: &tailBuffer{max: 4096},
		busy: make(map[uint64]time.Time), exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the sandbox host: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the sandbox host: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the sandbox host %s: %w", argv[0], err)
	}
	c.stdin, c.pid, c.started = stdin, cmd.Process.Pid, time.Now()
	hl := s.cfg.HostLimits
	if err := c.send(&frameMsg{Op: "init", HostLimits: &hl}); err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("starting the sandbox host: %w", err)
	}
	go c.writeLoop()
	go c.readLoop(stdout)
	s.logf("info", "sandbox host started (pid %d)", c.pid)
	return c, nil
}

// send queues a frame for the child without blocking.
func (c *hostChild) send(m *frameMsg) error {
	b, err := encodeFrame(m, c.s.cfg.MaxFrameBytes)
	if err != nil {
		return err
	}
	return c.sendBytes(b)
}

func (c *hostChild) sendBytes(b []byte) error {
	select {
	case c.sendq <- b:
		return nil
	case <-c.exited:
		return errors.New("sandbox host exited")
	default:
		return errSendQueueFull
	}
}

func (c *hostChild) writeLoop() {
	for {
		select {
		case b := <-c.sendq:
			if _, err := c.stdin.Write(b); err != nil {
				return // the reader sees the death
			}
		case <-c.exited:
			return
		}
	}
}

// readLoop handles the child's frames until its stdout ends, then reaps it.
func (c *hostChild) readLoop(stdout io.Reader) {
	var readErr error
	for {
		m, err := readFrame(stdout, c.s.cfg.MaxFrameBytes)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
				_ = c.cmd.Process.Kill() // a broken stream cannot be trusted further
			}
			break
		}
		c.handle(m)
	}
	waitErr := c.cmd.Wait()
	close(c.exited)
	c.s.childDied(c, waitErr, readErr)
}

// handle acts on one frame from the child.
func (c *hostChild) handle(m *frameMsg) {
	s := c.s
	switch m.Op {
	case "ready":
		s.logf("info", "sandbox host %d ready: %s", m.PID, m.Msg)
		return
	case "busy":
		c.mu.Lock()
		c.busy[m.RT] = time.Now()
		c.mu.Unlock()
		return
	case "idle":
		c.mu.Lock()
		delete(c.busy, m.RT)
		c.mu.Unlock()
		return
	case "dying":
		c.mu.Lock()
		c.dying, c.dyingR = m.RT, m.Reason
		c.mu.Unlock()
		return
	}
	s.mu.Lock()
	h := s.handles[m.RT]
	current := s.child == c
	s.mu.Unlock()
	if h == nil || !current {
		if m.Op == "call" {
			_ = c.send(&frameMsg{Op: "reply", Call: m.Call, Error: "runtime ended"})
		}
		return
	}
	switch m.Op {
	case "log":
		h.log(m.Level, m.Msg)
	case "exit":
		s.mu.Lock()
		h.finishLocked(&KilledError{RemixletID: h.cfg.RemixletID, Reason: m.Reason})
		s.mu.Unlock()
		s.emit(Event{Kind: EventRemixletKilled, RemixletID: h.cfg.RemixletID, HandleID: h.id, PID: c.pid, Reason: m.Reason})
	case "call":
		c.call(h, m)
	}
}

// call answers one Host call on its own goroutine, within the handle's pending limit.
func (c *hostChild) call(h *Handle, m *frameMsg) {
	lim := c.s.cfg.Limits
	if int(h.pending.Add(1)) > lim.MaxPendingCalls {
		h.pending.Add(-1)
		_ = c.send(&frameMsg{Op: "reply", Call: m.Call, Error: fmt.Sprintf("more than %d calls waiting", lim.MaxPendingCalls)})
		return
	}
	go func() {
		defer h.pending.Add(-1)
		res, err := h.cfg.Host.Call(h.ctx, m.NS, m.Method, m.Args)
		reply := &frameMsg{Op: "reply", Call: m.Call, Result: res}
		switch {
		case err != nil:
			reply.Result, reply.Error = nil, err.Error()
		case len(res) > lim.MaxMessageBytes:
			reply.Result, reply.Error = nil, fmt.Sprintf("the answer is larger than %d bytes", lim.MaxMessageBytes)
		case len(res) > 0 && !json.Valid(res):
			reply.Result, reply.Error = nil, "the answer is not valid JSON"
		}
		if err := c.send(reply); err != nil {
			h.log("warn", fmt.Sprintf("answer to %s.%s not delivered: %v", m.NS, m.Method, err))
		}
	}()
}

// childDied attributes a child's death, stops the culprit, and schedules the restart of the
// others.
func (s *Supervisor) childDied(c *hostChild, waitErr, readErr error) {
	reason := describeExit(waitErr, readErr, c.stderr.String())
	recycled := false
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) && ee.ExitCode() == exitRecycle {
		recycled, reason = true, "it used up its CPU allowance (RLIMIT_CPU) and was recycled"
	}
	c.mu.Lock()
	culprit, culpritWhy := c.dying, c.dyingR
	if culprit == 0 && !recycled {
		var earliest time.Time
		for rt, since := range c.busy {
			if culprit == 0 || since.Before(earliest) {
				culprit, earliest = rt, since
			}
		}
		if culprit != 0 {
			culpritWhy = "it was running when the sandbox host died: " + reason
		}
	}
	c.mu.Unlock()

	var events []Event
	s.mu.Lock()
	if s.child != c {
		s.mu.Unlock()
		return
	}
	s.child = nil
	if s.closed {
		s.mu.Unlock()
		return
	}
	culpritID := ""
	if h := s.handles[culprit]; h != nil {
		culpritID = h.cfg.RemixletID
	}
	events = append(events, Event{Kind: EventHostDied, PID: c.pid, RemixletID: culpritID, Reason: reason})
	for _, h := range s.handles {
		switch {
		case h.id == culprit:
			h.finishLocked(&KilledError{RemixletID: h.cfg.RemixletID, Reason: culpritWhy})
			events = append(events, Event{Kind: EventRemixletKilled, RemixletID: h.cfg.RemixletID, HandleID: h.id, PID: c.pid, Reason: culpritWhy})
			go h.log("error", "stopped: "+culpritWhy)
		case recycled:
		case culprit == 0:
			h.strikes++
			if h.strikes >= 3 {
				why := fmt.Sprintf("the sandbox host died %d times in a row while it ran (%s)", h.strikes, reason)
				h.finishLocked(&KilledError{RemixletID: h.cfg.RemixletID, Reason: why})
				events = append(events, Event{Kind: EventRemixletKilled, RemixletID: h.cfg.RemixletID, HandleID: h.id, PID: c.pid, Reason: why})
			}
		}
	}
	if recycled || time.Since(c.started) > time.Minute {
		s.backoff = s.cfg.MinBackoff
	}
	delay := s.backoff
	s.backoff = min(s.backoff*2, s.cfg.MaxBackoff)
	s.restartT = time.AfterFunc(delay, s.restart)
	s.mu.Unlock()
	blame := "no runtime to blame"
	if culpritID != "" {
		blame = "caused by remixlet " + culpritID
	}
	s.logf("error", "sandbox host %d died: %s (%s); restarting in %v", c.pid, reason, blame, delay)
	for _, e := range events {
		s.emit(e)
	}
}

// restart starts a new child and the runtimes of every live handle in it.
func (s *Supervisor) restart() {
	var events []Event
	s.mu.Lock()
	if s.closed || s.child != nil {
		s.mu.Unlock()
		return
	}
	c, err := s.startChild()
	if err != nil {
		delay := s.backoff
		s.backoff = min(s.backoff*2, s.cfg.MaxBackoff)
		s.restartT = time.AfterFunc(delay, s.restart)
		s.mu.Unlock()
		s.logf("error", "restarting the sandbox host: %v; trying again in %v", err, delay)
		return
	}
	s.child = c
	events = append(events, Event{Kind: EventHostStarted, PID: c.pid})
	for _, h := range s.handles {
		if err := c.send(h.startFrame(s.cfg.Limits)); err != nil {
			why := "restarting after a sandbox host death: " + err.Error()
			h.finishLocked(&KilledError{RemixletID: h.cfg.RemixletID, Reason: why})
			events = append(events, Event{Kind: EventRemixletKilled, RemixletID: h.cfg.RemixletID, HandleID: h.id, Reason: why})
			continue
		}
		events = append(events, Event{Kind: EventRemixletRestarted, RemixletID: h.cfg.RemixletID, HandleID: h.id, PID: c.pid})
		go h.log("warn", "restarted: the sandbox host was restarted, so the script runs again from the start")
	}
	s.mu.Unlock()
	for _, e := range events {
		s.emit(e)
	}
}

// shutdown ends every handle and the child when the context ends.
func (s *Supervisor) shutdown() {
	s.mu.Lock()
	s.closed = true
	if s.restartT != nil {
		s.restartT.Stop()
	}
	for _, h := range s.handles {
		h.finishLocked(ErrSupervisorClosed)
	}
	c := s.child
	s.child = nil
	s.mu.Unlock()
	if c != nil {
		_ = c.stdin.Close() // the child exits when its stdin closes
		select {
		case <-c.exited:
		case <-time.After(2 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	}
	close(s.done)
}

func (s *Supervisor) emit(e Event) {
	if s.cfg.Events != nil {
		s.cfg.Events(e)
	}
}

func (s *Supervisor) logf(level, format string, args ...any) {
	if s.cfg.Log != nil {
		s.cfg.Log(level, fmt.Sprintf(format, args...))
	}
}

// describeExit says in one line how a child ended: the wait status and the most telling line
// of its stderr (the Go runtime's "fatal error: …", or the last line).
func describeExit(waitErr, readErr error, stderr string) string {
	var parts []string
	if readErr != nil {
		parts = append(parts, "protocol error: "+readErr.Error())
	}
	if waitErr != nil {
		parts = append(parts, waitErr.Error())
	} else {
		parts = append(parts, "exited")
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	tell := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.Contains(l, "out of memory") {
			tell = l
			break
		}
	}
	if tell == "" && len(lines) > 0 {
		tell = lines[len(lines)-1]
	}
	if tell = strings.TrimSpace(tell); tell != "" {
		parts = append(parts, tell)
	}
	return strings.Join(parts, ": ")
}

// tailBuffer keeps the first and last bytes written to it (a child's stderr), bounded.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	head []byte
	tail []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - len(t.head); room > 0 {
		t.head = append(t.head, p[:min(room, len(p))]...)
	}
	t.tail = append(t.tail, p...)
	if len(t.tail) > t.max {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-t.max:]...)
	}
	return len(p), nil
}

// String returns the head (where the Go runtime prints "fatal error: …") and the tail.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.tail) < t.max {
		return string(t.tail)
	}
	return string(t.head) + "\n…\n" + string(t.tail)
}
