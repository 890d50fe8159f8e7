package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// Act-mode safety kept in Go, per chat (issue 6), so that nothing the page does can reset it:
//
//   - the duplicate-submit guard: a click on a control whose accessible name starts with
//     create/save/submit/add/post/publish/send/confirm/place order/pay/checkout/update is
//     refused when one of the same name was clicked on the same page address of this chat in
//     the last resubmitWindow, unless the model passes resubmit: true; a form's submission by
//     set_field (submit) or by Enter in one of its fields counts as a click on the form's
//     default button (or "submit" when it has none);
//   - done (in Act mode) is refused, at most maxDoneRefusals times per page address, when its
//     summary claims success while the page still shows an open dialog or a form with unsaved
//     input (page tool page_state);
//   - navigation after a click is reported: the page agent's navigated/mayLeave, a change of
//     the session's address shortly after, or the end of the page session (a new document);
//     and a call whose page went away says so instead of a generic error.
//
// The state is keyed by the stored chat's ID, which follows the tab across reloads when the
// panel resumes its chat, and dropped after actStateIdle without use.

const (
	resubmitWindow  = 45 * time.Second
	maxDoneRefusals = 2
	actStateIdle    = 15 * time.Minute
	// navSettle is how long a click that may leave the page is watched for the page going;
	// navQuiet how long any other click is watched for a same-page address change.
	navSettle = 1500 * time.Millisecond
	navQuiet  = 250 * time.Millisecond
	// navLeave is how long a navigate, back or forward that loads a new document is given for
	// the old page to go; a page that stays (a download, a 204) lets the turn go on after it.
	navLeave = 5 * time.Second
	// maxTyped is how many typed values a chat keeps, minTyped the fewest characters one must
	// have to be kept, maxTypedLen the most kept of one (a prefix still matches where the whole
	// value stands).
	maxTyped, minTyped, maxTypedLen = 32, 4, 2048
)

// submitLike matches the accessible names of controls whose repeated click may do a thing
// twice (the page agent normalises names to lower case with collapsed spaces).
var submitLike = regexp.MustCompile(`^(create|save|submit|add|post|publish|send|confirm|place order|pay|checkout|update)\b`)

// claimsSuccess and hedged read a done summary.
var (
	claimsSuccess = regexp.MustCompile(`(?i)\b(created|saved|submitted|added|posted|published|sent|confirmed|placed|paid|updated|completed|booked|ordered|deleted|removed|changed|set up|done|success(ful|fully)?|finished)\b`)
	hedged        = regexp.MustCompile(`(?i)\b(not|could ?n[o']t|cannot|can't|failed|unable|did ?n[o']t|was ?n[o']t|still open)\b`)
)

// actPage is the chat's page as the act checks see it.
type actPage interface {
	// call runs a page tool in the page.
	call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error)
	// url is the page session's current address (SPA navigations included); ok is false once
	// the session has ended.
	url() (string, bool)
}

// actState is one chat's record of recent submit-like clicks and done refusals.
type actState struct {
	mu      sync.Mutex
	clicks  []actClick
	refused map[string]int // page address → done refusals
	// edited and submitted are when the agent last changed a field and last submitted a form
	// on a page address: input changed and then submitted counts as saved for done's check
	// (many apps keep the saved value in the field).
	edited, submitted map[string]time.Time
	// typed are the values the agent typed, set or selected in this chat, lower-cased, newest
	// last, at most maxTyped (noteTyped): a clicked link's fragment holding one is the agent's
	// (navguard_carried.go).
	typed []string
	used  time.Time
	now   func() time.Time
}

type actClick struct {
	url, name string
	at        time.Time
}

// actStates is a Server's act states, by chat.
type actStates struct {
	sync.Mutex
	m map[string]*actState
	// leaves are the pages' reports of a new page started just after an action (act_leaving.go).
	leaves leaveNotes
}

// actStateFor returns the act state of chat c.
func actStateFor(c *chat) *actState {
	c.mu.Lock()
	key := c.rec.ID
	c.mu.Unlock()
	if key == "" {
		key = fmt.Sprintf("chat %p", c)
	}
	now := time.Now()
	acts := &c.hub.acts
	acts.Lock()
	defer acts.Unlock()
	for k, st := range acts.m {
		st.mu.Lock()
		idle := now.Sub(st.used) > actStateIdle
		st.mu.Unlock()
		if idle {
			delete(acts.m, k)
		}
	}
	st := acts.m[key]
	if st == nil {
		st = newActState(time.Now)
		acts.m[key] = st
	}
	st.mu.Lock()
	st.used = now
	st.mu.Unlock()
	return st
}

