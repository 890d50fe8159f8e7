package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// The held-out sweep (issue 12, "Also"): public corpora nobody on this project wrote, fed through
// every dom.* sink that takes text, by remixlets stored without the save-time checks, in real
// Chromium through the real proxy. For each corpus × sink it counts the operations, how many the
// policy accepted and refused, and the requests that left for any host other than the page's
// (the witness count, seen by the browser itself through the DevTools protocol, and by the
// witness sites): that count must be 0, and no script may run. The counts are printed with
// t.Logf so the README's table can be refreshed (go test ./e2e/ -run TestHostileSweep -v).
//
// Corpora (e2e/testdata/corpus/README.md says where each comes from and its licence):
//   - dompurify: DOMPurify's test vectors (../shared/corpus/xss/dompurify-vectors.json);
//   - xss-filters: the seed list of Yahoo's xss-filters fuzzer (RSnake's XSS cheat sheet);
//   - sanitize-url: the address vectors of Braintree's sanitize-url tests;
//   - wpt-url: every input of the web-platform-tests URL suite (urltestdata.json, shipped with
//     the whatwg-url module);
//   - css: every style attribute and <style> text in the HTML corpora, found with the tree
//     builder.

// sharedCorpusFile is the path of a file of ../shared/corpus/ (beside the repository): it is
// ../../shared/corpus from e2e/ in a checkout, and one level further up from a git worktree kept
// in a folder of worktrees. The first that exists wins; the checkout's path otherwise.
// REMIXPROXY_CORPUS, when set (scripts/test.sh sets it), names the corpus folder outright.
func sharedCorpusFile(rel string) string {
	if dir := os.Getenv("REMIXPROXY_CORPUS"); dir != "" {
		return filepath.Join(dir, rel)
	}
	for _, up := range []string{"../..", "../../.."} {
		p := filepath.Join(up, "shared", "corpus", rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join("../..", "shared", "corpus", rel)
}

// noCorpus ends a test whose corpus input is missing: skipped with the reason where the shared
// corpus is not on the machine (a clone elsewhere), failed where scripts/test.sh found it and set
// REMIXPROXY_REQUIRE_CORPUS — there a missing file is a broken path, not an absent corpus, and a
// skip would hide the sweep.
func noCorpus(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("REMIXPROXY_REQUIRE_CORPUS") != "" {
		t.Fatalf("the corpus is required (REMIXPROXY_REQUIRE_CORPUS) but: "+format, args...)
	}
	t.Skipf(format+" (set REMIXPROXY_CORPUS to the shared corpus folder to run this test)", args...)
}

// sweepSinks are the dom.* sinks each item goes through; each counted op of a sink is one
// attempt to write the item.
var sweepSinks = []string{"setHTML", "create", "setAttr", "pageAttr", "setStyle", "addStyle"}

// sweepChunk bounds the items per remixlet: a runtime is stopped after 1000 refusals
// (sandbox.Limits.MaxRefusals), and pageAttr makes three attempts per item.
const sweepChunk = 250

const sweepScript = `const P = %s;
const SINK = %q, K = %d;
let ops = 0, acc = 0, ref = 0;
const why = {};
const note = (e) => { ref++; const m = String((e && e.message) || e).replace(/[0-9]+/g, 'N').slice(0, 70); why[m] = (why[m] || 0) + 1; };
const root = await dom.query('#sweep');
const pa = SINK === 'pageAttr' ? await dom.queryAll('.pa-' + K) : [];
const pi = SINK === 'pageAttr' ? await dom.queryAll('.pi-' + K) : [];
const pd = SINK === 'pageAttr' ? await dom.queryAll('.pd-' + K) : [];
for (let i = 0; i < P.length; i++) {
  const v = P[i];
  if (SINK === 'setHTML') {
    const d = await dom.create({ tag: 'div' });
    await dom.insert(root, d);
    ops++; try { await dom.setHTML(d, v); acc++; } catch (e) { note(e); }
  } else if (SINK === 'create') {
    for (const [tag, at] of [['a', 'href'], ['img', 'src']]) {
      ops++; try { const el = await dom.create({ tag, attrs: { [at]: v }, text: tag === 'a' ? 'x' : undefined }); await dom.insert(root, el); acc++; } catch (e) { note(e); }
    }
  } else if (SINK === 'setAttr') {
    for (const [tag, at] of [['a', 'href'], ['img', 'src']]) {
      const el = await dom.create({ tag });
      await dom.insert(root, el);
      ops++; try { await dom.setAttr(el, at, v); acc++; } catch (e) { note(e); }
    }
  } else if (SINK === 'pageAttr') {
    for (const [list, at] of [[pa, 'href'], [pi, 'src'], [pd, 'title']]) {
      ops++; try { await dom.setAttr(list[i], at, v); acc++; } catch (e) { note(e); }
    }
  } else if (SINK === 'setStyle') {
    const d = await dom.create({ tag: 'div', text: 's' });
    await dom.insert(root, d);
    for (const p of ['backgroundImage', 'content']) {
      ops++; try { await dom.setStyle(d, { [p]: v }); acc++; } catch (e) { note(e); }
    }
  } else if (SINK === 'addStyle') {
    ops++; try { await dom.addStyle(v); acc++; } catch (e) { note(e); }
  }
}
await dom.setText(await dom.query('#r-' + K), JSON.stringify({ ops, acc, ref, why }));
`

// sweepCSSScript is the script of a remixlet that only brings a style.css.
const sweepCSSScript = `await dom.setText(await dom.query('#r-%d'), JSON.stringify({ ops: 1 }));
`

type sweepCorpus struct {
	name  string
	items []string
}

// sweepRun is one remixlet of the sweep: a chunk of a corpus through one sink.
type sweepRun struct {
	sink  string
	k     int // its status element and page elements
	items []string
	rx    store.Remixlet
}

type sweepCount struct {
	Ops int            `json:"ops"`
	Acc int            `json:"acc"`
	Ref int            `json:"ref"`
	Why map[string]int `json:"why"`
}

func loadSweepCorpora(t *testing.T) []sweepCorpus {
	var out []sweepCorpus
	raw, err := os.ReadFile(xssVectorsFile)
	if err != nil {
		noCorpus(t, "no XSS vectors at %s (the shared corpus is not checked out here; see ../shared/corpus/README.md): %v", xssVectorsFile, err)
	}
	var vectors []xssVector
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	dp := sweepCorpus{name: "dompurify"}
	for _, v := range vectors {
		dp.items = append(dp.items, v.Payload)
	}
	out = append(out, dp)

	seed, err := os.ReadFile("testdata/corpus/xss-filters-seed.xss")
	if err != nil {
		t.Fatal(err)
	}
	xf := sweepCorpus{name: "xss-filters"}
	sc := bufio.NewScanner(bytes.NewReader(seed))
	for sc.Scan() {
		if l := sc.Text(); strings.TrimSpace(l) != "" {
			xf.items = append(xf.items, l)
		}
	}
	out = append(out, xf)

	su := sweepCorpus{name: "sanitize-url"}
	raw, err = os.ReadFile("testdata/corpus/sanitize-url-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &su.items); err != nil {
		t.Fatal(err)
	}
	out = append(out, su)

	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/nlnwa/whatwg-url").Output()
	if err != nil {
		t.Fatalf("finding the whatwg-url module (it ships the web-platform-tests URL cases): %v", err)
	}
	raw, err = os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "testdata", "urltestdata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		t.Fatal(err)
	}
	wpt := sweepCorpus{name: "wpt-url"}
	seen := map[string]bool{}
	for _, e := range entries {
		var c struct {
			Input *string `json:"input"`
		}
		if json.Unmarshal(e, &c) == nil && c.Input != nil && !seen[*c.Input] {
			seen[*c.Input] = true
			wpt.items = append(wpt.items, *c.Input)
		}
	}
	out = append(out, wpt)

	css := sweepCorpus{name: "css"}
	cseen := map[string]bool{}
	for _, c := range []sweepCorpus{dp, xf} {
		for _, item := range c.items {
			doc, err := html.ParseWithOptions(strings.NewReader(item), html.ParseOptionEnableScripting(false))
			if err != nil {
				continue
			}
			for n := range doc.Descendants() {
				var s string
				switch {
				case n.Type == html.ElementNode && n.Data == "style" && n.FirstChild != nil:
					s = n.FirstChild.Data
				case n.Type == html.ElementNode:
					for _, a := range n.Attr {
						if a.Key == "style" {
							s = a.Val
						}
					}
				}
				if strings.TrimSpace(s) != "" && !cseen[s] {
					cseen[s] = true
					css.items = append(css.items, s)
				}
			}
		}
	}
	out = append(out, css)
	return out
}

// sweepHosts are the hosts the corpora name; each is a witness here (and any other host is
// refused by the proxy: the browser-side count covers those).
var sweepHosts = append([]string{"example.com", "example.org", "www.example.com", "ha.ckers.org", "google.com",
	"www.google.com", "xss.rocks", "test.com", "example.net", "www.example.org"}, xssHosts...)

func TestHostileSweep(t *testing.T) {
	corpora := loadSweepCorpora(t)
	sites := e2etest.StartSites(t)
	wit := &witness{}
	hosts := map[string]bool{}
	for _, h := range sweepHosts {
		if !hosts[h] && h != "sweep.test" {
			hosts[h] = true
			sites.Handle(h, wit)
		}
	}
	sites.Handle("control.sweep-witness.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent) // the positive control's witness (below)
	}))
	// The page for each corpus: the sweep root, status elements, and the page elements that the
	// pageAttr remixlets write to (one of each per item).
	var mu sync.Mutex
	pages := map[string]string{}
	sites.Handle("sweep.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body, ok := pages[r.URL.Path]
		mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNoContent) // relative addresses land here: allowed, answered with nothing
			return
		}
		htmlPage(w, body)
	}))
	p := e2etest.StartProxy(t, sites, e2etest.WithStore())
	tab := e2etest.Browser(t, e2etest.ThroughProxy(p)).NewTab(t)

	// Every request the page makes, as the browser sees it.
	var reqMu sync.Mutex
	var requests []string
	// (chromedp enables the Network domain when it attaches the tab.)
	if err := chromedp.Listen(tab.Context(), func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			reqMu.Lock()
			requests = append(requests, e.Request.URL)
			reqMu.Unlock()
		}
	}); err != nil {
		t.Fatalf("listening for network events: %v", err)
	}

	type row struct {
		corpus, sink          string
		items, ops, acc, ref  int
		leaving, pageRequests int
		topWhy                string
	}
	var rows []row
	totalLeaving := 0
	for ci, c := range corpora {
		path := fmt.Sprintf("/c/%d", ci)
		match := "https://sweep.test" + path
		var runs []*sweepRun
		var page strings.Builder
		page.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>sweep</title>
<script>window.__pwned = 0; window.__pwnedBy = []; for (const n of ['alert', 'confirm', 'prompt', 'print']) { window[n] = function (x) { window.__pwned++; window.__pwnedBy.push(n + ':' + String(x)); }; }</script>
</head><body><h1>sweep</h1><div id="sweep"></div>
`)
		k := 0
		sinks := sweepSinks
		for _, sink := range sinks {
			for from := 0; from < len(c.items); from += sweepChunk {
				chunk := c.items[from:min(from+sweepChunk, len(c.items))]
				run := &sweepRun{sink: sink, k: k, items: chunk}
				runs = append(runs, run)
				fmt.Fprintf(&page, "<p class=st id=r-%d></p>\n", k)
				if sink == "pageAttr" {
					for range chunk {
						fmt.Fprintf(&page, `<a class="pa-%d" href="/p">p</a><img class="pi-%d" alt=""><span class="pd-%d"></span>`, k, k, k)
					}
					page.WriteString("\n")
				}
				k++
			}
		}
		if c.name == "css" {
			for _, item := range c.items {
				runs = append(runs, &sweepRun{sink: "style.css", k: k, items: []string{item}})
				fmt.Fprintf(&page, "<p class=st id=r-%d></p>\n", k)
				k++
			}
		}
		page.WriteString("</body></html>")
		mu.Lock()
		pages[path] = page.String()
		mu.Unlock()
		for _, run := range runs {
			name := fmt.Sprintf("sweep %s %s %d", c.name, run.sink, run.k)
			files := store.Files{sandbox.ManifestFile: []byte(fmt.Sprintf(`{"name": %q, "description": "Corpus sweep.", "api": 1, "matches": [%q], "permissions": []}`, name, match))}
			if run.sink == "style.css" {
				files[sandbox.ScriptFile] = []byte(fmt.Sprintf(sweepCSSScript, run.k))
				files[sandbox.StyleFile] = []byte(run.items[0])
			} else {
				pj, _ := json.Marshal(run.items)
				files[sandbox.ScriptFile] = []byte(fmt.Sprintf(sweepScript, pj, run.sink, run.k))
			}
			run.rx = saveUnchecked(t, p.Store, name, files)
		}

		reqMu.Lock()
		before := len(requests)
		reqMu.Unlock()
		tab.Navigate("https://sweep.test" + path)
		tab.WaitConnected()
		allDone := fmt.Sprintf(`[...document.querySelectorAll('p.st')].filter((e) => e.textContent !== '').length === %d`, len(runs))
		if err := waitTrue(tab, 3*time.Minute, allDone); err != nil {
			var missing []string
			for _, run := range runs {
				if e2etest.Eval[string](tab, fmt.Sprintf(`document.getElementById('r-%d').textContent`, run.k)) == "" {
					missing = append(missing, fmt.Sprintf("%s %d:\n%s", run.sink, run.k, tail(remixletLog(t, p.Store, run.rx.ID), 1500)))
				}
			}
			t.Fatalf("%s: not every sweep remixlet finished: %v\n%s", c.name, err, strings.Join(missing, "\n"))
		}
		// Give queued loads, animations and focus handlers time to run.
		e2etest.Eval[bool](tab, `(() => { document.querySelectorAll('#sweep a, #sweep input, #sweep button').forEach((e) => e.focus && e.focus()); window.scrollTo(0, document.body.scrollHeight); return true; })()`)
		time.Sleep(1500 * time.Millisecond)
		if n := e2etest.Eval[int](tab, `window.__pwned`); n != 0 {
			t.Errorf("BUG: %s: script ran %d times: %v", c.name, n, e2etest.Eval[[]string](tab, `window.__pwnedBy`))
		}

		reqMu.Lock()
		seen := append([]string(nil), requests[before:]...)
		reqMu.Unlock()
		leaving, own := 0, 0
		var leaks []string
		for _, r := range seen {
			u, err := url.Parse(r)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
				continue // data: images decode in the page; nothing leaves
			}
			switch u.Hostname() {
			case "sweep.test":
				own++
			case "remix.proxy":
			default:
				leaving++
				leaks = append(leaks, r)
			}
		}
		if leaving > 0 {
			t.Errorf("BUG: %s: %d requests left for other hosts:\n  %s", c.name, leaving, strings.Join(leaks[:min(len(leaks), 30)], "\n  "))
		}
		totalLeaving += leaving

		bySink := map[string]*row{}
		var order []string
		for _, run := range runs {
			r := bySink[run.sink]
			if r == nil {
				r = &row{corpus: c.name, sink: run.sink}
				bySink[run.sink] = r
				order = append(order, run.sink)
			}
			r.items += len(run.items)
			if run.sink == "style.css" {
				r.ops++
				if strings.Contains(remixletLog(t, p.Store, run.rx.ID), "refused: "+sandbox.StyleFile) {
					r.ref++
				} else {
					r.acc++
				}
				continue
			}
			var cnt sweepCount
			txt := e2etest.Eval[string](tab, fmt.Sprintf(`document.getElementById('r-%d').textContent`, run.k))
			if err := json.Unmarshal([]byte(txt), &cnt); err != nil {
				t.Errorf("%s %s %d: result %q: %v", c.name, run.sink, run.k, txt, err)
				continue
			}
			r.ops += cnt.Ops
			r.acc += cnt.Acc
			r.ref += cnt.Ref
			if cnt.Ops != cnt.Acc+cnt.Ref {
				t.Errorf("%s %s: %d ops but %d accepted + %d refused", c.name, run.sink, cnt.Ops, cnt.Acc, cnt.Ref)
			}
			top, topN := "", 0
			for w, n := range cnt.Why {
				if n > topN || n == topN && w < top {
					top, topN = w, n
				}
			}
			if topN > 0 && r.topWhy == "" {
				r.topWhy = fmt.Sprintf("%s (%d)", top, topN)
			}
		}
		for i, s := range order {
			r := bySink[s]
			if i == 0 {
				r.leaving, r.pageRequests = leaving, own
			}
			rows = append(rows, *r)
		}
	}
	if n, seen := sites.HostRequests("sweep.test"), wit.requests(); len(seen) != 0 {
		t.Errorf("BUG: the witness sites received %d requests (sweep.test saw %d):\n  %s", len(seen), n, strings.Join(seen, "\n  "))
	}
	// Positive control: a request the page itself makes to a witness is seen by both counts. Its
	// host is one no corpus names: a page may not reach a site its remixlets named
	// (remixlet/namedhosts.go), and the sweep's remixlets name every witness above.
	reqMu.Lock()
	before := len(requests)
	reqMu.Unlock()
	e2etest.Eval[bool](tab, `fetch('https://control.sweep-witness.test/control', {mode: 'no-cors'}).then(() => true, () => false)`)
	for deadline := time.Now().Add(5 * time.Second); sites.Requests("control.sweep-witness.test", "/control") == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the control request never reached the witness: the zero counts prove nothing")
		}
	}
	reqMu.Lock()
	controlSeen := false
	for _, r := range requests[before:] {
		controlSeen = controlSeen || strings.HasPrefix(r, "https://control.sweep-witness.test/control")
	}
	reqMu.Unlock()
	if !controlSeen {
		t.Fatalf("the browser-side request count did not see the control request: it proves nothing")
	}

	sort.SliceStable(rows, func(i, j int) bool { return false })
	var b strings.Builder
	b.WriteString("\n| corpus | sink | items | ops | accepted | refused | requests leaving (per corpus) | page-origin requests (per corpus) |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		leave, own := "", ""
		if r.pageRequests > 0 || r.leaving > 0 || r.sink == sweepSinks[0] {
			leave, own = fmt.Sprint(r.leaving), fmt.Sprint(r.pageRequests)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %s | %s |\n", r.corpus, r.sink, r.items, r.ops, r.acc, r.ref, leave, own)
	}
	t.Logf("corpus sweep (requests leaving must be 0):%s", b.String())
	for _, r := range rows {
		if r.topWhy != "" {
			t.Logf("  %s %s: most common refusal: %s", r.corpus, r.sink, r.topWhy)
		}
	}
	if totalLeaving != 0 {
		t.Errorf("BUG: %d requests left for hosts other than the page's", totalLeaving)
	}
}
