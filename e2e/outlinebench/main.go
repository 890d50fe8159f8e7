// Command outlinebench measures the page agent's outline on every page of the shared corpus
// (../shared/corpus/pages, see its README) and compares it with Playwright's full-page
// ariaSnapshot of the same pages (issue 6, "Tests and measures"). It is a benchmark script, not
// a test: it prints per-page figures and a Markdown summary.
//
// Our side: the corpus is served as https://corpus.test/NAME.html by local test sites, loaded
// in Debian's Chromium through an in-process remixproxy (as e2e/corpus_test.go does), and the
// outline tool is run through Server.PageTool: the default outline (visible, 3 000-character
// budget) and the `all` outline (budget 100 000). For each page it also counts, in the page, the
// links, buttons and form fields that are visible in the viewport (and, for `all`, rendered
// anywhere on the page) and reports how many of them have no line with a ref in the outline.
//
// Playwright's side: ariasnapshot.js, run with node, uses playwright-core from npm to drive the
// same /usr/bin/chromium (it never downloads a browser) loading the same pages directly from
// the test sites, and measures page.locator(':root').ariaSnapshot(). Install it once with
//
//	cd e2e/outlinebench && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-save playwright-core
//
// (node_modules is git-ignored). Without it the Playwright columns are left out.
//
//	go run ./e2e/outlinebench [-glob PREFIX] [-v]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

var (
	corpus  = flag.String("corpus", "../shared/corpus/pages", "folder of NAME.html pages, relative to the repository root")
	glob    = flag.String("glob", "", "only pages whose name starts with this")
	verbose = flag.Bool("v", false, "print every page's figures")
	noPW    = flag.Bool("no-playwright", false, "skip Playwright's ariaSnapshot")
	missing = flag.Bool("missing", false, "list (through the query tool, up to 200 a page) the visible links, buttons and fields without a ref in the all outline")
	dump    = flag.String("dump", "", "write each page's outlines and ariaSnapshot to files in this folder")
)

const corpusHost = "corpus.test"

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "outlinebench:", err)
		os.Exit(1)
	}
}

// page is one corpus page's figures.
type page struct {
	name                   string
	defChars, allChars     int
	defTruncated, allTrunc bool
	inView, inViewMissing  int
	rendered, allMissing   int
	pwChars, pwInteractive int
	pwErr, err             string
	outlineMS              int64
}

func run() error {
	names, err := filepath.Glob(filepath.Join(*corpus, *glob+"*.html"))
	if *dump != "" {
		if err := os.MkdirAll(*dump, 0o755); err != nil {
			return err
		}
		if *dump, err = filepath.Abs(*dump); err != nil {
			return err
		}
	}
	if err != nil || len(names) == 0 {
		return fmt.Errorf("no corpus pages in %s (run from the repository root; see ../shared/corpus/README.md)", *corpus)
	}
	sites, err := e2etest.NewSites()
	if err != nil {
		return err
	}
	defer sites.Close()
	sites.Handle(corpusHost, corpusSite(*corpus))
	p, err := e2etest.NewProxy(sites)
	if err != nil {
		return err
	}
	defer p.Close()
	c, err := e2etest.NewChromium(e2etest.ThroughProxy(p))
	if err != nil {
		return err
	}
	defer c.Close()
	tb := &benchTB{}
	defer tb.cleanup()
	tab := c.NewTab(tb)
	tab.NavigateTimeout = 20 * time.Second
	ctx, cancel := context.WithTimeout(tab.Context(), 10*time.Second)
	err = chromedp.Do(ctx, onlyCorpus)
	cancel()
	if err != nil {
		return fmt.Errorf("blocking third-party requests: %w", err)
	}

	var pages []*page
	byURL := map[string]*page{}
	var urls []string
	for _, path := range names {
		name := filepath.Base(path)
		url := "https://" + corpusHost + "/" + name
		pg := &page{name: strings.TrimSuffix(name, ".html")}
		pages = append(pages, pg)
		byURL[url] = pg
		urls = append(urls, url)
		measureOurs(p, tab, url, pg)
		if *verbose {
			fmt.Fprintf(os.Stderr, "%-44s default %5d (in view %3d, missing %2d)  all %6d (rendered %4d, missing %3d) %s\n",
				pg.name, pg.defChars, pg.inView, pg.inViewMissing, pg.allChars, pg.rendered, pg.allMissing, pg.err)
		}
	}
	pwNote := ""
	if *noPW {
		pwNote = "skipped (-no-playwright)"
	} else if err := measurePlaywright(sites, urls, byURL); err != nil {
		pwNote = err.Error()
	}
	report(pages, pwNote)
	return nil
}

func corpusSite(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := filepath.Base(r.URL.Path)
		if !strings.HasSuffix(name, ".html") || name != strings.TrimPrefix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write(b)
	})
}

var onlyCorpus = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	_, err := cdp.Call(ctx, t, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: []*network.BlockPattern{
		{URLPattern: "*://" + corpusHost + "/*", Block: false},
		{URLPattern: "*://remix.proxy/*", Block: false},
		{URLPattern: "*://*/*", Block: true},
	}})
	return err
})

