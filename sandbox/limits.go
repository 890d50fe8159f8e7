package sandbox

import "time"

// Limits bound what one remixlet runtime may use. The zero value of every field means "use the
// default" stated in its comment; WithDefaults fills them in. The same Limits travel to the
// sandbox host child in its start frame, so every field is plain data.
//
// The per-runtime limits here are enforced inside the runtime's event loop. They are backed by a
// hard boundary that does not depend on goja's cooperation: the sandbox host child process runs
// with OS limits (see HostLimits), and a runtime that does not yield within StuckGrace after being
// interrupted makes the child exit, which the Supervisor observes and attributes.
type Limits struct {
	// TaskBudget is the time one macrotask (the script's first run, a timer callback, a promise
	// settlement with its microtasks, an event listener, a keep check) may take before the
	// runtime is interrupted and stopped. It is wall-clock time, except that a task is given
	// more (up to taskWallCap budgets) while the whole process has used less CPU than the budget
	// since the task began: on a machine busy with other programs, a task that waits for the CPU
	// is not taken for an endless loop. Default 250ms.
	TaskBudget time.Duration `json:"task_budget,omitempty"`
	// StuckGrace is how long an interrupted task may take to yield. goja's Interrupt does not stop
	// long built-ins (regexp2 backtracking, huge String.prototype.repeat or Array.prototype.join);
	// past the grace the runtime is declared stuck, and the sandbox host exits. Default 1s.
	StuckGrace time.Duration `json:"stuck_grace,omitempty"`
	// MaxPendingTimers caps timers scheduled but not yet fired or cleared. Default 1000.
	MaxPendingTimers int `json:"max_pending_timers,omitempty"`
	// MaxTimersPerSecond caps setTimeout/setInterval/queueMicrotask calls per second. Default 1000.
	MaxTimersPerSecond int `json:"max_timers_per_second,omitempty"`
	// MaxPendingCalls caps dom.* and rmx.* calls sent to the Host and not yet answered. Default 256.
	MaxPendingCalls int `json:"max_pending_calls,omitempty"`
	// MaxCallsPerSecond caps dom.* and rmx.* calls per second. Default 2000.
	MaxCallsPerSecond int `json:"max_calls_per_second,omitempty"`
	// MaxMessageBytes caps the JSON encoding of one call's arguments, one Host answer and one
	// dispatched event. Default 256 KiB.
	MaxMessageBytes int `json:"max_message_bytes,omitempty"`
	// MaxPendingEvents caps events and page-mutation notices queued for the runtime and not yet
	// run; more are dropped and logged. Default 1000.
	MaxPendingEvents int `json:"max_pending_events,omitempty"`
	// MaxPendingEventBytes caps the bytes of the events queued for the runtime and not yet
	// run (their JSON); more are dropped and logged (eventbytes.go). Default 4 MiB.
	MaxPendingEventBytes int `json:"max_pending_event_bytes,omitempty"`
	// MaxLogLinesPerSecond caps console.* and rmx.log lines per second; more are counted and
	// reported in the next line that passes. Default 200.
	MaxLogLinesPerSecond int `json:"max_log_lines_per_second,omitempty"`
	// MaxLogLineBytes truncates one log line. Default 4 KiB.
	MaxLogLineBytes int `json:"max_log_line_bytes,omitempty"`
	// MaxRefusals is how many refused timers and calls a runtime may accumulate (it is told of
	// each refusal by an exception) before it is stopped as a flood. Default 1000.
	MaxRefusals int `json:"max_refusals,omitempty"`
	// MaxCallDepth caps the JavaScript call stack depth. Default 10000.
	MaxCallDepth int `json:"max_call_depth,omitempty"`
	// MaxScriptBytes caps the size of script.js. Default 1 MiB.
	MaxScriptBytes int `json:"max_script_bytes,omitempty"`
	// MaxKeepRepairsPerSecond caps how often one rmx.keep may run its repair; beyond it the keep
	// skips repairs for the rest of that second and logs a repair loop. Default 20.
	MaxKeepRepairsPerSecond int `json:"max_keep_repairs_per_second,omitempty"`
}

// taskWallCap bounds a task's wall-clock time, in task budgets, however little CPU it used.
const taskWallCap = 8

