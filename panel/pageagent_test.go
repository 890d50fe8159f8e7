package panel

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// The page agent's files, each on its own: listed, parseable, ASCII, names declared once and
// found, globals read only at start-up, and unit tests per file (testdata/pageagent). The
// behaviour of the whole agent is tested by the harnesses (panel_test.go, agent_tools_test.go)
// and in Chromium (e2e/).

// TestPageAgentPartsListed checks that pageagent/ holds exactly the files of agentParts, each
// listed once: a file that is not listed would never run.
func TestPageAgentPartsListed(t *testing.T) {
	entries, err := os.ReadDir("pageagent")
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, e := range entries {
		onDisk = append(onDisk, e.Name())
	}
	listed := slices.Clone(agentParts)
	slices.Sort(listed)
	for i := 1; i < len(listed); i++ {
		if listed[i] == listed[i-1] {
			t.Errorf("agentParts lists %s twice", listed[i])
		}
	}
	slices.Sort(onDisk)
	if !slices.Equal(onDisk, listed) {
		t.Errorf("pageagent/ holds %q, agentParts lists %q", onDisk, listed)
	}
	if agentParts[0] != "prologue.js" || agentParts[len(agentParts)-1] != "start.js" {
		t.Errorf("agentParts runs from %s to %s, want prologue.js first and start.js last", agentParts[0], agentParts[len(agentParts)-1])
	}
	if !bytes.HasPrefix(agentSource, []byte(agentOpen)) || !bytes.HasSuffix(agentSource, []byte(agentClose)) {
		t.Error("agentSource is not wrapped in the closure")
	}
}

// partPath is the path of a page agent file, from the package directory.
func partPath(name string) string {
	return filepath.Join("pageagent", name)
}

// TestPageAgentPartsParse checks that each file is a valid script on its own, as it is and in
// strict mode (the closure it runs in is strict), with node's parser and the Script goal (node
// --check reads a file as CommonJS, which would accept a top-level return).
func TestPageAgentPartsParse(t *testing.T) {
	node := nodePath(t)
	args := []string{"testdata/pageagent/parse.js"}
	for _, name := range agentParts {
		args = append(args, partPath(name))
	}
	out, err := exec.Command(node, args...).CombinedOutput()
	if err != nil {
		var failed []string
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, "ok ") {
				failed = append(failed, line)
			}
		}
		t.Fatalf("node testdata/pageagent/parse.js: %v\n%s", err, strings.Join(failed, "\n"))
	}
	if got, want := strings.Count(string(out), "ok "), len(agentParts); got != want {
		t.Fatalf("parse.js checked %d files, want %d:\n%s", got, want, out)
	}
}

func TestPageAgentPartsASCII(t *testing.T) {
	for _, name := range agentParts {
		src, err := os.ReadFile(partPath(name))
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range src {
			if c >= 0x80 {
				t.Errorf("%s:%d has a non-ASCII byte 0x%02x; escape it as \\uXXXX", name, bytes.Count(src[:i], []byte("\n"))+1, c)
				break
			}
		}
	}
}

// startGlobals are the globals the page agent's files may read, at top level only (while the
// agent starts, before any page script): everything the page can replace is captured then.
var startGlobals = map[string]bool{
	"window": true, "document": true, "Reflect": true, "Object": true, "JSON": true, "encodeURIComponent": true,
	"EventTarget": true, "Event": true, "Document": true, "Element": true, "Node": true,
	"Map": true, "WeakMap": true, "String": true, "Array": true, "Math": true, "Date": true, "Promise": true,
	"Symbol": true,
}

// anyTimeGlobals may be read inside functions too: they cannot be replaced by a page.
var anyTimeGlobals = map[string]bool{"undefined": true, "arguments": true}

// agentPart is one parsed page agent file.
type agentPart struct {
	name  string
	index int
	ast   *js.AST
	// top are the names the file declares at its top level, with whether each is a var (not a
	// function, which is hoisted and so usable before its file runs).
	top map[string]bool
}

func parseParts(t *testing.T) []agentPart {
	t.Helper()
	var parts []agentPart
	for i, name := range agentParts {
		src, err := os.ReadFile(partPath(name))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, parsePart(t, name, i, src))
	}
	return parts
}

