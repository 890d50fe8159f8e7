package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostTestEnv makes the test binary act as the sandbox host child (see init below), the way the
// remixproxy binary does with its hidden sandbox-host command.
const hostTestEnv = "REMIXPROXY_SANDBOX_HOST_TEST"

// init runs before the tests: a re-executed test binary with hostTestEnv set serves the sandbox
// host protocol and exits, never running a test. (init rather than TestMain, so the package's
// other test files stay free to add their own TestMain.)
func init() {
	if os.Getenv(hostTestEnv) == "1" {
		os.Exit(HostMain())
	}
}

// eventLog collects supervisor events.
type eventLog struct {
	mu     sync.Mutex
	events []Event
	added  chan struct{}
}

func (e *eventLog) add(ev Event) {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
	select {
	case e.added <- struct{}{}:
	default:
	}
}

func (e *eventLog) find(kind EventKind, remixlet string) (Event, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.events {
		if ev.Kind == kind && (remixlet == "" || ev.RemixletID == remixlet) {
			return ev, true
		}
	}
	return Event{}, false
}

func (e *eventLog) waitFor(t *testing.T, kind EventKind, remixlet string) Event {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		if ev, ok := e.find(kind, remixlet); ok {
			return ev
		}
		select {
		case <-e.added:
		case <-deadline:
			t.Fatalf("no %s event for %q; got %+v", kind, remixlet, e.events)
		}
	}
}

// startSupervisor starts a Supervisor whose child is this test binary.
func startSupervisor(t *testing.T, cfg SupervisorConfig) (*Supervisor, *eventLog, *logSink) {
	t.Helper()
	events := &eventLog{added: make(chan struct{}, 1)}
	slog := newLogSink()
	cfg.Command = []string{os.Args[0], "-test.run=^$"}
	cfg.Env = append(cfg.Env, hostTestEnv+"=1")
	cfg.Events = events.add
	cfg.Log = slog.log
	cfg.MinBackoff = 10 * time.Millisecond
	s := NewSupervisor(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.Done():
		case <-time.After(waitLimit):
			t.Error("supervisor did not shut down")
		}
	})
	return s, events, slog
}

// startRemixlet starts a remixlet under s with its own log sink.
func startRemixlet(t *testing.T, s *Supervisor, id, script string, host Host) (*Handle, *logSink) {
	t.Helper()
	sink := newLogSink()
	if host == nil {
		host = newFakeHost()
	}
	h, err := s.StartRemixlet(RemixletConfig{RemixletID: id, API: 1, Script: script, Host: host, Log: sink.log})
	if err != nil {
		t.Fatalf("StartRemixlet %s: %v", id, err)
	}
	return h, sink
}

func waitHandle(t *testing.T, h *Handle) {
	t.Helper()
	select {
	case <-h.Done():
	case <-time.After(waitLimit):
		t.Fatalf("remixlet %s did not end", h.cfg.RemixletID)
	}
}

// A script in the child reaches the proxy-side Host as JSON and gets its answers; events and
// mutations reach it back.
func TestSupervisorRelaysCalls(t *testing.T) {
	s, _, slog := startSupervisor(t, SupervisorConfig{})
	host := newFakeHost()
	host.answer = func(ns, method string, args json.RawMessage) (json.RawMessage, error) {
		switch method {
		case "query":
			return json.RawMessage(`{"$h":3}`), nil
		case "storage.get":
			return nil, errors.New("storage permission not approved")
		}
		return nil, nil
	}
	h, sink := startRemixlet(t, s, "relay", `
		const el = await dom.query('.promoted');
		await dom.on(el, 'click', (ev) => rmx.log('EVENT', ev.type));
		rmx.keep('k', { check: () => false, repair: () => rmx.log('REPAIR') });
		try { await rmx.storage.get('x') } catch (e) { rmx.log('DENIED', e.message) }
		rmx.log('GOT', JSON.stringify(el));
	`, host)
	sink.waitFor(t, `GOT {"$h":3}`)
	sink.waitFor(t, "DENIED rmx.storage.get: storage permission not approved")
	if err := h.Dispatch(1, json.RawMessage(`{"type":"click"}`)); err != nil {
		t.Fatal(err)
	}
	sink.waitFor(t, "EVENT click")
	before := sink.count("REPAIR")
	if err := h.Mutated(); err != nil {
		t.Fatal(err)
	}
	for sink.count("REPAIR") <= before {
		<-sink.added
	}
	slog.waitFor(t, "ready: ")
	h.Stop()
	waitHandle(t, h)
	if err := h.Err(); err != nil {
		t.Errorf("Err after Stop: %v", err)
	}
}

