package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// BenchmarkCorpusPageLoad measures what a person browsing feels of the proxy: every corpus page
// loaded in real Chromium directly, through the proxy (the page agent injected and connected)
// and through a second proxy relaying pages untouched (the benchmark-only mode, so the added
// time splits into the relay's part and the page agent's), one after the other with the order
// rotating, each timed by the browser's own Navigation Timing (first byte, DOMContentLoaded,
// load). The three modes are three browser contexts of one Chromium, each with its own proxy
// setting, cache and cookies. Third-party subresources are blocked in every mode, as in TestCorpus. Run it with
//
//	go test -run '^$' -bench CorpusPageLoad -benchtime 1x ./e2e/
//
// (part of `make bench`); it prints a table, with the renderer's main-thread CPU per visit in
// thread time (the figure the shared machine disturbs least), and reports the load medians and
// the added time's p50 and p90 (load and DOMContentLoaded; issue 14's targets: load +2 ms p50,
// +5 ms p90) as metrics. Timings are reported, never asserted.
func BenchmarkCorpusPageLoad(b *testing.B) {
	names := corpusBenchPages(b)
	// The relay alone: a second proxy in the benchmark-only mode that relays pages untouched (no
	// page agent, no CSP change), so the added time splits into the relay's part and the page
	// agent's part.
	sites, proxy := world.Sites(b), world.Proxy(b)
	relay := e2etest.StartProxy(b, sites, e2etest.WithBenchNoInject())
	// One Chromium, one browser context per mode: a browser instance carries a bias of its own
	// for as long as it runs (two identical modes in two browsers differed by up to 8 ms at p50),
	// which a comparison across browsers would count as the proxy's.
	shared := e2etest.Browser(b, e2etest.SharedBrowser(sites, proxy, relay))
	dtab, ptab, rtab := shared.NewTab(b), shared.NewTabThrough(b, proxy), shared.NewTabThrough(b, relay)
	for _, tab := range []*e2etest.Tab{dtab, ptab, rtab} {
		readyCorpusTab(b, tab)
		ctx, cancel := context.WithTimeout(tab.Context(), 10*time.Second)
		if err := chromedp.Do(ctx, enableThreadMetrics); err != nil {
			b.Fatalf("enabling the renderer's metrics: %v", err)
		}
		cancel()
	}
	// One warm-up load each: the proxy's leaf certificate, the page agent in the browser's cache,
	// the connections.
	url0 := "https://corpus.test/" + filepath.Base(names[0])
	modes := []struct {
		name      string
		tab       *e2etest.Tab
		waitAgent bool
	}{{"direct", dtab, false}, {"remixproxy", ptab, true}, {"relay only", rtab, false}}
	for _, m := range modes {
		if _, err := timedLoad(m.tab, url0, m.waitAgent); err != nil {
			b.Fatalf("%s warm-up: %v", m.name, err)
		}
	}

	var direct, proxied, relayed []pageTiming
	var failed []string
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, path := range names {
			url := "https://corpus.test/" + filepath.Base(path)
			var got [3]pageTiming
			var errs [3]error
			// The order rotates page by page so that no mode always loads first (cold caches,
			// the machine's other work) or always right after another.
			for k := range modes {
				m := (i + j + k) % len(modes)
				got[m], errs[m] = timedLoad(modes[m].tab, url, modes[m].waitAgent)
				if errs[m] == nil {
					got[m].CPU, errs[m] = rendererCPU(modes[m].tab)
				}
			}
			if errs[0] != nil || errs[1] != nil || errs[2] != nil {
				failed = append(failed, fmt.Sprintf("%s: direct %v, remixproxy %v, relay only %v", filepath.Base(path), errs[0], errs[1], errs[2]))
				continue
			}
			direct, proxied, relayed = append(direct, got[0]), append(proxied, got[1]), append(relayed, got[2])
		}
	}
	b.StopTimer()
	if len(direct) == 0 {
		b.Fatalf("no page loaded in every mode: %s", strings.Join(failed, "; "))
	}

	type measure struct {
		name string
		of   func(pageTiming) float64
	}
	measures := []measure{
		{"first byte (responseStart)", func(t pageTiming) float64 { return t.FirstByte }},
		{"DOMContentLoaded", func(t pageTiming) float64 { return t.DOMContentLoaded }},
		{"load", func(t pageTiming) float64 { return t.Load }},
		{"renderer main thread CPU, whole visit", func(t pageTiming) float64 { return t.CPU.Thread }},
		{"… of which script", func(t pageTiming) float64 { return t.CPU.Script }},
		{"… of which style and layout", func(t pageTiming) float64 { return t.CPU.StyleLayout }},
	}
	fmt.Printf("\nCorpus page loads in Chromium, %d pages (%d failed): direct, through remixproxy (page agent connected), and through remixproxy relaying pages untouched (benchmark-only mode: the relay's part); ms:\n\n", len(direct), len(failed))
	fmt.Println("| measure | direct p50 / p90 | remixproxy p50 / p90 | relay only p50 / p90 | added by remixproxy, p50 [95% CI] / p90 of per-page differences | of which the relay (relay only − direct) | of which the page agent (remixproxy − relay only), p50 [95% CI] / p90 |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, m := range measures {
		var dv, pv, rv, added, relayPart, agentPart []float64
		for k := range direct {
			d, p, r := m.of(direct[k]), m.of(proxied[k]), m.of(relayed[k])
			dv, pv, rv = append(dv, d), append(pv, p), append(rv, r)
			added, relayPart, agentPart = append(added, p-d), append(relayPart, r-d), append(agentPart, p-r)
		}
		addedLo, addedHi := medianCI(added)
		agentLo, agentHi := medianCI(agentPart)
		fmt.Printf("| %s | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %+.1f [%+.1f…%+.1f] / %+.1f | %+.1f / %+.1f | %+.1f [%+.1f…%+.1f] / %+.1f |\n", m.name,
			quantile(dv, 0.5), quantile(dv, 0.9), quantile(pv, 0.5), quantile(pv, 0.9), quantile(rv, 0.5), quantile(rv, 0.9),
			quantile(added, 0.5), addedLo, addedHi, quantile(added, 0.9), quantile(relayPart, 0.5), quantile(relayPart, 0.9),
			quantile(agentPart, 0.5), agentLo, agentHi, quantile(agentPart, 0.9))
		switch m.name {
		case "load":
			b.ReportMetric(quantile(dv, 0.5), "direct-load-p50-ms")
			b.ReportMetric(quantile(pv, 0.5), "proxied-load-p50-ms")
			b.ReportMetric(quantile(added, 0.5), "added-load-p50-ms")
			b.ReportMetric(addedLo, "added-load-p50-ci95-lo-ms")
			b.ReportMetric(addedHi, "added-load-p50-ci95-hi-ms")
			b.ReportMetric(quantile(added, 0.9), "added-load-p90-ms")
			b.ReportMetric(quantile(agentPart, 0.5), "agent-load-p50-ms")
		case "DOMContentLoaded":
			b.ReportMetric(quantile(added, 0.5), "added-dcl-p50-ms")
			b.ReportMetric(quantile(added, 0.9), "added-dcl-p90-ms")
			b.ReportMetric(quantile(agentPart, 0.5), "agent-dcl-p50-ms")
		case "renderer main thread CPU, whole visit":
			b.ReportMetric(quantile(agentPart, 0.5), "agent-renderer-cpu-p50-ms")
		}
	}
	fmt.Println("\n[lo…hi] is a 95% bootstrap confidence interval of the p50: on two shared cores one page's load jitters by tens of ms, so the p50 of 130 differences is known only to within a few ms.")
	fmt.Println("Issue 14's target for the added load time: ≤ 2 ms at p50, ≤ 5 ms at p90 (reported, never asserted).")
	for _, f := range failed {
		fmt.Println("failed:", f)
	}
}

