package chat

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
)

// send sends a request as the page's script does (hdr: name, value, …) through the pipeline's
// guards — GuardNavigation, then GuardSend, as serveProxied — and returns the status and body.
func (p *guardPipeline) send(method, rawURL string, hdr ...string) (int, string) {
	p.t.Helper()
	req := httptest.NewRequest(method, rawURL, strings.NewReader("text=as+the+agent"))
	req.RequestURI = req.URL.RequestURI()
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	r, w, done, answered := p.h.GuardNavigation(rec, req)
	if !answered {
		if !p.h.GuardSend(w, r) {
			p.rp.ServeHTTP(w, r)
		}
		done()
	}
	return rec.Code, rec.Body.String()
}

// scriptHeaders are the headers Chromium sends with a fetch, XHR or sendBeacon of a page:
// mode, Sec-Fetch-Site, then Origin and Referer when not "".
func scriptHeaders(mode, fetchSite, origin, referer string) []string {
	h := []string{"Sec-Fetch-Dest", "empty", "Sec-Fetch-Mode", mode, "Sec-Fetch-Site", fetchSite}
	if origin != "" {
		h = append(h, "Origin", origin)
	}
	if referer != "" {
		h = append(h, "Referer", referer)
	}
	return h
}

// askCounter is a confirmPost that counts its cards and answers answer, err after release is
// closed (nil: at once).
type askCounter struct {
	mu      sync.Mutex
	asked   []postAsk
	answer  bool
	err     error
	release chan struct{}
}

func (a *askCounter) confirm(ctx context.Context, p postAsk) (bool, error) {
	a.mu.Lock()
	a.asked = append(a.asked, p)
	a.mu.Unlock()
	if a.release != nil {
		select {
		case <-a.release:
		case <-ctx.Done():
			return false, errCardGone
		}
	}
	return a.answer, a.err
}

func (a *askCounter) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

// TestSendPairs: while an action is armed, which requests of a page's script wait for the
// person's card: a request that changes something (not GET, HEAD or OPTIONS), to the chat's
// site, sent by a page of an origin the action covers — by Origin, by Referer, or with neither
// by Sec-Fetch-Site — and not a navigation (GuardNavigation's). Every row is refused here (the
// person says Not now), so "held" means the site got nothing.
func TestSendPairs(t *testing.T) {
	page := "https://example.com/thread/1"
	origin := "https://example.com"
	for _, tt := range []struct {
		name   string
		method string
		url    string
		hdr    []string
		held   bool
	}{
		{"a fetch POST of the page", "POST", "https://example.com/api/reply", scriptHeaders("cors", "same-origin", origin, page), true},
		{"an XHR PUT", "PUT", "https://example.com/api/quick", scriptHeaders("cors", "same-origin", origin, page), true},
		{"a DELETE", "DELETE", "https://example.com/api/thread/1", scriptHeaders("cors", "same-origin", origin, page), true},
		{"a sendBeacon", "POST", "https://example.com/api/read", scriptHeaders("no-cors", "same-origin", origin, page), true},
		{"no-referrer: Origin null, same-origin", "POST", "https://example.com/api/thank", scriptHeaders("cors", "same-origin", "null", ""), true},
		{"no-referrer to a sibling host of the site", "POST", "https://api.example.com/share", scriptHeaders("no-cors", "same-site", "null", ""), true},
		{"the page's origin to a sibling host", "POST", "https://api.example.com/share", scriptHeaders("cors", "same-site", origin, page), true},
		{"no metadata, no initiator (a service worker's, an old browser)", "POST", "https://example.com/api/x", nil, true},
		{"plain http: Origin, no Fetch metadata", "POST", "https://example.com/api/x", []string{"Origin", origin}, true},
		{"a GET", "GET", "https://example.com/api/feed", scriptHeaders("cors", "same-origin", origin, page), false},
		{"a HEAD", "HEAD", "https://example.com/api/feed", scriptHeaders("cors", "same-origin", origin, page), false},
		{"a CORS preflight", "OPTIONS", "https://example.com/api/reply", scriptHeaders("cors", "same-origin", origin, page), false},
		{"to another site", "POST", "https://witness.test/collect", scriptHeaders("no-cors", "cross-site", origin, page), false},
		{"from another site's page", "POST", "https://example.com/api/reply", scriptHeaders("cors", "cross-site", "https://other.test", "https://other.test/"), false},
		{"from a sibling host's frame (a comments widget)", "POST", "https://comments.example.com/api/reply", scriptHeaders("cors", "same-origin", "https://comments.example.com", "https://comments.example.com/frame"), true},
		{"the browser's own (Sec-Fetch-Site none)", "POST", "https://example.com/api/reply", scriptHeaders("no-cors", "none", "", ""), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := &testsite.NavSite{}
			cf := newGuardPipeline(t, site)
			ask := &askCounter{}
			x := cf.h.nav.armAs(navOwner{owner: cf, control: `click “Post reply”`, confirmPost: ask.confirm}, "click", page, origin, nil, nil)
			code, body := cf.send(tt.method, tt.url, tt.hdr...)
			got := site.Requests()
			if tt.held {
				if code != http.StatusForbidden || got != "" || ask.count() != 1 {
					t.Fatalf("status %d, asked %d, the site got %q; want 403, one card, nothing\n%s", code, ask.count(), got, body)
				}
				if !strings.Contains(body, "remixproxy held back a request this page sent during or just after an action of the AI agent") {
					t.Errorf("the page was answered:\n%s", body)
				}
				if a := ask.asked[0]; !a.script || a.method != tt.method || a.site != "example.com" || a.control != `click “Post reply”` {
					t.Errorf("asked %+v", a)
				}
				_, err := x.finish(context.Background(), "click", false, json.RawMessage(`{}`), nil)
				want := "click: stopped by the proxy: the page's script sent a request (" + tt.method + " " + strings.SplitN(tt.url, "?", 2)[0] + ") during or after the click “Post reply” and the person chose “Not now”, so it was not sent"
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("the action's result = %v, want it to say %q", err, want)
				}
				return
			}
			// A request let go to witness.test is the reverse proxy's 502 here (its test site
			// answers only example.com).
			if code == http.StatusForbidden || ask.count() != 0 || got == "" && code != http.StatusBadGateway {
				t.Errorf("status %d, asked %d, the site got %q; want it sent unasked\n%s", code, ask.count(), got, body)
			}
		})
	}
}

