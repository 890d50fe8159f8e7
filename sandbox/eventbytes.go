package sandbox

import "github.com/remixproxy/remixproxy/internal/budget"

// Events waiting for a runtime are bounded in bytes as well as in number. An event's JSON
// (an input's value rides on its events) is held, copied, until its listener runs; 1000
// events of 256 KiB were 250 MiB for one runtime whose loop is busy, and several runtimes
// came near the sandbox host's memory limit (pass 4b). Each runtime may hold
// Limits.MaxPendingEventBytes, and all runtimes of the process together
// MaxProcessPendingEventBytes; an event past either is refused, as one past
// Limits.MaxPendingEvents is.

// MaxProcessPendingEventBytes bounds the bytes of events waiting in every runtime of the
// process (the sandbox host child hosts them all).
const MaxProcessPendingEventBytes = 64 << 20

// processEvents is the bytes of events waiting in the process's runtimes.
var processEvents = budget.New(MaxProcessPendingEventBytes)

// pendingEventBytes is the bytes of events waiting in the process's runtimes (for tests).
func pendingEventBytes() int64 {
	return processEvents.InUse()
}
