package remixlet

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
)

// TestCheckWaitFor: dom.waitFor's selector is checked as dom.query's, its options are only a
// timeout within bounds, and the page agent gets them written out in full.
func TestCheckWaitFor(t *testing.T) {
	pol := testPolicy(t, "https://shop.test/", "")
	tests := []struct {
		name     string
		args     string
		wantArgs string // the args relayed, when allowed
		wait     time.Duration
		refused  string
	}{
		{"selector only: the default timeout", `["#feed"]`, `["#feed",{"timeout":10000}]`, 10 * time.Second, ""},
		{"null options", `["#feed", null]`, `["#feed",{"timeout":10000}]`, 10 * time.Second, ""},
		{"a timeout", `["#feed", {"timeout": 2500}]`, `["#feed",{"timeout":2500}]`, 2500 * time.Millisecond, ""},
		{"a fractional timeout is cut to whole milliseconds", `["#feed", {"timeout": 1.9}]`, `["#feed",{"timeout":1}]`, time.Millisecond, ""},
		{"the maximum", `["#feed", {"timeout": 60000}]`, `["#feed",{"timeout":60000}]`, time.Minute, ""},
		{"empty options", `["#feed", {}]`, `["#feed",{"timeout":10000}]`, 10 * time.Second, ""},
		{"over the maximum", `["#feed", {"timeout": 60001}]`, "", 0, "from 1 to 60000"},
		{"zero", `["#feed", {"timeout": 0}]`, "", 0, "from 1 to 60000"},
		{"negative", `["#feed", {"timeout": -5}]`, "", 0, "from 1 to 60000"},
		{"a string timeout", `["#feed", {"timeout": "5000"}]`, "", 0, "from 1 to 60000"},
		{"an unknown option", `["#feed", {"timeout": 5, "within": {"$h": 1}}]`, "", 0, `unknown option "within"`},
		{"options not an object", `["#feed", 5000]`, "", 0, "must be an object"},
		{"options an array", `["#feed", [5000]]`, "", 0, "must be an object"},
		{"empty selector, as dom.query", `["  "]`, "", 0, "the selector is empty"},
		{"selector not a string, as dom.query", `[{"$h": 1}]`, "", 0, "argument 1 (selector) must be a string"},
		{"selector too long, as dom.query", `["` + strings.Repeat("a", 1025) + `"]`, "", 0, "more than 1024"},
		{"NUL in the selector, as dom.query", `["a\u0000b"]`, "", 0, "not valid text"},
		{"too many arguments", `["a", {}, 3]`, "", 0, "takes 1 to 2 arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := checkDOMCall(pol, "waitFor", json.RawMessage(tt.args))
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("got %v, want a refusal containing %q", err, tt.refused)
				}
				if strings.Contains(tt.name, "as dom.query") {
					if _, qerr := checkDOMCall(pol, "query", json.RawMessage(tt.args)); qerr == nil || qerr.Error() != err.Error() {
						t.Errorf("dom.query says %v, dom.waitFor %v: want the same words", qerr, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want it allowed", err)
			}
			got, _ := json.Marshal(call.args)
			if string(got) != tt.wantArgs {
				t.Errorf("relayed args %s, want %s", got, tt.wantArgs)
			}
			if call.wait != tt.wait {
				t.Errorf("wait %v, want %v", call.wait, tt.wait)
			}
		})
	}
}

