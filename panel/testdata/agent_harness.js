// Behavioural test of static/agent.js in node, with a minimal fake DOM and WebSocket.
//
//   node testdata/agent_harness.js static/agent.js
//
// Each scenario runs the agent in a fresh vm context (its own globals and intrinsics), drives it
// through the fake browser, and checks what it sent, what it put in the DOM, and that page scripts
// which replace built-ins after it ran neither break it nor receive its objects. Exit status 0
// means every scenario passed. Real behaviour is tested in Chromium by the e2e suite; this one
// exists to catch logic mistakes quickly.
'use strict';

const vm = require('vm');
const fs = require('fs');
const assert = require('assert');

const agentPath = process.argv[2];
if (!agentPath) {
  console.error('usage: node agent_harness.js path/to/agent.js');
  process.exit(2);
}
const agentSource = fs.readFileSync(agentPath, 'utf8');

// installFakeDOM runs inside the vm context (it is serialised with toString), so the classes it
// defines live in the same realm as the agent. It only ever calls intrinsics it captured first, so
// the "hostile page" steps below can replace built-ins without breaking the fake browser.
function installFakeDOM(opts) {
  const g = globalThis;
  const R = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const getPrototypeOf = Object.getPrototypeOf;
  const arrayPush = Array.prototype.push;
  const arrayIndexOf = Array.prototype.indexOf;
  const arraySplice = Array.prototype.splice;
  const arraySlice = Array.prototype.slice;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapHas = Map.prototype.has;
  const mapDelete = Map.prototype.delete;
  const weakGet = WeakMap.prototype.get;
  const weakSet = WeakMap.prototype.set;
  const StringCtor = String;

  const push = (a, v) => R(arrayPush, a, [v]);
  const indexOf = (a, v) => R(arrayIndexOf, a, [v]);

  const T = {
    href: opts.url,
    protocol: opts.protocol,
    title: 'Fake page',
    readyState: opts.readyState,
    sockets: [],
    timers: [],
    delays: [],
    now: 0,
    nextTimer: 1,
    warnings: [],
    observers: [],
    shadowInits: [],
    observeOptions: [],
    shadows: [],
    frameSrcs: [],
    posted: [],
    focused: null,
  };
  const listeners = new WeakMap();

  T.fire = function (target, type, ev) {
    ev._type = type;
    if (ev._target === null) {
      ev._target = target;
    }
    const m = R(weakGet, listeners, [target]);
    if (!m || !R(mapHas, m, [type])) {
      return;
    }
    const list = R(arraySlice, R(mapGet, m, [type]), []);
    for (let i = 0; i < list.length; i++) {
      R(list[i], target, [ev]);
    }
  };
  T.listenerCount = function (target, type) {
    const m = R(weakGet, listeners, [target]);
    return m && R(mapHas, m, [type]) ? R(mapGet, m, [type]).length : 0;
  };

  class EventTarget {
    addEventListener(type, fn) {
      let m = R(weakGet, listeners, [this]);
      if (!m) {
        m = new Map();
        R(weakSet, listeners, [this, m]);
      }
      if (!R(mapHas, m, [type])) {
        R(mapSet, m, [type, []]);
      }
      push(R(mapGet, m, [type]), fn);
    }
  }

  class Event {
    constructor(trusted) {
      this._type = '';
      this._target = null;
      const t = trusted === true;
      defineProperty(this, 'isTrusted', { get: function () { return t; }, configurable: false });
    }
    get target() { return this._target; }
    get type() { return this._type; }
  }
  class MessageEvent extends Event {
    constructor(data) { super(true); this._data = data; }
    get data() { return this._data; }
  }
  class CloseEvent extends Event {
    constructor(code) { super(true); this._code = code; }
    get code() { return this._code; }
  }
  class PageTransitionEvent extends Event {
    constructor(persisted) { super(true); this._persisted = persisted; }
    get persisted() { return this._persisted; }
  }
  class NavigationCurrentEntryChangeEvent extends Event {
    constructor(type) { super(true); this._navigationType = type; }
    get navigationType() { return this._navigationType; }
  }

  function mutated(node) {
    for (let i = 0; i < T.observers.length; i++) {
      const o = T.observers[i];
      if (indexOf(o._targets, node) >= 0) {
        o._pending = true;
      }
    }
  }
  function detach(child) {
    const p = child._parent;
    if (!p) {
      return;
    }
    const i = indexOf(p._children, child);
    R(arraySplice, p._children, [i, 1]);
    child._parent = null;
    mutated(p);
  }
  function attach(parent, child) {
    detach(child);
    child._parent = parent;
    push(parent._children, child);
    mutated(parent);
    return child;
  }
  T.attach = attach;
  T.detach = detach;

  class Node extends EventTarget {
    constructor() {
      super();
      this._children = [];
      this._parent = null;
      this._text = '';
    }
    get parentNode() { return this._parent; }
    get isConnected() {
      let n = this;
      while (n) {
        if (n === g.document) {
          return true;
        }
        n = n._parent || n._host || null;
      }
      return false;
    }
    set textContent(v) { this._children = []; this._text = StringCtor(v); }
    get textContent() { return this._text; }
    appendChild(child) { return attach(this, child); }
    removeChild(child) {
      if (child._parent !== this) {
        throw new Error('NotFoundError');
      }
      detach(child);
      return child;
    }
  }

  class Element extends Node {
    constructor(tag) {
      super();
      this.tagName = tag;
      this._attrs = new Map();
    }
    getAttribute(name) { return R(mapHas, this._attrs, [name]) ? R(mapGet, this._attrs, [name]) : null; }
    hasAttribute(name) { return R(mapHas, this._attrs, [name]); }
    setAttribute(name, value) {
      R(mapSet, this._attrs, [name, StringCtor(value)]);
      if (this.tagName === 'iframe' && name === 'src') {
        push(T.frameSrcs, StringCtor(value));
      }
    }
    removeAttribute(name) { R(mapDelete, this._attrs, [name]); }
    attachShadow(init) {
      push(T.shadowInits, {
        proto: getPrototypeOf(init),
        mode: init.mode,
        serializable: init.serializable,
        clonable: init.clonable,
        delegatesFocus: init.delegatesFocus,
      });
      const sr = new ShadowRoot(this, init.mode);
      push(T.shadows, sr);
      return sr;
    }
    get shadowRoot() { return null; }
  }
  class HTMLElement extends Element {
    focus() { T.focused = this; }
  }
  // The panel's window: cross-origin in a browser, so all the agent may do with it is post.
  class HTMLIFrameElement extends HTMLElement {
    constructor() {
      super('iframe');
      const frame = this;
      this._window = {
        postMessage: function (msg, targetOrigin) {
          push(T.posted, { frame: frame, proto: getPrototypeOf(msg), type: msg.type, token: msg.token, targetOrigin: targetOrigin });
        },
      };
    }
    get contentWindow() { return this._window; }
  }
  class ShadowRoot extends Node {
    constructor(host, mode) {
      super();
      this._host = host;
      this._mode = mode;
      this._sheets = null;
    }
    get adoptedStyleSheets() { return this._sheets; }
    set adoptedStyleSheets(v) { this._sheets = v; }
  }
  class Document extends Node {
    constructor() { super(); this.currentScript = null; }
    createElement(tag) { return tag === 'iframe' ? new HTMLIFrameElement() : new HTMLElement(StringCtor(tag)); }
    get documentElement() {
      for (let i = 0; i < this._children.length; i++) {
        if (this._children[i] instanceof Element) {
          return this._children[i];
        }
      }
      return null;
    }
    get readyState() { return T.readyState; }
    get title() { return T.title; }
  }
  class Location {
    constructor() {
      defineProperty(this, 'href', { get: function () { return T.href; }, enumerable: true, configurable: false });
      defineProperty(this, 'protocol', { get: function () { return T.protocol; }, enumerable: true, configurable: false });
    }
  }
  class History {
    pushState(state, unused, url) { T.historyCall('push', url); }
    replaceState(state, unused, url) { T.historyCall('replace', url); }
  }
  class Navigation extends EventTarget {}

  class WebSocket extends EventTarget {
    constructor(url) {
      super();
      this._url = StringCtor(url);
      this._readyState = 0;
      this._sent = [];
      this._closedWith = null;
      push(T.sockets, this);
    }
    get readyState() { return this._readyState; }
    get url() { return this._url; }
    send(data) {
      if (this._readyState !== 1) {
        throw new Error('InvalidStateError');
      }
      push(this._sent, data);
    }
    close(code, reason) {
      this._readyState = 2;
      this._closedWith = [code, reason];
    }
  }

  class MutationObserver {
    constructor(cb) {
      this._cb = cb;
      this._targets = [];
      this._pending = false;
      this._disconnected = false;
      push(T.observers, this);
    }
    observe(target, options) {
      push(T.observeOptions, {
        proto: getPrototypeOf(options),
        childList: options.childList,
        subtree: options.subtree,
        attributes: options.attributes,
      });
      push(this._targets, target);
    }
    disconnect() {
      this._targets = [];
      this._disconnected = true;
    }
  }
  T.flushMutations = function () {
    for (let i = 0; i < T.observers.length; i++) {
      const o = T.observers[i];
      if (o._pending) {
        o._pending = false;
        R(o._cb, undefined, [[], o]);
      }
    }
  };

  class CSSStyleSheet {
    replaceSync(text) { this._text = StringCtor(text); }
  }

  g.setTimeout = function (fn, ms) {
    const id = T.nextTimer++;
    push(T.timers, { id: id, fn: fn, at: T.now + ms });
    push(T.delays, ms);
    return id;
  };
  g.clearTimeout = function (id) {
    for (let i = 0; i < T.timers.length; i++) {
      if (T.timers[i].id === id) {
        R(arraySplice, T.timers, [i, 1]);
        return;
      }
    }
  };
  T.advance = function (ms) {
    const until = T.now + ms;
    for (;;) {
      let next = null;
      for (let i = 0; i < T.timers.length; i++) {
        if (next === null || T.timers[i].at < next.at) {
          next = T.timers[i];
        }
      }
      if (next === null || next.at > until) {
        break;
      }
      R(arraySplice, T.timers, [indexOf(T.timers, next), 1]);
      T.now = next.at;
      R(next.fn, undefined, []);
    }
    T.now = until;
  };

  g.console = {
    warn: function () {
      let s = '';
      for (let i = 0; i < arguments.length; i++) {
        s = s + (i ? ' ' : '') + StringCtor(arguments[i]);
      }
      push(T.warnings, s);
    },
    log: function () {},
  };

  const classes = {
    EventTarget, Event, MessageEvent, CloseEvent, PageTransitionEvent,
    NavigationCurrentEntryChangeEvent, Node, Element, HTMLElement, HTMLIFrameElement, ShadowRoot, Document, Location,
    History, WebSocket, MutationObserver, CSSStyleSheet,
  };
  const names = Object.keys(classes);
  for (let i = 0; i < names.length; i++) {
    g[names[i]] = classes[names[i]];
  }
  T.classes = classes;

  g.window = g;
  g.top = opts.subframe ? {} : g;
  g.location = new Location();
  g.history = new History();
  if (opts.navigationAPI) {
    g.navigation = new Navigation();
  }
  const doc = new Document();
  g.document = doc;
  const html = new HTMLElement('html');
  const head = new HTMLElement('head');
  const body = new HTMLElement('body');
  attach(doc, html);
  attach(html, head);
  attach(html, body);
  const script = new HTMLElement('script');
  if (opts.token !== null) {
    script.setAttribute('data-remixproxy', opts.token);
  }
  attach(head, script);
  doc.currentScript = script;
  T.global = g;
  T.html = html;
  T.head = head;
  T.script = script;
  g.__test = T;
}

