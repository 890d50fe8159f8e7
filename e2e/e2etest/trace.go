package e2etest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// traceCategories are what LoadTrace reads: the renderer's tasks and scripts
// (devtools.timeline, in thread time), the document's navigationStart (blink.user_timing) and
// the names of the threads (__metadata). Nothing else, to keep the tracing's own cost small.
var traceCategories = []string{"disabled-by-default-devtools.timeline", "devtools.timeline", "blink.user_timing", "__metadata"}

// MainThread is what the renderer's main thread did for one traced navigation, in thread time
// (ms, the CPU the thread got, not how long the shared machine kept it waiting), from the
// document's navigationStart: all its tasks and the scripts from one URL prefix, before the
// document's load event and after it until the trace ended.
type MainThread struct {
	BeforeLoad, AfterLoad             float64
	ScriptBeforeLoad, ScriptAfterLoad float64
}

// TraceLoad traces the browser while load runs (a navigation of the tab to pageURL and whatever
// waits follow it) and reads the renderer main thread's work for that document from the trace:
// see MainThread and ReadMainThread. scriptPrefix names the scripts to count on their own (e.g.
// the page agent's URL prefix; inline scripts have the page's URL and are not counted).
func (tab *Tab) TraceLoad(pageURL, scriptPrefix string, load func() error) (MainThread, error) {
	var mu sync.Mutex
	var events []json.RawMessage
	complete := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(tab.ctx)
	defer cancel()
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			defer mu.Unlock()
			for _, v := range ev.Value {
				events = append(events, append(json.RawMessage(nil), v...))
			}
		case *tracing.EventTracingComplete:
			select {
			case complete <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		return MainThread{}, fmt.Errorf("listening to the trace: %w", err)
	}
	call := func(what string, f func(ctx context.Context, tt *chromedp.Target) error) error {
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		if err := chromedp.Do(cctx, chromedp.Func(f)); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	err = call("starting the trace", func(ctx context.Context, tt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tt, tracing.Start, tracing.StartParams{
			TransferMode: tracing.StartTransferModeReportEvents,
			TraceConfig:  &tracing.TraceConfig{IncludedCategories: traceCategories},
		})
		return err
	})
	if err != nil {
		return MainThread{}, err
	}
	loadErr := load()
	err = call("ending the trace", func(ctx context.Context, tt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tt, tracing.End, cdp.Empty{})
		return err
	})
	if err != nil {
		return MainThread{}, errors.Join(loadErr, err)
	}
	select {
	case <-complete:
	case <-time.After(30 * time.Second):
		return MainThread{}, errors.Join(loadErr, errors.New("reading the trace: no Tracing.tracingComplete within 30s"))
	}
	if loadErr != nil {
		return MainThread{}, loadErr
	}
	mu.Lock()
	defer mu.Unlock()
	return ReadMainThread(events, pageURL, scriptPrefix)
}

// traceEvent is the part of a Chrome trace event ReadMainThread reads.
type traceEvent struct {
	Name string  `json:"name"`
	Ph   string  `json:"ph"`
	Ts   float64 `json:"ts"`   // µs
	Dur  float64 `json:"dur"`  // µs, wall clock
	Tdur float64 `json:"tdur"` // µs, thread time
	Pid  int     `json:"pid"`
	Tid  int     `json:"tid"`
	Args struct {
		Name  string `json:"name"`  // thread_name metadata
		Frame string `json:"frame"` // navigationStart
		Data  struct {
			DocumentLoaderURL    string `json:"documentLoaderURL"`
			IsOutermostMainFrame bool   `json:"isOutermostMainFrame"`
			Frame                string `json:"frame"`
			URL                  string `json:"url"`
		} `json:"data"`
	} `json:"args"`
}

// ReadMainThread reads, from one trace's events, the renderer main thread's work for the
// document pageURL: the main frame's navigationStart with that URL on a CrRendererMain thread
// starts it, the frame's MarkLoad (the load event's end) splits it. A task running across
// either mark counts in proportion. Scripts are EvaluateScript and FunctionCall events whose
// URL starts with scriptPrefix, not nested in one already counted.
func ReadMainThread(raw []json.RawMessage, pageURL, scriptPrefix string) (MainThread, error) {
	type thread struct{ pid, tid int }
	var events []traceEvent
	mains := map[thread]bool{}
	for _, r := range raw {
		var e traceEvent
		if err := json.Unmarshal(r, &e); err != nil {
			return MainThread{}, fmt.Errorf("reading the trace: an event: %w", err)
		}
		if e.Name == "thread_name" && e.Args.Name == "CrRendererMain" {
			mains[thread{e.Pid, e.Tid}] = true
		}
		events = append(events, e)
	}
	slices.SortStableFunc(events, func(a, b traceEvent) int {
		switch {
		case a.Ts < b.Ts:
			return -1
		case a.Ts > b.Ts:
			return 1
		}
		return 0
	})
	var main thread
	var start float64
	var frame string
	for _, e := range events {
		if e.Name == "navigationStart" && e.Args.Data.DocumentLoaderURL == pageURL && e.Args.Data.IsOutermostMainFrame && mains[thread{e.Pid, e.Tid}] {
			main, start, frame = thread{e.Pid, e.Tid}, e.Ts, e.Args.Frame
		}
	}
	if frame == "" {
		return MainThread{}, fmt.Errorf("reading the trace: no navigationStart of %s on a renderer's main thread", pageURL)
	}
	load := -1.0
	for _, e := range events {
		if e.Name == "MarkLoad" && (thread{e.Pid, e.Tid}) == main && e.Args.Data.Frame == frame && e.Ts > start {
			load = e.Ts
			break
		}
	}
	if load < 0 {
		return MainThread{}, fmt.Errorf("reading the trace: no load event of %s after its navigationStart", pageURL)
	}
	var m MainThread
	// split adds an event's thread time to before and after, each in proportion to the part of
	// its wall-clock span on that side of the load mark (and after start).
	split := func(e traceEvent, before, after *float64) {
		cpu := e.Tdur
		if cpu == 0 {
			cpu = e.Dur
		}
		from, to := max(e.Ts, start), e.Ts+e.Dur
		if e.Dur <= 0 || to <= from {
			return
		}
		part := func(a, b float64) float64 { return cpu * max(0, min(b, to)-max(a, from)) / e.Dur / 1000 }
		*before += part(start, load)
		*after += part(load, to)
	}
	scriptEnd := 0.0
	for _, e := range events {
		if (thread{e.Pid, e.Tid}) != main || e.Ph != "X" {
			continue
		}
		switch e.Name {
		case "RunTask":
			split(e, &m.BeforeLoad, &m.AfterLoad)
		case "EvaluateScript", "FunctionCall":
			if scriptPrefix == "" || !strings.HasPrefix(e.Args.Data.URL, scriptPrefix) || e.Ts < scriptEnd {
				continue
			}
			scriptEnd = e.Ts + e.Dur
			split(e, &m.ScriptBeforeLoad, &m.ScriptAfterLoad)
		}
	}
	return m, nil
}