// Invariant 7: an endless loop in the child stops only its runtime; the child and the other
// runtime keep running, without a restart.
func TestSupervisorEndlessLoop(t *testing.T) {
	s, events, _ := startSupervisor(t, SupervisorConfig{})
	_, other := startRemixlet(t, s, "good", `let n = 0; setInterval(() => rmx.log('tick', ++n), 5)`, nil)
	other.waitFor(t, "tick 1")
	bad, badLog := startRemixlet(t, s, "loop", `while (true) {}`, nil)
	waitHandle(t, bad)
	var ke *KilledError
	if err := bad.Err(); !errors.As(err, &ke) || !strings.Contains(ke.Reason, "budget") {
		t.Fatalf("got %v, want a budget KilledError", err)
	}
	badLog.waitFor(t, "stopped: script.js ran longer than its 250ms budget")
	n := other.count("tick")
	other.waitFor(t, fmt.Sprintf("tick %d", n+1))
	if _, died := events.find(EventHostDied, ""); died {
		t.Error("the child died for an endless loop")
	}
}

// Invariant 7: built-ins that ignore Interrupt (regexp2 backtracking, goja's huge repeat) and
// allocations beyond RLIMIT_AS kill at most the child; the death is attributed and logged, the
// culprit is stopped, the other remixlet is restarted in a new child and keeps running, and
// the test process (the proxy) stays up.
func TestSupervisorHardBoundary(t *testing.T) {
	cases := []struct {
		name, script, reason string
	}{
		{"catastrophic regex", `/^(a+)+(?=b)$/.test('a'.repeat(40) + 'c')`, "did not yield"},
		{"issue regex", `/^(a+)+$/.test('a'.repeat(40) + 'b'); while (true) {}`, "budget"},
		{"repeat 2**40", `'x'.repeat(2 ** 40)`, "running when the sandbox host died"},
		{"memory bomb", `let a = []; for (;;) a.push(new Array(1e6).fill(1))`, ""}, // budget or memory, whichever first
		{"typed array bomb", `const a = []; for (;;) a.push(new Uint8Array(2 ** 28))`, "running when the sandbox host died"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, events, slog := startSupervisor(t, SupervisorConfig{HostLimits: HostLimits{Memory: 512 << 20}})
			good, goodLog := startRemixlet(t, s, "good", `let n = 0; setInterval(() => rmx.log('tick', ++n), 5)`, nil)
			goodLog.waitFor(t, "tick 1")
			bad, badLog := startRemixlet(t, s, "bad", tc.script, nil)
			waitHandle(t, bad)
			var ke *KilledError
			if err := bad.Err(); !errors.As(err, &ke) || !strings.Contains(ke.Reason, tc.reason) {
				t.Fatalf("bad: got %v, want a KilledError with %q", err, tc.reason)
			}
			t.Logf("bad stopped: %s", ke.Reason)
			badLog.waitFor(t, "stopped: ")
			if !strings.Contains(ke.Reason, "ran longer than its") {
				died := events.waitFor(t, EventHostDied, "")
				if died.RemixletID != "bad" {
					t.Errorf("host death attributed to %q, want bad (%+v)", died.RemixletID, died)
				}
				slog.waitFor(t, "caused by remixlet bad")
				events.waitFor(t, EventRemixletRestarted, "good")
				goodLog.waitFor(t, "restarted:")
				waitCount(t, goodLog, "info: tick 1", 2) // its script ran again from the start
			} else if tc.reason != "budget" && tc.reason != "" {
				t.Errorf("%s was stopped by the budget, but should have killed the child", tc.name)
			}
			if err := good.Err(); err != nil {
				t.Errorf("good: %v", err)
			}
			waitCount(t, goodLog, "info: tick", goodLog.count("info: tick")+1)
		})
	}
}

// waitCount waits until n log lines start with prefix and end right after it or with a digit
// boundary ("info: tick 1" does not count "info: tick 12").
func waitCount(t *testing.T, l *logSink, prefix string, n int) {
	t.Helper()
	count := func() int {
		c := 0
		for _, line := range l.snapshot() {
			if rest, ok := strings.CutPrefix(line, prefix); ok && (rest == "" || rest[0] == ' ' || prefix == "info: tick") {
				c++
			}
		}
		return c
	}
	deadline := time.After(waitLimit)
	for count() < n {
		select {
		case <-l.added:
		case <-deadline:
			t.Fatalf("got %d lines %q, want %d: %q", count(), prefix, n, l.snapshot())
		}
	}
}

