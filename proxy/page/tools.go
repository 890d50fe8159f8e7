package page

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// Page tools: the AI agent reads and acts on the chat's tab through the page agent
// (panel/pageagent/tool_*.js). The proxy sends {type:"tool", id, tool, args} on the page-agent
// socket and the page agent answers {type:"toolResult", id, ok, value | error}. The arguments
// are the model's data: the page agent never evaluates them, and open_page (fetch_page) is
// checked here against the session's own origin before the page agent sees it.
//
// Tools and the shapes of their values (JSON):
//
//	capture_page {maxChars?: 100..100000 = 8000}
//	  → {url, title, viewport: {width, height, scrollX, scrollY, pageHeight}, text, truncated}
//	    text is the body's rendered text (innerText), cut at maxChars.
//	outline {budget?: 200..100000 = 3000, ref?: "e12", filter?: "visible" | "interactive" | "all"}
//	  → {outline, truncated, refs}
//	    One line per element with a role, indented one space per level of structure:
//	    `role "name" [states] value="…" -> destination [eN]`, e.g.
//	    `heading "Docs" [level=1] [e3]`, `link "Docs" -> /docs [e4]` (this page's own links:
//	    `#fragment` or `?query`; other sites: the origin), `textbox "Email" [required]
//	    value="a@b" [e5]`, `textbox "Password" [password] [e6]` (never a value),
//	    `checkbox "Remember me" [checked] [e7]`, `img "alt" [e8]`, `listitem "First" [e9]` (a
//	    container holding one text), and a quoted string `"…"` for text (a <br> joins the text
//	    around it; a text is cut at 200 characters, at 100 with filter "all").
//	    States: [level=N] [checked] [mixed] [selected] [expanded] [collapsed] [pressed] [disabled]
//	    [required] [password]. Open dialogs, listboxes and menus come first under
//	    "# open overlays" (the rest then under "# page"). Filters: "visible" (default: what meets
//	    the viewport), "interactive" (controls only, flat), "all"; with ref the default is "all"
//	    below that element. Over the budget, text lines go first (a line "… (some text left out
//	    to fit the budget; …)"), then links' " -> destination" from the end (a line "… (… link
//	    destinations left out …)"), then the outline is cut with a last line "… (truncated: N
//	    more elements; use ref= or filter= to see more)". refs counts the refs shown. A ref stays
//	    valid while its element lives; a stale one fails naming live refs near it.
//	    Open shadow roots and same-origin iframes are walked in place: `iframe "title" [eN]`
//	    with the frame's content indented under it (refs, query, find and the actions work in
//	    it, in the page's coordinates); a cross-origin frame is one line and is never read:
//	    `iframe "title" (other site, not readable) -> https://host/…`.
//	query {selector, limit?: 1..200 = 20}
//	  → {total, matches: [{ref, tag, text, attrs: {id, class, name, type, role, href, src, alt,
//	    title, aria-*, placeholder, value, for, action, method, target, disabled, checked,
//	    data-testid (those present)}, value? (form fields, never passwords), rect: {x, y, width,
//	    height}, visible}]}, the page's matches first, then its same-origin frames'. Selectors
//	    mentioning "value" or escapes are refused while the page or a frame has a password field.
//	    While a typed password is held (the page agent's mirror watch, rx_mirrors.js) no match
//	    has a rect, and after it those the page changed meanwhile have none; rectsWithheld then
//	    says why.
//	inspect_styles {ref, properties?: [CSS names, camelCase or kebab-case, --custom]}
//	  → {ref, element: `heading "Docs"`, styles: {property: computed value}}; refused while a
//	    typed password is held, and for an element the page changed meanwhile.
//	read_page_data {}
//	  → {globals: {name: JSON}, globalsTruncated, forms: [{ref, name, id, action, method,
//	    fields: [field]}], fieldsOutsideForms: [field]} with field = {ref, tag, name, type, label,
//	    value} | {…, checked, value} for checkboxes and radios | {…, password: true} (no value).
//	    globals: the window's own enumerable data properties added after the page agent
//	    started, depth 4 ("[deeper]"), cycles "[cycle]", no functions, nodes or windows, 32 KiB;
//	    while a typed password is held, {} with globalsWithheld saying why.
//	    Hub.Tool adds responses: []RecordedResponse (data.go).
//	click {ref | selector | text}
//	  → {clicked: `button "Save" [e3]`, checked?, link?, submits?, navigated, url, mayLeave,
//	    frameMayLoad?}
//	    link / submits: where the link or form goes (path on this site); navigated: the URL
//	    changed at once (same-document); mayLeave: a link to another document or a form
//	    submission, so the page (and its session) may be replaced right after; frameMayLoad:
//	    the same in a same-origin frame, which alone loads (the frame's refs go stale).
//	fetch_page {url, budget?: 200..100000 = 6000} (the agent's open_page)
//	  → {url, status, title, outline, truncated} for HTML (parsed inert: no refs), or
//	    {url, status, contentType, text, truncated} for anything else.
//	click also takes resubmit (ignored by the page) and recent: [{name, seconds}] (added by the
//	  chat, proxy/chat/act.go: submit-like controls clicked on this page in the last 45 s; a
//	  click on one of the same accessible name is refused), and its value has name (the
//	  accessible name, normalised) and, for a link, href (its absolute address).
//	click, set_field (with submit) and press_keys also take the chat's probe and expect
//	  (proxy/chat/submit.go; never the model's): with probe: true the page agent runs every
//	  check of the action but does not act, and answers {probe: facts | null}, facts being
//	  {how: click | submit | enter, tag, role, name, shown, labels: [text, value, title,
//	  aria-label, name and id attributes], control: outline line, submits, method,
//	  submitterMethod, action, link, key}; with expect: KEY the action is refused unless what
//	  it would activate has that key (expect "" for press_keys: no Enter may submit a form).
//	The chat's own arguments for the tools that search the page (proxy/chat/oracle.go, never
//	  the model's; the chat decides there over the redacted texts): click {text, candidates:
//	  true} → {candidates: [{ref, name, shown, describe}], where} without clicking; click's value
//	  also has shownName (the name as written); query {…, attrNames: [names]} adds extra: {name:
//	  value} to each match; wait_for {text, textNow: true} → {present, text?} at once; select
//	  {ref, option, options: true} → {options: [{text, value}], element}, {…, index} selects it.
//
// Act mode's page actions (issue 6). Their events are synthetic; refs are outline/query refs.
//
//	type {ref, text (may be ""), clear?: bool = true}
//	  → {typed, value, verified, note?}. Password fields, non-text inputs, read-only and
//	    disabled fields are refused. The value is set with the prototype's native setter, then
//	    input and change events (React-compatible).
//	set_field {ref, text, submit?: bool} → type's value plus, with submit, {submitted,
//	    combobox?, submits?, mayLeave?, navigated, url}: for a combobox-like field ArrowDown
//	    then Enter; otherwise Enter and, unless the page prevented it, the form's requestSubmit
//	    (refused before typing when the form submits to another origin or window).
//	select {ref, option} → {selected, value, element}; a <select> only, by option text or value.
//	press_keys {keys: [Enter | Escape | Tab | Shift+Tab | ArrowUp | ArrowDown | ArrowLeft |
//	    ArrowRight | PageUp | PageDown | Home | End | Backspace], at most 20}
//	  → {pressed: ["Tab -> button \"Save\" [e3]", …], focused, url}
//	scroll {direction?: up|down|left|right|top|bottom, ref?}
//	  → {scrollX, scrollY, viewportHeight, pageHeight, atTop, atBottom, moved} (the page),
//	    {element, scrollTop, scrollLeft, moved, atEnd} (a scrolling element), or
//	    {scrolledTo, box, …} (ref alone: into view; boxWithheld instead of box while a typed
//	    password is held, and for an element the page changed meanwhile).
//	hover {ref} → {hovered, coveredBy?}
//	navigate {url} → {navigating, sameDocument, mayLeave}; the url is resolved and checked here
//	    against the session's origin first (checkNavigate), then again in the page.
//	back {}, forward {} → {going, mayLeave}; refused unless the Navigation API shows the entry
//	    is on this origin.
//	wait_for {ref | text, gone?: bool, timeoutMs?: 0..10000 = 5000}
//	  → {found, gone, waitedMs, element?}; an error when the time runs out.
//	wait_for_stable {ms?: 50..5000 = 500, timeoutMs?: 100..10000 = 5000}
//	  → {stable, waitedMs, mutations, note?}
//	find {text, limit?: 1..100 = 20} → {matches, outline, truncated}: the lines of the whole
//	    page's "all" outline (not bound by an answer's size: up to 200 000 nodes, text lines of
//	    200 characters) containing text, each with its ancestors' lines.
//	page_state {} → {url, dialogs: [`dialog "…" [eN]`], forms: [{container, unsaved: [field]}],
//	    alerts: [text]}: open dialogs, forms (and dialogs) with fields changed from their
//	    defaults, and visible alert/status texts (for the chat's check of done).
//
// Failures (bad arguments, refusals, a stale ref, the page going away, no answer in time) are
// errors whose text, "TOOL: reason", is meant for the model.

