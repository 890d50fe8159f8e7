package panel

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"slices"

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

// agentParts are the page agent's files in the order they run.
var agentParts = []string{
	"prologue.js", // the token, read and removed before anything else
	"capture.js",  // the built-ins and DOM functions everything else calls
	"helpers.js",
	"fresh_realm.js", // built-ins no page script touched, for captures taken later
	"channel.js",
	"navigation.js",
	"person_nav.js",   // the person's own clicks, for the agent's navigation guard
	"person_input.js", // the person's own input, for the agent's send guard
	// Remixlet operations: dom.* under the page policy.
	"rx_run.js",
	"rx_handles.js",
	"rx_policy.js",
	"rx_mirrors.js", // attributes the page copies a typed secret into
	"rx_addresses.js",
	"rx_styles.js",
	"rx_events.js",
	"rx_build.js",
	"rx_layout.js",
	"rx_click.js",
	"rx_sheets.js",
	"rx_ready.js", // the document's readiness, for the remixlets' run times
	"rx_wait.js",  // dom.waitFor
	// The AI agent's page tools.
	"tool_capture.js",
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
	"start.js", // the one place the agent starts
}

// agentOpen and agentClose wrap the joined files into the one closure.
const (
	agentOpen  = "(function () {\n'use strict';\n"
	agentClose = "})();\n"
)

// agentSource is the assembled page agent, before minifying.
var agentSource = assembleAgent(agentFiles, agentParts)

// assembleAgent joins the files of parts, read from pageagent/ in fsys, inside the closure.
func assembleAgent(fsys fs.FS, parts []string) []byte {
	var b bytes.Buffer
	b.WriteString(agentOpen)
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
	b.WriteString(agentClose)
	return b.Bytes()
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