// TestHoldSend: the decisions around held requests — one card however many requests wait for
// it; "Not now" refuses the same request later without another card, but the chat's next
// action asks again; Allow covers that request (method and address without query) again, and
// another request asks; a card that goes refuses; the probe's allowed card (allowSends) lets
// them go; requests are held past the action's navigation window (navAfter) until sendAfter,
// and not after; a page the agent loaded (a lease) is not held.
func TestHoldSend(t *testing.T) {
	page := "https://example.com/"
	origin := "https://example.com"
	hdr := scriptHeaders("cors", "same-origin", origin, page)
	arm := func(cf *guardPipeline, ask *askCounter) *navExpect {
		return cf.h.nav.armAs(navOwner{owner: cf, control: `click “Send”`, confirmPost: ask.confirm}, "click", page, origin, nil, nil)
	}

	t.Run("one card for two requests, then Not now for the same again", func(t *testing.T) {
		site := &testsite.NavSite{}
		cf := newGuardPipeline(t, site)
		ask := &askCounter{release: make(chan struct{})}
		x := arm(cf, ask)
		codes := sendTwoHeld(t, cf, x, ask, [2]string{"https://example.com/api/a?n=0", "https://example.com/api/a?n=1"}, hdr)
		if ask.count() != 1 || codes[0].Load() != 403 || codes[1].Load() != 403 {
			t.Fatalf("asked %d, statuses %d %d; want one card and both refused", ask.count(), codes[0].Load(), codes[1].Load())
		}
		if c, _ := cf.send("POST", "https://example.com/api/a?t=2", hdr...); c != 403 || ask.count() != 1 {
			t.Errorf("the refused request again: status %d, asked %d; want 403 with no new card", c, ask.count())
		}
		y := arm(cf, ask) // the chat's next action: its own decision
		ask.answer = true
		if c, _ := cf.send("POST", "https://example.com/api/d", hdr...); c != 200 || ask.count() != 2 {
			t.Errorf("the next action's request: status %d, asked %d; want it asked and sent", c, ask.count())
		}
		if _, err := y.finish(context.Background(), "click", false, json.RawMessage(`{}`), nil); err != nil {
			t.Errorf("the allowed action's result: %v", err)
		}
		if got := site.Requests(); got != "POST example.com/api/d" {
			t.Errorf("the site got %q", got)
		}
	})

	t.Run("Allow covers the request shown, again; another is asked about", func(t *testing.T) {
		site := &testsite.NavSite{}
		cf := newGuardPipeline(t, site)
		ask := &askCounter{answer: true}
		arm(cf, ask)
		for _, p := range []string{"/api/a?t=1", "/api/a?t=2", "/api/b"} {
			if c, body := cf.send("POST", "https://example.com"+p, hdr...); c != 200 {
				t.Errorf("%s: status %d\n%s", p, c, body)
			}
		}
		if ask.count() != 2 || site.Requests() != "POST example.com/api/a?t=1\nPOST example.com/api/a?t=2\nPOST example.com/api/b" {
			t.Errorf("asked %d, the site got %q; want two cards (a, b) and all three sent", ask.count(), site.Requests())
		}
	})

	t.Run("a refusal after the call answered waits for the chat's next tool", func(t *testing.T) {
		site := &testsite.NavSite{}
		cf := newGuardPipeline(t, site)
		ask := &askCounter{}
		x := arm(cf, ask)
		x.settle() // the call answered (finish); the window runs on
		if c, _ := cf.send("POST", "https://example.com/api/later", hdr...); c != 403 || ask.count() != 1 {
			t.Fatalf("status %d, asked %d; want it held and refused", c, ask.count())
		}
		if d := x.deniedPost(); d != "" {
			t.Errorf("the answered call's refusals = %q, want none (no result carries them)", d)
		}
		cf.h.nav.mu.Lock()
		late := cf.h.nav.sends.late[cf]
		cf.h.nav.mu.Unlock()
		if len(late) != 1 || !strings.Contains(late[0], "(POST https://example.com/api/later) during or after the click “Send”") {
			t.Errorf("kept for the next tool: %q", late)
		}
	})

	t.Run("the card goes", func(t *testing.T) {
		site := &testsite.NavSite{}
		cf := newGuardPipeline(t, site)
		ask := &askCounter{err: errCardGone}
		x := arm(cf, ask)
		if c, _ := cf.send("POST", "https://example.com/api/a", hdr...); c != 403 || site.Requests() != "" {
			t.Fatalf("status %d, the site got %q", c, site.Requests())
		}
		_, err := x.finish(context.Background(), "click", false, json.RawMessage(`{}`), nil)
		if err == nil || !strings.Contains(err.Error(), "the person did not decide") {
			t.Errorf("the action's result = %v", err)
		}
	})

	t.Run("the probe's card allowed the action", func(t *testing.T) {
		site := &testsite.NavSite{}
		cf := newGuardPipeline(t, site)
		ask := &askCounter{}
		arm(cf, ask).allowSends()
		if c, _ := cf.send("POST", "https://example.com/api/a", hdr...); c != 200 || ask.count() != 0 {
			t.Errorf("status %d, asked %d; want it sent unasked", c, ask.count())
		}
	})

	t.Run("the window is over", func(t *testing.T) {
		site := &testsite.NavSite{}
		cf := newGuardPipeline(t, site)
		var off atomic.Int64
		cf.h.nav.now = func() time.Time { return time.Now().Add(time.Duration(off.Load())) }
		ask := &askCounter{}
		x := arm(cf, ask)
		x.settle()
		off.Store(int64(navAfter + time.Second)) // past the navigations' window, within the sends'
		if c, _ := cf.send("POST", "https://example.com/api/late", hdr...); c != 403 || ask.count() != 1 {
			t.Errorf("%s after the answer: status %d, asked %d; want it held", navAfter+time.Second, c, ask.count())
		}
		off.Store(int64(sendAfter + time.Second))
		if c, _ := cf.send("POST", "https://example.com/api/a", hdr...); c != 200 || ask.count() != 1 {
			t.Errorf("status %d, asked %d; want it sent unasked", c, ask.count())
		}
	})

	t.Run("a page the agent loaded (a lease)", func(t *testing.T) {
		site := &testsite.NavSite{}
		cf := newGuardPipeline(t, site)
		ask := &askCounter{}
		var off atomic.Int64
		cf.h.nav.now = func() time.Time { return time.Now().Add(time.Duration(off.Load())) }
		u, _ := weburl.Parse(page)
		x := arm(cf, ask)
		cf.h.nav.lease(x, u, false) // a top-level document
		x.settle()
		off.Store(int64(sendAfter + time.Second)) // the action's window is over; the lease lives on
		if c, _ := cf.send("POST", "https://example.com/api/autosave", hdr...); c != 200 || ask.count() != 0 {
			t.Errorf("status %d, asked %d; want it sent unasked", c, ask.count())
		}
	})
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
	}
}

