package e2etest

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A synthetic trace: renderer 10 (main thread 10) loads the page; renderer 20 is another
// document's; the browser's main thread works too.
const testTrace = `[
{"name":"thread_name","ph":"M","pid":10,"tid":10,"args":{"name":"CrRendererMain"}},
{"name":"thread_name","ph":"M","pid":20,"tid":20,"args":{"name":"CrRendererMain"}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"CrBrowserMain"}},
{"name":"RunTask","ph":"X","pid":10,"tid":10,"ts":500,"dur":1000,"tdur":1000},
{"name":"navigationStart","ph":"R","pid":10,"tid":10,"ts":1000,"args":{"frame":"F","data":{"documentLoaderURL":"https://a.test/","isOutermostMainFrame":true}}},
{"name":"navigationStart","ph":"R","pid":10,"tid":10,"ts":1001,"args":{"frame":"F","data":{"documentLoaderURL":"","isOutermostMainFrame":true}}},
{"name":"RunTask","ph":"X","pid":10,"tid":10,"ts":2000,"dur":4000,"tdur":3000},
{"name":"EvaluateScript","ph":"X","pid":10,"tid":10,"ts":2100,"dur":2000,"tdur":1500,"args":{"data":{"url":"https://remix.proxy/agent/x.js"}}},
{"name":"FunctionCall","ph":"X","pid":10,"tid":10,"ts":2200,"dur":100,"tdur":100,"args":{"data":{"url":"https://remix.proxy/agent/x.js"}}},
{"name":"EvaluateScript","ph":"X","pid":10,"tid":10,"ts":4500,"dur":500,"tdur":500,"args":{"data":{"url":"https://a.test/"}}},
{"name":"RunTask","ph":"X","pid":20,"tid":20,"ts":3000,"dur":9000,"tdur":9000},
{"name":"RunTask","ph":"X","pid":1,"tid":1,"ts":3000,"dur":9000,"tdur":9000},
{"name":"RunTask","ph":"X","pid":10,"tid":10,"ts":7000,"dur":2000},
{"name":"MarkLoad","ph":"I","pid":20,"tid":20,"ts":7500,"args":{"data":{"frame":"F"}}},
{"name":"MarkLoad","ph":"I","pid":10,"tid":10,"ts":8000,"args":{"data":{"frame":"F"}}},
{"name":"MarkLoad","ph":"I","pid":10,"tid":10,"ts":8500,"args":{"data":{"frame":"child"}}},
{"name":"RunTask","ph":"X","pid":10,"tid":10,"ts":9500,"dur":1000,"tdur":800},
{"name":"FunctionCall","ph":"X","pid":10,"tid":10,"ts":9600,"dur":600,"tdur":400,"args":{"data":{"url":"https://remix.proxy/agent/x.js"}}}
]`

func TestReadMainThread(t *testing.T) {
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(testTrace), &raw); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMainThread(raw, "https://a.test/", "https://remix.proxy/agent/")
	if err != nil {
		t.Fatal(err)
	}
	// Before the load: the half of the task from 500 after navigationStart (0.5 ms), the task at
	// 2000 (3 ms of thread), half of the task across the load mark (no tdur: 1 ms of its 2 ms).
	// After: the other half (1 ms) and the last task (0.8 ms). The other renderer, the browser
	// and the child frame's load are not this document's.
	want := MainThread{BeforeLoad: 0.5 + 3 + 1, AfterLoad: 1 + 0.8, ScriptBeforeLoad: 1.5, ScriptAfterLoad: 0.4}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(got.BeforeLoad, want.BeforeLoad) || !near(got.AfterLoad, want.AfterLoad) || !near(got.ScriptBeforeLoad, want.ScriptBeforeLoad) || !near(got.ScriptAfterLoad, want.ScriptAfterLoad) {
		t.Errorf("ReadMainThread = %+v, want %+v", got, want)
	}

	if _, err := ReadMainThread(raw, "https://b.test/", ""); err == nil || !strings.Contains(err.Error(), "no navigationStart of https://b.test/") {
		t.Errorf("a page the trace does not hold: err = %v, want one naming its navigationStart", err)
	}
	var noLoad []json.RawMessage
	for _, r := range raw {
		if !strings.Contains(string(r), `"MarkLoad"`) {
			noLoad = append(noLoad, r)
		}
	}
	if _, err := ReadMainThread(noLoad, "https://a.test/", ""); err == nil || !strings.Contains(err.Error(), "no load event") {
		t.Errorf("a trace without the load event: err = %v, want one naming it", err)
	}
	if _, err := ReadMainThread([]json.RawMessage{json.RawMessage(`{"name":`)}, "https://a.test/", ""); err == nil {
		t.Error("a broken event: no error")
	}
}
