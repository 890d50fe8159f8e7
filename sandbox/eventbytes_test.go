package sandbox

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"
)

// busyListener is a script whose listener 1 keeps the runtime's loop busy for a while on its
// first event (logging BUSY) for 3 s, so that the events dispatched meanwhile wait in the queue.
const busyListener = `
	let first = true;
	await dom.on({ $h: 1 }, 'input', () => {
		if (!first) return;
		first = false;
		rmx.log('BUSY');
		const until = Date.now() + 3000;
		while (Date.now() < until) {}
	});
	rmx.log('READY');
`

// busyLimits let the busy listener run its 3 s.
var busyLimits = Limits{TaskBudget: 6 * time.Second}

// bigEvent is an input event of about 250 KiB (an input's value rides on its events).
var bigEvent = json.RawMessage(`{"type":"input","value":"` + strings.Repeat("v", 250<<10) + `"}`)

// flood dispatches n big events and returns how many the runtime took.
func flood(r *Runtime, n int) (took int) {
	for range n {
		if r.Dispatch(1, bigEvent) == nil {
			took++
		}
	}
	return took
}

func TestEventQueueIsBoundedInBytes(t *testing.T) {
	r, sink := startRuntime(t, busyListener, newFakeHost(), busyLimits)
	sink.waitFor(t, "READY")
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	before := heap()
	if err := r.Dispatch(1, json.RawMessage(`{"type":"input"}`)); err != nil {
		t.Fatal(err)
	}
	sink.waitFor(t, "BUSY")
	took := flood(r, 100) // 25 MiB, under the 1000 events MaxPendingEvents allows
	grown := heap() - before
	t.Logf("100 events of 250 KiB at a busy runtime: %d taken, heap %+d KiB", took, grown>>10)
	if max := DefaultMaxPendingEventBytes / len(bigEvent); took > max {
		t.Errorf("the runtime took %d events of %d KiB while busy, want at most %d (%d MiB)", took, len(bigEvent)>>10, max, DefaultMaxPendingEventBytes>>20)
	}
	if grown > DefaultMaxPendingEventBytes+4<<20 {
		t.Errorf("the heap grew %d MiB with the events waiting, want under %d MiB", grown>>20, DefaultMaxPendingEventBytes>>20)
	}
	if !sink.has("bytes of events waiting") {
		t.Errorf("no event dropped for its bytes was logged:\n%s", strings.Join(sink.snapshot(), "\n"))
	}
	r.Stop()
	waitDone(t, r)
	if n := pendingEventBytes(); n != 0 {
		t.Errorf("%d bytes of events counted after the runtime stopped", n)
	}
}

func TestEventQueuesAreBoundedForTheProcess(t *testing.T) {
	lim := busyLimits
	lim.MaxPendingEventBytes = 32 << 20
	var rs []*Runtime
	refused := false
	for range 3 { // 3 × 32 MiB, over the process's 64
		r, sink := startRuntime(t, busyListener, newFakeHost(), lim)
		sink.waitFor(t, "READY")
		if err := r.Dispatch(1, json.RawMessage(`{"type":"input"}`)); err != nil {
			t.Fatal(err)
		}
		sink.waitFor(t, "BUSY")
		flood(r, 32<<20/len(bigEvent))
		if n := pendingEventBytes(); n > MaxProcessPendingEventBytes {
			t.Errorf("%d MiB of events waiting in the process, over its %d MiB", n>>20, MaxProcessPendingEventBytes>>20)
		}
		refused = refused || sink.has("the sandbox's runtimes hold")
		rs = append(rs, r)
	}
	if !refused {
		t.Error("no event was refused for the process's bound with 96 MiB dispatched to busy runtimes")
	}
	for _, r := range rs {
		r.Stop()
		waitDone(t, r)
	}
	if n := pendingEventBytes(); n != 0 {
		t.Errorf("%d bytes of events counted after the runtimes stopped", n)
	}
}
