package panel

// This file is the wire contract between the browser side (the page agent in pageagent/, and
// panel.js) and the proxy.
// protocol_test.go checks that the JavaScript uses the same paths, codes and type names.

// Host is the magic host name the proxy answers itself.
const Host = "remix.proxy"

// Paths on Host.
const (
	// PanelPath serves panel.html from Files. The page agent loads it in its iframe with no token
	// in the URL and, once it has loaded, posts the panel token to it (see PanelTokenMessage).
	// Opened by hand, the panel also takes the token as the fragment: PanelPath + "#" + token.
	PanelPath = "/panel"
	// AgentSocketPath is the page agent's WebSocket: ws(s)://remix.proxy/agent/ws, its page token
	// (the data-remixproxy attribute of the inserted script) and resume key in its subprotocol
	// (AgentProtocolPrefix), never in the address.
	AgentSocketPath = "/agent/ws"
	// PanelSocketPath is the panel's WebSocket: ws(s)://remix.proxy/panel/ws?t=PANELTOKEN, where
	// PANELTOKEN is Welcome.Panel. Its Origin is https://remix.proxy (or http:// on http pages).
	PanelSocketPath = "/panel/ws"
	// TokenParam is the query parameter that carries the panel token on the panel's socket. A
	// page agent's socket with it (or k) in its address is refused: its token travels in the
	// subprotocol (AgentProtocolPrefix).
	TokenParam = "t"
	// FrameOriginParam names the origin of the page that frames the panel, on the panel's
	// address (https://remix.proxy/panel?for=ORIGIN) and on its socket. The proxy serves the
	// panel with frame-ancestors ORIGIN alone, so the browser shows it only inside a page of that
	// origin (every ancestor checked, in every browser with CSP 2), and accepts a panel socket
	// only when ORIGIN is its session's origin (proxy/chat/panelorigin.go).
	FrameOriginParam = "for"
	// AgentProtocolPrefix starts the one subprotocol the page agent offers: the prefix, its page
	// token, and after a welcome "~" and the resume key (Welcome.Resume). The proxy answers with
	// that same subprotocol. Not in the address, because the browser tells a page the whole
	// address of a request its own Content-Security-Policy blocks or only reports
	// (securitypolicyviolation's blockedURI, report-uri): a Report-Only header, or a <meta>
	// policy a page script adds, would hand the page its token. A subprotocol is in no report.
	AgentProtocolPrefix = "remixproxy~"
)

// TokenAttr is the attribute of the inlined <script> element that carries the agent token.
const TokenAttr = "data-remixproxy"

// WebSocket close codes the proxy sends. On either one the page agent and the panel stop
// reconnecting (the panel until the page agent hands it a new token); on any other close they
// retry after 1s, 2s, 4s ... at most 30s. Exception: the panel takes a normal closure (1000) as
// "the page's agent went away" and waits for a new token instead of retrying.
const (
	CloseTokenUnknown = 4401 // the token is unknown or expired
	CloseRefused      = 4403 // the connection is refused (e.g. wrong Origin)
)

// PersonNav is the page agent's report of the person's own click (a trusted click, auxclick or
// Enter) on a link or a form's submitter: the address it activates, as the browser resolves it.
// The agent's navigation guard lets a navigation with the person's activation leave a page the
// agent loaded only to such an address (proxy/chat/navguard_person.go).
type PersonNav struct {
	Type string `json:"type"` // TypePerson
	URL  string `json:"url"`
	Form bool   `json:"form,omitempty"` // a form's address: its query is the form's data
}

// PersonInput is a page agent's report of the person's own deliberate input (a click on a
// control, Enter or Space on one): the send guard lets the requests of that page that follow it
// closely go uncarded (proxy/chat/sendguard_person.go).
type PersonInput struct {
	Type string `json:"type"` // TypePersonInput
	URL  string `json:"url"`  // the page's address as the page agent knows it (location.href)
}

