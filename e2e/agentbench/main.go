// Command agentbench measures the agent's Act mode on a small suite of local tasks in real
// Chromium, through the real remixproxy binary and its real chat panel: the three complaints
// browser agents draw most (issue 6, "The loop") — loops, false "done" and token cost — plus
// success rate.
//
// Each task is a purpose-built page on https://agentbench.test (loopback, dialled through
// --resolve, as e2e/benchremixlet does) with a success condition, window.benchOK(), read in the
// page after the turn: a React-style controlled form, a virtualised combobox, a portal dialog
// over a page with a same-named button, a setting far down an infinite-scroll list, and an
// impossible task (the page lacks the control), where the right answer is to say so.
//
// A run opens the task's page in a new tab, clicks the launcher, switches the panel to Act, and
// sends the task as a person would. When the turn ends, agentbench reads the page's condition,
// the turn's trace from the manager (GET /manager/traces.json on the proxy's listen address:
// steps, tool calls, end, tokens) and the model requests, which pass through a small recording
// front in this process (a loop-detector nudge is appended to a tool result, so it is counted in
// the requests; the trace holds the result before the nudge).
//
// The model: with no flags, scripted "personas" (agent/scripted) play it — competent (solves
// each task), looping (repeats one call) and false-done (claims success early). They validate
// the measurement itself: the looping persona must show loops, the false-done one false "done"s.
// With --model-url URL --model-api openai|anthropic --model NAME [--model-key-env VAR], or
// --settings DATADIR --provider NAME (a provider from that directory's providers.json), the
// person's real model plays it: the proxy is given the front as its "local" provider, and the
// front sets the real model's name and key.
//
// Rules:
//   - success: the page's condition holds after the turn; for an impossible task, the turn ended
//     with an answer or done that admits it could not be done (admitsFailure);
//   - claim: the turn ended with "done" accepted or a final answer, and that text does not admit
//     failure;
//   - false done: a claim while the page's condition is false (every claim on an impossible task);
//   - done refused: done calls the Act safety rule refused (a dialog or form still open);
//   - nudges: loop-detector warnings the model got; loop stops: turns ended by the detector.
//
// Run it with `go run ./e2e/agentbench` from the repository root (scripts/bench.sh runs it).
// It prints a Markdown table per run and in total.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/agent/scripted"
	"github.com/remixproxy/remixproxy/e2e/benchkit"
)

var (
	binPath     = flag.String("remixproxy", "", "remixproxy binary (default: go build it)")
	chromium    = flag.String("chromium", "/usr/bin/chromium", "Chromium binary (apt-get install -y chromium)")
	modelURL    = flag.String("model-url", "", "a real model's endpoint (e.g. https://api.openai.com/v1); default: the scripted personas")
	modelAPI    = flag.String("model-api", "openai", "wire format of --model-url: openai or anthropic")
	modelName   = flag.String("model", "", "the model name sent to --model-url")
	modelKeyEnv = flag.String("model-key-env", "", "environment variable holding --model-url's API key (sent as Authorization: Bearer, or x-api-key for anthropic)")
	settingsDir = flag.String("settings", "", "a data directory whose providers.json (Settings) names the real model; with --provider")
	provider    = flag.String("provider", "", "the provider of --settings to use (its base URL, kind, key, first model and prices)")
	inPrice     = flag.Float64("input-price", 0, "USD per million input tokens, for the cost column")
	outPrice    = flag.Float64("output-price", 0, "USD per million output tokens, for the cost column")
	turnTimeout = flag.Duration("turn-timeout", 0, "longest wait for one turn (default 60s scripted, 5m with a real model)")
	verbose     = flag.Bool("v", false, "print each turn's steps (tool, arguments, result) to stderr")
	only        = flag.String("tasks", "", "run only tasks whose name contains one of these, comma-separated")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "agentbench:", err)
		os.Exit(1)
	}
}

// result is one run: one task with one model.
type result struct {
	model, task                    string
	ok, claim, falseDone           bool
	end                            string
	steps, tools, nudges, loopStop int
	doneRefused                    int
	in, out                        int
	seconds                        float64
	note                           string
}

const nudgeMarker = "It is not working: do something different"