// A remixlet that keeps killing the child without being caught in a task is stopped after
// three deaths in a row (no endless restart loop); here the child is killed from outside.
func TestSupervisorUnattributedDeaths(t *testing.T) {
	s, events, _ := startSupervisor(t, SupervisorConfig{})
	h, sink := startRemixlet(t, s, "victim", `rmx.log('up')`, nil)
	var last *hostChild
	for i := 0; i < 3; i++ {
		deadline := time.Now().Add(waitLimit)
		s.mu.Lock()
		c := s.child
		s.mu.Unlock()
		for c == nil || c == last { // wait for the restarted child
			if time.Now().After(deadline) {
				t.Fatal("the child was not restarted")
			}
			time.Sleep(5 * time.Millisecond)
			s.mu.Lock()
			c = s.child
			s.mu.Unlock()
		}
		waitCount(t, sink, "info: up", i+1)
		for { // idle, so the death cannot be blamed on it
			c.mu.Lock()
			busy := len(c.busy)
			c.mu.Unlock()
			if busy == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the runtime stayed busy")
			}
			time.Sleep(time.Millisecond)
		}
		_ = c.cmd.Process.Kill()
		<-c.exited
		last = c
	}
	waitHandle(t, h)
	if err := h.Err(); err == nil || !strings.Contains(err.Error(), "died 3 times in a row") {
		t.Errorf("got %v", err)
	}
	events.waitFor(t, EventHostDied, "")
}

// Invariant 7: a 100 MiB message is refused by the protocol from the header alone, in both
// directions, and by the supervisor for Host answers and events.
func TestHugeFramesRefused(t *testing.T) {
	if _, err := encodeFrame(&frameMsg{Op: "log", Msg: strings.Repeat("x", 100<<20)}, DefaultMaxFrameBytes); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("encode: got %v, want ErrFrameTooLarge", err)
	}
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], 100<<20)
	// Only the header is there: a reader that tried to read the body would fail differently.
	if _, err := readFrame(bytes.NewReader(hdr[:]), DefaultMaxFrameBytes); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("read: got %v, want ErrFrameTooLarge", err)
	}
	// A child that receives such a header exits with an error instead of allocating.
	err := serveHost(bytes.NewReader(hdr[:]), &bytes.Buffer{}, DefaultMaxFrameBytes, func(int) {})
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("serveHost: got %v, want ErrFrameTooLarge", err)
	}

	s, _, _ := startSupervisor(t, SupervisorConfig{})
	host := newFakeHost()
	host.answer = func(ns, method string, args json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"` + strings.Repeat("x", 100<<20) + `"`), nil
	}
	h, sink := startRemixlet(t, s, "big", `try { await dom.text({ $h: 1 }) } catch (e) { rmx.log('REFUSED', e.message) }`, host)
	sink.waitFor(t, "REFUSED dom.text: the answer is larger than 262144 bytes")
	if err := h.Dispatch(1, json.RawMessage(`"`+strings.Repeat("x", 100<<20)+`"`)); err == nil {
		t.Error("a 100 MiB event was accepted")
	}
	if _, err := s.StartRemixlet(RemixletConfig{RemixletID: "huge", API: 1, Script: strings.Repeat(" ", 100<<20), Host: host}); err == nil {
		t.Error("a 100 MiB script was accepted")
	}
}

// A supervisor whose child cannot start returns an error and never panics; one that is
// closed refuses new remixlets.
func TestSupervisorStartErrors(t *testing.T) {
	s := NewSupervisor(SupervisorConfig{Command: []string{"/nonexistent/remixproxy"}})
	if err := s.Start(context.Background()); err == nil {
		t.Fatal("Start with a missing executable: no error")
	}
	if _, err := s.StartRemixlet(RemixletConfig{RemixletID: "x", API: 1, Host: newFakeHost()}); !errors.Is(err, ErrSupervisorClosed) {
		t.Errorf("StartRemixlet after a failed Start: got %v", err)
	}
	s2, _, _ := startSupervisor(t, SupervisorConfig{})
	if _, err := s2.StartRemixlet(RemixletConfig{RemixletID: "x", API: 1}); err == nil {
		t.Error("StartRemixlet without a Host: no error")
	}
	h, sink := startRemixlet(t, s2, "syntax", "let = = 1", nil)
	waitHandle(t, h)
	if err := h.Err(); err == nil || !strings.Contains(err.Error(), "Line 1:") {
		t.Errorf("syntax error: got %v", err)
	}
	_ = sink
}