// pageToolNames are the tools the page agent has.
var pageToolNames = map[string]bool{
	"outline_html": true, // open_page for another origin of the site: the proxy fetched it (chat/open.go)
	"capture_page": true, "outline": true, "query": true, "inspect_styles": true,
	"read_page_data": true, "click": true, "fetch_page": true,
	// Act mode's page actions (issue 6), find and page_state.
	"type": true, "set_field": true, "select": true, "press_keys": true, "scroll": true, "hover": true,
	"navigate": true, "back": true, "forward": true, "wait_for": true, "wait_for_stable": true,
	"find": true, "page_state": true,
	"report_secrets": true, // not the agent's: the proxy asks for the page's password values (secrets.go)
}

const (
	// defaultPageToolTimeout bounds waiting for an answer when ctx has no deadline.
	defaultPageToolTimeout = 10 * time.Second
	// maxPageToolArgs bounds the arguments of one call.
	maxPageToolArgs = 64 << 10
	// MaxOutlineHTML bounds the HTML the proxy hands the page agent to outline (outline_html).
	MaxOutlineHTML = 512 << 10
	// maxPageToolResult bounds one answer's value (the page agent cuts first).
	maxPageToolResult = 256 << 10
	// maxPageToolsInFlight bounds the calls waiting on one page.
	maxPageToolsInFlight = 16
	// maxResponsesInResult bounds the recorded responses PageTool adds to read_page_data.
	maxResponsesInResult = 128 << 10
)

