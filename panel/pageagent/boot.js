// ---- The boot's start, and the hand-over to the rest. ---------------------------------------
//
// The boot is inlined as the first script and runs before any page script: by now every file of
// the boot has captured what the whole agent uses. startBoot adopts the first-frame stylesheets
// and starts what must come before the page's scripts; then loadRest creates a <script> for the
// rest of the page agent (panel/pageagent.go restParts), which the browser fetches, usually
// from its cache, without pausing the parser, and runs when it has it.
//
// The rest receives the boot's names through one window property, defined here non-writable and
// non-configurable (a page cannot replace, delete or shadow it: a page's global let/const/class
// of that name throws). It answers once, and only while the captured document.currentScript is
// the element created here; any other caller, before or after, gets null. Only the browser
// makes our element the current script, and only while running the text it fetched for it,
// which it checks against the rest's SRI hash: a page's service worker, which may answer the
// request, cannot make its own script run as our element. Its src, integrity and crossorigin
// are set before it is inserted (the browser reads them then; later changes count for nothing).
// The element carries the boot tag's nonce; a page's policy allows it by that nonce, by the
// magic origin, or by 'strict-dynamic' (the proxy adjusts the policy, proxy/html.go). On a page
// that enforces Trusted Types the address is made a TrustedScriptURL by a policy of our own
// ("remixproxy"), created at this point, before any page script could create its default policy.

// startBoot starts the boot's part of the agent, the first socket included; it reports whether
// the rest should load.
// Nothing starts without a token, in a frame, or in a browser that lacks what the agent needs.
function startBoot() {
  if (token === '' || !capturesComplete()) {
    return false;
  }
  adoptFirstSheets();
  watchRevealedPasswords();
  listenEarly();
  watchNavigation();
  startReadinessReports();
  openEarlySocket();
  return true;
}

// ---- The first socket, opened by the boot. ----
//
// The proxy hears of the page (and starts its remixlets) while the rest is still on its way:
// the boot opens the first socket and sends the hello itself as soon as it opens, and the
// readiness reports and same-document navigations after it, while the rest has not taken the
// socket; it keeps the socket's events until the rest's channel takes it (channel.js connect),
// which then handles them in order, the ones that came before first, and sends no second hello
// for that socket (its reconnects send their own). The socket, the token and what is sent stay
// inside the closure.

var earlySock = null;      // the boot's socket, until the rest takes it
var earlyEvents = null;    // its events before the rest listens: {type, ev}
var earlyTaker = null;     // the rest's handler, once it listens
var earlyHelloSent = false; // the boot's socket has opened and the hello went out on it
var reported = dict();     // reported.url: the last URL reported to the proxy (hello or nav)

// reportedURL is the last URL the proxy was told of; setReportedURL records one.
function reportedURL() {
  return own(reported, 'url') || '';
}
function setReportedURL(u) {
  reported.url = u;
}

// bootMessage is a message of type for the proxy, as channel.js message.
function bootMessage(type) {
  var m = dict();
  m.type = type;
  return m;
}

// helloMessage is the hello for a socket that just opened: the page's URL (recorded as
// reported), title and readiness (rx_ready.js).
function helloMessage() {
  var m = bootMessage('hello');
  m.url = href();
  m.title = title();
  m.top = true;
  m.ready = readiness(); // the document's state now, for the remixlets' run times
  setReportedURL(m.url);
  return m;
}

// earlySend sends m on the boot's socket while the boot still holds it and has said hello on
// it; false when it did not.
function earlySend(m) {
  var s = earlySock;
  if (!s || !earlyHelloSent || apply(wsReadyState, s, []) !== 1) {
    return false;
  }
  try {
    apply(wsSend, s, [apply(jsonStringify, null, [m])]);
  } catch (e) {
    return false; // closing; the rest's channel reconnects
  }
  return true;
}

// earlyOpened sends the hello on the boot's socket s, taken over by the rest or not.
function earlyOpened(s) {
  try {
    apply(wsSend, s, [apply(jsonStringify, null, [helloMessage()])]);
    earlyHelloSent = true;
  } catch (e) { /* closing; the rest's channel reconnects */ }
}

// earlyReady reports the document's new state while the boot holds the socket (afterwards the
// rest's channel.js sendReady does); before the hello there is nothing to do: the hello carries
// the state.
function earlyReady(state) {
  var m = bootMessage('ready');
  m.state = state;
  earlySend(m);
}

