package panel

import (
	"slices"
	"sort"
	"testing"

	"github.com/tdewolff/parse/v2/js"
)

// The page tools' captures are taken at the first tool call, from a fresh realm
// (pageagent/fresh_realm.js, tool_capture.js's toolsReady), not at start. Until then they are
// undefined, so nothing but a tool call may use them: these tests check that from the parsed
// files, and the harness scenario "the tools' first call after the page replaced what they
// capture then" (testdata/agent_tools_harness.js) checks that they come from the fresh realm.

// deferredCapturers are the functions that fill the captures taken at the first tool call, and
// toolEntry the one function every tool call goes through, which must call toolsReady first.
var deferredCapturers = []string{"captureTools", "captureActTools"}

const toolEntry = "runTool"

// TestPageToolCapturesWaitForATool checks that no name a deferred capturer assigns is used by
// code that runs other than through a tool call: the top level, start() and everything they
// reach, the socket's messages but {type:'tool'} included (receive reaches runTool; what
// runTool reaches is a tool call's).
func TestPageToolCapturesWaitForATool(t *testing.T) {
	g := agentGraph(t)
	deferred := map[string]string{} // name -> the capturer that assigns it
	for _, c := range deferredCapturers {
		if _, ok := g.funcs[c]; !ok {
			t.Fatalf("no function %s in the page agent", c)
		}
		for _, n := range g.assignedIn(c) {
			if g.file[n] != "" {
				deferred[n] = c
			}
		}
	}
	if len(deferred) < 60 {
		t.Fatalf("found only %d names the deferred capturers assign; the parser's view has changed", len(deferred))
	}
	stop := map[string]bool{toolEntry: true}
	for _, c := range deferredCapturers {
		stop[c] = true
	}
	path := g.reach(g.roots, stop)
	var bad []string
	for n, c := range deferred {
		if p, ok := path[n]; ok {
			bad = append(bad, n+" (filled by "+c+", used at start by "+p+")")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	if !g.uses[toolEntry]["toolsReady"] {
		t.Errorf("%s does not call toolsReady: a tool would run with the captures undefined", toolEntry)
	}
}

// TestPageToolCapturesCheckCatches runs the check's graph on a small agent with the mistake it
// is for, so that a change in the parser cannot make it pass by seeing nothing.
func TestPageToolCapturesCheckCatches(t *testing.T) {
	src := map[string]string{
		"a.js": "var x; var y = 1; function captureTools(w) { x = w.X; z.k = w.Z; } var z = {};",
		"b.js": "function start() { on(win, 'input', onInput); } function on() {} function onInput() { return x; } start();",
		"c.js": "function runTool() { toolsReady(); return z.k; } function receive() { runTool(); }",
	}
	var parts []agentPart
	for i, name := range []string{"a.js", "b.js", "c.js"} {
		parts = append(parts, parsePart(t, name, i, []byte(src[name])))
	}
	g := graphOf(parts)
	path := g.reach(g.roots, map[string]bool{"runTool": true, "captureTools": true})
	if got := slices.Sorted(mapKeys(assignedInNames(g, "captureTools"))); !slices.Equal(got, []string{"x", "z"}) {
		t.Errorf("captureTools assigns %q, want x and z", got)
	}
	if p := path["x"]; p != "start > onInput > x" {
		t.Errorf("the path to x = %q, want start > onInput > x", p)
	}
	if _, ok := path["z"]; ok {
		t.Errorf("z is reached only through runTool, yet found at start: %q", path["z"])
	}
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func assignedInNames(g *callGraph, fn string) map[string]bool {
	out := map[string]bool{}
	for _, n := range g.assignedIn(fn) {
		out[n] = true
	}
	return out
}

// callGraph is the page agent's top-level names and what each uses.
type callGraph struct {
	file  map[string]string          // top-level name -> its file
	uses  map[string]map[string]bool // function or var -> the top-level names its body or initializer uses
	funcs map[string]*js.FuncDecl
	tops  map[string]map[*js.Var]bool // function -> the top-level names of its file
	roots []map[string]bool           // the names each top-level statement but a declaration uses
}

func agentGraph(t *testing.T) *callGraph {
	t.Helper()
	return graphOf(parseParts(t))
}

func graphOf(parts []agentPart) *callGraph {
	g := &callGraph{file: map[string]string{}, uses: map[string]map[string]bool{}, funcs: map[string]*js.FuncDecl{}, tops: map[string]map[*js.Var]bool{}}
	for _, p := range parts {
		for n := range p.top {
			g.file[n] = p.name
		}
	}
	for _, p := range parts {
		top := map[*js.Var]bool{}
		for _, v := range p.ast.Scope.Declared {
			top[v] = true
		}
		for _, st := range p.ast.List {
			switch s := st.(type) {
			case *js.FuncDecl:
				if s.Name != nil {
					g.funcs[string(s.Name.Data)] = s
					g.tops[string(s.Name.Data)] = top
					g.uses[string(s.Name.Data)] = topNamesUnder(&s.Body, top)
					continue
				}
			case *js.VarDecl:
				for _, b := range s.List {
					if v, ok := b.Binding.(*js.Var); ok && b.Default != nil {
						g.uses[string(v.Data)] = topNamesUnder(b.Default, top)
					}
				}
				continue
			case *js.ExprStmt:
				if isToolsEntry(s) {
					continue // TOOLS.name = fn: reached through runTool only
				}
			}
			g.roots = append(g.roots, topNamesUnder(st, top))
		}
	}
	return g
}

// isToolsEntry reports whether s is a statement of the tools table, TOOLS.name = ….
func isToolsEntry(s *js.ExprStmt) bool {
	bin, ok := s.Value.(*js.BinaryExpr)
	if !ok || bin.Op != js.EqToken {
		return false
	}
	dot, ok := bin.X.(*js.DotExpr)
	if !ok {
		return false
	}
	o, ok := dot.X.(*js.Var)
	return ok && string(o.Data) == "TOOLS"
}

// reach returns every top-level name reachable from the roots without passing through stop, with
// the path it was first reached by ("start > onInput").
func (g *callGraph) reach(roots []map[string]bool, stop map[string]bool) map[string]string {
	path := map[string]string{}
	var visit func(n, via string)
	visit = func(n, via string) {
		if _, seen := path[n]; seen || stop[n] || g.file[n] == "" {
			return
		}
		p := n
		if via != "" {
			p = via + " > " + n
		}
		path[n] = p
		for _, m := range slices.Sorted(mapKeys(g.uses[n])) {
			visit(m, p)
		}
	}
	for _, r := range roots {
		for _, n := range slices.Sorted(mapKeys(r)) {
			visit(n, "")
		}
	}
	return path
}

// topNamesUnder returns the names used under n that are top-level names of the closure: a
// file's own top-level vars and functions (top) and names the file does not declare.
func topNamesUnder(n js.INode, top map[*js.Var]bool) map[string]bool {
	c := &topNameCollector{names: map[string]bool{}, top: top}
	js.Walk(c, n)
	return c.names
}

type topNameCollector struct {
	names map[string]bool
	top   map[*js.Var]bool
}

func (c *topNameCollector) Enter(n js.INode) js.IVisitor {
	if v, ok := n.(*js.Var); ok {
		if name, ok := topName(v, c.top); ok {
			c.names[name] = true
		}
	}
	return c
}

// topName returns the name of v if it is a top-level name of the closure: one of its file's
// top-level declarations (top) or a name the file does not declare.
func topName(v *js.Var, top map[*js.Var]bool) (string, bool) {
	for v.Link != nil {
		v = v.Link
	}
	return string(v.Data), v.Decl == js.NoDecl || top[v]
}

func (c *topNameCollector) Exit(js.INode) {}

// assignedIn returns the top-level names the function fn assigns (x = …) or whose properties
// it sets (x.k = …).
func (g *callGraph) assignedIn(fn string) []string {
	a := &assignCollector{top: g.tops[fn], names: map[string]bool{}}
	js.Walk(a, &g.funcs[fn].Body)
	return slices.Sorted(mapKeys(a.names))
}

type assignCollector struct {
	top   map[*js.Var]bool
	names map[string]bool
}

func (a *assignCollector) Enter(n js.INode) js.IVisitor {
	bin, ok := n.(*js.BinaryExpr)
	if !ok || bin.Op != js.EqToken {
		return a
	}
	x := bin.X
	if dot, ok := x.(*js.DotExpr); ok {
		x = dot.X
	}
	if v, ok := x.(*js.Var); ok {
		if name, ok := topName(v, a.top); ok {
			a.names[name] = true
		}
	}
	return a
}

func (a *assignCollector) Exit(js.INode) {}

// servicesEntries are the ops that use the services' captures (pageagent/services.js), which
// captureServices fills at start only where remixlets run (data-remixproxy-now); elsewhere they
// stay null, so only these ops, which check for that, may use them.
var servicesEntries = []string{"runClipboard", "runNotify"}

// TestServicesCapturesOnlyInTheirOps checks that no name captureServices assigns (but its flag)
// is used by code that runs other than through a services op that checks for it.
func TestServicesCapturesOnlyInTheirOps(t *testing.T) {
	g := agentGraph(t)
	stop := map[string]bool{"captureServices": true}
	for _, e := range servicesEntries {
		if _, ok := g.funcs[e]; !ok {
			t.Fatalf("no function %s in the page agent", e)
		}
		stop[e] = true
	}
	filled := g.assignedIn("captureServices")
	if len(filled) < 7 {
		t.Fatalf("captureServices assigns only %q; the parser's view has changed", filled)
	}
	path := g.reach(g.roots, stop)
	for _, n := range filled {
		if n == "servicesCaptured" {
			continue
		}
		if p, ok := path[n]; ok {
			t.Errorf("%s (filled by captureServices where a remixlet runs) used outside a services op by %s", n, p)
		}
	}
	if !g.uses["runClipboard"]["servicesCaptured"] {
		t.Error("runClipboard does not check servicesCaptured: it would answer as if the page had no clipboard")
	}
}
