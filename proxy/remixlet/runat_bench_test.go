package remixlet

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// BenchmarkRunAtReadyToOps measures the proxy's and the sandbox's share of a document_end
// script's start: from the page agent's DOMContentLoaded report to the script's first two dom
// calls (`dom.query("h1")`, then `dom.hide`) sent to the page, with a warm sandbox host and a
// fake page that answers at once. It reports the p50 and p90 in µs. The browser's share (the
// report's trip, the renderer taking the ops after DOMContentLoaded, the frame) is measured by
// e2e/firstframe.
func BenchmarkRunAtReadyToOps(b *testing.B) {
	st := openTestStore(b)
	addStyledRemixlet(b, st, "hide h1", `"https://shop.test/*"`, store.Files{sandbox.ScriptFile: []byte(`const h = await dom.query("h1"); await dom.hide(h);`)})
	r := newTestRunner(b, st)
	if _, err := r.supervisor(); err != nil {
		b.Fatal(err)
	}
	var durs []time.Duration
	n := 0
	for b.Loop() {
		n++
		f := &fakePage{url: "https://shop.test/"}
		f.answer = func(op panel.Op) panel.Result { return panel.Result{Ok: true, Value: map[string]int{"$h": 1}} }
		pc := f.conn()
		pc.id = fmt.Sprint("bench-", n)
		f.deliver = func(typ string, raw json.RawMessage) { r.pageMessage(pc.id, typ, raw) }
		r.pageConnected(context.Background(), pc)
		hello(r, pc.id, panel.ReadyLoading)
		t0 := time.Now()
		ready(r, pc.id, panel.ReadyInteractive)
		for len(f.sent()) < 2 {
			time.Sleep(50 * time.Microsecond)
		}
		durs = append(durs, time.Since(t0))
		r.pageGone(pc.id)
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durs[len(durs)*9/10].Microseconds()), "p90-µs")
}
