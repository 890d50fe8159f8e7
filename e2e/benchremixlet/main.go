// Command benchremixlet measures remixlets in real Chromium through the real remixproxy binary:
//
//   - dom round trip: a remixlet makes sequential dom.query/dom.attr calls; Chromium's DevTools
//     protocol timestamps every WebSocket frame of the page agent where the browser's network
//     stack sees it, so the interval from one op frame to the next is one complete call as the
//     remixlet sees it (proxy → page agent → proxy → sandbox → proxy), and the time from an op
//     frame to its result frame is the page's part of it;
//   - keep-repair latency: the page inserts a .promoted element and timestamps it
//     (performance.now()); a MutationObserver in the page records when the remixlet's rmx.keep
//     repair hid it;
//   - memory: 50 page sessions (tabs) with 3 remixlets each; the RSS of the proxy process plus
//     its sandbox host child (/proc/PID/status VmRSS of both).
//
// Everything is on loopback: the test site listens on 127.0.0.1 under the made-up name
// bench.test, which the proxy dials through --resolve; Chromium trusts the proxy's CA by its
// SPKI hash (--ignore-certificate-errors-spki-list, as `remixproxy browser` does). The remixlets
// are added with `remixproxy remixlet add DIR --yes`, as a person would. Run it with `make bench`
// (scripts/bench.sh) or `go run ./e2e/benchremixlet`. It prints a Markdown table.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"

	"github.com/remixproxy/remixproxy/e2e/benchkit"
)

var (
	roundTrips = flag.Int("round-trips", 2000, "dom calls timed in the round-trip run")
	repairs    = flag.Int("repairs", 200, "insertions timed in the keep-repair run")
	sessions   = flag.Int("sessions", 50, "page sessions (tabs) in the memory run")
	binPath    = flag.String("remixproxy", "", "remixproxy binary (default: go build it)")
	chromium   = flag.String("chromium", "/usr/bin/chromium", "Chromium binary (apt-get install -y chromium)")
	only       = flag.String("only", "", "run only these parts, comma-separated: roundtrip,keep,memory")
)

const siteHost = "bench.test"

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchremixlet:", err)
		os.Exit(1)
	}
}

// row is one figure of the table.
type row struct{ what, value, target, note string }

func run() error {
	if _, err := os.Stat(*chromium); err != nil {
		return fmt.Errorf("chromium not found (apt-get install -y chromium): %w", err)
	}
	tmp, err := os.MkdirTemp("", "remixbench-rx")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	site, err := startSite(tmp)
	if err != nil {
		return err
	}
	defer site.Srv.Close()

	bin := *binPath
	if bin == "" {
		bin = filepath.Join(tmp, "remixproxy")
		build := exec.Command("go", "build", "-o", bin, "./cmd/remixproxy")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building remixproxy (run from the repository root): %w", err)
		}
	}
	data := filepath.Join(tmp, "data")
	for name, files := range benchRemixlets() {
		if err := addRemixlet(bin, data, filepath.Join(tmp, "rx", name), files); err != nil {
			return err
		}
	}
	px, err := benchkit.StartProxy(bin, data, site, siteHost)
	if err != nil {
		return err
	}
	defer px.Stop()
	br, err := benchkit.StartChromium(*chromium, tmp, px)
	if err != nil {
		return err
	}
	defer br.Close()

	parts := map[string]bool{"roundtrip": true, "keep": true, "memory": true}
	if *only != "" {
		parts = map[string]bool{}
		for p := range strings.SplitSeq(*only, ",") {
			parts[strings.TrimSpace(p)] = true
		}
	}
	var rows []row
	if parts["roundtrip"] {
		fmt.Fprintln(os.Stderr, "benchremixlet: dom round trip")
		rs, err := measureRoundTrip(br)
		if err != nil {
			return fmt.Errorf("round trip: %w\nproxy log tail:\n%s", err, px.Out)
		}
		rows = append(rows, rs...)
	}
	if parts["keep"] {
		fmt.Fprintln(os.Stderr, "benchremixlet: keep-repair latency")
		rs, err := measureKeep(br)
		if err != nil {
			return fmt.Errorf("keep repair: %w\nproxy log tail:\n%s", err, px.Out)
		}
		rows = append(rows, rs...)
	}
	if parts["memory"] {
		fmt.Fprintln(os.Stderr, "benchremixlet: memory of page sessions")
		rs, err := measureMemory(br, px)
		if err != nil {
			return fmt.Errorf("memory: %w\nproxy log tail:\n%s", err, px.Out)
		}
		rows = append(rows, rs...)
	}
	fmt.Println("| remixlets in Chromium | value | target | note |")
	fmt.Println("|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | %s |\n", r.what, r.value, r.target, r.note)
	}
	return nil
}

// --- the remixlets ---

