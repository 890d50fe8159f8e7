package panel

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestManagerTracesRender: the Traces pages render a run's words, tool results and addresses
// escaped, with no script, and the compare form is a plain GET form.
func TestManagerTracesRender(t *testing.T) {
	const evil = `<script>alert(1)</script>`
	run := TraceRunView{ID: 7, Started: time.Unix(1_700_000_000, 0).UTC(), ChatID: "ch_1", ChatTitle: evil, PageURL: "https://a.test/?q=" + evil,
		Mode: "act", Provider: "p", Model: "m", UserText: evil, Duration: "1.5 s", Steps: 1, Outcome: "answer", OK: true,
		Tools: []string{"click"},
		Timeline: []TraceEventView{
			{Seq: 1, Kind: "model", Name: "m", At: "+0 ms", Duration: "900 ms", Input: evil, Output: evil},
			{Seq: 2, Kind: "tool", Name: "click", At: "+900 ms", Duration: "10 ms", IsError: true, URLBefore: "https://a.test/1", URLAfter: "https://a.test/2", URLChanged: true, Input: evil, Output: evil},
		}}
	base := ManagerBase{Token: "tok"}
	pages := map[string]func(*bytes.Buffer) error{
		"list": func(b *bytes.Buffer) error {
			return RenderManagerTraces(b, ManagerTraces{ManagerBase: base, Runs: []TraceRunView{run}, Max: 200, A: 7})
		},
		"run": func(b *bytes.Buffer) error { return RenderManagerTrace(b, ManagerTrace{ManagerBase: base, Run: run}) },
		"compare": func(b *bytes.Buffer) error {
			return RenderManagerTraceCompare(b, ManagerTraceCompare{ManagerBase: base, A: run, B: run, Rows: []CompareRow{{Label: "Outcome", A: evil, B: "x", Differs: true}}})
		},
		"empty": func(b *bytes.Buffer) error { return RenderManagerTraces(b, ManagerTraces{ManagerBase: base}) },
	}
	for name, render := range pages {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		page := b.String()
		// The layout's one script (the arming of the buttons) is the only one.
		if strings.Contains(strings.Replace(page, `<script src="/manager/arm.js"></script>`, "", 1), "<script") {
			t.Errorf("%s: a <script> got through", name)
		}
		if !strings.Contains(page, `href="/manager/traces">Traces</a>`) {
			t.Errorf("%s: no Traces link in the nav", name)
		}
		switch name {
		case "list":
			for _, want := range []string{`<form method="get" action="/manager/traces/compare">`, `name="a" value="7" aria-label="Compare run 7 as A" checked`,
				`action="/manager/traces/delete"`, `name="csrf" value="tok"`, "Recording is off", "/manager/traces/export.json"} {
				if !strings.Contains(page, want) {
					t.Errorf("list lacks %q", want)
				}
			}
		case "run":
			for _, want := range []string{"<details>", "&#43;900 ms", "page changed", "https://a.test/2", "/manager/traces/7/export.json"} {
				if !strings.Contains(page, want) {
					t.Errorf("run page lacks %q", want)
				}
			}
		case "compare":
			if !strings.Contains(page, `class="differs"`) || strings.Count(page, `<ol class="timeline">`) != 2 {
				t.Error("the comparison lacks its marked row or one of the timelines")
			}
		}
	}
}
