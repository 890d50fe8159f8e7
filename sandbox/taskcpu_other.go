//go:build !unix

package sandbox

import "time"

// processCPU would be the process's CPU time; here there is none, and the task budget is
// wall-clock time (Limits.TaskBudget).
func processCPU() (time.Duration, bool) { return 0, false }
