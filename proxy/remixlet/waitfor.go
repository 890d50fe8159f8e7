package remixlet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/remixproxy/remixproxy/rewrite"
)

// dom.waitFor(selector, {timeout}): resolves with a handle to the first element matching the
// selector, once one appears. Its selector is checked as dom.query's, here (checkSelector: no
// test of what is typed into a field, rewrite.CheckFieldSelector) and again in the page agent
// each time it tries it (opQuery: the same rule, and the attributes the page was seen copying a
// secret into, rx_mirrors.js). The page agent watches the page with a
// MutationObserver (rx_wait.js) and answers the op when an element matches or its timeout
// ends; the relay here waits that long and a little more (waitForRelayMargin).

// Timeouts of dom.waitFor, in milliseconds.
const (
	waitForDefaultMS = 10_000
	waitForMaxMS     = 60_000
	// waitForMaxPending is how many dom.waitFor calls of one remixlet may wait on one page at
	// once; the page agent checks every pending selector after each page change, so this bounds
	// its work.
	waitForMaxPending = 32
)

// waitForRelayMargin is how much longer than its timeout the relay waits for the page agent's
// answer to a dom.waitFor, which comes from the page's own timer.
const waitForRelayMargin = 3 * time.Second

// checkSelector applies the static checks of a selector argument (dom.query, dom.queryAll,
// dom.waitFor).
func checkSelector(args []json.RawMessage) error {
	sel, err := stringArg(args, 0, "selector", maxSelectorLen)
	if err != nil {
		return err
	}
	if strings.TrimSpace(sel) == "" {
		return errors.New("the selector is empty")
	}
	// No selector may test what is typed into a field: the value attribute, a field-state
	// pseudo-class, or the value of an attribute a page may copy it into (the stylesheets'
	// rule; the page agent repeats it).
	return rewrite.CheckFieldSelector(sel)
}

// checkWaitFor checks a dom.waitFor call and writes its options out in full: the page agent gets
// [selector, {"timeout": N}] with N in milliseconds, and call.wait is N.
func checkWaitFor(call *domCall) error {
	args := call.args
	if err := checkSelector(args); err != nil {
		return err
	}
	ms := int64(waitForDefaultMS)
	if len(args) == 2 && string(bytes.TrimSpace(args[1])) != "null" {
		var opts map[string]json.RawMessage
		d := json.NewDecoder(bytes.NewReader(args[1]))
		if err := d.Decode(&opts); err != nil || opts == nil {
			return errors.New(`argument 2 (options) must be an object such as {"timeout": 5000}`)
		}
		for k := range opts {
			if k != "timeout" {
				return fmt.Errorf("argument 2 (options): unknown option %q (the only option is timeout)", k)
			}
		}
		if raw, ok := opts["timeout"]; ok && string(raw) != "null" {
			var f float64
			if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || f < 1 || f > waitForMaxMS {
				return fmt.Errorf("the timeout must be a number of milliseconds from 1 to %d, got %s", waitForMaxMS, raw)
			}
			ms = int64(f)
		}
	}
	opts, _ := json.Marshal(map[string]int64{"timeout": ms})
	call.args = []json.RawMessage{args[0], opts}
	call.wait = time.Duration(ms) * time.Millisecond
	return nil
}

// waitSlot takes one of the remixlet's pending dom.waitFor places on its page, or says why not;
// release gives it back.
func (h *remixletHost) waitSlot() (release func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waits >= waitForMaxPending {
		return nil, fmt.Errorf("more than %d dom.waitFor calls are waiting on this page; await some first", waitForMaxPending)
	}
	h.waits++
	return func() {
		h.mu.Lock()
		h.waits--
		h.mu.Unlock()
	}, nil
}
