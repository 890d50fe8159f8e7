//go:build linux

package sandbox

import (
	"syscall"
	"testing"
)

// A child that reaches its RLIMIT_CPU soft limit (SIGXCPU) exits and is restarted without
// blaming the runtime that happened to be running; every remixlet restarts.
func TestSupervisorCPULimitRecycles(t *testing.T) {
	s, events, slog := startSupervisor(t, SupervisorConfig{})
	h, sink := startRemixlet(t, s, "busy", `let n = 0; setInterval(() => rmx.log('tick', ++n), 1)`, nil)
	sink.waitFor(t, "tick 1")
	s.mu.Lock()
	c := s.child
	s.mu.Unlock()
	if err := c.cmd.Process.Signal(syscall.SIGXCPU); err != nil {
		t.Fatal(err)
	}
	died := events.waitFor(t, EventHostDied, "")
	if died.RemixletID != "" {
		t.Errorf("recycling blamed %q", died.RemixletID)
	}
	events.waitFor(t, EventRemixletRestarted, "busy")
	slog.waitFor(t, "CPU allowance")
	waitCount(t, sink, "info: tick 1", 2)
	if err := h.Err(); err != nil {
		t.Errorf("busy: %v", err)
	}
}