const ORIGIN = 'https://shop.test';

// newPage builds a fresh fake browser and runs the agent in it.
function newPage(options) {
  const opts = Object.assign({
    url: ORIGIN + '/start',
    token: 'tok-123',
    subframe: false,
    navigationAPI: false,
    readyState: 'loading',
  }, options || {});
  opts.protocol = new URL(opts.url).protocol;
  const ctx = vm.createContext({});
  vm.runInContext('(' + installFakeDOM.toString() + ')(' + JSON.stringify(opts) + ')', ctx);
  const T = ctx.__test;
  // History moves the URL the way a browser would; with the Navigation API it also fires
  // currententrychange synchronously, before pushState returns.
  T.historyCall = function (kind, url) {
    if (url !== undefined && url !== null) {
      T.href = new URL(String(url), T.href).href;
    }
    if (ctx.navigation) {
      T.fire(ctx.navigation, 'currententrychange', new T.classes.NavigationCurrentEntryChangeEvent(kind));
    }
  };
  const globalsBefore = Object.getOwnPropertyNames(ctx).sort();
  delete ctx.__test;
  vm.runInContext(agentSource, ctx, { filename: 'agent.js' });
  const globalsAfter = Object.getOwnPropertyNames(ctx).sort();
  ctx.__test = T;
  return { ctx, T, globalsBefore, globalsAfter };
}

