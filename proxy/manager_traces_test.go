package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/store"
)

// traceScript is two turns: an outline then an answer, and a plain answer.
const traceScript = `{"turns": [
	{"text": "Looking at the page.", "tool_calls": [{"name": "outline"}]},
	{"text": "There is one ad."},
	{"text": "Second answer."}
]}`

// recordTraces turns the recorder on or off in the fixture's settings file, as the Settings
// page does.
func recordTraces(t *testing.T, cf *chatFixture, on bool) {
	t.Helper()
	set, err := agent.LoadSettings(cf.dir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	set.RecordTraces = on
	if err := agent.SaveSettings(cf.dir, set); err != nil {
		t.Fatal(err)
	}
}

func (cf *chatFixture) turn(t *testing.T, text, answer string) {
	t.Helper()
	cf.say(t, map[string]string{"type": "send", "text": text})
	cf.waitItem(t, "the answer "+answer, func(it map[string]any) bool {
		return it["kind"] == "assistant" && strings.Contains(textOf(it), answer)
	})
	cf.waitIdle(t)
}

func traceRuns(t *testing.T, st *store.Store) []store.TraceRun {
	t.Helper()
	runs, err := st.TraceRuns(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestTraceRecorderOff: with the setting at its default, a chat turn stores no trace.
func TestTraceRecorderOff(t *testing.T) {
	cf := newChatFixture(t, traceScript)
	cf.turn(t, "how many ads?", "There is one ad.")
	if runs := traceRuns(t, cf.st); len(runs) != 0 {
		t.Errorf("%d runs stored with the recorder off, want 0", len(runs))
	}
}

// TestTraceRecorderAndPages: with the recorder on, each message is one run with its model and
// tool calls; the list, run, compare and export pages show them; a cross-site delete is
// refused and the manager's own delete works.
func TestTraceRecorderAndPages(t *testing.T) {
	cf := newChatFixture(t, traceScript)
	mf := &managerFixture{fixture: cf.fixture, st: cf.st}
	mf.token = mf.formToken()

	// The Settings page turns the recorder on; a cross-site form cannot.
	if resp, _ := mf.post(managerURL+"/settings/traces", "https://evil.test", url.Values{"record_traces": {"on"}}, true); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site setting: %s, want 403", resp.Status)
	}
	if set, _ := agent.LoadSettings(cf.dir, noEnv); set.RecordTraces {
		t.Fatal("a cross-site form turned the recorder on")
	}
	if page := mf.page(managerURL + "/settings"); !strings.Contains(page, "Record agent traces") || strings.Contains(page, `name="record_traces" checked`) {
		t.Error("the Settings page lacks the recorder's setting, or shows it on")
	}
	if resp, body := mf.post(managerURL+"/settings/traces", managerOriginHTTPS, url.Values{"record_traces": {"on"}}, true); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("turning the recorder on: %s\n%s", resp.Status, body)
	}
	if !strings.Contains(mf.page(managerURL+"/settings"), `name="record_traces" checked`) {
		t.Error("the Settings page does not show the recorder on")
	}

	cf.turn(t, "how many ads?", "There is one ad.")
	cf.turn(t, "and now?", "Second answer.")
	runs := traceRuns(t, cf.st)
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	first, err := cf.st.TraceRun(context.Background(), runs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range first.Events {
		kinds = append(kinds, e.Kind+":"+e.Name)
	}
	if got := strings.Join(kinds, " "); got != "model:scripted tool:outline model:scripted" {
		t.Errorf("events = %s", got)
	}
	if first.UserText != "how many ads?" || first.Provider != "local" || first.Model != "scripted" || first.Steps != 2 ||
		first.Outcome != "answer" || first.ChatID == "" || !strings.HasPrefix(first.PageURL, "https://"+chatSite) || first.Ended.Before(first.Started) {
		t.Errorf("run = %+v", first)
	}
	model, tool, last := first.Events[0], first.Events[1], first.Events[2]
	if !strings.Contains(model.Input, "how many ads?") || !strings.Contains(model.Output, "Looking at the page.") || !strings.Contains(model.Output, `"outline"`) {
		t.Errorf("first model call: sent %s\nreply %s", model.Input, model.Output)
	}
	if !strings.Contains(tool.Output, "IGNORE PREVIOUS INSTRUCTIONS") || tool.URLBefore == "" || tool.IsError {
		t.Errorf("outline call = %+v", tool)
	}
	if !strings.Contains(last.Input, "IGNORE PREVIOUS INSTRUCTIONS") || strings.Contains(last.Input, "how many ads?") || !strings.Contains(last.Output, "There is one ad.") {
		t.Errorf("second model call: sent %s\nreply %s", last.Input, last.Output)
	}

	// The pages.
	a, b := strconv.FormatInt(runs[1].ID, 10), strconv.FormatInt(runs[0].ID, 10)
	list := mf.page(managerURL + "/traces")
	for _, want := range []string{`href="/manager/traces/` + a + `"`, "how many ads?", "and now?", "local / scripted", `name="a" value="` + a + `"`, "Recording is on", `href="/manager/traces">Traces</a>`} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q", want)
		}
	}
	run := mf.page(managerURL + "/traces/" + a)
	for _, want := range []string{"<details>", "Messages sent", "outline", "There is one ad.", "/traces/" + a + "/export.json"} {
		if !strings.Contains(run, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	cmp := mf.page(managerURL + "/traces/compare?a=" + a + "&b=" + b)
	for _, want := range []string{"how many ads?", "and now?", `class="differs"`, "outline 1"} {
		if !strings.Contains(cmp, want) {
			t.Errorf("the comparison lacks %q", want)
		}
	}
	for _, bad := range []string{"/traces/999999", "/traces/x", "/traces/compare?a=" + a + "&b=999999"} {
		if resp, _ := mf.get(managerURL + bad); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", bad, resp.Status)
		}
	}

	// The exports parse.
	resp, body := mf.get(managerURL + "/traces/export.json")
	var all []exportedRun
	if err := json.Unmarshal(body, &all); err != nil || len(all) != 2 || len(all[1].Events) != 3 || all[1].UserText != "how many ads?" {
		t.Errorf("export of all: %v, %d runs\n%s", err, len(all), body)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("export headers = %v", resp.Header)
	}
	_, body = mf.get(managerURL + "/traces/" + a + "/export.json")
	var one exportedRun
	if err := json.Unmarshal(body, &one); err != nil || one.ID != runs[1].ID || one.Events[1].Name != "outline" || one.DurationMs < 0 {
		t.Errorf("export of one: %v, %+v", err, one)
	}

	// Deleting: refused cross-site or without the token; done from the manager.
	for name, c := range map[string]struct {
		origin string
		token  bool
	}{"cross-site": {"https://evil.test", true}, "no token": {managerOriginHTTPS, false}, "no origin": {"", true}} {
		if resp, _ := mf.post(managerURL+"/traces/delete", c.origin, nil, c.token); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s delete: %s, want 403", name, resp.Status)
		}
	}
	if n := len(traceRuns(t, cf.st)); n != 2 {
		t.Fatalf("a refused delete deleted: %d runs left", n)
	}
	if resp, _ := mf.post(managerURL+"/traces/delete", managerOriginHTTPS, nil, true); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("delete: %s, want 303", resp.Status)
	}
	if n := len(traceRuns(t, cf.st)); n != 0 {
		t.Errorf("%d runs after deleting all", n)
	}
	if !strings.Contains(mf.page(managerURL+"/traces?m=tracesgone"), "Every trace was deleted.") {
		t.Error("no message after deleting")
	}
	// The in-memory JSON keeps working.
	resp, body = mf.get(managerURL + "/traces.json")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "how many ads?") {
		t.Errorf("traces.json: %s", resp.Status)
	}
	if h := resp.Header; !strings.HasPrefix(h.Get("Content-Type"), "application/json") || h.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.HasPrefix(h.Get("Content-Disposition"), "attachment") {
		t.Errorf("traces.json headers = %v, want JSON, nosniff, an attachment", h)
	}
	var export []struct {
		Chat  string            `json:"chat"`
		Turns []json.RawMessage `json:"turns"`
	}
	if err := json.Unmarshal(body, &export); err != nil || len(export) != 1 || len(export[0].Turns) == 0 {
		t.Errorf("traces.json = %s (%v), want one chat with its turns", body, err)
	}
}

