package sandbox

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// DOMMethods is the allow-list of dom.* calls, relayed to the page agent through the Host. It
// must equal the dom namespace of api.d.ts (a test checks).
var DOMMethods = []string{
	"query", "queryAll", "waitFor", "text", "attr", "value", "rect", "style",
	"create", "setText", "setAttr", "addClass", "removeClass", "setStyle",
	"insert", "remove", "clone", "hide", "show", "on", "click", "focus",
	"scrollIntoView", "addStyle", "setHTML",
}

// RMXMethods is the allow-list of rmx.* functions; storage calls are "storage.NAME". It must
// equal the rmx namespace of api.d.ts (a test checks). rmx.log runs locally, rmx.keep registers
// locally and tells the Host; the others are Host calls.
var RMXMethods = []string{"log", "keep", "page", "storage.get", "storage.set", "storage.remove", "storage.keys", "storage.onChange",
	"fetch", "network.responses", "network.onResponse",
	"clipboard.write", "notify", "menu.add", "menu.remove",
	"schedule.every", "schedule.at", "schedule.cancel", "onMessage"}

// RMXProperties are the rmx.* values that are not functions.
var RMXProperties = []string{"version"}

// listenerArgs maps the calls that take a function ("ns.method") to the argument index it is
// at. The function stays in the runtime; it crosses as {"$listener": N}, and the Host delivers
// events for it with Dispatch (dom.on events, menu commands, queued messages, storage changes).
var listenerArgs = map[string]int{"dom.on": 2, "rmx.menu.add": 2, "rmx.onMessage": 0, "rmx.storage.onChange": 0, "rmx.network.onResponse": 1}

// Limits on what one keep may register.
const (
	maxKeeps       = 100
	maxKeepNameLen = 100
	maxJSONDepth   = 32
)

// keep is one rmx.keep registration.
type keep struct {
	name          string
	check, repair goja.Callable
	repairs       rateWindow
	looping       bool
}

// rtTimer is one pending setTimeout or setInterval.
type rtTimer struct {
	t        *time.Timer
	fn       goja.Callable
	args     []goja.Value
	interval time.Duration // 0 for setTimeout
}

// bind installs console, the timers, queueMicrotask, dom and rmx.
func (r *Runtime) bind() error {
	vm := r.vm
	g := vm.GlobalObject()
	def := func(o *goja.Object, name string, v any) error {
		if err := o.DefineDataProperty(name, vm.ToValue(v), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return fmt.Errorf("binding %s: %w", name, err)
		}
		return nil
	}

	console := vm.NewObject()
	for _, m := range []struct{ name, level string }{
		{"log", "info"}, {"info", "info"}, {"warn", "warn"}, {"error", "error"}, {"debug", "debug"},
	} {
		level := m.level
		if err := def(console, m.name, func(c goja.FunctionCall) goja.Value {
			r.logLine(level, r.format(c.Arguments), false)
			return goja.Undefined()
		}); err != nil {
			return err
		}
	}

	dom := vm.NewObject()
	for _, name := range DOMMethods {
		if err := def(dom, name, r.hostMethod("dom", name)); err != nil {
			return err
		}
	}

	rmx := vm.NewObject()
	// Dotted names ("storage.get", "network.responses") are methods of a nested namespace
	// object, rmx.storage, rmx.network, made on first use and frozen with the rest.
	nested := map[string]*goja.Object{"storage": vm.NewObject()}
	namespaces := []string{"storage"}
	for _, name := range RMXMethods {
		var err error
		ns, method, dotted := strings.Cut(name, ".")
		switch {
		case name == "log":
			err = def(rmx, name, func(c goja.FunctionCall) goja.Value {
				r.logLine("info", r.format(c.Arguments), false)
				return goja.Undefined()
			})
		case name == "keep":
			err = def(rmx, name, r.keepBinding)
		case dotted:
			o, ok := nested[ns]
			if !ok {
				o = vm.NewObject()
				nested[ns] = o
				namespaces = append(namespaces, ns)
			}
			err = def(o, method, r.hostMethod("rmx", name))
		default:
			err = def(rmx, name, r.hostMethod("rmx", name))
		}
		if err != nil {
			return err
		}
	}
	frozen := []*goja.Object{console, dom, rmx}
	for _, ns := range namespaces {
		if err := def(rmx, ns, nested[ns]); err != nil {
			return err
		}
		frozen = append(frozen, nested[ns])
	}
	if err := def(rmx, "version", APIVersion); err != nil {
		return err
	}
	for _, o := range frozen {
		if _, err := r.in.freeze(goja.Undefined(), o); err != nil {
			return fmt.Errorf("freezing bindings: %w", err)
		}
	}

	for name, v := range map[string]any{
		"console":        console,
		"dom":            dom,
		"rmx":            rmx,
		"setTimeout":     r.setTimer(false),
		"setInterval":    r.setTimer(true),
		"clearTimeout":   r.clearTimer,
		"clearInterval":  r.clearTimer,
		"queueMicrotask": r.queueMicrotask,
	} {
		if err := def(g, name, v); err != nil {
			return err
		}
	}
	return nil
}