// interactiveJS counts the links, buttons and form fields (and elements with an interactive
// role) that are rendered and not hidden from assistive technology: [in the viewport, anywhere
// on the page]. The outline's side is counted by lines (refLines): a count, not a match of
// element to line, so an extra line can hide a missing element.
const interactiveJS = `(() => {
	let view = 0, all = 0;
	for (const e of document.querySelectorAll(` + "`" + `a[href], area[href], button, input:not([type=hidden]), select, textarea, summary,
			[role=button], [role=link], [role=checkbox], [role=radio], [role=switch], [role=tab], [role=menuitem],
			[role=menuitemcheckbox], [role=menuitemradio], [role=option], [role=combobox], [role=textbox],
			[role=searchbox], [role=slider], [role=spinbutton], [role=listbox], [role=treeitem]` + "`" + `)) {
		if (e.closest('[aria-hidden=true], [hidden], [inert]') || e.closest('[data-remixproxy]')) continue;
		const s = getComputedStyle(e);
		if (s.visibility !== 'visible') continue;
		const r = e.getBoundingClientRect();
		if (r.width < 1 || r.height < 1) continue;
		all++;
		if (r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth) view++;
	}
	return [view, all];
})()`

var interactiveRoles = []string{"link", "button", "textbox", "searchbox", "checkbox", "radio", "combobox",
	"slider", "spinbutton", "listbox", "switch", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option",
	"treeitem"}

// refLines counts the outline's lines of interactive roles that carry a ref.
func refLines(outline string) int {
	n := 0
	for _, l := range strings.Split(outline, "\n") {
		t := strings.TrimLeft(l, " ")
		if !strings.Contains(t, " [e") {
			continue
		}
		for _, r := range interactiveRoles {
			if strings.HasPrefix(t, r+" ") || t == r {
				n++
				break
			}
		}
	}
	return n
}

