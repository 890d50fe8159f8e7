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

  // For remixlets' dom operations (see "Remixlet operations" below). A missing one makes the
  // operations that need it refuse; it never stops the agent.
  var querySelectorAllDoc = Document.prototype.querySelectorAll;
  var querySelectorAllEl = Element.prototype.querySelectorAll;
  var nodeListLength = getter(proto(win.NodeList), 'length');
  var nodeListItem = proto(win.NodeList) && win.NodeList.prototype.item;
  var getAttribute = Element.prototype.getAttribute;
  var hasAttribute = Element.prototype.hasAttribute;
  var localNameOf = getter(Element.prototype, 'localName');
  var getTextContent = getter(Node.prototype, 'textContent');
  var classListOf = getter(Element.prototype, 'classList');
  var tokenAdd = proto(win.DOMTokenList) && win.DOMTokenList.prototype.add;
  var tokenRemove = proto(win.DOMTokenList) && win.DOMTokenList.prototype.remove;
  var styleOf = getter(proto(win.HTMLElement), 'style');
  var setProperty = proto(win.CSSStyleDeclaration) && win.CSSStyleDeclaration.prototype.setProperty;
  var removeProperty = proto(win.CSSStyleDeclaration) && win.CSSStyleDeclaration.prototype.removeProperty;
  var elementRemove = Element.prototype.remove;
  var inputValue = getter(proto(win.HTMLInputElement), 'value');
  var textareaValue = getter(proto(win.HTMLTextAreaElement), 'value');
  var selectValue = getter(proto(win.HTMLSelectElement), 'value');
  var keyOf = getter(proto(win.KeyboardEvent), 'key');
  var headOf = getter(Document.prototype, 'head');
  var bodyOf = getter(Document.prototype, 'body');
  var MapCtor = Map;
  var mapGet = Map.prototype.get;
  var mapSet = Map.prototype.set;
  var mapDelete = Map.prototype.delete;
  var mapForEach = Map.prototype.forEach;
  var mapSize = getter(Map.prototype, 'size');
  var WeakMapCtor = WeakMap;
  var weakGet = WeakMap.prototype.get;
  var weakSet = WeakMap.prototype.set;
  var objectKeys = Object.keys;
  var setPrototypeOf = Object.setPrototypeOf;
  var strLower = String.prototype.toLowerCase;
  var strIndexOf = String.prototype.indexOf;
  var strSlice = String.prototype.slice;
  var charCodeAt = String.prototype.charCodeAt;
  var fromCharCode = String.fromCharCode;
  var moTakeRecords = MO && MO.prototype.takeRecords;
  var locationReload = loc.reload;
  // For remixlet stylesheets (see "Remixlet stylesheets" below).
  var documentAdopted = getter(Document.prototype, 'adoptedStyleSheets');
  var setDocumentAdopted = setter(Document.prototype, 'adoptedStyleSheets');
  var arrayPush = Array.prototype.push;
  // For the rest of the dom surface (create, insert, clone, rect, style, click, focus,
  // scrollIntoView, setHTML, addStyle) and the address rule. A missing one refuses that op.
  var createElementNS = Document.prototype.createElementNS;
  var createTextNode = Document.prototype.createTextNode;
  var createFragment = Document.prototype.createDocumentFragment;
  var insertBefore = Node.prototype.insertBefore;
  var removeChildFn = Node.prototype.removeChild;
  var cloneNodeFn = Node.prototype.cloneNode;
  var parentNodeOf = getter(Node.prototype, 'parentNode');
  var firstChildOf = getter(Node.prototype, 'firstChild');
  var nextSiblingOf = getter(Node.prototype, 'nextSibling');
  var nodeTypeOf = getter(Node.prototype, 'nodeType');
  var nodeValueOf = getter(Node.prototype, 'nodeValue');
  var baseURIOf = getter(Node.prototype, 'baseURI');
  var namespaceOf = getter(Element.prototype, 'namespaceURI');
  var getAttributeNames = Element.prototype.getAttributeNames;
  var getBoundingClientRect = Element.prototype.getBoundingClientRect;
  var scrollIntoViewFn = Element.prototype.scrollIntoView;
  var DOMRectRO = proto(win.DOMRectReadOnly);
  var rectX = getter(DOMRectRO, 'x');
  var rectY = getter(DOMRectRO, 'y');
  var rectWidth = getter(DOMRectRO, 'width');
  var rectHeight = getter(DOMRectRO, 'height');
  var getComputedStyleFn = win.getComputedStyle;
  var getPropertyValue = proto(win.CSSStyleDeclaration) && win.CSSStyleDeclaration.prototype.getPropertyValue;
  var htmlClick = proto(win.HTMLElement) && win.HTMLElement.prototype.click;
  var inputSetValue = setter(proto(win.HTMLInputElement), 'value');
  var buttonForm = getter(proto(win.HTMLButtonElement), 'form');
  var inputForm = getter(proto(win.HTMLInputElement), 'form');
  var formAction = getter(proto(win.HTMLFormElement), 'action');
  var labelControl = getter(proto(win.HTMLLabelElement), 'control');
  var anchorHref = getter(proto(win.HTMLAnchorElement), 'href');
  var areaHref = getter(proto(win.HTMLAreaElement), 'href');
  var imageSrc = getter(proto(win.HTMLImageElement), 'src');
  var URLCtor = win.URL;
  var urlHref = getter(proto(URLCtor), 'href');
  var urlOrigin = getter(proto(URLCtor), 'origin');
  var urlProtocol = getter(proto(URLCtor), 'protocol');
  var urlHostname = getter(proto(URLCtor), 'hostname');
  var urlUsername = getter(proto(URLCtor), 'username');
  var urlPassword = getter(proto(URLCtor), 'password');
  var urlPathname = getter(proto(URLCtor), 'pathname');
  var ParserCtor = win.DOMParser;
  var parseFromString = ParserCtor && ParserCtor.prototype.parseFromString;
  var perf = win.performance;
  var getEntriesByType = proto(win.Performance) && win.Performance.prototype.getEntriesByType;
  var entryName = getter(proto(win.PerformanceEntry), 'name');
  var removeEventListener = EventTarget.prototype.removeEventListener;
  // For the page policy's loader, key-event and layout rules (issue 12).
  var composedPathOf = proto(win.Event) && win.Event.prototype.composedPath;
  var openShadowRoot = getter(Element.prototype, 'shadowRoot');
  var contentEditable = getter(proto(win.HTMLElement), 'isContentEditable');

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
    } else if (type === 'op') {
      runOp(m);
    } else if (type === 'reload') {
      reloadPage();
    } else if (type === 'style') {
      applyStyle(m);
    } else if (type === 'release') {
      release(m);
    } else if (type === 'tool') {
      runTool(m);
    } else if (type === 'clipboard') {
      runClipboard(m);
    } else if (type === 'notify') {
      runNotify(m);
    } else if (type === 'menu') {
      runMenu(m);
    } else if (type === 'open') {
      runOpen(m);
    }
    // Unknown types are ignored: newer proxies may send more.
  }

  // ---- Remixlet operations. -------------------------------------------------------------------
  //
  // The proxy relays a remixlet's dom.* calls as {type:'op', id, remixlet, op, args}; each runs
  // here under the page policy and is answered with {type:'result', id, ok, value | error}. The
  // proxy has already applied the static checks; the ones repeated here keep the page safe even
  // if it did not, and the ones that need the DOM (password fields, handles) live only here.
  //   - Handles: one table per remixlet, number -> element, in this closure. A handle from
  //     another remixlet's table is unknown here, so a remixlet acts only on what it obtained.
  //   - Password fields (type=password, or autocomplete naming a current or new password, a
  //     one-time code or a card: isSensitive) read back empty through text, attr('value'), value
  //     and key and input events — judged on the event's composed path, so inside open shadow
  //     roots too, and withheld when the real target may host a closed shadow root; their
  //     type, autocomplete, pattern, minlength, maxlength and value cannot be set; they cannot
  //     be moved to another form; while the page has one, a selector mentioning "value", a
  //     field-state pseudo-class (or using an escape or comment) is refused, and while one is
  //     sized by its content (field-sizing) dom.rect and dom.style are refused.
  //   - Elements that load, navigate or change how the page is fetched (isLoader: meta, link,
  //     base, script, style, iframe, form, media, svg a/use/animate …) take no attribute write
  //     but class, hidden, title, lang, dir and aria-*, and no text or content (a form's
  //     content excepted).
  //   - Attributes that load or run something are refused; an address anywhere in another
  //     attribute's value follows the address rule. href (on links) and src (on images)
  //     follow the address rule (checkAddress): the page's origin, the hosts the proxy allowed
  //     for this op (the remixlet's own sites and fetch: hosts), an address the page already
  //     loads exactly as written, or a data: image; never javascript:, blob: or anything else.
  //     The element gets the resolved absolute address, and for setAttr, create and setHTML only
  //     if the browser reads it as one the proxy resolved, checked and guarded (Op.addrs).
  //   - dom.create and dom.setHTML build only allow-listed elements (CREATE_TAGS; SVG ones in
  //     the SVG namespace, inside svg); setHTML parses in an inert DOMParser document and copies
  //     what passes into new elements of this document, never the parsed nodes or a string.
  //   - Clones: password fields blanked (value and value attribute), refused attributes and
  //     elements stripped. Clicks are checked against what they would activate (links and
  //     forms must stay on the page's origin; formaction, other targets and ping are refused).
  //   - Every element a remixlet changes or creates carries its mark, data-remixlet-<8 hex>.
  //   - Inline styles may not load anything (url(), image-set(), @import, escapes, comments).
  // Page changes are reported as {type:'mutated'} (the first at once, then at most every 16 ms) once a remixlet has run an
  // operation; the agent's own changes are taken out of the observer's queue before they count.

  var MARK_PREFIX = 'data-remixlet-';
  var HIDDEN_ATTR = 'data-remixlet-hidden';
  var MAX_RESULTS = 5000;
  var PRUNE_AT = 2000;
  var MAX_LISTENERS = 1000;
  var MUTATION_DEBOUNCE_MS = 16;
  var REFUSED_ATTRS = dict();
  (function () {
    var names = ['src', 'href', 'action', 'formaction', 'srcdoc', 'style', 'xlink:href', 'srcset',
      'imagesrcset', 'ping', 'poster', 'background', 'data', 'codebase', 'archive', 'lowsrc', 'dynsrc',
      'manifest', 'http-equiv', 'is', 'formtarget', 'target', 'xmlns', 'attributionsrc'];
    var i;
    for (i = 0; i < names.length; i++) {
      REFUSED_ATTRS[names[i]] = true;
    }
  })();
  var PASSWORD_LOCKED = dict();
  PASSWORD_LOCKED.type = true;
  PASSWORD_LOCKED.autocomplete = true;
  PASSWORD_LOCKED.pattern = true;
  PASSWORD_LOCKED.minlength = true;
  PASSWORD_LOCKED.maxlength = true;
  PASSWORD_LOCKED.value = true;
  var EVENTS = dict();
  EVENTS.click = true;
  EVENTS.dblclick = true;
  EVENTS.mouseenter = true;
  EVENTS.mouseleave = true;
  EVENTS.input = true;
  EVENTS.change = true;
  EVENTS.focus = true;
  EVENTS.blur = true;
  EVENTS.keydown = true;
  EVENTS.keyup = true;
  var STYLE_REFUSED = ['url(', '@import', 'expression(', 'image-set(', 'image(', 'element(', 'cross-fade(',
    'src(', 'paint(', 'javascript:', '\\', '/*'];
  (function () {
    var more = ['form', 'formmethod', 'formenctype', 'formnovalidate', 'popovertarget',
      'popovertargetaction', 'command', 'commandfor', 'integrity', 'nonce', 'slot', 'shadowrootmode',
      'shadowrootdelegatesfocus', 'shadowrootclonable', 'shadowrootserializable',
      // Meaningful only on elements that load or navigate, or they change how a load is made
      // (loaderAttrs in proxy/remixlets_policy.go).
      'content', 'charset', 'rel', 'as', 'referrerpolicy', 'crossorigin', 'sandbox', 'allow', 'csp',
      'credentialless', 'attributename', 'blocking'];
    var i;
    for (i = 0; i < more.length; i++) {
      REFUSED_ATTRS[more[i]] = true;
    }
  })();
  var SVG_NS = 'http://www.w3.org/2000/svg';
  var HTML_NS = 'http://www.w3.org/1999/xhtml';
  // Elements dom.create and dom.setHTML may build (the same list as CREATE_TAGS in
  // proxy/remixlets_policy.go): layout, text, form controls but not form, img, simple SVG.
  var CREATE_TAGS = dict();
  var SVG_TAGS = dict();
  (function () {
    var html = ['div', 'span', 'p', 'a', 'b', 'i', 'u', 's', 'em', 'strong', 'small', 'mark', 'sub', 'sup',
      'code', 'pre', 'kbd', 'samp', 'var', 'q', 'blockquote', 'cite', 'abbr', 'time', 'br', 'hr', 'wbr',
      'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'table', 'thead', 'tbody',
      'tfoot', 'tr', 'td', 'th', 'caption', 'colgroup', 'col', 'section', 'article', 'aside', 'header',
      'footer', 'nav', 'main', 'figure', 'figcaption', 'details', 'summary', 'address', 'del', 'ins',
      'dfn', 'bdi', 'bdo', 'ruby', 'rt', 'rp', 'label', 'fieldset', 'legend', 'input', 'button',
      'select', 'option', 'optgroup', 'textarea', 'datalist', 'output', 'progress', 'meter', 'img'];
    var svg = ['svg', 'path', 'circle', 'rect', 'line', 'polyline', 'polygon', 'g', 'text'];
    var i;
    for (i = 0; i < html.length; i++) {
      CREATE_TAGS[html[i]] = true;
    }
    for (i = 0; i < svg.length; i++) {
      SVG_TAGS[svg[i]] = true;
    }
  })();
  // Elements stripped from clones and never moved by dom.insert: they load or run something.
  var LOADING_TAGS = dict();
  (function () {
    var names = ['script', 'style', 'link', 'meta', 'base', 'iframe', 'frame', 'frameset', 'object', 'embed',
      'video', 'audio', 'source', 'track', 'template', 'noscript', 'slot', 'portal', 'applet', 'form',
      'use', 'image', 'foreignobject', 'animate', 'animatemotion', 'animatetransform', 'set', 'feimage',
      'math', 'param', 'picture', 'fencedframe'];
    var i;
    for (i = 0; i < names.length; i++) {
      LOADING_TAGS[names[i]] = true;
    }
  })();
  // Elements whose content dom.setHTML, dom.insert (into) and dom.create children never touch.
  var RAW_TARGETS = dict();
  (function () {
    var names = ['script', 'style', 'template', 'iframe', 'frame', 'object', 'embed', 'noscript', 'textarea',
      'title', 'xmp', 'plaintext', 'noembed', 'noframes', 'math'];
    var i;
    for (i = 0; i < names.length; i++) {
      RAW_TARGETS[names[i]] = true;
    }
  })();
  // Page elements that load, navigate or change how the document is fetched, by namespace and
  // lowercase local name (isLoader): a remixlet writes no attribute on them except the few in
  // LOADER_WRITABLE, and sets no text or content inside them (a form's content excepted). Every
  // element outside the HTML and SVG namespaces counts as one; so does <input type=image>.
  var LOADER_HTML = dict();
  var LOADER_SVG = dict();
  (function () {
    var html = ['meta', 'link', 'base', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'param',
      'script', 'style', 'form', 'source', 'track', 'video', 'audio', 'picture', 'portal', 'fencedframe',
      'template'];
    var svg = ['a', 'image', 'use', 'feimage', 'script', 'style', 'animate', 'animatemotion',
      'animatetransform', 'animatecolor', 'set', 'discard', 'foreignobject', 'mpath', 'textpath', 'tref',
      'cursor', 'font-face-uri'];
    var i;
    for (i = 0; i < html.length; i++) {
      LOADER_HTML[html[i]] = true;
    }
    for (i = 0; i < svg.length; i++) {
      LOADER_SVG[svg[i]] = true;
    }
  })();
  var LOADER_WRITABLE = dict();
  LOADER_WRITABLE['class'] = true;
  LOADER_WRITABLE.hidden = true;
  LOADER_WRITABLE.title = true; // not on link and style: there it picks stylesheet sets
  LOADER_WRITABLE.lang = true;
  LOADER_WRITABLE.dir = true;
  // Attributes a clone keeps as the page wrote them although a remixlet may not write them: they
  // only restrict how the clone's own link or image loads.
  var CLONE_KEEPS = dict();
  CLONE_KEEPS.rel = true;
  CLONE_KEEPS.referrerpolicy = true;
  CLONE_KEEPS.crossorigin = true;
  // id and name values that would shadow a document or window property for the page's scripts.
  var CLOBBER = dict();
  (function () {
    var names = ['cookie', 'location', 'body', 'head', 'document', 'window', 'domain', 'forms', 'images',
      'links', 'scripts', 'anchors', 'defaultview', 'documentelement', 'baseuri', 'url', 'referrer', 'title',
      'top', 'parent', 'self', 'frames', 'opener', 'name', 'origin', 'createelement', 'queryselector',
      'queryselectorall', 'getelementbyid', 'implementation', 'currentscript', 'alert', 'fetch',
      'attributes', 'nodename', 'nodetype', 'parentnode', 'childnodes', 'firstchild', 'lastchild',
      'ownerdocument', 'textcontent', 'innerhtml', 'outerhtml', 'activeelement', 'defaultvalue', 'action',
      'method', 'submit', 'reset', 'elements', 'length', 'tostring', 'valueof', 'constructor',
      '__proto__', 'prototype', 'hasownproperty'];
    var i;
    for (i = 0; i < names.length; i++) {
      CLOBBER[names[i]] = true;
    }
  })();
  var DATA_IMAGE_TYPES = dict();
  DATA_IMAGE_TYPES['image/png'] = true;
  DATA_IMAGE_TYPES['image/gif'] = true;
  DATA_IMAGE_TYPES['image/jpeg'] = true;
  DATA_IMAGE_TYPES['image/webp'] = true;
  var MAX_HTML_NODES = 2000;
  var MAX_CREATE_NODES = 500;
  var opHosts = null;   // the hosts the proxy allowed for the op being run (Op.hosts)
  var opRelative = false; // the op's addresses were written relative (Op.rel)
  var opAddrs = null;     // setAttr, create, setHTML: the addresses the proxy checked (Op.addrs), as a set

  var tables = null;     // remixlet ID -> handle table, made on the first operation
  var observer = null;   // the page-change observer, started on the first operation
  var mutationTimer = 0;
  var mutationDirty = false; // a change came during the cooldown

  function mutationCooldown() {
    if (mutationDirty) {
      mutationDirty = false;
      send(message('mutated'));
      mutationTimer = later(mutationCooldown, MUTATION_DEBOUNCE_MS);
      return;
    }
    mutationTimer = 0;
  }
  var REFUSAL = dict();  // marks the objects refuse() throws

  function refuse(why) {
    var r = dict();
    r.mark = REFUSAL;
    r.why = why;
    throw r;
  }
  function lower(s) {
    return apply(strLower, s, []);
  }
  function contains(s, part) {
    return apply(strIndexOf, s, [part]) >= 0;
  }
  function attrOf(node, name) {
    return apply(getAttribute, node, [name]);
  }
  function localName(node) {
    try {
      return localNameOf ? '' + apply(localNameOf, node, []) : '';
    } catch (e) {
      return '';
    }
  }
  // list returns an empty array without a prototype, and put fills it, so neither the page's
  // Array.prototype setters nor a toJSON it adds see our results.
  function list() {
    var a = [];
    setPrototypeOf(a, null);
    return a;
  }
  function put(a, i, v) {
    var d = dict();
    d.value = v;
    d.writable = true;
    d.enumerable = true;
    d.configurable = true;
    defineProperty(a, i, d);
  }
  function arg(args, i) {
    return args !== null && typeof args === 'object' ? own(args, i) : undefined;
  }
  function stringArg(args, i, what) {
    var v = arg(args, i);
    if (typeof v !== 'string') {
      refuse(what + ' must be a string');
    }
    return v;
  }

  // shortID checks a remixlet ID ("rx_" and 32 lowercase hex digits) and returns the 8 digits
  // that name its mark.
  function shortID(rx) {
    if (typeof rx !== 'string' || rx.length !== 35 || apply(strSlice, rx, [0, 3]) !== 'rx_') {
      return '';
    }
    var i;
    for (i = 3; i < 35; i++) {
      var c = apply(charCodeAt, rx, [i]);
      if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) {
        return '';
      }
    }
    return apply(strSlice, rx, [3, 11]);
  }

  function tableFor(rx) {
    if (!tables) {
      tables = new MapCtor();
    }
    var t = apply(mapGet, tables, [rx]);
    if (!t) {
      t = dict();
      t.rx = rx;
      t.byId = new MapCtor();
      t.byEl = new WeakMapCtor();
      t.next = 1;
      t.listeners = 0;
      t.on = list(); // {node, type, fn} of its dom.on listeners, removed on release
      t.mark = MARK_PREFIX + shortID(rx);
      apply(mapSet, tables, [rx, t]);
    }
    return t;
  }
  function handleFor(t, node) {
    var id = apply(weakGet, t.byEl, [node]);
    if (!id) {
      id = t.next;
      t.next = t.next + 1;
      apply(weakSet, t.byEl, [node, id]);
    }
    apply(mapSet, t.byId, [id, node]);
    var h = dict();
    h.$h = id;
    return h;
  }
  function element(t, h) {
    var id = h !== null && typeof h === 'object' ? own(h, '$h') : undefined;
    var node = typeof id === 'number' ? apply(mapGet, t.byId, [id]) : undefined;
    if (!node) {
      refuse('unknown element handle: use handles this remixlet got from dom.query or dom.queryAll on this page');
    }
    return node;
  }
  // prune forgets handles of elements that left the document, so a site that redraws itself
  // does not grow the table without end.
  function prune(t) {
    if (!mapSize || apply(mapSize, t.byId, []) < PRUNE_AT || !isConnected) {
      return;
    }
    apply(mapForEach, t.byId, [function (node, id) {
      if (!apply(isConnected, node, [])) {
        apply(mapDelete, t.byId, [id]);
      }
    }]);
  }

  function isPassword(node) {
    if (localName(node) !== 'input') {
      return false;
    }
    var type = attrOf(node, 'type');
    if (typeof type === 'string' && lower(type) === 'password') {
      return true;
    }
    var ac = attrOf(node, 'autocomplete');
    if (typeof ac === 'string') {
      ac = lower(ac);
      return contains(ac, 'current-password') || contains(ac, 'new-password');
    }
    return false;
  }
  // isSensitive is the remixlet policy's notion of a password field: one (isPassword), or a field
  // the page marks as holding a secret with its autocomplete tokens (one-time codes, card
  // numbers and codes). Remixlets read all of them back empty, as passwords.
  function isSensitive(node) {
    if (isPassword(node)) {
      return true;
    }
    var name = localName(node);
    if (name !== 'input' && name !== 'textarea') {
      return false;
    }
    var ac = attrOf(node, 'autocomplete');
    if (typeof ac !== 'string') {
      return false;
    }
    ac = lower(ac);
    return contains(ac, 'one-time-code') || contains(ac, 'cc-');
  }
  function pageHasPassword() {
    return inputsHavePassword(apply(querySelectorAllDoc, doc, ['input,textarea']));
  }
  // subtreeHasPassword covers elements a remixlet still holds after they left the page (a
  // removed form keeps its password field, and a value selector run inside it would read it).
  function subtreeHasPassword(el) {
    return isSensitive(el) || inputsHavePassword(apply(querySelectorAllEl, el, ['input,textarea']));
  }
  function inputsHavePassword(inputs) {
    var n = apply(nodeListLength, inputs, []);
    var i;
    for (i = 0; i < n; i++) {
      if (isSensitive(apply(nodeListItem, inputs, [i]))) {
        return true;
      }
    }
    return false;
  }
  // isLoader reports whether el loads, navigates or changes how the document is fetched
  // (LOADER_HTML, LOADER_SVG, <input type=image>, anything outside HTML and SVG).
  function isLoader(el) {
    var ns = nsOf(el);
    var tag = lower(localName(el));
    if (ns === HTML_NS) {
      if (tag === 'input') {
        var type = attrOf(el, 'type');
        return typeof type === 'string' && lower(type) === 'image';
      }
      return LOADER_HTML[tag] === true;
    }
    return ns !== SVG_NS || LOADER_SVG[tag] === true;
  }
  // loaderWritable reports whether a remixlet may write attribute name on loader el.
  function loaderWritable(el, name) {
    if (apply(strSlice, name, [0, 5]) === 'aria-') {
      return true;
    }
    if (name === 'title') {
      var tag = lower(localName(el));
      return tag !== 'link' && tag !== 'style';
    }
    return LOADER_WRITABLE[name] === true;
  }
  // addressesIn finds the addresses an attribute value holds anywhere in it, as a page script
  // that loads them would read them (lazy loaders copy data-src to src): tabs and newlines
  // removed, every http:, https:, ws: or wss: address and every scheme-relative one (//host,
  // ///host, any slash written as a backslash), up to a space, quote, comma or bracket. The
  // same as addressesIn in proxy/remixlets_policy.go.
  function addressesIn(value) {
    var v = '';
    var lv = ''; // v with ASCII letters in lowercase, position for position
    var i;
    for (i = 0; i < value.length; i++) {
      var c = apply(charCodeAt, value, [i]);
      if (c !== 9 && c !== 10 && c !== 13) {
        v = v + apply(fromCharCode, null, [c]);
        lv = lv + apply(fromCharCode, null, [c >= 65 && c <= 90 ? c + 32 : c]);
      }
    }
    var out = list();
    var schemes = ['https:', 'http:', 'wss:', 'ws:'];
    var p;
    for (p = 0; p < v.length; p++) {
      var start = -1;
      var prev = p > 0 ? apply(charCodeAt, lv, [p - 1]) : -1;
      for (i = 0; i < schemes.length && start < 0; i++) {
        if (apply(strSlice, lv, [p, p + schemes[i].length]) === schemes[i] && !isSchemeCode(prev)) {
          start = p;
        }
      }
      if (start < 0 && isSlashCode(apply(charCodeAt, v, [p])) && isSlashCode(apply(charCodeAt, v, [p + 1])) &&
          prev !== 58 && !isSlashCode(prev)) {
        var h = p + 2;
        while (h < v.length && isSlashCode(apply(charCodeAt, v, [h]))) {
          h++;
        }
        var hc = h < v.length ? apply(charCodeAt, v, [h]) : -1;
        if ((hc >= 97 && hc <= 122) || (hc >= 65 && hc <= 90) || (hc >= 48 && hc <= 57) || hc === 91 || hc >= 128) {
          start = p;
        }
      }
      if (start < 0) {
        continue;
      }
      var end = start;
      while (end < v.length && !contains(ADDRESS_ENDS, apply(strSlice, v, [end, end + 1]))) {
        end++;
      }
      put(out, out.length, apply(strSlice, v, [start, end]));
      p = end;
    }
    return out;
  }
  var ADDRESS_ENDS = ' \f"\'`,;<>()[]{}|^';
  function isSchemeCode(c) {
    return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
  }
  function isSlashCode(c) {
    return c === 47 || c === 92;
  }
  function isPageFrame(node) {
    return node === host || node === apply(documentElement, doc, []) ||
      (headOf && node === apply(headOf, doc, [])) || (bodyOf && node === apply(bodyOf, doc, []));
  }

  function mark(t, node, cls) {
    var cur = attrOf(node, t.mark);
    var v = typeof cur === 'string' ? cur : '';
    if (cls && !contains(' ' + v + ' ', ' ' + cls + ' ')) {
      v = v === '' ? cls : v + ' ' + cls;
    }
    attr(node, t.mark, v);
  }
  function styleOfNode(node) {
    var st = styleOf ? apply(styleOf, node, []) : null;
    if (!st || !setProperty || !removeProperty) {
      refuse('this element has no inline style');
    }
    return st;
  }
  function checkStyleValue(name, value) {
    if (typeof value !== 'string' || value.length > 1024) {
      refuse('style ' + name + ': the value must be a string of at most 1024 characters');
    }
    var v = lower(value);
    var i;
    for (i = 0; i < STYLE_REFUSED.length; i++) {
      if (contains(v, STYLE_REFUSED[i])) {
        refuse('style ' + name + ' refused: inline styles may not contain ' + STYLE_REFUSED[i]);
      }
    }
  }
  // kebab turns fontWeight into font-weight and refuses anything but a plain property name.
  function kebab(name) {
    if (typeof name !== 'string' || name === '' || name.length > 64) {
      refuse('not a CSS property name');
    }
    var out = '';
    var i;
    for (i = 0; i < name.length; i++) {
      var c = apply(charCodeAt, name, [i]);
      if (c >= 65 && c <= 90) {
        out = out + '-' + apply(fromCharCode, null, [c + 32]);
      } else if (c === 45 || (c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
        out = out + apply(fromCharCode, null, [c]);
      } else {
        refuse('"' + name + '" is not a CSS property name');
      }
    }
    if (out === 'behavior' || out === '-moz-binding' || out === 'binding') {
      refuse('style ' + out + ' runs code');
    }
    return out;
  }

  // FIELD_STATE are the pseudo-classes that depend on what is typed into a field (the
  // checkedFieldState of rewrite/stylecheck.go), as they appear in a lowercase selector.
  var FIELD_STATE = [':placeholder-shown', ':valid', ':invalid', ':user-valid', ':user-invalid', 'ui-valid',
    'ui-invalid', ':in-range', ':out-of-range', 'autofill', ':blank'];
  // testsFieldContents reports whether a lowercase selector could test a field's contents: it
  // mentions value, a FIELD_STATE pseudo-class, or uses an escape or a comment that could hide
  // one.
  function testsFieldContents(l) {
    if (contains(l, 'value') || contains(l, '\\') || contains(l, '/*')) {
      return true;
    }
    var i;
    for (i = 0; i < FIELD_STATE.length; i++) {
      if (contains(l, FIELD_STATE[i])) {
        return true;
      }
    }
    return false;
  }

  function opQuery(t, args, all) {
    var sel = stringArg(args, 0, 'the selector');
    if (sel === '' || sel.length > 1024) {
      refuse('the selector must be 1 to 1024 characters');
    }
    var l = lower(sel);
    var within = arg(args, 1);
    var root = within === undefined || within === null ? null : element(t, within);
    if (testsFieldContents(l) && (pageHasPassword() || (root && subtreeHasPassword(root)))) {
      refuse('selectors that mention value or a field-state pseudo-class (or use CSS escapes or comments) are refused while the page has a password field');
    }
    var found;
    try {
      found = root === null ? apply(querySelectorAllDoc, doc, [sel]) : apply(querySelectorAllEl, root, [sel]);
    } catch (e) {
      if (own(e, 'mark') === REFUSAL) {
        throw e;
      }
      refuse('invalid selector: ' + sel);
    }
    var n = apply(nodeListLength, found, []);
    var out = list();
    var count = 0;
    var i;
    for (i = 0; i < n && count < MAX_RESULTS; i++) {
      var node = apply(nodeListItem, found, [i]);
      if (node === host) {
        continue;
      }
      if (!all) {
        return handleFor(t, node);
      }
      put(out, count, handleFor(t, node));
      count++;
    }
    if (!all) {
      return null;
    }
    prune(t);
    return out;
  }

  function opValue(node) {
    if (isSensitive(node)) {
      return '';
    }
    var name = localName(node);
    var g = name === 'input' ? inputValue : name === 'textarea' ? textareaValue : name === 'select' ? selectValue : null;
    if (!g) {
      refuse('dom.value reads form controls (input, textarea, select)');
    }
    return '' + apply(g, node, []);
  }

  // ---- The address rule. ----

  function parseURL(value, base) {
    if (typeof URLCtor !== 'function' || !urlHref) {
      refuse('this browser cannot check addresses');
    }
    try {
      return new URLCtor(value, base);
    } catch (e) {
      return null;
    }
  }
  function withoutFragment(u) {
    var i = apply(strIndexOf, u, ['#']);
    return i < 0 ? u : apply(strSlice, u, [0, i]);
  }
  function pageOrigin() {
    var u = parseURL(href(), undefined);
    return u ? '' + apply(urlOrigin, u, []) : '';
  }
  // pageLoads reports whether the page already loads (or, for links, links to) abs exactly: a
  // resource it fetched, an image it shows, or for an href one of its links.
  function pageLoads(abs, link) {
    var i;
    var n;
    if (perf && getEntriesByType && entryName) {
      try {
        var entries = apply(getEntriesByType, perf, ['resource']);
        n = entries.length;
        for (i = 0; i < n; i++) {
          if ('' + apply(entryName, entries[i], []) === abs) {
            return true;
          }
        }
      } catch (e) { /* no resource timing */ }
    }
    var imgs = apply(querySelectorAllDoc, doc, ['img[src]']);
    n = apply(nodeListLength, imgs, []);
    for (i = 0; i < n && imageSrc; i++) {
      if ('' + apply(imageSrc, apply(nodeListItem, imgs, [i]), []) === abs) {
        return true;
      }
    }
    if (link && anchorHref) {
      var links = apply(querySelectorAllDoc, doc, ['a[href]']);
      n = apply(nodeListLength, links, []);
      for (i = 0; i < n; i++) {
        var a = apply(nodeListItem, links, [i]);
        if (!isMarked(a) && '' + apply(anchorHref, a, []) === abs) {
          return true;
        }
      }
    }
    return false;
  }
  // isMarked reports whether any remixlet changed el (its href then is no proof the page links
  // there).
  function isMarked(el) {
    var names = getAttributeNames ? apply(getAttributeNames, el, []) : null;
    var i;
    for (i = 0; names && i < names.length; i++) {
      if (apply(strSlice, '' + names[i], [0, MARK_PREFIX.length]) === MARK_PREFIX) {
        return true;
      }
    }
    return false;
  }
  // addressKey is an address with every escape of a printable ASCII character other than
  // % / ? # decoded: Chromium escapes a few characters the URL Standard leaves raw (| and ^ in
  // paths), so the proxy's serialisation and the browser's may differ there and nowhere else.
  // The redirect guard compares with all escapes decoded, so this is never looser than it.
  function hexValue(c) {
    return c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1;
  }
  function addressKey(a) {
    if (apply(strIndexOf, a, ['%']) < 0) {
      return a;
    }
    var out = '';
    var i;
    for (i = 0; i < a.length; i++) {
      var c = apply(charCodeAt, a, [i]);
      if (c === 37 && i + 2 < a.length) {
        var hi = hexValue(apply(charCodeAt, a, [i + 1]));
        var lo = hexValue(apply(charCodeAt, a, [i + 2]));
        var v = hi * 16 + lo;
        if (hi >= 0 && lo >= 0 && v > 32 && v < 127 && v !== 37 && v !== 47 && v !== 63 && v !== 35) {
          out = out + apply(fromCharCode, null, [v]);
          i += 2;
          continue;
        }
      }
      out = out + apply(fromCharCode, null, [c]);
    }
    return out;
  }
  // addressSet turns Op.addrs into a set (by addressKey) for checkAddress; ops that write
  // addresses always get one (empty when the proxy found none), other ops null.
  function addressSet(name, list) {
    if (name !== 'setAttr' && name !== 'create' && name !== 'setHTML') {
      return null;
    }
    var set = dict();
    var n = list !== null && typeof list === 'object' ? own(list, 'length') : undefined;
    var i;
    for (i = 0; typeof n === 'number' && i < n; i++) {
      var a = own(list, i);
      if (typeof a === 'string') {
        set[addressKey(a)] = true;
      }
    }
    return set;
  }
  function opAllowsHost(host) {
    var hs = opHosts;
    if (hs === null || typeof hs !== 'object') {
      return false;
    }
    var n = own(hs, 'length');
    var i;
    for (i = 0; typeof n === 'number' && i < n && i < 256; i++) {
      if (own(hs, i) === host) {
        return true;
      }
    }
    return false;
  }
  // checkAddress applies the address rule to an href or src value and returns the absolute
  // address the element gets. The value is resolved against the document's URL and against its
  // base URL; when they differ (a <base> element) the value must be absolute.
  function checkAddress(name, value, link) {
    if (typeof value !== 'string' || value.length > 65536) {
      refuse(name + ': the address must be a string of at most 65536 characters');
    }
    var docURL = href();
    var base = baseURIOf ? '' + apply(baseURIOf, doc, []) : docURL;
    var a = parseURL(value, docURL);
    var b = parseURL(value, base);
    if (!a || !b) {
      refuse(name + ' refused: the address does not parse');
    }
    var abs = '' + apply(urlHref, a, []);
    if (abs !== '' + apply(urlHref, b, []) || (opRelative && withoutFragment(base) !== withoutFragment(docURL))) {
      refuse(name + ' refused: the page has a <base> element that changes where relative addresses go; use an absolute address');
    }
    var protocol = '' + apply(urlProtocol, a, []);
    if (protocol === 'data:') {
      var comma = apply(strIndexOf, abs, [',']);
      var type = comma < 0 ? '' : lower(apply(strSlice, abs, [5, comma]));
      var semi = apply(strIndexOf, type, [';']);
      if (semi >= 0 && apply(strSlice, type, [semi]) === ';base64') {
        type = apply(strSlice, type, [0, semi]);
      }
      if (DATA_IMAGE_TYPES[type] !== true) {
        refuse(name + ' refused: only data:image/png, gif, jpeg or webp addresses are allowed (not svg, not other types)');
      }
      return abs;
    }
    if (protocol !== 'https:' && protocol !== 'http:') {
      refuse(name + ' refused: ' + protocol + ' addresses are not allowed (only http, https and data: images)');
    }
    if ('' + apply(urlUsername, a, []) !== '' || '' + apply(urlPassword, a, []) !== '') {
      refuse(name + ' refused: addresses with a user name are not allowed');
    }
    // The address the browser will request must be one the proxy read the same way, checked and
    // guarded against redirects (Op.addrs): a spelling the two read differently, or an address
    // in HTML the proxy's parser did not find, is refused rather than written unchecked.
    if (opAddrs !== null && opAddrs[addressKey(withoutFragment(abs))] !== true) {
      refuse(name + ' refused: the browser reads this address as ' + abs + ', which is not an address the proxy checked');
    }
    if ('' + apply(urlOrigin, a, []) === pageOrigin() || opAllowsHost('' + apply(urlHostname, a, [])) || pageLoads(abs, link)) {
      return abs;
    }
    refuse(name + ' refused: ' + abs + ' is not on the page\'s origin, not one of the remixlet\'s sites or fetch: hosts, and not an address the page already loads');
    return '';
  }

  // isSVG reports whether el is in the SVG namespace; isHTML whether in the HTML one.
  function nsOf(el) {
    try {
      return namespaceOf ? '' + apply(namespaceOf, el, []) : HTML_NS;
    } catch (e) {
      return '';
    }
  }

  // checkAttr checks one attribute write on el (a page element, a created one or one in a
  // clone or setHTML result) and returns the value to write. It refuses with the reason.
  function checkAttr(el, name, value) {
    name = lower(name);
    if (typeof value !== 'string' || value.length > 65536 || (name !== 'src' && value.length > 8192)) {
      refuse('the value must be a string of at most 8192 characters');
    }
    var k;
    for (k = 0; k < name.length; k++) {
      var ch = apply(charCodeAt, name, [k]);
      if (!((ch >= 97 && ch <= 122) || (k > 0 && ((ch >= 48 && ch <= 57) || ch === 45 || ch === 95 || ch === 46 || ch === 58)))) {
        refuse('"' + name + '" is not an attribute name that can be set');
      }
    }
    if (name === '') {
      refuse('the attribute name is empty');
    }
    if (apply(strSlice, name, [0, 2]) === 'on') {
      refuse('attribute ' + name + ' refused: event handler attributes (on*) run code');
    }
    if (apply(strSlice, name, [0, MARK_PREFIX.length]) === MARK_PREFIX) {
      refuse('attributes starting with ' + MARK_PREFIX + ' are the remixlets\' marks');
    }
    if (contains(name, ':')) {
      refuse('attribute ' + name + ' refused: namespaced attributes are not allowed');
    }
    var tag = localName(el);
    var ns = nsOf(el);
    if (isLoader(el) && !loaderWritable(el, name)) {
      refuse('attribute ' + name + ' refused: <' + tag + '> elements load, navigate or change how the page is fetched; ' +
        'on them a remixlet may set only class, hidden, title, lang, dir and aria-* attributes');
    }
    if (name === 'href' || name === 'src') {
      if (name === 'href' && !(ns === HTML_NS && (tag === 'a' || tag === 'area'))) {
        refuse('attribute href refused: only links (a) may have an href');
      }
      if (name === 'src' && !(ns === HTML_NS && tag === 'img')) {
        refuse('attribute src refused: only images (img) may have a src');
      }
      return checkAddress('attribute ' + name, value, name === 'href');
    }
    if (REFUSED_ATTRS[name] === true) {
      refuse('attribute ' + name + ' refused: it loads or runs something');
    }
    if (name === 'id' || name === 'name') {
      var v = lower(value);
      if (CLOBBER[v] === true || (value in doc) || apply(hasOwnProperty, win, [value])) {
        refuse('attribute ' + name + '="' + value + '" refused: it would shadow document.' + value + ' or window.' + value + ' for the page\'s scripts');
      }
    }
    if (PASSWORD_LOCKED[name] === true && isSensitive(el)) {
      refuse('attribute ' + name + ' of a password field cannot be changed');
    }
    if (name === 'type' && tag === 'input' && lower(value) === 'image') {
      refuse('<input type="image"> refused: use an img inside a button');
    }
    var lv = lower(value);
    if (contains(lv, 'url(') || contains(lv, 'image-set(') || (ns === SVG_NS && contains(lv, '\\'))) {
      refuse('attribute ' + name + ' refused: its value may not contain url(, image-set( or (on SVG) CSS escapes');
    }
    // A value that reads as a script address is refused everywhere, whatever the attribute.
    var squeezed = '';
    for (k = 0; k < lv.length && squeezed.length < 16; k++) {
      var c2 = apply(charCodeAt, lv, [k]);
      if (c2 > 32) {
        squeezed = squeezed + apply(fromCharCode, null, [c2]);
      }
    }
    if (apply(strSlice, squeezed, [0, 11]) === 'javascript:' || apply(strSlice, squeezed, [0, 9]) === 'vbscript:' ||
        apply(strSlice, squeezed, [0, 10]) === 'data:text/') {
      refuse('attribute ' + name + ' refused: its value reads as a script address');
    }
    // A page script may load what an attribute holds, so an address anywhere in the value
    // follows the address rule too; the value is written as given.
    var found = addressesIn(value);
    for (k = 0; k < found.length; k++) {
      checkAddress('attribute ' + name + ' (its value holds the address ' + found[k] + ')', found[k], false);
    }
    return value;
  }

  function opSetAttr(t, node, name, value) {
    name = lower(name);
    var v = checkAttr(node, name, value);
    attr(node, name, v);
    mark(t, node, '');
  }

  function opSetStyle(t, node, styles) {
    if (styles === null || typeof styles !== 'object') {
      refuse('styles must be an object of property names and values');
    }
    var names = objectKeys(styles);
    if (names.length > 64) {
      refuse('more than 64 style properties');
    }
    var st = styleOfNode(node);
    var i;
    var kebabs = list();
    for (i = 0; i < names.length; i++) {
      put(kebabs, i, kebab(names[i]));
      if (kebabs[i] === 'field-sizing' || kebabs[i] === '-webkit-field-sizing') {
        refuse('style ' + names[i] + ' refused: it makes a field\'s size follow its text, so a password\'s length would show in the layout');
      }
      checkStyleValue(names[i], own(styles, names[i]));
    }
    for (i = 0; i < names.length; i++) {
      apply(setProperty, st, [kebabs[i], own(styles, names[i]), '']);
    }
    mark(t, node, '');
  }

  function opOn(t, node, type, listener) {
    if (typeof type !== 'string' || EVENTS[type] !== true) {
      refuse('event ' + type + ' is not supported');
    }
    var id = listener !== null && typeof listener === 'object' ? own(listener, '$listener') : undefined;
    if (typeof id !== 'number') {
      refuse('the listener is missing');
    }
    if (t.listeners >= MAX_LISTENERS) {
      refuse('more than ' + MAX_LISTENERS + ' listeners');
    }
    t.listeners = t.listeners + 1;
    var rx = t.rx;
    var fn = function (ev) {
      var data = dict();
      data.type = type;
      data.target = handleFor(t, node);
      var path = eventPath(ev);
      var target = path.length > 0 ? path[0] : null;
      var secret = secretEvent(path);
      if (keyOf && (type === 'keydown' || type === 'keyup')) {
        try {
          data.key = secret ? '' : '' + apply(keyOf, ev, []);
        } catch (e) { /* not a keyboard event */ }
      }
      if (target !== null && !secret) {
        var n = localName(target);
        if (n === 'input' || n === 'textarea' || n === 'select') {
          try {
            data.value = opValue(target);
          } catch (e) { /* no value */ }
        }
      } else if (secret) {
        data.value = '';
      }
      if (apply(mapGet, tables, [rx]) !== t) {
        return; // released
      }
      var m = message('event');
      m.remixlet = rx;
      m.listener = id;
      m.event = data;
      send(m);
    };
    on(node, type, fn);
    var rec = dict();
    rec.node = node;
    rec.type = type;
    rec.fn = fn;
    put(t.on, t.on.length, rec);
    mark(t, node, '');
  }

  // eventPath returns the elements an event passes through, the real target first, as far as
  // this document can see: composedPath() reaches into open shadow roots (event.target is
  // retargeted to their host), and stops at the host of a closed one.
  function eventPath(ev) {
    var out = list();
    var p = null;
    try {
      p = composedPathOf ? apply(composedPathOf, ev, []) : null;
    } catch (e) { /* not an event */ }
    if (p === null) {
      try {
        p = list();
        put(p, 0, apply(eventTarget, ev, []));
      } catch (e) { /* not an event */ }
    }
    var n = p !== null && typeof p === 'object' ? p.length : 0;
    var i;
    for (i = 0; i < n; i++) {
      var node = p[i];
      try {
        if (node !== null && typeof node === 'object' && nodeType(node) === 1) {
          put(out, out.length, node);
        }
      } catch (e) { /* the window, not a node */ }
    }
    return out;
  }
  // SHADOW_HOSTS are the HTML elements that can host a shadow root (custom elements too).
  var SHADOW_HOSTS = dict();
  (function () {
    var names = ['article', 'aside', 'blockquote', 'div', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
      'header', 'main', 'nav', 'p', 'section', 'span'];
    var i;
    for (i = 0; i < names.length; i++) {
      SHADOW_HOSTS[names[i]] = true;
    }
  })();
  // secretEvent reports whether an event's key or value must be withheld: a password (or other
  // sensitive) field is on its path, or its real target may host a closed shadow root, whose
  // inside (a password field, maybe) this document cannot see. Body, editable elements and
  // elements that can host no shadow root are seen as they are.
  function secretEvent(path) {
    var i;
    for (i = 0; i < path.length; i++) {
      if (isSensitive(path[i])) {
        return true;
      }
    }
    if (path.length === 0) {
      return false;
    }
    var el = path[0];
    var tag = localName(el);
    if (nsOf(el) !== HTML_NS || (SHADOW_HOSTS[tag] !== true && !contains(tag, '-'))) {
      return false;
    }
    try {
      if ((openShadowRoot && apply(openShadowRoot, el, []) !== null) ||
          (contentEditable && apply(contentEditable, el, []) === true)) {
        return false;
      }
    } catch (e) { /* unknown: withhold */ }
    return true;
  }

  // ---- create, insert, clone, setHTML. ----

  function parentOf(node) {
    return parentNodeOf ? apply(parentNodeOf, node, []) : null;
  }
  function firstChild(node) {
    return apply(firstChildOf, node, []);
  }
  function nextSibling(node) {
    return apply(nextSiblingOf, node, []);
  }
  function nodeType(node) {
    return apply(nodeTypeOf, node, []);
  }
  // makeElement creates an allow-listed element of this document, in the SVG namespace inside
  // svg. It refuses anything else.
  function makeElement(tag, inSVG) {
    if (typeof tag !== 'string') {
      refuse('the tag must be a string');
    }
    tag = lower(tag);
    if (CREATE_TAGS[tag] !== true && SVG_TAGS[tag] !== true) {
      refuse('element <' + tag + '> refused: only layout, text, form control (not form), img and simple SVG elements can be created');
    }
    if (inSVG && SVG_TAGS[tag] !== true) {
      refuse('element <' + tag + '> refused inside svg: only path, circle, rect, line, polyline, polygon, g and text');
    }
    if (!inSVG && SVG_TAGS[tag] === true && tag !== 'svg') {
      refuse('element <' + tag + '> refused outside svg');
    }
    if (SVG_TAGS[tag] === true) {
      if (!createElementNS) {
        refuse('this browser cannot create SVG elements here');
      }
      return apply(createElementNS, doc, [SVG_NS, tag]);
    }
    return apply(createElement, doc, [tag]);
  }

  function buildSpec(t, spec, inSVG, depth, count) {
    if (spec === null || typeof spec !== 'object') {
      refuse('an element spec must be an object {tag, attrs?, text?, children?}');
    }
    count.n = count.n + 1;
    if (count.n > MAX_CREATE_NODES || depth > 16) {
      refuse('the spec has more than ' + MAX_CREATE_NODES + ' elements or is nested deeper than 16');
    }
    var tag = own(spec, 'tag');
    var el = makeElement(tag, inSVG);
    var tagName = localName(el);
    var attrs = own(spec, 'attrs');
    if (attrs !== undefined && attrs !== null) {
      if (typeof attrs !== 'object') {
        refuse('attrs must be an object of attribute names and values');
      }
      var names = objectKeys(attrs);
      var i;
      for (i = 0; i < names.length; i++) {
        var n = lower(names[i]);
        attr(el, n, checkAttr(el, n, own(attrs, names[i])));
      }
    }
    var txt = own(spec, 'text');
    if (txt !== undefined && txt !== null) {
      if (typeof txt !== 'string') {
        refuse('text must be a string');
      }
      if (isSensitive(el)) {
        refuse('a password field has no text');
      }
      text(el, txt);
    }
    var children = own(spec, 'children');
    if (children !== undefined && children !== null) {
      var len = typeof children === 'object' ? own(children, 'length') : undefined;
      if (typeof len !== 'number') {
        refuse('children must be an array of element specs');
      }
      for (var c = 0; c < len; c++) {
        apply(appendChild, el, [buildSpec(t, own(children, c), inSVG || tagName === 'svg', depth + 1, count)]);
      }
    }
    attr(el, t.mark, '');
    return el;
  }

  function opCreate(t, spec) {
    var count = dict();
    count.n = 0;
    return handleFor(t, buildSpec(t, spec, false, 0, count));
  }

  // holdsLoading reports whether node is or contains an element that loads or runs something.
  function holdsLoading(node) {
    if (nodeType(node) !== 1) {
      return false;
    }
    if (LOADING_TAGS[localName(node)] === true && localName(node) !== 'form') {
      return true;
    }
    var found = apply(querySelectorAllEl, node, ['script,style,link,meta,base,iframe,frame,frameset,object,embed,portal,applet,noscript,template']);
    return apply(nodeListLength, found, []) > 0;
  }

  function opInsert(t, target, node, position) {
    if (position === undefined || position === null) {
      position = 'append';
    }
    if (position !== 'before' && position !== 'after' && position !== 'prepend' && position !== 'append') {
      refuse('the position must be "before", "after", "prepend" or "append"');
    }
    if (node === host || target === host || isPageFrame(node)) {
      refuse('the page\'s html, head and body elements cannot be moved');
    }
    if (holdsLoading(node)) {
      refuse('elements that load or run something (script, iframe, object, link, style ...) cannot be moved');
    }
    var into = position === 'prepend' || position === 'append' ? target : parentOf(target);
    if (!into || nodeType(into) !== 1 || target === apply(documentElement, doc, []) && into !== target) {
      refuse('there is no element to insert into there');
    }
    if (RAW_TARGETS[localName(into)] === true || (isLoader(into) && localName(into) !== 'form')) {
      refuse('nothing can be inserted into ' + localName(into) + ' elements');
    }
    checkFormOwners(node, into);
    if (nsOf(into) === SVG_NS && nsOf(node) !== SVG_NS) {
      refuse('only SVG elements can be inserted into SVG');
    }
    if (position === 'append') {
      apply(appendChild, target, [node]);
    } else if (position === 'prepend') {
      apply(insertBefore, target, [node, firstChild(target)]);
    } else if (position === 'before') {
      apply(insertBefore, into, [node, target]);
    } else {
      apply(insertBefore, into, [node, nextSibling(target)]);
    }
    mark(t, node, '');
  }

  // checkFormOwners refuses a move of node into into that would put a password (or other
  // sensitive) field node holds under another form: submitted by the person with that form,
  // its value would go to that form's address.
  function checkFormOwners(node, into) {
    var fields = isSensitive(node) ? null : apply(querySelectorAllEl, node, ['input,textarea']);
    var n = fields ? apply(nodeListLength, fields, []) : 1;
    var target = nearestForm(into, null);
    var i;
    for (i = 0; i < n; i++) {
      var f = fields ? apply(nodeListItem, fields, [i]) : node;
      if (!isSensitive(f) || apply(hasAttribute, f, ['form'])) {
        continue; // a form attribute names the form by id, wherever the field is
      }
      // Its form after the move: one between it and node (they move together), else into's.
      var inside = nearestForm(f === node ? null : parentOf(f), node);
      var after = inside !== null ? inside : target;
      if (after !== nearestForm(f, null)) {
        refuse('a password field cannot be moved to another form (or out of its own)');
      }
    }
  }
  // nearestForm returns the nearest <form> from n up (stopping after stop, when given), or null.
  function nearestForm(n, stop) {
    while (n && nodeType(n) === 1) {
      if (nsOf(n) === HTML_NS && localName(n) === 'form') {
        return n;
      }
      if (n === stop) {
        return null;
      }
      n = parentOf(n);
    }
    return null;
  }

  // scrub makes a clone safe to keep: elements that load or run something and SVG or MathML
  // elements outside the SVG allow-list are removed, refused attributes stripped (href and src
  // kept only where the address rule passes), password fields blanked.
  function scrub(node, count) {
    count.n = count.n + 1;
    if (count.n > 20000) {
      refuse('the element is too large to clone');
    }
    var child = firstChild(node);
    while (child) {
      var next = nextSibling(child);
      var type = nodeType(child);
      if (type === 1) {
        var ns = nsOf(child);
        var tag = localName(child);
        if (LOADING_TAGS[tag] === true || (ns === SVG_NS && SVG_TAGS[tag] !== true) || (ns !== SVG_NS && ns !== HTML_NS)) {
          apply(removeChildFn, node, [child]);
        } else {
          scrubElement(child);
          scrub(child, count);
        }
      } else if (type !== 3) {
        apply(removeChildFn, node, [child]); // comments, processing instructions
      }
      child = next;
    }
  }
  function scrubElement(el) {
    var names = getAttributeNames ? apply(getAttributeNames, el, []) : null;
    if (!names) {
      refuse('this browser cannot list attributes');
    }
    // A password field stays one (its type, autocomplete ... are kept as they are) and is
    // blanked: no value attribute, an empty value.
    var pw = isSensitive(el);
    if (pw) {
      unattr(el, 'value');
      if (inputSetValue) {
        apply(inputSetValue, el, ['']);
      }
    }
    var n = names.length;
    var i;
    for (i = 0; i < n; i++) {
      var name = '' + names[i];
      var ln = lower(name);
      if (ln === 'style' || (apply(strSlice, ln, [0, MARK_PREFIX.length]) === MARK_PREFIX) ||
          (pw && PASSWORD_LOCKED[ln] === true) || CLONE_KEEPS[ln] === true) {
        continue; // the page's own inline style, marks, a password field's type, rel … stay
      }
      try {
        var v = checkAttr(el, ln, attrOf(el, name));
        if (ln === 'href' || ln === 'src') {
          attr(el, ln, v);
        }
      } catch (e) {
        unattr(el, name);
      }
    }
  }

  function opClone(t, node, deep) {
    if (!cloneNodeFn || !getAttributeNames) {
      refuse('this browser cannot clone here');
    }
    var tag = localName(node);
    var ns = nsOf(node);
    if (LOADING_TAGS[tag] === true || node === host || (ns === SVG_NS && SVG_TAGS[tag] !== true) || (ns !== SVG_NS && ns !== HTML_NS)) {
      refuse('<' + tag + '> elements cannot be cloned');
    }
    var copy = apply(cloneNodeFn, node, [deep === true]);
    var count = dict();
    count.n = 0;
    scrubElement(copy);
    scrub(copy, count);
    attr(copy, t.mark, '');
    return handleFor(t, copy);
  }

  // sanitizeInto copies the allow-listed part of a parsed (inert) node's children into into, as
  // new nodes of this document.
  function sanitizeInto(src, into, inSVG, depth, count) {
    var child = firstChild(src);
    while (child) {
      count.n = count.n + 1;
      if (count.n > MAX_HTML_NODES) {
        refuse('the HTML has more than ' + MAX_HTML_NODES + ' nodes');
      }
      var type = nodeType(child);
      if (type === 3) {
        apply(appendChild, into, [apply(createTextNode, doc, ['' + apply(nodeValueOf, child, [])])]);
      } else if (type === 1 && depth < 32) {
        var tag = localName(child);
        var ns = nsOf(child);
        var ok = inSVG ? ns === SVG_NS && SVG_TAGS[tag] === true
          : (ns === HTML_NS && CREATE_TAGS[tag] === true) || (ns === SVG_NS && tag === 'svg');
        if (ok) {
          var el = makeElement(tag, inSVG);
          copyAttrs(child, el, count);
          sanitizeInto(child, el, inSVG || tag === 'svg', depth + 1, count);
          apply(appendChild, into, [el]);
        } else {
          leftOut(count, '<' + tag + '> (not an allowed element; left out with its content)');
        }
      } else if (type === 1) {
        leftOut(count, '<' + localName(child) + '> (nested too deep)');
      } else if (type !== 8) {
        leftOut(count, 'a node of type ' + type);
      }
      child = nextSibling(child);
    }
  }
  // leftOut records what setHTML left out, for its answer (and so the remixlet's log).
  function leftOut(count, what) {
    if (count.left.length < 50) {
      put(count.left, count.left.length, what);
    }
  }
  function copyAttrs(from, to, count) {
    var names = apply(getAttributeNames, from, []);
    var n = names.length;
    var i;
    for (i = 0; i < n; i++) {
      var name = '' + names[i];
      if (i >= 64) {
        leftOut(count, '<' + localName(to) + ' ' + name + '> (more than 64 attributes)');
        continue;
      }
      try {
        var v = checkAttr(to, name, attrOf(from, name));
        apply(setAttribute, to, [lower(name) === 'href' || lower(name) === 'src' ? lower(name) : name, v]);
      } catch (e) {
        leftOut(count, '<' + localName(to) + ' ' + name + '>: ' + (own(e, 'mark') === REFUSAL ? e.why : 'not a valid attribute'));
      }
    }
  }

  function opSetHTML(t, node, html) {
    if (typeof html !== 'string' || html.length > 65536) {
      refuse('the HTML must be a string of at most 65536 characters');
    }
    if (typeof ParserCtor !== 'function' || !parseFromString || !getAttributeNames || !createTextNode ||
        !createFragment || !firstChildOf || !nextSiblingOf || !nodeTypeOf) {
      refuse('this browser cannot parse HTML inertly here');
    }
    var tag = localName(node);
    if (isPageFrame(node) || RAW_TARGETS[tag] === true || nsOf(node) !== HTML_NS || isSensitive(node) ||
        (isLoader(node) && tag !== 'form')) {
      refuse('the content of ' + tag + ' elements cannot be set');
    }
    var parsed;
    try {
      parsed = apply(parseFromString, new ParserCtor(), [html, 'text/html']);
    } catch (e) {
      refuse('the page does not allow parsing HTML (Trusted Types?); use dom.create');
    }
    var body = bodyOf ? apply(bodyOf, parsed, []) : null;
    var head = headOf ? apply(headOf, parsed, []) : null;
    var frag = apply(createFragment, doc, []);
    var count = dict();
    count.n = 0;
    count.left = list();
    if (head && firstChild(head)) {
      var hc = firstChild(head);
      while (hc) {
        leftOut(count, '<' + localName(hc) + '> (not an allowed element; left out with its content)');
        hc = nextSibling(hc);
      }
    }
    if (body) {
      sanitizeInto(body, frag, false, 0, count);
    }
    var markChild = firstChild(frag);
    while (markChild) {
      if (nodeType(markChild) === 1) {
        attr(markChild, t.mark, '');
      }
      markChild = nextSibling(markChild);
    }
    var c = firstChild(node);
    while (c) {
      apply(removeChildFn, node, [c]);
      c = firstChild(node);
    }
    apply(appendChild, node, [frag]);
    mark(t, node, '');
    return count.left;
  }

  // ---- rect, style, focus, scrollIntoView, click. ----

  // sizedByContent reports whether a password (or other sensitive) field of the page is sized
  // by what is typed into it (field-sizing: content, from the page's own styles; a remixlet may
  // not set it): then any box on the page may move with the length of the secret, so dom.rect
  // and dom.style are refused. (Without it a field's box does not depend on its text.)
  function sizedByContent() {
    var fields = apply(querySelectorAllDoc, doc, ['input,textarea']);
    var n = apply(nodeListLength, fields, []);
    var i;
    for (i = 0; i < n; i++) {
      var f = apply(nodeListItem, fields, [i]);
      if (isSensitive(f) && '' + apply(getPropertyValue, apply(getComputedStyleFn, win, [f]), ['field-sizing']) === 'content') {
        return true;
      }
    }
    return false;
  }
  function checkLayoutReadable(what) {
    if (typeof getComputedStyleFn !== 'function' || !getPropertyValue) {
      refuse('this browser cannot read computed styles here');
    }
    if (sizedByContent()) {
      refuse(what + ' is refused on this page: a password field here is sized by its content (field-sizing: content), so sizes would tell its length');
    }
  }

  function opRect(node) {
    if (!getBoundingClientRect || !rectX) {
      refuse('this browser cannot measure elements here');
    }
    checkLayoutReadable('dom.rect');
    var r = apply(getBoundingClientRect, node, []);
    var out = dict();
    out.x = apply(rectX, r, []);
    out.y = apply(rectY, r, []);
    out.width = apply(rectWidth, r, []);
    out.height = apply(rectHeight, r, []);
    return out;
  }

  function opStyle(node, props) {
    checkLayoutReadable('dom.style');
    var cs = apply(getComputedStyleFn, win, [node]);
    if (typeof props === 'string') {
      return '' + apply(getPropertyValue, cs, [kebab(props)]);
    }
    var n = props !== null && typeof props === 'object' ? own(props, 'length') : undefined;
    if (typeof n !== 'number' || n < 1 || n > 64) {
      refuse('dom.style takes a property name or an array of 1 to 64 names');
    }
    var out = dict();
    var i;
    for (i = 0; i < n; i++) {
      var p = own(props, i);
      out[p] = '' + apply(getPropertyValue, cs, [kebab(p)]);
    }
    return out;
  }

  function requireHTML(node, what) {
    if (nsOf(node) !== HTML_NS || node === host) {
      refuse(what + ' works on HTML elements of the page');
    }
  }

  function sameOriginAddress(abs) {
    var u = parseURL(abs, undefined);
    return u !== null && '' + apply(urlOrigin, u, []) === pageOrigin() &&
      ('' + apply(urlProtocol, u, []) === 'https:' || '' + apply(urlProtocol, u, []) === 'http:');
  }
  function checkTarget(el, what) {
    var tg = attrOf(el, what);
    if (typeof tg === 'string' && tg !== '' && lower(tg) !== '_self') {
      refuse('dom.click refused: the ' + localName(el) + ' opens in target "' + tg + '"; only the page itself');
    }
  }
  // activation finds what a click on node would activate: node or its nearest ancestor with an
  // activation behaviour.
  function activation(node) {
    var n = node;
    var depth = 0;
    while (n && nodeType(n) === 1 && depth < 256) {
      var tag = localName(n);
      var ns = nsOf(n);
      if (ns === HTML_NS) {
        if ((tag === 'a' || tag === 'area') && apply(hasAttribute, n, ['href'])) {
          return n;
        }
        if (tag === 'button' || tag === 'label' || tag === 'summary') {
          return n;
        }
        if (tag === 'input') {
          return n;
        }
      } else if (ns === SVG_NS && tag === 'a') {
        return n;
      }
      n = parentOf(n);
      depth++;
    }
    return null;
  }
  function checkClick(node, depth) {
    var act = activation(node);
    if (!act) {
      return;
    }
    var tag = localName(act);
    if (nsOf(act) === SVG_NS) {
      refuse('dom.click refused: it would follow an SVG link');
    }
    if (tag === 'a' || tag === 'area') {
      var to = '' + apply(tag === 'a' ? anchorHref : areaHref, act, []);
      if (!sameOriginAddress(to)) {
        refuse('dom.click refused: the link goes to ' + to + ', not to the page\'s origin');
      }
      checkTarget(act, 'target');
      if (apply(hasAttribute, act, ['ping'])) {
        refuse('dom.click refused: the link pings other addresses');
      }
      return;
    }
    if (tag === 'label') {
      if (depth > 0) {
        return;
      }
      var control = labelControl ? apply(labelControl, act, []) : null;
      if (control && control !== node) {
        checkClick(control, depth + 1);
      }
      return;
    }
    var type = lower('' + (attrOf(act, 'type') || ''));
    // A button whose type is missing or not one the browser knows submits its form.
    var submits = tag === 'button' ? type !== 'button' && type !== 'reset' : type === 'submit' || type === 'image';
    if (!submits) {
      return;
    }
    if (apply(hasAttribute, act, ['formaction'])) {
      refuse('dom.click refused: the button has a formaction');
    }
    checkTarget(act, 'formtarget');
    var fm = attrOf(act, 'formmethod');
    if (typeof fm === 'string' && fm !== '' && lower(fm) !== 'get' && lower(fm) !== 'post') {
      refuse('dom.click refused: the button submits with method ' + fm);
    }
    var form = apply(tag === 'button' ? buttonForm : inputForm, act, []);
    if (!form) {
      return;
    }
    var action = '' + apply(formAction, form, []);
    if (!sameOriginAddress(action)) {
      refuse('dom.click refused: the form is sent to ' + action + ', not to the page\'s origin');
    }
    var method = attrOf(form, 'method');
    if (typeof method === 'string' && method !== '' && lower(method) !== 'get' && lower(method) !== 'post') {
      refuse('dom.click refused: the form is sent with method ' + method);
    }
    checkTarget(form, 'target');
  }

  function opClick(node) {
    requireHTML(node, 'dom.click');
    if (!htmlClick || !formAction || !anchorHref || !buttonForm || !inputForm) {
      refuse('this browser cannot check clicks here');
    }
    checkClick(node, 0);
    apply(htmlClick, node, []);
  }

  // ---- Release: the proxy stopped a remixlet on this page. ----

  function release(req) {
    var rx = own(req, 'remixlet');
    if (shortID(rx) === '') {
      return;
    }
    var t = tables ? apply(mapGet, tables, [rx]) : undefined;
    if (t) {
      var l = t.on;
      var i;
      for (i = 0; l && i < l.length && removeEventListener; i++) {
        try {
          apply(removeEventListener, l[i].node, [l[i].type, l[i].fn, false]);
        } catch (e) { /* gone */ }
      }
      apply(mapDelete, tables, [rx]);
    }
    menuRelease(rx);
    var rec = styleSheets ? apply(mapGet, styleSheets, [rx]) : undefined;
    if (rec) {
      emptySheets(rec);
    }
    dropOwnMutations();
  }

  // ops runs one operation and returns its JSON value (undefined for none).
  function op(t, name, args) {
    if (name === 'query' || name === 'queryAll') {
      return opQuery(t, args, name === 'queryAll');
    }
    if (name === 'create') {
      return opCreate(t, arg(args, 0));
    }
    if (name === 'addStyle') {
      var css = stringArg(args, 0, 'the stylesheet');
      addStyle(t.rx, css);
      return undefined;
    }
    var node = element(t, arg(args, 0));
    if (name === 'text') {
      return isSensitive(node) ? '' : '' + apply(getTextContent, node, []);
    } else if (name === 'attr') {
      var an = lower(stringArg(args, 1, 'the attribute name'));
      if (an === 'value' && isSensitive(node)) {
        return '';
      }
      return attrOf(node, an);
    } else if (name === 'value') {
      return opValue(node);
    } else if (name === 'setText') {
      var txt = stringArg(args, 1, 'the text');
      var ln = localName(node);
      if ((isLoader(node) && lower(ln) !== 'form') || isSensitive(node) || isPageFrame(node)) {
        refuse('the text of ' + ln + ' elements cannot be set');
      }
      text(node, txt);
      mark(t, node, '');
    } else if (name === 'setAttr') {
      opSetAttr(t, node, stringArg(args, 1, 'the attribute name'), arg(args, 2));
    } else if (name === 'addClass' || name === 'removeClass') {
      var cls = stringArg(args, 1, 'the class name');
      if (cls === '' || cls.length > 128 || contains(cls, ' ')) {
        refuse('"' + cls + '" is not one class name');
      }
      var cl = classListOf ? apply(classListOf, node, []) : null;
      if (!cl || !tokenAdd || !tokenRemove) {
        refuse('this element has no classes');
      }
      apply(name === 'addClass' ? tokenAdd : tokenRemove, cl, [cls]);
      mark(t, node, name === 'addClass' ? cls : '');
    } else if (name === 'setStyle') {
      opSetStyle(t, node, arg(args, 1));
    } else if (name === 'hide') {
      apply(setProperty, styleOfNode(node), ['display', 'none', 'important']);
      attr(node, HIDDEN_ATTR, '');
      mark(t, node, '');
    } else if (name === 'show') {
      if (apply(hasAttribute, node, [HIDDEN_ATTR])) {
        unattr(node, HIDDEN_ATTR);
        apply(removeProperty, styleOfNode(node), ['display']);
      }
    } else if (name === 'on') {
      opOn(t, node, arg(args, 1), arg(args, 2));
    } else if (name === 'remove') {
      if (isPageFrame(node)) {
        refuse('the page\'s html, head and body elements cannot be removed');
      }
      apply(elementRemove, node, []);
    } else if (name === 'insert') {
      opInsert(t, node, element(t, arg(args, 1)), arg(args, 2));
    } else if (name === 'clone') {
      return opClone(t, node, arg(args, 1));
    } else if (name === 'setHTML') {
      return opSetHTML(t, node, arg(args, 1));
    } else if (name === 'rect') {
      return opRect(node);
    } else if (name === 'style') {
      return opStyle(node, arg(args, 1));
    } else if (name === 'focus') {
      requireHTML(node, 'dom.focus');
      apply(focus, node, []);
    } else if (name === 'scrollIntoView') {
      if (!scrollIntoViewFn) {
        refuse('this browser cannot scroll here');
      }
      apply(scrollIntoViewFn, node, []);
    } else if (name === 'click') {
      opClick(node);
    } else {
      refuse('dom.' + name + ' is not available in this page agent');
    }
    return undefined;
  }

  function runOp(req) {
    var m = message('result');
    m.id = own(req, 'id');
    var rx = own(req, 'remixlet');
    try {
      if (shortID(rx) === '') {
        refuse('unknown remixlet');
      }
      if (!observer) {
        observe();
      }
      opHosts = own(req, 'hosts');
      opRelative = own(req, 'rel') === true;
      opAddrs = addressSet(own(req, 'op'), own(req, 'addrs'));
      var v = op(tableFor(rx), own(req, 'op'), own(req, 'args'));
      opHosts = null;
      opAddrs = null;
      m.ok = true;
      m.value = v === undefined ? null : v;
    } catch (e) {
      opHosts = null;
      opAddrs = null;
      m.ok = false;
      m.error = e !== null && typeof e === 'object' && own(e, 'mark') === REFUSAL ? e.why : 'the operation failed in the page';
    }
    dropOwnMutations();
    send(m);
  }

  // observe starts reporting page changes to the proxy, so rmx.keep checks run again.
  function observe() {
    if (typeof MO !== 'function' || !moObserve) {
      observer = true;
      return;
    }
    // The first change is reported at once (a keep repairs within the frame); changes during
    // the next MUTATION_DEBOUNCE_MS are coalesced into one notice at its end.
    observer = new MO(function () {
      if (mutationTimer) {
        mutationDirty = true;
        return;
      }
      send(message('mutated'));
      mutationTimer = later(mutationCooldown, MUTATION_DEBOUNCE_MS);
    });
    var opts = dict();
    opts.childList = true;
    opts.subtree = true;
    opts.attributes = true;
    opts.characterData = true;
    apply(moObserve, observer, [doc, opts]);
  }
  // dropOwnMutations takes the records of the operation just run out of the observer's queue:
  // the agent's own changes must not wake rmx.keep (a repair would otherwise trigger itself).
  function dropOwnMutations() {
    if (observer && observer !== true && moTakeRecords) {
      try {
        apply(moTakeRecords, observer, []);
      } catch (e) { /* nothing queued */ }
    }
  }

  function reloadPage() {
    if (typeof locationReload === 'function') {
      try {
        apply(locationReload, loc, []);
      } catch (e) { /* reload refused */ }
    }
  }

  // ---- Remixlet stylesheets. ------------------------------------------------------------------
  //
  // The proxy sends a remixlet's style.css as {type:'style', remixlet, css}, after checking it
  // again for this page (nothing in it loads from where it should not; refused parts are left
  // out). It goes into a constructable stylesheet of its own adopted by the document: the page's
  // CSP style-src does not govern it, so there is no <style> element and no policy change. A
  // second message for the same remixlet replaces the rules of that sheet, and adopts it again
  // if the page had dropped it. Sheets are appended with the captured Array.prototype.push on
  // the document's adoptedStyleSheets, an observable array whose traps are the browser's, so no
  // function of the page is called with it. (The page can read document.adoptedStyleSheets, as
  // it can read its own stylesheets; what the sheets load was decided by the proxy.)
  //
  // dom.addStyle(css) arrives as an op (checked by the proxy with the same rules, one piece at a
  // time); each piece gets a sheet of its own, adopted after style.css's and the earlier pieces,
  // so the browser parses each piece exactly as it was checked: nothing one piece leaves open
  // (a comment, a string, a block) can reach into the next (DESIGN invariant 9). A remixlet may
  // add at most MAX_STYLE_PIECES pieces and 256 KiB per page; more is refused. A release
  // empties its sheets (they are reused, in order, if it starts again).

  var MAX_STYLE_PIECES = 256;
  var styleSheets = null; // remixlet ID -> {base: style.css sheet, pieces: addStyle sheets, used, size}

  function sheetsFor(rx) {
    if (!styleSheets) {
      styleSheets = new MapCtor();
    }
    var rec = apply(mapGet, styleSheets, [rx]);
    if (!rec) {
      rec = dict();
      rec.base = new Sheet();
      rec.pieces = list();
      rec.used = 0;
      rec.size = 0;
      apply(mapSet, styleSheets, [rx, rec]);
    }
    return rec;
  }

  function applyStyle(req) {
    var rx = own(req, 'remixlet');
    var css = own(req, 'css');
    if (shortID(rx) === '' || typeof css !== 'string') {
      return;
    }
    if (typeof Sheet !== 'function' || !replaceSync || !documentAdopted) {
      warn('this browser cannot apply remixlet stylesheets');
      return;
    }
    try {
      var rec = sheetsFor(rx);
      apply(replaceSync, rec.base, [css]);
      adoptAll(rec);
    } catch (e) {
      warn('a remixlet stylesheet could not be applied');
    }
  }

  function addStyle(rx, css) {
    if (typeof Sheet !== 'function' || !replaceSync || !documentAdopted) {
      refuse('this browser cannot apply remixlet stylesheets');
    }
    if (css.length > 65536) {
      refuse('the stylesheet is longer than 65536 characters');
    }
    var rec = sheetsFor(rx);
    if (rec.used >= MAX_STYLE_PIECES) {
      refuse('the remixlet added more than ' + MAX_STYLE_PIECES + ' stylesheets to this page; add fewer, larger ones');
    }
    if (rec.size + css.length > 262144) {
      refuse('the remixlet added more than 256 KiB of styles to this page');
    }
    var sheet = rec.used < rec.pieces.length ? rec.pieces[rec.used] : new Sheet();
    apply(replaceSync, sheet, [css]);
    if (rec.used === rec.pieces.length) {
      put(rec.pieces, rec.used, sheet);
    }
    rec.used = rec.used + 1;
    rec.size = rec.size + css.length;
    adoptAll(rec);
  }

  // emptySheets empties a remixlet's sheets (a release); they stay adopted, in order, for reuse.
  function emptySheets(rec) {
    var i;
    try {
      apply(replaceSync, rec.base, ['']);
      for (i = 0; i < rec.pieces.length; i++) {
        apply(replaceSync, rec.pieces[i], ['']);
      }
    } catch (e) { /* nothing to empty */ }
    rec.used = 0;
    rec.size = 0;
  }

  // adoptAll adopts a remixlet's sheets that the document does not have: style.css's, then the
  // pieces in the order they were added.
  function adoptAll(rec) {
    adopt(rec.base);
    var i;
    for (i = 0; i < rec.pieces.length; i++) {
      adopt(rec.pieces[i]);
    }
  }

  // adopt appends sheet to the document's adopted stylesheets unless it is there already.
  function adopt(sheet) {
    var sheets = apply(documentAdopted, doc, []);
    var n = sheets.length;
    var i;
    for (i = 0; i < n; i++) {
      if (sheets[i] === sheet) {
        return;
      }
    }
    try {
      apply(arrayPush, sheets, [sheet]);
      return;
    } catch (e) { /* a frozen array: a browser from before observable arrays */ }
    if (!setDocumentAdopted) {
      return;
    }
    // The browser converts this array with the page's Array iterator; at worst the page sees our
    // stylesheet object, which it can read from document.adoptedStyleSheets anyway.
    var next = [];
    for (i = 0; i < n; i++) {
      put(next, i, sheets[i]);
    }
    put(next, n, sheet);
    apply(setDocumentAdopted, doc, [next]);
  }

  /*@include agent_tools.js*/

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
  //   - {type:'menu', remixlet, source, commands:[{id, label, listener}]}: the remixlet's whole
  //     list of commands. A small button next to the launcher opens a menu of every remixlet's
  //     commands (role=menu; arrow keys, Escape); a trusted click on one sends
  //     {type:'event', remixlet, listener, event:{type:'menu', id}}.
  //   - {type:'open', url, source}: focuses the window when the page is at url, else navigates
  //     there, only within the page's origin; a toast says which remixlet asked.
  // The tray (toasts, menu button, menu) has its own host element, so clicks in it are never
  // taken for clicks on the launcher. A page can hide or cover it, or stop clicks reaching its
  // buttons (a window capture listener that stops propagation); it cannot read it, fake a trusted
  // click, or make a remixlet's text run as HTML.

  var nav = win.navigator;
  var clipboardObj = null;
  try {
    clipboardObj = nav ? nav.clipboard : null;
  } catch (e) { /* no clipboard here (an insecure page) */ }
  var clipboardWriteText = proto(win.Clipboard) && win.Clipboard.prototype.writeText;
  var userActivation = null;
  try {
    userActivation = nav ? nav.userActivation : null;
  } catch (e) { /* an old browser */ }
  var activationIsActive = getter(proto(win.UserActivation), 'isActive');
  var promiseThen = Promise.prototype.then;
  var NotificationCtor = win.Notification;
  var notificationPermission = getter(NotificationCtor, 'permission');
  var locationAssign = loc.assign;
  var windowFocus = win.focus;
  var dateNow = Date.now;
  var elementFocus = focus;
  var shadowActiveElement = getter(proto(win.ShadowRoot), 'activeElement');

  var NO_GESTURE = 'the clipboard can be written only right after you click or press a key on the page';
  var NOTIFY_PER_MINUTE = 5;
  var TOAST_MS = 6000;
  var MAX_TOASTS = 3;
  var MAX_COMMANDS = 10;

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
    '.toast, .menu {',
    '  all: initial; box-sizing: border-box; display: block; padding: 10px 12px;',
    '  background: #ffffff; color: #1f2328; border: 1px solid #d0d7de; border-radius: 10px;',
    '  box-shadow: 0 6px 20px rgba(0, 0, 0, 0.25);',
    '  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif;',
    '  white-space: pre-wrap; overflow-wrap: anywhere; cursor: default;',
    '}',
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
    '.more:focus-visible, .item:focus-visible { outline: 3px solid #f2b705; outline-offset: 2px; }',
    '.menu { position: fixed; right: 16px; bottom: 72px; z-index: 2147483647; width: 280px;',
    '  max-width: calc(100vw - 32px); padding: 6px; }',
    '.menu[data-closed] { display: none; }',
    '.item {',
    '  all: initial; box-sizing: border-box; display: block; width: 100%; padding: 6px 8px;',
    '  border-radius: 6px; color: #1f2328; cursor: pointer; text-align: left;',
    '  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif;',
    '}',
    '.item:hover, .item:focus { background: #ddf4ff; }',
    '.group + .group { border-top: 1px solid #d0d7de; margin-top: 4px; padding-top: 4px; }',
    '.group > .src { padding: 2px 8px; }'
  ];

  var tray = null;      // <div data-remixproxy-tray>, in the page's DOM
  var trayRoot = null;  // its closed shadow root; never leaves this closure
  var toastBox = null;
  var moreButton = null;
  var menuBox = null;
  var menuOpen = false;
  var menus = null;      // remixlet ID -> {source, commands}
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
      attr(b, 'aria-haspopup', 'menu');
      attr(b, 'aria-expanded', 'false');
      attr(b, 'aria-label', 'Remixlet commands');
      attr(b, 'title', 'Remixlet commands');
      attr(b, 'data-none', '');
      text(b, '\u22ef');
      on(b, 'click', function (ev) {
        if (ev.isTrusted === true) {
          setMenuOpen(!menuOpen);
        }
      });
      apply(appendChild, sr, [b]);
      var mbox = el('div');
      attr(mbox, 'class', 'menu');
      attr(mbox, 'role', 'menu');
      attr(mbox, 'aria-label', 'Remixlet commands');
      attr(mbox, 'data-closed', '');
      on(mbox, 'keydown', menuKey);
      apply(appendChild, sr, [mbox]);
      tray = h;
      trayRoot = sr;
      toastBox = box;
      moreButton = b;
      menuBox = mbox;
    }
    if (isConnected && !apply(isConnected, tray, [])) {
      apply(appendChild, root, [tray]);
    }
    return trayRoot;
  }

  function clearChildren(node) {
    var c = firstChild(node);
    while (c) {
      apply(removeChildFn, node, [c]);
      c = firstChild(node);
    }
  }

  function span(cls, value) {
    var s = el('span');
    attr(s, 'class', cls);
    text(s, value);
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
    if (!clipboardObj || typeof clipboardWriteText !== 'function') {
      answer(false, 'this page cannot write the clipboard (it needs an https page in a browser with the clipboard API)');
      return;
    }
    var active = false;
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

  function runMenu(m) {
    var rx = own(m, 'remixlet');
    var cmds = own(m, 'commands');
    if (shortID(rx) === '') {
      return;
    }
    if (!menus) {
      menus = new MapCtor();
    }
    var entry = dict();
    entry.source = textField(m, 'source', 100);
    entry.commands = list();
    var i;
    for (i = 0; cmds !== null && typeof cmds === 'object' && i < cmds.length && i < MAX_COMMANDS; i++) {
      var c = cmds[i];
      if (c === null || typeof c !== 'object') {
        continue;
      }
      var listener = own(c, 'listener');
      var label = textField(c, 'label', 60);
      var cid = own(c, 'id');
      if (typeof listener !== 'number' || label === '' || typeof cid !== 'string') {
        continue;
      }
      var cmd = dict();
      cmd.id = cid;
      cmd.label = label;
      cmd.listener = listener;
      put(entry.commands, entry.commands.length, cmd);
    }
    if (entry.commands.length === 0) {
      apply(mapDelete, menus, [rx]);
    } else {
      apply(mapSet, menus, [rx, entry]);
    }
    renderMenu();
  }

  function menuRelease(rx) {
    if (menus && apply(mapGet, menus, [rx])) {
      apply(mapDelete, menus, [rx]);
      renderMenu();
    }
  }

  function chooseCommand(rx, cmd) {
    return function (ev) {
      if (ev.isTrusted !== true || !menus) {
        return;
      }
      var entry = apply(mapGet, menus, [rx]);
      if (!entry || !entry.commands) {
        return;
      }
      var m = message('event');
      m.remixlet = rx;
      m.listener = cmd.listener;
      var data = dict();
      data.type = 'menu';
      data.id = cmd.id;
      m.event = data;
      send(m);
      setMenuOpen(false);
    };
  }

  function renderMenu() {
    var total = 0;
    if (menus) {
      total = apply(mapSize, menus, []);
    }
    if (!trayShadow()) {
      return;
    }
    clearChildren(menuBox);
    if (total === 0) {
      attr(moreButton, 'data-none', '');
      setMenuOpen(false);
      return;
    }
    unattr(moreButton, 'data-none');
    apply(mapForEach, menus, [function (entry, rx) {
      var group = el('div');
      attr(group, 'class', 'group');
      attr(group, 'role', 'group');
      attr(group, 'aria-label', entry.source);
      var heading = span('src', entry.source);
      attr(heading, 'aria-hidden', 'true');
      apply(appendChild, group, [heading]);
      var i;
      for (i = 0; i < entry.commands.length; i++) {
        var b = el('button');
        attr(b, 'type', 'button');
        attr(b, 'class', 'item');
        attr(b, 'role', 'menuitem');
        attr(b, 'tabindex', '-1');
        text(b, entry.commands[i].label);
        on(b, 'click', chooseCommand(rx, entry.commands[i]));
        apply(appendChild, group, [b]);
      }
      apply(appendChild, menuBox, [group]);
    }]);
  }

  function menuItems() {
    var out = list();
    if (!menuBox || !querySelectorAllEl) {
      return out;
    }
    var nodes = apply(querySelectorAllEl, menuBox, ['.item']);
    var n = apply(nodeListLength, nodes, []);
    var i;
    for (i = 0; i < n; i++) {
      put(out, out.length, apply(nodeListItem, nodes, [i]));
    }
    return out;
  }

  function focusNode(node) {
    if (node && elementFocus) {
      try {
        apply(elementFocus, node, []);
      } catch (e) { /* focus is a nicety */ }
    }
  }

  function setMenuOpen(next) {
    if (!menuBox) {
      return;
    }
    menuOpen = next;
    if (next) {
      unattr(menuBox, 'data-closed');
      attr(moreButton, 'aria-expanded', 'true');
      var items = menuItems();
      focusNode(items[0]);
    } else {
      attr(menuBox, 'data-closed', '');
      attr(moreButton, 'aria-expanded', 'false');
    }
  }

  // menuKey moves through the menu with the arrow keys and closes it with Escape.
  function menuKey(ev) {
    var key = '';
    try {
      key = keyOf ? '' + apply(keyOf, ev, []) : '';
    } catch (e) {
      return;
    }
    if (key === 'Escape') {
      setMenuOpen(false);
      focusNode(moreButton);
      return;
    }
    if (key !== 'ArrowDown' && key !== 'ArrowUp') {
      return;
    }
    var items = menuItems();
    var active = null;
    try {
      active = shadowActiveElement ? apply(shadowActiveElement, trayRoot, []) : null;
    } catch (e) { /* none */ }
    var i;
    var at = -1;
    for (i = 0; i < items.length; i++) {
      if (items[i] === active) {
        at = i;
      }
    }
    var next = key === 'ArrowDown' ? at + 1 : at - 1;
    if (next < 0) {
      next = items.length - 1;
    }
    if (next >= items.length) {
      next = 0;
    }
    focusNode(items[next]);
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
      apply(locationAssign, loc, [abs]);
    } catch (e) {
      warn('could not open ' + abs);
    }
  }

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
