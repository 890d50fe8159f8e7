package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childRSS returns the resident set size of pid in bytes, from /proc (Linux only).
func childRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}

// BenchmarkHostMemory measures the sandbox host child's RSS idle and with 150 runtimes of
// benchScript (50 page sessions × 3 remixlets, the target), and reports the idle size
// and the cost per runtime.
func BenchmarkHostMemory(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc")
	}
	const n = 150
	for b.Loop() {
		s := NewSupervisor(SupervisorConfig{Command: []string{os.Args[0], "-test.run=^$"}, Env: []string{hostTestEnv + "=1"}})
		ctx, cancel := context.WithCancel(context.Background())
		if err := s.Start(ctx); err != nil {
			b.Fatal(err)
		}
		s.mu.Lock()
		pid := s.child.pid
		s.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
		idle, err := childRSS(pid)
		if err != nil {
			b.Fatal(err)
		}
		started := make(chan struct{}, n)
		for i := range n {
			_, err := s.StartRemixlet(RemixletConfig{RemixletID: fmt.Sprint("r", i), API: 1, Script: benchScript, Host: newFakeHost(),
				Log: func(level, msg string) {
					if msg == "started" {
						started <- struct{}{}
					}
				}})
			if err != nil {
				b.Fatal(err)
			}
		}
		for range n {
			<-started
		}
		time.Sleep(200 * time.Millisecond)
		full, err := childRSS(pid)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(idle)/(1<<20), "MiB-idle-child")
		b.ReportMetric(float64(full)/(1<<20), "MiB-child-150-runtimes")
		b.ReportMetric(float64(full-idle)/n/1024, "KiB/runtime")
		cancel()
		<-s.Done()
	}
}

// BenchmarkHostRoundTrip measures an event from the proxy to a listener in the child, one dom
// call round trip from there to the proxy-side Host, and the next call's arrival (p50, p99).
func BenchmarkHostRoundTrip(b *testing.B) {
	s := NewSupervisor(SupervisorConfig{Command: []string{os.Args[0], "-test.run=^$"}, Env: []string{hostTestEnv + "=1"},
		Limits: Limits{MaxCallsPerSecond: 1 << 30}})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); <-s.Done() }()
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{}, 1)
	host := newFakeHost()
	host.answer = func(ns, method string, args json.RawMessage) (json.RawMessage, error) {
		if method == "focus" {
			done <- struct{}{}
		}
		return json.RawMessage(`{"$h":1}`), nil
	}
	ready := make(chan struct{}, 1)
	// Each event runs dom.query (one full round trip) and then dom.focus, whose arrival at the
	// Host ends the measurement. (Log lines cannot signal: they are rate limited.)
	h, err := s.StartRemixlet(RemixletConfig{RemixletID: "rt", API: 1, Host: host,
		Script: `await dom.on({ $h: 1 }, 'go', async () => { dom.focus(await dom.query('x')) }); rmx.log('ready')`,
		Log: func(level, msg string) {
			if msg == "ready" {
				ready <- struct{}{}
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	<-ready
	durs := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		if err := h.Dispatch(1, json.RawMessage(`{}`)); err != nil {
			b.Fatal(err)
		}
		<-done
		durs = append(durs, time.Since(t0))
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durs[len(durs)*99/100].Microseconds()), "p99-µs")
}