// earlyNav reports a same-document navigation while the boot holds the socket, as the rest's
// navigation.js reportNav does after; before the hello, the hello reads the URL.
function earlyNav(kind) {
  if (!earlySock || !earlyHelloSent) {
    return;
  }
  try {
    var url = href();
    if (url === reportedURL()) {
      return;
    }
    var m = bootMessage('nav');
    m.url = url;
    m.kind = kind;
    if (earlySend(m)) {
      setReportedURL(url);
    }
  } catch (e) { /* never break the page's navigation */ }
}

function openEarlySocket() {
  var secure = apply(locationProtocol, loc, []) === 'https:';
  try {
    earlySock = new WS((secure ? 'wss' : 'ws') + '://remix.proxy/agent/ws?t=' + encode(token) + firstSheetsQuery());
  } catch (e) {
    earlySock = null; // the rest's channel connects itself
    return;
  }
  earlyEvents = list();
  var s = earlySock;
  onEarly('ready', earlyReady);
  onEarly('nav', earlyNav);
  on(s, 'open', function (ev) {
    earlyOpened(s);
    earlyEvent('open', ev);
  });
  on(earlySock, 'message', function (ev) { earlyEvent('message', ev); });
  on(earlySock, 'close', function (ev) { earlyEvent('close', ev); });
}

function earlyEvent(type, ev) {
  if (earlyTaker) {
    earlyTaker(type, ev);
    return;
  }
  var e = dict();
  e.type = type;
  e.ev = ev;
  put(earlyEvents, earlyEvents.length, e);
}

// takeEarlySocket hands the boot's socket to the rest's channel, once; null when there is none.
function takeEarlySocket() {
  var s = earlySock;
  earlySock = null;
  return s;
}

// listenEarlySocket makes fn(type, ev) the handler of the boot's socket's events: first the
// ones that came before, in order, then each as it comes.
function listenEarlySocket(fn) {
  var q = earlyEvents;
  earlyEvents = null;
  earlyTaker = fn;
  var i;
  for (i = 0; q && i < q.length; i++) {
    fn(q[i].type, q[i].ev);
  }
}

// loadRest defines the hand-over property name of window, answering with handOver(), and
// inserts the rest's <script> for path on the magic origin, checked against integrity.
function loadRest(name, path, integrity, handOver) {
  var el;
  try {
    el = apply(createElement, doc, ['script']);
  } catch (e) {
    return;
  }
  var handed = false;
  var d = dict();
  d.value = function () {
    var current = null;
    try {
      current = apply(currentScriptG, doc, []);
    } catch (e) {
      return null;
    }
    if (handed || current !== el) {
      return null;
    }
    handed = true;
    try {
      apply(removeChildFn, apply(parentNodeOf, el, []), [el]);
    } catch (e) { /* already out of the document */ }
    return handOver();
  };
  d.writable = false;
  d.enumerable = false;
  d.configurable = false;
  try {
    defineProperty(win, name, d);
  } catch (e) {
    return; // a second boot in this window (document.open): the first one's rest is the agent
  }
  var origin = apply(locationProtocol, loc, []) === 'https:' ? 'https://remix.proxy' : 'http://remix.proxy';
  try {
    apply(setAttribute, el, ['integrity', integrity]);
    apply(setAttribute, el, ['crossorigin', 'anonymous']);
    if (bootNonce !== '') {
      apply(setAttribute, el, ['nonce', bootNonce]);
    }
    apply(setAttribute, el, ['src', scriptURL(origin + path)]);
    on(el, 'error', function () {
      warn('the page agent could not load its rest from ' + origin + path);
    });
    apply(appendChild, apply(documentElement, doc, []), [el]);
  } catch (e) {
    warn('the page agent could not load its rest');
  }
}

// scriptURL is u as a TrustedScriptURL of our own policy where the browser has Trusted Types,
// else u.
function scriptURL(u) {
  if (!ttFactory || !ttCreatePolicy || !ttCreateScriptURL) {
    return u;
  }
  try {
    var rules = dict();
    rules.createScriptURL = function (s) {
      return s === u ? s : '';
    };
    var policy = apply(ttCreatePolicy, ttFactory, ['remixproxy', rules]);
    return apply(ttCreateScriptURL, policy, [u]);
  } catch (e) {
    return u; // no policy allowed: the string works where Trusted Types are not enforced
  }
}
