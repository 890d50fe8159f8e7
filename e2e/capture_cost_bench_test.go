package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// BenchmarkAgentCaptureFirstTouch measures the floor under the page agent's cost before a page's
// load: the page agent captures the built-ins it calls before any page script runs
// (panel/pageagent/prologue.js), and Blink creates a window's interface objects (HTMLFormElement,
// CloseEvent, …) lazily, at their first touch. So every page pays, at the agent's start, for each
// interface the capture reads that the page would not have touched before its load. The
// benchmark reads the interface names the agent's files take from the window (`win.Name`),
// splits them into those of the page tools (tool_*.js, only) and the rest (the channel, the
// remixlet policy, services, the launcher), and times their first touch in 60 fresh documents
// in Chromium (about:blank frames written synchronously, so each is a new window). Run it with
//
//	go test -run '^$' -bench AgentCaptureFirstTouch -benchtime 1x ./e2e/
//
// (part of `make bench`). Timings are reported, never asserted. performance.now() is coarsened
// to 0.1 ms outside cross-origin isolation, so the means over the 60 documents are the figures.
func BenchmarkAgentCaptureFirstTouch(b *testing.B) {
	tools, rest, err := agentInterfaces(filepath.Join("..", "panel", "pageagent"))
	if err != nil {
		b.Fatal(err)
	}
	tab := e2etest.Browser(b, e2etest.BrowserOptions{Name: "first touch"}).NewTab(b)
	tab.Navigate("about:blank")
	touch := func(names []string) string {
		var s strings.Builder
		for _, n := range names {
			fmt.Fprintf(&s, "void (window.%s && window.%s.prototype);", n, n)
		}
		return s.String()
	}
	// Each frame's script times the rest, then the tools' interfaces not already touched, then
	// the rest again (touched already: what a capture costs without the first touch).
	inner := `<script>var P = performance, t = P.now();` + touch(rest) + `var a = P.now() - t; t = P.now();` +
		touch(tools) + `var b = P.now() - t; t = P.now();` + touch(rest) + `var c = P.now() - t;
		parent.firstTouch.push([a, b, c]);</` + `script>`
	const docs = 60
	script := fmt.Sprintf(`(() => {
		window.firstTouch = [];
		for (let i = 0; i < %d; i++) {
			const f = document.createElement('iframe');
			document.body.appendChild(f);
			const d = f.contentDocument;
			d.open(); d.write(%q); d.close();
			f.remove();
		}
		const mean = (k) => window.firstTouch.reduce((s, r) => s + r[k], 0) / window.firstTouch.length;
		return [mean(0), mean(1), mean(2), window.firstTouch.length];
	})()`, docs, inner)
	b.ResetTimer()
	var got []float64
	for i := 0; i < b.N; i++ {
		got, err = e2etest.EvalE[[]float64](tab, script)
		if err != nil {
			b.Fatalf("timing the first touch: %v", err)
		}
	}
	b.StopTimer()
	if len(got) != 4 || got[3] != docs {
		b.Fatalf("timing the first touch: got %v, want the three means over %d documents", got, docs)
	}
	fmt.Printf("\nFirst touch of the interfaces the page agent captures, in fresh documents in Chromium (mean over %d documents, ms):\n\n", docs)
	fmt.Println("| interfaces | count | first touch | touched again |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| the channel, the remixlet policy, services, the launcher | %d | %.2f | %.2f |\n", len(rest), got[0], got[2])
	fmt.Printf("| the page tools' own (tool_*.js, not used by the rest) | %d | %.2f | |\n", len(tools), got[1])
	b.ReportMetric(got[0], "rest-first-touch-ms")
	b.ReportMetric(got[1], "tools-first-touch-ms")
	b.ReportMetric(got[2], "rest-touched-again-ms")
}

// agentInterfaces lists the window's interfaces the page agent's files read (`win.Name`, outside
// comment lines): those only the page tools read (tool_*.js) and the rest.
func agentInterfaces(dir string) (tools, rest []string, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.js"))
	if err != nil || len(files) == 0 {
		return nil, nil, fmt.Errorf("listing the page agent's files in %s: %v", dir, err)
	}
	name := regexp.MustCompile(`\bwin\.([A-Z][A-Za-z0-9]*)`)
	toolSet, restSet := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the page agent: %w", err)
		}
		set := restSet
		if strings.HasPrefix(filepath.Base(f), "tool_") {
			set = toolSet
		}
		for _, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") || strings.HasPrefix(strings.TrimSpace(line), "*") {
				continue
			}
			for _, m := range name.FindAllStringSubmatch(line, -1) {
				set[m[1]] = true
			}
		}
	}
	for n := range restSet {
		rest = append(rest, n)
	}
	for n := range toolSet {
		if !restSet[n] {
			tools = append(tools, n)
		}
	}
	slices.Sort(rest)
	slices.Sort(tools)
	if len(rest) == 0 {
		return nil, nil, fmt.Errorf("reading the page agent in %s: no interface read from win", dir)
	}
	return tools, rest, nil
}
