// Command firstframe measures when remixlets take effect, as a person sees it: in real headless
// Chromium through the real remixproxy binary, on a test page with a heading, every animation
// frame of every load sampled from before the first paint. It is issue 14's benchmark; today's
// figures are the baseline in the README.
//
//   - css: a CSS-only remixlet (`h1 { outline: 3px solid red }`): in how many loads, and in how
//     many painted frames, the page's <h1> was on screen without the stylesheet's effect;
//   - script: a script remixlet that hides the <h1> (`dom.query("h1")` then `dom.hide`, or the
//     script given with --script, with --manifest-extra for fields such as run_at): in how many
//     loads its first dom call reached the page before DOMContentLoaded, in how many dom.query
//     answered null, in how many it did nothing (the <h1> never hidden), the error lines in its
//     log (`remixproxy remixlet log`), and the first visible change after DOMContentLoaded;
//   - cold: the same script remixlet on the first matching page after the proxy starts, against
//     later pages, over several proxy starts (same address, data and browser).
//
// # How frames are counted
//
// A script installed with the DevTools protocol's Page.addScriptToEvaluateOnNewDocument
// (probe.js) runs in every new document before the page's scripts and before the page agent. It
// samples the document in every requestAnimationFrame callback: animation-frame callbacks run at
// the start of each rendering update, before its style, layout and paint, and no page script runs
// between them and that update's paint, so the state a callback reads (the <h1>'s computed
// outline, or whether it is visible) is the state that update paints. Not every rendering update
// puts the page on the screen: before the body is parsed nothing is rendered, and Chromium may
// run updates that paint backgrounds only. A frame counts as painted from the update that
// produced the Paint Timing API's first-contentful-paint entry on (the last sampled callback at or
// before the entry's paintTime, the end of that update's paint step; its startTime when the
// browser gives no paintTime): a heading's text is content, so no frame before that one showed
// it. Every later update is on screen (a frame that changes nothing still shows the same picture).
// Per load:
//
//   - frames painted without the stylesheet: painted frames in which the <h1> is in the document,
//     in the viewport, and its computed outline is not the remixlet's (frames before the <h1> is
//     parsed show no heading and are not counted; frames with it out of view are counted apart);
//   - frames of the unremixed page: the same for the script remixlet, before the frame in which
//     the <h1> is first hidden; that frame is the first visible change, timed by performance.now()
//     in its callback, relative to the navigation's domContentLoadedEventStart (negative when it
//     landed before);
//   - time on screen without the effect: from the first painted frame showing the <h1> without it
//     to the first frame with it.
//
// Frame counts depend on the frame rate, which a loaded machine lowers; the times do not.
// "Reached the page before DOMContentLoaded" compares the first remixlet op frame of the page
// agent's WebSocket (Network.webSocketFrameReceived, stamped when the renderer takes it) with
// Page.domContentEventFired; both are the browser's monotonic clock. The built-in page has no
// deferred or module scripts, so its DOMContentLoaded follows the end of parsing at once.
// Where a page agent holds a script's ops until DOMContentLoaded (tried on branch firstchange,
// not in main), an op may reach the page before it and still run after: "ran in the
// page before DOMContentLoaded" compares the op's result frame (Network.webSocketFrameSent)
// with domContentLoadedEventStart, the DevTools clock moved onto the page's clock at
// Page.domContentEventFired, which Chromium sends once the DOMContentLoaded listeners are done
// (domContentLoadedEventEnd). The same clock gives the script's timeline: the page agent's
// 'interactive' report sent, the first two ops received and answered, the visible change.
//
// # The page
//
// The built-in page (page.go; --page FILE for another, which needs an <h1> in view) is shaped
// like the middle of the project's corpus of real pages: about 105 KiB, its <h1> after 25 KiB of
// head and header markup (--h1-at), a render-blocking stylesheet and a parser-blocking script of
// its own (cacheable), served with no-store. It is measured delivered two ways (--delivery): as
// over a network (the first 14 KiB at once, then 4 KiB every 10 ms) and at once, as loopback
// gives it. Warm-up loads (not counted) come first in each part, so the page agent, the page's
// subresources and the sandbox are warm, as for a person browsing.
//
// Everything is on loopback (the test site is bench.test, dialed through --resolve). Run it
// with `make bench` (scripts/bench.sh) or `go run ./e2e/firstframe`; it prints Markdown tables
// and exits non-zero only when the measurement itself fails (a load that never painted, a page
// agent that never connected, a remixlet that never acted in any load, an <h1> never in view),
// never because a figure misses its target. --json FILE writes every load's figures and samples.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/benchkit"
)