// Helpers over a page.
function page(options) {
  const p = newPage(options);
  const { ctx, T } = p;
  const C = T.classes;
  p.socket = () => T.sockets[T.sockets.length - 1];
  p.open = (s) => {
    s = s || p.socket();
    s._readyState = 1;
    T.fire(s, 'open', new C.Event(true));
  };
  p.serverSend = (obj, s) => {
    s = s || p.socket();
    T.fire(s, 'message', new C.MessageEvent(typeof obj === 'string' ? obj : JSON.stringify(obj)));
  };
  p.serverClose = (code, s) => {
    s = s || p.socket();
    s._readyState = 3;
    T.fire(s, 'close', new C.CloseEvent(code));
  };
  p.sent = (s) => Array.from((s || p.socket())._sent).map((d) => JSON.parse(d));
  p.ready = () => {
    T.readyState = 'interactive';
    T.fire(ctx.document, 'DOMContentLoaded', new C.Event(true));
    T.fire(T.global, 'DOMContentLoaded', new C.Event(true));
  };
  p.host = () => {
    const kids = T.html._children;
    for (const k of kids) {
      if (k.hasAttribute && k.hasAttribute('data-remixproxy-launcher')) {
        return k;
      }
    }
    return null;
  };
  p.shadow = () => T.shadows[T.shadows.length - 1];
  p.button = () => p.shadow()._children.find((c) => c.tagName === 'button');
  p.frame = () => p.shadow()._children.find((c) => c.tagName === 'iframe') || null;
  p.state = () => p.host().getAttribute('data-remixproxy-state');
  p.click = (trusted) => {
    const ev = new C.Event(trusted !== false);
    ev._target = p.host();
    T.fire(T.global, 'click', ev);
  };
  p.posted = () => Array.from(p.T.posted).map((m) => m.type + ' ' + m.token + ' -> ' + m.targetOrigin);
  p.welcome = (panel, s) => p.serverSend({ type: 'welcome', session: 'sess-1', url: T.href, panel: panel }, s);
  return p;
}

