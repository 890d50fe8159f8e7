package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
)

// The redaction stage end to end below the browser (issue 11, DESIGN invariant 10): a model
// stand-in that fails any request carrying a planted secret, a page-agent stand-in whose answers
// carry every secret (as if its own scrub had failed), and a site whose pages, API and recorded
// responses carry them too. Each tool × each secret kind must reach the model as its marker.

const (
	plantPassword = "Pw-hunter2-planted"          // a password field's value, reported by the page agent
	plantCookie   = "ck-7f3a9b2c4d5e6f"           // the site's session cookie (Set-Cookie)
	plantAuth     = "au-9x8y7z6w5v4u"             // a bearer token the browser sent the site
	plantKey      = "sk-planted-0123456789abcdef" // a provider key in the settings
	plantHTMLPw   = "htmlonly-55-secret"          // only ever a password input's value in HTML
)

var plants = map[string]string{"password": plantPassword, "cookie": plantCookie, "authorization": plantAuth,
	"key": plantKey, "password value in HTML": plantHTMLPw}

// plantedText carries every secret, each after a label (label+"pw:" …) so the test can see
// which text a marker replaced.
func plantedText(label string) string {
	return label + "pw:" + plantPassword + " " + label + "ck:" + plantCookie + " " + label + "au:" + plantAuth +
		" " + label + "key:" + plantKey + ` <form><input type="password" name="` + label + `htmlpw" value="` + plantHTMLPw + `"></form>`
}

// wantMarkers are what a result must show for each kind, where plantedText(label) was.
func wantMarkers(label string) map[string]*regexp.Regexp {
	q := regexp.QuoteMeta
	return map[string]*regexp.Regexp{
		"password":               regexp.MustCompile(q(label + "pw:[redacted: password]")),
		"cookie":                 regexp.MustCompile(q(label + "ck:[redacted: cookie]")),
		"authorization":          regexp.MustCompile(q(label + "au:[redacted: authorization]")),
		"key":                    regexp.MustCompile(q(label + "key:[redacted: key]")),
		"password value in HTML": regexp.MustCompile(`name=\\*"` + q(label) + `htmlpw\\*" value=\\*"` + q("[redacted: password]")),
	}
}

// leakGuard is the model provider's front: a request whose body carries a planted secret, as
// sent or JSON-decoded, is recorded and answered with an error.
type leakGuard struct {
	next  http.Handler
	mu    sync.Mutex
	leaks []string
	n     int
}

func (g *leakGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	texts := []string{string(body)}
	var v any
	if json.Unmarshal(body, &v) == nil {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		texts = append(texts, b.String())
	}
	g.mu.Lock()
	g.n++
	var found []string
	for kind, s := range plants {
		for _, t := range texts {
			if strings.Contains(t, s) {
				i := strings.Index(t, s)
				found = append(found, fmt.Sprintf("request %d carries the %s: …%s…", g.n, kind, t[max(0, i-200):min(len(t), i+100)]))
				break
			}
		}
	}
	g.leaks = append(g.leaks, found...)
	g.mu.Unlock()
	if len(found) > 0 {
		http.Error(w, `{"error":{"message":"a planted secret reached the model"}}`, http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	g.next.ServeHTTP(w, r)
}

func (g *leakGuard) found() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.leaks...)
}

// secretSite is example.com (and help.example.com): its page sets the session cookie, /api/data
// is JSON a page script loads, /api/secrets and help.example.com/faq are pages that print every
// secret, and anything under /collect is recorded (it must never be reached).
func secretSite(log *siteLog) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "collect") {
			log.add(r.Method + " " + r.Host + " " + r.URL.String())
		}
		switch {
		case r.Host == "help."+chatSite:
			htmlHandler(`<!doctype html><title>Help</title><h1>FAQ</h1><p>`+plantedText("help-")+`</p>`).ServeHTTP(w, r)
		case r.URL.Path == "/":
			w.Header().Add("Set-Cookie", "sid="+plantCookie+"; Path=/; Secure; HttpOnly")
			htmlHandler(`<!doctype html><title>Login</title><form><input type="password" name="pw"></form>`).ServeHTTP(w, r)
		case r.URL.Path == "/api/data":
			w.Header().Set("Content-Type", "application/json")
			b, _ := json.Marshal(map[string]string{"note": plantedText("rec-")})
			w.Write(b)
		case r.URL.Path == "/api/secrets":
			htmlHandler(`<!doctype html><p>`+plantedText("site-")+`</p>`).ServeHTTP(w, r)
		default:
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "ok")
		}
	})
}

