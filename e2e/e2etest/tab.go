package e2etest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Default bounds for the waits of a Tab. They are timeouts with failure messages, never
// assertions about speed.
const (
	NavigateTimeout  = 30 * time.Second
	EvalTimeout      = 30 * time.Second
	ConnectedTimeout = 20 * time.Second
)

// Selectors of the page agent's launcher, which the agent appends to document.documentElement.
const (
	LauncherSelector  = `[data-remixproxy-launcher]`
	ConnectedSelector = `[data-remixproxy-launcher][data-remixproxy-state=connected]`
)

// The CSP watcher runs in an isolated world, so the page cannot see or disturb it, and reports
// each securitypolicyviolation event through a binding only that world has.
const (
	watchWorld   = "remixproxy-e2e"
	watchBinding = "__remixproxyE2EViolation"
	watchScript  = `document.addEventListener('securitypolicyviolation', (e) => {
	` + watchBinding + `(JSON.stringify({directive: e.effectiveDirective, blocked: e.blockedURI,
		disposition: e.disposition, sample: e.sample, source: e.sourceFile, line: e.lineNumber}));
}, true);`
)

// Problem is a console error, an uncaught exception, an error entry of the browser log, or a
// Content-Security-Policy violation, seen in a tab.
type Problem struct {
	// Kind is "console.error", "exception", "log.SOURCE" (e.g. "log.network",
	// "log.security") or "csp".
	Kind string
	Text string
	URL  string
}

func (p Problem) String() string {
	if p.URL != "" {
		return fmt.Sprintf("%s: %s (%s)", p.Kind, p.Text, p.URL)
	}
	return p.Kind + ": " + p.Text
}

// NewProblems returns the problems of got that want does not have (as a multiset, by kind and
// text): what the proxy added compared with the direct load of the same page.
func NewProblems(want, got []Problem) []Problem {
	seen := map[string]int{}
	for _, p := range want {
		seen[p.Kind+"\x00"+p.Text]++
	}
	var added []Problem
	for _, p := range got {
		k := p.Kind + "\x00" + p.Text
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		added = append(added, p)
	}
	return added
}

// Tab is one browser tab in a browser context of its own (own cookies, cache and service
// workers), recording the problems and console lines of its pages. Its methods fail the test
// that opened it on error.
type Tab struct {
	t   testing.TB
	c   *Chromium
	ctx context.Context

	// NavigateTimeout bounds each navigation; if zero, the package's NavigateTimeout.
	NavigateTimeout time.Duration

	mu       sync.Mutex
	problems []Problem
	console  []string
}

// NewTab opens a tab in a browser context of its own; it closes when the test ends.
func (c *Chromium) NewTab(t testing.TB) *Tab {
	t.Helper()
	return c.newTab(t)
}

// NewTabThrough opens a tab in a browser context of its own whose requests all go through the
// proxy p (Target.createBrowserContext's proxyServer), whatever the browser's own proxy. The
// browser must trust p's CA (see SharedBrowser). Tabs through different proxies in one
// Chromium let a benchmark compare modes without each mode carrying its own browser
// instance's bias.
func (c *Chromium) NewTabThrough(t testing.TB, p *Proxy) *Tab {
	t.Helper()
	return c.newTab(t, func(params *target.CreateBrowserContextParams) {
		params.ProxyServer = "http://" + p.Addr
	})
}

func (c *Chromium) newTab(t testing.TB, opts ...chromedp.CreateBrowserContextOption) *Tab {
	t.Helper()
	tab := &Tab{t: t, c: c}
	ctx, cancel := chromedp.NewContext(c.ctx, chromedp.WithNewBrowserContext(opts...), chromedp.WithListener(tab.onEvent))
	tab.ctx = ctx
	t.Cleanup(cancel)
	// The first Run attaches the tab and binds it to ctx, so it gets no deadline of its own.
	err := Within(startTimeout, func() error {
		return chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tt, runtime.AddBinding, runtime.AddBindingParams{Name: watchBinding, ExecutionContextName: watchWorld}); err != nil {
				return fmt.Errorf("adding the violation binding: %w", err)
			}
			_, err := cdp.Call(ctx, tt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchScript, WorldName: watchWorld})
			if err != nil {
				return fmt.Errorf("adding the violation watcher: %w", err)
			}
			return nil
		}))
	})
	if err != nil {
		t.Fatalf("%s browser: opening a tab: %v\nchromium output:\n%s", c.opts.Name, err, c.out)
	}
	return tab
}

// Context is the tab's chromedp context, for actions the helpers do not cover. Derive a
// deadline from it for each call.
func (tab *Tab) Context() context.Context { return tab.ctx }