// Default limit values; see the Limits fields.
const (
	DefaultTaskBudget              = 250 * time.Millisecond
	DefaultStuckGrace              = time.Second
	DefaultMaxPendingTimers        = 1000
	DefaultMaxTimersPerSecond      = 1000
	DefaultMaxPendingCalls         = 256
	DefaultMaxCallsPerSecond       = 2000
	DefaultMaxMessageBytes         = 256 << 10
	DefaultMaxPendingEvents        = 1000
	DefaultMaxPendingEventBytes    = 4 << 20
	DefaultMaxLogLinesPerSecond    = 200
	DefaultMaxLogLineBytes         = 4 << 10
	DefaultMaxRefusals             = 1000
	DefaultMaxCallDepth            = 10000
	DefaultMaxScriptBytes          = 1 << 20
	DefaultMaxKeepRepairsPerSecond = 20
)

// WithDefaults returns l with every zero or negative field replaced by its default.
func (l Limits) WithDefaults() Limits {
	dur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	num := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	dur(&l.TaskBudget, DefaultTaskBudget)
	dur(&l.StuckGrace, DefaultStuckGrace)
	num(&l.MaxPendingTimers, DefaultMaxPendingTimers)
	num(&l.MaxTimersPerSecond, DefaultMaxTimersPerSecond)
	num(&l.MaxPendingCalls, DefaultMaxPendingCalls)
	num(&l.MaxCallsPerSecond, DefaultMaxCallsPerSecond)
	num(&l.MaxMessageBytes, DefaultMaxMessageBytes)
	num(&l.MaxPendingEvents, DefaultMaxPendingEvents)
	num(&l.MaxPendingEventBytes, DefaultMaxPendingEventBytes)
	num(&l.MaxLogLinesPerSecond, DefaultMaxLogLinesPerSecond)
	num(&l.MaxLogLineBytes, DefaultMaxLogLineBytes)
	num(&l.MaxRefusals, DefaultMaxRefusals)
	num(&l.MaxCallDepth, DefaultMaxCallDepth)
	num(&l.MaxScriptBytes, DefaultMaxScriptBytes)
	num(&l.MaxKeepRepairsPerSecond, DefaultMaxKeepRepairsPerSecond)
	return l
}

// HostLimits are the OS limits the sandbox host child sets on itself at start. They are the
// backstop for what the per-runtime Limits cannot stop: goja has no memory limit.
type HostLimits struct {
	// Memory is the child's memory limit in bytes, set on Linux as RLIMIT_DATA (see
	// applyOSLimits): an allocation beyond it fails and the Go runtime aborts the child
	// ("out of memory"), which the Supervisor attributes and restarts. Default 1 GiB.
	Memory int64 `json:"memory,omitempty"`
	// SoftMemory is the Go soft memory limit (debug.SetMemoryLimit) of the child, so the
	// collector works harder before the hard limit is reached. Default 3/4 of Memory.
	SoftMemory int64 `json:"soft_memory,omitempty"`
	// CPUSeconds is RLIMIT_CPU: total CPU seconds the child may use before the kernel kills it.
	// A backstop only (the per-task budget is the real limit); the Supervisor restarts the child.
	// Default 3600.
	CPUSeconds uint64 `json:"cpu_seconds,omitempty"`
}

// Default host limits; see the HostLimits fields.
const (
	DefaultMemory     = 1 << 30
	DefaultCPUSeconds = 3600
)

// WithDefaults returns h with every zero field replaced by its default.
func (h HostLimits) WithDefaults() HostLimits {
	if h.Memory <= 0 {
		h.Memory = DefaultMemory
	}
	if h.SoftMemory <= 0 {
		h.SoftMemory = h.Memory / 4 * 3
	}
	if h.CPUSeconds == 0 {
		h.CPUSeconds = DefaultCPUSeconds
	}
	return h
}

// rateWindow counts events in the current one-second window of the clock it is given.
type rateWindow struct {
	start time.Time
	n     int
}

// allow records one event at now and reports whether it stays within max per second.
func (w *rateWindow) allow(now time.Time, max int) bool {
	if now.Sub(w.start) >= time.Second || now.Before(w.start) {
		w.start, w.n = now, 0
	}
	w.n++
	return w.n <= max
}