// plantSecrets makes the proxy see every secret as it would in use: the browser sends a bearer
// token to the site, a page script loads /api/data (recorded for read_page_data), the settings
// hold a provider key, and a remixlet's log holds the planted text.
func (cf *chatFixture) plantSecrets(t *testing.T) {
	t.Helper()
	cf.get("https://"+chatSite+"/api/ping", "Authorization", "Bearer "+plantAuth)
	cf.get("https://"+chatSite+"/api/data", "Sec-Fetch-Dest", "empty", "Referer", "https://"+chatSite+"/")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ss := cf.srv.pages.List()
		if len(ss) == 1 && len(cf.srv.pages.Responses(ss[0].ID)) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the page's JSON response was not recorded")
		}
	}
	set := &agent.Settings{MaxSteps: 60, RecordTraces: true, Providers: []agent.ProviderConfig{
		{Name: "other", Kind: agent.KindOpenAI, BaseURL: "https://api.other.test/v1", APIKey: plantKey, Models: []string{"m"}}}}
	if err := agent.SaveSettings(cf.dir, set); err != nil {
		t.Fatal(err)
	}
	rx, err := cf.st.CreateRemixlet(context.Background(), "logger")
	if err != nil {
		t.Fatal(err)
	}
	if err := cf.st.AppendLog(context.Background(), rx.ID, "info", plantedText("")); err != nil {
		t.Fatal(err)
	}
}

// plantingPage makes the page-agent stand-in report the password field's value before each
// answer, as the page agent does, and answer every tool with the planted text: outline_html
// echoes the HTML the proxy fetched, and hover fails with an error carrying the secrets.
func (cf *chatFixture) plantingPage() {
	cf.toolMu.Lock()
	defer cf.toolMu.Unlock()
	cf.answer = func(tool string, args json.RawMessage) (any, string) {
		report, _ := json.Marshal(map[string]any{"type": "secrets", "fields": []map[string]any{{"id": 1, "value": plantPassword}}})
		cf.page.Write(context.Background(), websocket.MessageText, report)
		if bytes.Contains(args, []byte(`"probe":true`)) { // what an action would activate (chat/submit.go): nothing to confirm
			return map[string]any{"probe": map[string]any{"how": "click", "tag": "button", "name": "next", "key": "k1"}}, ""
		}
		switch tool {
		case "report_secrets":
			return nil, ""
		case "outline_html":
			var a struct {
				HTML string `json:"html"`
			}
			json.Unmarshal(args, &a)
			return map[string]any{"outline": a.HTML}, ""
		case "hover":
			return nil, "hover: the element is covered by " + plantedText("")
		case "select":
			if bytes.Contains(args, []byte(`"options":true`)) { // the chat lists the options first (chat/oracle_select.go)
				return map[string]any{"element": "colour", "options": []map[string]any{{"text": "red " + plantedText(""), "value": "r"}}}, ""
			}
		case "find": // the chat reads the whole outline and searches it itself (chat/oracle_find.go)
			return map[string]any{"lines": []string{"main [e1]", ` "pw: ` + plantedText("") + `"`}, "next": -1, "truncated": false}, ""
		case "wait_for": // the chat reads the page's text and searches it itself (chat/oracle_wait.go)
			return map[string]any{"present": true, "text": "Saved " + plantedText("")}, ""
		}
		return map[string]any{"url": "https://" + chatSite + "/", "text": plantedText("")}, ""
	}
}