func run() error {
	if _, err := os.Stat(*chromium); err != nil {
		return fmt.Errorf("chromium not found (apt-get install -y chromium): %w", err)
	}
	key := ""
	if *modelKeyEnv != "" {
		if key = os.Getenv(*modelKeyEnv); key == "" {
			return fmt.Errorf("--model-key-env %s: the variable is empty", *modelKeyEnv)
		}
	}
	if *settingsDir != "" || *provider != "" {
		if err := fromSettings(&key); err != nil {
			return err
		}
	}
	real := *modelURL != ""
	if real && *modelName == "" {
		return fmt.Errorf("--model-url needs --model NAME")
	}
	if *modelAPI != "openai" && *modelAPI != "anthropic" {
		return fmt.Errorf("--model-api %q: want openai or anthropic", *modelAPI)
	}
	if *turnTimeout == 0 {
		*turnTimeout = time.Minute
		if real {
			*turnTimeout = 5 * time.Minute
		}
	}
	tmp, err := os.MkdirTemp("", "agentbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// The model: the scripted server, or the real endpoint, behind the recording front.
	var sm *scripted.Server
	target := *modelURL
	if !real {
		sm = scripted.New(scripted.Script{})
		u, stop, err := sm.Start("")
		if err != nil {
			return err
		}
		defer stop()
		target = u
		if *modelAPI == "openai" {
			target += "/v1"
		}
	}
	fr, err := startFront(target, *modelName, *modelAPI, key)
	if err != nil {
		return err
	}
	defer fr.close()

	site, err := benchkit.StartSite(tmp, siteHost, siteHandler())
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
	px, err := benchkit.StartProxy(bin, filepath.Join(tmp, "data"), site, siteHost, "--model-url", fr.url, "--model-api", *modelAPI)
	if err != nil {
		return err
	}
	defer px.Stop()
	br, err := benchkit.StartChromium(*chromium, tmp, px)
	if err != nil {
		return err
	}
	defer br.Close()

	var selected []task
	for _, t := range tasks {
		if *only == "" || containsAny(t.name, strings.Split(*only, ",")) {
			selected = append(selected, t)
		}
	}
	models := personas
	if real {
		models = []string{*modelName}
	}
	var results []result
	n := 0
	for _, m := range models {
		for _, t := range selected {
			n++
			if sm != nil {
				sc, err := scripted.ParseScript([]byte(t.scripts[m]))
				if err != nil {
					return fmt.Errorf("%s / %s: %w", m, t.name, err)
				}
				sm.Reset(sc)
			}
			fmt.Fprintf(os.Stderr, "agentbench: %s / %s\n", m, t.name)
			r, err := runOne(br, px, fr, t, m, n)
			if err != nil {
				return fmt.Errorf("%s / %s: %w\nproxy log tail:\n%s", m, t.name, err, px.Out)
			}
			results = append(results, r)
		}
	}
	printTable(results, real)
	if !real {
		return checkPersonas(results)
	}
	return nil
}

// checkPersonas is the measurement's own test: every competent run succeeds without a false
// done, loop or nudge; every looping run is stopped by the loop detector after nudges; every
// false-done run is counted as a false done.
func checkPersonas(rs []result) error {
	var bad []string
	for _, r := range rs {
		var why string
		switch r.model {
		case "competent":
			if !r.ok || r.falseDone || r.nudges > 0 || r.loopStop > 0 {
				why = "the competent persona should succeed, honestly, without loops"
			}
		case "looping":
			if r.nudges == 0 || r.loopStop == 0 || r.ok {
				why = "the looping persona should be nudged and stopped"
			}
		case "false-done":
			if !r.falseDone {
				why = "the false-done persona should be counted as a false done"
			}
		}
		if why != "" {
			bad = append(bad, fmt.Sprintf("%s / %s: %s", r.model, r.task, why))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the measurement failed its own check:\n  %s", strings.Join(bad, "\n  "))
	}
	fmt.Println("Check: the competent persona succeeded on every task, the looping one was nudged and stopped on every task, and every false-done run was counted as a false done.")
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func containsAny(s string, parts []string) bool {
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" && strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// runOne runs one task with one model in a new tab.
func runOne(br *benchkit.Browser, px *benchkit.Proxy, fr *front, t task, model string, n int) (result, error) {
	r := result{model: model, task: t.name}
	ctx, cancel, err := br.Tab(nil)
	if err != nil {
		return r, err
	}
	defer cancel()
	if err := benchkit.Navigate(ctx, fmt.Sprintf("https://%s%s?run=%d", siteHost, t.path, n)); err != nil {
		return r, err
	}
	if err := benchkit.WaitJS(ctx, 30*time.Second, "the page agent to connect", `document.querySelector('[data-remixproxy-launcher][data-remixproxy-state=connected]') && window.benchOK`); err != nil {
		return r, err
	}
	pf, err := openPanel(ctx)
	if err != nil {
		return r, err
	}
	defer pf.cancel()
	if _, err := pf.eval(`(() => { const e = document.getElementById('empty'); if (e && e.hidden) document.getElementById('new-chat').click(); return true; })()`); err != nil {
		return r, err
	}
	if _, err := pf.eval(`document.getElementById('mode-act').click(), true`); err != nil {
		return r, err
	}
	if err := pf.waitFor(5*time.Second, "Act mode", `document.getElementById('mode-act').getAttribute('aria-pressed') === 'true'`); err != nil {
		return r, err
	}
	prompt := t.prompt
	fr.reset()
	start := time.Now()
	if _, err := pf.eval(fmt.Sprintf(`(() => { const i = document.getElementById('input'); i.value = %q;
		document.getElementById('composer').requestSubmit(); return true; })()`, prompt)); err != nil {
		return r, err
	}
	tr, err := waitTrace(px, prompt, start, *turnTimeout)
	if err != nil {
		return r, err
	}
	r.seconds = time.Since(start).Seconds()
	time.Sleep(300 * time.Millisecond) // the page settles after the last action
	ok, err := benchkit.Eval[bool](ctx, `!!window.benchOK()`)
	if err != nil {
		// The tab left the page (a navigation): the condition cannot hold.
		ok, r.note = false, "page left"
	}
	r.end = tr.End
	if *verbose {
		for _, s := range tr.Steps {
			if s.Kind == "model" {
				fmt.Fprintf(os.Stderr, "  model: %d calls, text %q\n", s.ToolCalls, clip(s.Text, 300))
			} else {
				fmt.Fprintf(os.Stderr, "  %s %s → %q (error %v)\n", s.Tool, s.Arguments, clip(s.Result, 600), s.IsError)
			}
		}
		fmt.Fprintf(os.Stderr, "  end %s, page condition %v\n", tr.End, ok)
	}
	var final string
	for _, s := range tr.Steps {
		switch s.Kind {
		case "model":
			r.steps++
			if s.ToolCalls == 0 {
				final = s.Text
			}
		case "tool":
			r.tools++
			if s.Tool == "done" {
				if s.IsError && strings.Contains(s.Result, "done refused") {
					r.doneRefused++
				} else if !s.IsError {
					final = s.Result
				}
			}
		}
	}
	if tr.End == "loop" {
		r.loopStop = 1
	}
	r.in, r.out = tr.Usage.InputTokens, tr.Usage.OutputTokens
	r.nudges = fr.nudges()
	// An empty final text, or the scripted server's end of script, claims nothing.
	r.claim = (tr.End == "done" || tr.End == "answer") && strings.TrimSpace(final) != "" && final != scripted.FinishedText && !admitsFailure(final)
	if t.impossible {
		r.ok = (tr.End == "done" || tr.End == "answer") && admitsFailure(final)
		r.falseDone = r.claim
	} else {
		r.ok = ok
		r.falseDone = r.claim && !ok
	}
	return r, nil
}

// fromSettings fills the model flags from --settings and --provider, as the proxy reads them
// (agent.LoadSettings, with the environment's keys); flags given explicitly win.
func fromSettings(key *string) error {
	if *settingsDir == "" || *provider == "" {
		return fmt.Errorf("--settings and --provider go together")
	}
	st, err := agent.LoadSettings(*settingsDir, os.Getenv)
	if err != nil {
		return err
	}
	for _, p := range st.Providers {
		if p.Name != *provider {
			continue
		}
		base := p.BaseURL
		if base == "" && p.Kind == agent.KindAnthropic {
			base = "https://api.anthropic.com"
		}
		if *modelURL == "" {
			*modelURL = base
		}
		*modelAPI = p.Kind
		if *modelName == "" && len(p.Models) > 0 {
			*modelName = p.Models[0]
		}
		if *key == "" {
			*key = p.APIKey
		}
		if *inPrice == 0 && *outPrice == 0 {
			*inPrice, *outPrice = p.InputPrice, p.OutputPrice
		}
		return nil
	}
	return fmt.Errorf("--provider %q: no such provider in %s", *provider, filepath.Join(*settingsDir, agent.SettingsFile))
}

// waitTrace waits for the trace of the turn started at start with the person's text.
func waitTrace(px *benchkit.Proxy, text string, start time.Time, d time.Duration) (agent.TurnTrace, error) {
	deadline := time.Now().Add(d)
	var last error
	for {
		resp, err := http.Get("http://" + px.Addr + "/manager/traces.json")
		if err == nil {
			var chats []struct {
				Turns []agent.TurnTrace `json:"turns"`
			}
			err = json.NewDecoder(resp.Body).Decode(&chats)
			resp.Body.Close()
			for _, c := range chats {
				for _, t := range c.Turns {
					if t.UserText == text && !t.Started.Before(start.Add(-time.Second)) {
						return t, nil
					}
				}
			}
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			return agent.TurnTrace{}, fmt.Errorf("no trace of the turn after %v (last error: %v)", d, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// --- the recording front ---

// front is a reverse proxy in front of the model: it records the nudges the model was sent and,
// for a real model, sets the model name and the key.
type front struct {
	url   string
	srv   *http.Server
	mu    sync.Mutex
	nudge int // the most nudges seen in one request since reset
}

func (f *front) reset() {
	f.mu.Lock()
	f.nudge = 0
	f.mu.Unlock()
}

func (f *front) nudges() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nudge
}

func (f *front) close() { f.srv.Close() }

func startFront(target, model, api, key string) (*front, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--model-url %q: want an http or https address", target)
	}
	f := &front{}
	rp := &httputil.ReverseProxy{
		FlushInterval: -1,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = u.Scheme, u.Host, u.Host
			if key != "" {
				pr.Out.Header.Del("Authorization")
				pr.Out.Header.Del("x-api-key")
				if api == "anthropic" {
					pr.Out.Header.Set("x-api-key", key)
				} else {
					pr.Out.Header.Set("Authorization", "Bearer "+key)
				}
			}
		},
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := bytes.Count(body, []byte(nudgeMarker))
		f.mu.Lock()
		f.nudge = max(f.nudge, n)
		f.mu.Unlock()
		if model != "" {
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				m["model"] = model
				body, _ = json.Marshal(m)
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Del("Content-Length")
		rp.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(ln)
	f.url = "http://" + ln.Addr().String() + u.Path
	return f, nil
}

// --- the table ---

func printTable(rs []result, real bool) {
	fmt.Println("| model | task | success | claimed done | false done | done refused | end | steps | tool calls | loop nudges | loop stops | tokens in / out | cost | time |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	type total struct {
		runs, ok, claims, falseDone, refused, steps, tools, nudges, stops, in, out int
		secs                                                                       float64
	}
	var order []string
	totals := map[string]*total{}
	for _, r := range rs {
		end := r.end
		if r.note != "" {
			end += " (" + r.note + ")"
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %d | %s | %d | %d | %d | %d | %d / %d | %s | %.1f s |\n",
			r.model, r.task, yes(r.ok), yes(r.claim), yes(r.falseDone), r.doneRefused, end, r.steps, r.tools, r.nudges, r.loopStop,
			r.in, r.out, cost(r.in, r.out), r.seconds)
		t := totals[r.model]
		if t == nil {
			t = &total{}
			totals[r.model] = t
			order = append(order, r.model)
		}
		t.runs++
		t.ok += b2i(r.ok)
		t.claims += b2i(r.claim)
		t.falseDone += b2i(r.falseDone)
		t.refused += r.doneRefused
		t.steps += r.steps
		t.tools += r.tools
		t.nudges += r.nudges
		t.stops += r.loopStop
		t.in += r.in
		t.out += r.out
		t.secs += r.seconds
	}
	fmt.Println()
	fmt.Println("| model | runs | success rate | false done (of claims) | done refused | steps (mean) | tool calls | loop nudges | loop stops | tokens in / out | tokens per success | cost | time |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, m := range order {
		t := totals[m]
		per := "—"
		if t.ok > 0 {
			per = fmt.Sprint((t.in + t.out) / t.ok)
		}
		fmt.Printf("| %s | %d | %d/%d (%.0f%%) | %d of %d | %d | %d (%.1f) | %d | %d | %d | %d / %d | %s | %s | %.1f s |\n",
			m, t.runs, t.ok, t.runs, 100*float64(t.ok)/float64(t.runs), t.falseDone, t.claims, t.refused, t.steps,
			float64(t.steps)/float64(t.runs), t.tools, t.nudges, t.stops, t.in, t.out, per, cost(t.in, t.out), t.secs)
	}
	fmt.Println()
	if !real {
		fmt.Println("These figures are for the scripted personas only (agent/scripted; their tokens are approximate, a quarter of the characters): they check the measurement, not a model. " +
			"Figures for a real model need a provider: go run ./e2e/agentbench --model-url URL --model-api openai|anthropic --model NAME [--model-key-env VAR] [--input-price USD --output-price USD], or --settings DATADIR --provider NAME.")
	} else if *inPrice == 0 && *outPrice == 0 {
		fmt.Println("Cost needs --input-price and --output-price (USD per million tokens).")
	}
}

func cost(in, out int) string {
	if *inPrice == 0 && *outPrice == 0 {
		return "—"
	}
	return fmt.Sprintf("$%.4f", (float64(in)**inPrice+float64(out)**outPrice)/1e6)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
