package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// BenchmarkCorpusPageLoad measures what a person browsing feels of the proxy: every corpus page
// loaded in real Chromium directly and through the proxy (the page agent injected and
// connected), one after the other with the order alternating, each timed by the browser's own
// Navigation Timing (first byte, DOMContentLoaded, load). Third-party subresources are blocked
// in both modes, as in TestCorpus. Run it with
//
//	go test -run '^$' -bench CorpusPageLoad -benchtime 1x ./e2e/
//
// (part of `make bench`); it prints a table and reports the load medians and the added time's p50
// and p90 (load and DOMContentLoaded; issue 14's targets: load +2 ms p50, +5 ms p90) as metrics. Timings are
// reported, never asserted.
func BenchmarkCorpusPageLoad(b *testing.B) {
	names, err := filepath.Glob(filepath.Join(corpusDir, "*.html"))
	if err != nil || len(names) == 0 {
		b.Skipf("no corpus pages in %s (the shared corpus is not checked out here; see ../shared/corpus/README.md)", corpusDir)
	}
	dtab, ptab := world.DirectTab(b), world.ProxiedTab(b)
	for _, tab := range []*e2etest.Tab{dtab, ptab} {
		tab.NavigateTimeout = corpusNavigateTimeout
		ctx, cancel := context.WithTimeout(tab.Context(), 10*time.Second)
		if err := chromedp.Do(ctx, onlyCorpus); err != nil {
			b.Fatalf("%s: blocking third-party requests: %v", tab.Browser().Name(), err)
		}
		cancel()
	}
	// One warm-up load each: the proxy's leaf certificate, the page agent in the browser's cache,
	// the connections.
	url0 := "https://corpus.test/" + filepath.Base(names[0])
	if _, err := timedLoad(dtab, url0, false); err != nil {
		b.Fatalf("direct warm-up: %v", err)
	}
	if _, err := timedLoad(ptab, url0, true); err != nil {
		b.Fatalf("proxied warm-up: %v", err)
	}

	var direct, proxied []pageTiming
	var failed []string
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, path := range names {
			url := "https://corpus.test/" + filepath.Base(path)
			var d, p pageTiming
			var derr, perr error
			if (i+j)%2 == 0 {
				d, derr = timedLoad(dtab, url, false)
				p, perr = timedLoad(ptab, url, true)
			} else {
				p, perr = timedLoad(ptab, url, true)
				d, derr = timedLoad(dtab, url, false)
			}
			if derr != nil || perr != nil {
				failed = append(failed, fmt.Sprintf("%s: direct %v, proxied %v", filepath.Base(path), derr, perr))
				continue
			}
			direct, proxied = append(direct, d), append(proxied, p)
		}
	}
	b.StopTimer()
	if len(direct) == 0 {
		b.Fatalf("no page loaded in both modes: %s", strings.Join(failed, "; "))
	}

	type measure struct {
		name string
		of   func(pageTiming) float64
	}
	measures := []measure{
		{"first byte (responseStart)", func(t pageTiming) float64 { return t.FirstByte }},
		{"DOMContentLoaded", func(t pageTiming) float64 { return t.DOMContentLoaded }},
		{"load", func(t pageTiming) float64 { return t.Load }},
	}
	fmt.Printf("\nCorpus page loads in Chromium, %d pages (%d failed), direct vs through remixproxy (page agent connected); ms:\n\n", len(direct), len(failed))
	fmt.Println("| measure | direct p50 / p90 | remixproxy p50 / p90 | added, p50 / p90 of per-page differences |")
	fmt.Println("|---|---|---|---|")
	for _, m := range measures {
		var dv, pv, diff []float64
		for k := range direct {
			dv, pv = append(dv, m.of(direct[k])), append(pv, m.of(proxied[k]))
			diff = append(diff, m.of(proxied[k])-m.of(direct[k]))
		}
		fmt.Printf("| %s | %.1f / %.1f | %.1f / %.1f | %+.1f / %+.1f |\n", m.name,
			quantile(dv, 0.5), quantile(dv, 0.9), quantile(pv, 0.5), quantile(pv, 0.9), quantile(diff, 0.5), quantile(diff, 0.9))
		switch m.name {
		case "load":
			b.ReportMetric(quantile(dv, 0.5), "direct-load-p50-ms")
			b.ReportMetric(quantile(pv, 0.5), "proxied-load-p50-ms")
			b.ReportMetric(quantile(diff, 0.5), "added-load-p50-ms")
			b.ReportMetric(quantile(diff, 0.9), "added-load-p90-ms")
		case "DOMContentLoaded":
			b.ReportMetric(quantile(diff, 0.5), "added-dcl-p50-ms")
			b.ReportMetric(quantile(diff, 0.9), "added-dcl-p90-ms")
		}
	}
	fmt.Println("\nIssue 14's target for the added load time: ≤ 2 ms at p50, ≤ 5 ms at p90 (reported, never asserted).")
	for _, f := range failed {
		fmt.Println("failed:", f)
	}
}

// pageTiming is one load as Navigation Timing reports it, in milliseconds from its start.
type pageTiming struct {
	FirstByte        float64 `json:"firstByte"`
	DOMContentLoaded float64 `json:"dcl"`
	Load             float64 `json:"load"`
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

// quantile is the q-quantile of v (nearest rank); v is sorted in place.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	i := int(q*float64(len(v)-1) + 0.5)
	return v[i]
}