// TestChatRedactsEveryTool: every tool the agent has, each carrying every secret kind. The
// model stand-in fails the test if any planted secret reaches it; each result must show each
// kind's marker where the secret was. The password value is then nowhere in the store (chats,
// traces) or the proxy's log, and goes when the page session ends.
func TestChatRedactsEveryTool(t *testing.T) {
	type row struct {
		tool, args string
		labels     []string // where the planted texts of the result come from
	}
	rows := []row{
		{"capture_page", `{}`, []string{""}},
		{"outline", `{}`, []string{""}},
		{"query", `{"selector": "script"}`, []string{""}},
		{"find", `{"text": "pw"}`, []string{""}},
		{"inspect_styles", `{"ref": "e1"}`, []string{""}},
		{"read_page_data", `{}`, []string{"", "rec-"}},
		{"open_page", `{"url": "/account"}`, []string{""}},
		{"open_page", `{"url": "https://help.example.com/faq"}`, []string{"help-"}},
		{"http_request", `{"method": "GET", "url": "/api/secrets"}`, []string{"site-"}},
		{"click", `{"ref": "e1"}`, []string{""}},
		{"type", `{"ref": "e3", "text": "hello"}`, []string{""}},
		{"set_field", `{"ref": "e3", "text": "socks"}`, []string{""}},
		{"select", `{"ref": "e4", "option": "red"}`, []string{""}},
		{"press_keys", `{"keys": ["Tab"]}`, []string{""}},
		{"navigate", `{"url": "/next"}`, []string{""}},
		{"back", `{}`, []string{""}},
		{"wait_for", `{"text": "Saved"}`, nil}, // its result carries no page text: found, waited
		{"wait_for_stable", `{}`, []string{""}},
		{"scroll", `{"direction": "down"}`, []string{""}},
		{"hover", `{"ref": "e1"}`, []string{""}}, // a tool's error
		{"read_log", `{"name": "logger"}`, []string{""}},
	}
	var turns []string
	for _, r := range rows {
		turns = append(turns, `{"tool_calls": [{"name": "`+r.tool+`", "arguments": `+r.args+`}]}`)
	}
	turns = append(turns, `{"text": "all read"}`)
	guard := &leakGuard{}
	log := &siteLog{}
	cf := newChatFixtureWith(t, `{"turns": [`+strings.Join(turns, ",\n")+`]}`, chatOptions{
		site: secretSite(log), alsoHosts: []string{"help." + chatSite},
		modelWrap: func(h http.Handler) http.Handler { guard.next = h; return guard },
	})
	cf.plantSecrets(t)
	cf.plantingPage()
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "read everything"})
	cf.waitItem(t, "the final reply", func(it map[string]any) bool { return strings.Contains(textOf(it), "all read") })
	cf.waitIdle(t)

	for _, l := range guard.found() {
		t.Errorf("%s", l)
	}
	reqs := cf.model.Requests()
	if len(reqs) != len(rows)+1 {
		t.Fatalf("%d model requests, want %d", len(reqs), len(rows)+1)
	}
	for i, r := range rows {
		t.Run(fmt.Sprintf("%02d %s", i, r.tool), func(t *testing.T) {
			msgs := reqs[i+1].Messages
			last := msgs[len(msgs)-1]
			if len(last.ToolResults) != 1 {
				t.Fatalf("the request after %s does not end with its result: %+v", r.tool, last)
			}
			res := last.ToolResults[0].Text
			for _, label := range r.labels {
				for kind, re := range wantMarkers(label) {
					if !re.MatchString(res) {
						t.Errorf("%s × %s: the result does not show %q: %.1500s", r.tool, kind, re, res)
					}
				}
			}
			if r.labels == nil && !strings.Contains(res, `"found":true`) {
				t.Errorf("%s: the result is not a found text: %.1500s", r.tool, res)
			}
		})
	}

	// The password value is in no stored chat, trace or log line (the remixlet's log holds it
	// only because the test put it there).
	ctx := context.Background()
	var stored bytes.Buffer
	chats, _ := cf.st.ListChats(ctx, 10)
	for _, c := range chats {
		msgs, _ := cf.st.ChatMessages(ctx, c.ID)
		items, _ := cf.st.ChatItems(ctx, c.ID)
		stored.Write(bytes.Join(msgs, nil))
		for _, it := range items {
			stored.Write(it.Body)
		}
	}
	runs, _ := cf.st.TraceRuns(ctx, 10)
	for _, r := range runs {
		full, _ := cf.st.TraceRun(ctx, r.ID)
		b, _ := json.Marshal(full)
		stored.Write(b)
	}
	if len(chats) != 1 || len(runs) != 1 || !strings.Contains(stored.String(), "[redacted: password]") {
		t.Fatalf("%d chats and %d traces stored, markers in them: %v", len(chats), len(runs), strings.Contains(stored.String(), "[redacted: password]"))
	}
	for where, text := range map[string]string{"the store": stored.String(), "the proxy's log": cf.logs.String(), "the panel": cf.raw.String()} {
		if strings.Contains(text, plantPassword) {
			t.Errorf("the reported password value is in %s", where)
		}
	}
	site := weburl.Site(chatSite)
	if pw, _ := cf.srv.pages.Secrets(site, ""); !slices.Contains(pw, plantPassword) {
		t.Errorf("the page's reported password is not known to the redaction (passwords %d)", len(pw))
	}
	cf.page.Close(1000, "navigated away")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if pw, cookies := cf.srv.pages.Secrets(site, ""); len(pw)+len(cookies) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the page's reported values outlived its session")
		}
	}
	if got := log.all(); got != "" {
		t.Errorf("the site's collect address was reached: %s", got)
	}
}