// parsePart parses src, the page agent file name at index in the order they run.
func parsePart(t *testing.T, name string, index int, src []byte) agentPart {
	t.Helper()
	ast, err := js.Parse(parse.NewInputBytes(src), js.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	p := agentPart{name: name, index: index, ast: ast, top: map[string]bool{}}
	for _, v := range ast.Scope.Declared {
		p.top[string(v.Name())] = v.Decl == js.VariableDecl
	}
	return p
}

// TestPageAgentNames checks the names of the joined closure: each top-level name is declared in
// one file only (in one closure a second declaration silently replaces the first); every name a
// file uses is declared by some file or is a global of startGlobals; a global is read only at
// top level, never inside a function (a page script may have replaced it by then); a top-level
// statement uses only vars of its own file or of files before it (later ones are still
// undefined then).
func TestPageAgentNames(t *testing.T) {
	parts := parseParts(t)
	declaredIn := map[string]agentPart{}
	for _, p := range parts {
		for name := range p.top {
			if q, ok := declaredIn[name]; ok {
				t.Errorf("%s is declared in %s and in %s; one closure can hold it once", name, q.name, p.name)
				continue
			}
			declaredIn[name] = p
		}
	}
	if len(declaredIn) < 500 {
		t.Fatalf("found only %d top-level names; the parser's view has changed", len(declaredIn))
	}
	for _, p := range parts {
		w := &refWalker{}
		js.Walk(w, p.ast)
		if len(w.refs) == 0 {
			t.Errorf("%s: no names found", p.name)
		}
		for _, r := range w.refs {
			q, inClosure := declaredIn[r.name]
			switch {
			case inClosure && r.fn == "" && q.index > p.index && q.top[r.name]:
				t.Errorf("%s: a top-level statement uses %s of %s, which runs later", p.name, r.name, q.name)
			case inClosure:
			case anyTimeGlobals[r.name]:
			case !startGlobals[r.name]:
				t.Errorf("%s: %s is neither declared by a page agent file nor a known global (add it to startGlobals if it is one)", p.name, r.name)
			case r.fn != "":
				t.Errorf("%s: %s reads the global %s after start-up; capture it at top level", p.name, r.fn, r.name)
			}
		}
	}
}

// TestPageAgentSyntax checks, in every file, for the language features that run
// page-replaceable built-ins: spread, for-of, template literals, arrow functions (kept out with
// the rest, as the sources never use them) and promise methods called directly inside a function
// (chain with the captured Promise.prototype.then instead).
func TestPageAgentSyntax(t *testing.T) {
	for _, p := range parseParts(t) {
		w := &refWalker{}
		js.Walk(w, p.ast)
		for _, f := range w.features {
			t.Errorf("%s: %s", p.name, f)
		}
	}
}

// A nameRef is one use of a name that the file itself does not declare.
type nameRef struct {
	name string
	fn   string // the function it is in ("" at top level; "(function)" for an anonymous one)
}

// refWalker collects the uses of names a file does not declare, and the features
// TestPageAgentSyntax refuses.
type refWalker struct {
	fns      []string
	refs     []nameRef
	features []string
}

func (w *refWalker) in() string {
	if len(w.fns) == 0 {
		return ""
	}
	return w.fns[len(w.fns)-1]
}

func (w *refWalker) Enter(n js.INode) js.IVisitor {
	switch n := n.(type) {
	case *js.FuncDecl:
		name := "(function)"
		if n.Name != nil {
			name = string(n.Name.Name())
		} else if outer := w.in(); outer != "" {
			name = "a function in " + outer
		}
		w.fns = append(w.fns, name)
	case *js.MethodDecl:
		w.fns = append(w.fns, "a method")
	case *js.ArrowFunc:
		w.fns = append(w.fns, "an arrow function")
		w.features = append(w.features, "an arrow function")
	case *js.Var:
		v := n
		for v.Link != nil {
			v = v.Link
		}
		if v.Decl == js.NoDecl {
			w.refs = append(w.refs, nameRef{name: string(v.Data), fn: w.in()})
		}
	case *js.ForOfStmt:
		w.features = append(w.features, "for-of")
	case *js.TemplateExpr:
		w.features = append(w.features, "a template literal")
	case *js.Arg:
		if n.Rest {
			w.features = append(w.features, "a spread argument")
		}
	case *js.Element:
		if n.Spread {
			w.features = append(w.features, "a spread element")
		}
	case *js.Property:
		if n.Spread {
			w.features = append(w.features, "a spread property")
		}
	case *js.DotExpr:
		if y, ok := n.Y.(js.LiteralExpr); ok && w.in() != "" {
			switch string(y.Data) {
			case "then", "catch", "finally":
				w.features = append(w.features, fmt.Sprintf("%s calls .%s directly", w.in(), y.Data))
			}
		}
	}
	return w
}

func (w *refWalker) Exit(n js.INode) {
	switch n.(type) {
	case *js.FuncDecl, *js.MethodDecl, *js.ArrowFunc:
		w.fns = w.fns[:len(w.fns)-1]
	}
}

// TestRefWalkerCatches runs the checks of TestPageAgentNames and TestPageAgentSyntax on small
// scripts with the mistakes they are for, so that a change in the parser cannot make them pass
// by seeing nothing.
func TestRefWalkerCatches(t *testing.T) {
	tests := []struct {
		name, src string
		refs      []string // name@function of uses the file does not declare
		features  []string
	}{
		{"global in a function", "function f() { return document.title; }", []string{"document@f"}, nil},
		{"global at top level", "var d = document;", []string{"document@"}, nil},
		{"own names", "var a = 1; function f(b) { var c = a + b; return c; }", nil, nil},
		{"another file's names", "function f() { return apply(x, null, []); }", []string{"apply@f", "x@f"}, nil},
		{"anonymous function", "var t = dict(); (function () { t.a = names(); })();", []string{"dict@", "names@(function)"}, nil},
		{"property names are not uses", "var a = {}; a.document = a.window;", nil, nil},
		{"arrow and spread", "var f = function (a) { return g(...a); }; var h = (x) => x;", []string{"g@(function)"}, []string{"a spread argument", "an arrow function"}},
		{"template and for-of", "function f(a) { for (var x of a) {} return `x`; }", nil, []string{"a template literal", "for-of"}},
		{"promise method", "var then = Promise.prototype.then; function f(p) { p.then(f); }", []string{"Promise@"}, []string{"f calls .then directly"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ast, err := js.Parse(parse.NewInputString(tt.src), js.Options{})
			if err != nil {
				t.Fatal(err)
			}
			w := &refWalker{}
			js.Walk(w, ast)
			var got []string
			for _, r := range w.refs {
				got = append(got, r.name+"@"+r.fn)
			}
			sort.Strings(got)
			sort.Strings(w.features)
			if !slices.Equal(got, tt.refs) {
				t.Errorf("uses: got %q, want %q", got, tt.refs)
			}
			if !slices.Equal(w.features, tt.features) {
				t.Errorf("features: got %q, want %q", w.features, tt.features)
			}
		})
	}
}

// TestPageAgentPartUnits runs the unit tests of single page agent files in node
// (testdata/pageagent/*_test.js): each loads its file, and only the files it needs, into a
// closure of its own with a stub browser.
func TestPageAgentPartUnits(t *testing.T) {
	node := nodePath(t)
	tests, err := filepath.Glob("testdata/pageagent/*_test.js")
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) < 6 {
		t.Fatalf("found only %d unit tests in testdata/pageagent", len(tests))
	}
	for _, file := range tests {
		t.Run(filepath.Base(file), func(t *testing.T) {
			out, err := exec.Command(node, file).CombinedOutput()
			if err != nil {
				t.Fatalf("node %s: %v\n%s", file, err, out)
			}
			if !strings.Contains(string(out), " passed") {
				t.Fatalf("node %s reported no result:\n%s", file, out)
			}
			if testing.Verbose() {
				t.Logf("%s", out)
			}
		})
	}
}

func TestPageToolNames(t *testing.T) {
	names, err := PageToolNames()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(partPath(agentToolsTable))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(names), strings.Count(string(src), "\nTOOLS."); got != want || got < 20 {
		t.Errorf("PageToolNames() found %d names (%q), want the %d TOOLS.name lines of %s", got, names, want, agentToolsTable)
	}
	for _, want := range []string{"capture_page", "outline", "click", "report_secrets", "page_state"} {
		if !slices.Contains(names, want) {
			t.Errorf("PageToolNames() = %q, want it to hold %s", names, want)
		}
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("PageToolNames() = %q, want sorted names, each once", names)
	}
}