// TestScriptSendCardWords: the card for a request of the page's script names the action and the
// request (without its query) in the proxy's words, and says that messages on open connections
// (WebSocket) are not held (OPEN-ITEMS 19).
func TestScriptSendCardWords(t *testing.T) {
	sr := readSendRequest(httptest.NewRequest("PUT", "https://example.com/api/quick?token=s3cret", nil))
	cd := postCard(postAsk{method: "PUT", to: sr.url, site: "example.com", control: `press_keys “Enter”`, script: true})
	got := cd.Title + "\n" + strings.Join(cd.Rows, "\n") + "\n" + cd.Allow + "/" + cd.Deny
	want := "Let the agent's action send this?\n" +
		"During or after the agent's press_keys “Enter”, the page's script sent PUT https://example.com/api/quick?…\n" +
		"A PUT request changes something on example.com as you.\n" +
		"Messages the page sends on open connections (WebSocket) are not held.\n" +
		"Allow only if you asked for it: a page can ask the agent to do this.\n" +
		"Send it/Not now"
	if got != want {
		t.Errorf("card =\n%s\nwant\n%s", got, want)
	}
}

// TestLateSends: a refusal kept for the chat's next page tool is added once, to an answer
// (heldBack) or a tool error; an answer that is not an object keeps it for the next.
func TestLateSends(t *testing.T) {
	h := newHub(nil, context.Background())
	c := &chat{hub: h}
	note := func(why string) {
		h.nav.mu.Lock()
		h.nav.sends.noteLateLocked(c, why)
		h.nav.mu.Unlock()
	}
	note("the page's script sent a request (POST https://example.com/api/later) during or after the click “Send” and the person chose “Not now”, so it was not sent")
	if out, err := lateSends(c, json.RawMessage(`"text"`), nil); err != nil || string(out) != `"text"` {
		t.Errorf("a string answer = %s, %v; want it unchanged", out, err)
	}
	out, err := lateSends(c, json.RawMessage(`{"ok":true}`), nil)
	if err != nil || !strings.Contains(string(out), `"heldBack":"after an earlier action the proxy held back what the page then sent: the page's script sent a request (POST https://example.com/api/later)`) {
		t.Errorf("the next answer = %s, %v", out, err)
	}
	if out, _ := lateSends(c, json.RawMessage(`{"ok":true}`), nil); string(out) != `{"ok":true}` {
		t.Errorf("the answer after = %s, want it unchanged (once)", out)
	}
	note("another")
	_, err = lateSends(c, nil, &agent.ToolError{Message: "wait_for: \"Sent\" did not appear"})
	if err == nil || !strings.HasPrefix(err.Error(), "wait_for: \"Sent\" did not appear. Also, after an earlier action the proxy held back what the page then sent: another.") {
		t.Errorf("the next tool error = %v", err)
	}
}