// refuse counts a refusal, logs it, stops the runtime once MaxRefusals is reached, and returns
// the RangeError to throw.
func (r *Runtime) refuse(format string, args ...any) *goja.Object {
	msg := fmt.Sprintf(format, args...)
	r.refusals++
	r.logLine("warn", "refused: "+msg, false)
	if r.refusals >= r.lim.MaxRefusals {
		r.kill(fmt.Sprintf("flood: %d calls or timers refused (last: %s)", r.refusals, msg))
	}
	return r.newError(r.in.rangeErrCtor, msg)
}

// hostMethod returns the native function for ns.method: it checks the limits, exports the
// arguments to JSON and returns a Promise settled when the Host answers.
func (r *Runtime) hostMethod(ns, method string) func(goja.FunctionCall) goja.Value {
	full := ns + "." + method
	return func(c goja.FunctionCall) goja.Value {
		args := make([]any, len(c.Arguments))
		budget := r.lim.MaxMessageBytes
		for i, a := range c.Arguments {
			if idx, ok := listenerArgs[full]; ok && idx == i {
				fn, ok := goja.AssertFunction(a)
				if !ok {
					panic(r.newError(r.in.typeErrCtor, fmt.Sprintf("%s: argument %d must be a function", full, i+1)))
				}
				r.nextTimer++ // listener ids share the timer counter; both are only unique per runtime
				id := r.nextTimer
				r.listeners[id] = fn
				args[i] = map[string]int64{"$listener": id}
				continue
			}
			v, err := r.export(a, 0, &budget)
			if err != nil {
				if err == errTooLarge {
					panic(r.refuse("%s: arguments are larger than %d bytes", full, r.lim.MaxMessageBytes))
				}
				panic(r.newError(r.in.typeErrCtor, fmt.Sprintf("%s: argument %d %v; only JSON data (strings, numbers, booleans, null, arrays and plain objects) can be passed", full, i+1, err)))
			}
			args[i] = v
		}
		return r.hostCall(ns, method, args)
	}
}

// hostCall sends one call to the Host under the pending and rate limits.
func (r *Runtime) hostCall(ns, method string, args []any) goja.Value {
	full := ns + "." + method
	if r.pendingCalls >= r.lim.MaxPendingCalls {
		panic(r.refuse("%s: more than %d dom/rmx calls waiting for an answer", full, r.lim.MaxPendingCalls))
	}
	if !r.callRate.allow(time.Now(), r.lim.MaxCallsPerSecond) {
		panic(r.refuse("%s: more than %d dom/rmx calls in one second", full, r.lim.MaxCallsPerSecond))
	}
	if args == nil {
		args = []any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		panic(r.newError(r.in.typeErrCtor, fmt.Sprintf("%s: encoding arguments: %v", full, err)))
	}
	if len(raw) > r.lim.MaxMessageBytes {
		panic(r.refuse("%s: arguments are larger than %d bytes", full, r.lim.MaxMessageBytes))
	}
	p, resolve, reject := r.vm.NewPromise()
	host := r.cfg.Host
	if host == nil {
		_ = reject(r.newError(r.in.errorCtor, full+" is not available: this runtime has no host"))
		return r.vm.ToValue(p)
	}
	r.pendingCalls++
	ctx := r.ctx
	go func() {
		res, err := host.Call(ctx, ns, method, raw)
		r.enqueue(task{"answer to " + full, func() {
			r.pendingCalls--
			if err != nil {
				_ = reject(r.newError(r.in.errorCtor, fmt.Sprintf("%s: %v", full, err)))
				return
			}
			if len(res) > r.lim.MaxMessageBytes {
				_ = reject(r.newError(r.in.rangeErrCtor, fmt.Sprintf("%s: the answer is larger than %d bytes", full, r.lim.MaxMessageBytes)))
				return
			}
			v, perr := r.parseJSON(res)
			if perr != nil {
				_ = reject(r.newError(r.in.errorCtor, fmt.Sprintf("%s: the answer is not valid JSON", full)))
				return
			}
			_ = resolve(v)
		}})
	}()
	return r.vm.ToValue(p)
}

// parseJSON turns host JSON into a JavaScript value with the captured JSON.parse, so it is made
// of plain JavaScript objects and never wraps a Go value. Empty input is undefined.
func (r *Runtime) parseJSON(raw json.RawMessage) (goja.Value, error) {
	if len(raw) == 0 {
		return goja.Undefined(), nil
	}
	return r.in.jsonParse(goja.Undefined(), r.vm.ToValue(string(raw)))
}

