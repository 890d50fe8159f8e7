package sandbox

import (
	"fmt"
	"net/url"
	"reflect"

	"github.com/dop251/goja"
)

// hideAllMapper is the runtime's field name mapper: it hides every Go field and method, so even
// a Go value that reached JavaScript by mistake would show nothing. The bindings never pass Go
// structs or maps to the runtime in the first place (only goja values and native functions).
type hideAllMapper struct{}

func (hideAllMapper) FieldName(reflect.Type, reflect.StructField) string { return "" }
func (hideAllMapper) MethodName(reflect.Type, reflect.Method) string     { return "" }

// intrinsics are built-ins captured before remixlet code runs, so that the bindings keep
// working the same way whatever the script does to the globals and prototypes.
type intrinsics struct {
	noop          goja.Callable
	noopValue     goja.Value
	jsonParse     goja.Callable
	jsonStringify goja.Callable
	then          goja.Callable // Promise.prototype.then
	freeze        goja.Callable // Object.freeze
	resolved      goja.Value    // a resolved promise, for queueMicrotask
	objectProto   *goja.Object
	errorCtor     goja.Value
	rangeErrCtor  goja.Value
	typeErrCtor   goja.Value
}

// unavailable are the browser globals a remixlet might reach for, each with the error hint that
// names what a remixlet uses instead. require is deliberately absent: it must not exist at all.
var unavailable = []struct{ name, hint string }{
	{"document", "use dom.query / dom.queryAll and the other dom.* calls"},
	{"fetch", "remixlets have no network access (rmx.fetch with a fetch:HOST permission is not in this API version)"},
	{"XMLHttpRequest", "remixlets have no network access (rmx.fetch with a fetch:HOST permission is not in this API version)"},
	{"WebSocket", "remixlets have no network access"},
	{"EventSource", "remixlets have no network access"},
	{"RTCPeerConnection", "remixlets have no network access"},
	{"navigator", "use rmx.page() for the page's URL and title"},
	{"localStorage", "use rmx.storage with the storage permission"},
	{"sessionStorage", "use rmx.storage with the storage permission"},
	{"indexedDB", "use rmx.storage with the storage permission"},
	{"caches", "use rmx.storage with the storage permission"},
	{"Worker", "a remixlet runs in one sandbox; use setTimeout or queueMicrotask"},
	{"SharedWorker", "a remixlet runs in one sandbox; use setTimeout or queueMicrotask"},
	{"importScripts", "a remixlet is one script.js; it cannot load code"},
	{"postMessage", "remixlets talk to the page only through dom.*"},
	{"alert", "use rmx.log or console.log"},
	{"confirm", "use rmx.log or console.log"},
	{"prompt", "use rmx.log or console.log"},
	{"open", "remixlets cannot open windows"},
}

// setup captures intrinsics, tames the global object and installs the bindings.
func (r *Runtime) setup() error {
	vm := r.vm
	vm.SetFieldNameMapper(hideAllMapper{})
	vm.SetMaxCallStackSize(r.lim.MaxCallDepth)
	vm.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
		switch op {
		case goja.PromiseRejectionReject:
			r.rejected = append(r.rejected, p)
		case goja.PromiseRejectionHandle:
			for i, q := range r.rejected {
				if q == p {
					r.rejected = append(r.rejected[:i], r.rejected[i+1:]...)
					break
				}
			}
		}
	})
	if err := r.captureIntrinsics(); err != nil {
		return err
	}
	if err := r.tameConstructors(); err != nil {
		return err
	}
	if err := r.tameGlobals(); err != nil {
		return err
	}
	return r.bind()
}

func (r *Runtime) captureIntrinsics() error {
	vm := r.vm
	fn := func(expr string) (goja.Callable, error) {
		v, err := vm.RunString(expr)
		if err != nil {
			return nil, fmt.Errorf("capturing %s: %w", expr, err)
		}
		f, ok := goja.AssertFunction(v)
		if !ok {
			return nil, fmt.Errorf("capturing %s: not a function", expr)
		}
		return f, nil
	}
	var err error
	in := &r.in
	if in.noopValue, err = vm.RunString("(function () {})"); err != nil {
		return fmt.Errorf("capturing a no-op function: %w", err)
	}
	in.noop, _ = goja.AssertFunction(in.noopValue)
	if in.jsonParse, err = fn("JSON.parse"); err != nil {
		return err
	}
	if in.jsonStringify, err = fn("JSON.stringify"); err != nil {
		return err
	}
	if in.then, err = fn("Promise.prototype.then"); err != nil {
		return err
	}
	if in.freeze, err = fn("Object.freeze"); err != nil {
		return err
	}
	if in.resolved, err = vm.RunString("Promise.resolve()"); err != nil {
		return fmt.Errorf("capturing a resolved promise: %w", err)
	}
	in.objectProto = vm.Get("Object").ToObject(vm).Get("prototype").ToObject(vm)
	in.errorCtor = vm.Get("Error")
	in.rangeErrCtor = vm.Get("RangeError")
	in.typeErrCtor = vm.Get("TypeError")
	return nil
}