const scenarios = [];
function scenario(name, fn) {
  scenarios.push({ name, fn });
}

scenario('reads the token, removes its script, connects to the agent socket', () => {
  const p = page({ token: 'a b&c/d' });
  assert.strictEqual(p.T.head._children.indexOf(p.T.script), -1, 'script element still in <head>');
  assert.strictEqual(p.T.sockets.length, 1);
  assert.strictEqual(p.socket().url, 'wss://remix.proxy/agent/ws?t=a%20b%26c%2Fd');
});

scenario('uses ws:// and http:// on http pages', () => {
  const p = page({ url: 'http://plain.test/' });
  assert.strictEqual(p.socket().url, 'ws://remix.proxy/agent/ws?t=tok-123');
  p.ready();
  p.open();
  p.welcome('pt');
  p.click();
  p.T.fire(p.frame(), 'load', new p.T.classes.Event(true));
  assert.deepStrictEqual(Array.from(p.T.frameSrcs), ['http://remix.proxy/panel']);
  assert.deepStrictEqual(p.posted(), ['panel-token pt -> http://remix.proxy']);
});

scenario('does nothing without a token', () => {
  for (const token of [null, '']) {
    const p = page({ token });
    assert.strictEqual(p.T.sockets.length, 0, 'token ' + JSON.stringify(token));
    p.ready();
    assert.strictEqual(p.host(), null);
  }
});