var (
	loads         = flag.Int("loads", 50, "measured loads in the css and script parts")
	warmups       = flag.Int("warmup", 2, "loads before each part's measured ones (not counted)")
	starts        = flag.Int("starts", 5, "proxy starts in the cold part")
	later         = flag.Int("later", 5, "later loads after each proxy start in the cold part")
	settle        = flag.Duration("settle", 3*time.Second, "how long after the load event to wait for the remixlet's effect")
	only          = flag.String("only", "", "run only these parts, comma-separated: css,script,cold")
	binPath       = flag.String("remixproxy", "", "remixproxy binary (default: go build it)")
	chromium      = flag.String("chromium", "/usr/bin/chromium", "Chromium binary (apt-get install -y chromium)")
	scriptFile    = flag.String("script", "", "script.js of the script remixlet (default: dom.query(\"h1\") then dom.hide); it must hide the page's <h1>")
	manifestExtra = flag.String("manifest-extra", "", "JSON object merged into the script remixlet's manifest.json, e.g. '{\"run_at\": \"document_start\"}'")
	pageFile      = flag.String("page", "", "HTML file served as the test page instead of the built-in one; it must have an <h1> in view")
	h1At          = flag.Int("h1-at", 25, "KiB of markup before the built-in page's <h1> (25: the corpus's median; 61: its upper quartile)")
	deliveries    = flag.String("delivery", "stream,whole", "how the site sends the page, comma-separated, each measured: stream (as over a network) or whole (at once, as loopback does); the cold part uses the first")
	jsonOut       = flag.String("json", "", "write every load's raw figures to this file")
)

const siteHost = "bench.test"

// pageLabel names the page in the tables' titles.
var pageLabel string

//go:embed probe.js
var probeJS string

// The remixlets: a stylesheet on /css, a script on /script.
const (
	cssName    = "firstframe css"
	scriptName = "firstframe script"
	styleCSS   = "h1 { outline: 3px solid rgb(255, 0, 0) !important; }\n"
	// defaultScript is the script remixlet, written with today's API.
	defaultScript = "(async () => {\n  const h = await dom.query('h1');\n  await dom.hide(h);\n})();\n"
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "firstframe:", err)
		os.Exit(1)
	}
}