// TestQuerySelectorsRelayDataValues: the relay passes dom.query/queryAll/waitFor selectors that
// compare data-* values to the page agent, which refuses them once a secret was typed on the page
// (datasel7); other attributes outside the comparable list are refused here. A stylesheet piece
// comparing a data-* value is relayed too, as written and as its own copy: the page agent drops
// the first at the first key of a secret (secret8, OPEN-ITEMS 120).
func TestQuerySelectorsRelayDataValues(t *testing.T) {
	pol := testPolicy(t, "https://shop.test/", "")
	for _, method := range []string{"query", "queryAll", "waitFor"} {
		for _, sel := range []string{`[data-state=\"open\"]`, `[data-side^=bot] > [data-orientation=vertical]`} {
			if _, err := checkDOMCall(pol, method, json.RawMessage(`["`+sel+`"]`)); err != nil {
				t.Errorf("dom.%s(%s): %v, want it relayed", method, sel, err)
			}
		}
		if _, err := checkDOMCall(pol, method, json.RawMessage(`["[aria-valuenow=\"3\"]"]`)); err == nil || !strings.Contains(err.Error(), "compare the value of attribute aria-valuenow") {
			t.Errorf("dom.%s on aria-valuenow: %v, want it refused", method, err)
		}
	}
	call, err := checkDOMCall(pol, "addStyle", json.RawMessage(`["[data-state=\"open\"] { color: red }"]`))
	got, _ := json.Marshal(call.args)
	if want := `["[data-state=\"open\"] { color: red }","[data-state=\"open\"]:where([data-remixlet-own]){ color: red }"]`; err != nil || string(got) != want {
		t.Errorf("addStyle on a data-* value: %v, relayed %s, want %s", err, got, want)
	}
	if _, err := checkDOMCall(pol, "addStyle", json.RawMessage(`["[aria-valuenow=\"3\"] { color: red }"]`)); err == nil || !strings.Contains(err.Error(), "compare the value of attribute aria-valuenow") {
		t.Errorf("addStyle on aria-valuenow: %v, want it refused", err)
	}
}

// TestWaitForRelay: the relay waits for a dom.waitFor's answer as long as its timeout (longer
// than other ops), a remixlet has at most waitForMaxPending waits on a page, and a slot is given
// back when its wait ends.
func TestWaitForRelay(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "waits", `"https://shop.test/*"`, ``, rxTestScript)
	h, f := newTestHost(t, st, rx, "https://shop.test/")
	f.run.r.opTimeout = 50 * time.Millisecond
	var mu sync.Mutex
	held := map[uint64]bool{}
	release := make(chan struct{})
	f.answer = func(op panel.Op) panel.Result {
		if op.Op == "waitFor" && strings.Contains(string(op.Args[0].(json.RawMessage)), "slow") {
			mu.Lock()
			held[op.ID] = true
			mu.Unlock()
			<-release // the page answers later than opTimeout, within the wait's timeout
		}
		return panel.Result{Ok: true, Value: map[string]int{"$h": 7}}
	}
	done := make(chan error, 1)
	go func() {
		res, err := h.Call(ctx, "dom", "waitFor", json.RawMessage(`[".slow", {"timeout": 1000}]`))
		if err == nil && string(res) != `{"$h":7}` {
			err = &jsonErr{string(res)}
		}
		done <- err
	}()
	waitFor(t, "the waitFor op to reach the page", func() bool { mu.Lock(); defer mu.Unlock(); return len(held) == 1 })
	time.Sleep(3 * f.run.r.opTimeout) // past what any other op may take
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("a dom.waitFor answered after the usual op timeout, within its own: %v", err)
	}

	// The pending bound: waits that never end hold their slots.
	f.answer = nil
	f.run.pc.send = func(context.Context, any) error { return nil } // the page never answers
	var wg sync.WaitGroup
	for range waitForMaxPending {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.Call(ctx, "dom", "waitFor", json.RawMessage(`[".never", {"timeout": 1}]`))
		}()
	}
	waitFor(t, "every slot to be taken", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.waits == waitForMaxPending })
	_, err := h.Call(ctx, "dom", "waitFor", json.RawMessage(`[".one-more"]`))
	if err == nil || !strings.Contains(err.Error(), "more than 32 dom.waitFor calls are waiting") {
		t.Fatalf("a wait over the bound: got %v", err)
	}
	wg.Wait() // each ends when the relay gives up (1 ms + the margin)
	h.mu.Lock()
	n := h.waits
	h.mu.Unlock()
	if n != 0 {
		t.Errorf("%d slots still taken after every wait ended", n)
	}
}

type jsonErr struct{ got string }

func (e *jsonErr) Error() string { return "answered " + e.got }