func newActState(now func() time.Time) *actState {
	return &actState{refused: map[string]int{}, edited: map[string]time.Time{}, submitted: map[string]time.Time{}, now: now, used: now()}
}

// sessionActPage is a page session as an actPage.
type sessionActPage struct {
	pages *page.Hub
	id    string
}

func (p sessionActPage) call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	return p.pages.Tool(ctx, p.id, tool, args)
}

func (p sessionActPage) url() (string, bool) {
	sess, ok := p.pages.Get(p.id)
	if !ok || !sess.Connected {
		return "", false
	}
	return sess.URL, true
}

// chatActPage is the chat's page as the act checks see it, with the chat's own checks: the
// proxy's hold on the agent's navigations (navguard.go) and the card for actions that
// submit or destroy (submit.go).
type chatActPage struct {
	sessionActPage
	c    *chat
	sess page.Info
}

var (
	_ navArmer   = chatActPage{}
	_ submitGate = chatActPage{}
)

func (p chatActPage) submitsAllowed() bool {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	return p.c.submits.on
}

func (p chatActPage) confirmSubmit(ctx context.Context, f submitFacts) (bool, error) {
	return p.c.ask(ctx, submitCard(weburl.Site(pageHost(p.sess.URL)), f))
}

// actPageTool runs a page tool for the chat's agent through the act checks (the hook in
// chatEnv.PageTool).
func (e *chatEnv) actPageTool(ctx context.Context, sess page.Info, tool string, args json.RawMessage) (json.RawMessage, error) {
	if tool == "done" {
		e.c.mu.Lock()
		mode := e.c.rec.Mode
		e.c.mu.Unlock()
		if mode != string(agent.ModeAct) {
			// Outside Act the agent does not act on the page: a dialog or form open there is
			// not its unfinished work.
			return json.RawMessage(`{"accepted":true}`), nil
		}
	}
	return actStateFor(e.c).run(ctx, chatActPage{sessionActPage: sessionActPage{pages: e.c.hub.pages, id: sess.ID}, c: e.c, sess: sess}, tool, args)
}

// run runs one page tool with the checks that concern it.
func (st *actState) run(ctx context.Context, pg actPage, tool string, args json.RawMessage) (json.RawMessage, error) {
	var out json.RawMessage
	var err error
	st.noteTyped(tool, args)
	switch tool {
	case "done":
		return st.done(ctx, pg, args)
	case "click", "set_field", "press_keys":
		out, err = st.guarded(ctx, pg, tool, args)
	case "select":
		// Enter, a submission or a change handler may navigate too.
		before, _ := pg.url()
		nav := armFor(pg, tool, args) // navguard.go
		called := time.Now()
		out, err = pg.call(ctx, tool, args)
		var res struct {
			Navigated  bool   `json:"navigated"`
			MayLeave   bool   `json:"mayLeave"`
			PageLeaves bool   `json:"pageLeaves"` // the page's handler started a new page (tool_act.js)
			URL        string `json:"url"`
		}
		if err == nil {
			json.Unmarshal(out, &res)
			if note := watchNavigation(ctx, pg, tool, before, res.URL, res.Navigated, res.MayLeave, res.PageLeaves); note != "" {
				out = withField(out, "navigation", note)
			}
			res.PageLeaves = res.PageLeaves || leftAfterAnswer(pg, called, res.MayLeave)
		}
		out, err = nav.finish(ctx, tool, res.MayLeave || res.PageLeaves, out, err)
	default:
		if p, ok := pg.(chatActPage); ok && tool == "navigate" {
			if err := checkCarriedFragment(p.sess, args); err != nil { // navguard_carried.go
				return nil, err
			}
		}
		nav := armFor(pg, tool, args) // navguard.go
		out, err = pg.call(ctx, tool, args)
		var res struct {
			MayLeave bool `json:"mayLeave"`
		}
		if err == nil && (tool == "navigate" || tool == "back" || tool == "forward") {
			json.Unmarshal(out, &res)
			out = withField(out, "note", "if a page of this site loads, the chat follows the tab there; a page of another site ends the chat's turn")
		}
		out, err = nav.finish(ctx, tool, res.MayLeave, out, err)
		if err == nil && res.MayLeave {
			// The next step must not reach the page being replaced: its session lives on until
			// the new document commits, and a call sent to it then dies with it.
			waitLeft(ctx, pg, navLeave)
		}
	}
	if err == nil {
		st.noteEdits(pg, tool, args, out)
		st.noteAppended(tool, args, out)
	}
	if errors.Is(err, page.ErrGone) {
		return nil, goneError(pg, tool)
	}
	return out, err
}

