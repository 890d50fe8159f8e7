package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProcCPU: the process CPU clock read for a pid agrees with what the kernel reports to the
// process itself (getrusage), and a child's and grandchild's time is found by procTreeCPU.
func TestProcCPU(t *testing.T) {
	spin := time.Now().Add(150 * time.Millisecond)
	for x := 0; time.Now().Before(spin); x++ {
		_ = x * x
	}
	var ru syscall.Rusage
	before := procCPU(os.Getpid())
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	after := procCPU(os.Getpid())
	self := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	// getrusage is read between the two clock reads; both count the same run time.
	if self < before-10*time.Millisecond || self > after+10*time.Millisecond {
		t.Errorf("procCPU(self) = %v … %v, getrusage says %v", before, after, self)
	}
	if got := procCPU(0); got != 0 {
		t.Errorf("procCPU(0) = %v, want 0", got)
	}

	// A shell that starts a busy grandchild: the tree's time includes it.
	cmd := exec.Command("sh", "-c", "sh -c 'i=0; while [ $i -lt 100000000 ]; do i=$((i+1)); done' & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so the whole group can be killed
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	var kids []int
	for deadline := time.Now().Add(5 * time.Second); len(kids) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		kids = descendants(cmd.Process.Pid)
	}
	if len(kids) == 0 {
		t.Fatal("descendants found no child of the shell")
	}
	for deadline := time.Now().Add(5 * time.Second); procCPU(kids[0]) < 50*time.Millisecond && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	own, tree := procCPU(cmd.Process.Pid), procTreeCPU(cmd.Process.Pid)
	if tree < own+50*time.Millisecond {
		t.Errorf("procTreeCPU = %v, own %v: the busy grandchild's time is missing", tree, own)
	}
}

// TestRatioCell: per-round ratios pair samples of the same round.
func TestRatioCell(t *testing.T) {
	mk := func(vals ...float64) []sample {
		var out []sample
		for i, v := range vals {
			out = append(out, sample{row: row{value: v}, round: i + 1})
		}
		return out
	}
	cases := []struct {
		name string
		a, b []sample
		pct  bool
		want string
	}{
		{"percent", mk(110, 120, 130), mk(100, 100, 100), true, "+20% (+10…+30%)"},
		{"factor", mk(50, 60, 70), mk(100, 100, 100), false, "0.60× (0.50–0.70)"},
		{"paired by round", mk(200, 100), mk(100, 200), false, "2.00× (0.50–2.00)"},
		{"none", mk(1), nil, true, "—"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ratioCell(c.a, c.b, c.pct); !strings.Contains(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
