package panel

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strconv"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// The page agent is one closure at run time: it must capture the built-ins it uses before any
// page script runs, and keep its secrets where no page script reaches. Its source is the ordered
// list of files below, one concern each, joined at start in this order (as the content scripts
// of an extension's manifest) inside that closure, and minified once (agentJS in panel.go).
// Every file is a valid script on its own and is checked and tested alone (pageagent_test.go,
// testdata/pageagent); the rules for the files are at the top of pageagent/prologue.js.
//
// The files are embedded on their own, not in static, so that Files never serves them: the page
// agent reaches a browser only through the rewriter's bootstrap tag.
//
//go:embed pageagent/*.js
var agentFiles embed.FS

// The page agent reaches a page in two parts (issue 14, a lighter page agent):
//
//   - the boot (bootParts), inlined as the first script in <head>: it captures every built-in
//     the agent will use, before any page script runs, adopts the first-frame stylesheets,
//     registers the window listeners that must come first, and creates a <script async> for
//     the rest, with the rest's SRI integrity (a page's service worker may answer its request);
//   - the rest (restParts): the channel, the remixlet operations, the page tools, the rmx
//     services and the launcher, served from remix.proxy under a versioned, immutable address,
//     so that the browser takes it from its cache without pausing the parser.
//
// The rest runs after page scripts, so it reads no global and captures nothing
// (pageagent_test.go checks both). Its first statement asks the boot, through a
// non-writable, non-configurable window property (restHandOver), for the boot's names it uses
// (handOverNames): the property answers once, and only while the captured
// document.currentScript is the element the boot created (boot.js loadRest). The names handed
// over are the boot's functions and the values it never assigns again (checked by
// pageagent_test.go); the rest keeps its own state.

// bootParts are the boot's files, in the order they run.
var bootParts = []string{
	"prologue.js", // the token, read and removed before anything else
	"capture.js",  // the built-ins and DOM functions everything else calls
	"helpers.js",
	"tool_capture.js", // the page tools' captures
	"rx_revealed.js",  // password fields the page reveals, watched from the start
	"rx_sheets.js",    // remixlet stylesheets: the first-frame ones adopted before the first paint
	"rx_ready.js",     // the document's readiness, for the remixlets' run times
	"early.js",        // window listeners and history wrappers that must come before the page's
	"boot.js",         // the boot's start and the hand-over to the rest
}

// restParts are the rest's files, in the order they run.
var restParts = []string{
	"channel.js",
	"navigation.js",
	// Remixlet operations: dom.* under the page policy.
	"rx_run.js",
	"rx_handles.js",
	"rx_policy.js",
	"rx_addresses.js",
	"rx_styles.js",
	"rx_events.js",
	"rx_build.js",
	"rx_layout.js",
	"rx_click.js",
	"rx_wait.js", // dom.waitFor
	// The AI agent's page tools.
	"tool_helpers.js",
	"tool_geometry.js",
	"tool_frames.js",
	"tool_refs.js",
	"tool_names.js",
	"tool_outline.js",
	"tool_read.js",
	"tool_click.js",
	"tool_act.js",
	"tool_type.js",
	"tool_keys.js",
	"tool_scroll.js",
	"tool_history.js",
	"tool_wait.js",
	"tool_find.js",
	"tool_state.js",
	"tool_fetch.js",
	"tool_secrets.js",
	"tool_table.js",
	// rmx services, the launcher and panel, and the start.
	"services.js",
	"launcher.js",
	"start.js", // the one place the rest starts
}

// agentParts are all the page agent's files in the order they run: the boot's, then the rest's.
var agentParts = slices.Concat(bootParts, restParts)

// agentOpen and agentClose wrap joined files into one closure.
const (
	agentOpen  = "(function () {\n'use strict';\n"
	agentClose = "})();\n"
)

// restHandOver is the window property through which the rest receives the boot's names.
const restHandOver = "__remixproxyRest"

// agentSource is the whole page agent as one closure, before minifying: the boot's files, the
// rest's, and both starts with nothing between them. The node harnesses (panel_test.go,
// agent_tools_test.go) run it; the browser gets bootSource and restSource.
var agentSource = assembleAgent(agentFiles, agentParts, "if (startBoot()) {\n  startRest();\n}\n")

// handOverNames are the boot's top-level names the rest uses, sorted.
var handOverNames = mustHandOverNames(agentFiles)

// restSource is the rest as the browser runs it, before minifying: its first statement takes
// the boot's names from the hand-over, or stops. The names come as an array in the order of
// handOverNames (shorter in the inlined boot than an object with the names): the rest reads
// only its own elements, which a page's Array.prototype cannot change.
var restSource = assembleRest(agentFiles, handOverNames)

