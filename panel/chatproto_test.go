package panel

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The chat protocol in chatproto.go and what panel.js does must agree; these tests fail when
// one side changes without the other.

func TestPanelJSHandlesChatMessages(t *testing.T) {
	js := readStatic(t, "panel.js")
	for _, want := range []string{
		"m.type === '" + TypeChat + "'",
		"m.type === '" + TypeItem + "'",
		"m.type === '" + TypeClear + "'",
		"type: '" + TypeSend + "', text: ",
		"type: '" + TypeStop + "'",
		"type: '" + TypeNew + "'",
		"type: '" + TypeMode + "', mode: ",
		"type: '" + TypeModel + "', provider: ",
		"type: '" + TypeDecide + "', id: ",
		", allow: ",
		"type: '" + TypeResume + "', chat: ",
		"type: '" + TypeAPI + "', on: ",
		"type: '" + TypeSubmit + "', on: ",
		"type: '" + TypePlan + "', id: ",
		"type: '" + TypeActive + "'",
		"type: '" + TypeCommand + "', remixlet: ",
		", approve: ",
		", steps: ",
	} {
		if !strings.Contains(js, want) {
			t.Errorf("panel.js lacks %q", want)
		}
	}
	for _, group := range [][]string{
		{ModeAsk, ModeBuild, ModeAct},
		{KindUser, KindAssistant, KindNotice, KindTool, KindCard},
		{ToolRunning, ToolOK, ToolError},
		{CardPermissions, CardActivation, CardRequest, CardPlan, CardSubmit},
		{CardPending, CardAllowed, CardDenied, CardExpired},
	} {
		for _, s := range group {
			if !strings.Contains(js, "'"+s+"'") {
				t.Errorf("panel.js never names %q", s)
			}
		}
	}
	if !strings.Contains(js, "DEFAULT_ARM_MS = 800") || DefaultArmAfterMs != 800 {
		t.Errorf("panel.js and DefaultArmAfterMs (%d) disagree", DefaultArmAfterMs)
	}
}

func TestPanelJSReadsChatFields(t *testing.T) {
	js := readStatic(t, "panel.js")
	tests := []struct {
		msg   any
		reads []string // read in panel.js as ".field"
	}{
		{ChatMessage{}, []string{"chat", "providers", "managerURL"}},
		{ChatState{}, []string{"mode", "provider", "model", "running", "steps", "maxSteps", "inputTokens", "outputTokens", "cost", "apiAccess", "actSubmits"}},
		{Provider{}, []string{"name", "models"}},
		{ItemMessage{}, []string{"item"}},
		{Item{}, []string{"id", "kind", "md", "name", "args", "status", "result", "card", "title", "remixlet", "rows", "allow", "deny", "state", "armAfterMs", "data", "diff", "steps", "risks"}},
		{CardRemixlet{}, []string{"name", "url", "new", "made"}},
		{CodeDiff{}, []string{"file", "added", "removed"}},
	}
	for _, tt := range tests {
		fields := jsonFields(tt.msg)
		for _, f := range tt.reads {
			if !slices.Contains(fields, f) {
				t.Errorf("panel.js reads %q, which %T does not have", f, tt.msg)
			}
			if !regexp.MustCompile(`\.` + f + `\b`).MatchString(js) {
				t.Errorf("panel.js does not read %T's %q", tt.msg, f)
			}
		}
	}
	// Every field of the items and the chat state is used; Chat.ID is only for the proxy.
	for _, v := range []any{Item{}, CardRemixlet{}, Provider{}} {
		for _, f := range jsonFields(v) {
			if !regexp.MustCompile(`\.` + f + `\b`).MatchString(js) {
				t.Errorf("panel.js ignores %T's %q", v, f)
			}
		}
	}
}

// TestConfirmJSReadsCodeDiffs: the confirmation window shows every field of an activation's
// change of code, and knows each op.
func TestConfirmJSReadsCodeDiffs(t *testing.T) {
	js := readStatic(t, "confirm.js")
	for _, v := range []any{Item{Diff: []CodeDiff{}}, CodeDiff{}, CodeLine{}} {
		fields := jsonFields(v)
		if _, ok := v.(Item); ok {
			fields = []string{"diff"}
		}
		for _, f := range fields {
			if !regexp.MustCompile(`\.` + f + `\b`).MatchString(js) {
				t.Errorf("confirm.js does not read %T's %q", v, f)
			}
		}
	}
	for _, op := range []string{DiffAdded, DiffRemoved, DiffContext, DiffGap} {
		if !strings.Contains(js, "'"+op+"': 'diff-") {
			t.Errorf("confirm.js has no class for the op %q", op)
		}
	}
}

func TestMarkdownTagsMatchPanelJS(t *testing.T) {
	js := readStatic(t, "panel.js")
	m := regexp.MustCompile(`(?s)var TAGS = \[(.*?)\];`).FindStringSubmatch(js)
	if m == nil {
		t.Fatal("panel.js has no var TAGS = [...]")
	}
	var tags []string
	for _, q := range regexp.MustCompile(`'([a-z0-9]+)'`).FindAllStringSubmatch(m[1], -1) {
		tags = append(tags, q[1])
	}
	if !slices.Equal(tags, MarkdownTags) {
		t.Errorf("panel.js TAGS = %q, MarkdownTags = %q", tags, MarkdownTags)
	}
}

