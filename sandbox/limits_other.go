//go:build !linux

package sandbox

// applyOSLimits is the weaker fallback outside Linux: no kernel limit is set. The child still
// runs in its own process, so a runaway runtime can only take the child down (the Supervisor
// restarts it), and its Go soft memory limit (debug.SetMemoryLimit) still applies; but a memory
// bomb can use the machine's memory until the Go runtime fails an allocation. On macOS
// RLIMIT_AS is not enforced by the kernel; on Windows a job object would be the equivalent
// (not implemented).
func applyOSLimits(h HostLimits) (string, error) {
	return "no OS limits on this platform (soft Go memory limit only)", nil
}

// onCPULimit does nothing where no CPU limit is set.
func onCPULimit(fn func()) {}