// Browser is the Chromium the tab belongs to.
func (tab *Tab) Browser() *Chromium { return tab.c }

func (tab *Tab) onEvent(ev any) {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		text := consoleArgs(ev.Args)
		tab.console = append(tab.console, "console."+string(ev.Type)+": "+text)
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			tab.problems = append(tab.problems, Problem{Kind: "console." + string(ev.Type), Text: text})
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text += " " + d.Exception.Description
		}
		tab.console = append(tab.console, "exception: "+text)
		tab.problems = append(tab.problems, Problem{Kind: "exception", Text: text, URL: d.URL})
	case *log.EventEntryAdded:
		e := ev.Entry
		tab.console = append(tab.console, fmt.Sprintf("log.%s.%s: %s (%s)", e.Source, e.Level, e.Text, e.URL))
		if e.Level == log.EntryLevelError {
			tab.problems = append(tab.problems, Problem{Kind: "log." + string(e.Source), Text: e.Text, URL: e.URL})
		}
	case *page.EventJavascriptDialogOpening:
		// alert() and friends block the page until answered; answer them like a user closing
		// the dialog. (A listener must not send commands, so this runs on its own goroutine.)
		tab.console = append(tab.console, fmt.Sprintf("dialog.%s: %s", ev.Type, ev.Message))
		go func() {
			ctx, cancel := context.WithTimeout(tab.ctx, 5*time.Second)
			defer cancel()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	case *runtime.EventBindingCalled:
		if ev.Name != watchBinding {
			return
		}
		var v struct {
			Directive, Blocked, Disposition, Sample, Source string
			Line                                            int
		}
		if err := json.Unmarshal([]byte(ev.Payload), &v); err != nil {
			v.Sample = ev.Payload
		}
		text := fmt.Sprintf("%s violation of %s, blocked %q, sample %q", v.Disposition, v.Directive, v.Blocked, v.Sample)
		tab.console = append(tab.console, "csp: "+text)
		tab.problems = append(tab.problems, Problem{Kind: "csp", Text: text, URL: fmt.Sprintf("%s:%d", v.Source, v.Line)})
	}
}

func consoleArgs(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		switch {
		case a.Type == runtime.RemoteObjectTypeString:
			var s string
			if json.Unmarshal(a.Value, &s) == nil {
				parts = append(parts, s)
				continue
			}
			parts = append(parts, string(a.Value))
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		case a.UnserializableValue != "":
			parts = append(parts, string(a.UnserializableValue))
		default:
			parts = append(parts, a.Description)
		}
	}
	return strings.Join(parts, " ")
}

// Problems returns the problems seen since the last navigation started. It first runs a no-op
// in the page, so events the page emitted before the call have arrived.
func (tab *Tab) Problems() []Problem {
	tab.t.Helper()
	EvalE[bool](tab, `true`)
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return slices.Clone(tab.problems)
}

// ConsoleLog returns every console line, log entry and violation seen since the last navigation
// started, for failure messages.
func (tab *Tab) ConsoleLog() string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return strings.Join(tab.console, "\n")
}

func (tab *Tab) reset() {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	tab.problems = nil
	tab.console = nil
}

// Navigate loads url, waits for its load event, and returns the response to the document.
// Failing to load (a network error, not an HTTP status) fails the test.
func (tab *Tab) Navigate(url string) *network.Response {
	tab.t.Helper()
	resp, err := tab.NavigateErr(url)
	if err != nil {
		tab.t.Fatalf("%s browser: loading %s: %v\nconsole:\n%s\nproxy status: %s", tab.c.opts.Name, url, err, tab.ConsoleLog(), tab.c.status())
	}
	return resp
}

// NavigateErr is Navigate returning the error instead of failing the test.
func (tab *Tab) NavigateErr(url string) (*network.Response, error) {
	tab.reset()
	d := tab.NavigateTimeout
	if d == 0 {
		d = NavigateTimeout
	}
	ctx, cancel := context.WithTimeout(tab.ctx, d)
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(url))
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no load event within %v: %w", d, err)
	}
	return resp, err
}

// Reload reloads the page and waits for its load event.
func (tab *Tab) Reload() {
	tab.t.Helper()
	tab.reset()
	ctx, cancel := context.WithTimeout(tab.ctx, NavigateTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		tab.t.Fatalf("%s browser: reloading: %v\nconsole:\n%s", tab.c.opts.Name, err, tab.ConsoleLog())
	}
}

// Eval evaluates expr in the page's main world (awaiting a promise result) and decodes the
// result into T, failing the test on error.
func Eval[T any](tab *Tab, expr string) T {
	tab.t.Helper()
	return EvalWithin[T](tab, EvalTimeout, expr)
}

