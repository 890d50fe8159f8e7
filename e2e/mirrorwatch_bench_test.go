package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// BenchmarkMirrorWatchKeys measures what fields6's mirror watch (panel/pageagent/rx_mirrors.js:
// six capture listeners at the window, each walking the event's path for a sensitive field;
// during a secret's events a MutationObserver and the held page changes) costs a key press, in
// real Chromium: the same page through remixproxy (page agent connected) and through
// remixproxy relaying pages untouched, in one browser. The page (keysPage) has a text field and
// a password field twenty elements deep among 2000 paragraphs, and a handler of its own that
// copies what is typed into an attribute (a mirror); in the page, a script dispatches keydown,
// input and keyup to one field 3000 times and times it with performance.now. The difference per
// key (three events) is the watch's (and every other capture listener's of the page agent) cost.
// Run it with
//
//	go test -run '^$' -bench MirrorWatchKeys -benchtime 1x ./e2e/
//
// Timings are reported, never asserted.
func BenchmarkMirrorWatchKeys(b *testing.B) {
	sites := e2etest.StartSites(b)
	sites.Handle("keys.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, keysPage)
	}))
	proxy := e2etest.StartProxy(b, sites)
	relay := e2etest.StartProxy(b, sites, e2etest.WithBenchNoInject())
	shared := e2etest.Browser(b, e2etest.SharedBrowser(sites, proxy, relay))
	tabs := []struct {
		name  string
		tab   *e2etest.Tab
		agent bool
	}{{"remixproxy", shared.NewTabThrough(b, proxy), true}, {"relay only", shared.NewTabThrough(b, relay), false}}
	const keys = 3000
	press := func(field string) string {
		return fmt.Sprintf(`(() => {
			const f = document.getElementById(%q);
			const t0 = performance.now();
			for (let i = 0; i < %d; i++) {
				f.dispatchEvent(new KeyboardEvent('keydown', {bubbles: true, key: 'a'}));
				f.value += 'a';
				f.dispatchEvent(new InputEvent('input', {bubbles: true}));
				f.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true, key: 'a'}));
			}
			const ms = performance.now() - t0;
			f.value = '';
			return ms;
		})()`, field, keys)
	}
	results := map[string][]float64{} // tab/field → µs per key, one per round
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for round := 0; round < 5; round++ {
			for k := range tabs {
				tb := tabs[(k+round)%len(tabs)]
				tb.tab.Navigate("https://keys.test/")
				if tb.agent {
					tb.tab.WaitConnected()
				}
				for _, field := range []string{"text", "password"} {
					ms := e2etest.Eval[float64](tb.tab, press(field))
					key := tb.name + "/" + field
					results[key] = append(results[key], ms*1000/keys)
				}
			}
		}
	}
	b.StopTimer()
	fmt.Printf("\nA key press (keydown, input, keyup dispatched to the field, %d per round, 5 rounds), µs per key, median (range):\n\n", keys)
	fmt.Println("| field | remixproxy | relay only | the page agent's part |")
	fmt.Println("|---|---|---|---|")
	for _, field := range []string{"text", "password"} {
		p, r := results["remixproxy/"+field], results["relay only/"+field]
		fmt.Printf("| %s | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | %+.2f |\n", field, quantile(p, 0.5), quantile(p, 0), quantile(p, 1),
			quantile(r, 0.5), quantile(r, 0), quantile(r, 1), quantile(p, 0.5)-quantile(r, 0.5))
		b.ReportMetric(quantile(p, 0.5)-quantile(r, 0.5), "agent-us-per-key-"+field)
	}
}

// keysPage is BenchmarkMirrorWatchKeys' page: two fields deep in a long page, and the page's own
// handler that mirrors the typed value's length into an attribute, as strength meters do.
var keysPage = `<!doctype html><html><head><meta charset=utf-8><title>keys</title></head><body>` +
	strings.Repeat("<p>A paragraph of the page, with <a href=/x>a link</a> and some text.</p>\n", 1000) +
	strings.Repeat("<div class=wrap>", 20) +
	`<form><input id=text name=q autocomplete=off><input id=password type=password name=pw autocomplete=off><span id=meter></span></form>` +
	strings.Repeat("</div>", 20) +
	strings.Repeat("<p>A paragraph of the page, with <a href=/x>a link</a> and some text.</p>\n", 1000) +
	`<script>
document.addEventListener('input', (ev) => {
	document.getElementById('meter').setAttribute('data-len', String(ev.target.value.length));
});
</script></body></html>`