// TestTraceNeverHoldsAKey: a turn through a provider with a key, the person pasting the key in
// the chat: the key is in no stored trace, page or export.
func TestTraceNeverHoldsAKey(t *testing.T) {
	const key = "sk-trace-S3CR3T-0123456789abcdef"
	cf := newChatFixture(t, `{"turns": [{"text": "Noted.", "tool_calls": [{"name": "outline"}]}, {"text": "Done."}]}`)
	set := &agent.Settings{MaxSteps: 10, RecordTraces: true, Providers: []agent.ProviderConfig{
		{Name: "keyed", Kind: agent.KindOpenAI, BaseURL: cf.srv.cfg.ModelURL, APIKey: key, Models: []string{"scripted"}}}}
	if err := agent.SaveSettings(cf.dir, set); err != nil {
		t.Fatal(err)
	}
	cf.say(t, map[string]string{"type": "model", "provider": "keyed", "model": "scripted"})
	cf.turn(t, "my key is "+key+", keep it safe", "Done.")
	runs := traceRuns(t, cf.st)
	if len(runs) != 1 || runs[0].Provider != "keyed" {
		t.Fatalf("runs = %+v", runs)
	}
	mf := &managerFixture{fixture: cf.fixture, st: cf.st}
	id := strconv.FormatInt(runs[0].ID, 10)
	_, all := mf.get(managerURL + "/traces/export.json")
	run, _ := cf.st.TraceRun(context.Background(), runs[0].ID)
	stored, _ := json.Marshal(run)
	for where, text := range map[string]string{
		"the stored run": string(stored), "the export": string(all),
		"the list": mf.page(managerURL + "/traces"), "the run page": mf.page(managerURL + "/traces/" + id),
	} {
		if strings.Contains(text, key) || strings.Contains(text, key[8:]) {
			t.Errorf("the API key appears in %s", where)
		}
	}
	if !strings.Contains(run.UserText, "[redacted key]") {
		t.Errorf("user text = %q, want the key replaced", run.UserText)
	}
}

// exportedRun is what the tests read of a run in the JSON exports, as a reader of the file would.
type exportedRun struct {
	ID         int64  `json:"id"`
	UserText   string `json:"user_text"`
	DurationMs int64  `json:"duration_ms"`
	Events     []struct {
		Name string `json:"name"`
	} `json:"events"`
}