scenario('does nothing in a subframe, but still removes its script', () => {
  const p = page({ subframe: true });
  assert.strictEqual(p.T.sockets.length, 0);
  assert.strictEqual(p.T.head._children.indexOf(p.T.script), -1);
  p.ready();
  assert.strictEqual(p.host(), null);
});

scenario('exposes nothing on window', () => {
  const p = page();
  p.ready();
  p.open();
  p.welcome('pt');
  assert.deepStrictEqual(Object.getOwnPropertyNames(p.ctx).filter((n) => n !== '__test').sort(),
    p.globalsBefore.filter((n) => n !== '__test'));
  assert.deepStrictEqual(p.globalsAfter, p.globalsBefore.filter((n) => n !== '__test'));
});

scenario('sends hello on every open, handles welcome, ignores junk', () => {
  const p = page();
  p.T.title = 'Shop <Home>';
  p.open();
  assert.deepStrictEqual(p.sent(), [{ type: 'hello', url: ORIGIN + '/start', title: 'Shop <Home>', top: true }]);
  p.serverSend('not json');
  p.serverSend('null');
  p.serverSend({ type: 'mystery', x: 1 });
  p.serverSend({ notype: true });
  p.welcome('panel-token');
  p.ready();
  assert.strictEqual(p.state(), 'connected');
  p.serverSend({ type: 'error', message: 'boom' });
  assert.deepStrictEqual(Array.from(p.T.warnings), ['remixproxy: boom']);
  // Reconnection: a fresh hello on the new socket.
  p.serverClose(1006);
  p.T.advance(1000);
  assert.strictEqual(p.T.sockets.length, 2);
  p.open();
  assert.deepStrictEqual(p.sent().map((m) => m.type), ['hello']);
});

scenario('reports SPA navigations once per URL', () => {
  const p = page();
  p.open();
  p.ctx.history.pushState({}, '', '/a');
  p.ctx.history.replaceState({}, '', '/a'); // same URL: nothing
  p.ctx.history.replaceState({}, '', '/b?x=1');
  p.T.href = ORIGIN + '/a';
  p.T.fire(p.T.global, 'popstate', new p.T.classes.Event(true));
  p.T.fire(p.T.global, 'popstate', new p.T.classes.Event(false)); // synthetic, nothing moved
  p.T.href = ORIGIN + '/a#top';
  p.T.fire(p.T.global, 'hashchange', new p.T.classes.Event(true));
  assert.deepStrictEqual(p.sent().slice(1), [
    { type: 'nav', url: ORIGIN + '/a', kind: 'push' },
    { type: 'nav', url: ORIGIN + '/b?x=1', kind: 'replace' },
    { type: 'nav', url: ORIGIN + '/a', kind: 'pop' },
    { type: 'nav', url: ORIGIN + '/a#top', kind: 'hash' },
  ]);
});

scenario('history wrappers keep the original behaviour', () => {
  const p = page();
  const r = p.ctx.history.pushState({ s: 1 }, '', '/x');
  assert.strictEqual(r, undefined);
  assert.strictEqual(p.T.href, ORIGIN + '/x');
  // A throwing original propagates and reports nothing.
  const q = page();
  q.open();
  q.T.historyCall = () => { throw new Error('SecurityError'); };
  assert.throws(() => q.ctx.history.pushState(null, '', 'https://other.test/'), /SecurityError/);
  assert.deepStrictEqual(q.sent().map((m) => m.type), ['hello']);
});

scenario('sees pushState through the Navigation API even when the page bypasses the wrapper', () => {
  const p = page({ navigationAPI: true });
  p.open();
  vm.runInContext("History.prototype.pushState.call(history, null, '', '/hidden')", p.ctx);
  p.ctx.history.pushState(null, '', '/shown');
  assert.deepStrictEqual(p.sent().slice(1), [
    { type: 'nav', url: ORIGIN + '/hidden', kind: 'push' },
    { type: 'nav', url: ORIGIN + '/shown', kind: 'push' },
  ]);
});