func run() error {
	parts := map[string]bool{"css": true, "script": true, "cold": true}
	if *only != "" {
		parts = map[string]bool{}
		for p := range strings.SplitSeq(*only, ",") {
			p = strings.TrimSpace(p)
			if p != "css" && p != "script" && p != "cold" {
				return fmt.Errorf("--only %q: want css, script or cold", p)
			}
			parts[p] = true
		}
	}
	if *loads < 1 || *starts < 1 || *later < 1 || *warmups < 0 {
		return fmt.Errorf("--loads, --starts and --later must be at least 1, --warmup at least 0")
	}
	if _, err := os.Stat(*chromium); err != nil {
		return fmt.Errorf("chromium not found (apt-get install -y chromium): %w", err)
	}
	var delivs []string
	for d := range strings.SplitSeq(*deliveries, ",") {
		d = strings.TrimSpace(d)
		if d != deliveryStream && d != deliveryWhole {
			return fmt.Errorf("--delivery %q: want stream or whole", d)
		}
		delivs = append(delivs, d)
	}
	pageHTML := defaultPage(*h1At << 10)
	pageLabel = fmt.Sprintf("built-in page, `<h1>` after %d KiB", *h1At)
	if *pageFile != "" {
		pageLabel = "page " + filepath.Base(*pageFile)
		b, err := os.ReadFile(*pageFile)
		if err != nil {
			return fmt.Errorf("--page: %w", err)
		}
		pageHTML = string(b)
	}
	script := defaultScript
	if *scriptFile != "" {
		b, err := os.ReadFile(*scriptFile)
		if err != nil {
			return fmt.Errorf("--script: %w", err)
		}
		script = string(b)
	}
	scriptManifest, err := manifest(scriptName, "/script", *manifestExtra)
	if err != nil {
		return err
	}
	cssManifest, _ := manifest(cssName, "/css", "")

	tmp, err := os.MkdirTemp("", "remixbench-ff")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	site, err := startSite(tmp, pageHTML)
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
	if err := addRemixlet(bin, data, filepath.Join(tmp, "rx", "css"), map[string]string{"manifest.json": cssManifest, "style.css": styleCSS}); err != nil {
		return err
	}
	if err := addRemixlet(bin, data, filepath.Join(tmp, "rx", "script"), map[string]string{"manifest.json": scriptManifest, "script.js": script}); err != nil {
		return err
	}
	addr, err := benchkit.FreeAddr()
	if err != nil {
		return err
	}
	b := &bench{bin: bin, data: data, site: site, addr: addr}
	if err := b.startProxy(); err != nil {
		return err
	}
	defer func() { b.px.Stop() }()
	br, err := benchkit.StartChromium(*chromium, tmp, b.px)
	if err != nil {
		return err
	}
	defer br.Close()
	b.br = br

	var all []partResult
	for _, d := range delivs {
		if parts["css"] {
			fmt.Fprintln(os.Stderr, "firstframe: css, delivery", d)
			r, err := b.measureCSS(d)
			if err != nil {
				return fmt.Errorf("css (%s): %w\nproxy log tail:\n%s", d, err, b.px.Out)
			}
			all = append(all, r)
		}
		if parts["script"] {
			fmt.Fprintln(os.Stderr, "firstframe: script, delivery", d)
			r, err := b.measureScript(d)
			if err != nil {
				return fmt.Errorf("script (%s): %w\nproxy log tail:\n%s", d, err, b.px.Out)
			}
			all = append(all, r)
		}
	}
	if parts["cold"] {
		fmt.Fprintln(os.Stderr, "firstframe: cold, delivery", delivs[0])
		r, err := b.measureCold(delivs[0])
		if err != nil {
			return fmt.Errorf("cold: %w\nproxy log tail:\n%s", err, b.px.Out)
		}
		all = append(all, r)
	}
	for _, r := range all {
		fmt.Println()
		fmt.Println(r.title)
		fmt.Println()
		fmt.Println("| measure | value | target (issue 14) | note |")
		fmt.Println("|---|---|---|---|")
		for _, row := range r.rows {
			fmt.Printf("| %s | %s | %s | %s |\n", row.what, row.value, row.target, row.note)
		}
	}
	if len(b.retried) > 0 {
		fmt.Printf("\n%d loads failed once and were loaded again:\n", len(b.retried))
		for _, r := range b.retried {
			fmt.Println("  -", r)
		}
	}
	if *jsonOut != "" {
		raw := map[string][]loadFigures{}
		for _, r := range all {
			raw[r.name] = r.loads
		}
		out, err := json.MarshalIndent(raw, "", " ")
		if err != nil {
			return fmt.Errorf("--json: %w", err)
		}
		if err := os.WriteFile(*jsonOut, out, 0o644); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	return nil
}

// partResult is one part's table and its loads.
type partResult struct {
	name, title string
	rows        []row
	loads       []loadFigures
}

type row struct{ what, value, target, note string }

// bench is the running world: the site, the proxy (restartable at addr) and Chromium.
type bench struct {
	bin, data, addr string
	site            *benchkit.Site
	px              *benchkit.Proxy
	br              *benchkit.Browser
	retried         []string // loads that failed once and were loaded again, with why
}

// load is t.load, once more if it fails (a shared machine may stall one load); the failure is
// kept in b.retried and printed with the tables. A second failure ends the run.
func (b *bench) load(t *tab, url string) (loadFigures, error) {
	f, err := t.load(url)
	if err == nil {
		return f, nil
	}
	b.retried = append(b.retried, err.Error())
	fmt.Fprintln(os.Stderr, "firstframe: retrying a load:", err)
	return t.load(url)
}

func (b *bench) startProxy() error {
	px, err := benchkit.StartProxyAt(b.addr, b.bin, b.data, b.site, siteHost)
	if err != nil {
		return err
	}
	b.px = px
	return nil
}

// --- the remixlets ---

// manifest is a remixlet manifest matching https://bench.test<path>*, with extra's fields
// (a JSON object) merged in.
func manifest(name, path, extra string) (string, error) {
	m := map[string]any{"name": name, "description": "firstframe benchmark", "api": 1,
		"matches": []string{"https://" + siteHost + path + "*"}, "permissions": []any{}}
	if extra != "" {
		var more map[string]any
		if err := json.Unmarshal([]byte(extra), &more); err != nil {
			return "", fmt.Errorf("--manifest-extra: want a JSON object: %w", err)
		}
		for k, v := range more {
			m[k] = v
		}
	}
	out, err := json.MarshalIndent(m, "", "  ")
	return string(out), err
}

// addRemixlet writes files into dir and adds it as a person would: `remixproxy remixlet add DIR
// --yes`.
func addRemixlet(bin, data, dir string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, content := range files {
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

// logErrors counts the error lines in a remixlet's log, read with `remixproxy remixlet log`.
func (b *bench) logErrors(name string) (int, error) {
	out, err := exec.Command(b.bin, "remixlet", "log", name, "-n", "100000", "--data-dir", b.data).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("remixproxy remixlet log %q: %w\n%s", name, err, out)
	}
	n := 0
	for line := range strings.SplitSeq(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[2] == "error" {
			n++
		}
	}
	return n, nil
}

// --- the site ---

// startSite serves the page at every path (/css, /script), delivered as its query's d says,
// with the page's stylesheet and script, on siteHost over HTTPS.
func startSite(dir, pageHTML string) (*benchkit.Site, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/site.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		w.Header().Set("Cache-Control", "max-age=3600")
		fmt.Fprint(w, siteCSS)
	})
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Header().Set("Cache-Control", "max-age=3600")
		fmt.Fprint(w, appJS)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		servePage(w, pageHTML, r.URL.Query().Get("d"))
	})
	return benchkit.StartSite(dir, siteHost, mux)
}

// The page's own stylesheet and head script: small, ordinary, cacheable.
const siteCSS = `body { font: 16px/1.5 Georgia, serif; margin: 0; color: #222; background: #fdfdf8 }
header { background: #123; color: #fff; padding: 8px 24px } header a { color: #fff; margin-right: 16px }
.menu { display: flex; flex-wrap: wrap; list-style: none; margin: 0; padding: 0 } .menu > li { position: relative }
.sub { display: none; position: absolute; background: #123; list-style: none; padding: 8px } .menu > li:hover .sub { display: block }
main { max-width: 720px; margin: 0 auto; padding: 16px 24px } h1 { font-size: 2.2em; line-height: 1.2 }
p { margin: 0 0 1em } .lede { font-size: 1.2em; color: #444 } footer { padding: 24px; color: #666 }
`

const appJS = `window.siteConfig = { section: 'news', started: performance.now() };
document.documentElement.classList.add('js');
`

// --- one load ---

