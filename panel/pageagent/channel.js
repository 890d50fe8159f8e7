// ---- The channel to the proxy. ----------------------------------------------------------------
//
// One WebSocket to wss://remix.proxy/agent/ws?t=TOKEN (the first one opened by the boot, boot.js
// openEarlySocket, and taken over here): reconnects with backoff unless the proxy
// refused the token (4401, 4403), closed on pagehide so that the back/forward cache can keep the
// page, and opened again at once on pageshow.

var SOCKET_URL = '';   // set by useToken
var PANEL_ORIGIN = '';
var PANEL_URL = '';

// useToken writes the token into the socket's address and forgets it: from then on the token
// exists only inside SOCKET_URL.
function useToken() {
  var secure = apply(locationProtocol, loc, []) === 'https:';
  SOCKET_URL = (secure ? 'wss' : 'ws') + '://remix.proxy/agent/ws?t=' + encode(takeBootToken());
  PANEL_ORIGIN = (secure ? 'https' : 'http') + '://remix.proxy';
  PANEL_URL = PANEL_ORIGIN + '/panel';
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
// The last URL reported to the proxy is the boot's (boot.js reportedURL), which sends the
// first socket's hello.

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

// sendReady reports the document's new state (rx_ready.js advanceReady).
function sendReady(state) {
  var m = message('ready');
  m.state = state;
  send(m);
}

// sendHello says hello on a socket the rest opened (the boot says it on its own: boot.js).
function sendHello() {
  send(helloMessage());
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
  var s = takeEarlySocket(); // the first one the boot opened (boot.js), if any
  var early = s !== null;
  if (!early) {
    try {
      s = new WS(SOCKET_URL + firstSheetsQuery());
    } catch (e) {
      scheduleReconnect();
      return;
    }
  }
  sock = s;
  setState('connecting');
  var handle = function (type, ev) {
    if (sock !== s) {
      return;
    }
    if (type === 'open') {
      if (!early) {
        sendHello(); // the boot's socket had its hello from the boot (boot.js earlyOpened)
      }
    } else if (type === 'message') {
      receive(ev);
    } else if (type === 'close') {
      closed(ev);
    }
  };
  if (early) {
    listenEarlySocket(handle);
    return;
  }
  on(s, 'open', function (ev) { handle('open', ev); });
  on(s, 'message', function (ev) { handle('message', ev); });
  on(s, 'close', function (ev) { handle('close', ev); });
  // 'error' is always followed by 'close'; nothing to do there.
}

// closed handles the close of the live socket: never again after 4401/4403, else reconnect.
function closed(ev) {
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

// startBackForwardCache: an open socket keeps Chromium from caching the page (back/forward
// cache), so close it on pagehide and reconnect at once when the page comes back.
function startBackForwardCache() {
  onEarly('pagehide', function () {
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
  });
  onEarly('pageshow', function (ev) {
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
  });
}