// corpusBenchPages lists the corpus pages a benchmark loads, and skips b where the shared corpus
// is not checked out.
func corpusBenchPages(b *testing.B) []string {
	names, err := filepath.Glob(filepath.Join(corpusDir, "*.html"))
	if err != nil || len(names) == 0 {
		b.Skipf("no corpus pages in %s (the shared corpus is not checked out here; see ../shared/corpus/README.md)", corpusDir)
	}
	return names
}

// readyCorpusTab gives a benchmark's tab the corpus pages' navigation timeout and blocks its
// third-party requests, as TestCorpus does.
func readyCorpusTab(b *testing.B, tab *e2etest.Tab) {
	tab.NavigateTimeout = corpusNavigateTimeout
	ctx, cancel := context.WithTimeout(tab.Context(), 10*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, onlyCorpus); err != nil {
		b.Fatalf("blocking third-party requests: %v", err)
	}
}

// pageTiming is one load as Navigation Timing reports it, in milliseconds from its start, and
// the renderer's CPU time for the visit.
type pageTiming struct {
	FirstByte        float64 `json:"firstByte"`
	DOMContentLoaded float64 `json:"dcl"`
	Load             float64 `json:"load"`
	CPU              renderCPU
}

// renderCPU is the CPU time (ms) the renderer's main thread spent on one document, from its
// start until rendererCPU read it (settleWindow after the load event, and after the page agent
// connected): in thread time, so it counts what the page made the browser do rather than how
// long the shared machine kept it waiting, which the wall-clock times above include.
type renderCPU struct {
	Thread, Script, StyleLayout float64
}

