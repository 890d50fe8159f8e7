// ---- Launcher and panel. --------------------------------------------------------------------
//
// The launcher shows once the page has loaded, grey and inert until the proxy's welcome
// arrives, so a person sees that remixproxy is there even while it connects. Once a panel is
// open it stays usable while disconnected (the panel shows its own status).

// How often the launcher is put back after the page removes it. One: enough to survive a
// framework that rebuilds <html> once on hydration, without fighting a page that insists.
var REATTACH_LIMIT = 1;

// The host resets everything it inherits or the page could set on it (all: initial !important);
// inside the closed shadow root no page rule reaches the button or the frame, so they set only
// what the browser's own styles give them. Not all: initial there too: each `all` expands to
// every property, and parsing this sheet cost 2-3x as much with three of them (a few ms of the
// page's main thread on every page).
var CSS = [
  ':host {',
  '  all: initial !important;',
  '  display: block !important;',
  '  position: fixed !important;',
  '  right: 0 !important;',
  '  bottom: 0 !important;',
  '  width: 0 !important;',
  '  height: 0 !important;',
  '  overflow: visible !important;',
  '  z-index: 2147483647 !important;',
  '}',
  'button {',
  '  appearance: none;',
  '  margin: 0;',
  '  padding: 0;',
  '  position: fixed;',
  '  right: 16px;',
  '  bottom: 16px;',
  '  z-index: 2147483647;',
  '  box-sizing: border-box;',
  '  width: 44px;',
  '  height: 44px;',
  '  border: 2px solid #ffffff;',
  '  border-radius: 50%;',
  '  display: flex;',
  '  align-items: center;',
  '  justify-content: center;',
  '  background: #1f6feb;',
  '  color: #ffffff;',
  '  font: 700 15px/1 system-ui, -apple-system, "Segoe UI", sans-serif;',
  '  letter-spacing: 0.02em;',
  '  cursor: pointer;',
  '  box-shadow: 0 2px 8px rgba(0, 0, 0, 0.35);',
  '  user-select: none;',
  '}',
  'button:hover { background: #1858c4; }',
  'button:focus-visible { outline: 3px solid #f2b705; outline-offset: 2px; }',
  'button[aria-disabled="true"] { background: #8c959f; cursor: default; }',
  'button[aria-expanded="true"] { background: #0d419d; }'
];

// FRAME_CSS styles the panel iframe: a sheet of its own, made when the panel first opens, so
// that the pages where nobody opens it do not parse it (about 0.5 ms of the page's main thread,
// NOTES 2026-12-02).
var FRAME_CSS = [
  'iframe {',
  '  margin: 0;',
  '  padding: 0;',
  '  display: none;',
  '  position: fixed;',
  '  right: 16px;',
  '  bottom: 72px;',
  '  z-index: 2147483647;',
  '  box-sizing: border-box;',
  '  width: 380px;',
  '  height: 560px;',
  '  max-width: calc(100vw - 32px);',
  '  max-height: calc(100vh - 88px);',
  '  border: 1px solid #d0d7de;',
  '  border-radius: 12px;',
  '  background: #ffffff;',
  '  box-shadow: 0 8px 28px rgba(0, 0, 0, 0.28);',
  '}',
  'iframe[data-open] { display: block; }'
];

var host = null;     // <div data-remixproxy-launcher>, in the page's DOM
var shadow = null;   // its closed shadow root; never leaves this closure
var button = null;
var frame = null;    // the panel iframe, created on first open
var launcherSheet = null; // CSS, adopted by the shadow root
var frameSheet = null;    // FRAME_CSS, adopted beside it once the panel has opened
var frameLoaded = false;
var open = false;
var reattachLeft = REATTACH_LIMIT;

function joinLines(lines) {
  var out = '';
  var i;
  for (i = 0; i < lines.length; i++) {
    out = out + lines[i] + '\n';
  }
  return out;
}

function mount() {
  if (host || !attachShadow || !Sheet || !replaceSync || !setAdoptedStyleSheets) {
    return;
  }
  var root = apply(documentElement, doc, []);
  if (!root) {
    return;
  }
  var h = el('div');
  attr(h, 'data-remixproxy-launcher', '');
  var init = dict();
  init.mode = 'closed';
  var sr = apply(attachShadow, h, [init]);
  if (!launcherSheet) {
    launcherSheet = new Sheet();
    apply(replaceSync, launcherSheet, [joinLines(CSS)]);
  }
  adoptSheets(sr);

  var b = el('button');
  attr(b, 'type', 'button');
  attr(b, 'aria-label', 'Open remixproxy panel');
  attr(b, 'aria-expanded', 'false');
  text(b, 'rx');
  apply(appendChild, sr, [b]);

  host = h;
  shadow = sr;
  button = b;
  render();
  apply(appendChild, root, [h]);
  watchRemoval(root);
}

