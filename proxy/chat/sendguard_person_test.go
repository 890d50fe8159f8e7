package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// personSendWorld is a pipeline with a clock the test moves, one chat's action armed on
// https://example.com/, and a card that answers "Not now".
type personSendWorld struct {
	cf   *guardPipeline
	site *testsite.NavSite
	ask  *askCounter
	off  atomic.Int64
	// pagesURL serves the page hub's agent channel; sessions are the ids of the pages openPage
	// opened, in order.
	pagesURL string
	sessions []string
}

func newPersonSendWorld(t *testing.T) *personSendWorld {
	site := &testsite.NavSite{}
	w := &personSendWorld{cf: newGuardPipeline(t, site), site: site, ask: &askCounter{}}
	w.cf.h.nav.now = func() time.Time { return time.Now().Add(time.Duration(w.off.Load())) }
	return w
}

// act arms an action of the chat; settle ends its call.
func (w *personSendWorld) act() *navExpect {
	return w.cf.h.nav.armAs(navOwner{owner: w.cf, control: `click “Send”`, confirmPost: w.ask.confirm}, "click", "https://example.com/", "https://example.com", nil, nil)
}

// report records the person's input in the page session id at address addr (as the proxy
// noted it), which the page agent knows as at ("" for the same).
func (w *personSendWorld) report(id, addr, at string) {
	u, err := weburl.Parse(addr)
	if err != nil {
		panic(err)
	}
	raw, _ := json.Marshal(panel.PersonInput{Type: panel.TypePersonInput, URL: at})
	w.cf.h.nav.personInputReported(personInputOf(page.Info{ID: id, URL: addr, Origin: u.Origin()}, raw))
}

// postFrom is post from the page at referer (its origin the initiator).
func (w *personSendWorld) postFrom(t *testing.T, referer, path string) bool {
	t.Helper()
	u, err := weburl.Parse(referer)
	if err != nil {
		t.Fatal(err)
	}
	return w.postWith(t, path, scriptHeaders("cors", "same-origin", u.Origin(), referer))
}

// wait moves the clock on by d.
func (w *personSendWorld) wait(d time.Duration) { w.off.Add(int64(d)) }

// post sends a fetch POST of a page of origin to path on example.com; it reports whether the
// site got it (false: held and refused).
func (w *personSendWorld) post(t *testing.T, origin, path string) bool {
	t.Helper()
	return w.postWith(t, path, scriptHeaders("cors", "same-site", origin, origin+"/"))
}

// postWith is post with the headers h.
func (w *personSendWorld) postWith(t *testing.T, path string, h []string) bool {
	t.Helper()
	return w.postTo(t, "example.com", path, h)
}

// postTo is postWith to host.
func (w *personSendWorld) postTo(t *testing.T, host, path string, h []string) bool {
	t.Helper()
	before := w.ask.count()
	code, body := w.cf.send("POST", "https://"+host+path, h...)
	sent := strings.Contains(w.site.Requests(), "POST "+host+path)
	switch {
	case sent && (code != http.StatusOK || w.ask.count() != before):
		t.Fatalf("%s%s: sent with status %d after %d cards (had %d)\n%s", host, path, code, w.ask.count(), before, body)
	case !sent && (code != http.StatusForbidden || w.ask.count() == before && !strings.Contains(body, "“Not now”")):
		t.Fatalf("%s%s: not sent, status %d, no card\n%s", host, path, code, body)
	}
	return sent
}