// TestSendCardWithdrawn: a card withdrawn (the turn stopped, the page left, sendHoldMax) refuses
// the requests waiting on it, and no more: the action leaves the send guard, so the person's own
// requests afterwards (the same address or another) go unasked instead of a 403 with no card.
func TestSendCardWithdrawn(t *testing.T) {
	page := "https://example.com/"
	hdr := scriptHeaders("cors", "same-origin", "https://example.com", page)
	site := &testsite.NavSite{}
	cf := newGuardPipeline(t, site)
	ask := &askCounter{err: errCardGone, release: make(chan struct{})}
	x := cf.h.nav.armAs(navOwner{owner: cf, control: `click “Send”`, confirmPost: ask.confirm}, "click", page, "https://example.com", nil, nil)
	codes := sendTwoHeld(t, cf, x, ask, [2]string{"https://example.com/api/a", "https://example.com/api/b"}, hdr)
	if ask.count() != 1 || codes[0].Load() != 403 || codes[1].Load() != 403 || site.Requests() != "" {
		t.Fatalf("asked %d, statuses %d %d, the site got %q; want one card, both refused", ask.count(), codes[0].Load(), codes[1].Load(), site.Requests())
	}
	for _, p := range []string{"/api/a", "/api/c"} {
		if c, body := cf.send("POST", "https://example.com"+p, hdr...); c != 200 {
			t.Errorf("%s after the card was withdrawn: status %d, want it sent\n%s", p, c, body)
		}
	}
	if ask.count() != 1 {
		t.Errorf("asked %d, want no new card", ask.count())
	}
	cf.h.nav.mu.Lock()
	n := len(cf.h.nav.sends.xs)
	cf.h.nav.mu.Unlock()
	if n != 0 {
		t.Errorf("%d actions left in the send guard, want the withdrawn one dropped", n)
	}
}