func TestChatJSON(t *testing.T) {
	card := ItemMessage{Type: TypeItem, Item: Item{
		ID: "k1", Kind: KindCard, Card: CardPermissions, Title: "Remixlet needs permission",
		Remixlet: &CardRemixlet{Name: "Kilo", URL: "https://remix.proxy/manager/r/rx_1"},
		Rows:     []string{"Send requests to api.shop.test"}, Allow: "Allow", Deny: "Not now",
		State: CardPending, ArmAfterMs: DefaultArmAfterMs,
	}}
	want := `{"type":"item","item":{"id":"k1","kind":"card","card":"permissions","title":"Remixlet needs permission",` +
		`"remixlet":{"name":"Kilo","url":"https://remix.proxy/manager/r/rx_1"},"rows":["Send requests to api.shop.test"],` +
		`"allow":"Allow","deny":"Not now","state":"pending","armAfterMs":800}}`
	checkJSON(t, card, want)
	checkJSON(t, ItemMessage{Type: TypeItem, Item: Item{ID: "a1", Kind: KindAssistant, MD: RenderMarkdown("*hi*")}},
		`{"type":"item","item":{"id":"a1","kind":"assistant","md":[{"t":"p","c":[{"t":"em","c":[{"t":"","x":"hi"}]}]}]}}`)
	checkJSON(t, ItemMessage{Type: TypeItem, Item: Item{ID: "t1", Kind: KindTool, Name: "query", Args: `{"selector":"a"}`, Status: ToolOK, Result: "[]"}},
		`{"type":"item","item":{"id":"t1","kind":"tool","name":"query","args":"{\"selector\":\"a\"}","status":"ok","result":"[]"}}`)
	checkJSON(t, ChatMessage{Type: TypeChat, Chat: ChatState{ID: "c", Mode: ModeAsk, Provider: "openai", Model: "m", MaxSteps: 40},
		Providers: []Provider{{Name: "openai", Models: []string{"m"}}}, ManagerURL: "https://remix.proxy/manager"},
		`{"type":"chat","chat":{"id":"c","mode":"ask","provider":"openai","model":"m","running":false,"steps":0,"maxSteps":40,`+
			`"inputTokens":0,"outputTokens":0,"cost":"","apiAccess":false,"actSubmits":false},"providers":[{"name":"openai","models":["m"]}],"managerURL":"https://remix.proxy/manager"}`)
	checkJSON(t, ClearMessage{Type: TypeClear}, `{"type":"clear"}`)
}

func checkJSON(t *testing.T, v any, want string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("%T encodes as\n%s\nwant\n%s", v, b, want)
	}
}

func TestParsePanelMessage(t *testing.T) {
	tests := []struct {
		in   string
		want any // nil: an error
	}{
		{`{"type":"send","text":"hide the ads"}`, &SendMessage{Type: TypeSend, Text: "hide the ads"}},
		{`{"type":"stop"}`, &StopMessage{Type: TypeStop}},
		{`{"type":"new"}`, &NewMessage{Type: TypeNew}},
		{`{"type":"mode","mode":"build"}`, &ModeMessage{Type: TypeMode, Mode: ModeBuild}},
		{`{"type":"model","provider":"ollama","model":"llama"}`, &ModelMessage{Type: TypeModel, Provider: "ollama", Model: "llama"}},
		{`{"type":"decide","id":"k1","allow":true}`, &DecideMessage{Type: TypeDecide, ID: "k1", Allow: true}},
		{`{"type":"decide","id":"k1"}`, &DecideMessage{Type: TypeDecide, ID: "k1"}},
		{`{"type":"decide","allow":true}`, nil},
		{`{"type":"resume","chat":"ch_1"}`, &ResumeMessage{Type: TypeResume, Chat: "ch_1"}},
		{`{"type":"api","on":true}`, &APIAccessMessage{Type: TypeAPI, On: true}},
		{`{"type":"api"}`, &APIAccessMessage{Type: TypeAPI}},
		{`{"type":"submit","on":true}`, &ActSubmitsMessage{Type: TypeSubmit, On: true}},
		{`{"type":"submit","on":false}`, &ActSubmitsMessage{Type: TypeSubmit}},
		{`{"type":"api","on":"yes"}`, nil},
		{`{"type":"plan","id":"p1","approve":true,"steps":[" Open the cart ","Remove the socks"]}`,
			&PlanMessage{Type: TypePlan, ID: "p1", Approve: true, Steps: []string{"Open the cart", "Remove the socks"}}},
		{`{"type":"plan","id":"p1","approve":false,"steps":["ignored"]}`, &PlanMessage{Type: TypePlan, ID: "p1"}},
		{`{"type":"plan","approve":false}`, nil},
		{`{"type":"plan","id":"p1","approve":true}`, nil},
		{`{"type":"plan","id":"p1","approve":true,"steps":["a","  "]}`, nil},
		{`{"type":"plan","id":"p1","approve":true,"steps":["` + strings.Repeat("a", MaxPlanStepText+1) + `"]}`, nil},
		{`{"type":"plan","id":"p1","approve":true,"steps":["1","2","3","4","5","6","7","8","9","10","11","12","13"]}`, nil},
		{`{"type":"plan","id":"p1","approve":true,"steps":[1]}`, nil},
		{`{"type":"decide","id":"k1","allow":"yes"}`, nil},
		{`{"type":"send","text":""}`, nil},
		{`{"type":"send","text":"` + strings.Repeat("a", MaxSendText+1) + `"}`, nil},
		{`{"type":"mode","mode":"root"}`, nil},
		{`{"type":"model","provider":"x"}`, nil},
		{`{"type":"approve","id":"k1"}`, nil},
		{`{"type":"state"}`, nil},
		{`not json`, nil},
		{`[]`, nil},
	}
	for _, tt := range tests {
		got, err := ParsePanelMessage([]byte(tt.in))
		if tt.want == nil {
			if err == nil {
				t.Errorf("ParsePanelMessage(%.60s) = %+v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParsePanelMessage(%.60s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}