// loadFigures is what one load measured; times in ms on the page's performance clock unless said.
type loadFigures struct {
	URL                  string  `json:"url"`
	DCL                  float64 `json:"dcl"`                  // domContentLoadedEventStart
	FirstPaint           float64 `json:"firstPaint"`           // the first-paint entry's paintTime (or startTime)
	FirstContentfulPaint float64 `json:"firstContentfulPaint"` // the first-contentful-paint entry's, likewise
	Painted              int     `json:"painted"`              // painted frames sampled
	NoH1Painted          int     `json:"noH1Painted"`          // painted frames before the <h1> was parsed
	OutOfView            int     `json:"outOfView"`            // painted frames with the <h1> out of view, without the effect
	Without              int     `json:"without"`              // painted frames with the <h1> shown without the remixlet's effect
	EffectAt             float64 `json:"effectAt"`             // first frame with the effect (NaN: never)
	ShownWithout         float64 `json:"shownWithout"`         // ms from the first painted frame without the effect to the first with it
	ResponseStart        float64 `json:"responseStart"`        // the page's first byte
	// The page agent's WebSocket (monotonic clock, ms after DOMContentLoaded; NaN: not seen).
	WSCreatedAfterDCL float64 `json:"wsCreatedAfterDcl"` // handshake request sent
	WSOpenAfterDCL    float64 `json:"wsOpenAfterDcl"`    // handshake answered
	FirstOpAfterDCL   float64 `json:"firstOpAfterDcl"`   // the first remixlet op received
	QueryNull         bool    `json:"queryNull"`         // some dom.query result was null
	Ops               int     `json:"ops"`               // remixlet ops received
	StyleAfterPaint   float64 `json:"styleAfterPaint"`   // the style message's arrival, ms after first contentful paint by Page lifecycle (NaN: none)
	LogErrors         int     `json:"logErrors"`         // error lines the load added to the remixlet's log

	// The script's timeline, ms after domContentLoadedEventStart on the page's clock (the DevTools
	// clock moved onto it at DOMContentLoaded's end, timeline): the page agent's hello (it
	// leaves from the socket's open event) and 'interactive' report sent, each of the first two
	// ops received and answered. NaN: not seen.
	HelloSent   float64 `json:"helloSent"`
	ReadySent   float64 `json:"readySent"`
	Op1Received float64 `json:"op1Received"`
	Op1Answered float64 `json:"op1Answered"`
	Op2Received float64 `json:"op2Received"`
	Op2Answered float64 `json:"op2Answered"`
	DCLDuration float64 `json:"dclDuration"` // domContentLoadedEventEnd − Start: the DOMContentLoaded listeners' time

	Probe *probeData `json:"probe"` // the probe's record: every frame sampled, the paint entries
}

// MarshalJSON writes f with null for the figures that are NaN (not measured in that load).
func (f loadFigures) MarshalJSON() ([]byte, error) {
	v := reflect.ValueOf(f)
	m := map[string]any{}
	for i := range v.NumField() {
		x := v.Field(i).Interface()
		if fl, ok := x.(float64); ok && math.IsNaN(fl) {
			x = nil
		}
		m[v.Type().Field(i).Tag.Get("json")] = x
	}
	return json.Marshal(m)
}

// probeData is what probe.js collected.
type probeData struct {
	Frames [][3]float64 `json:"frames"` // [performance.now(), body parsed 0/1, state]
	Paints []struct {
		Name      string  `json:"name"`
		StartTime float64 `json:"startTime"`
		PaintTime float64 `json:"paintTime"`
	} `json:"paints"`
	DCL           float64 `json:"dcl"`
	ResponseStart float64 `json:"responseStart"`
}

// Frame states probe.js reports.
const (
	stateNoH1      = 0 // no <h1> in the document
	stateWithout   = 1 // the <h1> in view without the remixlet's effect
	stateWithEffct = 2 // the <h1> with it (outlined, or hidden)
	stateOutOfView = 3 // the <h1> without it, but out of the viewport
)

// cdpLog records a tab's page-agent WebSocket frames and DOMContentLoaded / first paint, on the
// browser's monotonic clock (seconds).
type cdpLog struct {
	mu         sync.Mutex
	ops        []wsOp
	results    map[uint64]json.RawMessage
	answered   map[uint64]float64 // result frames sent, by op id
	readySent  float64            // the 'interactive' report sent
	helloSent  float64            // the first hello sent
	styles     []float64
	dcl, paint float64 // DOMContentLoaded, first contentful paint
	wsCreated  float64 // the page agent's WebSocket: created, handshake answered
	wsOpen     float64
}

type wsOp struct {
	at float64
	id uint64
	op string
}

func (l *cdpLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops, l.results, l.styles, l.dcl, l.paint = nil, map[uint64]json.RawMessage{}, nil, 0, 0
	l.answered, l.readySent, l.helloSent = map[uint64]float64{}, 0, 0
	l.wsCreated, l.wsOpen = 0, 0
}

