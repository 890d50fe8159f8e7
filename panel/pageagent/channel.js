// ---- The channel to the proxy. ----------------------------------------------------------------
//
// One WebSocket to wss://remix.proxy/agent/ws, the token in its subprotocol (never in its
// address: the browser hands a page the address of a request its own policy blocks or only
// reports, in securitypolicyviolation's blockedURI): reconnects with backoff unless the proxy
// refused the token (4401, 4403), closed on pagehide so that the back/forward cache can keep the
// page, and opened again at once on pageshow.

var SOCKET_URL = '';   // set by useToken
var SOCKET_PROTOCOL = ''; // set by useToken: 'remixproxy~' + token (panel.AgentProtocolPrefix)
var PANEL_ORIGIN = '';
var PANEL_URL = '';

// useToken writes the token into the socket's subprotocol and forgets it: from then on the
// token exists only inside SOCKET_PROTOCOL. The subprotocol is one string, not a list: the
// browser reads a list through the page's Array iterator, which the page may have replaced.
function useToken() {
  var secure = apply(locationProtocol, loc, []) === 'https:';
  SOCKET_URL = (secure ? 'wss' : 'ws') + '://remix.proxy/agent/ws';
  SOCKET_PROTOCOL = 'remixproxy~' + token;
  PANEL_ORIGIN = (secure ? 'https' : 'http') + '://remix.proxy';
  // The panel is served to be framed only by the origin it names, and names it on its socket,
  // where the proxy refuses any but this session's (panel.FrameOriginParam). An origin has no
  // character a query must escape.
  PANEL_URL = PANEL_ORIGIN + '/panel?for=' + apply(locationOrigin, loc, []);
  token = null;
}

var CLOSE_TOKEN_UNKNOWN = 4401;
var CLOSE_REFUSED = 4403;
var RECONNECT_FIRST_MS = 1000;
var RECONNECT_MAX_MS = 30000;

// ---- Connection state. ----------------------------------------------------------------------

var sock = null;          // the live WebSocket, or null
var state = 'connecting'; // 'connecting' | 'connected' | 'closed' (mirrored on the host element)
var stopped = false;      // true after 4401/4403: never reconnect
var suspended = false;    // true between pagehide and pageshow (back/forward cache)
var retryTimer = 0;
var retryDelay = RECONNECT_FIRST_MS;
var panelToken = '';      // from welcome; only ever posted to the panel iframe
var resumeKey = '';       // from welcome: the token's session opens again only with it (proxy/page/claims.go)
var refusedWhy = '';      // the proxy's reason when it refused the channel (the launcher's title)
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
  m.ready = readiness(); // the document's state now, for the remixlets' run times (rx_ready.js)
  if (newWindow) {
    m.newWindow = true; // navigation.js: a chat never follows its tab to a popup
  }
  if (cameFrom !== '') {
    m.from = cameFrom; // navigation.js: a chat follows only from the page this one replaced
  }
  lastURL = m.url;
  send(m);
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
    s = new WS(SOCKET_URL + firstSheetsQuery(), SOCKET_PROTOCOL + (resumeKey ? '~' + resumeKey : ''));
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
      try {
        refusedWhy = closeReason ? '' + apply(closeReason, ev, []) : '';
      } catch (e) { /* keep '' */ }
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
  if (type === 'op' || type === 'tool') {
    startRevealWatch(); // before anything reads or presses in the page (rx_policy.js)
  }
  if (type === 'welcome') {
    var p = own(m, 'panel');
    panelToken = typeof p === 'string' ? p : '';
    var k = own(m, 'resume');
    if (typeof k === 'string' && k !== '') {
      resumeKey = k;
    }
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

// startBackForwardCache: an open socket keeps Chromium from caching the page (back/forward
// cache), so close it on pagehide and reconnect at once when the page comes back. Only the
// browser's own events count: a page that dispatched pagehide and pageshow itself closed and
// reopened its session at will, hundreds of times a second, each one starting the page's
// remixlets again and ending what belongs to the session (its chat's cards, the navigation
// lease of a page the agent opened).
function startBackForwardCache() {
  on(win, 'pagehide', function (ev) {
    if (ev.isTrusted !== true) {
      return;
    }
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
    if (ev.isTrusted !== true) {
      return;
    }
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
}