// TestPersonSendsGoUncarded: within the send guard's window, a request that closely follows the
// person's own input on a page of its origin goes without a card; the agent's action cannot
// take the person's report: not during its call, not with a report older than its answer, not
// from another origin, not past the report's time, its burst or its uses; and a report may trail
// its request by a little.
func TestPersonSendsGoUncarded(t *testing.T) {
	const page = "https://example.com"
	// The page each post's Referer names (post: origin+"/") reports the input.
	person := func(w *personSendWorld, origin string) { w.report("s1", origin+"/", "") }
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, w *personSendWorld)
	}{
		{"the person's click after the action answered: their post goes", func(t *testing.T, w *personSendWorld) {
			w.act().settle()
			w.wait(5 * time.Second)
			person(w, page)
			w.wait(200 * time.Millisecond)
			if !w.post(t, page, "/api/send") {
				t.Error("the person's own post was held")
			}
		}},
		{"during the action's own call: held, whatever the person did", func(t *testing.T, w *personSendWorld) {
			w.act()
			person(w, page)
			if w.post(t, page, "/api/send") {
				t.Error("a post during the agent's call went as the person's")
			}
		}},
		{"the person's click a second before the agent's: the agent's post is held", func(t *testing.T, w *personSendWorld) {
			x := w.act()
			x.settle()
			w.wait(5 * time.Second)
			person(w, page) // the person clicks something that posts nothing
			w.wait(time.Second)
			w.act().settle() // the agent clicks "Send"; its script posts
			w.wait(100 * time.Millisecond)
			if w.post(t, page, "/api/send") {
				t.Error("the person's earlier click released the agent's post")
			}
		}},
		{"a report of another origin of the site", func(t *testing.T, w *personSendWorld) {
			w.act().settle()
			person(w, "https://evil.example.com")
			if w.post(t, page, "/api/send") {
				t.Error("another origin's report released the page's post")
			}
		}},
		{"a request with no initiator (Origin null, no Referer)", func(t *testing.T, w *personSendWorld) {
			w.act().settle()
			person(w, page)
			code, _ := w.cf.send("POST", "https://example.com/api/thank", scriptHeaders("cors", "same-origin", "null", "")...)
			if code != http.StatusForbidden {
				t.Errorf("status %d, want it held", code)
			}
		}},
		{"past the report's time", func(t *testing.T, w *personSendWorld) {
			w.act().settle()
			person(w, page)
			w.wait(personSendTTL + 100*time.Millisecond)
			if w.post(t, page, "/api/later") {
				t.Error("a post 2.1 s after the person's input went as theirs")
			}
		}},
		{"one report: a burst of a few, then spent", func(t *testing.T, w *personSendWorld) {
			w.act().settle()
			person(w, page)
			for i := range personSendUses {
				if !w.post(t, page, "/api/send/"+string(rune('a'+i))) {
					t.Fatalf("request %d of the person's burst was held", i+1)
				}
			}
			if w.post(t, page, "/api/send/more") {
				t.Error("a report released more than personSendUses requests")
			}
		}},
		{"after the burst: the agent's late post finds the report spent", func(t *testing.T, w *personSendWorld) {
			w.act().settle()
			w.wait(3 * time.Second)
			person(w, page)
			if !w.post(t, page, "/api/like") {
				t.Fatal("the person's like was held")
			}
			w.wait(personSendBurst + 100*time.Millisecond) // the agent's undo-window post lands
			if w.post(t, page, "/api/send") {
				t.Error("the agent's late post went on the person's spent report")
			}
		}},
		{"a report that trails its request", func(t *testing.T, w *personSendWorld) {
			w.act().settle()
			go func() {
				time.Sleep(100 * time.Millisecond)
				person(w, page)
			}()
			if !w.post(t, page, "/api/send") {
				t.Error("the person's post whose report came 100 ms later was held")
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, newPersonSendWorld(t))
		})
	}
}

// TestPersonInputsBounded: reports are dropped when the send guard holds nothing, and kept to
// maxPersonInputsPerPage a page session and maxPersonInputs in all.
func TestPersonInputsBounded(t *testing.T) {
	w := newPersonSendWorld(t)
	g := &w.cf.h.nav
	w.report("s1", "https://example.com/", "")
	if n := len(g.sends.inputs); n != 0 {
		t.Fatalf("with no action, %d reports kept", n)
	}
	w.act()
	w.report("other", "https://example.com/other", "")
	for range maxPersonInputs + 10 {
		w.report("s1", "https://example.com/", "")
	}
	if n := len(g.sends.inputs); n != maxPersonInputsPerPage+1 || g.sends.inputs[0].session != "other" {
		t.Errorf("%d reports kept, the first of %q; want %d, the other page's first", n, g.sends.inputs[0].session, maxPersonInputsPerPage+1)
	}
	for i := range maxPersonInputs + 10 {
		w.report(fmt.Sprint("page", i), "https://example.com/", "")
	}
	if n := len(g.sends.inputs); n != maxPersonInputs {
		t.Errorf("%d reports kept, want %d", n, maxPersonInputs)
	}
}

