// ---- rmx services: clipboard, notifications, the menu of commands, open. ------------------
//
// The proxy has checked each call in Go (the remixlet's standing and its permission) before it
// sends one of these messages; what is done here keeps the page safe even if it had not:
//   - {type:'clipboard', id, remixlet, text}: writes text with the clipboard API captured now,
//     only while the page has transient user activation (the person clicked or pressed a key
//     moments ago), and answers {type:'result', id, ok, error}. It never reads the clipboard.
//   - {type:'notify', remixlet, source, title, body}: a toast in a closed shadow root of its
//     own (textContent only, never HTML; gone after a few seconds or on a click), at most
//     NOTIFY_PER_MINUTE a minute per remixlet; and a system notification only when the page's
//     origin already has that permission. It never asks for the permission.
//   - {type:'menu', remixlet, source, commands:[{id, label}]}: the remixlet's whole list of
//     commands. A small button next to the launcher shows while any remixlet has commands; a
//     trusted click on it opens the panel, which lists them and is where the person chooses
//     one. Commands are never chosen in the page: a page can hold its own page-agent session
//     (a same-origin popup's reused Window), and the proxy runs a command only on the panel's
//     report (proxy/page/commands.go).
//   - {type:'open', url, source}: focuses the window when the page is at url, else navigates
//     there, only within the page's origin; a toast says which remixlet asked.
// The tray (toasts, the commands button) has its own host element, so clicks in it are never
// taken for clicks on the launcher. A page can hide or cover it, or stop clicks reaching its
// buttons (a window capture listener that stops propagation); it cannot fake a trusted click or
// make a remixlet's text run as HTML. A closed shadow root hides its nodes but not their text
// from window.find (red-team pass 3), so a toast's text is CSS generated content (span), which
// find does not search. A page that holds its own page-agent session (a
// same-origin popup whose Window it patched before we started) sees every message, clipboard
// texts included. That is why commands run only from the panel, and why api.d.ts tells
// remixlet authors that the page may see toast and clipboard texts.

// The services' browser interfaces (Navigator, Clipboard, UserActivation, Notification) are
// captured at start only where remixlets run or a chat follows the tab (the tag's
// data-remixproxy-now, connectNow in prologue.js): touching them, which Blink does lazily, was
// 0.2-0.4 ms of every page's main thread before its load (NOTES.lazy14.md), for ops few pages see.
// Elsewhere they are never captured: a remixlet switched on while the tab is open gets its toast
// without the system notification, and its clipboard write answers RELOAD_CLIPBOARD. Taking them
// later from the page's window would call what the page's scripts may have replaced meanwhile;
// taking them from a fresh realm (fresh_realm.js) is unchecked in Chromium for these two (the
// clipboard write checks the focus and user activation of the realm it comes from; a
// Notification would belong to the hidden frame), so the slice stops here (NOTES.services14.md).
//
// The clipboard and the user-activation objects are read at the first clipboard op, through
// Navigator.prototype's getters captured at start: a page that later replaces those getters or
// navigator itself changes nothing, and the browser does not create the two objects on every
// page for an op few remixlets use (reading them at start was 0.2 ms of each page's main
// thread, NOTES 2026-12-02).
var servicesCaptured = false;
var nav = null;
var navClipboard = null;
var navUserActivation = null;
var clipboardWriteText = null;
var activationIsActive = null;
var NotificationCtor = null;
var notificationPermission = null;

// captureServices fills the services' captures from w, the page's window, at start.
function captureServices(w) {
  nav = w.navigator;
  navClipboard = getter(proto(w.Navigator), 'clipboard');
  navUserActivation = getter(proto(w.Navigator), 'userActivation');
  clipboardWriteText = proto(w.Clipboard) && w.Clipboard.prototype.writeText;
  activationIsActive = getter(proto(w.UserActivation), 'isActive');
  NotificationCtor = w.Notification;
  notificationPermission = getter(NotificationCtor, 'permission');
  servicesCaptured = true;
}
if (connectNow) {
  captureServices(win);
}

// navObject calls a captured Navigator getter on the page's navigator: null when there is
// none (no clipboard on an insecure page, no user activation in an old browser).
function navObject(get) {
  if (!nav || typeof get !== 'function') {
    return null;
  }
  try {
    return apply(get, nav, []) || null;
  } catch (e) {
    return null;
  }
}
var windowFocus = win.focus;

var RELOAD_CLIPBOARD = 'reload the page to let this remixlet write the clipboard';
var NO_GESTURE = 'the clipboard can be written only right after you click or press a key on the page';
var NOTIFY_PER_MINUTE = 5;
var TOAST_MS = 6000;
var MAX_TOASTS = 3;