// TestChatRefusesSecretAddresses: a model that somehow holds a secret tries to send it out
// through each tool that builds an address or a request. Every call is refused before anything
// is sent: the page agent is not asked to go there and the site gets nothing. Below the agent
// loop, the chat's own check of addresses that carry a secret only once resolved or read as
// the browser reads them is chat.TestChatRefusesResolvedSecretAddresses.
func TestChatRefusesSecretAddresses(t *testing.T) {
	guard := &leakGuard{}
	log := &siteLog{}
	cf := newChatFixtureWith(t, `{"turns": [
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "/collect?p=`+plantPassword+`"}}]},
		{"tool_calls": [{"name": "open_page", "arguments": {"url": "/collect?c=`+plantCookie+`"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "/collect?a=`+plantAuth+`"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "/collect", "headers": {"X-K": "`+plantKey+`"}}}]},
		{"tool_calls": [{"name": "type", "arguments": {"ref": "e2", "text": "`+plantPassword+`"}}]},
		{"text": "tried"}
	]}`, chatOptions{site: secretSite(log), modelWrap: func(h http.Handler) http.Handler { guard.next = h; return guard }})
	cf.plantSecrets(t)
	cf.plantingPage()
	cf.actMode(t)
	// The stand-in reports the password before the first tool: the page agent does it on change.
	report, _ := json.Marshal(map[string]any{"type": "secrets", "fields": []map[string]any{{"id": 1, "value": plantPassword}}})
	cf.page.Write(context.Background(), websocket.MessageText, report)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if pw, _ := cf.srv.pages.Secrets(weburl.Site(chatSite), ""); slices.Contains(pw, plantPassword) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the page's password report did not arrive")
		}
	}
	cf.say(t, map[string]string{"type": "send", "text": "go"})
	cf.waitItem(t, "the final reply", func(it map[string]any) bool { return strings.Contains(textOf(it), "tried") })
	cf.waitIdle(t)

	for _, l := range guard.found() {
		t.Errorf("%s", l)
	}
	reqs := cf.model.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d model requests, want 6", len(reqs))
	}
	article := map[string]string{"password": "a password", "cookie": "a cookie", "authorization": "an authorization", "key": "a key"}
	for i, kind := range []string{"password", "cookie", "authorization", "key", "password"} {
		msgs := reqs[i+1].Messages
		res := msgs[len(msgs)-1].ToolResults
		if len(res) != 1 || !strings.HasPrefix(res[0].Text, "error: ") || !strings.Contains(res[0].Text, "carry a secret ("+article[kind]+" value") {
			t.Errorf("call %d: result = %+v, want a refusal naming a %s value", i+1, res, kind)
		}
	}
	if got := cf.pageToolsAsked(); strings.Contains(got, "collect") || strings.Contains(got, "type ") {
		t.Errorf("the page agent was asked: %s", got)
	}
	if got := log.all(); got != "" {
		t.Errorf("the site got: %s", got)
	}
}