// settleWindow is how long after the load event every mode's visit lasts before its CPU is read
// or its trace ends: the same span in every mode, so that what the page agent does right after
// the load (its launcher, its socket, its hello) is counted, and so is the page's own work in
// the same span. Until the fourth session of 2026-12-02 each mode waited 200 ms after it was
// ready, which for remixproxy was after the agent connected (tens of ms after the load): its
// span was the longer one, and the page's own late work in the difference was counted as the
// agent's (NOTES, 2026-12-02, fourth session). The agent connects well within it on the corpus
// pages; a visit whose agent connects later lasts until then (settle reports it).
const settleWindow = 600 * time.Millisecond

// settle waits until settleWindow has passed since the load event of the tab's document, and
// reports whether it had passed already (the visit is then longer than the window).
func settle(tab *e2etest.Tab) (late bool, err error) {
	since, err := e2etest.EvalE[float64](tab, `(() => { const n = performance.getEntriesByType('navigation')[0];
		return n && n.loadEventEnd > 0 ? performance.now() - n.loadEventEnd : -1; })()`)
	if err != nil {
		return false, fmt.Errorf("reading the time since the load: %w", err)
	}
	if since < 0 {
		return false, errors.New("reading the time since the load: no load event")
	}
	left := settleWindow - time.Duration(since*float64(time.Millisecond))
	if left <= 0 {
		return true, nil
	}
	time.Sleep(left)
	return false, nil
}

// enableThreadMetrics turns on the tab's Performance metrics with durations in thread time.
var enableThreadMetrics = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	_, err := cdp.Call(ctx, t, performance.Enable, performance.EnableParams{TimeDomain: performance.EnableTimeDomainThreadTicks})
	return err
})

// rendererCPU waits until settleWindow after the load and reads the current document's renderer
// metrics (they start again at each navigation).
func rendererCPU(tab *e2etest.Tab) (renderCPU, error) {
	if _, err := settle(tab); err != nil {
		return renderCPU{}, err
	}
	m := map[string]float64{}
	ctx, cancel := context.WithTimeout(tab.Context(), 10*time.Second)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		r, err := cdp.Call(ctx, t, performance.GetMetrics, cdp.Empty{})
		if err != nil {
			return err
		}
		for _, x := range r.Metrics {
			m[x.Name] = x.Value * 1000
		}
		return nil
	}))
	if err != nil {
		return renderCPU{}, fmt.Errorf("reading the renderer's metrics: %w", err)
	}
	return renderCPU{Thread: m["ThreadTime"], Script: m["ScriptDuration"], StyleLayout: m["RecalcStyleDuration"] + m["LayoutDuration"]}, nil
}

// timedLoad navigates tab to url, waits for the load event (and, through the proxy, for the page
// agent), and reads the navigation's timing.
func timedLoad(tab *e2etest.Tab, url string, waitAgent bool) (pageTiming, error) {
	if _, err := tab.NavigateErr(url); err != nil {
		return pageTiming{}, fmt.Errorf("loading: %w", err)
	}
	if waitAgent {
		if err := tab.WaitConnectedErr(corpusConnectedTimeout); err != nil {
			return pageTiming{}, err
		}
	}
	const read = `(() => { const n = performance.getEntriesByType('navigation')[0];
		return n && n.loadEventEnd > 0 ? {firstByte: n.responseStart, dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd} : null; })()`
	for deadline := time.Now().Add(corpusNavigateTimeout); ; time.Sleep(20 * time.Millisecond) {
		t, err := e2etest.EvalE[*pageTiming](tab, read)
		if err != nil {
			return pageTiming{}, fmt.Errorf("reading the timing: %w", err)
		}
		if t != nil {
			return *t, nil
		}
		if time.Now().After(deadline) {
			return pageTiming{}, fmt.Errorf("no load event within %v", corpusNavigateTimeout)
		}
	}
}

// medianCI is a 95% bootstrap confidence interval of v's median: 2000 resamples with a fixed
// seed, so that a run's table follows from its data alone. v is left as it is.
func medianCI(v []float64) (lo, hi float64) {
	if len(v) == 0 {
		return 0, 0
	}
	r := rand.New(rand.NewPCG(14, 2))
	meds := make([]float64, 2000)
	sample := make([]float64, len(v))
	for i := range meds {
		for j := range sample {
			sample[j] = v[r.IntN(len(v))]
		}
		meds[i] = quantile(sample, 0.5)
	}
	return quantile(meds, 0.025), quantile(meds, 0.975)
}

// quantile is the q-quantile of v (nearest rank); v is sorted in place.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	i := int(q*float64(len(v)-1) + 0.5)
	return v[i]
}