func measureOurs(p *e2etest.Proxy, tab *e2etest.Tab, url string, pg *page) {
	if _, err := tab.NavigateErr(url); err != nil {
		pg.err = "loading: " + firstLine(err.Error())
		return
	}
	if err := tab.WaitConnectedErr(10 * time.Second); err != nil {
		pg.err = "page agent not connected"
		return
	}
	session := ""
	for deadline := time.Now().Add(10 * time.Second); session == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, s := range p.Server.Status().Sessions {
			if s.URL == url && s.Connected {
				session = s.ID
			}
		}
	}
	if session == "" {
		pg.err = "no page session"
		return
	}
	call := func(args string) (string, bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := p.Server.PageTool(ctx, session, "outline", json.RawMessage(args))
		if err != nil {
			return "", false, err
		}
		var v struct {
			Outline   string `json:"outline"`
			Truncated bool   `json:"truncated"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			return "", false, err
		}
		return v.Outline, v.Truncated, nil
	}
	start := time.Now()
	def, trunc, err := call(`{}`)
	pg.outlineMS = time.Since(start).Milliseconds()
	if err != nil {
		pg.err = "outline: " + firstLine(err.Error())
		return
	}
	counts, err := e2etest.EvalE[[]int](tab, interactiveJS)
	if err != nil || len(counts) != 2 {
		pg.err = fmt.Sprintf("counting interactive elements: %v", err)
		return
	}
	all, allTrunc, err := call(`{"filter":"all","budget":100000}`)
	if err != nil {
		pg.err = "outline all: " + firstLine(err.Error())
		return
	}
	if *missing {
		listMissing(p, session, pg.name, all)
	}
	if *dump != "" {
		os.WriteFile(filepath.Join(*dump, pg.name+".default.txt"), []byte(def), 0o644)
		os.WriteFile(filepath.Join(*dump, pg.name+".all.txt"), []byte(all), 0o644)
	}
	pg.defChars, pg.defTruncated = utf8.RuneCountInString(def), trunc
	pg.allChars, pg.allTrunc = utf8.RuneCountInString(all), allTrunc
	pg.inView, pg.rendered = counts[0], counts[1]
	pg.inViewMissing = max(0, pg.inView-refLines(def))
	pg.allMissing = max(0, pg.rendered-refLines(all))
}

func measurePlaywright(sites *e2etest.Sites, urls []string, byURL map[string]*page) error {
	dir := "e2e/outlinebench"
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		return fmt.Errorf("playwright-core is not installed (cd %s && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-save playwright-core)", dir)
	}
	in, _ := json.Marshal(map[string]any{
		"chromium": e2etest.ChromiumPath,
		"host":     corpusHost,
		"dump":     *dump,
		"urls":     urls,
		"args": []string{"--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-extensions",
			"--disable-features=HttpsUpgrades,Translate,MediaRouter,OptimizationHints",
			"--host-resolver-rules=" + sites.HostResolverRules()},
	})
	cmd := exec.Command("node", "ariasnapshot.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting node: %w", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r struct {
			URL         string `json:"url"`
			Chars       int    `json:"chars"`
			Interactive int    `json:"interactive"`
			Error       string `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		if pg := byURL[r.URL]; pg != nil {
			pg.pwChars, pg.pwInteractive, pg.pwErr = r.Chars, r.Interactive, r.Error
			if *verbose {
				fmt.Fprintf(os.Stderr, "%-44s ariaSnapshot %6d (interactive lines %4d) %s\n", pg.name, r.Chars, r.Interactive, r.Error)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("node ariasnapshot.js: %w: %s", err, firstLine(stderr.String()))
	}
	return nil
}

func quantiles(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	q := func(f float64) int { return s[int(f*float64(len(s)-1)+0.5)] }
	return fmt.Sprintf("%d / %d / %d", q(.5), q(.9), s[len(s)-1])
}

func quantilesF(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	q := func(f float64) float64 { return s[int(f*float64(len(s)-1)+0.5)] }
	return fmt.Sprintf("%.2f / %.2f / %.2f", q(.5), q(.9), s[len(s)-1])
}

func report(pages []*page, pwNote string) {
	var def, all, inView, inViewMiss, allMiss, pw, ms []int
	var ratio []float64
	failed, defTrunc, allTrunc, pagesMissView, pagesMissAll, half := 0, 0, 0, 0, 0, 0
	for _, pg := range pages {
		if pg.err != "" {
			failed++
			fmt.Printf("- %s: %s\n", pg.name, pg.err)
			continue
		}
		def, all, inView = append(def, pg.defChars), append(all, pg.allChars), append(inView, pg.inView)
		inViewMiss, allMiss, ms = append(inViewMiss, pg.inViewMissing), append(allMiss, pg.allMissing), append(ms, int(pg.outlineMS))
		if pg.defTruncated {
			defTrunc++
		}
		if pg.allTrunc {
			allTrunc++
		}
		if pg.inViewMissing > 0 {
			pagesMissView++
		}
		if pg.allMissing > 0 {
			pagesMissAll++
		}
		if pg.pwChars > 0 && pg.pwErr == "" {
			pw = append(pw, pg.pwChars)
			r := float64(pg.allChars) / float64(pg.pwChars)
			ratio = append(ratio, r)
			if r <= 0.5 {
				half++
			}
		}
	}
	fmt.Printf("\nOutline on %d corpus pages (%d failed to load or answer); p50 / p90 / max:\n\n", len(def), failed)
	fmt.Println("| measure | p50 / p90 / max |")
	fmt.Println("| --- | --- |")
	fmt.Printf("| default outline, characters (%d truncated at the 3 000 budget) | %s |\n", defTrunc, quantiles(def))
	fmt.Printf("| default outline, time (ms) | %s |\n", quantiles(ms))
	fmt.Printf("| links, buttons and fields visible in the viewport | %s |\n", quantiles(inView))
	fmt.Printf("| of them without a line with a ref in the default outline (%d pages with any) | %s |\n", pagesMissView, quantiles(inViewMiss))
	fmt.Printf("| `all` outline, characters (%d truncated at 100 000) | %s |\n", allTrunc, quantiles(all))
	fmt.Printf("| links, buttons and fields rendered on the page without a ref in `all` (%d pages with any) | %s |\n", pagesMissAll, quantiles(allMiss))
	if len(pw) > 0 {
		fmt.Printf("| Playwright ariaSnapshot (full page), characters | %s |\n", quantiles(pw))
		fmt.Printf("| `all` outline / ariaSnapshot size (%d of %d pages at most 0.5) | %s |\n", half, len(ratio), quantilesF(ratio))
	}
	if pwNote != "" {
		fmt.Printf("\nPlaywright: %s\n", pwNote)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// benchTB lets the e2etest helpers that want a test run in this program: failures become
// panics, cleanups run at exit.
type benchTB struct {
	testing.TB
	cleanups []func()
}

func (b *benchTB) Helper()             {}
func (b *benchTB) Cleanup(f func())    { b.cleanups = append(b.cleanups, f) }
func (b *benchTB) Name() string        { return "outlinebench" }
func (b *benchTB) Logf(string, ...any) {}
func (b *benchTB) Errorf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, f+"\n", a...)
}
func (b *benchTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (b *benchTB) Fatal(a ...any)            { panic(fmt.Sprint(a...)) }
func (b *benchTB) cleanup() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
}

// listMissing prints the visible interactive elements the query tool finds whose ref is not in
// the outline.
func listMissing(p *e2etest.Proxy, session, name, outline string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := p.Server.PageTool(ctx, session, "query", json.RawMessage(`{"selector":"a[href], button, input, select, textarea","limit":200}`))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: query: %v\n", name, err)
		return
	}
	var v struct {
		Matches []struct {
			Ref     string            `json:"ref"`
			Tag     string            `json:"tag"`
			Text    string            `json:"text"`
			Attrs   map[string]string `json:"attrs"`
			Visible bool              `json:"visible"`
		} `json:"matches"`
	}
	json.Unmarshal(out, &v)
	for _, m := range v.Matches {
		if m.Visible && m.Attrs["type"] != "hidden" && !strings.Contains(outline, "["+m.Ref+"]") {
			fmt.Fprintf(os.Stderr, "%s: no line for %s <%s> %q %v\n", name, m.Ref, m.Tag, m.Text, m.Attrs)
		}
	}
}
