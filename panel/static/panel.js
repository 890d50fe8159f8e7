/*
 * remixproxy panel (https://remix.proxy/panel, inside the page agent's closed shadow root): the
 * chat with the AI agent.
 *
 * Token. The page agent posts us the panel token once we have loaded, and again when its
 * session changes: postMessage({type: 'panel-token', token: '...'}) from our parent window. A
 * token in the URL fragment (#TOKEN) also works, for opening the panel by hand; it is cleared
 * from the address with history.replaceState. With the token we open
 * wss://remix.proxy/panel/ws?t=TOKEN&for=ORIGIN, where ORIGIN is our own address's `for`: the
 * origin of the page that frames us. The proxy served this page with frame-ancestors ORIGIN
 * alone, so the browser shows us only inside pages of that origin, and it refuses our socket
 * unless ORIGIN is the token's session's origin (proxy/chat/panelorigin.go): a page that holds a
 * panel token of its own origin cannot show its panel on another site (OPEN-ITEMS 1).
 *
 * Protocol (panel/protocol.go and panel/chatproto.go hold the same as Go types). Every message
 * is one JSON object with a type.
 * Proxy -> panel:
 *   {type: 'state', connected: bool, url, title, session, commands: [{remixlet, source,
 *      commands: [{id, label}]}]}   the page this panel belongs to, and its remixlets' commands
 *   {type: 'error', message}                                shown above the chat
 *   {type: 'chat', chat: {id, mode: 'ask'|'build'|'act', provider, model, running: bool, steps,
 *      maxSteps, inputTokens, outputTokens, cost: '' if unknown, apiAccess: bool, actSubmits: bool},
 *      providers: [{name, models: [string]}], managerURL}   on connect and on every change
 *   {type: 'item', item: {id, kind, ...}}                   an item of the conversation; an item
 *      whose id is already shown replaces it in place (a streaming reply comes again and again)
 *      kind 'user' | 'assistant' | 'notice': {id, kind, md: [Node]}
 *      kind 'tool': {id, kind, name, args: string, status: 'running'|'ok'|'error', result: string}
 *      kind 'card': {id, kind, card: 'permissions'|'activation'|'request'|'plan'|'submit', title,
 *         remixlet: {name, url}, rows: [string], allow: 'Allow'|'Allow and apply'|'Send'|'Approve',
 *         deny: 'Not now'|"Don't allow"|'Reject', state: 'pending'|'allowed'|'denied'|'expired',
 *         armAfterMs: number, data: string (a request's body, shown as data),
 *         diff: [{file, added, removed, lines: [{op, text}], cut}] (an activation's change of
 *         code: summed up here, shown line by line in the confirmation window),
 *         steps: [string], risks: [string] (a plan's)}
 *   {type: 'clear'}                                         a new chat: every item goes
 * Panel -> proxy:
 *   {type: 'send', text}  {type: 'stop'}  {type: 'new'}  {type: 'mode', mode}
 *   {type: 'model', provider, model}  {type: 'decide', id, allow: bool}
 *   {type: 'resume', chat}   the chat ID this tab kept in sessionStorage, on the person's click on
 *      "Continue the chat" (with the cards' visibility gate), never by itself: a page can hold a
 *      panel token of its own origin (a same-origin popup whose Window its opener patched) and
 *      frame this panel unseen in its tab, whose sessionStorage holds the person's chat
 *      (red-team pass 6b, OPEN-ITEMS 7)
 *   {type: 'api', on: bool}  the person's API access switch for this chat
 *   {type: 'submit', on: bool}  the person's "Act may submit forms" switch for this chat: on
 *      is only a request, the proxy then shows a card to allow in the confirmation window
 *   {type: 'plan', id, approve: bool, steps: [string]}   a plan card decided, with the steps as
 *      the person edited them (approve only)
 *   {type: 'command', remixlet, id}   the person chose a remixlet's command (rmx.menu). Commands
 *      are chosen here and never in the page: a page can hold its own page-agent session, so
 *      the proxy runs a command only on this report (proxy/page/commands.go). Like a card, the
 *      list takes a click only when trusted and after IntersectionObserver v2 has seen it
 *      visible, not covered, for DEFAULT_ARM_MS.
 *   {type: 'active'}   the person typed or clicked in the panel (at most once a second): the
 *      page around us gets the person's activation from it, which the proxy must not take as a
 *      click in the page (proxy/chat/navguard.go)
 *
 * Markdown arrives rendered by the proxy (panel.RenderMarkdown) as a tree of nodes
 * {t: tag or '' for text, x: text, h: href, c: [children]}. We build it with createElement and
 * textContent only, and check it again: tags from an allow-list (anything else keeps only its
 * content), links only to absolute http(s) URLs, with their host shown. No HTML string is ever
 * parsed here.
 *
 * Cards (permissions, activation) decide what a remixlet may do, and the page around this
 * iframe is hostile: it can cover the iframe, make it transparent, transform it, or move it
 * under the person's pointer just before a click (clickjacking). A card's buttons only send
 * a decision when all of these hold:
 *   - the click is trusted (isTrusted);
 *   - IntersectionObserver v2 (trackVisibility) says the card is visible: not covered, no
 *     opacity, filter or transform on it or on the iframe, and wholly in view; and so are its
 *     buttons (Allow, Not now). A card's body scrolls within a height bounded so that the whole
 *     card fits the log (fitCard). Only when even that cannot fit (a log shorter than the card's
 *     title and buttons) the card need not be wholly in view: then its buttons, wholly in view
 *     and visible, decide (Chromium reports a clipped element as not visible whenever anything
 *     lies over its unclipped box, so a clipped card's own report says nothing). Without the
 *     API the buttons stay off;
 *   - the card has been visible for armAfterMs (default 800 ms) without interruption; losing
 *     visibility starts the wait again;
 *   - for a pointer click: the pointer moved inside the card (trusted pointermove) after the
 *     wait, and the iframe has not moved on the screen since (screenX - clientX is unchanged);
 *     for a keyboard click (detail 0): the focus has been inside the card for armAfterMs.
 * The proxy checks the card's age again on its side.
 *
 * A plan card (plan before act) is different: approving a plan grants nothing beyond Act mode,
 * so it is decided here, with no confirmation window and no visibility gate — only a trusted
 * click after armAfterMs. Its steps are text fields the person may edit; Approve sends their
 * version. The API access switch is taken here too: it grants nothing by itself, since every
 * request it makes possible still needs an Allow in the confirmation window.
 */
