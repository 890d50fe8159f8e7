package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// TestGuardsThatAnswerAtOnceComeBeforeTheSendGuard: the order of serveProxied's guards. The send
// guard (chat/sendguard.go) may wait for the person's card; every guard that answers at once
// runs before it, so a request that one of them refuses anyway is answered at once, with that
// refusal, and puts no card before the person. Through a whole chat: after an agent's click
// (its send window open for 30 s), the page's script POSTs to its own site — to an address a
// remixlet's network rule blocks, then to one nothing blocks. The blocked one must come back
// at once as the rule's 403, with no card; the other (the control: the send guard is armed)
// waits for its card, and Not now refuses it. Neither reaches the site. Moving GuardSend
// before the network rules makes the blocked POST wait for a card of its own.
//
// The other guards before GuardSend (the agent's navigation guard, the remixlets' opened
// documents and named sites) cannot refuse a request the send guard holds: the first two see
// only navigations, which the send guard leaves to the navigation guard, and a named site is
// never the page's own, which is the only site the send guard holds. The local-network check,
// which refuses at the dial, is asked before the card (TestLocalNetworkRefusalComesBeforeTheCard).
func TestGuardsThatAnswerAtOnceComeBeforeTheSendGuard(t *testing.T) {
	site := &testsite.NavSite{}
	cf := newChatFixtureWith(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"ref": "e1"}}]},
		{"text": "Clicked."}
	]}`, chatOptions{site: site})
	manifest := fmt.Sprintf(`{"name": "tracker-block", "api": 1, "matches": ["https://%s/*"], "permissions": [{"name": "netrules", "reason": "r"}]}`, chatSite)
	storetest.Create(t, cf.st, "tracker-block", store.Files{"manifest.json": []byte(manifest), "script.js": []byte(testScript),
		"rules.json": []byte(`[{"id": 1, "action": {"type": "block"}, "condition": {"urlFilter": "/api/track"}}]`)})
	cf.srv.InvalidateNetRules()

	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "press next"})
	if r := cf.waitItem(t, "the click", toolDone("click")); r["status"] != "ok" {
		t.Fatalf("click = %v", r)
	}
	cf.waitIdle(t) // the action answered: its send window runs on for 30 s

	// scriptPost sends a POST as the page's fetch does, within d.
	scriptPost := func(path string, d time.Duration) (*http.Response, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "POST", "https://"+chatSite+path, strings.NewReader(`{"n":1}`))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-origin",
			"Origin": "https://" + chatSite, "Referer": "https://" + chatSite + "/", "Content-Type": "application/json"} {
			req.Header.Set(k, v)
		}
		resp, err := cf.client.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, string(b), err
	}

	start := time.Now()
	resp, body, err := scriptPost("/api/track", 5*time.Second)
	if err != nil {
		t.Fatalf("the POST a network rule blocks was not answered at once (%v after %v): the send guard held it before the rule", err, time.Since(start).Round(time.Millisecond))
	}
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Remixproxy") != "blocked" || !strings.Contains(body, "rule 1") {
		t.Errorf("the blocked POST: got %d %q %q, want the network rule's 403", resp.StatusCode, resp.Header.Get("X-Remixproxy"), body)
	}
	if raw := cf.raw.String(); strings.Contains(raw, "/api/track") {
		t.Errorf("the panel was told of the blocked request (a card for a request refused anyway):\n%s", raw)
	}

	// The control: the send guard is armed, and a POST nothing blocks waits for its card.
	type answer struct {
		status int
		body   string
		err    error
	}
	held := make(chan answer, 1)
	go func() {
		resp, body, err := scriptPost("/api/save", 20*time.Second)
		if err != nil {
			held <- answer{err: err}
			return
		}
		held <- answer{resp.StatusCode, body, nil}
	}()
	card := cf.pendingCard(t, "submit")
	if rows := fmt.Sprint(card["rows"]); !strings.Contains(rows, "/api/save") || strings.Contains(rows, "/api/track") {
		t.Errorf("the send guard's card = %v, want one for /api/save only", card)
	}
	cf.decline(t, card["id"])
	if a := <-held; a.err != nil || a.status != http.StatusForbidden || !strings.Contains(a.body, "held back a request") {
		t.Errorf("the held POST after Not now: %d %q %v, want the send guard's 403", a.status, a.body, a.err)
	}
	if got := site.Requests(); strings.Contains(got, "POST") {
		t.Errorf("the site got a POST:\n%s", got)
	}
}

// TestLocalNetworkRefusalComesBeforeTheCard: a request the local-network check refuses anyway
// (localnet.go: a host of the chat's site that answers only a local address, asked by a page
// that is not local) puts no card before the person. Through a whole chat: after the agent's
// click, the page's script POSTs to intranet.<site>, which resolves to a device on the local
// network (127.0.0.2 here). It must come back at once with the local-network refusal, no card
// on the panel, and the device must see nothing; the control POST to the site itself still
// waits for its card. Before, the card came first, and the refusal only after Allow, at the
// dial (NOTES.perf7.md).
func TestLocalNetworkRefusalComesBeforeTheCard(t *testing.T) {
	device := &witness{seen: map[string]int{}}
	lan := listenOn(t, "127.0.0.2:0", device, true)
	intranet := "intranet." + chatSite
	cf := newChatFixtureWith(t, `{"turns": [
		{"tool_calls": [{"name": "click", "arguments": {"ref": "e1"}}]},
		{"text": "Clicked."}
	]}`, chatOptions{site: &testsite.NavSite{}, resolve: map[string]string{intranet + ":443": lan.Listener.Addr().String()},
		config: func(c *Config) {
			c.PublicAddress = func(a netip.Addr) bool { return a != netip.MustParseAddr("127.0.0.2") }
		}})
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "press next"})
	if r := cf.waitItem(t, "the click", toolDone("click")); r["status"] != "ok" {
		t.Fatalf("click = %v", r)
	}
	cf.waitIdle(t) // the action answered: its send window runs on for 30 s

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", "https://"+intranet+"/api/save", strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-site",
		"Origin": "https://" + chatSite, "Referer": "https://" + chatSite + "/", "Content-Type": "application/json"} {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := cf.client.Do(req)
	if err != nil {
		t.Fatalf("the POST to a local address was not answered at once (%v after %v): the send guard held it for a card", err, time.Since(start).Round(time.Millisecond))
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "local network") {
		t.Errorf("the POST to a local address: got %d %q, want the local-network refusal", resp.StatusCode, body)
	}
	if raw := cf.raw.String(); strings.Contains(raw, intranet) {
		t.Errorf("the panel was told of the request to a local address (a card for a request refused anyway):\n%s", raw)
	}
	if seen := keys(device); len(seen) > 0 {
		t.Errorf("the local device got %v", seen)
	}

	// The control: the send guard is armed, and a POST to the site itself waits for its card.
	held := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", "https://"+chatSite+"/api/save", strings.NewReader(`{"n":1}`))
		for k, v := range map[string]string{"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-origin",
			"Origin": "https://" + chatSite, "Referer": "https://" + chatSite + "/"} {
			req.Header.Set(k, v)
		}
		resp, err := cf.client.Do(req)
		if err != nil {
			held <- 0
			return
		}
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	card := cf.pendingCard(t, "submit")
	cf.decline(t, card["id"])
	if got := <-held; got != http.StatusForbidden {
		t.Errorf("the held POST after Not now: %d, want the send guard's 403", got)
	}
}
