/*
 * remixproxy page agent.
 *
 * The proxy inlines the page agent as the first script in <head> of every HTML document:
 *
 *   <script data-remixproxy="TOKEN" nonce="..."> the page agent </ script>   (without the space)
 *
 * so it runs before any script of the page. It keeps a WebSocket to the proxy
 * (wss://remix.proxy/agent/ws; opened at once where remixlets run or a chat follows the tab,
 * after the page's load elsewhere) and shows a launcher button that opens the panel iframe
 * (https://remix.proxy/panel), handing it the panel token with postMessage.
 *
 * The page is hostile. Everything used after start-up is captured now, before page scripts run,
 * and is only ever called through the captured Reflect.apply (or `new` on a captured
 * constructor), so a page that later replaces
 * WebSocket.prototype.send, JSON.stringify, Element.prototype.setAttribute, a getter such as
 * MessageEvent.prototype.data, or Array/String methods cannot receive our socket, our elements,
 * our closed shadow root or our tokens as `this` or as an argument. Rules kept throughout:
 *   - the token, the panel token and the socket live only in this closure; nothing goes on window
 *     but the mark that one agent runs there (takeToken: a symbol-keyed property, true);
 *   - no secret goes into an address (the socket's token and resume key are in its subprotocol:
 *     the browser tells a page the address of a request its policy blocks or reports);
 *   - no method is called on a secret string (only `+`, comparison and the captured
 *     encodeURIComponent), no spread, no for-of, no promises (all use page-replaceable built-ins);
 *   - objects handed to the browser or to JSON.stringify have a null prototype, so getters the
 *     page adds to Object.prototype (toJSON, serializable, clonable, subtree ...) are not seen;
 *   - no Trusted Types sinks and no string-to-code: DOM built with createElement + textContent,
 *     styled with one constructable stylesheet adopted by a closed shadow root;
 *   - listeners on window are registered in the capture phase, first, so a page listener cannot
 *     stop them from running (it can only run after them).
 *
 * What a hostile page can still do (privileges live in Go, not here, for this reason):
 *   - lie in what it shows: document.title, the DOM, the URL it pushState()s to within its own
 *     origin (location.href itself is read through the unforgeable Location getters and is true);
 *   - hide its own SPA navigations from the history wrappers by calling a saved original
 *     pushState (the Navigation API listener, where the browser has one, still sees them);
 *   - fire synthetic popstate/hashchange events (harmless: we re-read location.href and report
 *     only real changes) or synthetic clicks (ignored: only isTrusted clicks open the panel);
 *   - hide, cover or remove the launcher (it is re-appended once, then left alone), fade or move
 *     it through its ancestors (opacity, filter, transform on <html>), or wipe our listeners with
 *     document.open();
 *   - read this source (e.g. toString() of the history wrappers): it holds no secret;
 *   - starve the event loop so that nothing here runs at all.
 * It cannot reach the panel iframe: it sits in a closed shadow root, and frames inside shadow
 * trees are not listed in window.frames.
 *
 * Source files. At run time the page agent is one closure (the capture of built-ins before page
 * scripts run needs it); its source is this ordered list of files, one concern each, which
 * panel/pageagent.go joins in the order of its agentParts list (as the content scripts of an
 * extension's manifest) between "(function () { 'use strict';" and "})();", and minifies once.
 * A file's top-level names are names of that one closure: never globals, seen by every file.
 *   prologue.js      the token, read and removed before anything else
 *   capture.js       the built-ins and DOM functions everything else calls
 *   helpers.js       small helpers over the captures; refusals
 *   fresh_realm.js   a fresh realm's built-ins, for the page tools' captures at their first call
 *   channel.js       the WebSocket to the proxy: messages, reconnects, back/forward cache
 *   navigation.js    reports of same-document navigations
 *   person_nav.js    the person's own clicks on links and submitters, for the navigation guard
 *   rx_run.js        remixlet operations: the overview, the dispatcher, page-change reports
 *   rx_handles.js    remixlet handles and marks; dom.query
 *   rx_policy.js     the page policy: attributes, loaders, password fields
 *   rx_addresses.js  the address rule
 *   rx_styles.js     inline styles
 *   rx_events.js     dom.on and what events may tell
 *   rx_build.js      dom.create, insert, clone, setHTML
 *   rx_layout.js     dom.rect and dom.style
 *   rx_click.js      dom.click and what it may activate
 *   rx_sheets.js     remixlet stylesheets (style.css, dom.addStyle)
 *   rx_ready.js      the document's readiness, reported for the remixlets' run times
 *   rx_wait.js       dom.waitFor: a MutationObserver for elements that appear later
 *   tool_capture.js  the AI agent's page tools: their captures and bounds
 *   tool_helpers.js  text, argument and URL helpers of the page tools
 *   tool_geometry.js boxes and visibility
 *   tool_frames.js   same-origin frames
 *   tool_refs.js     element refs (e12)
 *   tool_names.js    roles and accessible names
 *   tool_outline.js  the outline
 *   tool_read.js     capture_page, query, inspect_styles, read_page_data
 *   tool_click.js    click and what it may activate
 *   tool_act.js      Act mode's shared parts: events, focus, waiting
 *   tool_type.js     type, set_field, select
 *   tool_keys.js     press_keys
 *   tool_scroll.js   scroll and hover
 *   tool_history.js  navigate, back, forward
 *   tool_wait.js     wait_for, wait_for_stable
 *   tool_find.js     find
 *   tool_state.js    page_state
 *   tool_fetch.js    fetch_page and outline_html
 *   tool_secrets.js  password values for the proxy's redaction stage; the answers' scrub
 *   tool_table.js    the tools table and the answers
 *   services.js      rmx services: clipboard, notifications, the menu of commands, open
 *   launcher.js      the launcher button and the panel iframe
 *   start.js         the one place the agent starts
 * Rules for the files, on top of the ones above (panel/pageagent_test.go checks them):
 *   - each file is a valid script on its own (node parses each one): top-level var and function
 *     declarations, tables filled at start-up, no top-level return; what starts the agent
 *     (listeners, the socket, the launcher) is in functions that start.js calls;
 *   - a top-level name is declared in one file only: a second declaration of a name would
 *     silently replace the first in the closure;
 *   - a global (window, document, Element, JSON ...) is read only at top level, i.e. at start-up
 *     before page scripts run; a function uses captures, never a global. The one exception is
 *     the page tools' captures, taken at the first tool call from a fresh realm's window that no
 *     page script ever reached (fresh_realm.js), never from this window; and the services'
 *     interfaces (services.js's captureServices), read at top level only where remixlets run;
 *   - a top-level statement uses only names of its own file or of files before it;
 *   - ASCII only (escape anything else as \uXXXX), so the inlined script is ASCII whatever the
 *     page's charset.
 */