// Message types. Every message is one JSON object (one WebSocket text frame) with a "type".
const (
	TypeHello   = "hello"   // page agent → proxy, on every open: Hello
	TypeNav     = "nav"     // page agent → proxy, on a same-document navigation: Nav
	TypeWelcome = "welcome" // proxy → page agent, on open: Welcome
	TypeError   = "error"   // proxy → page agent or panel: ErrorMessage
	TypeState   = "state"   // proxy → panel: State
	TypePerson  = "person"  // page agent → proxy, on the person's click on a link or a submitter: PersonNav
	// TypePersonInput: page agent → proxy, on the person's own click on a control, Enter, or
	// Space outside a text field: PersonInput.
	TypePersonInput = "person-input"
	// TypeLeaving: page agent → proxy, when the page starts loading another document within
	// a second after an action's answer (a message with its type alone; proxy/chat/act_leaving.go).
	TypeLeaving = "leaving"

	// TypePanelToken is not a WebSocket message: the page agent sends it to the panel iframe
	// with window.postMessage, target origin http(s)://remix.proxy. See PanelTokenMessage.
	TypePanelToken = "panel-token"
)

// Hello is the page agent's first message on every connection, reconnections included.
type Hello struct {
	Type  string `json:"type"` // TypeHello
	URL   string `json:"url"`  // location.href
	Title string `json:"title"`
	Top   bool   `json:"top"` // always true for now: subframes do not connect
	// Ready is the document's readiness when the agent (re)connects: ReadyLoading,
	// ReadyInteractive or ReadyComplete (see Ready). Absent from page agents older than the
	// remixlets' run times; the proxy then takes the document as complete.
	Ready string `json:"ready,omitempty"`
	// NewWindow is true when the document came from no document of its origin in its tab: the
	// Navigation API's activation names none (navigation.activation.from is null), as for the
	// first page of a popup or of a new tab. A chat never follows its tab to such a page
	// (proxy/chat/follow.go): a same-origin popup is not the tab's next page.
	NewWindow bool `json:"newWindow,omitempty"`
	// From is the address of the entry of its tab the document came from
	// (navigation.activation.from's url), where the browser shows it: an entry of the same
	// origin whose page sent a full referrer. A chat follows its tab only to a page that came
	// from the chat's page (proxy/chat/follow.go): a popup its opener navigates names the
	// opener's page as Referer, yet came from the popup's own previous page.
	From string `json:"from,omitempty"`
}

// TypeReady is a page agent → proxy message: Ready.
const TypeReady = "ready"

// The document's readiness as the page agent reports it (Hello.Ready, Ready.State). The
// remixlet runner starts each script at its manifest's run_at from these (sandbox.RunAt).
const (
	ReadyLoading     = "loading"     // the parser is still running: DOMContentLoaded has not fired
	ReadyInteractive = "interactive" // DOMContentLoaded fired; the window's load has not
	ReadyComplete    = "complete"    // the window's load fired (or the document was complete at start)
)

// Ready reports that the document moved forward: State is ReadyInteractive when
// DOMContentLoaded fired, ReadyComplete when the window's load fired. The page agent sends each
// at most once per document and never backwards; an event that document.readyState contradicts
// (one the page dispatched itself) is not reported. A reconnection reports the state in its Hello.
type Ready struct {
	Type  string `json:"type"` // TypeReady
	State string `json:"state"`
}

// Nav reports a same-document navigation. It is sent once per distinct URL; URL is re-read from
// location.href, never taken from an event.
type Nav struct {
	Type string `json:"type"` // TypeNav
	URL  string `json:"url"`
	// Kind says what moved the URL: "push" (pushState or a link to a fragment), "replace"
	// (replaceState), "pop" (back/forward), "hash" (hashchange without the Navigation API).
	// It is informational; URL is what counts.
	Kind string `json:"kind"`
}

// Welcome answers Hello. The page agent keeps Panel in its closure and hands it only to the
// panel iframe (PanelTokenMessage); Session and URL are informational. Use URL-safe tokens
// (e.g. base64url): the panel puts it in its socket URL with encodeURIComponent.
type Welcome struct {
	Type    string `json:"type"` // TypeWelcome
	Session string `json:"session"`
	URL     string `json:"url"`
	Panel   string `json:"panel"`
	// Resume is the key the page agent sends back (query parameter k) on every reconnection:
	// a token opens one live session, and only its resume key reopens it (proxy/page/claims.go).
	Resume string `json:"resume"`
}

// ErrorMessage carries a message to show or log: the page agent logs it with console.warn
// ("remixproxy: " + Message), the panel shows it.
type ErrorMessage struct {
	Type    string `json:"type"` // TypeError
	Message string `json:"message"`
}

