package remixlet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

var t0 = time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)

// scheduleHost is a Host for a remixlet with the schedule permission whose rmx.schedule clock
// reads t0.
func scheduleHost(t *testing.T, st *store.Store) *remixletHost {
	t.Helper()
	h, _ := newServiceHost(t, st, "reminders", sandbox.PermSchedule)
	h.p.r.now = func() time.Time { return t0 }
	return h
}

func TestScheduleCalls(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	h := scheduleHost(t, st)
	call := func(method, args string) error {
		_, err := h.Call(ctx, "rmx", method, json.RawMessage(args))
		return err
	}

	ok := []struct{ name, method, args string }{
		{"every with a message", "schedule.every", `["poll", {"minutes": 1, "action": {"message": {"kind": "poll", "n": [1, 2]}}}]`},
		{"at an ISO time with a notification", "schedule.at", `["remind", {"time": "2030-01-02T09:00:00+01:00", "action": {"notify": {"title": "Sale <b>starts</b>"}}}]`},
		{"at milliseconds, open an own page", "schedule.at", `["open", {"time": ` + fmt.Sprint(t0.Add(time.Hour).UnixMilli()) + `, "action": {"open": "https://shop.test/cart"}}]`},
	}
	for _, tt := range ok {
		if err := call(tt.method, tt.args); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	list, err := st.Schedules(ctx, h.id)
	if err != nil || len(list) != 3 {
		t.Fatalf("stored schedules: %+v, %v", list, err)
	}
	byName := map[string]store.Schedule{}
	for _, s := range list {
		byName[s.Name] = s
	}
	if s := byName["poll"]; s.Every != time.Minute || !s.Next.Equal(t0.Add(time.Minute)) || string(s.Action) != `{"message":{"kind":"poll","n":[1,2]}}` {
		t.Errorf("poll = %+v (%s)", s, s.Action)
	}
	if s := byName["remind"]; s.Every != 0 || !s.Next.Equal(time.Date(2030, 1, 2, 8, 0, 0, 0, time.UTC)) || string(s.Action) != `{"notify":{"title":"Sale \u003cb\u003estarts\u003c/b\u003e"}}` {
		t.Errorf("remind = %+v (%s)", s, s.Action)
	}

	refused := []struct{ name, method, args, want string }{
		{"under a minute", "schedule.every", `["s", {"minutes": 0.5, "action": {"message": 1}}]`, "at least one minute"},
		{"minutes not a number", "schedule.every", `["s", {"minutes": "1", "action": {"message": 1}}]`, "must be a number"},
		{"over a year", "schedule.every", `["s", {"minutes": 600000, "action": {"message": 1}}]`, "at most a year"},
		{"no action", "schedule.every", `["s", {"minutes": 5}]`, "exactly one of"},
		{"two actions", "schedule.every", `["s", {"minutes": 5, "action": {"message": 1, "open": "https://shop.test/"}}]`, "exactly one of"},
		{"unknown action", "schedule.every", `["s", {"minutes": 5, "action": {"run": "alert(1)"}}]`, "exactly one of"},
		{"a callback as the action", "schedule.every", `["s", {"minutes": 5, "action": {"$listener": 3}}]`, "exactly one of"},
		{"unknown field", "schedule.every", `["s", {"minutes": 5, "code": "x", "action": {"message": 1}}]`, "unknown field"},
		{"open another site", "schedule.every", `["s", {"minutes": 5, "action": {"open": "https://bank.test/"}}]`, "own pages"},
		{"open javascript:", "schedule.every", `["s", {"minutes": 5, "action": {"open": "javascript:alert(1)"}}]`, "http or https"},
		{"open with credentials", "schedule.every", `["s", {"minutes": 5, "action": {"open": "https://u:p@shop.test/"}}]`, "user name"},
		{"open relative", "schedule.every", `["s", {"minutes": 5, "action": {"open": "/cart"}}]`, "http or https"},
		{"notify html object", "schedule.every", `["s", {"minutes": 5, "action": {"notify": {"title": "t", "html": "<b>x</b>"}}}]`, "text only"},
		{"notify no title", "schedule.every", `["s", {"minutes": 5, "action": {"notify": {"body": "b"}}}]`, "text only"},
		{"notify long body", "schedule.every", `["s", {"minutes": 5, "action": {"notify": {"title": "t", "body": "` + strings.Repeat("b", 501) + `"}}}]`, "longer than 500"},
		{"message too big", "schedule.every", `["s", {"minutes": 5, "action": {"message": "` + strings.Repeat("m", store.MaxMessageBytes) + `"}}]`, "more than 16384 bytes"},
		{"empty name", "schedule.every", `["", {"minutes": 5, "action": {"message": 1}}]`, "empty"},
		{"long name", "schedule.every", `["` + strings.Repeat("n", store.MaxScheduleName+1) + `", {"minutes": 5, "action": {"message": 1}}]`, "more than"},
		{"at in the past", "schedule.at", `["s", {"time": "2029-12-31T09:00:00Z", "action": {"message": 1}}]`, "has passed"},
		{"at without a zone", "schedule.at", `["s", {"time": "2030-01-02T09:00:00", "action": {"message": 1}}]`, "ISO 8601"},
		{"at over a year", "schedule.at", `["s", {"time": "2031-06-01T09:00:00Z", "action": {"message": 1}}]`, "more than a year"},
		{"at a bool", "schedule.at", `["s", {"time": true, "action": {"message": 1}}]`, "ISO 8601"},
	}
	for _, tt := range refused {
		err := call(tt.method, tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want a refusal containing %q", tt.name, err, tt.want)
		}
	}
	if list, _ := st.Schedules(ctx, h.id); len(list) != 3 {
		t.Errorf("refused calls stored schedules: %+v", list)
	}

	for i := len(list); i < store.MaxSchedules; i++ {
		if err := call("schedule.every", fmt.Sprintf(`["s%d", {"minutes": 5, "action": {"message": 1}}]`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := call("schedule.every", `["one too many", {"minutes": 5, "action": {"message": 1}}]`); err == nil || !strings.Contains(err.Error(), "at most 10 schedules") {
		t.Errorf("schedule 11: got %v", err)
	}
	if err := call("schedule.cancel", `["poll"]`); err != nil {
		t.Fatal(err)
	}
	if err := call("schedule.cancel", `["poll"]`); err != nil {
		t.Errorf("cancelling a missing schedule: %v", err)
	}
	if list, _ := st.Schedules(ctx, h.id); len(list) != store.MaxSchedules-1 {
		t.Errorf("after cancel: %d schedules", len(list))
	}
}

// schedTest is a scheduler over a store, with the connected pages given as sessions and what it
// sends to them recorded.
type schedTest struct {
	st *store.Store
	sc *Scheduler

	mu    sync.Mutex
	pages []page.Info
	sent  map[string][]any // by session ID
}

func newSchedTest(t *testing.T, st *store.Store) *schedTest {
	r := newRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(r.Close)
	x := &schedTest{st: st, sent: map[string][]any{}}
	x.sc = &Scheduler{st: st, log: slog.New(slog.NewTextHandler(io.Discard, nil)), now: func() time.Time { return t0 }, tick: time.Hour, logf: r.logf,
		send: func(ctx context.Context, match func(page.Info) bool, v any) int {
			x.mu.Lock()
			defer x.mu.Unlock()
			n := 0
			for _, s := range x.pages {
				if match(s) {
					x.sent[s.ID] = append(x.sent[s.ID], v)
					n++
				}
			}
			return n
		}}
	return x
}

func (x *schedTest) got(id string) []any {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]any(nil), x.sent[id]...)
}

func put(t *testing.T, st *store.Store, id, name string, every time.Duration, next time.Time, action string) {
	t.Helper()
	if err := st.PutSchedule(context.Background(), store.Schedule{RemixletID: id, Name: name, Every: every, Next: next, Action: []byte(action)}); err != nil {
		t.Fatal(err)
	}
}

func TestSchedulerRunsTheThreeActions(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "reminders", `"https://shop.test/*"`, permList(sandbox.PermSchedule), rxTestScript)
	x := newSchedTest(t, st)
	x.pages = []page.Info{
		{ID: "bank", URL: "https://bank.test/", Origin: "https://bank.test", Connected: true},
		{ID: "shop-list", URL: "https://shop.test/list", Origin: "https://shop.test", Connected: true},
		{ID: "shop-home", URL: "https://shop.test/", Origin: "https://shop.test", Connected: true},
	}
	put(t, st, rx.id, "note", time.Minute, t0, `{"notify":{"title":"<b>Sale</b>","body":"b"}}`)
	put(t, st, rx.id, "msg", 2*time.Minute, t0, `{"message":{"n":1}}`)
	put(t, st, rx.id, "open", 0, t0, `{"open":"https://shop.test/cart"}`)
	put(t, st, rx.id, "later", time.Minute, t0.Add(time.Hour), `{"message":2}`)

	n, err := x.sc.RunDue(ctx, t0)
	if err != nil || n != 3 {
		t.Fatalf("RunDue = %d, %v; want 3 actions", n, err)
	}
	// The notification goes to every connected page of the remixlet's sites, as text, and to
	// no other site's page.
	note := panel.Notify{Type: panel.TypeNotify, Remixlet: rx.id, Source: "reminders", Title: "<b>Sale</b>", Body: "b"}
	for _, id := range []string{"shop-list", "shop-home"} {
		if got := x.got(id); len(got) == 0 || got[0] != note {
			t.Errorf("page %s got %+v, want the notification first", id, got)
		}
	}
	if got := x.got("bank"); len(got) != 0 {
		t.Errorf("a page of another site got %+v", got)
	}
	waitLog(t, st, rx.id, `schedule "note": notification (shown on 2 of its open pages): <b>Sale</b> — b`)
	// open: no page is at the address, so the oldest page of its origin navigates there.
	open := panel.Open{Type: panel.TypeOpen, URL: "https://shop.test/cart", Source: "reminders"}
	if got := x.got("shop-list"); len(got) != 2 || got[1] != open {
		t.Errorf("shop-list got %+v, want the open", got)
	}
	if got := x.got("shop-home"); len(got) != 1 {
		t.Errorf("shop-home got %+v, want only the notification", got)
	}
	// message: queued for the next page load.
	msgs, _ := st.TakeMessages(ctx, rx.id)
	if len(msgs) != 1 || msgs[0].Schedule != "msg" || string(msgs[0].Data) != `{"n":1}` {
		t.Errorf("queued messages: %+v", msgs)
	}
	// Repeating ones moved on; the one-time one is gone; nothing runs twice for one time.
	list, _ := st.Schedules(ctx, rx.id)
	next := map[string]time.Time{}
	for _, s := range list {
		next[s.Name] = s.Next
	}
	if len(list) != 3 || !next["note"].Equal(t0.Add(time.Minute)) || !next["msg"].Equal(t0.Add(2*time.Minute)) {
		t.Errorf("after the run: %v", next)
	}
	if n, _ := x.sc.RunDue(ctx, t0.Add(30*time.Second)); n != 0 {
		t.Errorf("a second run before the next time ran %d", n)
	}
	// A run long after (the proxy was off) runs once and does not catch up.
	if n, _ := x.sc.RunDue(ctx, t0.Add(10*time.Minute)); n != 2 {
		t.Errorf("after 10 minutes off, %d ran, want 2 (once each)", n)
	}
	list, _ = st.Schedules(ctx, rx.id)
	for _, s := range list {
		if s.Name == "note" && !s.Next.Equal(t0.Add(11*time.Minute)) {
			t.Errorf("note next = %v, want 11 minutes after t0", s.Next)
		}
	}

	// open with an own page already there focuses that one; with none of its origin, the log says so.
	put(t, st, rx.id, "open list", 0, t0.Add(20*time.Minute), `{"open":"https://shop.test/list"}`)
	x.sc.RunDue(ctx, t0.Add(20*time.Minute))
	if got := x.got("shop-list"); got[len(got)-1] != (panel.Open{Type: panel.TypeOpen, URL: "https://shop.test/list", Source: "reminders"}) {
		t.Errorf("shop-list got %+v last, want the open of its own address", got[len(got)-1])
	}
	x.mu.Lock()
	x.pages = x.pages[:1]
	x.mu.Unlock()
	put(t, st, rx.id, "open none", 0, t0.Add(30*time.Minute), `{"open":"https://shop.test/cart"}`)
	x.sc.RunDue(ctx, t0.Add(30*time.Minute))
	waitLog(t, st, rx.id, `schedule "open none": https://shop.test/cart not opened: none of its pages on https://shop.test is open`)
}

func TestSchedulerStopsForPausedDeletedAndUnapproved(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	x := newSchedTest(t, st)
	x.pages = []page.Info{{ID: "p", URL: "https://shop.test/", Origin: "https://shop.test", Connected: true}}

	paused := addTestRemixlet(t, st, "paused", `"https://shop.test/*"`, permList(sandbox.PermSchedule), rxTestScript)
	put(t, st, paused.id, "every", time.Minute, t0, `{"notify":{"title":"paused"}}`)
	put(t, st, paused.id, "once", 0, t0, `{"notify":{"title":"paused once"}}`)
	if err := st.SetEnabled(ctx, paused.id, false); err != nil {
		t.Fatal(err)
	}
	if n, err := x.sc.RunDue(ctx, t0); n != 0 || err != nil {
		t.Fatalf("a paused remixlet's schedules ran: %d, %v", n, err)
	}
	if got := x.got("p"); len(got) != 0 {
		t.Errorf("the page got %+v from a paused remixlet", got)
	}
	list, _ := st.Schedules(ctx, paused.id)
	if len(list) != 1 || list[0].Name != "every" || !list[0].Next.Equal(t0.Add(time.Minute)) {
		t.Errorf("paused: %+v, want the repeating one kept for later and the one-time one dropped", list)
	}
	waitLog(t, st, paused.id, `schedule "once" did not run and was dropped: the remixlet is paused`)
	// Switched on again, it runs.
	if err := st.SetEnabled(ctx, paused.id, true); err != nil {
		t.Fatal(err)
	}
	if n, _ := x.sc.RunDue(ctx, t0.Add(time.Minute)); n != 1 {
		t.Errorf("after switching on, %d ran, want 1", n)
	}

	archived := addTestRemixlet(t, st, "archived", `"https://shop.test/*"`, permList(sandbox.PermSchedule), rxTestScript)
	put(t, st, archived.id, "every", time.Minute, t0.Add(2*time.Minute), `{"message":1}`)
	if err := st.SetArchived(ctx, archived.id, true); err != nil {
		t.Fatal(err)
	}
	// A remixlet whose active version does not have the permission (a schedule left in the
	// store): its schedules are deleted, not run.
	unapproved := addTestRemixlet(t, st, "unapproved", `"https://shop.test/*"`, ``, rxTestScript)
	put(t, st, unapproved.id, "every", time.Minute, t0.Add(2*time.Minute), `{"message":1}`)
	deleted := addTestRemixlet(t, st, "deleted", `"https://shop.test/*"`, permList(sandbox.PermSchedule), rxTestScript)
	put(t, st, deleted.id, "every", time.Minute, t0.Add(2*time.Minute), `{"message":1}`)
	if err := st.DeleteRemixlet(ctx, deleted.id); err != nil {
		t.Fatal(err)
	}
	before := len(x.got("p"))
	if _, err := x.sc.RunDue(ctx, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if msgs, _ := st.TakeMessages(ctx, archived.id); len(msgs) != 0 {
		t.Errorf("an archived remixlet's schedule queued %d messages", len(msgs))
	}
	if msgs, _ := st.TakeMessages(ctx, unapproved.id); len(msgs) != 0 {
		t.Errorf("a remixlet without the permission queued %d messages", len(msgs))
	}
	if list, _ := st.Schedules(ctx, unapproved.id); len(list) != 0 {
		t.Errorf("schedules of a remixlet without the permission kept: %+v", list)
	}
	if got := x.got("p"); len(got) != before+1 {
		t.Errorf("the page got %d messages, want only the switched-on remixlet's notification", len(got)-before)
	}

	// An open action for an address the current manifest no longer covers is refused at run time.
	narrow := addTestRemixlet(t, st, "narrow", `"https://shop.test/list*"`, permList(sandbox.PermSchedule), rxTestScript)
	put(t, st, narrow.id, "open", 0, t0.Add(3*time.Minute), `{"open":"https://shop.test/cart"}`)
	x.sc.RunDue(ctx, t0.Add(3*time.Minute))
	waitLog(t, st, narrow.id, `refused: schedule "open"`)
}

// Schedules are in the store: a new proxy process (a reopened store) runs them.
func TestSchedulesSurviveARestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "remixproxy.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rx := addTestRemixlet(t, st, "reminders", `"https://shop.test/*"`, permList(sandbox.PermSchedule), rxTestScript)
	put(t, st, rx.id, "msg", time.Minute, t0, `{"message":"hello"}`)
	st.Close()
	st, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	x := newSchedTest(t, st)
	if n, err := x.sc.RunDue(ctx, t0); n != 1 || err != nil {
		t.Fatalf("after a restart: RunDue = %d, %v", n, err)
	}
	if msgs, _ := st.TakeMessages(ctx, rx.id); len(msgs) != 1 || string(msgs[0].Data) != `"hello"` {
		t.Errorf("messages: %+v", msgs)
	}
}

// rmx.onMessage and rmx.menu callbacks run in the real sandbox: queued messages are handed to
// the next page load's callback once; a menu command's event reaches its callback.
func TestOnMessageAndMenuCallbacksInTheSandbox(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "reminders", `"https://shop.test/*"`, permList(sandbox.PermSchedule, sandbox.PermMenu),
		`await rmx.onMessage((m) => rmx.log("got", m.schedule, JSON.stringify(m.data), typeof m.at));
		 await rmx.menu.add("hi", "Say hi", (e) => rmx.log("menu", e.type, e.id));
		 rmx.log("ready");`)
	for _, d := range []string{`{"n":1}`, `"two"`} {
		if _, err := st.QueueMessage(ctx, rx.id, "poll", []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	r := newRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(r.Close)
	f := &servicePage{url: "https://shop.test/"}
	connectLoaded(r, f.conn())
	waitLog(t, st, rx.id, `got poll {"n":1} number`)
	waitLog(t, st, rx.id, `got poll "two" number`)
	waitLog(t, st, rx.id, "ready")
	if msgs, _ := st.TakeMessages(ctx, rx.id); len(msgs) != 0 {
		t.Errorf("delivered messages are still queued: %+v", msgs)
	}
	menus := sentOf[panel.Menu](f)
	if len(menus) != 1 || len(menus[0].Commands) != 1 {
		t.Fatalf("menus sent: %+v", menus)
	}
	// No page-agent Event runs the command, whatever listener it names (a page can hold its
	// own session); the panel's choice does.
	for l := int64(1); l <= 20; l++ {
		raw, _ := json.Marshal(panel.Event{Type: panel.TypeEvent, Remixlet: rx.id, Listener: l, Event: map[string]any{"type": "menu", "id": fmt.Sprint("page", l)}})
		r.pageMessage("sess-svc", panel.TypeEvent, raw)
	}
	f.mu.Lock()
	run := f.runs[rx.id]
	f.mu.Unlock()
	if run == nil {
		t.Fatal("the page session was not given the remixlet's commands")
	}
	if err := run(ctx, "hi"); err != nil {
		t.Fatalf("running the command: %v", err)
	}
	waitLog(t, st, rx.id, "menu menu hi")
	entries, _ := st.Log(ctx, rx.id, 100)
	for _, e := range entries {
		if strings.Contains(e.Message, "menu menu page") {
			t.Errorf("a page-agent event ran a command: %s", e.Message)
		}
	}
}

// An open action navigates only one of the remixlet's own pages, never another page of the site
// the person is working in.
func TestSchedulerOpensOnlyThroughOwnPages(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "lists", `"https://shop.test/list*"`, permList(sandbox.PermSchedule), rxTestScript)
	x := newSchedTest(t, st)
	x.pages = []page.Info{{ID: "checkout", URL: "https://shop.test/checkout", Origin: "https://shop.test", Connected: true}}
	put(t, st, rx.id, "a", 0, t0, `{"open":"https://shop.test/list/2"}`)
	x.sc.RunDue(ctx, t0)
	if got := x.got("checkout"); len(got) != 0 {
		t.Errorf("the checkout page got %+v", got)
	}
	waitLog(t, st, rx.id, `schedule "a": https://shop.test/list/2 not opened`)
	x.pages = append(x.pages, page.Info{ID: "list", URL: "https://shop.test/list", Origin: "https://shop.test", Connected: true})
	put(t, st, rx.id, "b", 0, t0, `{"open":"https://shop.test/list/2"}`)
	x.sc.RunDue(ctx, t0)
	if got := x.got("list"); len(got) != 1 || got[0] != (panel.Open{Type: panel.TypeOpen, URL: "https://shop.test/list/2", Source: "lists"}) {
		t.Errorf("the list page got %+v, want the open", got)
	}
	if got := x.got("checkout"); len(got) != 0 {
		t.Errorf("the checkout page got %+v", got)
	}
}

// TestCheckOpenURL: a scheduled open is read as the browser reads it and allowed only to the
// remixlet's own pages in that reading.
func TestCheckOpenURL(t *testing.T) {
	m, probs := sandbox.ParseManifest([]byte(`{"name": "n", "description": "d", "api": 1, "matches": ["https://shop.test/*", "https://*.news.test/*"]}`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	for _, tt := range []struct {
		in, want string // want "" when refused
	}{
		{"https://shop.test/a", "https://shop.test/a"},
		{"HTTPS://SHOP.TEST:443/a/../b", "https://shop.test/b"},
		{"https://\uff53hop\u3002test/x", "https://shop.test/x"},
		{"https://sh\top.test/x", "https://shop.test/x"},
		{`https:\\shop.test\x`, "https://shop.test/x"},
		{"https://shop.test./x", "https://shop.test./x"},
		{"https://a.news.test/x", "https://a.news.test/x"},
		{"https://shop.test@witness.test/", ""},
		{`https://witness.test\@shop.test/`, ""},
		{"https://shop.test\u3002witness.test/", ""},
		{"https://\uff57itness.test/", ""},
		{"https:witness.test/", ""},
		{"http://shop.test/x", ""},
		{"/relative", ""},
		{"javascript:alert(1)", ""},
	} {
		u, err := checkOpenURL(m, tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("checkOpenURL(%q) = %v, want a refusal", tt.in, u)
		case tt.want != "" && (err != nil || u.String() != tt.want):
			t.Errorf("checkOpenURL(%q) = %v, %v; want %q", tt.in, u, err, tt.want)
		}
	}
}
