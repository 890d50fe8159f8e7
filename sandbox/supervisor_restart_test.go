package sandbox

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"
)

// TestSupervisorCrashLoopBacksOff: a sandbox host that dies as soon as it starts (here a shell
// that exits) is restarted in the background, each time after twice the delay, up to the maximum,
// and each death is logged: it never spins, and it keeps trying.
func TestSupervisorCrashLoopBacksOff(t *testing.T) {
	sink := newLogSink()
	s := NewSupervisor(SupervisorConfig{
		Command:    []string{"/bin/sh", "-c", "exit 3"},
		MinBackoff: 10 * time.Millisecond,
		MaxBackoff: 80 * time.Millisecond,
		Log:        sink.log,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		<-s.Done()
	}()
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	restart := regexp.MustCompile(`^error: sandbox host \d+ died: exit status 3 \(no runtime to blame\); restarting in (\S+)$`)
	var delays []string
	deadline := time.After(waitLimit)
	for len(delays) < 6 {
		delays = delays[:0]
		for _, line := range sink.snapshot() {
			if m := restart.FindStringSubmatch(line); m != nil {
				delays = append(delays, m[1])
			}
		}
		if len(delays) >= 6 {
			break
		}
		select {
		case <-sink.added:
		case <-deadline:
			t.Fatalf("got %d restarts, want 6; log:\n%v", len(delays), sink.snapshot())
		}
	}
	if want := []string{"10ms", "20ms", "40ms", "80ms", "80ms", "80ms"}; !slices.Equal(delays[:6], want) {
		t.Errorf("restart delays %v, want %v", delays[:6], want)
	}
}
