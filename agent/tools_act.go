package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// The Act tools (issue 6): page actions beyond click, which run in the page agent
// (panel/pageagent/tool_*.js) under the proxy's checks (proxy/page/tools.go, proxy/chat/act.go),
// plus find and done, which every mode has. Like every tool, they carry the model's words to the
// page as data: nothing here or there runs model-written code on the page.
//
// They are appended to the tool list in init, after the tools of tools.go, so the order the model
// sees stays fixed.

// actTools are the tools this file adds, in the order the model sees them.
var actTools = []tool{
	{spec: ToolSpec{Name: "find", Description: "Search the page's outline for text (case-insensitive): the matching lines with the lines of their ancestors and their refs, so you need not read the whole page.",
		Parameters: schema(`{"type":"object","properties":{"text":{"type":"string"},"limit":{"type":"integer","description":"most matching lines (default 20)"}},"required":["text"]}`)},
		modes: allModes, run: pageTool("find")},
	{spec: ToolSpec{Name: "done", Description: "Finish the task: give the person a short summary of what you did and what you saw. Refused (with the reason) while the page still shows an open dialog or a form with unsaved input and the summary claims success; check the page, then finish or say honestly what is left.",
		Parameters: schema(`{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`)},
		modes: allModes, run: runDone},
	{spec: ToolSpec{Name: "type", Description: "Type text into a text field or text area by ref, replacing its value (clear=false appends). Works with React-style controlled inputs. Password fields are refused: the person types passwords.",
		Parameters: schema(`{"type":"object","properties":{"ref":{"type":"string"},"text":{"type":"string"},"clear":{"type":"boolean","description":"replace the current value (default true)"}},"required":["ref","text"]}`)},
		modes: []Mode{ModeAct}, run: pageTool("type")},
	{spec: ToolSpec{Name: "set_field", Description: "Fill one field in one step: focus, clear, type, and with submit=true commit it — for a combobox or search-as-you-type picker ArrowDown then Enter (the first filtered option), for a plain field Enter and the form's submission (same site only). A submission counts as a click on the form's submit button for the duplicate-submit guard (see click): pass resubmit only when the person asked again.",
		Parameters: schema(`{"type":"object","properties":{"ref":{"type":"string"},"text":{"type":"string"},"submit":{"type":"boolean"},"resubmit":{"type":"boolean","description":"submit again although this form was just submitted"}},"required":["ref","text"]}`)},
		modes: []Mode{ModeAct}, run: pageTool("set_field")},
	{spec: ToolSpec{Name: "select", Description: "Choose an option of a <select> by ref, by the option's visible text (or value).",
		Parameters: schema(`{"type":"object","properties":{"ref":{"type":"string"},"option":{"type":"string"}},"required":["ref","option"]}`)},
		modes: []Mode{ModeAct}, run: pageTool("select")},
	{spec: ToolSpec{Name: "press_keys", Description: "Press keys on the focused element (or the page): Enter, Escape, Tab, Shift+Tab, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, PageUp, PageDown, Home, End, Backspace. At most 20 keys per call. The page's key handlers see them; Tab moves the focus, Backspace deletes in a text field, PageUp/PageDown/Home/End scroll the page, but Enter does not submit a form by itself (use set_field with submit) and no key types text (use type). Enter in a form's field may still make the page submit it, so it falls under the duplicate-submit guard like set_field.",
		Parameters: schema(`{"type":"object","properties":{"keys":{"type":"array","items":{"type":"string"}},"resubmit":{"type":"boolean","description":"press Enter again although this form was just submitted"}},"required":["keys"]}`)},
		modes: []Mode{ModeAct}, run: pageTool("press_keys")},
	{spec: ToolSpec{Name: "scroll", Description: "Scroll the page (direction up, down, left, right, top or bottom), a scrollable element (ref and direction), or an element into view (ref alone). Returns the new scroll position and whether the end was reached.",
		Parameters: schema(`{"type":"object","properties":{"direction":{"type":"string","enum":["up","down","left","right","top","bottom"]},"ref":{"type":"string"}}}`)},
		modes: []Mode{ModeAct}, run: pageTool("scroll")},
	{spec: ToolSpec{Name: "hover", Description: "Move the pointer over an element by ref (pointer and mouse over/enter/move events), e.g. to reveal a menu.",
		Parameters: schema(`{"type":"object","properties":{"ref":{"type":"string"}},"required":["ref"]}`)},
		modes: []Mode{ModeAct}, run: pageTool("hover")},
	{spec: ToolSpec{Name: "navigate", Description: "Load another address of this same site in the tab (other sites are refused). A new page ends this page's session, so the agent stops there; the person can go on in the panel of the new page.",
		Parameters: schema(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`)},
		modes: []Mode{ModeAct}, run: pageTool("navigate")},
	{spec: ToolSpec{Name: "back", Description: "Go back one entry in the tab's history, when that entry is on this same site.",
		Parameters: schema(`{"type":"object","properties":{}}`)},
		modes: []Mode{ModeAct}, run: pageTool("back")},
	{spec: ToolSpec{Name: "forward", Description: "Go forward one entry in the tab's history, when that entry is on this same site.",
		Parameters: schema(`{"type":"object","properties":{}}`)},
		modes: []Mode{ModeAct}, run: pageTool("forward")},
	{spec: ToolSpec{Name: "wait_for", Description: "Wait until an element (ref) is visible, or text appears on the page; with gone=true until it disappears. timeoutMs up to 10000 (default 5000).",
		Parameters: schema(`{"type":"object","properties":{"ref":{"type":"string"},"text":{"type":"string"},"gone":{"type":"boolean"},"timeoutMs":{"type":"integer"}}}`)},
		modes: []Mode{ModeAct}, run: pageTool("wait_for")},
	{spec: ToolSpec{Name: "wait_for_stable", Description: "Wait until the page stops changing (no DOM change for ms, default 500), at most timeoutMs (up to 10000, default 5000): after a click that loads content, or on an infinite-scroll list.",
		Parameters: schema(`{"type":"object","properties":{"ms":{"type":"integer"},"timeoutMs":{"type":"integer"}}}`)},
		modes: []Mode{ModeAct}, run: pageTool("wait_for_stable")},
}

func init() {
	tools = append(tools, actTools...)
}

// maxDoneSummary bounds done's summary, in characters.
const maxDoneSummary = 4000

// runDone asks the Env whether the page agrees the task is finished (page tool "done": the
// proxy looks for open dialogs and forms with unsaved input, and may refuse with a *ToolError).
// On success the result is the summary, and the loop ends the turn with it (see doneSummary).
func runDone(ctx context.Context, env Env, args map[string]any, raw json.RawMessage) (string, error) {
	summary := strings.TrimSpace(args["summary"].(string))
	if summary == "" {
		return "", toolErrorf("summary is empty; say what you did")
	}
	if _, err := env.PageTool(ctx, "done", raw); err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			return "", err // the Env refused it
		}
		// Otherwise there is no page to check against (it went away): the summary stands.
	}
	return truncateRunes(summary, maxDoneSummary), nil
}

// doneSummary reports whether call was an accepted done, and its summary.
func doneSummary(call ToolCall, result string, isErr bool) (string, bool) {
	if call.Name != "done" || isErr {
		return "", false
	}
	return result, true
}
