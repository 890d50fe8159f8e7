//go:build unix

package sandbox

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the whole process has used so far (all its threads, user and
// system); ok is false where it cannot be read. The task budget reads it because it bounds a
// task's own CPU from above without pinning the task to a thread: if the process used less than
// the budget since a task began, so did the task (Limits.TaskBudget).
func processCPU() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