func (l *cdpLog) listen(ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var m struct {
		Type  string          `json:"type"`
		State string          `json:"state"`
		Op    string          `json:"op"`
		ID    uint64          `json:"id"`
		Value json.RawMessage `json:"value"`
	}
	switch ev := ev.(type) {
	case *network.EventWebSocketFrameReceived:
		if json.Unmarshal([]byte(ev.Response.PayloadData), &m) != nil {
			return
		}
		switch m.Type {
		case "op":
			l.ops = append(l.ops, wsOp{at: ev.Timestamp.Float64(), id: m.ID, op: m.Op})
		case "style":
			l.styles = append(l.styles, ev.Timestamp.Float64())
		}
	case *network.EventWebSocketFrameSent:
		if json.Unmarshal([]byte(ev.Response.PayloadData), &m) != nil {
			return
		}
		switch {
		case m.Type == "result" && l.results != nil:
			l.results[m.ID] = m.Value
			if _, ok := l.answered[m.ID]; !ok {
				l.answered[m.ID] = ev.Timestamp.Float64()
			}
		case m.Type == "ready" && m.State == "interactive" && l.readySent == 0:
			l.readySent = ev.Timestamp.Float64()
		case m.Type == "hello" && l.helloSent == 0:
			l.helloSent = ev.Timestamp.Float64()
		}
	case *network.EventWebSocketWillSendHandshakeRequest:
		if l.wsCreated == 0 {
			l.wsCreated = ev.Timestamp.Float64()
		}
	case *network.EventWebSocketHandshakeResponseReceived:
		if l.wsOpen == 0 {
			l.wsOpen = ev.Timestamp.Float64()
		}
	case *page.EventDomContentEventFired:
		if l.dcl == 0 {
			l.dcl = ev.Timestamp.Float64()
		}
	case *page.EventLifecycleEvent:
		if ev.Name == "firstContentfulPaint" && l.paint == 0 {
			l.paint = ev.Timestamp.Float64()
		}
	}
}

// figures fills f's fields that come from the DevTools events.
func (l *cdpLog) figures(f *loadFigures) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f.Ops = len(l.ops)
	f.FirstOpAfterDCL, f.StyleAfterPaint, f.WSCreatedAfterDCL, f.WSOpenAfterDCL = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	sinceDCL := func(at float64) float64 {
		if at == 0 || l.dcl == 0 {
			return math.NaN()
		}
		return (at - l.dcl) * 1000
	}
	if len(l.ops) > 0 {
		f.FirstOpAfterDCL = sinceDCL(l.ops[0].at)
	}
	f.WSCreatedAfterDCL, f.WSOpenAfterDCL = sinceDCL(l.wsCreated), sinceDCL(l.wsOpen)
	for _, op := range l.ops {
		if v, ok := l.results[op.id]; op.op == "query" && ok && (len(v) == 0 || string(v) == "null") {
			f.QueryNull = true
		}
	}
	if len(l.styles) > 0 && l.paint > 0 {
		f.StyleAfterPaint = (l.styles[0] - l.paint) * 1000
	}
	l.timeline(f)
}

// timeline fills the script's timeline. The DevTools clock (Page.domContentEventFired is sent
// once the DOMContentLoaded listeners are done) is moved onto the page's clock at that point:
// a DevTools time t is t − dcl + DCLDuration ms after domContentLoadedEventStart.
func (l *cdpLog) timeline(f *loadFigures) {
	f.HelloSent, f.ReadySent, f.Op1Received, f.Op1Answered, f.Op2Received, f.Op2Answered = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	at := func(t float64) float64 {
		if t == 0 || l.dcl == 0 || math.IsNaN(f.DCLDuration) {
			return math.NaN()
		}
		return (t-l.dcl)*1000 + f.DCLDuration
	}
	f.HelloSent, f.ReadySent = at(l.helloSent), at(l.readySent)
	if len(l.ops) > 0 {
		f.Op1Received, f.Op1Answered = at(l.ops[0].at), at(l.answered[l.ops[0].id])
	}
	if len(l.ops) > 1 {
		f.Op2Received, f.Op2Answered = at(l.ops[1].at), at(l.answered[l.ops[1].id])
	}
}

// tab is a Chromium tab with the probe installed and its DevTools events logged.
type tab struct {
	ctx    context.Context
	cancel context.CancelFunc
	log    *cdpLog
}

func (b *bench) newTab(mode string) (*tab, error) {
	l := &cdpLog{}
	l.reset()
	ctx, cancel, err := b.br.Tab(l.listen)
	if err != nil {
		return nil, err
	}
	src := strings.ReplaceAll(probeJS, "%MODE%", mode)
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
		return err
	})); err != nil {
		cancel()
		return nil, fmt.Errorf("installing the probe: %w", err)
	}
	return &tab{ctx: ctx, cancel: cancel, log: l}, nil
}