// assembleAgent joins the files of parts, read from pageagent/ in fsys, inside the closure,
// followed by tail.
func assembleAgent(fsys fs.FS, parts []string, tail string) []byte {
	var b bytes.Buffer
	b.WriteString(agentOpen)
	writeParts(&b, fsys, parts)
	b.WriteString(tail)
	b.WriteString(agentClose)
	return b.Bytes()
}

// writeParts writes the files of parts, each ending with a newline.
func writeParts(b *bytes.Buffer, fsys fs.FS, parts []string) {
	for _, name := range parts {
		src, err := fs.ReadFile(fsys, "pageagent/"+name)
		if err != nil {
			panic("panel: page agent: " + err.Error()) // a name above without its file; the tests catch it
		}
		b.Write(src)
		if len(src) > 0 && src[len(src)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
}

// assembleRest is the rest's closure: the hand-over, the rest's files, the start.
func assembleRest(fsys fs.FS, names []string) []byte {
	var b bytes.Buffer
	b.WriteString(agentOpen)
	b.WriteString("var handed = " + restHandOver + "();\nif (!handed) {\n  return;\n}\n")
	for i, n := range names {
		b.WriteString("var " + n + " = handed[" + strconv.Itoa(i) + "];\n")
	}
	writeParts(&b, fsys, restParts)
	b.WriteString("startRest();\n")
	b.WriteString(agentClose)
	return b.Bytes()
}

// assembleBoot is the boot's closure: its files, then its start, which loads the rest from
// restPath (checked against integrity) and hands it names.
func assembleBoot(fsys fs.FS, names []string, restPath, integrity string) []byte {
	var b bytes.Buffer
	b.WriteString(agentOpen)
	writeParts(&b, fsys, bootParts)
	b.WriteString("if (startBoot()) {\n  loadRest('" + restHandOver + "', '" + restPath + "', '" + integrity + "', function () {\n    return [")
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	b.WriteString("];\n  });\n}\n")
	b.WriteString(agentClose)
	return b.Bytes()
}

// mustHandOverNames is handOverNames, from the files in fsys; it panics on a file that does not
// parse (the tests catch that first).
func mustHandOverNames(fsys fs.FS) []string {
	names, err := handOverNamesOf(fsys)
	if err != nil {
		panic("panel: page agent: " + err.Error())
	}
	return names
}

// handOverNamesOf returns, sorted, the top-level names declared by the boot's files that the
// rest's files use.
func handOverNamesOf(fsys fs.FS) ([]string, error) {
	boot := map[string]bool{}
	for _, name := range bootParts {
		ast, err := parsePart(fsys, name)
		if err != nil {
			return nil, err
		}
		for _, v := range ast.Scope.Declared {
			boot[string(v.Name())] = true
		}
	}
	used := map[string]bool{}
	for _, name := range restParts {
		ast, err := parsePart(fsys, name)
		if err != nil {
			return nil, err
		}
		for _, v := range ast.Scope.Undeclared {
			if n := string(v.Name()); boot[n] {
				used[n] = true
			}
		}
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// parsePart parses one page agent file.
func parsePart(fsys fs.FS, name string) (*js.AST, error) {
	src, err := fs.ReadFile(fsys, "pageagent/"+name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	ast, err := js.Parse(parse.NewInputBytes(src), js.Options{})
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", name, err)
	}
	return ast, nil
}

// agentToolsTable is the file with the page agent's tools table.
const agentToolsTable = "tool_table.js"

// PageToolNames returns, sorted, the tool names of the page agent's tools table (the
// TOOLS.name = … statements of pageagent/tool_table.js): the tools it answers {type:"tool"}
// calls for. The proxy's list of page tools and the agent's tool definitions are checked against
// it (proxy/pagetools_names_test.go).
func PageToolNames() ([]string, error) {
	src, err := fs.ReadFile(agentFiles, "pageagent/"+agentToolsTable)
	if err != nil {
		return nil, fmt.Errorf("reading the page agent's tools table: %w", err)
	}
	ast, err := js.Parse(parse.NewInputBytes(src), js.Options{})
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", agentToolsTable, err)
	}
	var names []string
	for _, stmt := range ast.List {
		e, ok := stmt.(*js.ExprStmt)
		if !ok {
			continue
		}
		set, ok := e.Value.(*js.BinaryExpr)
		if !ok || set.Op != js.EqToken {
			continue
		}
		dot, ok := set.X.(*js.DotExpr)
		if !ok {
			continue
		}
		obj, ok := dot.X.(*js.Var)
		name, isName := dot.Y.(js.LiteralExpr)
		if ok && isName && string(obj.Name()) == "TOOLS" {
			names = append(names, string(name.Data))
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s has no TOOLS.name = … statements", agentToolsTable)
	}
	slices.Sort(names)
	return names, nil
}