var TRAY_CSS = [
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
  '.toasts {',
  '  position: fixed; right: 16px; bottom: 72px; z-index: 2147483647;',
  '  display: flex; flex-direction: column; gap: 8px; width: 320px; max-width: calc(100vw - 32px);',
  '}',
  '.toast {',
  '  all: initial; box-sizing: border-box; display: block; padding: 10px 12px;',
  '  background: #ffffff; color: #1f2328; border: 1px solid #d0d7de; border-radius: 10px;',
  '  box-shadow: 0 6px 20px rgba(0, 0, 0, 0.25);',
  '  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif;',
  '  white-space: pre-wrap; overflow-wrap: anywhere; cursor: default;',
  '}',
  '.src::before, .title::before, .body::before { content: attr(data-text); }',
  '.src { display: block; font-size: 12px; color: #57606a; }',
  '.title { display: block; font-weight: 600; }',
  '.body { display: block; }',
  '.more {',
  '  all: initial; position: fixed; right: 66px; bottom: 24px; z-index: 2147483647;',
  '  box-sizing: border-box; width: 28px; height: 28px; border-radius: 50%;',
  '  border: 2px solid #ffffff; background: #1f6feb; color: #ffffff; cursor: pointer;',
  '  display: flex; align-items: center; justify-content: center;',
  '  font: 700 14px/1 system-ui, -apple-system, "Segoe UI", sans-serif;',
  '  box-shadow: 0 2px 8px rgba(0, 0, 0, 0.35);',
  '}',
  '.more[data-none] { display: none; }',
  '.more:focus-visible { outline: 3px solid #f2b705; outline-offset: 2px; }'
];

var tray = null;      // <div data-remixproxy-tray>, in the page's DOM
var trayRoot = null;  // its closed shadow root; never leaves this closure
var toastBox = null;
var moreButton = null;
var menus = null;      // remixlet ID -> how many commands it has on this page
var notifyTimes = null; // remixlet ID -> list of times shown in the last minute

function now() {
  return apply(dateNow, null, []);
}

// trayShadow makes the tray on first use and puts it back when the page removed it.
function trayShadow() {
  var root = apply(documentElement, doc, []);
  if (!root || !attachShadow || !Sheet || !replaceSync || !setAdoptedStyleSheets) {
    return null;
  }
  if (!tray) {
    var h = el('div');
    attr(h, 'data-remixproxy-tray', '');
    var init = dict();
    init.mode = 'closed';
    var sr = apply(attachShadow, h, [init]);
    var sheet = new Sheet();
    apply(replaceSync, sheet, [joinLines(TRAY_CSS)]);
    apply(setAdoptedStyleSheets, sr, [[sheet]]);
    var box = el('div');
    attr(box, 'class', 'toasts');
    attr(box, 'role', 'status');
    attr(box, 'aria-live', 'polite');
    apply(appendChild, sr, [box]);
    var b = el('button');
    attr(b, 'type', 'button');
    attr(b, 'class', 'more');
    attr(b, 'aria-label', 'Remixlet commands (in the remixproxy panel)');
    attr(b, 'title', 'Remixlet commands: opens the remixproxy panel');
    attr(b, 'data-none', '');
    text(b, '\u22ef');
    on(b, 'click', function (ev) {
      if (ev.isTrusted === true) {
        openPanel();
      }
    });
    apply(appendChild, sr, [b]);
    tray = h;
    trayRoot = sr;
    toastBox = box;
    moreButton = b;
  }
  if (isConnected && !apply(isConnected, tray, [])) {
    apply(appendChild, root, [tray]);
  }
  return trayRoot;
}

// span shows value as CSS generated content (TRAY_CSS: content: attr(data-text)), never as a
// text node: a page's window.find (and its selection, where it reaches in) finds the text
// nodes of a closed shadow root, not generated content, so the page cannot read a toast by
// searching for it letter by letter (red-team pass 3). Still text, never HTML; screen readers
// read generated content.
function span(cls, value) {
  var s = el('span');
  attr(s, 'class', cls);
  attr(s, 'data-text', value);
  return s;
}

// toast shows source, title and body as text for a few seconds.
function toast(source, title, body) {
  if (!trayShadow()) {
    return;
  }
  var box = el('div');
  attr(box, 'class', 'toast');
  if (source !== '') {
    apply(appendChild, box, [span('src', source)]);
  }
  apply(appendChild, box, [span('title', title)]);
  if (body !== '') {
    apply(appendChild, box, [span('body', body)]);
  }
  var dismiss = function () {
    if (parentOf(box) === toastBox) {
      try {
        apply(removeChildFn, toastBox, [box]);
      } catch (e) { /* already gone */ }
    }
  };
  on(box, 'click', dismiss);
  var shown = 0;
  var c = firstChild(toastBox);
  while (c) {
    shown++;
    c = nextSibling(c);
  }
  if (shown >= MAX_TOASTS) {
    apply(removeChildFn, toastBox, [firstChild(toastBox)]);
  }
  apply(appendChild, toastBox, [box]);
  later(dismiss, TOAST_MS);
}

function textField(m, name, max) {
  var v = own(m, name);
  if (typeof v !== 'string') {
    return '';
  }
  return v.length > max ? apply(strSlice, v, [0, max]) : v;
}