type files map[string]string

func manifest(name, path string, perms string) string {
	return fmt.Sprintf(`{"name": %q, "description": "benchmark", "api": 1, "matches": ["https://%s%s*"], "permissions": [%s]}`,
		name, siteHost, path, perms)
}

// benchRemixlets are the remixlets the runs use, by folder name.
func benchRemixlets() map[string]files {
	return map[string]files{
		// Round trip: bursts of 10 sequential calls (a dom.query, then dom.attr reads), a pause
		// between bursts to stay far below the sandbox's 2000 calls/s cap. Then it says it is done.
		"roundtrip": {
			"manifest.json": manifest("bench round trip", "/rt", ""),
			"script.js": `(async () => {
  const n = ` + strconv.Itoa(*roundTrips) + `;
  let h;
  for (let i = 0; i < n; ) {
    h = await dom.query('#target'); i++;
    for (let k = 0; k < 9 && i < n; k++, i++) await dom.attr(h, 'id');
    await new Promise((r) => setTimeout(r, 8));
  }
  await dom.setAttr(h, 'data-done', String(n));
})();
`,
		},
		// Keep repair: the hide-and-keep remixlet of the e2e suite.
		"keep": {
			"manifest.json": manifest("bench keep", "/keep", ""),
			"script.js":     hidePromoted,
		},
		// Memory: three typical remixlets on every /mem page.
		"mem1": {
			"manifest.json": manifest("bench mem hide", "/mem", ""),
			"script.js":     hidePromoted + "dom.query('#r1').then((h) => dom.setAttr(h, 'data-ran', '1'));\n",
		},
		"mem2": {
			"manifest.json": manifest("bench mem mark", "/mem", ""),
			"script.js": `(async () => {
  const h = await dom.query('#r2');
  await dom.addClass(h, 'marked');
  dom.on(h, 'click', () => rmx.log('clicked'));
  await dom.setAttr(h, 'data-ran', '1');
})();
`,
		},
		"mem3": {
			"manifest.json": manifest("bench mem count", "/mem", `{"name": "storage", "reason": "remembers a count"}`),
			"script.js": `(async () => {
  const items = await dom.queryAll('#feed li');
  const h = await dom.query('#r3');
  await dom.setText(h, items.length + ' items');
  await rmx.storage.set('seen', items.length);
  setInterval(async () => { await dom.text(h); }, 5000);
  await dom.setAttr(h, 'data-ran', '1');
})();
`,
		},
	}
}

const hidePromoted = `rmx.keep('hide promoted', {
  check: async () => (await dom.queryAll('.promoted:not([data-remixlet-hidden])')).length === 0,
  repair: async () => { for (const h of await dom.queryAll('.promoted:not([data-remixlet-hidden])')) await dom.hide(h); },
});
`

func addRemixlet(bin, data, dir string, fs files) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, content := range fs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	out, err := exec.Command(bin, "remixlet", "add", dir, "--yes", "--data-dir", data).CombinedOutput()
	if err != nil {
		return fmt.Errorf("remixproxy remixlet add %s: %w\n%s", dir, err, out)
	}
	return nil
}

// --- the site ---

// pages of the site: /rt (round trip), /keep (keep repair), /mem (memory).
const rtPage = `<!doctype html><html><head><meta charset="utf-8"><title>round trip</title></head>
<body><h1 id="target">round trip</h1></body></html>`

// keepPage inserts a .promoted item at random intervals (60–140 ms) and records, in a
// MutationObserver, how long after its insertion the remixlet hid it. Old items are removed so
// the list stays short; one removed before it was hidden counts as missed.
const keepPage = `<!doctype html><html><head><meta charset="utf-8"><title>keep</title></head>
<body><ul id="feed"><li>first</li></ul>
<script>
window.benchLat = [];
window.benchMissed = 0;
const born = new WeakMap();
const feed = document.getElementById('feed');
new MutationObserver((records) => {
  const now = performance.now();
  for (const r of records) {
    const t0 = born.get(r.target);
    if (t0 !== undefined && r.target.hasAttribute('data-remixlet-hidden')) {
      window.benchLat.push(now - t0);
      born.delete(r.target);
    }
  }
}).observe(feed, {subtree: true, attributes: true, attributeFilter: ['data-remixlet-hidden']});
window.benchStart = (n) => {
  let i = 0;
  const step = () => {
    if (i++ >= n) { window.benchDone = true; return; }
    while (feed.children.length > 20) {
      const old = feed.firstElementChild;
      if (born.has(old)) { born.delete(old); window.benchMissed++; }
      old.remove();
    }
    const li = document.createElement('li');
    li.className = 'promoted';
    li.textContent = 'promoted ' + i;
    feed.appendChild(li);
    born.set(li, performance.now());
    setTimeout(step, 60 + Math.random() * 80);
  };
  step();
};
</script></body></html>`

