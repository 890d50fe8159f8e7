package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// GC tuning for the proxy process. The proxy's live heap is small (about 3 MiB under load on
// the bench) while every request allocates, so with the default GOGC=100 the collector runs
// every few tens of milliseconds with a 4–6 MiB heap goal; on the bench's small pages that
// costs about a tenth of the requests per second. minHeapGoal gives the heap a floor instead:
// while the live heap is small the GC percentage is raised so that the heap may grow to
// minHeapGoal before the next collection; once the live heap is half of that or more, GOGC is
// back at 100 and memory grows as it would without tuning (so the memory figures of large
// sessions are unchanged). A GOGC the person sets in the environment wins: then nothing is
// tuned.
//
// Measured with `go run ./e2e/bench --scenarios small,200k` (9 interleaved rounds, the same
// binary with GOGC=100 as the other target): small pages +9–12% requests/s, 200 KB pages +3%;
// RSS under the small-page load 45–50 MiB instead of 34 MiB. A 32 MiB floor was no faster and
// took 67 MiB.

// minHeapGoal is the smallest heap goal the tuner aims for.
const minHeapGoal = 16 << 20

// maxGCPercent bounds the percentage the tuner sets.
const maxGCPercent = 1000

// tuneGC starts the tuner: it re-computes the GC percentage after every collection.
func tuneGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	t := &gcTuner{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: 100}
	t.arm()
}

// gcTuner sets the GC percentage from the live heap; it runs in the finalizer goroutine, one
// collection at a time.
type gcTuner struct {
	sample  []metrics.Sample
	percent int
}

// gcSentinel is garbage whose finalizer runs the tuner. It holds a pointer so that it is never
// a tiny allocation, whose finalizers may not run.
type gcSentinel struct{ t *gcTuner }

// arm makes the tuner run after the next collection: the finalizer of an object nothing
// references runs once a collection has found it unreachable.
func (t *gcTuner) arm() {
	runtime.SetFinalizer(&gcSentinel{t}, func(s *gcSentinel) {
		s.t.tune()
		s.t.arm()
	})
}

func (t *gcTuner) tune() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	want := gcPercentFor(t.sample[0].Value.Uint64())
	// Only a change of more than a tenth is applied: the live heap moves a little every cycle.
	if d := want - t.percent; d*10 > t.percent || -d*10 > t.percent {
		t.percent = want
		debug.SetGCPercent(want)
	}
}

// gcPercentFor is the GC percentage that puts the heap goal (live × (1 + percent/100)) at
// minHeapGoal for a live heap of live bytes, between 100 and maxGCPercent.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return maxGCPercent
	}
	p := int64(minHeapGoal)*100/int64(live) - 100
	return int(min(max(p, 100), maxGCPercent))
}
