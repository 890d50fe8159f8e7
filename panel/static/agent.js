/*
 * remixproxy page agent.
 *
 * The proxy inlines this file as the first script in <head> of every HTML document:
 *
 *   <script data-remixproxy="TOKEN" nonce="..."> this file </ script>   (without the space)
 *
 * so it runs before any script of the page. It keeps a WebSocket to the proxy
 * (wss://remix.proxy/agent/ws) and shows a launcher button that opens the panel iframe
 * (https://remix.proxy/panel), handing it the panel token with postMessage.
 *
 * The page is hostile. Everything used after start-up is captured now, before page scripts run,
 * and is only ever called through the captured Reflect.apply (or `new` on a captured
 * constructor), so a page that later replaces
 * WebSocket.prototype.send, JSON.stringify, Element.prototype.setAttribute, a getter such as
 * MessageEvent.prototype.data, or Array/String methods cannot receive our socket, our elements,
 * our closed shadow root or our tokens as `this` or as an argument. Rules kept throughout:
 *   - the token, the panel token and the socket live only in this closure; nothing goes on window;
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
 * Keep this file ASCII (escape anything else as \uXXXX); panel_test.go checks it.
 */
(function () {
  'use strict';

  // Read the token and remove our own <script> element before anything else happens.
  var doc = document;
  var script = doc.currentScript;
  if (!script) {
    return;
  }
  var token = script.getAttribute('data-remixproxy');
  if (script.parentNode) {
    script.parentNode.removeChild(script);
  }
  script = null;
  if (typeof token !== 'string' || token === '') {
    return;
  }

  // Only the top-level frame talks to the proxy for now.
  var win = window;
  if (win.top !== win) {
    return;
  }

  // ---- Captures. Nothing below may use a built-in that is not captured here. ----------------

  var apply = Reflect.apply;
  var getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  var defineProperty = Object.defineProperty;
  var create = Object.create;
  var hasOwnProperty = Object.prototype.hasOwnProperty;
  var jsonParse = JSON.parse;
  var jsonStringify = JSON.stringify;
  var encode = encodeURIComponent;

  function getter(obj, name) {
    var d = obj ? getOwnPropertyDescriptor(obj, name) : undefined;
    return d ? d.get : undefined;
  }
  function setter(obj, name) {
    var d = obj ? getOwnPropertyDescriptor(obj, name) : undefined;
    return d ? d.set : undefined;
  }
  function proto(ctor) {
    return typeof ctor === 'function' ? ctor.prototype : undefined;
  }

  var WS = win.WebSocket;
  var wsSend = WS && WS.prototype.send;
  var wsClose = WS && WS.prototype.close;
  var wsReadyState = getter(proto(WS), 'readyState');

  var addEventListener = EventTarget.prototype.addEventListener;
  var eventTarget = getter(Event.prototype, 'target');
  var messageData = getter(proto(win.MessageEvent), 'data');
  var closeCode = getter(proto(win.CloseEvent), 'code');
  var pagePersisted = getter(proto(win.PageTransitionEvent), 'persisted');

  var createElement = Document.prototype.createElement;
  var documentElement = getter(Document.prototype, 'documentElement');
  var readyState = getter(Document.prototype, 'readyState');
  var documentTitle = getter(Document.prototype, 'title');
  var attachShadow = Element.prototype.attachShadow;
  var setAttribute = Element.prototype.setAttribute;
  var removeAttribute = Element.prototype.removeAttribute;
  var appendChild = Node.prototype.appendChild;
  var isConnected = getter(Node.prototype, 'isConnected');
  var setTextContent = setter(Node.prototype, 'textContent');
  var focus = proto(win.HTMLElement) && win.HTMLElement.prototype.focus;
  var contentWindow = getter(proto(win.HTMLIFrameElement), 'contentWindow');

  var Sheet = win.CSSStyleSheet;
  var replaceSync = Sheet && Sheet.prototype.replaceSync;
  var setAdoptedStyleSheets = setter(proto(win.ShadowRoot), 'adoptedStyleSheets');

  var MO = win.MutationObserver;
  var moObserve = MO && MO.prototype.observe;
  var moDisconnect = MO && MO.prototype.disconnect;

  // Location's properties are own, non-configurable accessors ([LegacyUnforgeable]); capturing
  // the getters still keeps us independent of anything on the way to them.
  var loc = win.location;
  var locationHref = getter(loc, 'href');
  var locationProtocol = getter(loc, 'protocol');

  var hist = win.history;
  var originalPushState = hist && hist.pushState;
  var originalReplaceState = hist && hist.replaceState;

  var navigation = win.navigation;
  var navigationType = getter(proto(win.NavigationCurrentEntryChangeEvent), 'navigationType');

  var setTimeoutFn = win.setTimeout;
  var clearTimeoutFn = win.clearTimeout;
  var consoleObj = win.console;
  var consoleWarn = consoleObj && consoleObj.warn;

  if (typeof WS !== 'function' || !wsSend || !wsClose || !wsReadyState || !messageData ||
      !closeCode || !addEventListener || !createElement || !appendChild || !setAttribute ||
      !documentElement || !readyState || !locationHref || !locationProtocol ||
      typeof setTimeoutFn !== 'function') {
    return; // Too old a browser to run safely; stay out of the way.
  }

  // ---- Small helpers over the captures. -------------------------------------------------------

  function on(target, type, fn, capture) {
    apply(addEventListener, target, [type, fn, capture === true]);
  }
  function dict() {
    return create(null);
  }
  function own(obj, key) {
    return apply(hasOwnProperty, obj, [key]) ? obj[key] : undefined;
  }
  function later(fn, ms) {
    return apply(setTimeoutFn, win, [fn, ms]);
  }
  function cancel(id) {
    if (id) {
      apply(clearTimeoutFn, win, [id]);
    }
  }
  function warn(text) {
    if (consoleWarn) {
      try {
        apply(consoleWarn, consoleObj, ['remixproxy: ' + text]);
      } catch (e) { /* console replaced by something that throws */ }
    }
  }
  function href() {
    return '' + apply(locationHref, loc, []);
  }
  function title() {
    try {
      return '' + apply(documentTitle, doc, []);
    } catch (e) {
      return '';
    }
  }
  function el(tag) {
    return apply(createElement, doc, [tag]);
  }
  function attr(node, name, value) {
    apply(setAttribute, node, [name, value]);
  }
  function unattr(node, name) {
    apply(removeAttribute, node, [name]);
  }
  function text(node, value) {
    apply(setTextContent, node, [value]);
  }

  var secure = apply(locationProtocol, loc, []) === 'https:';
  var SOCKET_URL = (secure ? 'wss' : 'ws') + '://remix.proxy/agent/ws?t=' + encode(token);
  var PANEL_ORIGIN = (secure ? 'https' : 'http') + '://remix.proxy';
  var PANEL_URL = PANEL_ORIGIN + '/panel';
  token = null; // From here on the token exists only inside SOCKET_URL.

  var CLOSE_TOKEN_UNKNOWN = 4401;
  var CLOSE_REFUSED = 4403;
  var RECONNECT_FIRST_MS = 1000;
  var RECONNECT_MAX_MS = 30000;
  // How often the launcher is put back after the page removes it. One: enough to survive a
  // framework that rebuilds <html> once on hydration, without fighting a page that insists.
  var REATTACH_LIMIT = 1;

  // ---- Connection state. ----------------------------------------------------------------------

  var sock = null;          // the live WebSocket, or null
  var state = 'connecting'; // 'connecting' | 'connected' | 'closed' (mirrored on the host element)
  var stopped = false;      // true after 4401/4403: never reconnect
  var suspended = false;    // true between pagehide and pageshow (back/forward cache)
  var retryTimer = 0;
  var retryDelay = RECONNECT_FIRST_MS;
  var panelToken = '';      // from welcome; only ever posted to the panel iframe
  var lastURL = '';         // last URL reported to the proxy

  function message(type) {
    var m = dict();
    m.type = type;
    return m;
  }

  function send(m) {
    var s = sock;
    if (!s || apply(wsReadyState, s, []) !== 1) {
      return;
    }
    try {
      apply(wsSend, s, [apply(jsonStringify, null, [m])]);
    } catch (e) { /* closing; the close handler reconnects */ }
  }

  function sendHello() {
    var m = message('hello');
    m.url = href();
    m.title = title();
    m.top = true;
    lastURL = m.url;
    send(m);
  }

  // reportNav tells the proxy about a same-document navigation, once per distinct URL. It never
  // trusts an event's content: it re-reads location.href.
  function reportNav(kind) {
    try {
      var url = href();
      if (url === lastURL) {
        return;
      }
      lastURL = url;
      var m = message('nav');
      m.url = url;
      m.kind = kind;
      send(m);
    } catch (e) { /* never break the page's navigation */ }
  }

  function setState(next) {
    state = next;
    render();
  }

  function connect() {
    if (stopped || suspended || sock) {
      return;
    }
    cancel(retryTimer);
    retryTimer = 0;
    var s;
    try {
      s = new WS(SOCKET_URL);
    } catch (e) {
      scheduleReconnect();
      return;
    }
    sock = s;
    setState('connecting');
    on(s, 'open', function () {
      if (sock === s) {
        sendHello();
      }
    });
    on(s, 'message', function (ev) {
      if (sock === s) {
        receive(ev);
      }
    });
    on(s, 'close', function (ev) {
      if (sock !== s) {
        return;
      }
      sock = null;
      var code = 0;
      try {
        code = apply(closeCode, ev, []);
      } catch (e) { /* keep 0 */ }
      if (code === CLOSE_TOKEN_UNKNOWN || code === CLOSE_REFUSED) {
        stopped = true;
        cancel(retryTimer);
        retryTimer = 0;
        setState('closed');
        return;
      }
      scheduleReconnect();
    });
    // 'error' is always followed by 'close'; nothing to do there.
  }

  function scheduleReconnect() {
    if (stopped || suspended || retryTimer) {
      return;
    }
    setState('connecting');
    retryTimer = later(function () {
      retryTimer = 0;
      connect();
    }, retryDelay);
    retryDelay = retryDelay * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : retryDelay * 2;
  }

  function receive(ev) {
    var data;
    try {
      data = apply(messageData, ev, []);
    } catch (e) {
      return;
    }
    if (typeof data !== 'string') {
      return;
    }
    var m;
    try {
      m = apply(jsonParse, null, [data]);
    } catch (e) {
      return;
    }
    if (m === null || typeof m !== 'object') {
      return;
    }
    var type = own(m, 'type');
    if (type === 'welcome') {
      var p = own(m, 'panel');
      panelToken = typeof p === 'string' ? p : '';
      retryDelay = RECONNECT_FIRST_MS;
      setState('connected');
      deliverPanelToken();
    } else if (type === 'error') {
      var text = own(m, 'message');
      warn(typeof text === 'string' ? text : 'error from the proxy');
    }
    // Unknown types are ignored: newer proxies may send more.
  }

  // ---- Navigation reports. --------------------------------------------------------------------

  function wrapHistory(name, original, kind) {
    if (typeof original !== 'function') {
      return;
    }
    var wrapper = function () {
      var result = apply(original, this, arguments);
      reportNav(kind);
      return result;
    };
    var d = dict();
    d.value = wrapper;
    d.writable = true;
    d.configurable = true;
    d.enumerable = false;
    try {
      defineProperty(hist, name, d);
    } catch (e) { /* history not extensible: rely on the listeners */ }
  }
  wrapHistory('pushState', originalPushState, 'push');
  wrapHistory('replaceState', originalReplaceState, 'replace');
  on(win, 'popstate', function () { reportNav('pop'); }, true);
  on(win, 'hashchange', function () { reportNav('hash'); }, true);
  if (navigation && navigationType) {
    // Sees pushState even when the page calls a saved original instead of our wrapper.
    try {
      on(navigation, 'currententrychange', function (ev) {
        var t = '';
        try {
          t = apply(navigationType, ev, []);
        } catch (e) { /* keep '' */ }
        if (t === 'push' || t === 'replace') {
          reportNav(t);
        } else if (t === 'traverse') {
          reportNav('pop');
        }
      });
    } catch (e) { /* not an EventTarget here */ }
  }

  // Back/forward cache: an open socket keeps Chromium from caching the page, so close it on
  // pagehide and reconnect at once when the page comes back.
  on(win, 'pagehide', function () {
    suspended = true;
    cancel(retryTimer);
    retryTimer = 0;
    var s = sock;
    sock = null;
    if (s) {
      try {
        apply(wsClose, s, [1000, 'pagehide']);
      } catch (e) { /* already closing */ }
    }
  }, true);
  on(win, 'pageshow', function (ev) {
    var persisted = false;
    try {
      persisted = pagePersisted ? apply(pagePersisted, ev, []) === true : false;
    } catch (e) { /* keep false */ }
    if (!persisted && !suspended) {
      return;
    }
    suspended = false;
    retryDelay = RECONNECT_FIRST_MS;
    connect();
  }, true);

  // ---- Launcher and panel. --------------------------------------------------------------------
  //
  // The launcher shows as soon as the DOM is ready, grey and inert until the proxy's welcome
  // arrives, so a person sees that remixproxy is there even while it connects. Once a panel is
  // open it stays usable while disconnected (the panel shows its own status).

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
    '  all: initial;',
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
    'button[aria-expanded="true"] { background: #0d419d; }',
    'iframe {',
    '  all: initial;',
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
    var sheet = new Sheet();
    apply(replaceSync, sheet, [joinLines(CSS)]);
    // The browser converts this array with the page's Array iterator; at worst the page sees our
    // stylesheet object, which holds nothing secret and leads to nothing else.
    apply(setAdoptedStyleSheets, sr, [[sheet]]);

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
      : state === 'connecting' ? 'remixproxy: connecting\u2026' : 'remixproxy: not connected');
    if (frame) {
      if (open) {
        attr(frame, 'data-open', '');
      } else {
        unattr(frame, 'data-open');
      }
    }
  }

  function createFrame() {
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

  function whenReady() {
    try {
      mount();
    } catch (e) {
      warn('could not show the launcher');
    }
  }
  if (apply(readyState, doc, []) === 'loading') {
    on(win, 'DOMContentLoaded', whenReady, true);
  } else {
    whenReady();
  }

  connect();
})();