// notifyAllowed counts a notification of rx against the rate.
function notifyAllowed(rx) {
  if (!notifyTimes) {
    notifyTimes = new MapCtor();
  }
  var t = now();
  var old = apply(mapGet, notifyTimes, [rx]) || list();
  var keep = list();
  var i;
  for (i = 0; i < old.length; i++) {
    if (t - old[i] < 60000) {
      put(keep, keep.length, old[i]);
    }
  }
  if (keep.length >= NOTIFY_PER_MINUTE) {
    apply(mapSet, notifyTimes, [rx, keep]);
    return false;
  }
  put(keep, keep.length, t);
  apply(mapSet, notifyTimes, [rx, keep]);
  return true;
}

function runNotify(m) {
  var rx = own(m, 'remixlet');
  var title = textField(m, 'title', 100);
  if (shortID(rx) === '' || title === '' || !notifyAllowed(rx)) {
    return;
  }
  var source = textField(m, 'source', 100);
  var body = textField(m, 'body', 500);
  toast(source, title, body);
  if (typeof NotificationCtor === 'function' && notificationPermission) {
    try {
      if (apply(notificationPermission, NotificationCtor, []) === 'granted') {
        var opts = dict();
        opts.body = body;
        new NotificationCtor(source !== '' ? source + ': ' + title : title, opts);
      }
    } catch (e) { /* no system notification here */ }
  }
}

function runClipboard(m) {
  var res = message('result');
  res.id = own(m, 'id');
  var answered = false;
  var answer = function (ok, why) {
    if (answered) {
      return;
    }
    answered = true;
    res.ok = ok;
    if (!ok) {
      res.error = why;
    }
    send(res);
  };
  var value = own(m, 'text');
  if (shortID(own(m, 'remixlet')) === '' || typeof value !== 'string') {
    answer(false, 'the clipboard request is malformed');
    return;
  }
  if (!servicesCaptured) { // no remixlet ran at the page's load: see captureServices
    answer(false, RELOAD_CLIPBOARD);
    return;
  }
  var clipboardObj = navObject(navClipboard);
  if (!clipboardObj || typeof clipboardWriteText !== 'function') {
    answer(false, 'this page cannot write the clipboard (it needs an https page in a browser with the clipboard API)');
    return;
  }
  var active = false;
  var userActivation = navObject(navUserActivation);
  try {
    active = !!userActivation && typeof activationIsActive === 'function' &&
      apply(activationIsActive, userActivation, []) === true;
  } catch (e) { /* not active */ }
  if (!active) {
    answer(false, NO_GESTURE);
    return;
  }
  try {
    var p = apply(clipboardWriteText, clipboardObj, [value]);
    apply(promiseThen, p, [function () {
      answer(true, '');
    }, function () {
      answer(false, 'the browser refused to write the clipboard');
    }]);
  } catch (e) {
    answer(false, 'the browser refused to write the clipboard');
  }
}

// runMenu takes a remixlet's list of commands: only how many there are matters here (the
// commands button shows while any remixlet has one); the panel lists them.
function runMenu(m) {
  var rx = own(m, 'remixlet');
  var cmds = own(m, 'commands');
  if (shortID(rx) === '') {
    return;
  }
  if (!menus) {
    menus = new MapCtor();
  }
  var n = cmds !== null && typeof cmds === 'object' && typeof cmds.length === 'number' ? cmds.length : 0;
  if (n > 0) {
    apply(mapSet, menus, [rx, n]);
  } else {
    apply(mapDelete, menus, [rx]);
  }
  renderMore();
}

function menuRelease(rx) {
  if (menus && apply(mapGet, menus, [rx])) {
    apply(mapDelete, menus, [rx]);
    renderMore();
  }
}

// renderMore shows the commands button while any remixlet has commands on the page.
function renderMore() {
  var total = menus ? apply(mapSize, menus, []) : 0;
  if (total === 0 && !tray) {
    return;
  }
  if (!trayShadow()) {
    return;
  }
  if (total === 0) {
    attr(moreButton, 'data-none', '');
  } else {
    unattr(moreButton, 'data-none');
  }
}

function runOpen(m) {
  var target = own(m, 'url');
  if (typeof target !== 'string' || typeof URLCtor !== 'function') {
    return;
  }
  var u = null;
  try {
    u = new URLCtor(target);
  } catch (e) {
    return;
  }
  var abs = '' + apply(urlHref, u, []);
  var here = '';
  try {
    here = pageOrigin();
  } catch (e) { /* cannot tell: refuse below */ }
  if (here === '' || '' + apply(urlOrigin, u, []) !== here) {
    warn('a schedule asked to open a page of another site; ignored');
    return;
  }
  var source = textField(m, 'source', 100);
  if (abs === href()) {
    toast(source, 'A scheduled reminder for this page', '');
    try {
      apply(windowFocus, win, []);
    } catch (e) { /* focus is a nicety */ }
    return;
  }
  try {
    agentAssign(abs); // person_nav.js
  } catch (e) {
    warn('could not open ' + abs);
  }
}