// TestPersonSendArrivedDuringTheCall: a request that reached the guard while the action's call
// ran stays held when the call answers and the person's input comes before the guard looks at
// the request again (within personSendRace): it was sent during the call, whatever the person
// did after (the top of sendguard_person.go).
func TestPersonSendArrivedDuringTheCall(t *testing.T) {
	w := newPersonSendWorld(t)
	g := &w.cf.h.nav
	x := w.act()
	r := httptest.NewRequest("POST", "https://example.com/api/send", nil)
	h := scriptHeaders("cors", "same-origin", "https://example.com", "https://example.com/")
	for i := 0; i+1 < len(h); i += 2 {
		r.Header.Set(h[i], h[i+1])
	}
	sr := readSendRequest(r)
	arrived := g.clock() // the page's script posts during the agent's click
	w.wait(50 * time.Millisecond)
	x.settle() // the click answers
	w.wait(50 * time.Millisecond)
	w.report("s1", "https://example.com/", "") // the person clicks a control
	g.mu.Lock()
	released, hopeless := g.personSendLocked(sr, arrived, g.clock())
	g.mu.Unlock()
	if released || !hopeless {
		t.Errorf("released %v, hopeless %v: a post sent during the agent's call went as the person's", released, hopeless)
	}
}

// TestPersonInputIsThePages: a report of the person's input releases only the posts of the page
// that reported it, paired by the request's Referer — the page's address as the proxy noted it
// at navigation, or as the page agent knows it (a same-origin SPA navigation). Two tabs of one
// origin: the person's input in tab B does not release tab A's late post (OPEN-ITEMS 122).
func TestPersonInputIsThePages(t *testing.T) {
	const inbox, notes = "https://example.com/inbox", "https://example.com/notes?id=4"
	for _, tt := range []struct {
		name    string
		at      string // the address the page agent reports ("": the noted one)
		referer string // of the post
		want    bool
	}{
		{"the reporting page's own post", "", notes, true},
		{"another tab of the origin: its late post is held", "", inbox, false},
		{"the page's address after a same-origin SPA navigation", "https://example.com/notes/draft", "https://example.com/notes/draft", true},
		{"the noted address still counts after it", "https://example.com/notes/draft", notes, true},
		{"a Referer of the origin alone, the page not its origin's only live session: held", "", "https://example.com/", false},
		{"a page agent naming another origin's page: not counted", "https://evil.example.com/inbox", "https://evil.example.com/inbox", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newPersonSendWorld(t)
			w.act().settle()
			w.wait(3 * time.Second)
			w.report("tabB", notes, tt.at) // the person clicks a control in tab B
			w.wait(200 * time.Millisecond)
			if got := w.postFrom(t, tt.referer, "/api/send"); got != tt.want {
				t.Errorf("a post from %s after tab B's report (at %q): sent %v, want %v", tt.referer, tt.at, got, tt.want)
			}
		})
	}
}