// TestSendNotNowOnlyThatRequest: after "Not now" the same request (method and address without
// query) is refused again without a card; another request of the page gets its own card.
func TestSendNotNowOnlyThatRequest(t *testing.T) {
	page := "https://example.com/"
	hdr := scriptHeaders("cors", "same-origin", "https://example.com", page)
	site := &testsite.NavSite{}
	cf := newGuardPipeline(t, site)
	ask := &askCounter{}
	cf.h.nav.armAs(navOwner{owner: cf, control: `click “Send”`, confirmPost: ask.confirm}, "click", page, "https://example.com", nil, nil)
	if c, _ := cf.send("POST", "https://example.com/api/a?t=1", hdr...); c != 403 || ask.count() != 1 {
		t.Fatalf("status %d, asked %d; want it asked and refused", c, ask.count())
	}
	if c, _ := cf.send("POST", "https://example.com/api/a?t=2", hdr...); c != 403 || ask.count() != 1 {
		t.Errorf("the same request again: status %d, asked %d; want 403 with no new card", c, ask.count())
	}
	ask.answer = true
	if c, _ := cf.send("POST", "https://example.com/api/b", hdr...); c != 200 || ask.count() != 2 {
		t.Errorf("another request: status %d, asked %d; want its own card (allowed: sent)", c, ask.count())
	}
	if got := site.Requests(); got != "POST example.com/api/b" {
		t.Errorf("the site got %q", got)
	}
}

// TestSendWindowNotStretched: the page's own navigations, paired with the action after its
// answer, do not keep its requests held past sendAfter from the action's answer.
func TestSendWindowNotStretched(t *testing.T) {
	page := "https://example.com/"
	hdr := scriptHeaders("cors", "same-origin", "https://example.com", page)
	site := &testsite.NavSite{}
	cf := newGuardPipeline(t, site)
	var off atomic.Int64
	cf.h.nav.now = func() time.Time { return time.Now().Add(time.Duration(off.Load())) }
	ask := &askCounter{}
	x := cf.h.nav.armAs(navOwner{owner: cf, control: `click “Send”`, confirmPost: ask.confirm}, "click", page, "https://example.com", nil, nil)
	x.settle()
	for d := time.Second; d < sendAfter+5*time.Second; d += navAfter - time.Second {
		off.Store(int64(d))
		cf.get("https://example.com/next", testsite.NavHeaders("same-origin", page)...)
	}
	off.Store(int64(sendAfter + time.Second))
	if c, _ := cf.send("POST", "https://example.com/api/a", hdr...); c != 200 || ask.count() != 0 {
		t.Errorf("%s after the answer, the page navigating all along: status %d, asked %d; want it sent unasked", sendAfter+time.Second, c, ask.count())
	}
	cf.h.nav.mu.Lock()
	until := x.until
	cf.h.nav.mu.Unlock()
	if now := cf.h.nav.clock(); until.After(now) {
		t.Errorf("the navigations' window runs to %s from now, want it closed by the hard cap", until.Sub(now))
	}
}