var doc = document;
var win = window;
var firstSheetsText = ''; // the tag's data-remixproxy-sheets, until rx_sheets.js adopts them
var connectNow = false;    // the tag's data-remixproxy-now: connect at once (start.js)
// One page agent per window (takeToken): the first marks the window with a symbol-keyed,
// non-configurable property, which no markup can create and no page script has had a chance to.
var agentMark = Object.create(null);
agentMark.value = true;
var firstAgent = false;
try {
  firstAgent = !(Symbol['for']('remixproxy.agent') in win) &&
    Reflect.defineProperty(win, Symbol['for']('remixproxy.agent'), agentMark);
} catch (e) { /* not first */ }
var token = takeToken();

// takeToken reads the token and the first-frame sheets, and removes our own <script> element
// before anything else happens. It returns '' when there is none, or when this is not the
// top-level frame (only the top-level frame talks to the proxy for now); then the agent does not
// start (start.js).
//
// One page agent per window: a later one (firstAgent false) reads nothing from its tag and
// starts nothing. The agent's script is public and the page's script-src allows it (the proxy
// adds it for the real one), so markup injected into a page (an HTML-injection bug, no script
// of its own) could load it again with data-remixproxy-sheets of its choosing: CSS that the
// page's style-src would refuse, as an adopted stylesheet is not governed by it.
function takeToken() {
  var script = doc.currentScript;
  if (!script) {
    return '';
  }
  if (!firstAgent) {
    if (script.parentNode) {
      script.parentNode.removeChild(script);
    }
    return '';
  }
  var t = script.getAttribute('data-remixproxy');
  var sheets = script.getAttribute('data-remixproxy-sheets');
  if (typeof sheets === 'string') {
    firstSheetsText = sheets;
  }
  connectNow = script.hasAttribute('data-remixproxy-now');
  if (script.parentNode) {
    script.parentNode.removeChild(script);
  }
  if (typeof t !== 'string' || t === '' || win.top !== win) {
    return '';
  }
  return t;
}