const memPage = `<!doctype html><html><head><meta charset="utf-8"><title>memory</title></head>
<body><h1 id="r1">memory</h1><p id="r2">mark me</p><p id="r3"></p>
<ul id="feed"><li>a</li><li class="promoted">ad</li><li>b</li><li class="promoted">ad</li><li>c</li></ul>
</body></html>`

// startSite serves the three pages on siteHost over HTTPS (benchkit.StartSite).
func startSite(dir string) (*benchkit.Site, error) {
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(w, body)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/rt", page(rtPage))
	mux.HandleFunc("/keep", page(keepPage))
	mux.HandleFunc("/mem", page(memPage))
	return benchkit.StartSite(dir, siteHost, mux)
}

// --- the runs ---

// frame is one page-agent WebSocket frame, timestamped by Chromium's network stack.
type frame struct {
	at   float64 // seconds, monotonic
	sent bool    // page → proxy
	typ  string
	op   string
	id   uint64
}

// frameLog records a tab's page-agent WebSocket frames.
type frameLog struct {
	mu     sync.Mutex
	frames []frame
}

// listen is a DevTools event listener for the tab.
func (fl *frameLog) listen(ev any) {
	record := func(at float64, sent bool, payload []byte) {
		var m struct {
			Type string `json:"type"`
			Op   string `json:"op"`
			ID   uint64 `json:"id"`
		}
		if json.Unmarshal(payload, &m) != nil {
			return
		}
		fl.mu.Lock()
		fl.frames = append(fl.frames, frame{at: at, sent: sent, typ: m.Type, op: m.Op, id: m.ID})
		fl.mu.Unlock()
	}
	switch ev := ev.(type) {
	case *network.EventWebSocketFrameReceived:
		record(ev.Timestamp.Float64(), false, ev.Response.PayloadData)
	case *network.EventWebSocketFrameSent:
		record(ev.Timestamp.Float64(), true, ev.Response.PayloadData)
	}
}

func (fl *frameLog) all() []frame {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return append([]frame(nil), fl.frames...)
}

func measureRoundTrip(b *benchkit.Browser) ([]row, error) {
	fl := &frameLog{}
	ctx, cancel, err := b.Tab(fl.listen)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if err := benchkit.Navigate(ctx, "https://"+siteHost+"/rt"); err != nil {
		return nil, err
	}
	if err := benchkit.WaitJS(ctx, 5*time.Minute, "the round-trip remixlet to finish", `document.getElementById('target').hasAttribute('data-done')`); err != nil {
		return nil, err
	}
	time.Sleep(200 * time.Millisecond) // the last frames' events
	frames := fl.all()
	// full: from one op frame to the next within a burst (the next op is an attr read, sent as
	// soon as the previous call returned); page: from an op frame to its result frame.
	var full, pageLeg []float64
	var lastOp *frame
	opAt := map[uint64]float64{}
	for i := range frames {
		f := &frames[i]
		switch {
		case !f.sent && f.typ == "op":
			if lastOp != nil && f.op == "attr" {
				full = append(full, (f.at-lastOp.at)*1000)
			}
			lastOp = f
			opAt[f.id] = f.at
		case f.sent && f.typ == "result":
			if t0, ok := opAt[f.id]; ok {
				pageLeg = append(pageLeg, (f.at-t0)*1000)
			}
		}
	}
	if len(full) < *roundTrips/2 {
		return nil, fmt.Errorf("only %d round trips seen in %d frames", len(full), len(frames))
	}
	return []row{
		{"dom call round trip (dom.query/dom.attr, as the remixlet sees it), p50", ms(pct(full, 50)), "≤ 1 ms", fmt.Sprintf("%d calls; op frame to next op frame at Chromium's network stack", len(full))},
		{"dom call round trip, p99", ms(pct(full, 99)), "≤ 5 ms", fmt.Sprintf("p90 %s, max %s", ms(pct(full, 90)), ms(pct(full, 100)))},
		{"  of which the page (op frame to result frame), p50 / p99", ms(pct(pageLeg, 50)) + " / " + ms(pct(pageLeg, 99)), "—", "renderer IPC + page agent"},
	}, nil
}