// errTooLarge reports an argument over the message budget.
var errTooLarge = fmt.Errorf("is too large")

// export converts a JavaScript value to JSON-able Go data, refusing anything that is not JSON
// data: functions, symbols, BigInts, non-finite numbers, cycles and objects other than arrays and
// plain objects. budget counts down the bytes of strings and keys so a huge value is refused
// before it is copied.
func (r *Runtime) export(v goja.Value, depth int, budget *int) (any, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("is nested deeper than %d levels", maxJSONDepth)
	}
	*budget -= 8
	if *budget < 0 {
		return nil, errTooLarge
	}
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, nil
	}
	if _, ok := v.(*goja.Symbol); ok {
		return nil, fmt.Errorf("is a symbol")
	}
	if s, ok := v.(goja.String); ok && s.Length() > *budget {
		return nil, errTooLarge
	}
	switch x := v.Export().(type) {
	case bool:
		return x, nil
	case int64:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("is %v, which JSON cannot carry", x)
		}
		return x, nil
	case string:
		*budget -= len(x)
		if *budget < 0 {
			return nil, errTooLarge
		}
		return x, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return nil, fmt.Errorf("is a %s", v.ExportType())
	}
	if _, ok := goja.AssertFunction(obj); ok {
		return nil, fmt.Errorf("is a function")
	}
	switch obj.ClassName() {
	case "Array":
		n := obj.Get("length").ToInteger()
		if n > int64(*budget) {
			return nil, errTooLarge
		}
		out := make([]any, 0, n)
		for i := int64(0); i < n; i++ {
			e, err := r.export(obj.Get(fmt.Sprint(i)), depth+1, budget)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	case "Object":
		if p := obj.Prototype(); p != nil && p != r.in.objectProto {
			return nil, fmt.Errorf("is an object with a class; only plain objects")
		}
		out := map[string]any{}
		for _, k := range obj.Keys() {
			*budget -= len(k)
			if *budget < 0 {
				return nil, errTooLarge
			}
			pv := obj.Get(k)
			if pv != nil && goja.IsUndefined(pv) {
				continue
			}
			e, err := r.export(pv, depth+1, budget)
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	default:
		return nil, fmt.Errorf("is a %s object", obj.ClassName())
	}
}

// format renders console arguments as one line: strings as they are, other values as JSON
// where possible.
func (r *Runtime) format(args []goja.Value) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = r.describe(a)
	}
	return strings.Join(parts, " ")
}

// describe renders one value for the log.
func (r *Runtime) describe(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	if obj, ok := v.(*goja.Object); ok {
		if _, isFn := goja.AssertFunction(obj); isFn {
			return "[function]"
		}
		if obj.ClassName() == "Error" {
			return obj.String()
		}
		if s, err := r.in.jsonStringify(goja.Undefined(), obj); err == nil && !goja.IsUndefined(s) {
			return s.String()
		}
		return "[object " + obj.ClassName() + "]"
	}
	return v.String()
}

// setTimer returns setTimeout or setInterval: functions only, a string does nothing.
func (r *Runtime) setTimer(repeat bool) func(goja.FunctionCall) goja.Value {
	name := "setTimeout"
	if repeat {
		name = "setInterval"
	}
	return func(c goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(c.Argument(0))
		if !ok {
			r.logf("warn", "refused: %s with a string (or other non-function) does nothing in a remixlet; pass a function", name)
			return r.vm.ToValue(0)
		}
		if len(r.timers) >= r.lim.MaxPendingTimers {
			panic(r.refuse("%s: more than %d timers pending", name, r.lim.MaxPendingTimers))
		}
		if !r.timerRate.allow(time.Now(), r.lim.MaxTimersPerSecond) {
			panic(r.refuse("%s: more than %d timers in one second", name, r.lim.MaxTimersPerSecond))
		}
		ms := c.Argument(1).ToFloat()
		if math.IsNaN(ms) || ms < 0 {
			ms = 0
		}
		ms = math.Min(ms, math.MaxInt32)
		delay := time.Duration(ms * float64(time.Millisecond))
		if repeat && delay < 4*time.Millisecond {
			delay = 4 * time.Millisecond
		}
		var extra []goja.Value
		if len(c.Arguments) > 2 {
			extra = append(extra, c.Arguments[2:]...)
		}
		r.nextTimer++
		id := r.nextTimer
		t := &rtTimer{fn: fn, args: extra}
		if repeat {
			t.interval = delay
		}
		r.timers[id] = t
		t.t = time.AfterFunc(delay, func() { r.enqueue(task{name + " callback", func() { r.fire(id) }}) })
		return r.vm.ToValue(id)
	}
}

