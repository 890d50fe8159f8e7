//go:build !linux

package sandbox

import "time"

// taskCPU would be the CPU clock of the thread that runs a runtime's tasks; off Linux there is
// none here, and the task budget is wall-clock time (Limits.TaskBudget).
type taskCPU struct{}

func startTaskCPU() taskCPU { return taskCPU{} }

func (taskCPU) stop() {}

func (taskCPU) used() (time.Duration, bool) { return 0, false }