scenario('reconnects with backoff 1s, 2s, 4s ... 30s and resets after welcome', () => {
  const p = page();
  p.ready();
  for (let i = 0; i < 7; i++) {
    p.serverClose(1006);
    assert.strictEqual(p.state(), 'connecting');
    p.T.advance(60000);
  }
  assert.deepStrictEqual(Array.from(p.T.delays), [1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  assert.strictEqual(p.T.sockets.length, 8);
  p.open();
  p.welcome('pt');
  p.serverClose(1001);
  assert.strictEqual(p.T.delays[p.T.delays.length - 1], 1000);
});

scenario('stops for good on 4401 and 4403', () => {
  for (const code of [4401, 4403]) {
    const p = page();
    p.ready();
    p.open();
    p.welcome('pt');
    p.serverClose(code);
    assert.strictEqual(p.state(), 'closed', 'code ' + code);
    p.T.advance(10 * 60 * 1000);
    assert.strictEqual(p.T.sockets.length, 1, 'code ' + code);
    assert.strictEqual(p.T.timers.length, 0);
    // Even a back/forward restore does not resurrect a refused session.
    p.T.fire(p.T.global, 'pageshow', new p.T.classes.PageTransitionEvent(true));
    assert.strictEqual(p.T.sockets.length, 1);
  }
});

scenario('closes on pagehide and reconnects at once on a persisted pageshow', () => {
  const p = page();
  p.open();
  p.T.fire(p.T.global, 'pageshow', new p.T.classes.PageTransitionEvent(false)); // first load: nothing
  assert.strictEqual(p.T.sockets.length, 1);
  const first = p.socket();
  p.T.fire(p.T.global, 'pagehide', new p.T.classes.PageTransitionEvent(true));
  assert.deepStrictEqual(Array.from(first._closedWith || []), [1000, 'pagehide']);
  p.serverClose(1000, first);
  p.T.advance(60000);
  assert.strictEqual(p.T.sockets.length, 1, 'reconnected while in the back/forward cache');
  p.T.fire(p.T.global, 'pageshow', new p.T.classes.PageTransitionEvent(true));
  assert.strictEqual(p.T.sockets.length, 2);
  p.open();
  assert.strictEqual(p.sent()[0].type, 'hello');
});

scenario('launcher: closed shadow root, disabled until welcome, toggles the panel', () => {
  const p = page();
  assert.strictEqual(p.host(), null, 'mounted before DOMContentLoaded');
  p.ready();
  const host = p.host();
  assert.ok(host, 'no launcher host');
  assert.strictEqual(p.T.shadowInits.length, 1);
  assert.strictEqual(p.T.shadowInits[0].mode, 'closed');
  assert.strictEqual(p.T.shadowInits[0].proto, null);
  assert.ok(p.shadow()._sheets && p.shadow()._sheets.length === 1, 'stylesheet adopted');
  assert.match(p.shadow()._sheets[0]._text, /z-index: 2147483647/);
  const button = p.button();
  assert.strictEqual(button.getAttribute('aria-label'), 'Open remixproxy panel');
  assert.strictEqual(button.getAttribute('type'), 'button');
  assert.strictEqual(button.getAttribute('aria-disabled'), 'true');
  assert.strictEqual(p.state(), 'connecting');

  p.click();
  assert.strictEqual(p.frame(), null, 'panel opened before welcome');

  p.open();
  p.welcome('pan el');
  assert.strictEqual(p.state(), 'connected');
  assert.strictEqual(button.getAttribute('aria-disabled'), 'false');

  p.click(false); // synthetic click from the page
  assert.strictEqual(p.frame(), null, 'untrusted click opened the panel');

  p.click();
  const frame = p.frame();
  assert.ok(frame, 'no iframe after click');
  assert.strictEqual(frame.getAttribute('title'), 'remixproxy panel');
  assert.strictEqual(frame.getAttribute('allow'), '');
  assert.ok(frame.hasAttribute('data-open'));
  assert.strictEqual(button.getAttribute('aria-expanded'), 'true');
  assert.strictEqual(p.T.focused, frame);
  // The token is never in a URL; it is posted to the panel once it has loaded.
  assert.deepStrictEqual(p.posted(), []);
  p.T.fire(frame, 'load', new p.T.classes.Event(true));
  assert.deepStrictEqual(Array.from(p.T.frameSrcs), ['https://remix.proxy/panel']);
  assert.deepStrictEqual(p.posted(), ['panel-token pan el -> https://remix.proxy']);
  assert.strictEqual(p.T.posted[0].proto, null, 'posted message has a prototype');

  p.click();
  assert.ok(!frame.hasAttribute('data-open'), 'panel did not close');
  assert.strictEqual(button.getAttribute('aria-expanded'), 'false');

  // A new session hands the panel its new token.
  p.welcome('second');
  assert.deepStrictEqual(p.posted().slice(1), ['panel-token second -> https://remix.proxy']);
  // The panel reloads (e.g. "reload frame"): it gets the token again, and nothing navigates.
  p.T.fire(frame, 'load', new p.T.classes.Event(true));
  assert.deepStrictEqual(p.posted().slice(2), ['panel-token second -> https://remix.proxy']);
  assert.deepStrictEqual(Array.from(p.T.frameSrcs), ['https://remix.proxy/panel']);

  // Disconnected: the open panel stays usable.
  p.serverClose(1006);
  assert.strictEqual(p.state(), 'connecting');
  assert.strictEqual(button.getAttribute('aria-disabled'), 'false');
});

scenario('launcher mounts at once when the document is already parsed', () => {
  const p = page({ readyState: 'interactive' });
  assert.ok(p.host(), 'launcher not mounted');
  p.ready(); // a later DOMContentLoaded does not mount a second one
  const hosts = p.T.html._children.filter((k) => k.hasAttribute && k.hasAttribute('data-remixproxy-launcher'));
  assert.strictEqual(hosts.length, 1);
});

scenario('puts the launcher back once when the page removes it', () => {
  const p = page();
  p.ready();
  const host = p.host();
  for (const o of p.T.observeOptions) {
    assert.strictEqual(o.proto, null);
    assert.strictEqual(o.childList, true);
    assert.strictEqual(o.subtree, undefined);
  }
  p.T.detach(host);
  p.T.flushMutations();
  assert.strictEqual(p.host(), host, 'not re-appended');
  p.T.flushMutations(); // our own append must not count as a removal
  p.T.detach(host);
  p.T.flushMutations();
  assert.strictEqual(p.host(), null, 'fought the page a second time');
  assert.ok(p.T.observers.every((o) => o._disconnected), 'observer left running');
});

scenario('follows a replaced <html> element', () => {
  const p = page();
  p.ready();
  const host = p.host();
  const doc = p.ctx.document;
  p.T.detach(p.T.html);
  const html2 = new p.T.classes.HTMLElement('html');
  p.T.attach(doc, html2);
  p.T.flushMutations();
  assert.strictEqual(host._parent, html2);
});

scenario('a hostile page that replaces built-ins after start-up gets nothing', () => {
  const p = page({ navigationAPI: true });
  // The page runs after the agent and replaces everything it can reach.
  vm.runInContext(`
    globalThis.leaks = [];
    const R0 = Reflect.apply;
    const push0 = Array.prototype.push;
    const slice0 = Array.prototype.slice;
    const note = (entry) => R0(push0, leaks, [entry]);
    const record = (what) => function () { note([what, this, R0(slice0, arguments, [])]); return undefined; };
    const getter = (what, value) => ({ get() { note([what, this]); return value; }, configurable: true });
    Reflect.apply = record('Reflect.apply');
    Function.prototype.call = record('call');
    Function.prototype.apply = record('apply');
    Function.prototype.bind = record('bind');
    JSON.stringify = record('JSON.stringify');
    JSON.parse = record('JSON.parse');
    globalThis.encodeURIComponent = record('encodeURIComponent');
    Object.defineProperty(Object.prototype, 'toJSON', getter('toJSON', undefined));
    Object.defineProperty(Object.prototype, 'serializable', getter('serializable', true));
    Object.defineProperty(Object.prototype, 'clonable', getter('clonable', true));
    Object.defineProperty(Object.prototype, 'subtree', getter('subtree', true));
    Object.defineProperty(Object.prototype, 'attributes', getter('attributes', true));
    for (const [ctor, names] of [
      [EventTarget, ['addEventListener']],
      [Document, ['createElement']],
      [Node, ['appendChild', 'removeChild']],
      [Element, ['setAttribute', 'removeAttribute', 'attachShadow', 'getAttribute']],
      [HTMLElement, ['focus']],
      [HTMLIFrameElement, ['focus']],
      [WebSocket, ['send', 'close']],
      [MutationObserver, ['observe', 'disconnect']],
      [CSSStyleSheet, ['replaceSync']],
    ]) {
      for (const n of names) ctor.prototype[n] = record(ctor.name + '.' + n);
    }
    for (const [ctor, names] of [
      [Event, ['target']],
      [MessageEvent, ['data']],
      [CloseEvent, ['code']],
      [PageTransitionEvent, ['persisted']],
      [NavigationCurrentEntryChangeEvent, ['navigationType']],
      [WebSocket, ['readyState', 'url']],
      [Node, ['isConnected', 'parentNode']],
      [HTMLIFrameElement, ['contentWindow']],
      [Document, ['documentElement', 'readyState', 'title']],
    ]) {
      for (const n of names) Object.defineProperty(ctor.prototype, n, getter(ctor.name + '.' + n, undefined));
    }
    Object.defineProperty(Node.prototype, 'textContent', { set(v) { note(['textContent', this]); }, configurable: true });
    Object.defineProperty(ShadowRoot.prototype, 'adoptedStyleSheets', { set(v) { note(['adoptedStyleSheets', this]); }, configurable: true });
    for (const n of ['slice', 'indexOf', 'concat', 'replace', 'split', 'toString', 'charAt', 'substring']) {
      String.prototype[n] = record('String.' + n);
    }
    for (const n of ['push', 'join', 'map', 'forEach', 'indexOf', 'slice', 'concat']) {
      Array.prototype[n] = record('Array.' + n);
    }
  `, p.ctx);
  const T = p.T;
  T.title = 'Shop';
  // The fake browser reads fields directly, never through the replaced prototypes.
  T.readyState = 'interactive';
  T.fire(T.global, 'DOMContentLoaded', new T.classes.Event(true));
  const s = p.socket();
  s._readyState = 1;
  T.fire(s, 'open', new T.classes.Event(true));
  T.fire(s, 'message', new T.classes.MessageEvent('{"type":"welcome","session":"s","url":"u","panel":"secret-panel"}'));
  const hostEl = Array.from(T.html._children).find((k) => k._attrs && k._attrs.has('data-remixproxy-launcher'));
  assert.ok(hostEl, 'launcher not mounted');
  assert.strictEqual(hostEl._attrs.get('data-remixproxy-state'), 'connected');
  const click = new T.classes.Event(true);
  click._target = hostEl;
  T.fire(T.global, 'click', click);
  const frame = Array.from(T.shadows[0]._children).find((c) => c.tagName === 'iframe');
  assert.ok(frame, 'panel did not open');
  T.fire(frame, 'load', new T.classes.Event(true));
  T.href = ORIGIN + '/moved';
  T.fire(T.global, 'popstate', new T.classes.Event(true));

  const leaks = Array.from(p.ctx.leaks);
  assert.deepStrictEqual(leaks.map((l) => l[0]), [], 'the agent called replaced built-ins');
  const sent = Array.from(s._sent).map((d) => JSON.parse(d));
  assert.deepStrictEqual(sent, [
    { type: 'hello', url: ORIGIN + '/start', title: 'Shop', top: true },
    { type: 'nav', url: ORIGIN + '/moved', kind: 'pop' },
  ]);
  assert.strictEqual(T.shadowInits[0].serializable, undefined);
  assert.strictEqual(T.shadowInits[0].clonable, undefined);
  assert.deepStrictEqual(Array.from(T.frameSrcs), ['https://remix.proxy/panel']);
  assert.deepStrictEqual(p.posted(), ['panel-token secret-panel -> https://remix.proxy']);
});

let failed = 0;
for (const s of scenarios) {
  try {
    s.fn();
    console.log('ok   ' + s.name);
  } catch (e) {
    failed++;
    console.log('FAIL ' + s.name + '\n' + (e && e.stack || e));
  }
}
console.log(failed ? failed + ' of ' + scenarios.length + ' scenarios failed' : 'all ' + scenarios.length + ' scenarios passed');
process.exit(failed ? 1 : 0);
