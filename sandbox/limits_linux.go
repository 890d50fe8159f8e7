//go:build linux

package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// onCPULimit calls fn when the soft RLIMIT_CPU is reached (SIGXCPU, which the Go runtime
// otherwise ignores until the hard limit's SIGKILL).
func onCPULimit(fn func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGXCPU)
	go func() {
		<-ch
		fn()
	}()
}

// applyOSLimits sets the kernel limits on the calling process (the sandbox host child):
//
//   - RLIMIT_DATA = h.Memory: since Linux 4.7 it counts private writable mappings, which is
//     where the Go heap lives, so an allocation past it fails and the Go runtime aborts the child
//     with "out of memory". (RLIMIT_AS alone does not work as the memory limit: an idle Go
//     process already reserves over 1 GiB of address space that it never touches.)
//   - RLIMIT_AS = the address space in use now + 2 × h.Memory, a backstop against huge
//     reservations.
//   - RLIMIT_CPU = h.CPUSeconds: at the soft limit (SIGXCPU, see onCPULimit) the child exits
//     with exitRecycle and is restarted without blaming a runtime; the hard limit five seconds
//     later is SIGKILL.
func applyOSLimits(h HostLimits) (string, error) {
	mem := uint64(h.Memory)
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: mem, Max: mem}); err != nil {
		return "", fmt.Errorf("setting RLIMIT_DATA to %d: %w", mem, err)
	}
	desc := fmt.Sprintf("linux rlimits: RLIMIT_DATA=%d", mem)
	if vm, err := vmSize(); err == nil {
		as := vm + 2*mem
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
			return "", fmt.Errorf("setting RLIMIT_AS to %d: %w", as, err)
		}
		desc += fmt.Sprintf(" RLIMIT_AS=%d", as)
	}
	cpu := &syscall.Rlimit{Cur: h.CPUSeconds, Max: h.CPUSeconds + 5}
	if err := syscall.Setrlimit(syscall.RLIMIT_CPU, cpu); err != nil {
		return "", fmt.Errorf("setting RLIMIT_CPU to %ds: %w", h.CPUSeconds, err)
	}
	return desc + fmt.Sprintf(" RLIMIT_CPU=%ds", h.CPUSeconds), nil
}

// vmSize returns the process's current address space size in bytes, from /proc/self/status.
func vmSize() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("reading VmSize: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading VmSize %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("reading VmSize: not in /proc/self/status")
}