// goneError is what the model is told when the page went away before answering tool: that the
// proxy had just stopped it, and why, when it had.
func goneError(pg actPage, tool string) error {
	if why := navStopOf(pg); why != "" { // navguard.go
		return &agent.ToolError{Message: tool + ": the page went away before answering; the proxy had just stopped it: " + why + ". Nothing was sent; the tab shows the proxy's page. Do not try another way; tell the person what you found instead."}
	}
	return &agent.ToolError{Message: tool + ": the page went away before answering (it was closed, or a navigation replaced it), so this chat's session on it has ended; what the call did is unknown"}
}

// guarded runs a click, set_field or press_keys under the duplicate-submit guard and watches
// for navigation after it. The page agent refuses the action when what it would activate (a
// control, or a form's submission by set_field's submit or by Enter in a field, named after
// the form's default button) is in the recent list this passes; it answers the name it
// activated, recorded here when it is submit-like.
func (st *actState) guarded(ctx context.Context, pg actPage, tool string, raw json.RawMessage) (json.RawMessage, error) {
	args := map[string]json.RawMessage{}
	if len(strings.TrimSpace(string(raw))) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil || args == nil {
			return nil, errors.New(tool + ": the arguments must be a JSON object")
		}
	}
	var resubmit bool
	if r, ok := args["resubmit"]; ok {
		if json.Unmarshal(r, &resubmit) != nil {
			return nil, &agent.ToolError{Message: tool + ": resubmit must be true or false"}
		}
	}
	delete(args, "resubmit")
	delete(args, "recent")
	delete(args, "probe")  // the proxy's own, never the model's (submit.go)
	delete(args, "expect") // likewise
	before, _ := pg.url()
	if !resubmit {
		if recent := st.recent(httpx.WithoutFragment(before)); len(recent) > 0 {
			b, _ := json.Marshal(recent)
			args["recent"] = b
		}
	}
	// An action that submits a form with POST or presses a destructive control waits for the
	// person's Allow unless the chat's switch is on (submit.go).
	expect, withExpect, facts, allowed, err := gateSubmit(ctx, pg, tool, args)
	if err != nil {
		return nil, err
	}
	if tool == "click" {
		// A link's fragment carrying another site's address (navguard_carried.go).
		if err := checkCarriedLink(ctx, pg, args, facts, st.typedValues()); err != nil {
			return nil, err
		}
	}
	if withExpect {
		b, _ := json.Marshal(expect)
		args["expect"] = b
	}
	sent, _ := json.Marshal(args)
	nav := armFor(pg, tool, sent) // navguard.go
	if facts != nil && tool == "click" {
		nav.nameControl(tool + " " + quotedName(facts.displayName())) // cards name the control, not its ref (sendguard.go)
	}
	if allowed {
		nav.allowPost(facts.Action) // asked once: its submission is not held again (submit.go)
		nav.allowSends()            // nor what the page's script sends for it (sendguard.go)
	}
	called := time.Now()
	out, err := pg.call(ctx, tool, sent)
	if err != nil {
		return nav.finish(ctx, tool, false, nil, err)
	}
	var res struct {
		Name      string `json:"name"`
		Navigated bool   `json:"navigated"`
		MayLeave  bool   `json:"mayLeave"`
		URL       string `json:"url"`
		Href      string `json:"href"` // the link a click followed, absolute
		// PageLeaves: the page's own handler started loading another document during the
		// action (a plain button whose click handler submits a form; tool_act.js): its request
		// may reach the proxy after the answer (OPEN-ITEMS 97), so it is waited for as a link's.
		PageLeaves bool `json:"pageLeaves"`
	}
	if json.Unmarshal(out, &res) != nil {
		return nav.finish(ctx, tool, false, out, nil)
	}
	nav.expect(res.Href)
	if submitLike.MatchString(strings.ToLower(strings.TrimSpace(res.Name))) {
		st.record(httpx.WithoutFragment(before), strings.ToLower(strings.TrimSpace(res.Name)))
	}
	if note := watchNavigation(ctx, pg, tool, before, res.URL, res.Navigated, res.MayLeave, res.PageLeaves); note != "" {
		out = withField(out, "navigation", note)
	}
	res.PageLeaves = res.PageLeaves || leftAfterAnswer(pg, called, res.MayLeave)
	return nav.finish(ctx, tool, res.MayLeave || res.PageLeaves, out, nil)
}