// fire runs timer id if it is still pending, and re-arms an interval.
func (r *Runtime) fire(id int64) {
	t, ok := r.timers[id]
	if !ok {
		return
	}
	if t.interval > 0 {
		t.t.Reset(t.interval)
	} else {
		delete(r.timers, id)
	}
	if _, err := t.fn(goja.Undefined(), t.args...); err != nil {
		r.uncaught("a timer callback", err)
	}
}

// clearTimer is clearTimeout and clearInterval.
func (r *Runtime) clearTimer(c goja.FunctionCall) goja.Value {
	id := c.Argument(0).ToInteger()
	if t, ok := r.timers[id]; ok {
		t.t.Stop()
		delete(r.timers, id)
	}
	return goja.Undefined()
}

// queueMicrotask queues fn as a promise job with the captured Promise.prototype.then, so a
// script that replaces then cannot change what it does.
func (r *Runtime) queueMicrotask(c goja.FunctionCall) goja.Value {
	fn := c.Argument(0)
	if _, ok := goja.AssertFunction(fn); !ok {
		panic(r.newError(r.in.typeErrCtor, "queueMicrotask: the argument must be a function"))
	}
	if !r.timerRate.allow(time.Now(), r.lim.MaxTimersPerSecond) {
		panic(r.refuse("queueMicrotask: more than %d timers and microtasks in one second", r.lim.MaxTimersPerSecond))
	}
	if _, err := r.in.then(r.in.resolved, fn); err != nil {
		panic(err)
	}
	return goja.Undefined()
}

// keepBinding is rmx.keep(name, {check, repair}).
func (r *Runtime) keepBinding(c goja.FunctionCall) goja.Value {
	name := c.Argument(0).String()
	if name == "" || len(name) > maxKeepNameLen {
		panic(r.newError(r.in.typeErrCtor, fmt.Sprintf("rmx.keep: the name must be 1 to %d characters", maxKeepNameLen)))
	}
	spec, ok := c.Argument(1).(*goja.Object)
	if !ok {
		panic(r.newError(r.in.typeErrCtor, "rmx.keep: the second argument must be {check, repair}"))
	}
	check, ok1 := goja.AssertFunction(spec.Get("check"))
	repair, ok2 := goja.AssertFunction(spec.Get("repair"))
	if !ok1 || !ok2 {
		panic(r.newError(r.in.typeErrCtor, "rmx.keep: check and repair must both be functions"))
	}
	k := &keep{name: name, check: check, repair: repair}
	replaced := false
	for i, old := range r.keeps {
		if old.name == name {
			r.keeps[i], replaced = k, true
		}
	}
	if !replaced {
		if len(r.keeps) >= maxKeeps {
			panic(r.refuse("rmx.keep: more than %d keeps", maxKeeps))
		}
		r.keeps = append(r.keeps, k)
		// Tell the Host, so the page agent starts reporting mutations. The answer is ignored
		// (a handler is attached so a refusal is not reported as unhandled).
		if r.cfg.Host != nil {
			if _, err := r.in.then(r.hostCall("rmx", "keep", []any{name}), goja.Undefined(), r.in.noopValue); err != nil {
				panic(err)
			}
		}
	}
	r.enqueue(task{"rmx.keep " + name, func() { r.runKeep(k) }})
	return goja.Undefined()
}

// runKeep checks one keep and repairs it when the check is false, within the repair rate.
func (r *Runtime) runKeep(k *keep) {
	ok, err := k.check(goja.Undefined())
	if err != nil {
		r.uncaught("rmx.keep "+k.name+" check", err)
		return
	}
	if p, isPromise := ok.Export().(*goja.Promise); isPromise {
		onOK := r.vm.ToValue(func(c goja.FunctionCall) goja.Value {
			if !c.Argument(0).ToBoolean() {
				r.repairKeep(k)
			}
			return goja.Undefined()
		})
		if _, err := r.in.then(r.vm.ToValue(p), onOK); err != nil {
			r.uncaught("rmx.keep "+k.name, err)
		}
		return
	}
	if !ok.ToBoolean() {
		r.repairKeep(k)
	}
}

func (r *Runtime) repairKeep(k *keep) {
	if !k.repairs.allow(time.Now(), r.lim.MaxKeepRepairsPerSecond) {
		if !k.looping {
			k.looping = true
			r.logf("warn", "rmx.keep %s: repaired more than %d times in one second (a repair loop?); skipping repairs for now",
				k.name, r.lim.MaxKeepRepairsPerSecond)
		}
		return
	}
	k.looping = false
	if _, err := k.repair(goja.Undefined()); err != nil {
		r.uncaught("rmx.keep "+k.name+" repair", err)
	}
}