// TestFormCardWords: the card for a form the action submitted, in the proxy's words (postCard's
// other card; pinned with TestScriptSendCardWords when the two were made one shape).
func TestFormCardWords(t *testing.T) {
	sr := readSendRequest(httptest.NewRequest("POST", "https://example.com/delete?id=7", nil))
	cd := postCard(postAsk{method: "post", to: sr.url, site: "example.com", control: `select “Delete my data”`})
	got := cd.Title + "\n" + strings.Join(cd.Rows, "\n") + "\n" + cd.Allow + "/" + cd.Deny
	want := "Let the agent's action submit a form?\n" +
		"The agent's select “Delete my data” made the page send a form: POST https://example.com/delete?…\n" +
		"A POST form changes something on example.com as you.\n" +
		"Allow only if you asked for it: a page can ask the agent to do this.\n" +
		"Submit it/Not now"
	if got != want || cd.Card != panel.CardSubmit || !strings.HasPrefix(cd.ID, "k") {
		t.Errorf("card %q %q =\n%s\nwant\n%s", cd.Card, cd.ID, got, want)
	}
}

// TestLateSendsEvictOldest: when the notes of maxNavExpects chats are kept, another chat's note
// pushes out the oldest chat's only; the others keep theirs, and a chat told leaves the order.
func TestLateSendsEvictOldest(t *testing.T) {
	var a sendActs
	owners := make([]*int, maxNavExpects+1)
	for i := range owners {
		owners[i] = new(int)
	}
	for _, o := range owners[:maxNavExpects] {
		a.noteLateLocked(o, "held")
	}
	a.dropLateLocked(owners[1]) // told (lateSends)
	a.noteLateLocked(owners[1], "held again")
	a.noteLateLocked(owners[maxNavExpects], "held")
	if _, ok := a.late[owners[0]]; ok {
		t.Error("the oldest chat's note was kept")
	}
	for i, o := range owners[1:] {
		if len(a.late[o]) != 1 {
			t.Fatalf("chat %d lost its note (%d kept)", i+1, len(a.late))
		}
	}
	if len(a.late) != maxNavExpects || len(a.lateOrder) != maxNavExpects {
		t.Errorf("%d chats, %d in order; want %d", len(a.late), len(a.lateOrder), maxNavExpects)
	}
}

// sendTwoHeld POSTs to both addresses at once, waits until the action x holds both, lets the
// card (ask) answer, and returns the two statuses.
func sendTwoHeld(t *testing.T, cf *guardPipeline, x *navExpect, ask *askCounter, urls [2]string, hdr []string) *[2]atomic.Int32 {
	t.Helper()
	var wg sync.WaitGroup
	var codes [2]atomic.Int32
	for i := range 2 {
		wg.Go(func() {
			c, _ := cf.send("POST", urls[i], hdr...)
			codes[i].Store(int32(c))
		})
	}
	waitFor(t, func() bool {
		cf.h.nav.mu.Lock()
		defer cf.h.nav.mu.Unlock()
		return x.holding == 2
	})
	close(ask.release)
	wg.Wait()
	return &codes
}