// ErrGone is the error of a call whose page closed or navigated before it answered.
var ErrGone = errors.New("the page was closed or navigated")

// toolMessage is the call sent to the page agent.
type toolMessage struct {
	Type string          `json:"type"` // "tool"
	ID   uint64          `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// toolAnswer is the page agent's answer, or gone when the page went first.
type toolAnswer struct {
	ok    bool
	value json.RawMessage
	err   string
	gone  bool
}

// toolCalls is a hub's table of calls waiting for their page's answer, by session ID.
type toolCalls struct {
	mu      sync.Mutex
	next    uint64
	pending map[string]map[uint64]chan toolAnswer
}

// add registers a call on sessionID; it refuses when too many wait already.
func (tc *toolCalls) add(sessionID string) (uint64, chan toolAnswer, error) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	calls := tc.pending[sessionID]
	if calls == nil {
		calls = map[uint64]chan toolAnswer{}
		tc.pending[sessionID] = calls
	}
	if len(calls) >= maxPageToolsInFlight {
		return 0, nil, fmt.Errorf("too many page tool calls at once (%d are waiting for this page); wait for their results", len(calls))
	}
	tc.next++
	ch := make(chan toolAnswer, 1)
	calls[tc.next] = ch
	return tc.next, ch, nil
}

func (tc *toolCalls) drop(sessionID string, id uint64) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if calls := tc.pending[sessionID]; calls != nil {
		delete(calls, id)
		if len(calls) == 0 {
			delete(tc.pending, sessionID)
		}
	}
}

// answer delivers a page's answer to the call it names; answers to unknown calls (late ones,
// or made up by the page) are dropped.
func (tc *toolCalls) answer(sessionID string, id uint64, a toolAnswer) {
	tc.mu.Lock()
	ch := tc.pending[sessionID][id]
	tc.mu.Unlock()
	if ch != nil {
		tc.drop(sessionID, id)
		select {
		case ch <- a:
		default:
		}
	}
}

// gone fails every call waiting on sessionID.
func (tc *toolCalls) gone(sessionID string) {
	tc.mu.Lock()
	calls := tc.pending[sessionID]
	delete(tc.pending, sessionID)
	tc.mu.Unlock()
	for _, ch := range calls {
		select {
		case ch <- toolAnswer{gone: true}:
		default:
		}
	}
}

// pageTool sends one agent tool call to the page agent of the session and waits for the answer
// (ctx deadline; default 10 s; the page leaving → error "the page was closed or navigated").
func (h *Hub) pageTool(ctx context.Context, sessionID string, tool string, args json.RawMessage) (json.RawMessage, error) {
	if !pageToolNames[tool] {
		return nil, fmt.Errorf("the page has no tool %q", httpx.Clip(tool, 80))
	}
	limit := maxPageToolArgs
	if tool == "outline_html" {
		limit = MaxOutlineHTML + 4<<10 // the page the proxy fetched, plus its address
	}
	if len(args) > limit {
		return nil, fmt.Errorf("%s: the arguments are %d bytes, over the %d-byte limit", tool, len(args), limit)
	}
	conn, sess, ok := h.conn(sessionID)
	if !ok {
		return nil, ErrGone
	}
	obj, err := toolArgs(tool, args)
	if err != nil {
		return nil, err
	}
	switch tool {
	case "fetch_page":
		if obj, err = checkFetchPage(sess, obj); err != nil {
			return nil, err
		}
	case "navigate":
		if obj, err = checkNavigate(sess, obj); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: the arguments cannot be encoded: %v", tool, err)
	}
	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultPageToolTimeout)
		defer cancel()
	}
	id, ch, err := h.tools.add(sessionID)
	if err != nil {
		return nil, err
	}
	if err := writeJSON(ctx, conn, toolMessage{Type: "tool", ID: id, Tool: tool, Args: raw}); err != nil {
		h.tools.drop(sessionID, id)
		return nil, ErrGone
	}
	// The session may have ended between the lookup and the registration.
	if _, _, ok := h.conn(sessionID); !ok {
		h.tools.drop(sessionID, id)
		return nil, ErrGone
	}
	select {
	case a := <-ch:
		switch {
		case a.gone:
			return nil, ErrGone
		case !a.ok:
			if a.err == "" {
				a.err = "the page agent refused it"
			}
			return nil, fmt.Errorf("%s: %s", tool, a.err)
		case len(a.value) > maxPageToolResult:
			return nil, fmt.Errorf("%s: the result is %d bytes, over the %d-byte limit; ask for less", tool, len(a.value), maxPageToolResult)
		case len(a.value) == 0:
			return json.RawMessage("null"), nil
		}
		return a.value, nil
	case <-ctx.Done():
		h.tools.drop(sessionID, id)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: the page did not answer in time", tool)
		}
		return nil, ctx.Err()
	}
}

// toolArgs decodes a call's arguments: a JSON object, or nothing.
func toolArgs(tool string, args json.RawMessage) (map[string]json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if strings.TrimSpace(string(args)) == "" || strings.TrimSpace(string(args)) == "null" {
		return obj, nil
	}
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("%s: the arguments must be a JSON object", tool)
	}
	return obj, nil
}

// checkFetchPage resolves fetch_page's url against the session's page and refuses any other
// origin, before the page agent is asked.
func checkFetchPage(sess Info, args map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	u, err := sameOriginURL(sess, args, "open_page", "opens only pages of this site")
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(u.Request())
	args["url"] = b
	return args, nil
}

// checkNavigate resolves navigate's url against the session's page and refuses any other
// origin, before the page agent is asked; the page agent checks it again.
func checkNavigate(sess Info, args map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	u, err := sameOriginURL(sess, args, "navigate", "goes only to pages of this site")
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(u.Href())
	args["url"] = b
	return args, nil
}

// NavigateTarget is the address navigate's args go to from the page sess, read and checked as
// pageTool reads and checks it before the page agent is asked (the chat's navigation guard
// expects it); an error when navigate would refuse it.
func NavigateTarget(sess Info, args json.RawMessage) (*weburl.URL, error) {
	obj, err := toolArgs("navigate", args)
	if err != nil {
		return nil, err
	}
	return sameOriginURL(sess, obj, "navigate", "goes only to pages of this site")
}

// sameOriginURL reads args' url against the session's page as the browser reads it (weburl),
// and refuses an address outside the session's origin. The page agent is handed the address
// so read, so what it loads is what was checked.
func sameOriginURL(sess Info, args map[string]json.RawMessage, tool, rule string) (*weburl.URL, error) {
	var raw string
	if err := json.Unmarshal(args["url"], &raw); err != nil || strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf(`%s: url is required: {"url": "/path"}`, tool)
	}
	base, err := weburl.Parse(sess.URL)
	if err != nil {
		return nil, fmt.Errorf("%s: the page's address cannot be read", tool)
	}
	u, err := weburl.Resolve(base, raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not an address", tool, httpx.Clip(raw, 200))
	}
	if !u.IsHTTP() || u.HasCredentials() || !weburl.SameOrigin(u, base) {
		return nil, fmt.Errorf("%s %s (%s); %s is not one, and the agent may not load it", tool, rule, base.Origin(), httpx.Clip(addressShown(u), 200))
	}
	return u, nil
}

// addressShown is an address for a message to the model: whole, or without its user name and
// password when it has them.
func addressShown(u *weburl.URL) string {
	if u.IsHTTP() && u.HasCredentials() {
		return u.Origin() + u.PathQuery()
	}
	return u.Href()
}

// toolResult receives a toolResult message from the page agent of sessionID.
func (h *Hub) toolResult(sessionID string, raw []byte) {
	var m struct {
		ID    uint64          `json:"id"`
		Ok    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Error string          `json:"error"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	h.tools.answer(sessionID, m.ID, toolAnswer{ok: m.Ok, value: m.Value, err: httpx.Clip(m.Error, 2000)})
}

// Tool runs a page tool in the page of sessionID (see pageTool and the list above).
// read_page_data gets "responses": the JSON responses the proxy recorded for that page, newest
// first within 128 KiB.
func (h *Hub) Tool(ctx context.Context, sessionID, tool string, args json.RawMessage) (json.RawMessage, error) {
	out, err := h.pageTool(ctx, sessionID, tool, args)
	if err != nil || tool != "read_page_data" {
		return out, err
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(out, &v) != nil || v == nil {
		return out, nil
	}
	rs := h.Responses(sessionID)
	var keep []RecordedResponse
	total := 0
	for i := len(rs) - 1; i >= 0; i-- {
		total += len(rs[i].Body) + len(rs[i].URL) + 100
		if total > maxResponsesInResult {
			break
		}
		keep = append(keep, rs[i])
	}
	if keep == nil {
		keep = []RecordedResponse{}
	}
	b, err := json.Marshal(keep)
	if err != nil {
		return out, nil
	}
	v["responses"] = b
	return json.Marshal(v)
}
