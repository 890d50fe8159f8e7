//go:build linux

package sandbox

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// taskCPU is the CPU clock of the OS thread that runs a runtime's tasks, so that the task budget
// counts the CPU a task used, not the time a busy machine kept it waiting (Limits.TaskBudget).
type taskCPU struct {
	clock int32 // the thread's CPU clock: the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)
	ok    bool
}

// startTaskCPU locks the calling goroutine (the one about to run a task) to its OS thread until
// stop, and returns that thread's clock. Locked only for the task: a thread locked for a
// runtime's whole life would hold one OS thread (and its stack, which the sandbox host's
// RLIMIT_DATA counts) per runtime.
func startTaskCPU() taskCPU {
	runtime.LockOSThread()
	tid := unix.Gettid()
	return taskCPU{clock: int32(^tid<<3 | 6), ok: true}
}

// stop releases the thread startTaskCPU locked.
func (c taskCPU) stop() {
	if c.ok {
		runtime.UnlockOSThread()
	}
}

// used is the thread's CPU time so far; ok is false where it cannot be read.
func (c taskCPU) used() (d time.Duration, ok bool) {
	if !c.ok {
		return 0, false
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(c.clock, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