// load navigates t to url, waits until the probe has seen the remixlet's effect in a frame (or
// until --settle after the load event), and returns the load's figures.
func (t *tab) load(url string) (loadFigures, error) {
	t.log.reset()
	if err := benchkit.Navigate(t.ctx, url); err != nil {
		return loadFigures{}, fmt.Errorf("loading %s: %w", url, err)
	}
	deadline := time.Now().Add(*settle)
	for {
		done, err := benchkit.Eval[bool](t.ctx, `(() => { const r = window.__firstframe, f = r.frames;
			return f.length > 0 && f[f.length - 1][2] === 2 && r.paints.some((p) => p.name === 'first-contentful-paint'); })()`)
		if err != nil {
			return loadFigures{}, fmt.Errorf("reading the probe: %w", err)
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	connected, err := benchkit.Eval[bool](t.ctx, `!!document.querySelector('[data-remixproxy-launcher][data-remixproxy-state=connected]')`)
	if err != nil {
		return loadFigures{}, fmt.Errorf("reading the page agent's state: %w", err)
	}
	if !connected {
		return loadFigures{}, fmt.Errorf("%s: the page agent did not connect", url)
	}
	pd, err := benchkit.Eval[probeData](t.ctx, `window.__firstframe`)
	if err != nil {
		return loadFigures{}, fmt.Errorf("reading the probe: %w", err)
	}
	f, err := analyze(pd)
	if err != nil {
		return loadFigures{}, fmt.Errorf("%s: %w", url, err)
	}
	f.URL, f.Probe = url, &pd
	f.DCLDuration = math.NaN()
	if d, err := benchkit.Eval[float64](t.ctx, `(() => { const n = performance.getEntriesByType('navigation')[0];
		return n ? n.domContentLoadedEventEnd - n.domContentLoadedEventStart : -1; })()`); err == nil && d >= 0 {
		f.DCLDuration = d
	}
	t.log.figures(&f)
	return f, nil
}

// analyze turns the probe's frames into a load's figures (see the package doc).
func analyze(pd probeData) (loadFigures, error) {
	f := loadFigures{DCL: pd.DCL, ResponseStart: pd.ResponseStart, EffectAt: math.NaN()}
	f.FirstPaint, f.FirstContentfulPaint = paintAt(pd, "first-paint"), paintAt(pd, "first-contentful-paint")
	fp := f.FirstContentfulPaint
	if fp < 0 {
		return f, fmt.Errorf("no first-contentful-paint entry: the page never painted its text")
	}
	if len(pd.Frames) == 0 {
		return f, fmt.Errorf("no animation frame sampled")
	}
	first := 0 // the first frame painted with content: the last callback at or before FCP
	for i, fr := range pd.Frames {
		if fr[0] <= fp {
			first = i
		}
	}
	firstWithout := math.NaN()
	for i, fr := range pd.Frames {
		if fr[2] == stateWithEffct && math.IsNaN(f.EffectAt) {
			f.EffectAt = fr[0]
		}
		if i < first {
			continue
		}
		f.Painted++
		switch fr[2] {
		case stateNoH1:
			f.NoH1Painted++
		case stateOutOfView:
			f.OutOfView++
		case stateWithout:
			f.Without++
			if math.IsNaN(firstWithout) {
				firstWithout = fr[0]
			}
		}
	}
	switch {
	case math.IsNaN(firstWithout):
		f.ShownWithout = 0
	case math.IsNaN(f.EffectAt):
		f.ShownWithout = pd.Frames[len(pd.Frames)-1][0] - firstWithout
	default:
		f.ShownWithout = max(0, f.EffectAt-firstWithout)
	}
	return f, nil
}

// paintAt is the time of the named Paint Timing entry: its paintTime (the end of the paint step
// of the rendering update that painted it), or its startTime when the browser gives no
// paintTime; -1 when there is no such entry.
func paintAt(pd probeData, name string) float64 {
	for _, p := range pd.Paints {
		if p.Name == name {
			if p.PaintTime > 0 {
				return p.PaintTime
			}
			return p.StartTime
		}
	}
	return -1
}

// --- the parts ---

// loadsOf loads url n times in t after w warm-up loads; when logName is set, each load's new
// error lines in that remixlet's log are counted.
func (b *bench) loadsOf(t *tab, url string, w, n int, logName string) ([]loadFigures, error) {
	for i := 0; i < w; i++ {
		if _, err := b.load(t, fmt.Sprintf("%s&warmup=%d", url, i)); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	before := 0
	if logName != "" {
		time.Sleep(400 * time.Millisecond) // the log's batches
		var err error
		if before, err = b.logErrors(logName); err != nil {
			return nil, err
		}
	}
	var out []loadFigures
	for i := 0; i < n; i++ {
		f, err := b.load(t, fmt.Sprintf("%s&load=%d", url, i))
		if err != nil {
			return nil, err
		}
		if logName != "" {
			time.Sleep(300 * time.Millisecond) // the log's batches (every 200 ms)
			now, err := b.logErrors(logName)
			if err != nil {
				return nil, err
			}
			f.LogErrors, before = now-before, now
		}
		out = append(out, f)
		fmt.Fprintf(os.Stderr, "firstframe: %s: painted %d, without effect %d, effect at %+.1f ms after DCL, first op %+.1f ms after DCL, query null %v; timeline after DCL: socket open %+.1f, hello %+.1f, ready %+.1f, op1 %+.1f → %+.1f, op2 %+.1f → %+.1f, DCL listeners %.1f ms\n",
			f.URL, f.Painted, f.Without, f.EffectAt-f.DCL, f.FirstOpAfterDCL, f.QueryNull, f.WSOpenAfterDCL, f.HelloSent, f.ReadySent, f.Op1Received, f.Op1Answered, f.Op2Received, f.Op2Answered, f.DCLDuration)
	}
	return out, nil
}

func (b *bench) measureCSS(delivery string) (partResult, error) {
	t, err := b.newTab("css")
	if err != nil {
		return partResult{}, err
	}
	defer t.cancel()
	ls, err := b.loadsOf(t, "https://"+siteHost+"/css?d="+delivery, *warmups, *loads, "")
	if err != nil {
		return partResult{}, err
	}
	var affected, frames, neverStyled int
	var shown, frameCounts, styleAfter []float64
	for _, l := range ls {
		if l.Without > 0 {
			affected++
			frames += l.Without
			shown = append(shown, l.ShownWithout)
			frameCounts = append(frameCounts, float64(l.Without))
		}
		if math.IsNaN(l.EffectAt) {
			neverStyled++
		}
		if !math.IsNaN(l.StyleAfterPaint) {
			styleAfter = append(styleAfter, l.StyleAfterPaint)
		}
	}
	if neverStyled == len(ls) {
		return partResult{}, fmt.Errorf("the stylesheet never applied in %d loads", len(ls))
	}
	if out := outOfView(ls); out > 0 {
		return partResult{}, fmt.Errorf("the <h1> was out of view in every painted frame before the effect in %d loads: the page does not measure what a person sees", out)
	}
	return partResult{name: "css-" + delivery, loads: ls,
		title: fmt.Sprintf("CSS-only remixlet (`%s`), %s delivered %s, %d loads after %d warm-up:", strings.TrimSpace(styleCSS), pageLabel, deliveryWords[delivery], len(ls), *warmups),
		rows: []row{
			{"loads with a frame painted without the stylesheet", fmt.Sprintf("%d of %d", affected, len(ls)), "0", fmt.Sprintf("never applied within %v of the load event: %d", *settle, neverStyled)},
			{"frames painted without it", fmt.Sprintf("%d", frames), "0", fmt.Sprintf("per affected load: median %s, max %s", num(pct(frameCounts, 50)), num(pct(frameCounts, 100)))},
			{"time on screen without it, affected loads, median / max", ms(pct(shown, 50)) + " / " + ms(pct(shown, 100)), "—", "first painted frame showing the `<h1>` unstyled → first frame with the style"},
			{"stylesheet message reached the page, after first contentful paint, median (p10 – p90)", fmt.Sprintf("%s (%s – %s)", ms(pct(styleAfter, 50)), ms(pct(styleAfter, 10)), ms(pct(styleAfter, 90))), "—", "the page agent's WebSocket frame as the renderer reports it vs Page lifecycle firstContentfulPaint; negative: before"},
		}}, nil
}

func (b *bench) measureScript(delivery string) (partResult, error) {
	t, err := b.newTab("hidden")
	if err != nil {
		return partResult{}, err
	}
	defer t.cancel()
	ls, err := b.loadsOf(t, "https://"+siteHost+"/script?d="+delivery, *warmups, *loads, scriptName)
	if err != nil {
		return partResult{}, err
	}
	time.Sleep(500 * time.Millisecond)
	var early, ranEarly, null, nothing, logErr, frames int
	var after, frameCounts, shown []float64
	var ready, op1, ans1, op2, ans2 []float64
	for _, l := range ls {
		if l.FirstOpAfterDCL < 0 {
			early++
		}
		if l.Op1Answered < 0 {
			ranEarly++
		}
		ready, op1, ans1 = appendNum(ready, l.ReadySent), appendNum(op1, l.Op1Received), appendNum(ans1, l.Op1Answered)
		op2, ans2 = appendNum(op2, l.Op2Received), appendNum(ans2, l.Op2Answered)
		if l.QueryNull {
			null++
		}
		logErr += l.LogErrors
		if math.IsNaN(l.EffectAt) {
			nothing++
			continue
		}
		after = append(after, l.EffectAt-l.DCL)
		shown = append(shown, l.ShownWithout)
		frames += l.Without
		frameCounts = append(frameCounts, float64(l.Without))
	}
	if nothing == len(ls) {
		return partResult{}, fmt.Errorf("the script remixlet never hid the <h1> in %d loads (its log: remixproxy remixlet log %q)", len(ls), scriptName)
	}
	if out := outOfView(ls); out > 0 {
		return partResult{}, fmt.Errorf("the <h1> was out of view in every painted frame before the effect in %d loads: the page does not measure what a person sees", out)
	}
	return partResult{name: "script-" + delivery, loads: ls,
		title: fmt.Sprintf("Script remixlet (hides the `<h1>`), %s delivered %s, %d loads after %d warm-up:", pageLabel, deliveryWords[delivery], len(ls), *warmups),
		rows: []row{
			{"loads whose first dom call reached the page before DOMContentLoaded", fmt.Sprintf("%d of %d", early, len(ls)), "0 (default run time)", "page agent's WebSocket frame vs Page.domContentEventFired"},
			{"loads whose first dom call ran in the page before DOMContentLoaded", fmt.Sprintf("%d of %d", ranEarly, len(ls)), "0 (default run time)", "its result frame sent vs domContentLoadedEventStart"},
			{"loads where dom.query answered null", fmt.Sprintf("%d of %d", null, len(ls)), "—", "the remixlet ran before the `<h1>` was parsed"},
			{"loads where the remixlet did nothing (`<h1>` never hidden)", fmt.Sprintf("%d of %d", nothing, len(ls)), "0", fmt.Sprintf("within %v of the load event; error lines in its log: %d", *settle, logErr)},
			{"first visible change after DOMContentLoaded, p50 / p95", ms(pct(after, 50)) + " / " + ms(pct(after, 95)), "≤ 50 ms / ≤ 150 ms", fmt.Sprintf("%d loads that acted; min %s, max %s", len(after), ms(pct(after, 0)), ms(pct(after, 100)))},
			{"painted frames of the unremixed page before the change", fmt.Sprintf("%d", frames), "—", fmt.Sprintf("per load: median %s, max %s", num(pct(frameCounts, 50)), num(pct(frameCounts, 100)))},
			{"time the unremixed `<h1>` was on screen, median / p95", ms(pct(shown, 50)) + " / " + ms(pct(shown, 95)), "—", "first painted frame showing it → first frame without it; 0 when it never showed"},
			{"timeline after DOMContentLoaded, medians: ready report sent / first op received → answered / second op received → answered / visible", fmt.Sprintf("%s / %s → %s / %s → %s / %s", ms(pct(ready, 50)), ms(pct(op1, 50)), ms(pct(ans1, 50)), ms(pct(op2, 50)), ms(pct(ans2, 50)), ms(pct(after, 50))), "—", "the page agent's WebSocket frames (DevTools), moved onto the page's clock at DOMContentLoaded's end"},
		}}, nil
}

func (b *bench) measureCold(delivery string) (partResult, error) {
	var cold, warm, all, coldFB, warmFB, coldCh, warmCh, coldOpen, warmOpen []float64
	var ls []loadFigures
	nothing := 0
	for s := 1; s <= *starts; s++ {
		b.px.Stop()
		if err := b.startProxy(); err != nil {
			return partResult{}, fmt.Errorf("restarting the proxy: %w", err)
		}
		t, err := b.newTab("hidden")
		if err != nil {
			return partResult{}, err
		}
		for i := 0; i <= *later; i++ {
			url := fmt.Sprintf("https://%s/script?d=%s&start=%d&load=%d", siteHost, delivery, s, i)
			var f loadFigures
			var err error
			if i == 0 {
				f, err = t.load(url) // not retried: a second try would find the sandbox warm
			} else {
				f, err = b.load(t, url)
			}
			if err != nil {
				t.cancel()
				return partResult{}, err
			}
			ls = append(ls, f)
			fmt.Fprintf(os.Stderr, "firstframe: %s: effect at %+.1f ms after DCL\n", f.URL, f.EffectAt-f.DCL)
			if math.IsNaN(f.EffectAt) {
				nothing++
				continue
			}
			v, fb := f.EffectAt-f.DCL, f.EffectAt-f.ResponseStart
			// The channel's part: first byte → channel open (the page's time, the DevTools
			// clock after DOMContentLoaded), and channel open → the first dom call.
			open, ch := f.WSOpenAfterDCL-(f.ResponseStart-f.DCL), f.FirstOpAfterDCL-f.WSOpenAfterDCL
			all = append(all, v)
			if i == 0 {
				cold, coldFB = append(cold, v), append(coldFB, fb)
				coldOpen, coldCh = appendNum(coldOpen, open), appendNum(coldCh, ch)
			} else {
				warm, warmFB = append(warm, v), append(warmFB, fb)
				warmOpen, warmCh = appendNum(warmOpen, open), appendNum(warmCh, ch)
			}
		}
		t.cancel()
	}
	if len(all) == 0 {
		return partResult{}, fmt.Errorf("the script remixlet never hid the <h1>")
	}
	return partResult{name: "cold", loads: ls,
		title: fmt.Sprintf("First matching page after the proxy starts, %s delivered %s, %d starts, %d later loads each (script remixlet; first visible change after DOMContentLoaded):", pageLabel, deliveryWords[delivery], *starts, *later),
		rows: []row{
			{"first page after a start, after DOMContentLoaded, median (min – max)", spread(cold), "as later pages", fmt.Sprintf("%d of %d acted", len(cold), *starts)},
			{"later pages, after DOMContentLoaded, median (min – max)", spread(warm), "—", fmt.Sprintf("%d loads; did nothing in all: %d", len(warm), nothing)},
			{"first page after a start, after its first byte, median (min – max)", spread(coldFB), "as later pages", "responseStart: the proxy's own connection set-up comes before it"},
			{"later pages, after their first byte, median (min – max)", spread(warmFB), "—", ""},
			{"page's first byte → page agent's channel open, first page / later pages, median", ms(pct(coldOpen, 50)) + " / " + ms(pct(warmOpen, 50)), "—", "WebSocket handshake answered, as the renderer reports it"},
			{"page agent's channel open → first dom call, first page / later pages, median", ms(pct(coldCh, 50)) + " / " + ms(pct(warmCh, 50)), "—", "the sandbox's share: WebSocket handshake answered → first op frame"},
		}}, nil
}

// outOfView counts the loads in which the <h1> was out of view, never in view without the
// effect, in the painted frames: on such a page the figures say nothing (--page with the <h1>
// far down).
func outOfView(ls []loadFigures) int {
	n := 0
	for _, l := range ls {
		if l.OutOfView > 0 && l.Without == 0 {
			n++
		}
	}
	return n
}

// --- small helpers ---

// pct is the p-th percentile of xs (nearest rank); NaN for none.
func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// appendNum appends v unless it is NaN (not measured).
func appendNum(xs []float64, v float64) []float64 {
	if math.IsNaN(v) {
		return xs
	}
	return append(xs, v)
}

// spread is "median (min – max)" of xs in ms.
func spread(xs []float64) string {
	return fmt.Sprintf("%s (%s – %s)", ms(pct(xs, 50)), ms(pct(xs, 0)), ms(pct(xs, 100)))
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.1f ms", v)
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.0f", v)
}