// watchRemoval puts the launcher back, at most REATTACH_LIMIT times, when the page removes it
// or replaces the whole <html> element.
function watchRemoval(root) {
  if (typeof MO !== 'function' || !moObserve || !isConnected) {
    return;
  }
  var opts = dict();
  opts.childList = true;
  var observer = new MO(function () {
    if (!host || apply(isConnected, host, [])) {
      return;
    }
    if (reattachLeft <= 0) {
      apply(moDisconnect, observer, []);
      return;
    }
    var r = apply(documentElement, doc, []);
    if (!r) {
      return; // <html> is gone for now; the document observer fires again when it is back
    }
    reattachLeft--;
    try {
      apply(appendChild, r, [host]);
      apply(moObserve, observer, [r, opts]);
    } catch (e) { /* give up quietly */ }
  });
  apply(moObserve, observer, [root, opts]);
  apply(moObserve, observer, [doc, opts]);
}

function render() {
  if (!host) {
    return;
  }
  attr(host, 'data-remixproxy-state', state);
  var usable = state === 'connected' || frame !== null;
  attr(button, 'aria-disabled', usable ? 'false' : 'true');
  attr(button, 'aria-expanded', open ? 'true' : 'false');
  attr(button, 'title', state === 'connected' ? (open ? 'Close remixproxy panel' : 'Open remixproxy panel')
    : state === 'connecting' ? 'remixproxy: connecting\u2026'
      : 'remixproxy: not connected' + (refusedWhy ? ' (' + refusedWhy + ')' : ''));
  if (frame) {
    if (open) {
      attr(frame, 'data-open', '');
    } else {
      unattr(frame, 'data-open');
    }
  }
}

// adoptSheets gives the shadow root sr the launcher's sheet, and the frame's once it exists. The
// browser converts the array with the page's Array iterator; at worst the page sees our
// stylesheet objects, which hold nothing secret and lead to nothing else.
function adoptSheets(sr) {
  apply(setAdoptedStyleSheets, sr, [frameSheet ? [launcherSheet, frameSheet] : [launcherSheet]]);
}

function createFrame() {
  if (!frameSheet) {
    frameSheet = new Sheet();
    apply(replaceSync, frameSheet, [joinLines(FRAME_CSS)]);
    adoptSheets(shadow);
  }
  var f = el('iframe');
  attr(f, 'title', 'remixproxy panel');
  attr(f, 'allow', '');
  attr(f, 'referrerpolicy', 'no-referrer');
  // The token is not in the URL: the page can read the URLs its frames load (Resource Timing
  // lists them, fragment included, in Chromium). It is posted once the panel has loaded.
  attr(f, 'src', PANEL_URL);
  on(f, 'load', function () {
    frameLoaded = true;
    deliverPanelToken();
  });
  frame = f;
  apply(appendChild, shadow, [f]);
}

// deliverPanelToken posts the panel token to the panel iframe, on each load of the panel and
// on each welcome. The target origin makes the browser drop the message unless the frame holds
// a remix.proxy document. The frame's window is cross-origin, so the page cannot have replaced
// its postMessage; and the page has no way to reach the frame (closed shadow root, and frames
// inside shadow trees are not in window.frames).
function deliverPanelToken() {
  if (!frame || !frameLoaded || panelToken === '' || !contentWindow) {
    return;
  }
  try {
    var target = apply(contentWindow, frame, []);
    if (target) {
      var m = message('panel-token');
      m.token = panelToken;
      target.postMessage(m, PANEL_ORIGIN);
    }
  } catch (e) { /* the frame is gone or navigating; the next load sends again */ }
}

function toggle() {
  if (!frame) {
    if (state !== 'connected' || panelToken === '') {
      return;
    }
    createFrame();
  }
  open = !open;
  render();
  if (open && focus) {
    try {
      apply(focus, frame, []);
    } catch (e) { /* focus is a nicety */ }
  }
}

// openPanel opens the panel if it is closed (the commands button, services.js), mounting the
// launcher first when the page has not loaded yet.
function openPanel() {
  if (!shadow) {
    whenReady();
  }
  if (shadow && !open) {
    toggle();
  }
}

// startLauncher shows the launcher once the page has loaded and takes clicks on it.
function startLauncher() {
  // Clicks are taken at window, capture phase, registered before any page script: the page cannot
  // stop them reaching us, and inside a closed shadow root the event's target there is the host.
  on(win, 'click', function (ev) {
    if (!host || ev.isTrusted !== true) {
      return;
    }
    var t = null;
    try {
      t = apply(eventTarget, ev, []);
    } catch (e) { /* keep null */ }
    if (t === host) {
      toggle();
    }
  }, true);

  // Mounted after the load event (afterLoad), so that neither DOMContentLoaded nor load waits
  // for it: the mount and its sheet are about 6 ms of the page's main thread (NOTES,
  // 2026-12-02).
  afterLoad(whenReady);
}

function whenReady() {
  try {
    mount();
  } catch (e) {
    warn('could not show the launcher');
  }
}