// watchNavigation looks, shortly after an action (a click, set_field, …), for the page's address
// changing or its session ending, and says what happened; "" when nothing did. after and
// navigated are what the page agent answered: its address, and whether the action changed it
// at once; mayLeave that the action activated a link or a form, pageLeaves that the page's own
// handler started a new page during it (either is watched navSettle, not navQuiet).
func watchNavigation(ctx context.Context, pg actPage, action, before, after string, navigated, mayLeave, pageLeaves bool) string {
	wait := navQuiet
	if mayLeave || pageLeaves {
		wait = navSettle
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	stopped := ctx.Done()
	for {
		now, ok := pg.url()
		if !ok {
			if mayLeave {
				return "the " + action + " loaded a new page, as expected from a link or form; this page's session has ended, so the agent stops here. The person can go on in the panel of the new page."
			}
			return "unexpected: the " + action + " made the tab load a new page (not a link or form the agent could see); this page's session has ended, so the agent stops here"
		}
		if now != before && now != after && httpx.WithoutFragment(now) != httpx.WithoutFragment(before) {
			return "the page's address changed after the " + action + ", from " + httpx.Clip(before, 300) + " to " + httpx.Clip(now, 300) + "; the page may show something else now: read it again before acting"
		}
		select {
		case <-stopped:
			// The turn was stopped — by the person, or by the page leaving, which ends the
			// turn a moment before the session is closed: look a little longer.
			stopped = nil
			deadline.Reset(300 * time.Millisecond)
		case <-deadline.C:
			if navigated {
				return "the page's address changed with the " + action + ", to " + httpx.Clip(after, 300) + " (a same-page navigation): read the page again before acting"
			}
			return ""
		case <-tick.C:
		}
	}
}

// waitLeft waits, up to max, for page's session to end after an action that loads a new
// document; the chat then follows the tab (follow.go) before its next step. A change of
// the page's address while it stays (a history step within the document) ends the wait too.
func waitLeft(ctx context.Context, pg actPage, max time.Duration) {
	before, _ := pg.url()
	pollUntil(ctx, max, func() bool {
		now, ok := pg.url()
		return !ok || now != before
	})
}

// pollUntil checks done every 25 ms until it is true, max has passed or ctx ends: for states
// the page or the pipeline changes with no event to wait on.
func pollUntil(ctx context.Context, max time.Duration, done func() bool) {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}

// recentEntry is one recent click as the page agent gets it.
type recentEntry struct {
	Name    string `json:"name"`
	Seconds int    `json:"seconds"`
}

// recent lists the submit-like clicks on url within the window, newest first.
func (st *actState) recent(url string) []recentEntry {
	st.mu.Lock()
	defer st.mu.Unlock()
	now := st.now()
	var out []recentEntry
	kept := st.clicks[:0]
	for _, c := range st.clicks {
		if now.Sub(c.at) >= resubmitWindow {
			continue
		}
		kept = append(kept, c)
		if c.url == url {
			out = append([]recentEntry{{Name: c.name, Seconds: int(now.Sub(c.at).Seconds())}}, out...)
		}
	}
	st.clicks = kept
	return out
}

func (st *actState) record(url, name string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.clicks = append(st.clicks, actClick{url: url, name: name, at: st.now()})
	if len(st.clicks) > 100 {
		st.clicks = st.clicks[len(st.clicks)-100:]
	}
}

// noteEdits records, after a successful action, whether it changed input or submitted a form.
func (st *actState) noteEdits(pg actPage, tool string, args, out json.RawMessage) {
	url, ok := pg.url()
	if !ok {
		return
	}
	key := httpx.WithoutFragment(url)
	var a struct {
		Submit bool `json:"submit"`
	}
	json.Unmarshal(args, &a)
	var res struct {
		Submits json.RawMessage `json:"submits"`
	}
	json.Unmarshal(out, &res)
	submits := len(res.Submits) > 0 && string(res.Submits) != "null" && string(res.Submits) != "false" && string(res.Submits) != `""`
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case tool == "type" || tool == "select" || (tool == "set_field" && !a.Submit):
		st.edited[key] = now
	case tool == "set_field" && a.Submit:
		st.edited[key] = now
		st.submitted[key] = now.Add(time.Nanosecond) // typed, then submitted
	case tool == "click" && submits:
		st.submitted[key] = now
	}
}

// noteTyped records the value a type, set_field or select call passes to the page, before the
// call (a call that fails may have typed it still).
func (st *actState) noteTyped(tool string, args json.RawMessage) {
	var a struct {
		Text   string `json:"text"`
		Option string `json:"option"`
	}
	switch tool {
	case "type", "set_field", "select":
		json.Unmarshal(args, &a)
		st.keepTyped(a.Text + a.Option)
	}
}

