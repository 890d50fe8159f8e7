package main

// The proxies' own CPU time per request. Each proxy is a process of its own (remixproxy, its
// injection-off twin, goproxy-bare, mitmdump), so the CPU it spends during a timed run, divided by
// the requests answered in that run, is its cost per request — whatever else shares the cores
// (the load generator, the test site, other people's builds) is not counted, only slowed.
//
// CPU time is read from the kernel's process CPU clock (clock_gettime on the clock of another
// process, CPUCLOCK_SCHED): the same quantity as utime+stime in /proc/PID/stat (the thread
// group's run time, exited threads included) at nanosecond rather than 10 ms resolution. The
// proxy's descendants (remixproxy's sandbox host, when one runs) are added.

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Scenario names of the CPU rows.
const (
	cpuSmall   = "small HTML, proxy CPU per request"
	cpu200k    = "200 KB HTML pages, proxy CPU per request"
	cpuNewHost = "first contact, proxy CPU per new host"
)

// cpuRow is the CPU-per-request row of a run that answered n requests (what: their name) while
// the target's processes spent cpu; none for direct, which has no proxy.
func cpuRow(scenario string, tg *target, cpu time.Duration, n int, what string) []row {
	if tg.pid == 0 || n == 0 {
		return nil
	}
	perReq := float64(cpu.Microseconds()) / float64(n)
	return []row{{scenario, tg.name, "µs", perReq, false, fmt.Sprintf("%.0f ms CPU over %d %s", float64(cpu.Microseconds())/1000, n, what)}}
}

// procCPU is the CPU time pid's threads have used (0 if pid is gone).
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	clock := uintptr((^pid)<<3 | 2) // MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clock, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// procTreeCPU is procCPU of pid and of every live descendant of it.
func procTreeCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	total := procCPU(pid)
	for _, c := range descendants(pid) {
		total += procCPU(c)
	}
	return total
}

// descendants are the live processes below pid, read from /proc's PPid fields.
func descendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp := parentPID(p); pp > 0 {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

// parentPID is the PPid field of /proc/PID/status (0 if unreadable).
func parentPID(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// printCPUTable sets the proxies' CPU per request side by side: one column per proxy (median
// of the rounds), then what injection adds to remixproxy's relay (remixproxy against its
// injection-off twin) and remixproxy against bare goproxy, each the median of the per-round
// ratios (same round, same machine state) with their range.
func printCPUTable(w io.Writer, targets []*target, samples map[string][]sample) {
	var proxies []string
	for _, tg := range targets {
		if tg.pid != 0 {
			proxies = append(proxies, tg.name)
		}
	}
	var lines []string
	for _, sc := range []string{cpuSmall, cpu200k, cpuNewHost} {
		if len(samples[sc+"\x00remixproxy"]) == 0 {
			continue
		}
		cells := []string{sc}
		for _, p := range proxies {
			cells = append(cells, medianCell(samples[sc+"\x00"+p]))
		}
		rp := samples[sc+"\x00remixproxy"]
		cells = append(cells,
			ratioCell(rp, samples[sc+"\x00"+noInjectName], true),
			ratioCell(rp, samples[sc+"\x00goproxy-bare"], false))
		lines = append(lines, "| "+strings.Join(cells, " | ")+" |")
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\nProxy CPU time per request, µs (median of %d rounds; the process's own CPU clock over the timed run ÷ requests answered):\n\n", *rounds)
	fmt.Fprintf(w, "| scenario | %s | injection adds (remixproxy vs %s) | remixproxy ÷ goproxy-bare |\n", strings.Join(proxies, " | "), noInjectName)
	fmt.Fprintf(w, "|---|%s---|---|\n", strings.Repeat("---|", len(proxies)))
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// medianCell is the median of samples' values.
func medianCell(ss []sample) string {
	if len(ss) == 0 {
		return "—"
	}
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = s.value
	}
	sort.Float64s(v)
	return fmt.Sprintf("%.1f", v[len(v)/2])
}

// ratioCell is the median and range of a's values divided by b's of the same round; as a
// percentage added (a/b − 1) when pct, else as a factor.
func ratioCell(a, b []sample, pct bool) string {
	byRound := map[int]float64{}
	for _, s := range b {
		byRound[s.round] = s.value
	}
	var r []float64
	for _, s := range a {
		if d := byRound[s.round]; d > 0 {
			r = append(r, s.value/d)
		}
	}
	if len(r) == 0 {
		return "—"
	}
	sort.Float64s(r)
	if pct {
		return fmt.Sprintf("%+.0f%% (%+.0f…%+.0f%%)", (r[len(r)/2]-1)*100, (r[0]-1)*100, (r[len(r)-1]-1)*100)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", r[len(r)/2], r[0], r[len(r)-1])
}
