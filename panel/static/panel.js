/*
 * remixproxy panel (https://remix.proxy/panel, inside the page agent's closed shadow root).
 *
 * The page agent posts us the panel token once we have loaded, and again when its session
 * changes: postMessage({type: 'panel-token', token: '...'}) from our parent window. A token in the
 * URL fragment (#TOKEN) also works, for opening the panel by hand; it is cleared from the address
 * with history.replaceState. With the token we open wss://remix.proxy/panel/ws?t=TOKEN. The proxy
 * sends
 *   {type: 'state', connected: bool, url: '...', title: '...', session: '...'}
 *   {type: 'error', message: '...'}
 * and we show them. Text only ever goes in through textContent.
 *
 * This is a placeholder for the chat that comes in a later version.
 */
(function () {
  'use strict';

  var CLOSE_NORMAL = 1000;
  var CLOSE_TOKEN_UNKNOWN = 4401;
  var CLOSE_REFUSED = 4403;
  var RECONNECT_FIRST_MS = 1000;
  var RECONNECT_MAX_MS = 30000;
  var SOCKET_BASE = (location.protocol === 'https:' ? 'wss' : 'ws') + '://remix.proxy/panel/ws?t=';

  var token = '';
  var sock = null;
  var retryTimer = 0;
  var retryDelay = RECONNECT_FIRST_MS;
  var stopped = false;

  function byId(id) {
    return document.getElementById(id);
  }

  var statusBox = byId('status');
  var statusText = byId('status-text');
  var errorBox = byId('error');
  var pageTitle = byId('page-title');
  var pageURL = byId('page-url');

  // showStatus sets the status line; state is one of connecting, connected, page-disconnected,
  // disconnected, error, waiting (it picks the colour of the dot in panel.css).
  function showStatus(state, text) {
    statusBox.setAttribute('data-state', state);
    statusText.textContent = text;
  }

  function showError(text) {
    errorBox.textContent = text;
    errorBox.hidden = text === '';
  }

  function showPage(url, title) {
    pageURL.textContent = url || '\u2013';
    pageTitle.textContent = title || '';
    pageTitle.hidden = !title;
  }

  // takeToken reads the token from the fragment and removes it from the address bar and history.
  function takeToken() {
    var hash = location.hash;
    if (hash.length <= 1) {
      return '';
    }
    history.replaceState(history.state, '', location.pathname + location.search);
    try {
      return decodeURIComponent(hash.slice(1));
    } catch (e) {
      return '';
    }
  }

  function connect() {
    if (stopped || sock || token === '') {
      return;
    }
    clearTimeout(retryTimer);
    retryTimer = 0;
    var s;
    try {
      s = new WebSocket(SOCKET_BASE + encodeURIComponent(token));
    } catch (e) {
      showStatus('error', 'Cannot connect');
      showError(String(e && e.message || e));
      scheduleReconnect();
      return;
    }
    sock = s;
    showStatus('connecting', 'Connecting\u2026');
    s.addEventListener('message', function (ev) {
      if (sock === s) {
        receive(ev.data);
      }
    });
    s.addEventListener('close', function (ev) {
      if (sock !== s) {
        return;
      }
      sock = null;
      // In all three stopping cases a new token from the page agent starts us again (useToken).
      if (ev.code === CLOSE_NORMAL) {
        // The proxy's way of saying that the page's agent went away.
        stopped = true;
        showStatus('page-disconnected', 'Page disconnected');
        showError('');
        return;
      }
      if (ev.code === CLOSE_TOKEN_UNKNOWN) {
        stopped = true;
        showStatus('disconnected', 'Disconnected');
        showError('This panel\u2019s session has ended. It reconnects when the page does; ' +
          'if it does not, reload the page.');
        return;
      }
      if (ev.code === CLOSE_REFUSED) {
        stopped = true;
        showStatus('disconnected', 'Disconnected');
        showError('The proxy refused this panel.');
        return;
      }
      showStatus('disconnected', 'Disconnected \u2013 reconnecting\u2026');
      scheduleReconnect();
    });
  }

  function scheduleReconnect() {
    if (stopped || retryTimer) {
      return;
    }
    retryTimer = setTimeout(function () {
      retryTimer = 0;
      connect();
    }, retryDelay);
    retryDelay = Math.min(retryDelay * 2, RECONNECT_MAX_MS);
  }

  function receive(data) {
    if (typeof data !== 'string') {
      return;
    }
    var m;
    try {
      m = JSON.parse(data);
    } catch (e) {
      return;
    }
    if (!m || typeof m !== 'object') {
      return;
    }
    if (m.type === 'state') {
      retryDelay = RECONNECT_FIRST_MS;
      showError('');
      if (m.connected === true) {
        showStatus('connected', 'Connected');
      } else {
        showStatus('page-disconnected', 'Page disconnected');
      }
      showPage(typeof m.url === 'string' ? m.url : '', typeof m.title === 'string' ? m.title : '');
    } else if (m.type === 'error') {
      showStatus('error', 'Error');
      showError(typeof m.message === 'string' ? m.message : 'Unknown error.');
    }
    // Other types are for later versions.
  }

  // useToken switches to a token (a new page session), dropping the old connection. The page
  // agent sends its token again on every welcome; the same token while we are connected or about
  // to retry changes nothing, but it does wake us up after we stopped.
  function useToken(next) {
    if (next === '' || (next === token && (sock || retryTimer))) {
      return;
    }
    token = next;
    stopped = false;
    retryDelay = RECONNECT_FIRST_MS;
    clearTimeout(retryTimer);
    retryTimer = 0;
    if (sock) {
      var old = sock;
      sock = null;
      old.close(1000, 'new token');
    }
    showError('');
    connect();
  }

  window.addEventListener('hashchange', function () {
    useToken(takeToken());
  });

  // Only our parent may hand us a token. A page script in the parent can post here too, but all
  // it can do is make us try a token that the proxy refuses; it never learns the real one.
  window.addEventListener('message', function (ev) {
    if (window.parent === window || ev.source !== window.parent) {
      return;
    }
    var d = ev.data;
    if (d && typeof d === 'object' && d.type === 'panel-token' && typeof d.token === 'string') {
      useToken(d.token);
    }
  });

  var first = takeToken();
  if (first === '') {
    showStatus('waiting', 'Waiting for the page\u2026');
  } else {
    useToken(first);
  }
})();
