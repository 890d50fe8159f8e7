package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Where the redactor's values come from (redact_sources.go).

func reportJSON(fields map[int]string, cookies ...string) []byte {
	var parts []string
	ids := make([]int, 0, len(fields))
	for id := range fields {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf(`{"id":%d,"value":%q}`, id, fields[id]))
	}
	var cs []string
	for _, c := range cookies {
		cs = append(cs, fmt.Sprintf("%q", c))
	}
	return []byte(`{"type":"secrets","fields":[` + strings.Join(parts, ",") + `],"cookies":[` + strings.Join(cs, ",") + `]}`)
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

// TestChatRedactorFollowsTheSecrets: a value reported after the redactor was made is removed
// at its next use (the set is compiled again when it changed), and only then.
func TestChatRedactorFollowsTheSecrets(t *testing.T) {
	cf := newChatFixture(t, `{"turns": []}`)
	c := cf.srv.chats.forSession(cf.srv.pages.List()[0])
	red := c.newRedactor(nil)
	if got := red.Redact("pw later-typed-9"); got != "pw later-typed-9" {
		t.Errorf("before the report: %q", got)
	}
	first := red.current()
	if red.current() != first {
		t.Error("the set was compiled again without a change")
	}
	// The page agent reports the value on its channel; the next use after it arrived removes it.
	if err := cf.page.Write(context.Background(), websocket.MessageText, reportJSON(map[int]string{1: "later-typed-9"})); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got := red.Redact("pw later-typed-9")
		if got == "pw [redacted: password]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the report: %q, want the password redacted", got)
		}
	}
	if got := red.Secret(`{"url":"/x?p=later-typed-9"}`); got != kindPassword {
		t.Errorf("Secret = %q, want password", got)
	}
	// A cookie the proxy sees later, in the view and in the headers.
	u, _ := url.Parse("https://" + chatSite + "/later")
	resp := &http.Response{Request: &http.Request{Method: "GET", URL: u, Header: http.Header{}},
		Header: http.Header{"Set-Cookie": {"late=late-cookie-42; Path=/; Secure"}}}
	cf.srv.fetch.Cookies().Observe(resp)
	if got := red.Redact("c late-cookie-42"); got != "c [redacted: cookie]" {
		t.Errorf("after a cookie in the view: %q", got)
	}
	cf.srv.fetch.Credentials().Observe(&http.Response{Request: &http.Request{Method: "GET", URL: u,
		Header: http.Header{"Authorization": {"Bearer hdr-token-77"}}}, Header: http.Header{}})
	if got := red.Redact("t hdr-token-77"); got != "t [redacted: authorization]" {
		t.Errorf("after an authorization header: %q", got)
	}
}