// noteAppended records, after a type call that appended (clear false), the field's whole value
// the page agent reports: an address typed a few characters at a time is whole only there.
func (st *actState) noteAppended(tool string, args, out json.RawMessage) {
	var a struct {
		Clear *bool `json:"clear"`
	}
	var res struct {
		Value string `json:"value"`
	}
	if tool != "type" || json.Unmarshal(args, &a) != nil || a.Clear == nil || *a.Clear || json.Unmarshal(out, &res) != nil {
		return
	}
	st.keepTyped(res.Value)
}

// keepTyped keeps v among the chat's typed values: lower-cased, when it has at least minTyped
// characters, its first maxTypedLen kept, the newest maxTyped values of the chat kept — across
// its pages of the site, as a value the agent submitted may come back in the next page's links.
func (st *actState) keepTyped(v string) {
	v = strings.ToLower(strings.TrimSpace(v))
	if utf8.RuneCountInString(v) < minTyped {
		return
	}
	if len(v) > maxTypedLen {
		v = strings.ToValidUTF8(v[:maxTypedLen], "")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.typed = slices.DeleteFunc(st.typed, func(t string) bool { return t == v })
	st.typed = append(st.typed, v)
	if len(st.typed) > maxTyped {
		st.typed = st.typed[len(st.typed)-maxTyped:]
	}
}

// typedValues are the chat's typed values (noteTyped).
func (st *actState) typedValues() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.typed)
}

// done checks a done call against the page (see the top of the file).
func (st *actState) done(ctx context.Context, pg actPage, raw json.RawMessage) (json.RawMessage, error) {
	var args struct {
		Summary string `json:"summary"`
	}
	json.Unmarshal(raw, &args)
	accepted := json.RawMessage(`{"accepted":true}`)
	if !claimsSuccess.MatchString(args.Summary) || hedged.MatchString(args.Summary) {
		return accepted, nil
	}
	url, ok := pg.url()
	if !ok {
		return accepted, nil
	}
	out, err := pg.call(ctx, "page_state", json.RawMessage(`{}`))
	if err != nil {
		return accepted, nil // no page to disagree
	}
	var ps struct {
		Dialogs []string `json:"dialogs"`
		Forms   []struct {
			Container string   `json:"container"`
			Unsaved   []string `json:"unsaved"`
		} `json:"forms"`
		Alerts []string `json:"alerts"`
	}
	if json.Unmarshal(out, &ps) != nil || (len(ps.Dialogs) == 0 && len(ps.Forms) == 0) {
		return accepted, nil
	}
	key := httpx.WithoutFragment(url)
	st.mu.Lock()
	if sub, ok := st.submitted[key]; ok && sub.After(st.edited[key]) {
		// The agent submitted after its last change: input left in the form is what was saved.
		ps.Forms = nil
	}
	if len(ps.Dialogs) == 0 && len(ps.Forms) == 0 {
		st.mu.Unlock()
		return accepted, nil
	}
	n := st.refused[key]
	if n < maxDoneRefusals {
		st.refused[key] = n + 1
	}
	st.mu.Unlock()
	if n >= maxDoneRefusals {
		return accepted, nil
	}
	var open []string
	for _, d := range ps.Dialogs {
		open = append(open, "an open "+httpx.Clip(d, 200))
	}
	for _, f := range ps.Forms {
		open = append(open, fmt.Sprintf("unsaved input in %s (%s)", httpx.Clip(f.Container, 200), httpx.Clip(strings.Join(f.Unsaved, ", "), 400)))
	}
	msg := fmt.Sprintf("done refused (%d of at most %d): the summary says it worked, but the page still shows %s.", n+1, maxDoneRefusals, strings.Join(open, "; "))
	if len(ps.Alerts) > 0 {
		msg += " Messages on the page: " + httpx.Clip(strings.Join(ps.Alerts, " | "), 400) + "."
	}
	msg += " A dialog or form still open usually means the action did not finish (a validation error, a button not clicked). Look at the page (outline, find), finish the action, then call done again — or call done with an honest summary of what is left."
	return nil, &agent.ToolError{Message: msg}
}

// withField adds one string field to a JSON object value; other values are returned as they are.
func withField(out json.RawMessage, name, value string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(out, &m) != nil || m == nil {
		return out
	}
	b, _ := json.Marshal(value)
	m[name] = b
	nb, err := json.Marshal(m)
	if err != nil {
		return out
	}
	return nb
}