// tameConstructors replaces eval, Function and the constructor of every function kind (plain,
// async, generator, async generator) with functions that throw. Each replacement keeps the
// original prototype, so instanceof Function still works, and is installed as that prototype's
// constructor, so (function(){}).constructor and its async and generator variants reach it.
// The originals are then reachable from nowhere.
func (r *Runtime) tameConstructors() error {
	vm := r.vm
	kinds := []struct{ name, sample string }{
		{"Function", "(function () {})"},
		{"AsyncFunction", "(async function () {})"},
		{"GeneratorFunction", "(function* () {})"},
		{"AsyncGeneratorFunction", "(async function* () {})"},
	}
	for _, k := range kinds {
		if _, err := goja.Compile("taming", k.sample, false); err != nil {
			// This goja cannot parse the kind (async generators at the time of writing), so no
			// script can create one and there is no constructor to tame. When goja adds it, the
			// sample compiles and the constructor is tamed like the others.
			continue
		}
		sample, err := vm.RunString(k.sample)
		if err != nil {
			return fmt.Errorf("taming %s: %w", k.name, err)
		}
		proto := sample.ToObject(vm).Prototype()
		if proto == nil {
			return fmt.Errorf("taming %s: no prototype", k.name)
		}
		name := k.name
		thrower := vm.ToValue(func(goja.FunctionCall) goja.Value {
			panic(r.newError(r.in.typeErrCtor, fmt.Sprintf("%s constructor is not available in a remixlet: code from strings cannot run; write the function in script.js", name)))
		}).ToObject(vm)
		if err := thrower.DefineDataProperty("prototype", proto, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return fmt.Errorf("taming %s: setting prototype: %w", k.name, err)
		}
		if err := proto.DefineDataProperty("constructor", thrower, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return fmt.Errorf("taming %s: replacing constructor: %w", k.name, err)
		}
		if k.name == "Function" {
			if err := vm.GlobalObject().DefineDataProperty("Function", thrower, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
				return fmt.Errorf("taming Function: replacing the global: %w", err)
			}
		}
	}
	evalThrower := vm.ToValue(func(goja.FunctionCall) goja.Value {
		panic(r.newError(r.in.typeErrCtor, "eval is not available in a remixlet: code from strings cannot run; write the code in script.js"))
	})
	if err := vm.GlobalObject().DefineDataProperty("eval", evalThrower, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return fmt.Errorf("taming eval: %w", err)
	}
	return nil
}

// tameGlobals installs the throwing getters for browser globals and the read-only window and
// location when the page is known.
func (r *Runtime) tameGlobals() error {
	vm := r.vm
	g := vm.GlobalObject()
	hints := unavailable
	loc, err := r.locationObject()
	if err != nil {
		return err
	}
	if loc == nil {
		hints = append(hints[:len(hints):len(hints)],
			struct{ name, hint string }{"window", "use rmx.page() for the page's URL and title, dom.* for its content"},
			struct{ name, hint string }{"location", "use rmx.page() for the page's URL"})
	} else {
		win := vm.NewObject()
		if err := win.DefineDataProperty("location", loc, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return fmt.Errorf("defining window.location: %w", err)
		}
		for _, o := range []goja.Value{loc, win} {
			if _, err := r.in.freeze(goja.Undefined(), o); err != nil {
				return fmt.Errorf("freezing window: %w", err)
			}
		}
		for name, v := range map[string]goja.Value{"window": win, "location": loc} {
			if err := g.DefineDataProperty(name, v, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
				return fmt.Errorf("defining %s: %w", name, err)
			}
		}
	}
	for _, u := range hints {
		msg := fmt.Sprintf("%s is not available in a remixlet; %s", u.name, u.hint)
		getter := vm.ToValue(func(goja.FunctionCall) goja.Value {
			panic(r.newError(r.in.errorCtor, msg))
		})
		if err := g.DefineAccessorProperty(u.name, getter, nil, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return fmt.Errorf("defining the %s refusal: %w", u.name, err)
		}
	}
	return nil
}

// locationObject builds the read-only location from the page URL, or returns nil without one.
func (r *Runtime) locationObject() (*goja.Object, error) {
	if r.cfg.Page.URL == "" {
		return nil, nil
	}
	u, err := url.Parse(r.cfg.Page.URL)
	if err != nil {
		return nil, fmt.Errorf("parsing the page URL: %w", err)
	}
	loc := r.vm.NewObject()
	fields := []struct{ k, v string }{
		{"href", u.String()},
		{"origin", u.Scheme + "://" + u.Host},
		{"protocol", u.Scheme + ":"},
		{"host", u.Host},
		{"hostname", u.Hostname()},
		{"port", u.Port()},
		{"pathname", u.EscapedPath()},
		{"search", prefixed("?", u.RawQuery)},
		{"hash", prefixed("#", u.EscapedFragment())},
	}
	for _, f := range fields {
		if err := loc.DefineDataProperty(f.k, r.vm.ToValue(f.v), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return nil, fmt.Errorf("defining location.%s: %w", f.k, err)
		}
	}
	return loc, nil
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// newError constructs an error with one of the captured error constructors, for panicking out
// of a native function (goja turns the panic into a JavaScript throw).
func (r *Runtime) newError(ctor goja.Value, msg string) *goja.Object {
	c, ok := goja.AssertConstructor(ctor)
	if ok {
		if o, err := c(nil, r.vm.ToValue(msg)); err == nil {
			return o
		}
	}
	return r.vm.NewTypeError(msg)
}
