package panel

import (
	"encoding/json"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The Go constants and structs in protocol.go describe what agent.js and panel.js do; these tests
// fail when one side changes without the other.

func readStatic(t *testing.T, name string) string {
	t.Helper()
	if name == "agent.js" {
		return string(agentSource) // the documented source; the minified text renames locals
	}
	b, err := fs.ReadFile(Files(), name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestJavaScriptMatchesProtocol(t *testing.T) {
	agent := readStatic(t, "agent.js")
	panel := readStatic(t, "panel.js")
	tests := []struct {
		name, js, want string
	}{
		{"agent socket URL", agent, "'://" + Host + AgentSocketPath + "'"},
		{"agent socket subprotocol", agent, "'" + AgentProtocolPrefix + "' + token"},
		{"panel socket URL", panel, "'://" + Host + PanelSocketPath + "?" + TokenParam + "='"},
		{"panel origin", agent, "'://" + Host + "'"},
		{"panel URL", agent, "PANEL_ORIGIN + '" + PanelPath + "?" + FrameOriginParam + "=' + apply(locationOrigin, loc, [])"},
		{"panel socket names its frame's origin", panel, "'&" + FrameOriginParam + "=' + encodeURIComponent(FRAME_ORIGIN)"},
		{"panel reads its frame's origin", panel, ".get('" + FrameOriginParam + "')"},
		{"agent posts the panel token", agent, "message('" + TypePanelToken + "')"},
		{"panel takes the panel token", panel, "d.type === '" + TypePanelToken + "'"},
		{"token attribute", agent, "getAttribute('" + TokenAttr + "')"},
		{"agent: unknown token code", agent, strconv.Itoa(CloseTokenUnknown)},
		{"agent: refused code", agent, strconv.Itoa(CloseRefused)},
		{"panel: unknown token code", panel, strconv.Itoa(CloseTokenUnknown)},
		{"panel: refused code", panel, strconv.Itoa(CloseRefused)},
		{"agent sends hello", agent, "message('" + TypeHello + "')"},
		{"agent sends nav", agent, "message('" + TypeNav + "')"},
		{"agent handles welcome", agent, "type === '" + TypeWelcome + "'"},
		{"agent handles error", agent, "type === '" + TypeError + "'"},
		{"panel handles state", panel, "m.type === '" + TypeState + "'"},
		{"panel handles error", panel, "m.type === '" + TypeError + "'"},
		{"agent runs ops", agent, "type === '" + TypeOp + "'"},
		{"agent answers ops", agent, "message('" + TypeResult + "')"},
		{"agent sends events", agent, "message('" + TypeEvent + "')"},
		{"agent reports mutations", agent, "message('" + TypeMutated + "')"},
		{"agent reloads", agent, "type === '" + TypeReload + "'"},
		{"agent applies styles", agent, "type === '" + TypeStyle + "'"},
		{"agent releases remixlets", agent, "type === '" + TypeRelease + "'"},
		{"agent marks", agent, "'" + MarkPrefix + "'"},
		{"agent hides", agent, "'" + HiddenAttr + "'"},
		{"agent marks what remixlets made", agent, "'" + OwnAttr + "'"},
		{"agent reports secrets", agent, "message('" + TypeSecrets + "')"},
		{"agent reports readiness", agent, "message('" + TypeReady + "')"},
		{"agent: loading", agent, "'" + ReadyLoading + "'"},
		{"agent: DOMContentLoaded is interactive", agent, "advanceReady('" + ReadyInteractive + "')"},
		{"agent: load is complete", agent, "advanceReady('" + ReadyComplete + "')"},
		{"agent waits for elements", agent, "own(req, 'op') === 'waitFor'"},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.js, tt.want) {
			t.Errorf("%s: JavaScript lacks %q", tt.name, tt.want)
		}
	}
}

// jsonFields returns the JSON names of v's fields other than "type".
func jsonFields(v any) []string {
	var names []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name != "type" {
			names = append(names, name)
		}
	}
	return names
}

func TestAgentSendsEveryField(t *testing.T) {
	agent := readStatic(t, "agent.js")
	for _, v := range []any{Hello{}, Nav{}, PanelTokenMessage{}, Result{}, Event{}, Secrets{}, Ready{}} {
		for _, f := range jsonFields(v) {
			if !strings.Contains(agent, "m."+f+" = ") {
				t.Errorf("%T.%s: agent.js never sets m.%s", v, f, f)
			}
		}
	}
}

func TestJavaScriptReadsOnlyKnownFields(t *testing.T) {
	tests := []struct {
		js    string
		reads []string // what the JavaScript reads from a message
		msg   any
	}{
		{"agent.js", []string{"panel", "resume"}, Welcome{}},
		{"agent.js", []string{"message"}, ErrorMessage{}},
		{"agent.js", []string{"id", "remixlet", "op", "args"}, Op{}},
		{"agent.js", []string{"remixlet", "css", "own"}, Style{Own: ".a{}"}},
		{"agent.js", []string{"hosts", "rel"}, Op{Hosts: []string{"shop.test"}, Relative: true}},
		{"agent.js", []string{"remixlet"}, Release{}},
		{"panel.js", []string{"connected", "url", "title"}, State{}},
		{"panel.js", []string{"message"}, ErrorMessage{}},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.msg)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(b, &fields); err != nil {
			t.Fatal(err)
		}
		js := readStatic(t, tt.js)
		for _, f := range tt.reads {
			if _, ok := fields[f]; !ok {
				t.Errorf("%s reads %q, which %T does not have", tt.js, f, tt.msg)
			}
			if !strings.Contains(js, "'"+f+"'") && !strings.Contains(js, "m."+f) {
				t.Errorf("%s does not read %q any more; update this test", tt.js, f)
			}
		}
	}
}

// The small rmx services: the page agent handles each message type, reads the fields the Go
// types carry, and uses the same fixed texts and limits.
func TestAgentHandlesServiceMessages(t *testing.T) {
	agent := readStatic(t, "agent.js")
	for _, typ := range []string{TypeClipboard, TypeNotify, TypeMenu, TypeOpen} {
		if !strings.Contains(agent, "type === '"+typ+"'") {
			t.Errorf("agent.js does not handle %q", typ)
		}
	}
	for _, msg := range []any{Clipboard{}, Notify{}, Menu{}, MenuCommand{}, Open{}} {
		for _, f := range jsonFields(msg) {
			if !strings.Contains(agent, "'"+f+"'") {
				t.Errorf("agent.js never reads %T.%s", msg, f)
			}
		}
	}
	for _, want := range []string{
		"'" + ClipboardNoGesture + "'",
		"NOTIFY_PER_MINUTE = " + strconv.Itoa(NotifyPerMinute),
	} {
		if !strings.Contains(agent, want) {
			t.Errorf("agent.js lacks %s", want)
		}
	}
}