func measureKeep(b *benchkit.Browser) ([]row, error) {
	fl := &frameLog{}
	ctx, cancel, err := b.Tab(fl.listen)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if err := benchkit.Navigate(ctx, "https://"+siteHost+"/keep"); err != nil {
		return nil, err
	}
	if err := benchkit.WaitJS(ctx, 30*time.Second, "the page agent to connect", `document.querySelector('[data-remixproxy-launcher][data-remixproxy-state=connected]')`); err != nil {
		return nil, err
	}
	time.Sleep(time.Second) // the keep's first check
	warm := 10
	if _, err := benchkit.Eval[bool](ctx, fmt.Sprintf(`window.benchStart(%d), true`, *repairs+warm)); err != nil {
		return nil, err
	}
	if err := benchkit.WaitJS(ctx, 5*time.Minute, "the insertions to finish", `window.benchDone`); err != nil {
		return nil, err
	}
	time.Sleep(time.Second)
	lat, err := benchkit.Eval[[]float64](ctx, `window.benchLat`)
	if err != nil {
		return nil, err
	}
	missed, _ := benchkit.Eval[int](ctx, `window.benchMissed + document.querySelectorAll('#feed .promoted:not([data-remixlet-hidden])').length`)
	if len(lat) <= warm {
		return nil, fmt.Errorf("only %d repairs seen", len(lat))
	}
	lat = lat[warm:]
	// The proxy's part: from the page agent's "mutated" notice to the result of the repair's
	// dom.hide (the DOM is repaired when the page agent answers).
	var proxyPart []float64
	frames := fl.all()
	lastMutated, hideOps := -1.0, map[uint64]float64{}
	for _, f := range frames {
		switch {
		case f.sent && f.typ == "mutated":
			lastMutated = f.at
		case !f.sent && f.typ == "op" && f.op == "hide" && lastMutated >= 0:
			hideOps[f.id] = lastMutated
		case f.sent && f.typ == "result":
			if t0, ok := hideOps[f.id]; ok {
				proxyPart = append(proxyPart, (f.at-t0)*1000)
				delete(hideOps, f.id)
			}
		}
	}
	if len(proxyPart) > warm {
		proxyPart = proxyPart[warm:]
	}
	return []row{
		{"keep repair, page mutation to repaired DOM, p50", ms(pct(lat, 50)), "—", fmt.Sprintf("%d insertions 60–140 ms apart; %d not hidden within 20 insertions", len(lat), missed)},
		{"keep repair, p99", ms(pct(lat, 99)), "≤ 16 ms", fmt.Sprintf("p90 %s, max %s; the page agent reports the first change at once", ms(pct(lat, 90)), ms(pct(lat, 100)))},
		{"  of which after the page agent's notice (mutated frame to dom.hide result), p50 / p99",
			ms(pct(proxyPart, 50)) + " / " + ms(pct(proxyPart, 99)), "—", fmt.Sprintf("%d repairs; check + repair = 3 dom calls", len(proxyPart))},
	}, nil
}

func measureMemory(b *benchkit.Browser, px *benchkit.Proxy) ([]row, error) {
	before := totalRSS(px.PID)
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	var tabs []context.Context
	for i := 0; i < *sessions; i++ {
		ctx, cancel, err := b.Tab(nil)
		if err != nil {
			return nil, fmt.Errorf("opening tab %d: %w", i, err)
		}
		cancels = append(cancels, cancel)
		if err := benchkit.Navigate(ctx, fmt.Sprintf("https://%s/mem?tab=%d", siteHost, i)); err != nil {
			return nil, fmt.Errorf("tab %d: %w", i, err)
		}
		tabs = append(tabs, ctx)
	}
	for i, ctx := range tabs {
		if err := benchkit.WaitJS(ctx, 2*time.Minute, fmt.Sprintf("tab %d: the 3 remixlets to run", i),
			`document.querySelectorAll('[data-ran]').length === 3 && document.querySelectorAll('#feed .promoted:not([data-remixlet-hidden])').length === 0`); err != nil {
			return nil, err
		}
	}
	time.Sleep(3 * time.Second)
	after, procs := totalRSS(px.PID), childPIDs(px.PID)
	peak := procStatus(px.PID, "VmHWM")
	for _, c := range procs {
		peak += procStatus(c, "VmHWM")
	}
	return []row{
		{fmt.Sprintf("memory, %d page sessions × 3 remixlets, proxy + sandbox host RSS", *sessions), mib(after), "< 200 MiB",
			fmt.Sprintf("%d runtimes; %s before the tabs opened; %d processes; peak (VmHWM) %s", 3**sessions, mib(before), 1+len(procs), mib(peak))},
	}, nil
}

// --- /proc ---

func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// childPIDs are the processes whose parent is pid (the sandbox host).
func childPIDs(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentPID(p) == pid {
			out = append(out, p)
		}
	}
	return out
}

// parentPID is the PPid field of /proc/PID/status.
func parentPID(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// totalRSS is the RSS of pid and its children.
func totalRSS(pid int) int64 {
	n := procStatus(pid, "VmRSS")
	for _, c := range childPIDs(pid) {
		n += procStatus(c, "VmRSS")
	}
	return n
}

// --- small helpers ---

func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(v float64) string { return fmt.Sprintf("%.2f ms", v) }
func mib(n int64) string  { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