// EvalWithin is Eval with its own bound.
func EvalWithin[T any](tab *Tab, d time.Duration, expr string) T {
	tab.t.Helper()
	v, err := evalWithin[T](tab, d, expr)
	if err != nil {
		tab.t.Fatalf("%s browser: evaluating %s: %v\nconsole:\n%s", tab.c.opts.Name, oneLine(expr), err, tab.ConsoleLog())
	}
	return v
}

// EvalE is Eval returning the error.
func EvalE[T any](tab *Tab, expr string) (T, error) {
	return evalWithin[T](tab, EvalTimeout, expr)
}

func evalWithin[T any](tab *Tab, d time.Duration, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(tab.ctx, d)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// WaitFor polls the JavaScript expression cond until it is truthy, for at most d, and fails the
// test saying what was awaited otherwise. (chromedp.Poll compiles its predicate with new
// Function, which a strict CSP refuses, so the polling is done from here.)
func (tab *Tab) WaitFor(d time.Duration, what, cond string) {
	tab.t.Helper()
	if err := tab.waitFor(d, cond); err != nil {
		tab.t.Fatalf("%s browser: waiting for %s: %v\nconsole:\n%s", tab.c.opts.Name, what, err, tab.ConsoleLog())
	}
}

func (tab *Tab) waitFor(d time.Duration, cond string) error {
	deadline := time.Now().Add(d)
	expr := "!!(" + cond + ")"
	var last error
	for {
		ok, err := evalWithin[bool](tab, 5*time.Second, expr)
		if err == nil && ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			if last != nil {
				return fmt.Errorf("not true after %v (last error: %w)", d, last)
			}
			return fmt.Errorf("not true after %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitConnected waits until the injected page agent's launcher reports that it is connected to
// the proxy. On timeout it fails the test with the page's <head>, the launcher's state and the
// proxy's status.json.
func (tab *Tab) WaitConnected() {
	tab.t.Helper()
	if err := tab.waitFor(ConnectedTimeout, `document.querySelector('`+ConnectedSelector+`')`); err != nil {
		tab.t.Fatalf("%s browser: the page agent did not connect: %v\n%s", tab.c.opts.Name, err, tab.Diagnose())
	}
}

// WaitConnectedErr is WaitConnected with its own bound, returning the failure (with the
// diagnosis) instead of failing the test.
func (tab *Tab) WaitConnectedErr(d time.Duration) error {
	if err := tab.waitFor(d, `document.querySelector('`+ConnectedSelector+`')`); err != nil {
		return fmt.Errorf("the page agent did not connect: %w\n%s", err, tab.Diagnose())
	}
	return nil
}

// Diagnose describes the page for a failure message: URL, launcher state, <head>, console and
// the proxy's status.json.
func (tab *Tab) Diagnose() string {
	info, err := evalWithin[map[string]any](tab, 5*time.Second, `(() => {
		const l = document.querySelector('`+LauncherSelector+`');
		const head = document.head ? document.head.outerHTML : '(no head) ' + document.documentElement.outerHTML;
		return {url: location.href, title: document.title,
			launcher: l ? (l.getAttribute('data-remixproxy-state') || '(no state)') : '(no launcher element)',
			head: head.length > 6000 ? head.slice(0, 6000) + '…' : head};
	})()`)
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "page: (unreadable: %v)\n", err)
	} else {
		fmt.Fprintf(&b, "page: %v\ntitle: %v\nlauncher: %v\nhead:\n%v\n", info["url"], info["title"], info["launcher"], info["head"])
	}
	fmt.Fprintf(&b, "console:\n%s\nproxy status: %s", tab.ConsoleLog(), tab.c.status())
	return b.String()
}

// Connected reports whether the launcher is present and connected now.
func (tab *Tab) Connected() bool {
	tab.t.Helper()
	return Eval[bool](tab, `document.querySelector('`+ConnectedSelector+`') !== null`)
}

// HasLauncher reports whether the page agent's launcher element exists, in any state.
func (tab *Tab) HasLauncher() bool {
	tab.t.Helper()
	return Eval[bool](tab, `document.querySelector('`+LauncherSelector+`') !== null`)
}

// Title returns document.title.
func (tab *Tab) Title() string {
	tab.t.Helper()
	return Eval[string](tab, `document.title`)
}

// BodyText returns document.body.innerText ("" without a body).
func (tab *Tab) BodyText() string {
	tab.t.Helper()
	return Eval[string](tab, `document.body ? document.body.innerText : ''`)
}

// URL returns location.href.
func (tab *Tab) URL() string {
	tab.t.Helper()
	return Eval[string](tab, `location.href`)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
