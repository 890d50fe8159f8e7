package sandbox

import (
	"runtime"
	"sort"
	"testing"
	"time"
)

// benchScript is a small, typical remixlet.
const benchScript = `
rmx.keep('no promoted', {
  check: async () => (await dom.query('.promoted')) === null,
  repair: async () => { for (const el of await dom.queryAll('.promoted')) await dom.hide(el) },
});
rmx.log('started');
`

// BenchmarkRuntimeStart measures starting one runtime (compile, tame, bind, run the script's
// first task) and reports the p50 and p99 over b.N starts.
func BenchmarkRuntimeStart(b *testing.B) {
	started := make(chan struct{}, 1)
	host := newFakeHost()
	host.answer = nil
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		r, err := NewRuntime(RuntimeConfig{RemixletID: "bench", API: 1, Script: benchScript, Host: host,
			Log: func(level, msg string) {
				if msg == "started" {
					started <- struct{}{}
				}
			}})
		if err != nil {
			b.Fatal(err)
		}
		<-started
		durs = append(durs, time.Since(t0))
		r.Stop()
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durs[len(durs)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkRuntimeMemory measures the Go heap and stack held by one idle runtime that ran
// benchScript (live heap and stacks after GC, divided by the runtimes alive). goja builds most
// built-ins lazily, so an idle runtime is small; the child's RSS per runtime
// (BenchmarkHostMemory) includes the collector's headroom and is the figure to plan with.
func BenchmarkRuntimeMemory(b *testing.B) {
	const n = 100
	for b.Loop() {
		started := make(chan struct{}, n)
		host := newFakeHost()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rs := make([]*Runtime, 0, n)
		for range n {
			r, err := NewRuntime(RuntimeConfig{RemixletID: "bench", API: 1, Script: benchScript, Host: host,
				Log: func(level, msg string) {
					if msg == "started" {
						started <- struct{}{}
					}
				}})
			if err != nil {
				b.Fatal(err)
			}
			rs = append(rs, r)
		}
		for range n {
			<-started
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		used := func(m *runtime.MemStats) int64 { return int64(m.HeapAlloc + m.StackInuse) }
		b.ReportMetric(float64(used(&after)-used(&before))/n/1024, "KiB/runtime")
		for _, r := range rs {
			r.Stop()
		}
	}
}
