package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
)

// HostMain runs the sandbox host on the process's stdin and stdout and returns the exit code.
// It is what the hidden "sandbox-host" command of the remixproxy binary runs in the child
// process the Supervisor starts; tests re-execute the test binary into it. The process exits
// on its own when a runtime is stuck in a built-in (code 3), and when stdin closes (code 0).
func HostMain() int {
	err := serveHost(os.Stdin, os.Stdout, DefaultMaxFrameBytes, os.Exit)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox host: %v\n", err)
		return 1
	}
	return 0
}

// Exit codes of the sandbox host child.
const (
	// exitStuck: a runtime was stuck in a built-in (a dying frame names it).
	exitStuck = 3
	// exitRecycle: the child used up its CPU allowance (RLIMIT_CPU); no runtime is to blame,
	// the supervisor restarts it and every runtime.
	exitRecycle = 4
)

// hostServer is the child side of the protocol: many runtimes, one pair of pipes.
type hostServer struct {
	out      io.Writer
	maxFrame int
	exit     func(code int)

	outMu sync.Mutex // serializes frame writes

	// taskMu lets one runtime at a time run JavaScript in this child. Each task's "busy" frame is
	// written (synchronously, into the pipe) before the task starts and its "idle" frame before
	// the next task may start, so when the child dies in a built-in the parent has read exactly
	// one busy runtime: the culprit. Two remixlets running at once would make an out-of-memory
	// death unattributable and a harmless remixlet could be stopped in the culprit's place.
	// Tasks are bounded by the task budget, so one remixlet delays another by at most that.
	taskMu sync.Mutex

	mu       sync.Mutex
	runtimes map[uint64]*Runtime
	calls    map[uint64]chan *frameMsg
	nextCall uint64
}

// serveHost reads frames from in until it closes, runs the runtimes they start and writes
// their calls, logs and ends to out. exit is called with exitStuck when a runtime is stuck in
// a built-in (after the dying frame is written), and with 0 if out breaks (the parent is gone).
func serveHost(in io.Reader, out io.Writer, maxFrame int, exit func(int)) error {
	hs := &hostServer{
		out:      out,
		maxFrame: maxFrame,
		exit:     exit,
		runtimes: make(map[uint64]*Runtime),
		calls:    make(map[uint64]chan *frameMsg),
	}
	defer hs.stopAll()
	for {
		m, err := readFrame(in, maxFrame)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("serving the sandbox host: %w", err)
		}
		hs.handle(m)
	}
}

// send writes one frame; a broken pipe means the parent is gone, so the child exits.
func (hs *hostServer) send(m *frameMsg) {
	b, err := encodeFrame(m, hs.maxFrame)
	if err != nil {
		// Only a log line can be this large (calls are checked against MaxMessageBytes
		// before); say so instead.
		b, err = encodeFrame(&frameMsg{Op: "log", RT: m.RT, Level: "error", Msg: "sandbox host: " + err.Error()}, hs.maxFrame)
		if err != nil {
			return
		}
	}
	hs.outMu.Lock()
	defer hs.outMu.Unlock()
	if _, err := hs.out.Write(b); err != nil {
		hs.exit(0)
	}
}

func (hs *hostServer) handle(m *frameMsg) {
	switch m.Op {
	case "init":
		hl := HostLimits{}
		if m.HostLimits != nil {
			hl = *m.HostLimits
		}
		hl = hl.WithDefaults()
		debug.SetMemoryLimit(hl.SoftMemory)
		onCPULimit(func() { hs.exit(exitRecycle) })
		desc, err := applyOSLimits(hl)
		if err != nil {
			desc = "OS limits not applied: " + err.Error()
		}
		hs.send(&frameMsg{Op: "ready", PID: os.Getpid(), Msg: desc})
	case "start":
		hs.start(m)
	case "stop":
		hs.mu.Lock()
		r := hs.runtimes[m.RT]
		delete(hs.runtimes, m.RT)
		hs.mu.Unlock()
		if r != nil {
			r.Stop()
		}
	case "reply":
		hs.mu.Lock()
		ch := hs.calls[m.Call]
		delete(hs.calls, m.Call)
		hs.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case "dispatch", "mutated":
		hs.mu.Lock()
		r := hs.runtimes[m.RT]
		hs.mu.Unlock()
		if r == nil {
			return
		}
		var err error
		if m.Op == "dispatch" {
			err = r.Dispatch(m.Listener, m.Event)
		} else {
			err = r.Mutated()
		}
		if err != nil {
			hs.send(&frameMsg{Op: "log", RT: m.RT, Level: "warn", Msg: err.Error()})
		}
	}
}

// start creates the runtime of a start frame and watches for its end.
func (hs *hostServer) start(m *frameMsg) {
	id := m.RT
	cfg := RuntimeConfig{
		RemixletID: m.Remixlet,
		API:        m.API,
		Script:     m.Script,
		Host:       &childHost{hs: hs, rt: id},
		Log: func(level, msg string) {
			hs.send(&frameMsg{Op: "log", RT: id, Level: level, Msg: msg})
		},
		onTask: func(begin bool) {
			if begin {
				hs.taskMu.Lock()
				hs.send(&frameMsg{Op: "busy", RT: id})
				return
			}
			hs.send(&frameMsg{Op: "idle", RT: id})
			hs.taskMu.Unlock()
		},
		onStuck: func(reason string) {
			hs.send(&frameMsg{Op: "dying", RT: id, Reason: reason})
			hs.exit(exitStuck)
		},
	}
	if m.Limits != nil {
		cfg.Limits = *m.Limits
	}
	if m.Page != nil {
		cfg.Page = *m.Page
	}
	r, err := NewRuntime(cfg)
	if err != nil {
		hs.send(&frameMsg{Op: "exit", RT: id, Reason: err.Error()})
		return
	}
	hs.mu.Lock()
	hs.runtimes[id] = r
	hs.mu.Unlock()
	go func() {
		<-r.Done()
		hs.mu.Lock()
		if hs.runtimes[id] == r {
			delete(hs.runtimes, id)
		}
		hs.mu.Unlock()
		var ke *KilledError
		if errors.As(r.Err(), &ke) {
			hs.send(&frameMsg{Op: "exit", RT: id, Reason: ke.Reason})
		}
	}()
}

// stopAll stops every runtime when the parent closes the pipe.
func (hs *hostServer) stopAll() {
	hs.mu.Lock()
	rs := make([]*Runtime, 0, len(hs.runtimes))
	for _, r := range hs.runtimes {
		rs = append(rs, r)
	}
	hs.runtimes = map[uint64]*Runtime{}
	hs.mu.Unlock()
	for _, r := range rs {
		r.Stop()
	}
}

// childHost is the Host of a runtime in the child: each call becomes a call frame to the
// parent, answered by a reply frame.
type childHost struct {
	hs *hostServer
	rt uint64
}

func (c *childHost) Call(ctx context.Context, ns, method string, args json.RawMessage) (json.RawMessage, error) {
	hs := c.hs
	ch := make(chan *frameMsg, 1)
	hs.mu.Lock()
	hs.nextCall++
	id := hs.nextCall
	hs.calls[id] = ch
	hs.mu.Unlock()
	hs.send(&frameMsg{Op: "call", RT: c.rt, Call: id, NS: ns, Method: method, Args: args})
	select {
	case m := <-ch:
		if m.Error != "" {
			return nil, errors.New(m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		hs.mu.Lock()
		delete(hs.calls, id)
		hs.mu.Unlock()
		return nil, fmt.Errorf("calling %s.%s: %w", ns, method, ctx.Err())
	}
}

var _ Host = (*childHost)(nil)
