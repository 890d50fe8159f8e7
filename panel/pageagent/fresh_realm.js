// A fresh realm: built-ins that no page script has touched, for what the agent needs only later.
//
// The page tools' captures (tool_capture.js, tool_act.js, tool_frames.js) are not taken from the
// page's window at start: touching the interfaces they need (Range, HTMLSlotElement, Response,
// History, ...), which Blink creates lazily, and reading their ~150 properties cost the page's
// main thread before its load on every page, for tools that run on few pages (NOTES.lazy14.md).
// They are taken, at the first tool call, from the window of a same-origin about:blank frame
// made then, inside a closed shadow root: a realm the page has never had a reference to (the
// frame is not in window.frames, its load event does not leave the shadow root), so a page
// script's replacement of a built-in is never what the tools call. In Chromium such a realm's
// functions, getters and setters work on the page's own objects.
//
// What must not come from another realm stays captured at start: the event constructors (an
// event made with another realm's constructor reaches the page's handlers with that realm's
// prototypes), fetch (its request client is the page), and everything a path other than a tool
// call uses (the password reports, the remixlets' operations; panel/pageagent_deferred_test.go
// checks it).
//
// Making the frame costs 9-40 ms of main thread, once per page, at the first tool call, which
// waits for a model anyway. The frame stays where it was made; nothing taken from it returns a
// promise (fetch_page's Response methods are the page's, captured at start).

var freshWindow = null;
var freshTried = false;

// freshRealm returns the fresh realm's window, made at the first call; null when it cannot be
// made (no documentElement, no shadow DOM, a frame the browser gave no window). The frame goes
// into the launcher's closed shadow root, which the tools leave out of what they read (mounted
// now if the page has not loaded yet), or, where the launcher cannot mount, into a hidden host
// of its own.
function freshRealm() {
  if (freshTried) {
    return freshWindow;
  }
  freshTried = true;
  try {
    mount(); // launcher.js
    var parent = shadow && host && apply(isConnected, host, []) ? shadow : realmHost();
    if (!parent || !contentWindow) {
      return null;
    }
    var f = el('iframe');
    attr(f, 'data-remixproxy-realm', '');
    attr(f, 'style', 'display: none !important');
    apply(appendChild, parent, [f]);
    var w = apply(contentWindow, f, []);
    if (w && w !== win) {
      freshWindow = w;
    }
  } catch (e) {
    freshWindow = null;
  }
  return freshWindow;
}

// realmHost is a hidden element of the page's with a closed shadow root, for the fresh realm's
// frame where the launcher has none; null without shadow DOM.
function realmHost() {
  var root = apply(documentElement, doc, []);
  if (!root || !attachShadow) {
    return null;
  }
  var h = el('div');
  attr(h, 'data-remixproxy-realm', '');
  attr(h, 'style', 'display: none !important');
  var init = dict();
  init.mode = 'closed';
  var sr = apply(attachShadow, h, [init]);
  apply(appendChild, root, [h]);
  return sr;
}