// TestSendMethodOverride: a GET (or HEAD) that names a changing method in the headers or the
// query parameter that frameworks honour (Rails, Laravel, ASP.NET, Express's method-override) is
// held as that method, its name read as they read it (percent-decoded); one that names a safe
// method is not.
func TestSendMethodOverride(t *testing.T) {
	page := "https://example.com/thread/1"
	hdr := scriptHeaders("cors", "same-origin", "https://example.com", page)
	for _, tt := range []struct {
		name, method, url string
		extra             []string
		want              string // the method held as; "" when not held
	}{
		{"X-HTTP-Method-Override", "GET", "https://example.com/api/thread/1", []string{"X-HTTP-Method-Override", "DELETE"}, "DELETE"},
		{"X-HTTP-Method", "GET", "https://example.com/api/thread/1", []string{"X-HTTP-Method", "put"}, "PUT"},
		{"X-Method-Override on a HEAD", "HEAD", "https://example.com/api/thread/1", []string{"X-Method-Override", "PATCH"}, "PATCH"},
		{"_method in the query", "GET", "https://example.com/api/thread/1?x=1&_method=delete", nil, "DELETE"},
		{"_method spelt in escapes", "GET", "https://example.com/api/thread/1?%5Fmethod=delete", nil, "DELETE"},
		{"_method with an escaped letter", "GET", "https://example.com/api/thread/1?x=1&_m%65thod=delete", nil, "DELETE"},
		{"an override naming GET", "GET", "https://example.com/api/feed", []string{"X-HTTP-Method-Override", "GET"}, ""},
		{"_method=get", "GET", "https://example.com/api/feed?_method=get", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := &testsite.NavSite{}
			cf := newGuardPipeline(t, site)
			ask := &askCounter{}
			cf.h.nav.armAs(navOwner{owner: cf, control: `click “Remove”`, confirmPost: ask.confirm}, "click", page, "https://example.com", nil, nil)
			code, body := cf.send(tt.method, tt.url, append(append([]string{}, hdr...), tt.extra...)...)
			if tt.want == "" {
				if code == http.StatusForbidden || ask.count() != 0 || site.Requests() == "" {
					t.Errorf("status %d, asked %d, the site got %q; want it sent unasked\n%s", code, ask.count(), site.Requests(), body)
				}
				return
			}
			if code != http.StatusForbidden || ask.count() != 1 || site.Requests() != "" {
				t.Fatalf("status %d, asked %d, the site got %q; want it held\n%s", code, ask.count(), site.Requests(), body)
			}
			if got := ask.asked[0].method; got != tt.want {
				t.Errorf("carded as %s, want %s", got, tt.want)
			}
		})
	}
}

// TestSendPairsOtherSite: a request to another registrable domain (a site whose API lives on
// another domain) is held when the chat page's own origin sends it as a CORS request carrying
// the person's credentials for that domain (a cookie, or an Authorization header) — it acts as
// the person there; the card names that domain. A no-cors beacon, a CORS request without
// credentials, and another origin's request (a third-party widget's frame) are not held.
func TestSendPairsOtherSite(t *testing.T) {
	page := "https://example.com/thread/1"
	origin := "https://example.com"
	cors := scriptHeaders("cors", "cross-site", origin, page)
	with := func(h []string, more ...string) []string { return append(append([]string{}, h...), more...) }
	for _, tt := range []struct {
		name string
		hdr  []string
		held bool
	}{
		{"a CORS POST with the person's cookie for the API's domain", with(cors, "Cookie", "sid=1"), true},
		{"a CORS POST with an Authorization header", with(cors, "Authorization", "Bearer t"), true},
		{"a CORS POST without credentials (an analytics call)", cors, false},
		{"a no-cors beacon with cookies", with(scriptHeaders("no-cors", "cross-site", origin, page), "Cookie", "_ga=1"), false},
		{"a widget's frame of the API's domain", with(scriptHeaders("cors", "same-origin", "https://witness.test", "https://witness.test/w"), "Cookie", "sid=1"), false},
		{"a sibling host of the chat's site sending it", with(scriptHeaders("cors", "cross-site", "https://ads.example.com", "https://ads.example.com/"), "Cookie", "sid=1"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := &testsite.NavSite{}
			cf := newGuardPipeline(t, site)
			ask := &askCounter{}
			cf.h.nav.armAs(navOwner{owner: cf, control: `click “Post reply”`, confirmPost: ask.confirm}, "click", page, origin, nil, nil)
			code, body := cf.send("POST", "https://witness.test/api/reply", tt.hdr...)
			if !tt.held {
				if code == http.StatusForbidden || ask.count() != 0 {
					t.Errorf("status %d, asked %d; want it sent unasked\n%s", code, ask.count(), body)
				}
				return
			}
			if code != http.StatusForbidden || ask.count() != 1 {
				t.Fatalf("status %d, asked %d; want it held\n%s", code, ask.count(), body)
			}
			if a := ask.asked[0]; a.site != "witness.test" || a.to.Origin() != "https://witness.test" {
				t.Errorf("the card names %q (%s), want the API's domain", a.site, a.to.Origin())
			}
		})
	}
}