// PanelTokenMessage is what the page agent posts to the panel iframe (postMessage, not the
// WebSocket) after each load of the panel and after each Welcome. The token never appears in a
// URL the page could read.
type PanelTokenMessage struct {
	Type  string `json:"type"` // TypePanelToken
	Token string `json:"token"`
}

// State tells the panel about the page it belongs to. Connected is whether that page's agent is
// connected now.
type State struct {
	Type      string `json:"type"` // TypeState
	Connected bool   `json:"connected"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	Session   string `json:"session"`
}

// Remixlet traffic on the page-agent socket. The proxy relays a remixlet's dom.* calls to the
// page agent as Op messages, after its own static checks; the page agent runs each under the
// page policy and answers with a Result. Nothing on this channel is privileged: rmx.* calls never
// reach the page, and the page's answers are data for the remixlet that asked.
//
// Handles: the page agent keeps one table of element handles per remixlet (a number for each
// element; the elements stay in a Map inside the agent's closure). A handle crosses as
// {"$h": N}; an Op may only use handles from its own remixlet's table, so a remixlet can act only
// on elements it obtained itself.
//
// Marks: every page element a remixlet changes gets the attribute MarkPrefix + the first 8 hex
// digits of the remixlet's ID (e.g. data-remixlet-0123abcd=""); addClass records the classes it
// added in that attribute's value. dom.hide sets HiddenAttr and the inline style
// "display: none !important"; dom.show removes both. Attributes starting with MarkPrefix cannot
// be written with setAttr.
const (
	TypeOp      = "op"      // proxy → page agent: Op
	TypeResult  = "result"  // page agent → proxy: Result, the answer to an Op
	TypeEvent   = "event"   // page agent → proxy: Event, for a listener registered with dom.on
	TypeMutated = "mutated" // page agent → proxy: Mutated, the page changed (debounced)
	TypeReload  = "reload"  // proxy → page agent: Reload
	TypeStyle   = "style"   // proxy → page agent: Style
	TypeRelease = "release" // proxy → page agent: Release

	MarkPrefix = "data-remixlet-"
	HiddenAttr = "data-remixlet-hidden"
	// OwnAttr is on every element a remixlet made (dom.create, dom.clone, dom.setHTML's
	// elements): a stylesheet's own copy (Style.Own) styles those only.
	OwnAttr = "data-remixlet-own"
)

// Op asks the page agent to run one dom operation for a remixlet. Args are the call's arguments
// as the remixlet passed them (JSON data; handles as {"$h": N}, a dom.on listener as
// {"$listener": N}). The operations are sandbox.DOMMethods: query, queryAll, waitFor (answered
// when an element matches or its timeout, args [selector, {"timeout": ms}], ends), text, attr, value,
// rect, style, create, setText, setAttr, addClass, removeClass, setStyle, insert, remove, clone,
// hide, show, on, click, focus, scrollIntoView, addStyle (appends checked CSS to the remixlet's
// stylesheet, see Style) and setHTML.
type Op struct {
	Type     string `json:"type"` // TypeOp
	ID       uint64 `json:"id"`
	Remixlet string `json:"remixlet"` // the remixlet's ID, "rx_" + 32 hex digits
	Op       string `json:"op"`
	Args     []any  `json:"args"`
	// Hosts are the host names this op's href and src addresses may load from beyond the page's
	// origin: the remixlet's own sites and fetch: hosts, as the proxy checked them for this op;
	// for a clone, the remixlet's site patterns ("*.example.com", "*" for every site) and fetch:
	// hosts. The page agent allows an http(s) address when it is on the page's origin or on one
	// of Hosts, or, for a link (href) only, one the page already has exactly as written; and
	// data: images (png, gif, jpeg, webp).
	Hosts []string `json:"hosts,omitempty"`
	// Relative says an address of this op was written relative; the proxy resolved it against the
	// page's URL. The page agent refuses the op when the document's base URL (a <base> element)
	// would resolve it elsewhere.
	Relative bool `json:"rel,omitempty"`
	// Addrs are, for setAttr, create and setHTML, every http(s) address of the op as the proxy
	// resolved, checked and guarded it (serialised by the WHATWG URL rules, without the
	// fragment). The page agent writes an http(s) address only when the browser reads it as one
	// of these, so a spelling the proxy read differently, or an address in HTML the proxy's
	// parser did not see, is left out rather than written unchecked. Absent when the op has no
	// http(s) address: those ops then write none.
	Addrs []string `json:"addrs,omitempty"`
}

// Result answers the Op with the same ID. Ok false means refused or failed; Error says why, in
// words for the remixlet's log. Value is the operation's JSON result (null for none).
type Result struct {
	Type  string `json:"type"` // TypeResult
	ID    uint64 `json:"id"`
	Ok    bool   `json:"ok"`
	Value any    `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

// Event reports an event for a listener that Remixlet registered with dom.on. Event is
// {type, target, key?, value?} (see DOMEventData in sandbox/api.d.ts); key and value are empty
// for password fields.
type Event struct {
	Type     string `json:"type"` // TypeEvent
	Remixlet string `json:"remixlet"`
	Listener int64  `json:"listener"`
	Event    any    `json:"event"`
}

// Mutated tells the proxy that the page changed, at most once per 16 ms, so that rmx.keep
// checks run again. The agent's own changes are not reported. The agent observes the page once
// it has received its first Op.
type Mutated struct {
	Type string `json:"type"` // TypeMutated
}

// Reload asks the page agent to reload its page (location.reload()), e.g. after a remixlet is
// paused, so that its changes are cleared.
type Reload struct {
	Type string `json:"type"` // TypeReload
}

// Style gives the page a remixlet's stylesheet: CSS is the output of rewrite.CheckStylesheet,
// run by the proxy again for this page session (refused parts left out and logged). The page
// agent applies it as one constructable stylesheet per remixlet (new CSSStyleSheet, replaceSync,
// appended to document.adoptedStyleSheets through built-ins it captured at start-up), never as a
// <style> element, so the page's CSP style-src needs no change. A second Style for the same
// remixlet replaces that sheet's rules (and adopts it again if the page removed it); an empty
// CSS empties it.
//
// Own is rewrite.OwnSheet's copy of CSS: each rule restricted to the elements remixlets made
// (OwnAttr). The page agent adopts it before CSS, and at the first key of a secret on the page
// (a password, a card number) empties CSS's sheet for the rest of the document, keeping Own: a
// rule keyed on page state would put the remixlet's elements under the person's pointer by what
// the page wrote while the secret was typed (OPEN-ITEMS 118). CSS is not adopted at all once a
// secret was typed or while a sensitive field holds a value.
type Style struct {
	Type     string `json:"type"`     // TypeStyle
	Remixlet string `json:"remixlet"` // the remixlet's ID, "rx_" + 32 hex digits
	CSS      string `json:"css"`
	Own      string `json:"own,omitempty"`
}

// FirstSheet is one remixlet stylesheet the proxy put into the bootstrap tag of a page it
// injected into (the data-remixproxy-sheets attribute: a JSON array of these, ASCII, HTML-escaped),
// so the page agent adopts it before the page's first paint, as Style would. CSS is exactly what
// the runner would send as Style for that remixlet and version (rewrite.CheckStylesheet's output,
// only for a stylesheet with no refused part). The page agent reports the sheets it still holds
// as adopted from the bootstrap, untouched by any Style or Release since, in its socket's address
// (FirstSheetsParam), so the runner does not send them a second time.
type FirstSheet struct {
	Remixlet string `json:"remixlet"` // the remixlet's ID
	Version  int64  `json:"version"`  // the active version whose stylesheet this is
	CSS      string `json:"css"`
	Own      string `json:"own,omitempty"` // as Style.Own
}

// FirstSheetsParam is the query parameter of the page agent's socket address that lists the
// first-frame sheets it holds: "ID:VERSION" pairs joined by commas.
const FirstSheetsParam = "s"

// Release tells the page agent that the proxy stopped a remixlet on this page (an SPA navigation
// out of its matches, a pause, a switch-off, a new version): the page agent drops that
// remixlet's handle table, removes its dom.on listeners and empties its stylesheet (style.css and
// what dom.addStyle added). Changes it made to the page stay until the page reloads. A remixlet
// started again on the page starts with a fresh table.
type Release struct {
	Type     string `json:"type"`     // TypeRelease
	Remixlet string `json:"remixlet"` // the remixlet's ID
}

// The small rmx services on the page-agent socket: clipboard, notifications, the button that
// opens the panel's list of remixlet commands, and opening a page for a schedule. Each call was checked in Go (the
// remixlet's standing and its permission) before its message is sent; the page agent shows text
// only with textContent, never as HTML, in its closed shadow root.
const (
	TypeClipboard = "clipboard" // proxy → page agent: Clipboard, answered by a Result
	TypeNotify    = "notify"    // proxy → page agent: Notify
	TypeMenu      = "menu"      // proxy → page agent: Menu
	TypeOpen      = "open"      // proxy → page agent: Open
)

// Clipboard asks the page agent to write Text to the clipboard for Remixlet, with the
// navigator.clipboard.writeText it captured at start-up, and only while the page has transient
// user activation (navigator.userActivation.isActive: the person clicked or pressed a key on the
// page moments ago). It answers with a Result of the same ID: ok, or an error saying why not
// (ClipboardNoGesture when there was no gesture). It never reads the clipboard.
type Clipboard struct {
	Type     string `json:"type"` // TypeClipboard
	ID       uint64 `json:"id"`
	Remixlet string `json:"remixlet"`
	Text     string `json:"text"`
}

// ClipboardNoGesture is the page agent's error for a clipboard write without a user gesture.
const ClipboardNoGesture = "the clipboard can be written only right after you click or press a key on the page"

// Notify shows a text notification: a toast in the launcher's closed shadow root (textContent
// only; it goes away by itself after a few seconds, or on a click on it; at most
// NotifyPerMinute a minute per Source), and a system notification (new Notification) only when
// the page's origin already has that permission — the page agent never asks for it.
type Notify struct {
	Type     string `json:"type"`     // TypeNotify
	Remixlet string `json:"remixlet"` // the remixlet's ID
	Source   string `json:"source"`   // the remixlet's name, shown with the text
	Title    string `json:"title"`
	Body     string `json:"body,omitempty"`
}

// NotifyPerMinute is how many notifications one remixlet may show a minute; the proxy enforces
// it, the page agent again per page.
const NotifyPerMinute = 5

// Menu tells the launcher Remixlet's commands on this page (an empty list removes them). The
// launcher shows a second small button next to it when any remixlet has commands; a trusted
// click on it opens the panel, which lists the commands and is where the person chooses one
// (proxy/page/commands.go: a command runs only on the panel's report, never on the page
// agent's, since a page can hold its own page-agent session). A Release removes the remixlet's
// commands too.
type Menu struct {
	Type     string        `json:"type"`     // TypeMenu
	Remixlet string        `json:"remixlet"` // the remixlet's ID
	Source   string        `json:"source"`   // the remixlet's name, shown as the group label
	Commands []MenuCommand `json:"commands"`
}

// MenuCommand is one command of a Menu.
type MenuCommand struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// Open asks the page agent to show URL for a schedule of Source: if the page is at URL already
// it focuses the window, else it navigates there — only when URL has the page's origin. It also
// shows a toast saying which remixlet asked.
type Open struct {
	Type   string `json:"type"` // TypeOpen
	URL    string `json:"url"`
	Source string `json:"source"`
}

// The agent's redaction stage (issue 11; proxy/chat/redaction.go). The page agent reports the
// values of the page's password fields (the page's, its same-origin frames' and those in open
// shadow roots) and its script-visible cookie values, so that the proxy can remove them from
// everything the model is sent; the model never sees a report. It reports when a page tool
// starts and before each answer (unless nothing changed since its last report on this
// connection), and when a password field changes (that field alone, at once). The proxy keeps
// the values in memory for the page session only: never stored, logged or traced.
const TypeSecrets = "secrets" // page agent → proxy: Secrets

// Secrets is one report.
type Secrets struct {
	Type    string        `json:"type"` // TypeSecrets
	Fields  []SecretField `json:"fields"`
	Cookies []string      `json:"cookies"` // the values of document.cookie's pairs
}

// SecretField is one password field's value. ID names the field for the page's life, so a later
// report of it replaces the value (the letters of a value being typed replace each other); a
// field that is empty is not reported, and the proxy keeps its last value.
type SecretField struct {
	ID    int64  `json:"id"`
	Value string `json:"value"` // at most 1024 characters: longer values are cut
}
