package page

import (
	"maps"
	"slices"
	"testing"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/panel"
)

// TestPageToolNamesAgree checks that the three lists of page tools name the same tools: the
// page agent's tools table (panel.PageToolNames, from panel/pageagent/tool_table.js), the
// proxy's pageToolNames (the calls it relays), and the agent's tool definitions (what the model
// may call), but for the exceptions listed here with their reasons. A tool added to one list
// and not the others fails here, as does an exception that no longer holds.
func TestPageToolNamesAgree(t *testing.T) {
	// Page tools that the model never names: the proxy calls them itself.
	proxyOnly := map[string]string{
		"fetch_page":     "open_page on the page's own origin (chat/env.go)",
		"outline_html":   "open_page on another origin of the site, fetched by the proxy (chat/open.go)",
		"page_state":     "done's check of open dialogs and unsaved forms (chat/act.go)",
		"report_secrets": "the password values for the redaction stage (secrets.go)",
	}
	// Agent tools that do not run in the page agent (open_page runs as fetch_page or
	// outline_html, done asks page_state).
	notInPage := map[string]string{
		"open_page":           "the proxy checks the address, then fetch_page or outline_html",
		"done":                "the proxy asks page_state",
		"read_log":            "the remixlet's log, in the store",
		"write_remixlet":      "saving a remixlet, in Go",
		"request_permissions": "a card for the person",
		"propose_plan":        "a plan for the person",
		"http_request":        "a request sent by the proxy",
	}

	inPage, err := panel.PageToolNames()
	if err != nil {
		t.Fatal(err)
	}
	relayed := slices.Sorted(maps.Keys(pageToolNames))
	if !slices.Equal(inPage, relayed) {
		t.Errorf("the page agent's tools table has %q, pageToolNames %q; they must be the same", inPage, relayed)
	}

	defined := map[string]bool{}
	for _, mode := range []agent.Mode{agent.ModeAsk, agent.ModeBuild, agent.ModeAct} {
		for _, spec := range agent.ToolSpecs(mode) {
			defined[spec.Name] = true
		}
	}
	if len(defined) < 20 {
		t.Fatalf("the agent defines only %d tools: %q", len(defined), slices.Sorted(maps.Keys(defined)))
	}

	var pageForModel []string
	for _, name := range inPage {
		if _, ok := proxyOnly[name]; !ok {
			pageForModel = append(pageForModel, name)
		}
	}
	var definedInPage []string
	for name := range defined {
		if _, ok := notInPage[name]; !ok {
			definedInPage = append(definedInPage, name)
		}
	}
	slices.Sort(definedInPage)
	if !slices.Equal(definedInPage, pageForModel) {
		t.Errorf("the agent defines page tools %q, the page agent has %q for the model (without %q); they must be the same",
			definedInPage, pageForModel, slices.Sorted(maps.Keys(proxyOnly)))
	}

	// The exceptions must stay true, or they hide a mistake.
	for name, why := range proxyOnly {
		if !slices.Contains(inPage, name) || defined[name] {
			t.Errorf("%s is listed as a page tool the proxy calls itself (%s), but the page agent has it = %v and the agent defines it = %v",
				name, why, slices.Contains(inPage, name), defined[name])
		}
	}
	for name, why := range notInPage {
		if !defined[name] || slices.Contains(inPage, name) {
			t.Errorf("%s is listed as an agent tool that does not run in the page (%s), but the agent defines it = %v and the page agent has it = %v",
				name, why, defined[name], slices.Contains(inPage, name))
		}
	}
}