// openPage opens a page session of addr in the world's page hub (made on first use), as the
// page agent of a tab on addr does, and returns its socket.
func (w *personSendWorld) openPage(t *testing.T, addr string) *websocket.Conn {
	t.Helper()
	h := w.cf.h
	if h.pages == nil {
		h.pages = page.New(page.Config{Secret: []byte("k"), Logger: h.log})
		h.pages.AddListener(h)
		srv := httptest.NewServer(http.HandlerFunc(h.pages.ServeAgentWS))
		t.Cleanup(srv.Close)
		w.pagesURL = srv.URL
	}
	u, err := url.Parse(addr)
	if err != nil {
		t.Fatal(err)
	}
	conn, id := dialPageAgent(t, context.Background(), h.pages, w.pagesURL, u)
	go func() { // the page agent reads what the proxy sends and answers nothing
		for {
			if _, _, err := conn.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	w.sessions = append(w.sessions, id)
	return conn
}

// input sends the person's input from the page of conn, the session opened n-th (openPage),
// at its address addr, as person_input.js does, and waits until the send guard has it.
func (w *personSendWorld) input(t *testing.T, conn *websocket.Conn, n int, addr string) {
	t.Helper()
	b, _ := json.Marshal(panel.PersonInput{Type: panel.TypePersonInput, URL: addr})
	if err := conn.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	g := &w.cf.h.nav
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		g.mu.Lock()
		got := slices.ContainsFunc(g.sends.inputs, func(p personInput) bool { return p.session == w.sessions[n] })
		g.mu.Unlock()
		if got {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the send guard has no report of page %d", n)
		}
	}
}

// TestPersonInputOriginOnlyReferer: under the browsers' default Referrer-Policy a page on
// www.example.com posting to its API on api.example.com sends its origin alone as the Referer.
// Such a post goes as the person's after their input in that page when the page is its
// origin's only page session, when it reported and when the post comes; with another tab of the
// origin open it is carded (the two-tab hole stays closed: OPEN-ITEMS 122), and a post off the
// action's site is not released by the origin alone.
func TestPersonInputOriginOnlyReferer(t *testing.T) {
	const www, notes = "https://www.example.com", "https://www.example.com/notes"
	bare := scriptHeaders("cors", "same-site", www, www+"/")
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, w *personSendWorld) (sent bool)
		want bool
	}{
		{"the origin's only page: its post to the sibling API goes", func(t *testing.T, w *personSendWorld) bool {
			tab := w.openPage(t, notes)
			w.input(t, tab, 0, notes)
			return w.postTo(t, "api.example.com", "/v1/save", bare)
		}, true},
		{"two pages of the origin: carded", func(t *testing.T, w *personSendWorld) bool {
			w.openPage(t, www+"/inbox") // tab A, the agent's
			tabB := w.openPage(t, notes)
			w.input(t, tabB, 1, notes)
			return w.postTo(t, "api.example.com", "/v1/save", bare)
		}, false},
		{"a second page of the origin opened after the report: carded", func(t *testing.T, w *personSendWorld) bool {
			tab := w.openPage(t, notes)
			w.input(t, tab, 0, notes)
			w.openPage(t, www+"/inbox")
			return w.postTo(t, "api.example.com", "/v1/save", bare)
		}, false},
		{"another page of the origin that closed after the report: carded", func(t *testing.T, w *personSendWorld) bool {
			tabA := w.openPage(t, www+"/inbox")
			tabB := w.openPage(t, notes)
			w.input(t, tabB, 1, notes)
			tabA.Close(websocket.StatusGoingAway, "the tab closed") // its unload post may still come
			for deadline := time.Now().Add(5 * time.Second); len(w.cf.h.pages.List()) != 1; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("tab A's session did not end")
				}
			}
			return w.postTo(t, "api.example.com", "/v1/save", bare)
		}, false},
		{"the page's full address still goes with two pages", func(t *testing.T, w *personSendWorld) bool {
			w.openPage(t, www+"/inbox")
			tabB := w.openPage(t, notes)
			w.input(t, tabB, 1, notes)
			return w.postTo(t, "www.example.com", "/api/save", scriptHeaders("cors", "same-origin", www, notes))
		}, true},
		{"the origin's only page, a post to another site's API as the person: carded", func(t *testing.T, w *personSendWorld) bool {
			tab := w.openPage(t, notes)
			w.input(t, tab, 0, notes)
			return w.postTo(t, "api.example.net", "/v1/save", append(scriptHeaders("cors", "cross-site", www, www+"/"), "Cookie", "sid=1"))
		}, false},
		{"the origin's only page, a Referer of another origin of the site: carded", func(t *testing.T, w *personSendWorld) bool {
			tab := w.openPage(t, notes)
			w.input(t, tab, 0, notes)
			o := "https://shop.example.com"
			return w.postTo(t, "api.example.com", "/v1/save", scriptHeaders("cors", "same-site", o, o+"/"))
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newPersonSendWorld(t)
			// Every host is the one test server, whose certificate names example.com.
			w.cf.rp.Transport.(*http.Transport).TLSClientConfig.ServerName = "example.com"
			w.cf.h.nav.armAs(navOwner{owner: w.cf, control: `click “Save”`, confirmPost: w.ask.confirm}, "click", notes, www, nil, nil).settle()
			w.wait(3 * time.Second)
			if got := tt.run(t, w); got != tt.want {
				t.Errorf("sent %v, want %v", got, tt.want)
			}
		})
	}
}