(function () {
  'use strict';

  var CLOSE_NORMAL = 1000;
  var CLOSE_TOKEN_UNKNOWN = 4401;
  var CLOSE_REFUSED = 4403;
  var RECONNECT_FIRST_MS = 1000;
  var RECONNECT_MAX_MS = 30000;
  var SOCKET_BASE = (location.protocol === 'https:' ? 'wss' : 'ws') + '://remix.proxy/panel/ws?t=';
  var FRAME_ORIGIN = new URLSearchParams(location.search).get('for') || '';
  var OPEN = 1; // WebSocket.OPEN

  var MODES = ['ask', 'build', 'act'];
  var TAGS = ['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'pre',
    'code', 'em', 'strong', 'del', 'a', 'br', 'hr', 'table', 'thead', 'tbody', 'tr', 'th', 'td'];
  var EMPTY_TAGS = ['br', 'hr'];
  var MAX_DEPTH = 40;
  var MAX_TOOL_TEXT = 20000;
  var DEFAULT_ARM_MS = 800;
  var MOVE_TOLERANCE_PX = 2;
  var BOTTOM_SLACK_PX = 48;
  var LOG_PADDING_PX = 24; // the log's padding, top and bottom (panel.css .log)
  var MIN_CARD_BODY_PX = 48;

  var COVERED = 'This panel is covered or hidden by the page; move it into view to decide.';
  var NO_API = 'This browser cannot confirm that this panel is visible, so these buttons stay off.';
  var PARTLY = 'Scroll so that the whole card is in view to decide.';
  var PARTLY_BUTTONS = 'Scroll so that the card\u2019s buttons are wholly in view to decide.';
  var MOVE_FIRST = 'Move the pointer onto the button, then click.';
  var MOVED = 'The panel moved. Move the pointer onto the button again, then click.';
  var HOLD_FOCUS = 'Wait a moment with the button focused, then press it again.';
  var OFFLINE = 'Not connected to the proxy.';
  var CONFIRM_THERE = 'Confirm in the remixproxy window that opened (click Allow again to bring it back).';
  var POPUP_BLOCKED = 'The browser blocked the confirmation window. Allow pop-ups for remix.proxy, then click Allow again.';

  var token = '';
  var sock = null;
  var retryTimer = 0;
  var retryDelay = RECONNECT_FIRST_MS;
  var stopped = false;

  var running = false;
  var chatMode = '';
  var apiAccess = false;
  var actSubmits = false;
  var choices = []; // [{provider, model}], indexed by the select's option values
  var choicesKey = '';
  var items = new Map(); // item id -> {el, json, details, gate}

  function byId(id) {
    return document.getElementById(id);
  }

  function make(tag, className, text) {
    var e = document.createElement(tag);
    if (className) {
      e.className = className;
    }
    if (text !== undefined) {
      e.textContent = text;
    }
    return e;
  }

  function str(v) {
    return typeof v === 'string' ? v : '';
  }

  function num(v) {
    return typeof v === 'number' && isFinite(v) && v >= 0 ? v : 0;
  }

  function now() {
    return performance.now();
  }

  function lines(n) {
    return n === 1 ? '1 line' : n + ' lines';
  }

  var statusBox = byId('status');
  var statusText = byId('status-text');
  var errorBox = byId('error');
  var pageTitle = byId('page-title');
  var pageURL = byId('page-url');
  var log = byId('log');
  var emptyNote = byId('empty');
  var composer = byId('composer');
  var input = byId('input');
  var sendButton = byId('send');
  var newButton = byId('new-chat');
  var modelSelect = byId('model');
  var usage = byId('usage');
  var manage = byId('manage');
  var announcer = byId('announce');
  var apiButton = byId('api-access');
  var submitsButton = byId('act-submits');
  var commandsBox = byId('commands');
  var commandList = byId('command-list');
  var commandsNote = byId('commands-note');
  var resumeBox = byId('resume');
  var resumeButton = byId('resume-chat');
  var modeButtons = {};
  MODES.forEach(function (m) {
    modeButtons[m] = byId('mode-' + m);
  });

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

  // ---- Remixlet commands (see the top of this file) ----

  var commandsKey = '';
  var commandButtons = [];
  var commandsGate = { observer: null, supported: true, visible: false, visibleAt: 0, timer: 0 };

  // showCommands lists the page's commands, grouped by remixlet; a list that did not change is
  // left as it is (a state message comes on every change of the page).
  function showCommands(groups) {
    var clean = [];
    groups.forEach(function (g) {
      if (!g || typeof g !== 'object' || str(g.remixlet) === '' || !Array.isArray(g.commands)) {
        return;
      }
      var cmds = g.commands.filter(function (c) {
        return c && typeof c === 'object' && str(c.id) !== '' && str(c.label) !== '';
      }).map(function (c) {
        return { id: c.id, label: c.label };
      });
      if (cmds.length > 0) {
        clean.push({ remixlet: g.remixlet, source: str(g.source), commands: cmds });
      }
    });
    var key = JSON.stringify(clean);
    if (key === commandsKey) {
      return;
    }
    commandsKey = key;
    while (commandList.firstChild) {
      commandList.removeChild(commandList.firstChild);
    }
    commandButtons = [];
    commandsNote.textContent = '';
    commandsBox.hidden = clean.length === 0;
    clean.forEach(function (g) {
      var row = make('div', 'command-group');
      row.setAttribute('role', 'group');
      row.setAttribute('aria-label', g.source);
      row.appendChild(make('p', 'command-src', g.source));
      g.commands.forEach(function (c) {
        var b = make('button', 'quiet command', c.label);
        b.type = 'button';
        b.setAttribute('data-remixlet', g.remixlet);
        b.setAttribute('data-command', c.id);
        b.addEventListener('click', function (ev) {
          chooseCommand(g, c, ev);
        });
        commandButtons.push(b);
        row.appendChild(b);
      });
      commandList.appendChild(row);
    });
    watchCommands(clean.length > 0);
  }

  // watchCommands observes the list's visibility (IntersectionObserver v2) while it has
  // commands; an empty list is not observed, and shown again it waits again.
  function watchCommands(any) {
    observeGate(commandsGate, commandList, any, updateCommands);
  }

  // observeGate watches el's visibility for gate g (IntersectionObserver v2) while on, calling
  // update on every change and once g has been visible for DEFAULT_ARM_MS; off, it stops, and
  // shown again el waits again.
  function observeGate(g, el, on, update) {
    if (!on) {
      if (g.observer) {
        g.observer.disconnect();
        g.observer = null;
      }
      clearTimeout(g.timer);
      g.visible = false;
      g.supported = true;
      return;
    }
    if (!g.observer && g.supported) {
      g.observer = visibilityObserver(function (entries) {
        var e = entries[entries.length - 1];
        var visible = e.isIntersecting === true && e.isVisible === true && Number(e.intersectionRatio) >= 0.99 &&
          document.visibilityState !== 'hidden';
        if (visible && !g.visible) {
          g.visibleAt = now();
          clearTimeout(g.timer);
          g.timer = setTimeout(update, DEFAULT_ARM_MS + 20);
        }
        g.visible = visible;
        update();
      });
      if (g.observer) {
        g.observer.observe(el);
      } else {
        g.supported = false;
      }
    }
    update();
  }

  // gateReady reports whether gate g's element has been seen visible, uncovered, for
  // DEFAULT_ARM_MS while the panel is connected.
  function gateReady(g) {
    return g.supported && g.visible && now() - g.visibleAt >= DEFAULT_ARM_MS && isOpen();
  }

  function commandsReady() {
    return gateReady(commandsGate);
  }

  function updateCommands() {
    var on = commandsReady();
    commandButtons.forEach(function (b) {
      b.disabled = !on;
    });
    commandsBox.setAttribute('data-armed', on ? 'true' : 'false');
    if (!commandsGate.supported) {
      commandsNote.textContent = NO_API;
    }
  }

  // chooseCommand sends the person's choice of a command.
  function chooseCommand(g, c, ev) {
    if (!ev || ev.isTrusted !== true || !commandsReady()) {
      updateCommands();
      return;
    }
    if (!send({ type: 'command', remixlet: g.remixlet, id: c.id })) {
      commandsNote.textContent = OFFLINE;
      return;
    }
    commandsNote.textContent = 'Ran \u201c' + c.label + '\u201d (' + g.source + ').';
  }

  // ---- The chat this tab had (see the top of this file: resume) ----

  var pendingResume = ''; // the chat ID this tab kept, offered until continued or replaced
  var resumeGate = { observer: null, supported: true, visible: false, visibleAt: 0, timer: 0 };

  // offerResume shows "Continue the chat" for the chat ID this tab kept, or hides it ('').
  function offerResume(id) {
    pendingResume = id;
    resumeBox.hidden = id === '';
    observeGate(resumeGate, resumeBox, id !== '', updateResume);
  }

  function updateResume() {
    resumeButton.disabled = !gateReady(resumeGate) || pendingResume === '';
  }

  resumeButton.addEventListener('click', function (ev) {
    if (!ev || ev.isTrusted !== true || !gateReady(resumeGate) || pendingResume === '') {
      updateResume();
      return;
    }
    if (send({ type: 'resume', chat: pendingResume })) {
      offerResume('');
    }
  });

  function announce(text) {
    announcer.textContent = text.length > 400 ? text.slice(0, 400) + '\u2026' : text;
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

  // ---- The connection ----

  function isOpen() {
    return sock !== null && sock.readyState === OPEN;
  }

  // send sends a message to the proxy; it says whether it could.
  function send(m) {
    if (!isOpen()) {
      showError(OFFLINE);
      return false;
    }
    sock.send(JSON.stringify(m));
    return true;
  }

  // reportActive tells the proxy the person typed or clicked here, at most once a second.
  var lastActive = 0;
  function reportActive(ev) {
    if (!ev.isTrusted || !isOpen()) {
      return;
    }
    var now = Date.now();
    if (now - lastActive < 1000) {
      return;
    }
    lastActive = now;
    sock.send(JSON.stringify({type: 'active'}));
  }
  document.addEventListener('pointerdown', reportActive, true);
  document.addEventListener('keydown', reportActive, true);

  function connect() {
    if (stopped || sock || token === '') {
      return;
    }
    clearTimeout(retryTimer);
    retryTimer = 0;
    var s;
    try {
      s = new WebSocket(SOCKET_BASE + encodeURIComponent(token) + '&for=' + encodeURIComponent(FRAME_ORIGIN));
    } catch (e) {
      showStatus('error', 'Cannot connect');
      showError(String(e && e.message || e));
      scheduleReconnect();
      return;
    }
    sock = s;
    showStatus('connecting', 'Connecting\u2026');
    s.addEventListener('open', function () {
      if (sock === s) {
        updateControls();
        // A chat belongs to its tab: this frame's sessionStorage is per tab, so the chat this
        // tab had can go on after a reload or a proxy restart. The proxy resumes it only on a
        // page of the same origin that no other tab holds, and this panel asks only on the
        // person's click (offerResume): a page that holds a panel token of its own origin can
        // frame this panel unseen in the tab, and the panel then read this tab's chat ID and
        // resumed the person's chat into a session the page holds.
        offerResume(savedChat());
      }
    });
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
      updateControls();
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
        showError('The proxy refused this panel' + (ev.reason ? ': ' + ev.reason + '.' : '.'));
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
      showPage(str(m.url), str(m.title));
      showCommands(Array.isArray(m.commands) ? m.commands : []);
    } else if (m.type === 'error') {
      showStatus('error', 'Error');
      showError(typeof m.message === 'string' ? m.message : 'Unknown error.');
    } else if (m.type === 'chat') {
      showChat(m);
    } else if (m.type === 'item') {
      showItem(m.item);
    } else if (m.type === 'clear') {
      clearItems();
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

  // ---- The chat's state: mode, model, usage, Send/Stop ----

  // savedChat and saveChat keep this tab's chat ID in sessionStorage (which may be refused).
  var CHAT_KEY = 'remixproxy-chat';
  function savedChat() {
    try {
      return str(window.sessionStorage.getItem(CHAT_KEY));
    } catch (e) {
      return '';
    }
  }
  function saveChat(id) {
    try {
      if (id === '') {
        window.sessionStorage.removeItem(CHAT_KEY);
      } else {
        window.sessionStorage.setItem(CHAT_KEY, id);
      }
    } catch (e) { /* storage refused: the chat lasts as long as the page */ }
  }

  function showChat(m) {
    var c = m.chat && typeof m.chat === 'object' ? m.chat : {};
    if (typeof c.id === 'string' && c.id !== '') {
      saveChat(c.id);
      offerResume(''); // this tab has its chat (a new one, or one that followed the tab here)
    } else if (typeof c.id === 'string' && !c.running && pendingResume === '') {
      saveChat(c.id); // the chat offered stays kept while it is offered
    }
    var wasRunning = running;
    running = c.running === true;
    chatMode = MODES.indexOf(c.mode) >= 0 ? c.mode : '';
    apiAccess = c.apiAccess === true;
    actSubmits = c.actSubmits === true;
    showModels(Array.isArray(m.providers) ? m.providers : [], str(c.provider), str(c.model));
    showUsage(c);
    var href = proxyURL(m.managerURL);
    manage.hidden = href === '';
    if (href !== '') {
      manage.setAttribute('href', href);
    }
    updateControls();
    if (wasRunning && !running) {
      announceLastReply();
    }
  }

  function showModels(providers, provider, model) {
    var list = [];
    providers.forEach(function (p) {
      if (!p || typeof p !== 'object' || typeof p.name !== 'string' || !Array.isArray(p.models)) {
        return;
      }
      p.models.forEach(function (name) {
        if (typeof name === 'string') {
          list.push({ provider: p.name, model: name });
        }
      });
    });
    var current = -1;
    list.forEach(function (ch, i) {
      if (ch.provider === provider && ch.model === model) {
        current = i;
      }
    });
    if (current < 0 && (provider !== '' || model !== '')) {
      list.push({ provider: provider, model: model });
      current = list.length - 1;
    }
    var key = JSON.stringify(list);
    if (key !== choicesKey) {
      choicesKey = key;
      choices = list;
      modelSelect.textContent = '';
      var group = null;
      list.forEach(function (ch, i) {
        if (!group || group.getAttribute('label') !== ch.provider) {
          group = make('optgroup');
          group.setAttribute('label', ch.provider);
          modelSelect.appendChild(group);
        }
        var o = make('option', '', ch.model);
        o.value = String(i);
        group.appendChild(o);
      });
      if (list.length === 0) {
        var none = make('option', '', 'No model set up');
        none.value = '';
        modelSelect.appendChild(none);
      }
    }
    modelSelect.value = current >= 0 ? String(current) : '';
  }

  function count(n) {
    if (n < 1000) {
      return String(Math.round(n));
    }
    if (n < 1000000) {
      return (n / 1000).toFixed(n < 10000 ? 1 : 0) + 'k';
    }
    return (n / 1000000).toFixed(1) + 'M';
  }

  function showUsage(c) {
    var parts = [count(num(c.inputTokens)) + ' in', count(num(c.outputTokens)) + ' out'];
    var cost = str(c.cost);
    if (cost !== '') {
      parts.push(cost);
    }
    var steps = num(c.steps);
    var max = num(c.maxSteps);
    if (running || steps > 0) {
      parts.push('step ' + steps + (max > 0 ? ' of ' + max : ''));
    }
    usage.textContent = parts.join(' \u00b7 ');
  }

  // updateControls enables what the connection and the chat's state allow.
  function updateControls() {
    var open = isOpen();
    sendButton.textContent = running ? 'Stop' : 'Send';
    sendButton.setAttribute('data-running', running ? 'true' : 'false');
    sendButton.disabled = !open;
    newButton.disabled = !open;
    modelSelect.disabled = !open || choices.length === 0;
    MODES.forEach(function (m) {
      var b = modeButtons[m];
      b.setAttribute('aria-pressed', m === chatMode ? 'true' : 'false');
      b.disabled = !open;
    });
    // API access matters in Act mode only; it stays in view while on, so it can be turned off.
    apiButton.hidden = !(chatMode === 'act' || apiAccess);
    apiButton.disabled = !open;
    apiButton.setAttribute('aria-pressed', apiAccess ? 'true' : 'false');
    apiButton.textContent = apiAccess ? 'API access: on' : 'API access: off';
    // "Act may submit forms" likewise; turning it on asks for an Allow in the confirmation window.
    submitsButton.hidden = !(chatMode === 'act' || actSubmits);
    submitsButton.disabled = !open;
    submitsButton.setAttribute('aria-pressed', actSubmits ? 'true' : 'false');
    submitsButton.textContent = actSubmits ? 'Act may submit forms: on' : 'Act may submit forms: off';
    items.forEach(function (rec) {
      if (rec.gate) {
        updateGate(rec.gate);
      }
    });
    updateCommands();
    updateResume();
  }

  function submitText() {
    var text = input.value;
    if (text.trim() === '') {
      return;
    }
    if (send({ type: 'send', text: text })) {
      input.value = '';
    }
  }

  composer.addEventListener('submit', function (ev) {
    ev.preventDefault();
    if (running) {
      send({ type: 'stop' });
    } else {
      submitText();
    }
  });

  input.addEventListener('keydown', function (ev) {
    if (ev.key !== 'Enter' || ev.shiftKey || ev.altKey || ev.ctrlKey || ev.metaKey || ev.isComposing) {
      return;
    }
    ev.preventDefault();
    if (!running) {
      submitText();
    }
  });

  newButton.addEventListener('click', function () {
    send({ type: 'new' });
  });

  MODES.forEach(function (m) {
    modeButtons[m].addEventListener('click', function () {
      if (m !== chatMode) {
        send({ type: 'mode', mode: m });
      }
    });
  });

  apiButton.addEventListener('click', function (ev) {
    if (ev && ev.isTrusted === true) {
      send({ type: 'api', on: !apiAccess });
    }
  });

  submitsButton.addEventListener('click', function (ev) {
    if (ev && ev.isTrusted === true) {
      send({ type: 'submit', on: !actSubmits });
    }
  });

  modelSelect.addEventListener('change', function () {
    var ch = choices[Number(modelSelect.value)];
    if (modelSelect.value !== '' && ch) {
      send({ type: 'model', provider: ch.provider, model: ch.model });
    }
  });

  // ---- Links ----

  // webLink returns {href, host} for an absolute http(s) URL without user name or password, or
  // null.
  function webLink(h) {
    if (typeof h !== 'string' || h === '') {
      return null;
    }
    var u;
    try {
      u = new URL(h);
    } catch (e) {
      return null;
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '' ||
      u.username !== '' || u.password !== '') {
      return null;
    }
    return { href: u.href, host: u.host };
  }

  // proxyURL returns h if it is a page of remix.proxy (the manager), or ''.
  function proxyURL(h) {
    var l = webLink(h);
    return l && l.host === 'remix.proxy' ? l.href : '';
  }

  // ---- Markdown nodes ----

  // renderNodes appends the nodes to parent, checking every tag and link.
  function renderNodes(parent, nodes, depth) {
    if (!Array.isArray(nodes)) {
      return;
    }
    nodes.forEach(function (n) {
      if (!n || typeof n !== 'object') {
        return;
      }
      var t = n.t;
      if (t === '' || t === undefined) {
        if (typeof n.x === 'string' && n.x !== '') {
          parent.appendChild(document.createTextNode(n.x));
        }
        return;
      }
      if (typeof t !== 'string' || TAGS.indexOf(t) < 0 || depth >= MAX_DEPTH) {
        renderNodes(parent, n.c, depth + 1); // not ours: keep the content only
        return;
      }
      if (t === 'a') {
        var link = webLink(n.h);
        if (!link) {
          renderNodes(parent, n.c, depth + 1);
          return;
        }
        var a = make('a');
        a.setAttribute('href', link.href);
        a.setAttribute('target', '_blank');
        a.setAttribute('rel', 'noopener noreferrer');
        a.setAttribute('title', link.href);
        renderNodes(a, n.c, depth + 1);
        a.appendChild(make('span', 'host', ' (' + link.host + ')'));
        parent.appendChild(a);
        return;
      }
      var e = make(t);
      if (EMPTY_TAGS.indexOf(t) < 0) {
        renderNodes(e, n.c, depth + 1);
      }
      parent.appendChild(e);
    });
  }

  // ---- Items ----

  function isAtBottom() {
    return log.scrollHeight - log.scrollTop - log.clientHeight <= BOTTOM_SLACK_PX;
  }

  function showItem(it) {
    if (!it || typeof it !== 'object' || typeof it.id !== 'string' || it.id === '') {
      return;
    }
    var json = JSON.stringify(it);
    var old = items.get(it.id);
    if (old && old.json === json) {
      return; // sent again unchanged
    }
    var rec = buildItem(it);
    if (!rec) {
      return;
    }
    rec.json = json;
    var atBottom = isAtBottom();
    if (old) {
      if (old.details && rec.details && old.details.open) {
        rec.details.open = true;
      }
      dispose(old);
      log.replaceChild(rec.el, old.el);
    } else {
      log.appendChild(rec.el);
    }
    items.set(it.id, rec);
    emptyNote.hidden = true;
    if (rec.gate) {
      fitCard(rec.gate);
    }
    if (atBottom) {
      log.scrollTop = log.scrollHeight;
    }
    if (rec.gate) {
      startGate(rec.gate);
    }
    if (!old || old.kind !== rec.kind) {
      if (it.kind === 'notice') {
        announce(rec.el.textContent);
      } else if (it.kind === 'card' && it.state === 'pending') {
        announce(rec.title + '. ' + rec.body.textContent);
      }
    }
  }

  function clearItems() {
    items.forEach(function (rec) {
      dispose(rec);
      log.removeChild(rec.el);
    });
    items.clear();
    emptyNote.hidden = false;
  }

  function dispose(rec) {
    if (rec.gate) {
      stopGate(rec.gate);
    }
  }

  function announceLastReply() {
    var last = null;
    items.forEach(function (rec) {
      if (rec.kind === 'assistant') {
        last = rec;
      }
    });
    if (last) {
      announce(last.el.textContent);
    }
  }

  function buildItem(it) {
    switch (it.kind) {
      case 'user':
      case 'assistant':
      case 'notice':
        return buildText(it);
      case 'tool':
        return buildTool(it);
      case 'card':
        return buildCard(it);
    }
    return null;
  }

  function buildText(it) {
    var el = make('div', 'item ' + it.kind);
    var who = { user: 'You', assistant: 'Assistant', notice: 'remixproxy' }[it.kind];
    el.appendChild(make('span', 'sr-only', who + ': '));
    var body = make('div', 'md');
    renderNodes(body, it.md, 0);
    el.appendChild(body);
    return { el: el, kind: it.kind };
  }

  function clip(s) {
    if (s.length <= MAX_TOOL_TEXT) {
      return s;
    }
    return s.slice(0, MAX_TOOL_TEXT) + '\n\u2026 (' + (s.length - MAX_TOOL_TEXT) + ' more characters)';
  }

  function buildTool(it) {
    var status = ['running', 'ok', 'error'].indexOf(it.status) >= 0 ? it.status : 'running';
    var el = make('div', 'item tool');
    el.setAttribute('data-status', status);
    var details = make('details');
    var summary = make('summary');
    var mark = { running: '\u22ef', ok: '\u2713', error: '\u2717' }[status];
    var said = { running: 'running', ok: 'done', error: 'failed' }[status];
    summary.appendChild(make('span', 'tool-mark', mark));
    summary.appendChild(make('span', 'tool-name', str(it.name) || 'tool'));
    summary.appendChild(make('span', 'sr-only', ' ' + said + ' '));
    var args = str(it.args).replace(/\s+/g, ' ');
    summary.appendChild(make('span', 'tool-args', args.length > 80 ? args.slice(0, 80) + '\u2026' : args));
    if (status === 'error') {
      summary.appendChild(make('span', 'tool-failed', 'failed'));
    }
    details.appendChild(summary);
    details.appendChild(make('div', 'tool-label', 'Arguments'));
    details.appendChild(make('pre', 'tool-text', clip(str(it.args))));
    if (status !== 'running') {
      details.appendChild(make('div', 'tool-label', status === 'error' ? 'Error' : 'Result'));
      details.appendChild(make('pre', 'tool-text', clip(str(it.result))));
    }
    el.appendChild(details);
    return { el: el, kind: 'tool', details: details };
  }

  var CARD_TITLES = { permissions: 'Remixlet needs permission', activation: 'Apply this change?', request: 'Send a request?', plan: 'The agent\u2019s plan', submit: 'Let the agent do this?' };
  var CARD_DEFAULTS = { permissions: ['Allow', 'Not now'], activation: ['Allow and apply', 'Don\u2019t allow'], request: ['Send', 'Not now'], plan: ['Approve', 'Reject'], submit: ['Press it', 'Not now'] };
  var PLAN_OUTCOMES = { allowed: 'Approved.', denied: 'Rejected.', expired: 'This plan expired.' };
  var PLAN_MAX_STEPS = 12;
  var PLAN_MAX_TEXT = 300;
  var MAX_CARD_DATA = 2000;
  var CARD_OUTCOMES = { allowed: 'Allowed.', denied: 'Not allowed.', expired: 'This request expired.',
    stale: 'Allowed, but not applied: another version became active while this card was open.' };
  var cardCount = 0;

  function buildCard(it) {
    var kind = CARD_TITLES[it.card] ? it.card : 'permissions';
    var state = ['pending', 'allowed', 'denied', 'expired', 'stale'].indexOf(it.state) >= 0 ? it.state : 'expired';
    var title = str(it.title) || CARD_TITLES[kind];
    if (kind === 'plan') {
      return buildPlanCard(it, state, title);
    }
    var headingId = 'card-' + (++cardCount);
    var el = make('section', 'item card');
    el.setAttribute('data-card', kind);
    el.setAttribute('data-state', state);
    el.setAttribute('aria-labelledby', headingId);
    el.appendChild(make('p', 'card-from', 'remixproxy asks'));
    var h = make('h2', 'card-title', title);
    h.id = headingId;
    el.appendChild(h);
    var body = make('div', 'card-body');
    var rx = it.remixlet && typeof it.remixlet === 'object' ? it.remixlet : {};
    var name = str(rx.name);
    if (name !== '') {
      // A remixlet that does not run yet is named as new, in our words (chatproto.go CardRemixlet).
      var line = make('p', 'card-remixlet', rx.new === true ? 'New remixlet ' : 'Remixlet ');
      var href = proxyURL(rx.url);
      var nameEl = make(href ? 'a' : 'span', 'card-name', name.length > 80 ? name.slice(0, 80) + '\u2026' : name);
      if (href) {
        nameEl.setAttribute('href', href);
        nameEl.setAttribute('target', '_blank');
        nameEl.setAttribute('rel', 'noopener');
      }
      line.appendChild(nameEl);
      if (str(rx.made) !== '') {
        line.appendChild(make('span', 'card-made', ' (' + str(rx.made) + ')'));
      }
      body.appendChild(line);
    }
    var rows = Array.isArray(it.rows) ? it.rows : [];
    if (rows.length > 0) {
      var ul = make('ul', 'card-rows');
      rows.forEach(function (r) {
        if (typeof r === 'string') {
          ul.appendChild(make('li', '', r));
        }
      });
      body.appendChild(ul);
    }
    var data = str(it.data);
    if (data !== '') {
      // What the agent wrote (a request's body) is shown apart, as data: never as our words.
      body.appendChild(make('p', 'card-data-label', 'Body, as the agent wrote it:'));
      body.appendChild(make('pre', 'card-data', data.length > MAX_CARD_DATA ? data.slice(0, MAX_CARD_DATA) + '\u2026' : data));
    }
    var diffs = Array.isArray(it.diff) ? it.diff : [];
    if (diffs.length > 0) {
      // The code the agent wrote, summed up; the confirmation window shows every line.
      body.appendChild(make('p', 'card-data-label', 'Code the agent wrote (shown line by line when you click Allow):'));
      var code = make('ul', 'card-code');
      diffs.forEach(function (d) {
        if (d && typeof d === 'object') {
          code.appendChild(make('li', '', str(d.file) + ': ' + lines(num(d.added)) + ' added, ' + lines(num(d.removed)) + ' removed'));
        }
      });
      body.appendChild(code);
    }
    el.appendChild(body);
    var rec = { el: el, kind: 'card', title: title, body: body };
    if (state !== 'pending') {
      el.appendChild(make('p', 'card-outcome', CARD_OUTCOMES[state]));
      return rec;
    }
    var actions = make('div', 'card-actions');
    var allow = make('button', 'allow', str(it.allow) || CARD_DEFAULTS[kind][0]);
    var deny = make('button', 'deny', str(it.deny) || CARD_DEFAULTS[kind][1]);
    allow.type = 'button';
    deny.type = 'button';
    actions.appendChild(allow);
    actions.appendChild(deny);
    el.appendChild(actions);
    var note = make('p', 'card-note');
    note.setAttribute('role', 'status');
    el.appendChild(note);
    var arm = num(it.armAfterMs);
    rec.gate = {
      id: it.id, el: el, body: body, actions: actions, allow: allow, deny: deny, note: note, fits: true,
      armAfter: arm > 0 ? arm : DEFAULT_ARM_MS,
      observer: null, supported: true, seen: false, visible: false, partly: false, visibleAt: 0,
      card: null, buttons: null, // the newest visibility of each: {inView, visible, ratio}
      armed: false, timer: 0, moved: false, offset: null, focusAt: 0, sent: false, hint: '',
      wide: diffs.length > 0 // the confirmation window shows code: open it larger
    };
    wireGate(rec.gate);
    return rec;
  }

  // buildPlanCard shows the agent's plan (see the top of this file): while it waits, each step
  // is a text field; Approve sends the person's version, Reject ends the agent's turn.
  function buildPlanCard(it, state, title) {
    var headingId = 'card-' + (++cardCount);
    var el = make('section', 'item card');
    el.setAttribute('data-card', 'plan');
    el.setAttribute('data-state', state);
    el.setAttribute('aria-labelledby', headingId);
    el.appendChild(make('p', 'card-from', 'remixproxy asks'));
    var h = make('h2', 'card-title', title);
    h.id = headingId;
    el.appendChild(h);
    var body = make('div', 'card-body');
    (Array.isArray(it.rows) ? it.rows : []).forEach(function (r) {
      if (typeof r === 'string') {
        body.appendChild(make('p', 'plan-intro', r));
      }
    });
    var steps = (Array.isArray(it.steps) ? it.steps : []).filter(function (x) {
      return typeof x === 'string';
    }).slice(0, PLAN_MAX_STEPS);
    var pending = state === 'pending';
    var fields = [];
    body.appendChild(make('p', 'plan-label', 'Steps'));
    var ol = make('ol', 'plan-steps');
    steps.forEach(function (text, i) {
      var li = make('li');
      if (pending) {
        var f = make('textarea', 'plan-step');
        f.value = text;
        f.rows = 2;
        f.setAttribute('aria-label', 'Step ' + (i + 1));
        f.setAttribute('maxlength', String(PLAN_MAX_TEXT));
        li.appendChild(f);
        fields.push(f);
      } else {
        li.textContent = text;
      }
      ol.appendChild(li);
    });
    body.appendChild(ol);
    var risks = (Array.isArray(it.risks) ? it.risks : []).filter(function (x) {
      return typeof x === 'string';
    });
    if (risks.length > 0) {
      body.appendChild(make('p', 'plan-label', 'Risks the agent sees'));
      var ul = make('ul', 'plan-risks');
      risks.forEach(function (r) {
        ul.appendChild(make('li', '', r));
      });
      body.appendChild(ul);
    }
    el.appendChild(body);
    var rec = { el: el, kind: 'card', title: title, body: body };
    if (!pending) {
      el.appendChild(make('p', 'card-outcome', PLAN_OUTCOMES[state]));
      return rec;
    }
    var actions = make('div', 'card-actions');
    var approve = make('button', 'allow', str(it.allow) || CARD_DEFAULTS.plan[0]);
    var reject = make('button', 'deny', str(it.deny) || CARD_DEFAULTS.plan[1]);
    approve.type = 'button';
    reject.type = 'button';
    actions.appendChild(approve);
    actions.appendChild(reject);
    el.appendChild(actions);
    var note = make('p', 'card-note');
    note.setAttribute('role', 'status');
    el.appendChild(note);
    var shownAt = now();
    var arm = num(it.armAfterMs) > 0 ? num(it.armAfterMs) : DEFAULT_ARM_MS;
    var sent = false;
    function decidePlan(yes, ev) {
      if (!ev || ev.isTrusted !== true || sent) {
        return;
      }
      if (now() - shownAt < arm) {
        note.textContent = 'Read the plan first, then decide.';
        return;
      }
      var ok;
      if (yes) {
        var edited = [];
        for (var i = 0; i < fields.length; i++) {
          var v = String(fields[i].value).trim();
          if (v.length > PLAN_MAX_TEXT) {
            note.textContent = 'Step ' + (i + 1) + ' is longer than ' + PLAN_MAX_TEXT + ' characters.';
            return;
          }
          if (v !== '') {
            edited.push(v);
          }
        }
        if (edited.length === 0) {
          note.textContent = 'A plan needs at least one step.';
          return;
        }
        ok = send({ type: 'plan', id: it.id, approve: true, steps: edited });
      } else {
        ok = send({ type: 'plan', id: it.id, approve: false });
      }
      if (!ok) {
        note.textContent = OFFLINE;
        return;
      }
      sent = true;
      approve.disabled = true;
      reject.disabled = true;
      fields.forEach(function (f) {
        f.disabled = true;
      });
      note.textContent = yes ? 'Approved: the agent follows your version.' : 'Rejected: the agent stops.';
    }
    approve.addEventListener('click', function (ev) {
      decidePlan(true, ev);
    });
    reject.addEventListener('click', function (ev) {
      decidePlan(false, ev);
    });
    return rec;
  }

  // ---- The clickjacking gate of a pending card (see the top of this file) ----

  function wireGate(g) {
    g.el.addEventListener('pointermove', function (ev) {
      if (ev.isTrusted !== true || !g.armed) {
        return;
      }
      g.offset = frameOffset(ev);
      if (!g.moved) {
        g.moved = true;
        g.hint = '';
        updateGate(g);
      }
    });
    g.el.addEventListener('pointerdown', function (ev) {
      if (ev.isTrusted === true && g.moved) {
        var o = frameOffset(ev);
        if (!sameOffset(g.offset, o)) {
          g.moved = false;
        }
      }
    });
    g.el.addEventListener('focusin', function (ev) {
      if (ev.isTrusted === true && g.focusAt === 0) {
        g.focusAt = now();
      }
    });
    g.el.addEventListener('focusout', function () {
      g.focusAt = 0;
    });
    g.allow.addEventListener('click', function (ev) {
      decide(g, true, ev);
    });
    g.deny.addEventListener('click', function (ev) {
      decide(g, false, ev);
    });
  }

  // visibilityObserver returns an IntersectionObserver v2 (trackVisibility) that calls
  // onEntries with each non-empty batch, or null where the browser has none: one without v2
  // ignores trackVisibility and never says isVisible.
  function visibilityObserver(onEntries) {
    var IO = typeof IntersectionObserver === 'function' ? IntersectionObserver : null;
    var o = null;
    try {
      o = IO ? new IO(function (entries) {
        if (entries.length > 0) {
          onEntries(entries);
        }
      }, { threshold: [0, 1], trackVisibility: true, delay: 100 }) : null;
    } catch (e) {
      o = null;
    }
    if (o && o.trackVisibility !== true) {
      o.disconnect();
      o = null;
    }
    return o;
  }

  function startGate(g) {
    g.observer = visibilityObserver(function (entries) {
      seen(g, entries);
    });
    if (!g.observer) {
      g.supported = false;
    } else {
      g.observer.observe(g.el);
      g.observer.observe(g.actions);
    }
    updateGate(g);
  }

  function stopGate(g) {
    if (g.observer) {
      g.observer.disconnect();
      g.observer = null;
    }
    clearTimeout(g.timer);
    g.timer = 0;
  }

  // fitCard bounds a pending card's body so that the whole card fits the log (its body then
  // scrolls within); the log's padding is left free. A card that fits as it is keeps its body
  // unbounded. Run when the card is shown and when the panel is resized.
  function fitCard(g) {
    var body = g.body;
    if (!body || !body.style || typeof g.el.offsetHeight !== 'number') {
      return;
    }
    body.style.maxHeight = '';
    var room = log.clientHeight - LOG_PADDING_PX;
    if (g.el.offsetHeight <= room) {
      return;
    }
    var fixed = g.el.offsetHeight - body.offsetHeight;
    body.style.maxHeight = Math.max(MIN_CARD_BODY_PX, room - fixed) + 'px';
  }

  // cardFits reports whether the whole card can be in view of the log at once.
  function cardFits(g) {
    if (typeof g.el.offsetHeight !== 'number' || typeof log.clientHeight !== 'number' || log.clientHeight <= 0) {
      return true;
    }
    return g.el.offsetHeight <= log.clientHeight;
  }

  // seen takes IntersectionObserver entries for the card and for its buttons (the newest of
  // each counts; an observer reports each target at first, then whenever it crosses 0 or 1 or
  // its visibility changes), and decides as the top of this file says.
  function seen(g, entries) {
    for (var i = 0; i < entries.length; i++) {
      var e = entries[i];
      var v = { inView: e.isIntersecting === true, visible: e.isIntersecting === true && e.isVisible === true, ratio: Number(e.intersectionRatio) || 0 };
      if (e.target === g.el) {
        g.card = v;
      } else if (e.target === g.actions) {
        g.buttons = v;
      }
    }
    g.seen = true;
    var c = g.card || { inView: false, visible: false, ratio: 0 };
    var b = g.buttons || { inView: false, visible: false, ratio: 0 };
    var page = document.visibilityState !== 'hidden';
    g.fits = cardFits(g);
    var cardOK = g.fits ? c.visible && c.ratio >= 0.99 : c.inView;
    var visible = page && cardOK && b.visible && b.ratio >= 0.99;
    var covered = (b.inView && !b.visible) || (g.fits && c.ratio >= 0.99 && !c.visible);
    // In view but not wholly, and nothing seen covered: scrolling helps.
    g.partly = page && !visible && !covered && c.inView;
    setVisible(g, visible);
  }

  function setVisible(g, visible) {
    if (visible && !g.visible) {
      g.visible = true;
      g.visibleAt = now();
      armLater(g, g.armAfter);
    } else if (!visible && g.visible) {
      g.visible = false;
      g.armed = false;
      g.moved = false;
      g.offset = null;
      clearTimeout(g.timer);
      g.timer = 0;
    }
    updateGate(g);
  }

  function armLater(g, ms) {
    clearTimeout(g.timer);
    g.timer = setTimeout(function () {
      g.timer = 0;
      if (!g.visible) {
        return;
      }
      var left = g.armAfter - (now() - g.visibleAt);
      if (left > 0) {
        armLater(g, left);
        return;
      }
      g.armed = true;
      updateGate(g);
    }, ms);
  }

  function frameOffset(ev) {
    if (typeof ev.screenX !== 'number' || typeof ev.clientX !== 'number') {
      return null;
    }
    return { x: ev.screenX - ev.clientX, y: ev.screenY - ev.clientY };
  }

  function sameOffset(a, b) {
    if (!a || !b) {
      return a === b;
    }
    return Math.abs(a.x - b.x) <= MOVE_TOLERANCE_PX && Math.abs(a.y - b.y) <= MOVE_TOLERANCE_PX;
  }

  // ready says whether the card could take a decision now, apart from the click itself.
  function ready(g) {
    return !g.sent && isOpen() && g.supported && g.visible && g.armed &&
      now() - g.visibleAt >= g.armAfter;
  }

  function updateGate(g) {
    var on = ready(g);
    g.allow.disabled = !on;
    g.deny.disabled = !on;
    var text = '';
    if (g.sent) {
      text = 'Sending your decision\u2026';
    } else if (!g.supported) {
      text = NO_API;
    } else if (!isOpen()) {
      text = OFFLINE;
    } else if (g.seen && !g.visible) {
      text = g.partly ? (g.fits ? PARTLY : PARTLY_BUTTONS) : COVERED;
    } else if (on) {
      text = g.hint;
    }
    g.note.textContent = text;
    g.el.setAttribute('data-armed', on ? 'true' : 'false');
  }

  // decide sends the person's decision if the click passes the gate.
  function decide(g, allow, ev) {
    if (!ev || ev.isTrusted !== true || !ready(g)) {
      updateGate(g);
      return;
    }
    if (ev.detail === 0) {
      // Keyboard (or assistive technology): the focus must have stayed in the card.
      if (g.focusAt === 0 || now() - g.focusAt < g.armAfter) {
        g.hint = HOLD_FOCUS;
        updateGate(g);
        return;
      }
    } else {
      if (!g.moved) {
        g.hint = MOVE_FIRST;
        updateGate(g);
        return;
      }
      if (!sameOffset(g.offset, frameOffset(ev))) {
        g.moved = false;
        g.hint = MOVED;
        updateGate(g);
        return;
      }
    }
    if (allow) {
      // Allowing is confirmed in a window of its own (confirm.js): a top-level remix.proxy page
      // that no page can cover, disguise or frame. Declining is safe, so it is decided here.
      openConfirm(g);
      return;
    }
    if (!send({ type: 'decide', id: g.id, allow: false })) {
      return;
    }
    g.sent = true;
    updateGate(g);
  }

  // openConfirm opens the confirmation window for a card: the panel token and the card ID go in
  // the fragment, which is never sent to a server and which the window removes at once.
  function openConfirm(g) {
    var url = location.protocol + '//remix.proxy/panel/confirm#' + encodeURIComponent(token) + '.' + encodeURIComponent(g.id);
    var w = null;
    try {
      w = window.open(url, 'remixproxy-confirm-' + g.id, g.wide ? 'popup,width=900,height=720' : 'popup,width=460,height=480');
    } catch (e) { /* blocked */ }
    g.hint = w ? CONFIRM_THERE : POPUP_BLOCKED;
    updateGate(g);
  }

  // A resized panel fits its pending cards again and judges them again.
  window.addEventListener('resize', function () {
    items.forEach(function (rec) {
      if (rec.gate && !rec.gate.sent) {
        fitCard(rec.gate);
        if (rec.gate.seen) {
          seen(rec.gate, []);
        }
      }
    });
  });

  document.addEventListener('visibilitychange', function () {
    if (document.visibilityState === 'hidden') {
      items.forEach(function (rec) {
        if (rec.gate) {
          setVisible(rec.gate, false);
        }
      });
    }
  });

  // ---- Start ----

  window.addEventListener('hashchange', function () {
    useToken(takeToken());
  });

  // Only our parent may hand us a token. A page script in the parent can post here too, but all
  // it can do is make us try a token that the proxy refuses, or a panel token of a session it
  // opened itself (a plain-http page that forged a navigation, a same-origin popup's opener:
  // NOTES, page tokens); it does not learn the real one from here.
  window.addEventListener('message', function (ev) {
    if (window.parent === window || ev.source !== window.parent) {
      return;
    }
    var d = ev.data;
    if (d && typeof d === 'object' && d.type === 'panel-token' && typeof d.token === 'string') {
      useToken(d.token);
    }
  });

  updateControls();
  var first = takeToken();
  if (first === '') {
    showStatus('waiting', 'Waiting for the page\u2026');
  } else {
    useToken(first);
  }
})();
