// Behavioural test of the page agent (pageagent/*.js, joined as panel/pageagent.go does) in node,
// with a minimal fake DOM and WebSocket.
//
//   node testdata/agent_harness.js path/to/assembled/agent.js
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
const { pristineWindow } = require('./pristine_window.js');

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
  const strIndexOf = String.prototype.indexOf;
  const strSlice = String.prototype.slice;
  const strSplit = String.prototype.split;
  const strTrim = String.prototype.trim;

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
    reloads: 0,
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
    // The path as a browser computes it for a listener outside every shadow root: the target and
    // its ancestors, through open shadow roots to their hosts. A scenario sets _path to model a
    // closed shadow root (whose inside the path leaves out).
    composedPath() {
      if (this._path) {
        return R(arraySlice, this._path, []);
      }
      const out = [];
      for (let n = this._target; n; n = n._parent || n._host || null) {
        push(out, n);
      }
      return out;
    }
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
        continue;
      }
      for (let n = node && node._parent; o._subtree && n; n = n._parent) {
        if (indexOf(o._targets, n) >= 0) {
          o._pending = true;
        }
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
    get nodeType() { return this instanceof Element ? 1 : this instanceof Document ? 9 : this instanceof ShadowRoot ? 11 : 3; }
    get firstChild() { return this._children[0] || null; }
    get nextSibling() {
      const p = this._parent;
      return p ? p._children[R(arrayIndexOf, p._children, [this]) + 1] || null : null;
    }
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
    querySelectorAll(sel) { return new NodeList(select(this, StringCtor(sel))); }
  }

  // A tiny selector engine for the remixlet operations: compound selectors of a tag, .classes,
  // [attr] and [attr=value] / [attr^=value], separated by commas. Anything else is a SyntaxError.
  function parseCompound(s) {
    const parts = { tag: null, classes: [], attrs: [] };
    let i = 0;
    const ident = () => {
      let out = '';
      while (i < s.length && /[A-Za-z0-9_-]/.test(s[i])) {
        out += s[i++];
      }
      if (out === '') {
        throw new SyntaxError('bad selector ' + s);
      }
      return out;
    };
    if (/[A-Za-z]/.test(s[0] || '')) {
      parts.tag = ident();
    } else if (s[0] === '*') {
      i = 1;
    }
    while (i < s.length) {
      if (s[i] === '.') {
        i++;
        push(parts.classes, ident());
      } else if (s[i] === '[') {
        const end = R(strIndexOf, s, [']', i]);
        if (end < 0) {
          throw new SyntaxError('bad selector ' + s);
        }
        const m = /^([A-Za-z-]+)(?:(\^?=)"?([^"]*)"?)?$/.exec(R(strSlice, s, [i + 1, end]));
        if (!m) {
          throw new SyntaxError('bad selector ' + s);
        }
        push(parts.attrs, { name: m[1], op: m[2] || null, value: m[3] });
        i = end + 1;
      } else {
        throw new SyntaxError('bad selector ' + s);
      }
    }
    return parts;
  }
  function matchesCompound(el, c) {
    if (!(el instanceof Element)) {
      return false;
    }
    if (c.tag && el.tagName !== c.tag) {
      return false;
    }
    const cls = R(strSplit, attrGet(el, 'class') || '', [' ']);
    for (const k of c.classes) {
      if (R(arrayIndexOf, cls, [k]) < 0) {
        return false;
      }
    }
    for (const a of c.attrs) {
      const v = attrGet(el, a.name);
      if (v === null || (a.op === '=' && v !== a.value) || (a.op === '^=' && !v.startsWith(a.value))) {
        return false;
      }
    }
    return true;
  }
  function attrGet(el, name) {
    return R(mapHas, el._attrs, [name]) ? R(mapGet, el._attrs, [name]) : null;
  }
  function select(root, sel) {
    // Captured splits and an index loop: a browser's own querySelectorAll calls nothing of the
    // page's (the page agent's frame hook runs it after a page replaced String's methods).
    const parts = R(strSplit, sel, [',']);
    const compounds = [];
    for (let i = 0; i < parts.length; i++) {
      push(compounds, parseCompound(R(strTrim, parts[i], [])));
    }
    const out = [];
    const walk = (n) => {
      // An index loop, as a browser's own querySelectorAll calls nothing of the page's.
      for (let i = 0; i < n._children.length; i++) {
        const k = n._children[i];
        if (compounds.some((c) => matchesCompound(k, c))) {
          push(out, k);
        }
        walk(k);
      }
    };
    walk(root);
    return out;
  }
  class NodeList {
    constructor(a) { this._a = a; }
    get length() { return this._a.length; }
    item(i) { return this._a[i] || null; }
  }
  class DOMTokenList {
    constructor(el) { this._el = el; }
    add(c) {
      const cls = (attrGet(this._el, 'class') || '').split(' ').filter((x) => x);
      if (cls.indexOf(c) < 0) {
        push(cls, c);
      }
      R(mapSet, this._el._attrs, ['class', cls.join(' ')]);
    }
    remove(c) {
      const cls = (attrGet(this._el, 'class') || '').split(' ').filter((x) => x && x !== c);
      R(mapSet, this._el._attrs, ['class', cls.join(' ')]);
    }
  }
  class CSSStyleDeclaration {
    constructor() { this._props = new Map(); }
    setProperty(name, value, priority) { R(mapSet, this._props, [name, [StringCtor(value), priority || '']]); }
    removeProperty(name) { R(mapDelete, this._props, [name]); }
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
    get localName() { return this.tagName; }
    get classList() { return new DOMTokenList(this); }
    remove() { detach(this); }
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
    get style() {
      if (!this._style) {
        this._style = new CSSStyleDeclaration();
      }
      return this._style;
    }
  }
  class HTMLInputElement extends HTMLElement {
    constructor() { super('input'); this._value = ''; }
    get value() { return this._value; }
  }
  class KeyboardEvent extends Event {
    constructor(key) { super(true); this._key = key; }
    get key() { return this._key; }
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
    // The frame the page agent makes for its page tools' captures (fresh_realm.js) is a fresh
    // realm: the built-ins as they were before any page script ran (T.pristine).
    get contentWindow() { return R(mapHas, this._attrs, ['data-remixproxy-realm']) ? T.pristine : this._window; }
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
    constructor() { super(); this.currentScript = null; this._adopted = []; }
    // Like a browser's observable array: the getter hands out the live array (push works on it,
    // unless opts.frozenAdopted, as in browsers before observable arrays); the setter converts
    // what it is given with its iterator (which a page can replace).
    get adoptedStyleSheets() { return this._adopted; }
    set adoptedStyleSheets(v) {
      const a = [];
      for (const x of v) {
        push(a, x);
      }
      this._adopted = opts.frozenAdopted ? Object.freeze(a) : a;
    }
    createElement(tag) {
      if (tag === 'input') {
        return new HTMLInputElement();
      }
      return tag === 'iframe' ? new HTMLIFrameElement() : new HTMLElement(StringCtor(tag));
    }
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
    get head() { return T.head || null; }
    get body() { return T.body || null; }
  }
  class Location {
    constructor() {
      defineProperty(this, 'href', { get: function () { return T.href; }, enumerable: true, configurable: false });
      defineProperty(this, 'protocol', { get: function () { return T.protocol; }, enumerable: true, configurable: false });
      defineProperty(this, 'origin', { get: function () { var m = /^[a-z]+:\/\/[^\/?#]*/.exec(T.href); return m ? m[0] : 'null'; }, enumerable: true, configurable: false });
      defineProperty(this, 'reload', { value: function () { T.reloads++; }, enumerable: true, configurable: false });
    }
  }
  class History {
    pushState(state, unused, url) { T.historyCall('push', url); }
    replaceState(state, unused, url) { T.historyCall('replace', url); }
  }
  class Navigation extends EventTarget {}

  class WebSocket extends EventTarget {
    constructor(url, protocols) {
      super();
      this._url = StringCtor(url);
      this._protocols = protocols;
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

  class MutationRecord {
    get target() { return this._target; }
    get oldValue() { return this._oldValue; }
    get type() { return this._type || 'attributes'; }
    get attributeName() { return this._attributeName || null; }
    get addedNodes() { return new NodeList([]); }
  }
  class MutationObserver {
    constructor(cb) {
      this._cb = cb;
      this._targets = [];
      this._pending = false;
      this._disconnected = false;
      push(T.observers, this);
    }
    takeRecords() {
      this._pending = false;
      return [];
    }
    observe(target, options) {
      this._subtree = options.subtree === true;
      this._revealWatch = !!options.attributeFilter; // rx_policy.js's observer of revealed passwords
      push(T.observeOptions, {
        proto: getPrototypeOf(options),
        childList: options.childList,
        subtree: options.subtree,
        attributes: options.attributes,
        // The agent's lists may have no prototype (no toString): joined by hand.
        attributeFilter: options.attributeFilter ? R(arraySlice, options.attributeFilter, []).map((x) => StringCtor(x)).join(',') : undefined,
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

  // The document's selection: where the caret is (T.selection.node), for the key events of
  // editable elements.
  class Selection {
    get focusNode() { return T.selection.node; }
  }
  T.selection = { node: null };
  const theSelection = new Selection();
  g.getSelection = function () { return theSelection; };
  Node.prototype.contains = function (other) {
    for (let n = other; n; n = n._parent) {
      if (n === this) {
        return true;
      }
    }
    return false;
  };

  const classes = {
    Selection, EventTarget, Event, MessageEvent, CloseEvent, PageTransitionEvent,
    NavigationCurrentEntryChangeEvent, Node, Element, HTMLElement, HTMLIFrameElement, ShadowRoot, Document, Location,
    History, WebSocket, MutationObserver, MutationRecord, CSSStyleSheet, NodeList, DOMTokenList, CSSStyleDeclaration,
    HTMLInputElement, KeyboardEvent,
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
  if (opts.remixlets) {
    script.setAttribute('data-remixproxy-now', '');
  }
  attach(head, script);
  doc.currentScript = script;
  T.global = g;
  T.html = html;
  T.head = head;
  T.body = body;
  T.script = script;
  // T.pristine: the fresh realm's window, set by the harness right after this (pristine_window.js).
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
    // The proxy's data-remixproxy-now (remixlets run on the page, or a chat follows the tab):
    // the socket opens at once. Most scenarios test the channel, so they start with it; 'socket after load' tests
    // the other pages.
    remixlets: true,
  }, options || {});
  opts.protocol = new URL(opts.url).protocol;
  const ctx = vm.createContext({});
  vm.runInContext('(' + installFakeDOM.toString() + ')(' + JSON.stringify(opts) + ')', ctx);
  vm.runInContext('__test.pristine = (' + pristineWindow.toString() + ')(globalThis)', ctx);
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
  if (opts.before) {
    // Extra fake browser APIs for one scenario, installed before the agent captures them.
    ctx.__URL = URL;
    vm.runInContext('(' + opts.before.toString() + ')(globalThis.__test)', ctx);
    delete ctx.__URL;
  }
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
  // dcl: the document is parsed (DOMContentLoaded). ready: the page has loaded as well (the
  // load event, then the tasks queued at 0 ms run: the launcher mounts after load).
  p.dcl = () => {
    T.readyState = 'interactive';
    T.fire(ctx.document, 'DOMContentLoaded', new C.Event(true));
    T.fire(T.global, 'DOMContentLoaded', new C.Event(true));
  };
  p.ready = () => {
    p.dcl();
    T.readyState = 'complete';
    T.fire(T.global, 'load', new C.Event(true));
    T.advance(0);
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
  const p = page({ token: 'v1.a-b_c.d' });
  assert.strictEqual(p.T.head._children.indexOf(p.T.script), -1, 'script element still in <head>');
  assert.strictEqual(p.T.sockets.length, 1);
  // The token is in the subprotocol, one string, never in the address (a page reads the address
  // of a socket its own policy blocks or reports: securitypolicyviolation's blockedURI).
  assert.strictEqual(p.socket().url, 'wss://remix.proxy/agent/ws');
  assert.strictEqual(p.socket()._protocols, 'remixproxy~v1.a-b_c.d');
});

scenario('a second page agent in the window reads nothing from its tag and starts nothing', () => {
  // Markup injected into a page can load the agent's public script again (the page's script-src
  // allows it for the real one), with first-frame sheets of its own choosing.
  const p = page();
  p.ready();
  const sockets = p.T.sockets.length;
  const sheets = p.T.global.document.adoptedStyleSheets.length;
  const second = new p.T.classes.HTMLElement('script');
  second.setAttribute('data-remixproxy', 'tok-injected');
  second.setAttribute('data-remixproxy-now', '');
  second.setAttribute('data-remixproxy-sheets', JSON.stringify([{ remixlet: 'rx_0123456789abcdef0123456789abcdef', version: 1, css: 'body { color: red }' }]));
  p.T.body.appendChild(second);
  p.T.global.document.currentScript = second;
  vm.runInContext(agentSource, p.ctx, { filename: 'agent.js' });
  p.T.advance(0);
  assert.strictEqual(p.T.sockets.length, sockets, 'a second socket');
  assert.strictEqual(p.T.global.document.adoptedStyleSheets.length, sheets, 'the injected sheets adopted');
  assert.strictEqual(p.T.body._children.indexOf(second), -1, 'its script element left in the page');
});

scenario('uses ws:// and http:// on http pages', () => {
  const p = page({ url: 'http://plain.test/' });
  assert.strictEqual(p.socket().url, 'ws://remix.proxy/agent/ws');
  assert.strictEqual(p.socket()._protocols, 'remixproxy~tok-123');
  p.ready();
  p.open();
  p.welcome('pt');
  p.click();
  p.T.fire(p.frame(), 'load', new p.T.classes.Event(true));
  assert.deepStrictEqual(Array.from(p.T.frameSrcs), ['http://remix.proxy/panel?for=http://plain.test']);
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
  assert.deepStrictEqual(p.sent(), [{ type: 'hello', url: ORIGIN + '/start', title: 'Shop <Home>', top: true, ready: 'loading' }]);
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
  const before = p.T.delays.length; // the page's start-up timers (the launcher's) are not the reconnect's
  for (let i = 0; i < 7; i++) {
    p.serverClose(1006);
    assert.strictEqual(p.state(), 'connecting');
    p.T.advance(60000);
  }
  assert.deepStrictEqual(Array.from(p.T.delays).slice(before), [1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  assert.strictEqual(p.T.sockets.length, 8);
  p.open();
  p.welcome('pt');
  p.serverClose(1001);
  assert.strictEqual(p.T.delays[p.T.delays.length - 1], 1000);
});

scenario('a reconnection carries the resume key of the last welcome, and a first connection none', () => {
  const p = page({ token: 'tok-123' });
  p.ready();
  assert.strictEqual(p.socket()._protocols, 'remixproxy~tok-123', 'a key before any welcome');
  p.open();
  p.serverSend({ type: 'welcome', session: 'sess-1', url: p.T.href, panel: 'pt', resume: 'k-1_2' });
  p.serverClose(1006);
  p.T.advance(1000);
  assert.strictEqual(p.socket()._protocols, 'remixproxy~tok-123~k-1_2');
  assert.strictEqual(p.socket().url, 'wss://remix.proxy/agent/ws', 'the key in the address');
  // A junk resume key changes nothing; a new one replaces the old.
  p.open();
  p.serverSend({ type: 'welcome', session: 'sess-1', url: p.T.href, panel: 'pt', resume: 7 });
  p.serverClose(1006);
  p.T.advance(1000);
  assert.strictEqual(p.socket()._protocols, 'remixproxy~tok-123~k-1_2');
  p.open();
  p.serverSend({ type: 'welcome', session: 'sess-1', url: p.T.href, panel: 'pt', resume: 'k2' });
  p.serverClose(1006);
  p.T.advance(1000);
  assert.strictEqual(p.socket()._protocols, 'remixproxy~tok-123~k2');
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

scenario('a page\'s own pagehide and pageshow events neither close nor reopen the socket', () => {
  const p = page();
  p.open();
  const first = p.socket();
  p.T.fire(p.T.global, 'pagehide', new p.T.classes.Event(false));
  assert.strictEqual(first._closedWith, null, 'closed on a synthetic pagehide');
  p.T.fire(p.T.global, 'pageshow', new p.T.classes.Event(false));
  assert.strictEqual(p.T.sockets.length, 1, 'reconnected on a synthetic pageshow');
  p.T.fire(p.T.global, 'pagehide', new p.T.classes.PageTransitionEvent(true));
  assert.deepStrictEqual(Array.from(first._closedWith || []), [1000, 'pagehide']);
  p.serverClose(1000, first);
  p.T.fire(p.T.global, 'pageshow', new p.T.classes.Event(false));
  assert.strictEqual(p.T.sockets.length, 1, 'reconnected on a synthetic pageshow after a real pagehide');
  p.T.fire(p.T.global, 'pageshow', new p.T.classes.PageTransitionEvent(true));
  assert.strictEqual(p.T.sockets.length, 2);
});

scenario('launcher: closed shadow root, disabled until welcome, toggles the panel', () => {
  const p = page();
  assert.strictEqual(p.host(), null, 'mounted before DOMContentLoaded');
  p.dcl();
  assert.strictEqual(p.host(), null, 'mounted at DOMContentLoaded, not after load');
  p.T.readyState = 'complete';
  p.T.fire(p.T.global, 'load', new p.T.classes.Event(true));
  assert.strictEqual(p.host(), null, 'mounted inside the load event (load waits for it)');
  p.T.advance(0);
  const host = p.host();
  assert.ok(host, 'no launcher host');
  assert.strictEqual(p.T.shadowInits.length, 1);
  assert.strictEqual(p.T.shadowInits[0].mode, 'closed');
  assert.strictEqual(p.T.shadowInits[0].proto, null);
  assert.ok(p.shadow()._sheets && p.shadow()._sheets.length === 1, 'stylesheet adopted');
  assert.match(p.shadow()._sheets[0]._text, /z-index: 2147483647/);
  assert.doesNotMatch(p.shadow()._sheets[0]._text, /iframe/, 'the frame\'s rules parsed before the panel opens');
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
  assert.strictEqual(p.shadow()._sheets.length, 2, 'the frame\'s sheet not adopted on open');
  assert.match(p.shadow()._sheets[1]._text, /iframe\[data-open\] \{ display: block; \}/);
  assert.match(p.shadow()._sheets[0]._text, /z-index: 2147483647/);
  assert.strictEqual(frame.getAttribute('title'), 'remixproxy panel');
  assert.strictEqual(frame.getAttribute('allow'), '');
  assert.ok(frame.hasAttribute('data-open'));
  assert.strictEqual(button.getAttribute('aria-expanded'), 'true');
  assert.strictEqual(p.T.focused, frame);
  // The token is never in a URL; it is posted to the panel once it has loaded.
  assert.deepStrictEqual(p.posted(), []);
  p.T.fire(frame, 'load', new p.T.classes.Event(true));
  assert.deepStrictEqual(Array.from(p.T.frameSrcs), ['https://remix.proxy/panel?for=https://shop.test']);
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
  assert.deepStrictEqual(Array.from(p.T.frameSrcs), ['https://remix.proxy/panel?for=https://shop.test']);

  // Disconnected: the open panel stays usable.
  p.serverClose(1006);
  assert.strictEqual(p.state(), 'connecting');
  assert.strictEqual(button.getAttribute('aria-disabled'), 'false');
});

scenario('socket after load: where no remixlet runs, the socket opens in a task after the load event, after the launcher', () => {
  const p = page({ remixlets: false });
  assert.strictEqual(p.T.sockets.length, 0, 'connected while the page loads');
  p.dcl();
  assert.strictEqual(p.T.sockets.length, 0, 'connected at DOMContentLoaded');
  p.T.readyState = 'complete';
  p.T.fire(p.T.global, 'load', new p.T.classes.Event(true));
  assert.strictEqual(p.T.sockets.length, 0, 'connected inside the load event (load waits for it)');
  p.T.advance(0);
  assert.strictEqual(p.T.sockets.length, 1, 'no socket after load');
  assert.ok(p.host(), 'no launcher');
  assert.strictEqual(p.socket()._protocols, 'remixproxy~tok-123');
  p.open();
  assert.deepStrictEqual(p.sent(), [{ type: 'hello', url: ORIGIN + '/start', title: 'Fake page', top: true, ready: 'complete' }]);
  p.welcome('pt');
  assert.strictEqual(p.state(), 'connected');
  p.T.advance(10000);
  assert.strictEqual(p.T.sockets.length, 1, 'a late timer opened a second socket');
});

scenario('socket after load: a second after DOMContentLoaded when load does not come, five seconds after start when the page is never parsed, at once on a loaded page', () => {
  const slow = page({ remixlets: false });
  slow.dcl();
  slow.T.advance(999);
  assert.strictEqual(slow.T.sockets.length, 0, 'connected before the second was up');
  slow.T.advance(1);
  assert.strictEqual(slow.T.sockets.length, 1, 'no socket a second after DOMContentLoaded');
  slow.T.readyState = 'complete';
  slow.T.fire(slow.T.global, 'load', new slow.T.classes.Event(true));
  slow.T.advance(0);
  assert.strictEqual(slow.T.sockets.length, 1, 'the load opened a second socket');

  const streaming = page({ remixlets: false });
  streaming.T.advance(4999);
  assert.strictEqual(streaming.T.sockets.length, 0, 'connected before five seconds');
  streaming.T.advance(1);
  assert.strictEqual(streaming.T.sockets.length, 1, 'no socket five seconds after start on a page never parsed');
  assert.ok(streaming.host(), 'no launcher on a page never parsed');

  const loaded = page({ remixlets: false, readyState: 'complete' });
  assert.strictEqual(loaded.T.sockets.length, 1, 'no socket at once on a loaded page');
});

scenario('socket after load: the token is read and the script removed at once all the same', () => {
  const p = page({ remixlets: false, token: 'a-b' });
  assert.strictEqual(p.T.head._children.indexOf(p.T.script), -1, 'script element still in <head>');
  p.T.script.setAttribute('data-remixproxy', 'changed');
  p.ready();
  assert.strictEqual(p.socket()._protocols, 'remixproxy~a-b');
});

scenario('launcher shows a second after DOMContentLoaded when the load event does not come', () => {
  const p = page();
  p.dcl();
  p.T.advance(999);
  assert.strictEqual(p.host(), null, 'mounted before the second was up');
  p.T.advance(1);
  assert.ok(p.host(), 'no launcher a second after DOMContentLoaded');
  p.T.readyState = 'complete';
  p.T.fire(p.T.global, 'load', new p.T.classes.Event(true));
  p.T.advance(0);
  const hosts = p.T.html._children.filter((k) => k.hasAttribute && k.hasAttribute('data-remixproxy-launcher'));
  assert.strictEqual(hosts.length, 1, 'a later load mounted a second one');
});

scenario('launcher mounts at once when the page has already loaded, and a second after DOMContentLoaded when it is parsed', () => {
  const done = page({ readyState: 'complete' });
  assert.ok(done.host(), 'launcher not mounted on a loaded page');
  const parsed = page({ readyState: 'interactive' });
  assert.strictEqual(parsed.host(), null, 'mounted before the page loaded');
  parsed.T.advance(1000);
  assert.ok(parsed.host(), 'launcher not mounted a second after');
});

scenario('puts the launcher back once when the page removes it', () => {
  const p = page();
  p.ready();
  const host = p.host();
  // The launcher's observers (not the one of revealed passwords, which starts on load too).
  for (const o of p.T.observeOptions.filter((x) => x.attributeFilter === undefined)) {
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
  assert.ok(p.T.observers.filter((o) => !o._revealWatch).every((o) => o._disconnected), 'observer left running');
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
  T.advance(1000); // the launcher mounts a second after DOMContentLoaded (no load event here)
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
    { type: 'hello', url: ORIGIN + '/start', title: 'Shop', top: true, ready: 'interactive' },
    { type: 'nav', url: ORIGIN + '/moved', kind: 'pop' },
  ]);
  assert.strictEqual(T.shadowInits[0].serializable, undefined);
  assert.strictEqual(T.shadowInits[0].clonable, undefined);
  assert.deepStrictEqual(Array.from(T.frameSrcs), ['https://remix.proxy/panel?for=https://shop.test']);
  assert.deepStrictEqual(p.posted(), ['panel-token secret-panel -> https://remix.proxy']);
});

// ---- Remixlet operations. ---------------------------------------------------------------------

const RX_A = 'rx_0123abcd' + '0'.repeat(24);
const RX_B = 'rx_feedbeef' + '1'.repeat(24);

// opsPage is a connected page with some content in <body> for the remixlet operations.
function opsPage(options) {
  const p = page(Object.assign({ readyState: 'interactive' }, options || {}));
  p.open();
  p.welcome('pt');
  p.T.advance(1000); // the launcher mounts, a second after DOMContentLoaded (the page has not loaded)
  const doc = p.ctx.document;
  const body = p.T.html._children[1];
  const add = (tag, attrs, parent) => {
    const e = doc.createElement(tag);
    for (const k of Object.keys(attrs || {})) {
      e.setAttribute(k, attrs[k]);
    }
    p.T.attach(parent || body, e);
    return e;
  };
  p.add = add;
  p.body = body;
  let nextID = 1;
  // op sends an op and returns the agent's result message.
  p.op = (remixlet, op, ...args) => {
    const id = nextID++;
    p.serverSend({ type: 'op', id, remixlet, op, args });
    const results = p.sent().filter((m) => m.type === 'result' && m.id === id);
    assert.strictEqual(results.length, 1, 'one result for op ' + id);
    return results[0];
  };
  p.ok = (remixlet, op, ...args) => {
    const r = p.op(remixlet, op, ...args);
    assert.strictEqual(r.ok, true, op + ' refused: ' + r.error);
    return r.value;
  };
  p.refused = (pattern, remixlet, op, ...args) => {
    const r = p.op(remixlet, op, ...args);
    assert.strictEqual(r.ok, false, op + ' ' + JSON.stringify(args) + ' was not refused');
    assert.match(r.error, pattern);
  };
  return p;
}

scenario('remixlet ops: query and hide with marks; handles belong to one remixlet', () => {
  const p = opsPage();
  const a = p.add('div', { class: 'promoted' });
  const b = p.add('div', { class: 'item' });
  const c = p.add('div', { class: 'promoted x' });
  const hs = p.ok(RX_A, 'queryAll', '.promoted');
  assert.deepStrictEqual(hs, [{ $h: 1 }, { $h: 2 }]);
  assert.deepStrictEqual(p.ok(RX_A, 'query', '.promoted'), { $h: 1 }, 'the same element keeps its handle');
  assert.strictEqual(p.ok(RX_A, 'query', '.absent'), null);
  assert.strictEqual(p.ok(RX_A, 'hide', hs[0]), null);
  assert.deepStrictEqual(Array.from(a._style._props.get('display')), ['none', 'important']);
  assert.strictEqual(a.getAttribute('data-remixlet-hidden'), '');
  assert.strictEqual(a.getAttribute('data-remixlet-0123abcd'), '', 'no mark');
  assert.strictEqual(c.getAttribute('data-remixlet-hidden'), null);
  p.ok(RX_A, 'show', hs[0]);
  assert.strictEqual(a._style._props.has('display'), false);
  assert.strictEqual(a.getAttribute('data-remixlet-hidden'), null);
  p.ok(RX_A, 'addClass', hs[1], 'seen');
  assert.strictEqual(c.getAttribute('class'), 'promoted x seen');
  assert.strictEqual(c.getAttribute('data-remixlet-0123abcd'), 'seen');
  // Remixlet B has its own table: A's handles mean nothing to it.
  p.refused(/unknown element handle/, RX_B, 'hide', hs[0]);
  p.refused(/unknown element handle/, RX_B, 'text', { $h: 2 });
  assert.deepStrictEqual(p.ok(RX_B, 'queryAll', '.item'), [{ $h: 1 }]);
  p.ok(RX_B, 'hide', { $h: 1 });
  assert.strictEqual(b.getAttribute('data-remixlet-feedbeef'), '');
  assert.strictEqual(b.getAttribute('data-remixlet-0123abcd'), null);
  p.refused(/unknown remixlet/, 'rx_nothex', 'query', 'div');
  p.refused(/invalid selector/, RX_A, 'query', 'div >>> p');
  p.refused(/not available/, RX_A, 'fetch', hs[0]);
  // remove takes the element out, but not the page's own frame.
  p.ok(RX_A, 'remove', hs[1]);
  assert.strictEqual(c.parentNode, null);
  p.refused(/cannot be removed/, RX_A, 'remove', p.ok(RX_A, 'query', 'body'));
});

scenario('remixlet ops: password fields read back empty and cannot change', () => {
  const p = opsPage();
  const pw = p.add('input', { type: 'password', value: 'hunter2', name: 'pw' });
  pw._value = 'hunter2';
  const cur = p.add('input', { autocomplete: 'username current-password', value: 'secret' });
  cur._value = 'secret';
  const plain = p.add('input', { type: 'text', value: 'hello' });
  plain._value = 'hello';
  const [hpw, hcur, hplain] = p.ok(RX_A, 'queryAll', 'input');
  assert.strictEqual(p.ok(RX_A, 'value', hpw), '');
  assert.strictEqual(p.ok(RX_A, 'attr', hpw, 'value'), '');
  assert.strictEqual(p.ok(RX_A, 'attr', hpw, 'VALUE'), '');
  assert.strictEqual(p.ok(RX_A, 'text', hpw), '');
  assert.strictEqual(p.ok(RX_A, 'value', hcur), '');
  assert.strictEqual(p.ok(RX_A, 'attr', hcur, 'value'), '');
  assert.strictEqual(p.ok(RX_A, 'value', hplain), 'hello');
  assert.strictEqual(p.ok(RX_A, 'attr', hpw, 'name'), 'pw');
  // A selector cannot test the value (on any page: red-team pass 6c).
  p.refused(/value attribute/, RX_A, 'queryAll', 'input[value^=h]');
  p.refused(/value attribute/, RX_A, 'query', '[VALUE=hunter2]');
  p.refused(/escapes/, RX_A, 'query', 'input[\\76 alue]');
  for (const name of ['type', 'autocomplete', 'pattern', 'minlength', 'maxlength', 'value']) {
    p.refused(/password field cannot be changed/, RX_A, 'setAttr', hpw, name, 'text');
    p.refused(/password field cannot be changed/, RX_A, 'setAttr', hcur, name, 'off');
  }
  assert.strictEqual(pw.getAttribute('type'), 'password');
  p.refused(/cannot be set/, RX_A, 'setText', hpw, 'x');
  // Key events typed into it do not reach the remixlet at all (their number is its length).
  p.ok(RX_A, 'on', hpw, 'keydown', { $listener: 7 });
  const ev = new p.T.classes.KeyboardEvent('h');
  ev._target = pw;
  p.T.fire(pw, 'keydown', ev);
  const events = p.sent().filter((m) => m.type === 'event');
  assert.deepStrictEqual(events, []);
  // Without a password field value selectors are refused too (a field in a closed shadow root
  // cannot be seen); presence tests and comparable attributes work.
  // Attributes of a sensitive field outside the comparable ones read back empty: the page's
  // own copy of what is typed (data-value) is one of them.
  pw.setAttribute('data-value', 'hunter2');
  assert.strictEqual(p.ok(RX_A, 'attr', hpw, 'data-value'), '');
  assert.strictEqual(p.ok(RX_A, 'attr', hpw, 'name'), 'pw');
  pw.remove();
  cur.remove();
  p.refused(/value attribute/, RX_A, 'queryAll', 'input[value^=h]');
  assert.deepStrictEqual(p.ok(RX_A, 'queryAll', 'input[type^=te]'), [hplain]);
});

scenario('remixlet ops: attributes that load or run code and loading styles are refused', () => {
  const p = opsPage();
  const d = p.add('div', { id: 'd' });
  const h = p.ok(RX_A, 'query', 'div');
  for (const name of ['onclick', 'ONMOUSEOVER', 'src', 'href', 'action', 'formaction', 'srcdoc', 'style', 'xlink:href', 'srcset']) {
    p.refused(/refused/, RX_A, 'setAttr', h, name, 'x');
  }
  p.refused(/marks/, RX_A, 'setAttr', h, 'data-remixlet-feedbeef', '');
  assert.deepStrictEqual(Array.from(d._attrs.keys()), ['id']);
  p.ok(RX_A, 'setAttr', h, 'title', 'Hello');
  assert.strictEqual(d.getAttribute('title'), 'Hello');
  assert.strictEqual(d.getAttribute('data-remixlet-0123abcd'), '');
  for (const v of ['url(https://evil.test/)', 'URL(x)', 'image-set("a.png" 1x)', 'r\\65 d', 'red /* x */', 'expression(alert(1))']) {
    p.refused(/may not contain/, RX_A, 'setStyle', h, { background: v });
  }
  p.refused(/not a CSS property name/, RX_A, 'setStyle', h, { 'back ground': 'red' });
  p.refused(/runs code/, RX_A, 'setStyle', h, { MozBinding: 'x', behavior: 'y' });
  assert.ok(!d._style || d._style._props.size === 0, 'a refused setStyle changed the element');
  p.ok(RX_A, 'setStyle', h, { color: 'red', fontWeight: 'bold' });
  assert.deepStrictEqual(JSON.parse(JSON.stringify(Array.from(d._style._props.entries()))), [['color', ['red', '']], ['font-weight', ['bold', '']]]);
  p.ok(RX_A, 'setText', h, '<b>not html</b>');
  assert.strictEqual(d.textContent, '<b>not html</b>');
});

scenario('remixlet ops: page changes are reported, coalesced; reload reloads', () => {
  const p = opsPage();
  const count = () => p.sent().filter((m) => m.type === 'mutated').length;
  p.add('div', {});
  p.T.flushMutations();
  p.T.advance(100);
  assert.strictEqual(count(), 0, 'reported before any remixlet ran');
  p.ok(RX_A, 'queryAll', 'div');
  // (count is cumulative.) The first change is reported at once; the next ones within 16 ms
  // become one notice at the end of the cooldown.
  p.add('div', {});
  p.T.flushMutations();
  assert.strictEqual(count(), 1, 'the first change was not reported at once');
  p.add('div', {});
  p.T.flushMutations();
  p.add('div', {});
  p.T.flushMutations();
  assert.strictEqual(count(), 1, 'changes during the cooldown were not coalesced');
  p.T.advance(16);
  assert.strictEqual(count(), 2, 'the coalesced notice did not come at the end of the cooldown');
  p.T.advance(100);
  assert.strictEqual(count(), 2);
  p.add('p', {});
  p.T.flushMutations();
  assert.strictEqual(count(), 3);
  p.T.advance(100);
  assert.strictEqual(count(), 3);
  assert.strictEqual(p.T.reloads, 0);
  p.serverSend({ type: 'reload' });
  assert.strictEqual(p.T.reloads, 1);
});

scenario('remixlet ops: a hostile page that replaces built-ins gets nothing and changes no answer', () => {
  const p = opsPage();
  const a = p.add('div', { class: 'promoted' });
  const pw = p.add('input', { type: 'password' });
  pw._value = 'hunter2';
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
    JSON.stringify = record('JSON.stringify');
    JSON.parse = record('JSON.parse');
    Object.keys = record('Object.keys');
    Object.defineProperty(Object.prototype, 'toJSON', getter('toJSON', undefined));
    Object.defineProperty(Object.prototype, '$h', getter('$h', 1));
    for (const [ctor, names] of [
      [Map, ['get', 'set', 'delete', 'forEach', 'has']],
      [WeakMap, ['get', 'set']],
      [String, ['toLowerCase', 'indexOf', 'slice', 'charCodeAt']],
      [Element, ['getAttribute', 'setAttribute', 'hasAttribute', 'removeAttribute', 'querySelectorAll', 'remove']],
      [Node, ['querySelectorAll']],
      [NodeList, ['item']],
      [CSSStyleDeclaration, ['setProperty', 'removeProperty']],
      [DOMTokenList, ['add', 'remove']],
      [WebSocket, ['send']],
    ]) {
      for (const n of names) ctor.prototype[n] = record(ctor.name + '.' + n);
    }
    for (const [ctor, names] of [
      [NodeList, ['length']],
      [Element, ['localName', 'classList']],
      [HTMLElement, ['style']],
      [HTMLInputElement, ['value']],
    ]) {
      for (const n of names) Object.defineProperty(ctor.prototype, n, getter(ctor.name + '.' + n, undefined));
    }
  `, p.ctx);
  const hs = p.ok(RX_A, 'queryAll', '.promoted');
  assert.deepStrictEqual(hs, [{ $h: 1 }]);
  p.ok(RX_A, 'hide', hs[0]);
  p.ok(RX_A, 'addClass', hs[0], 'seen');
  assert.strictEqual(p.ok(RX_A, 'value', p.ok(RX_A, 'query', 'input')), '');
  p.refused(/unknown element handle/, RX_B, 'hide', {});
  p.refused(/value attribute/, RX_A, 'query', 'input[value^=h]');
  const leaks = Array.from(p.ctx.leaks);
  assert.deepStrictEqual(leaks.map((l) => l[0]), [], 'the agent called replaced built-ins');
  // The page replaced Map.prototype.get in its realm; read with this realm's.
  const get = (el, name) => Map.prototype.get.call(el._attrs, name);
  assert.strictEqual(get(a, 'data-remixlet-hidden'), '');
  assert.strictEqual(get(a, 'class'), 'promoted seen');
});

// ---- Remixlet stylesheets. --------------------------------------------------------------------

// styleTree lists the tag names of every element in the fake document.
function styleElements(p) {
  const out = [];
  const walk = (n) => {
    for (const k of n._children) {
      if (k.tagName === 'style' || k.tagName === 'link') {
        out.push(k.tagName);
      }
      walk(k);
    }
  };
  walk(p.ctx.document);
  return out;
}

scenario('remixlet styles: two constructable sheets per remixlet (its own copy, then as written), adopted by the document, replaced by a second message', () => {
  const p = opsPage();
  const doc = p.ctx.document;
  const adopted = () => Array.from(doc._adopted);
  const sentBefore = p.sent().length;
  p.serverSend({ type: 'style', remixlet: RX_A, css: '.promoted { display: none !important }', own: '.mine { color: red }' });
  assert.strictEqual(adopted().length, 2, 'no sheets adopted');
  const [aOwn, a] = adopted();
  assert.ok(a instanceof p.ctx.CSSStyleSheet && aOwn instanceof p.ctx.CSSStyleSheet, 'not a constructable stylesheet');
  assert.strictEqual(a._text, '.promoted { display: none !important }');
  assert.strictEqual(aOwn._text, '.mine { color: red }');
  p.serverSend({ type: 'style', remixlet: RX_B, css: 'h1 { color: red }' });
  assert.strictEqual(adopted().length, 4);
  assert.deepStrictEqual(adopted().slice(2).map((x) => x._text), ['', 'h1 { color: red }']);
  // A second message for A replaces A's rules in the same sheets; B's are untouched.
  p.serverSend({ type: 'style', remixlet: RX_A, css: '.promoted { opacity: 0 }' });
  assert.strictEqual(adopted().length, 4);
  assert.strictEqual(adopted()[1], a);
  assert.strictEqual(a._text, '.promoted { opacity: 0 }');
  assert.strictEqual(aOwn._text, '');
  assert.strictEqual(adopted()[3]._text, 'h1 { color: red }');
  // The page drops the adopted sheets; the next message adopts A's again, once, in order.
  doc.adoptedStyleSheets = [];
  p.serverSend({ type: 'style', remixlet: RX_A, css: '' });
  assert.deepStrictEqual(adopted(), [aOwn, a]);
  assert.strictEqual(a._text, '');
  // Malformed messages change nothing.
  p.serverSend({ type: 'style', remixlet: 'rx_nope', css: 'x' });
  p.serverSend({ type: 'style', remixlet: RX_A, css: 5 });
  p.serverSend({ type: 'style', css: 'x' });
  assert.deepStrictEqual(adopted(), [aOwn, a]);
  assert.strictEqual(a._text, '');
  assert.deepStrictEqual(styleElements(p), [], 'a <style> or <link> element was made');
  assert.strictEqual(p.sent().length, sentBefore, 'the agent answered a style message');
  assert.deepStrictEqual(Array.from(p.T.warnings), []);
});

scenario('remixlet styles: a browser without observable arrays gets the sheet through the setter', () => {
  const p = page({ readyState: 'interactive', frozenAdopted: true });
  p.open();
  p.welcome('pt');
  const doc = p.ctx.document;
  doc.adoptedStyleSheets = [];
  p.serverSend({ type: 'style', remixlet: RX_A, css: 'a { color: red }', own: 'a.own {}' });
  p.serverSend({ type: 'style', remixlet: RX_B, css: 'b { color: blue }' });
  p.serverSend({ type: 'style', remixlet: RX_A, css: 'a { color: green }', own: 'a.own {}' });
  const adopted = Array.from(doc._adopted);
  assert.deepStrictEqual(adopted.map((s) => s._text), ['a.own {}', 'a { color: green }', '', 'b { color: blue }']);
  assert.ok(Object.isFrozen(doc._adopted));
});

scenario('remixlet styles: a hostile page that replaces built-ins gets nothing and cannot stop the sheet', () => {
  const p = opsPage();
  const doc = p.ctx.document;
  vm.runInContext(`
    globalThis.leaks = [];
    const R0 = Reflect.apply;
    const push0 = Array.prototype.push;
    const slice0 = Array.prototype.slice;
    const note = (entry) => R0(push0, leaks, [entry]);
    const record = (what) => function () { note([what, this, R0(slice0, arguments, [])]); return undefined; };
    const getter = (what, value) => ({ get() { note([what, this]); return value; }, set(v) { note([what + '=', this, v]); }, configurable: true });
    Reflect.apply = record('Reflect.apply');
    Function.prototype.call = record('call');
    Function.prototype.apply = record('apply');
    JSON.parse = record('JSON.parse');
    Object.defineProperty(Object.prototype, 'css', getter('css', 'h1 { background: url(https://evil.test/) }'));
    Object.defineProperty(Object.prototype, 'own', getter('own', 'h1 { background: url(https://evil.test/own) }'));
    Object.defineProperty(Object.prototype, 'remixlet', getter('remixlet', 'rx_0123abcd000000000000000000000000'));
    Array.prototype.push = record('Array.push');
    Array.prototype[Symbol.iterator] = record('Array.iterator');
    Map.prototype.get = record('Map.get');
    Map.prototype.set = record('Map.set');
    CSSStyleSheet.prototype.replaceSync = record('CSSStyleSheet.replaceSync');
    Object.defineProperty(Document.prototype, 'adoptedStyleSheets', getter('Document.adoptedStyleSheets', []));
    globalThis.CSSStyleSheet = function () { note(['new CSSStyleSheet']); };
  `, p.ctx);
  p.serverSend({ type: 'style', remixlet: RX_A, css: '.promoted { display: none !important }' });
  p.serverSend({ type: 'style', remixlet: RX_A, css: '.promoted { visibility: hidden }' });
  // Messages without the fields are not filled in from Object.prototype.
  p.serverSend({ type: 'style' });
  const leaks = Array.prototype.slice.call(p.ctx.leaks);
  assert.deepStrictEqual(leaks.map((l) => l[0]), [], 'the agent called replaced built-ins');
  // The page replaced Array.prototype[Symbol.iterator] in its realm; read with this realm's.
  const adopted = Array.prototype.slice.call(doc._adopted);
  assert.strictEqual(adopted.length, 2);
  assert.strictEqual(adopted[0]._text, '', 'the own copy was filled from Object.prototype');
  assert.strictEqual(adopted[1]._text, '.promoted { visibility: hidden }');
  assert.ok(adopted[1] instanceof p.T.classes.CSSStyleSheet, 'the page\'s CSSStyleSheet was used');
});

let failed = 0;
scenario('remixlet ops: a browser without what an op needs refuses it clearly', () => {
  const p = opsPage();
  p.add('div', { class: 'x' });
  const h = p.ok(RX_A, 'query', '.x');
  p.refused(/cannot parse HTML inertly/, RX_A, 'setHTML', h, '<b>x</b>');
  p.refused(/cannot check addresses|only links/, RX_A, 'setAttr', h, 'href', '/a');
  p.refused(/cannot measure/, RX_A, 'rect', h);
  p.refused(/cannot read computed styles/, RX_A, 'style', h, 'color');
  p.refused(/cannot check clicks|HTML elements/, RX_A, 'click', h);
  p.refused(/cannot clone/, RX_A, 'clone', h, true);
  p.refused(/element <script> refused/, RX_A, 'create', { tag: 'script' });
  p.refused(/position must be/, RX_A, 'insert', h, h, 'inside');
  // The agent still works after the refusals.
  assert.deepStrictEqual(p.ok(RX_A, 'query', '.x'), h);
});

scenario('remixlet release: drops the handle table and empties the stylesheet', () => {
  const p = opsPage();
  p.add('div', { class: 'promoted' });
  p.serverSend({ type: 'style', remixlet: RX_A, css: '.promoted { display: none }' });
  const h = p.ok(RX_A, 'query', '.promoted');
  p.ok(RX_A, 'hide', h);
  p.ok(RX_B, 'query', '.promoted');
  p.serverSend({ type: 'release', remixlet: RX_A });
  p.refused(/unknown element handle/, RX_A, 'hide', h);
  assert.deepStrictEqual(p.ok(RX_A, 'query', '.promoted'), { $h: 1 }, 'a fresh table starts at 1');
  assert.deepStrictEqual(p.ok(RX_B, 'query', '.promoted'), { $h: 1 }, 'the other remixlet keeps its table');
  const sheets = p.ctx.document.adoptedStyleSheets;
  assert.strictEqual(sheets.length, 2);
  assert.deepStrictEqual([sheets[0]._text, sheets[1]._text], ['', ''], 'the sheets are emptied');
  p.serverSend({ type: 'release', remixlet: 'junk' });
});

// ---- The page policy of issue 12: loaders, addresses in values, key events, layout, forms. -------

const SVG = 'http://www.w3.org/2000/svg';
const MATHML = 'http://www.w3.org/1998/Math/MathML';

// installPolicyAPIs adds what the page policy's checks read (run in the page's realm before the
// agent starts): URL, namespaces, open shadow roots, editability, computed styles and boxes.
function installPolicyAPIs(T) {
  globalThis.URL = globalThis.__URL;
  Object.defineProperty(Element.prototype, 'namespaceURI', { get() { return this._ns || 'http://www.w3.org/1999/xhtml'; }, configurable: true });
  Object.defineProperty(Element.prototype, 'shadowRoot', { get() { return this._openRoot || null; }, configurable: true });
  Object.defineProperty(HTMLElement.prototype, 'isContentEditable', { get() { return this.getAttribute('contenteditable') === 'true'; }, configurable: true });
  class DOMRectReadOnly {
    constructor(w) { this._w = w; }
    get x() { return 0; }
    get y() { return 0; }
    get width() { return this._w; }
    get height() { return 20; }
  }
  globalThis.DOMRectReadOnly = DOMRectReadOnly;
  Element.prototype.getBoundingClientRect = function () { return new DOMRectReadOnly(this._width || 100); };
  globalThis.getComputedStyle = function (el) {
    const d = new CSSStyleDeclaration();
    d._computed = el._computed || {};
    return d;
  };
  CSSStyleDeclaration.prototype.getPropertyValue = function (n) { return (this._computed && this._computed[n]) || ''; };
  // A form's action and method as a browser reads them (the getters work on any element).
  class HTMLFormElement extends HTMLElement {
    get action() { return new URL(this.getAttribute('action') || '', T.href).href; }
    get method() { const m = (this.getAttribute('method') || '').toLowerCase(); return m === 'post' || m === 'dialog' ? m : 'get'; }
  }
  globalThis.HTMLFormElement = HTMLFormElement;
  T.policy = true;
}

function policyPage() {
  const p = page({ readyState: 'interactive', before: installPolicyAPIs });
  p.open();
  p.welcome('pt');
  const doc = p.ctx.document;
  p.body = p.T.body;
  p.add = (tag, attrs, parent, ns) => {
    const e = doc.createElement(tag);
    if (ns) {
      e._ns = ns;
    }
    for (const k of Object.keys(attrs || {})) {
      e.setAttribute(k, attrs[k]);
    }
    p.T.attach(parent || p.body, e);
    return e;
  };
  let nextID = 1;
  p.op = (remixlet, op, ...args) => {
    const id = nextID++;
    // p.addrs stands for Op.addrs, the addresses the proxy checked (proxy/remixlets_policy.go).
    p.serverSend(p.addrs ? { type: 'op', id, remixlet, op, args, addrs: p.addrs } : { type: 'op', id, remixlet, op, args });
    const results = p.sent().filter((m) => m.type === 'result' && m.id === id);
    assert.strictEqual(results.length, 1, 'one result for op ' + id);
    return results[0];
  };
  p.ok = (remixlet, op, ...args) => {
    const r = p.op(remixlet, op, ...args);
    assert.strictEqual(r.ok, true, op + ' ' + JSON.stringify(args) + ' refused: ' + r.error);
    return r.value;
  };
  p.refused = (pattern, remixlet, op, ...args) => {
    const r = p.op(remixlet, op, ...args);
    assert.strictEqual(r.ok, false, op + ' ' + JSON.stringify(args) + ' was not refused');
    assert.match(r.error, pattern);
  };
  p.h = (sel) => p.ok(RX_A, 'query', sel);
  return p;
}

scenario('page policy: no attribute writes on elements that load, navigate or change how the page is fetched', () => {
  const p = policyPage();
  const loaders = {
    meta: p.add('meta', { 'http-equiv': 'refresh', content: '3600' }, p.T.head),
    link: p.add('link', { rel: 'stylesheet', href: '/a.css' }, p.T.head),
    style: p.add('style', {}, p.T.head),
    base: p.add('base', { href: '/' }, p.T.head),
    iframe: p.add('iframe', { src: '/frame' }),
    form: p.add('form', { action: '/ok' }),
    video: p.add('video', {}),
    source: p.add('source', {}),
    object: p.add('object', {}),
    'input[type=image]': p.add('input', { type: 'image' }),
    set: p.add('set', { attributeName: 'fill' }, null, SVG),
    feImage: p.add('feImage', {}, null, SVG),
    mi: p.add('mi', {}, null, MATHML),
  };
  // The SVG link is an <a> like an HTML link, in another namespace.
  const svgA = p.add('a', { class: 'svga' }, null, SVG);
  loaders['a.svga'] = svgA;
  for (const sel of Object.keys(loaders)) {
    const h = p.h(sel);
    assert.ok(h, 'no handle for ' + sel);
    for (const name of ['content', 'http-equiv', 'name', 'media', 'type', 'id', 'data-x', 'width', 'to', 'values', 'loading', 'tabindex']) {
      p.refused(/elements load, navigate or change how the page is fetched; on them a remixlet may set only class, hidden, title, lang, dir and aria-\* attributes/, RX_A, 'setAttr', h, name, 'x');
    }
    for (const name of ['class', 'hidden', 'lang', 'dir', 'aria-label']) {
      p.ok(RX_A, 'setAttr', h, name, 'x');
    }
    if (sel === 'link' || sel === 'style') {
      p.refused(/load, navigate/, RX_A, 'setAttr', h, 'title', 'Alternate');
    } else {
      p.ok(RX_A, 'setAttr', h, 'title', 'x');
    }
  }
  assert.strictEqual(loaders.meta.getAttribute('content'), '3600', 'the refresh changed');
  assert.strictEqual(loaders.meta.getAttribute('http-equiv'), 'refresh');
  assert.strictEqual(loaders.set.getAttribute('to'), null);
  // Ordinary elements take ordinary attributes; loader-only ones are refused everywhere.
  const div = p.add('div', { class: 'plain' });
  const hd = p.h('div.plain');
  p.ok(RX_A, 'setAttr', hd, 'data-x', '1');
  p.ok(RX_A, 'setAttr', hd, 'width', '2');
  for (const name of ['content', 'rel', 'referrerpolicy', 'crossorigin', 'sandbox', 'attributename', 'charset']) {
    p.refused(/loads or runs something/, RX_A, 'setAttr', hd, name, 'x');
  }
  assert.strictEqual(div.getAttribute('data-x'), '1');
  // No text or content inside them either, but a form's content is the page's UI.
  p.refused(/the text of video elements cannot be set/, RX_A, 'setText', p.h('video'), 'x');
  p.refused(/the text of set elements cannot be set/, RX_A, 'setText', p.h('set'), 'x');
  p.ok(RX_A, 'setText', p.h('form'), 'form text');
  const made = p.ok(RX_A, 'create', { tag: 'span', text: 'made' });
  p.refused(/nothing can be inserted into video elements/, RX_A, 'insert', p.h('video'), made);
  p.refused(/nothing can be inserted into object elements/, RX_A, 'insert', p.h('object'), made);
  p.ok(RX_A, 'insert', p.h('form'), made);
});

scenario('page policy: an address anywhere in an attribute value follows the address rule', () => {
  const p = policyPage();
  p.add('img', { class: 'lazy', 'data-src': '/pic.png' });
  const h = p.h('img.lazy');
  for (const [name, value] of [
    ['data-src', 'https://witness.test/x.png'],
    ['data-src', '//witness.test/x.png'],
    ['data-src', '\\\\witness.test\\x.png'],
    ['data-src', 'ht\ttps://witness.test/t.png'],
    ['data-srcset', 'a.png 1x, https://witness.test/b.png 2x'],
    ['data-config', '{"u":"https://witness.test/j"}'],
    ['title', 'https://witness.test/'],
  ]) {
    // Refused by the address rule, or first by the check that only addresses the proxy read go in.
    p.refused(/its value holds the address .*witness\.test.*(is not on the page's origin|not an address the proxy checked)/, RX_A, 'setAttr', h, name, value);
  }
  p.refused(/wss: addresses are not allowed/, RX_A, 'setAttr', h, 'data-socket', 'wss://witness.test/s');
  assert.strictEqual(p.T.body._children[0].getAttribute('data-src'), '/pic.png');
  p.addrs = ['https://shop.test/pic2.png', 'https://shop.test/pic3.png'];
  p.ok(RX_A, 'setAttr', h, 'data-src', 'https://shop.test/pic2.png');
  p.ok(RX_A, 'setAttr', h, 'data-src', '/pic3.png');
  p.ok(RX_A, 'setAttr', h, 'title', 'and // or, a/b');
  // A host the proxy allowed for this op (the remixlet's own site or fetch: host) is allowed.
  p.serverSend({ type: 'op', id: 900, remixlet: RX_A, op: 'setAttr', args: [h, 'data-src', 'https://cdn.own.test/a.png'], hosts: ['cdn.own.test'], addrs: ['https://cdn.own.test/a.png'] });
  assert.strictEqual(p.sent().find((m) => m.type === 'result' && m.id === 900).ok, true);
});

scenario('page policy: key and input events of password fields, in shadow roots too, carry no key or value', () => {
  const p = policyPage();
  const C = p.T.classes;
  const events = () => p.sent().filter((m) => m.type === 'event').map((m) => m.event);
  const hbody = p.h('body');
  p.ok(RX_A, 'on', hbody, 'keydown', { $listener: 1 });
  p.ok(RX_A, 'on', hbody, 'input', { $listener: 2 });
  // An open shadow root: event.target is the host; composedPath() starts at the field.
  const host = p.add('x-login', {});
  const root = host.attachShadow({ mode: 'open' });
  host._openRoot = root;
  const pw = p.T.attach(root, p.ctx.document.createElement('input'));
  pw.setAttribute('type', 'password');
  pw._value = 'hunter2';
  const txt = p.T.attach(root, p.ctx.document.createElement('input'));
  txt._value = 'alice';
  const fire = (type, target, key) => {
    const ev = type === 'keydown' ? new C.KeyboardEvent(key) : new C.Event(true);
    let n = target;
    while (n && !(n instanceof C.ShadowRoot)) {
      n = n._parent;
    }
    ev._target = n ? n._host : target; // retargeted as a listener outside the root sees it
    ev._path = target._pathOverride || null;
    if (!ev._path) {
      ev._path = []; // the path from the real target, through the open root to its host
      for (let k = target; k; k = k._parent || k._host || null) {
        ev._path.push(k);
      }
    }
    p.T.fire(p.T.body, type, ev);
  };
  fire('keydown', pw, 'h');
  fire('input', pw);
  fire('keydown', txt, 'a');
  fire('input', txt);
  assert.deepStrictEqual(events().map((e) => [e.type, e.key, e.value]), [
    ['keydown', 'a', 'alice'], ['input', undefined, 'alice'],
  ]);
  // A closed shadow root: the path stops at its host, which may hold a password field.
  const before = events().length;
  const closed = p.add('x-secure', {});
  closed._pathOverride = [closed, p.T.body, p.T.html, p.ctx.document];
  fire('keydown', closed, 'h');
  const div = p.add('div', {});
  div._pathOverride = [div, p.T.body, p.T.html, p.ctx.document];
  fire('keydown', div, 'u');
  // What can host no shadow root, or is edited itself, or nothing focused (body), is seen.
  const button = p.add('button', {});
  button._pathOverride = [button, p.T.body, p.T.html, p.ctx.document];
  fire('keydown', button, 'j');
  const editor = p.add('div', { contenteditable: 'true' });
  editor._pathOverride = [editor, p.T.body, p.T.html, p.ctx.document];
  p.T.selection.node = editor;
  fire('keydown', editor, 'k');
  // An editable element whose key came from a field in its closed shadow root: the caret is
  // then reported outside it (at its parent), and the key is withheld.
  p.T.selection.node = p.T.body;
  fire('keydown', editor, 'q');
  p.T.selection.node = null;
  p.T.body._pathOverride = [p.T.body, p.T.html, p.ctx.document];
  fire('keydown', p.T.body, 'n');
  // Fields the page marks as secret with autocomplete are password fields to a remixlet.
  const otp = p.add('input', { autocomplete: 'one-time-code' });
  otp._value = '123456';
  const card = p.add('input', { autocomplete: 'billing cc-number' });
  card._value = '4111111111111111';
  fire('keydown', otp, '1');
  fire('input', card);
  assert.deepStrictEqual(events().slice(before).map((e) => [e.key, e.value]), [
    ['j', undefined], ['k', undefined], ['n', undefined],
  ]);
  // Events that count no keys on what may host a closed shadow root still arrive, without a
  // value: the person's click on a heading or a div reaches a remixlet's click handler (e2e: the
  // click-script variant of the client redirects). A password field's events, and change
  // events where one may be typed, do not.
  p.ok(RX_A, 'on', hbody, 'click', { $listener: 3 });
  p.ok(RX_A, 'on', hbody, 'change', { $listener: 4 });
  const clicks = events().length;
  const h1 = p.add('h1', {});
  h1._pathOverride = [h1, p.T.body, p.T.html, p.ctx.document];
  fire('click', h1);
  fire('click', div);
  fire('click', closed);
  fire('click', otp);
  fire('change', card);
  fire('change', closed);
  fire('keydown', div, 'v');
  fire('input', otp);
  assert.deepStrictEqual(events().slice(clicks).map((e) => [e.type, e.key, e.value]), [
    ['click', undefined, ''], ['click', undefined, ''], ['click', undefined, ''],
  ]);
  const [hotp, hcard] = p.ok(RX_A, 'queryAll', 'input');
  assert.strictEqual(p.ok(RX_A, 'value', hotp), '');
  assert.strictEqual(p.ok(RX_A, 'value', hcard), '');
  p.refused(/password field cannot be changed/, RX_A, 'setAttr', hcard, 'autocomplete', 'off');
  p.refused(/field-state pseudo-classes/, RX_A, 'query', 'input:placeholder-shown');
  p.refused(/field-state pseudo-classes/, RX_A, 'query', 'input:invalid');
  p.refused(/comments/, RX_A, 'query', 'input:/**/invalid');
});

scenario('page policy: no sizes while a password field is sized by its content; field-sizing refused', () => {
  const p = policyPage();
  const pw = p.add('input', { type: 'password' });
  const hpw = p.h('input');
  assert.deepStrictEqual(p.ok(RX_A, 'rect', hpw), { x: 0, y: 0, width: 100, height: 20 });
  p.ok(RX_A, 'style', hpw, 'width');
  // A value the page put there, untouched, is no reason to refuse (the e2e tests cover the
  // refusal once the person typed: TestRedteamPageStylesTellRemixletsNothing).
  pw._value = 'hunter2';
  p.ok(RX_A, 'rect', hpw);
  p.refused(/refused: it makes a field's size follow its text/, RX_A, 'setStyle', hpw, { fieldSizing: 'content' });
  p.refused(/refused: it makes a field's size follow its text/, RX_A, 'setStyle', hpw, { 'field-sizing': 'content' });
  pw._computed = { 'field-sizing': 'content' };
  p.refused(/dom.rect is refused on this page: a password field here is sized by its content/, RX_A, 'rect', p.h('body'));
  p.refused(/dom.style is refused on this page/, RX_A, 'style', hpw, ['width']);
  pw.setAttribute('type', 'text');
  assert.strictEqual(p.ok(RX_A, 'rect', hpw).width, 100);
});

scenario('page policy: a text field the page masks with -webkit-text-security reads back empty, also once unmasked', () => {
  const p = policyPage();
  const box = p.add('div', { class: 'secure' });
  const pin = p.add('input', { class: 'pin', value: '8642' }, box);
  pin._value = '8642';
  pin._computed = { '-webkit-text-security': 'disc' };
  const plain = p.add('input', { class: 'plain', value: 'hello' });
  plain._value = 'hello';
  plain._computed = { '-webkit-text-security': 'none' };
  const hpin = p.h('.pin');
  assert.strictEqual(p.ok(RX_A, 'value', hpin), '');
  assert.strictEqual(p.ok(RX_A, 'attr', hpin, 'value'), '');
  assert.strictEqual(p.ok(RX_A, 'value', p.h('.plain')), 'hello', 'an unmasked text field reads back');
  // A write that unmasks it (here: an ancestor's class; the fake DOM's styles do not follow, so
  // the mask goes by hand after the write) leaves it sensitive.
  const pin2 = p.add('input', { class: 'pin2', value: '1357' }, box);
  pin2._value = '1357';
  pin2._computed = { '-webkit-text-security': 'circle' };
  p.ok(RX_A, 'removeClass', p.h('.secure'), 'secure');
  pin2._computed = {};
  assert.strictEqual(p.ok(RX_A, 'value', p.h('.pin2')), '', 'the field was remembered before the write');
  pin._computed = {};
  assert.strictEqual(p.ok(RX_A, 'value', hpin), '', 'a field seen masked stays sensitive');
});

scenario('page policy: a password field is not moved to another form', () => {
  const p = policyPage();
  const login = p.add('form', { class: 'login', action: '/login' });
  const box = p.add('div', { class: 'box' }, login);
  p.add('input', { type: 'password', class: 'pw' }, box);
  p.add('form', { class: 'search', action: 'https://search.test/' });
  p.add('div', { class: 'side' });
  p.add('input', { type: 'password', form: 'login', class: 'pw2' });
  const [hlogin, hbox, hpw, hsearch, hside, hpw2] = ['form.login', 'div.box', 'input.pw', 'form.search', 'div.side', 'input.pw2'].map(p.h);
  p.refused(/a password field cannot be moved to another form/, RX_A, 'insert', hsearch, hbox);
  p.refused(/a password field cannot be moved to another form/, RX_A, 'insert', hsearch, hpw);
  p.refused(/a password field cannot be moved to another form/, RX_A, 'insert', hside, hpw);
  assert.strictEqual(box.parentNode, login);
  // The whole form may move, the field may move inside its form, a field that names its form
  // with the form attribute may move anywhere, and so may what holds no password field.
  p.ok(RX_A, 'insert', hside, hlogin);
  p.ok(RX_A, 'insert', hlogin, hpw);
  p.ok(RX_A, 'insert', hside, hpw2);
  p.ok(RX_A, 'insert', hlogin, p.ok(RX_A, 'create', { tag: 'span' }));
  // Nothing goes into a form sent to another site (what it sends is the page's own).
  p.refused(/nothing can be inserted into a form that is sent to https:\/\/search.test\//, RX_A, 'insert', hsearch, hpw2);
  p.refused(/nothing can be inserted into a form that is sent to https:\/\/search.test\//, RX_A, 'insert', hsearch, p.ok(RX_A, 'create', { tag: 'span' }));
});

scenario('page policy: a remixlet does not change what a form sent to another site sends', () => {
  const p = policyPage();
  const away = p.add('form', { class: 'away', action: 'https://search.test/q' });
  const q = p.add('input', { class: 'q', name: 'q' }, away);
  const box = p.add('div', { class: 'inaway' }, away);
  const home = p.add('form', { class: 'home', action: '/save', method: 'post' });
  p.add('input', { class: 'hq', name: 'hq' }, home);
  const dlg = p.add('form', { class: 'dlg', action: 'https://search.test/d', method: 'dialog' });
  p.add('input', { class: 'dq', name: 'dq' }, dlg);
  const [hq, hbox, hhq, hdq] = ['input.q', 'div.inaway', 'input.hq', 'input.dq'].map(p.h);
  const away1 = /the element belongs to a form that is sent to https:\/\/search.test\/q, not to the page's origin/;
  p.refused(away1, RX_A, 'setAttr', hq, 'value', 'data');
  p.refused(away1, RX_A, 'setAttr', hq, 'name', 'other');
  p.refused(away1, RX_A, 'setText', hbox, 'data');
  p.refused(away1, RX_A, 'setHTML', hbox, '<input name="x" value="data">');
  // (dom.click of its checkbox: testdata/pageagent/rx_click_test.js; this fake cannot click.)
  assert.strictEqual(q.getAttribute('value'), null);
  // What cannot change what is sent stays allowed there; the page's own forms take writes.
  p.ok(RX_A, 'setAttr', hq, 'class', 'wide');
  p.ok(RX_A, 'setAttr', hq, 'aria-label', 'Search');
  p.ok(RX_A, 'setAttr', hhq, 'value', 'mine');
  p.ok(RX_A, 'setAttr', hdq, 'value', 'dialog forms send nothing');
});

scenario('page policy: each dom.addStyle piece is a sheet of its own, after style.css, each after its own copy', () => {
  const p = policyPage();
  const doc = p.ctx.document;
  const texts = () => Array.from(doc._adopted).map((s) => s._text || '');
  // A piece before any style.css: the remixlet's style.css sheets (empty) still come first.
  p.ok(RX_A, 'addStyle', 'a { color: red } /*', 'a.o {}');
  p.serverSend({ type: 'style', remixlet: RX_A, css: 'h1 { color: blue }', own: 'h1.o {}' });
  p.ok(RX_A, 'addStyle', '*/ b { background: url(https://witness.test/x) }');
  assert.deepStrictEqual(texts(), ['h1.o {}', 'h1 { color: blue }', 'a.o {}', 'a { color: red } /*', '', '*/ b { background: url(https://witness.test/x) }'],
    'the pieces were joined: the browser would read the second inside the first\'s comment');
  p.ok(RX_B, 'addStyle', 'i { color: green }');
  assert.strictEqual(texts().length, 10);
  // A release empties A's sheets; a restart reuses them in order.
  const sheets = Array.from(doc._adopted);
  p.serverSend({ type: 'release', remixlet: RX_A });
  assert.deepStrictEqual(texts(), ['', '', '', '', '', '', '', '', '', 'i { color: green }']);
  p.ok(RX_A, 'addStyle', 'u { color: red }');
  assert.deepStrictEqual(Array.from(doc._adopted), sheets);
  assert.deepStrictEqual(texts(), ['', '', '', 'u { color: red }', '', '', '', '', '', 'i { color: green }']);
  // At most MAX_STYLE_PIECES pieces, refused beyond (not let through).
  for (let i = 1; i < 256; i++) {
    p.ok(RX_A, 'addStyle', '.p' + i + ' { color: red }');
  }
  p.refused(/more than 256 stylesheets/, RX_A, 'addStyle', '.x { color: red }');
  assert.strictEqual(texts().length, 2 * (1 + 256 + 2));
});

scenario('remixlet styles: at the first key of a secret the sheets as written are emptied for the rest of the document; the own copies stay', () => {
  const p = policyPage();
  const doc = p.ctx.document;
  const texts = () => Array.from(doc._adopted).map((s) => s._text || '');
  p.serverSend({ type: 'style', remixlet: RX_A, css: 'body:has(.s3) .p3 { display: block }', own: '.p3:where([data-remixlet-own]) {}' });
  p.ok(RX_A, 'addStyle', '.page-rule { color: red }', '.own-rule {}');
  assert.deepStrictEqual(texts(), ['.p3:where([data-remixlet-own]) {}', 'body:has(.s3) .p3 { display: block }', '.own-rule {}', '.page-rule { color: red }']);
  const pw = typeSecret(p);
  assert.deepStrictEqual(texts(), ['.p3:where([data-remixlet-own]) {}', '', '.own-rule {}', ''], 'the sheets as written outlived the first key');
  // Later sheets and pieces: their own copies only, also once the field is emptied.
  pw._value = '';
  p.serverSend({ type: 'style', remixlet: RX_B, css: '#banner { display: none }', own: '#banner:where([data-remixlet-own]) {}' });
  p.ok(RX_A, 'addStyle', '.later { color: red }', '.later-own {}');
  assert.deepStrictEqual(texts(), ['.p3:where([data-remixlet-own]) {}', '', '.own-rule {}', '', '#banner:where([data-remixlet-own]) {}', '', '.later-own {}', '']);
});

scenario('remixlet styles: the own copies of a remixlet\'s pieces have a budget of their own; past it a piece has none', () => {
  const p = policyPage();
  const texts = () => Array.from(p.ctx.document._adopted).map((s) => s._text || '');
  const big = '.o{}' + ' '.repeat(600000);
  p.ok(RX_A, 'addStyle', '.a { color: red }', big);
  p.ok(RX_A, 'addStyle', '.b { color: red }', big);
  assert.deepStrictEqual(texts().slice(2).map((x) => x.length), [big.length, 17, 0, 17]);
  // A release gives the budget back.
  p.serverSend({ type: 'release', remixlet: RX_A });
  p.ok(RX_A, 'addStyle', '.c { color: red }', big);
  assert.strictEqual(texts()[2].length, big.length);
});

scenario('remixlet styles: no sheet as written is filled while a sensitive field holds a value nobody typed', () => {
  const p = policyPage();
  const doc = p.ctx.document;
  const texts = () => Array.from(doc._adopted).map((s) => s._text || '');
  const pw = p.add('input', { type: 'password', id: 'pw' });
  pw._value = 'filled by the page';
  p.serverSend({ type: 'style', remixlet: RX_A, css: '[data-len="7"] .p7 { display: block }', own: '.p7:where([data-remixlet-own]) {}' });
  assert.deepStrictEqual(texts(), ['.p7:where([data-remixlet-own]) {}', '']);
});

scenario('remixlet elements: what dom.create makes carries the own mark; the page\'s elements do not', () => {
  const p = policyPage();
  p.add('div', { class: 'page' });
  const made = p.ok(RX_A, 'create', { tag: 'div', attrs: { class: 'bar' }, children: [{ tag: 'button', text: 'Go' }] });
  p.ok(RX_A, 'insert', p.h('div.page'), made);
  p.ok(RX_A, 'addClass', p.h('div.page'), 'mine');
  p.refused(/the remixlets' marks/, RX_A, 'setAttr', p.h('div.page'), 'data-remixlet-own', '');
  const own = (sel) => Array.from(p.ctx.document.querySelectorAll(sel)._a, (e) => e.getAttribute('data-remixlet-own'));
  assert.deepStrictEqual(own('div.bar'), ['']);
  assert.deepStrictEqual(own('button'), ['']);
  assert.deepStrictEqual(own('div.page'), [null], 'the page\'s element got the own mark');
  // (dom.setHTML and dom.clone, which this fake cannot do: e2e TestRemixletOwnStylesOutliveTheFirstKey.)
});

// ---- rmx services: clipboard, notifications, menu, open. ----------------------------------------

// installServices adds the browser APIs the rmx services use (run in the page's realm before the
// agent starts, with the page's __test).
function installServices(T) {
  T.clipboardWrites = [];
  T.active = false;
  T.clipboardFails = false;
  T.notifications = [];
  T.notificationPermission = 'default';
  T.assigned = [];
  T.windowFocused = 0;
  class Clipboard {
    writeText(t) {
      if (!(this instanceof Clipboard)) {
        throw new TypeError('Illegal invocation'); // the browser's brand check
      }
      T.clipboardWrites.push(String(t));
      return T.clipboardFails ? Promise.reject(new Error('denied')) : Promise.resolve();
    }
    readText() { throw new Error('the agent read the clipboard'); }
  }
  class UserActivation { get isActive() { return T.active; } }
  class Notification {
    constructor(title, o) { T.notifications.push({ title: title, body: o.body, proto: Object.getPrototypeOf(o) }); }
    static get permission() { return T.notificationPermission; }
    static requestPermission() { throw new Error('the agent asked for the notification permission'); }
  }
  globalThis.Clipboard = Clipboard;
  globalThis.UserActivation = UserActivation;
  globalThis.Notification = Notification;
  // Like the browser's: the two objects come from getters on Navigator.prototype, made on first
  // use (T.navReads counts the reads).
  const clipboard = new Clipboard();
  const activation = new UserActivation();
  T.navReads = 0;
  class Navigator {
    get clipboard() { T.navReads++; return clipboard; }
    get userActivation() { T.navReads++; return activation; }
  }
  globalThis.Navigator = Navigator;
  globalThis.navigator = new Navigator();
  Object.defineProperty(globalThis.location, 'assign', { value: function (u) { T.assigned.push(String(u)); } });
  globalThis.focus = function () { T.windowFocused++; };
  globalThis.URL = globalThis.__URL;
}

function servicesPage(options) {
  const p = page(Object.assign({ readyState: 'interactive', remixlets: true, before: installServices }, options || {}));
  p.open();
  p.welcome('pt');
  p.tray = () => p.T.html._children.find((k) => k.hasAttribute && k.hasAttribute('data-remixproxy-tray')) || null;
  p.trayShadow = () => p.T.shadows.find((s) => s._host === p.tray());
  p.byClass = (cls) => {
    const out = [];
    const walk = (n) => {
      for (const k of n._children) {
        if (k.getAttribute && (k.getAttribute('class') || '').split(' ').includes(cls)) {
          out.push(k);
        }
        walk(k);
      }
    };
    walk(p.trayShadow());
    return out;
  };
  p.toasts = () => p.byClass('toast').map((t) => Array.from(t._children, (c) => { assert.strictEqual(c._text, '', 'a toast text node'); return c.getAttribute('data-text'); }));
  p.results = () => p.sent().filter((m) => m.type === 'result');
  return p;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

scenario('clipboard: writes text only during a user gesture, never reads', async () => {
  const p = servicesPage();
  assert.strictEqual(p.T.navReads, 0, 'navigator.clipboard or userActivation read before any clipboard op');
  p.serverSend({ type: 'clipboard', id: 1, remixlet: RX_A, text: 'copy me' });
  await tick();
  let r = p.results().find((m) => m.id === 1);
  assert.strictEqual(r.ok, false);
  assert.strictEqual(r.error, 'the clipboard can be written only right after you click or press a key on the page');
  assert.deepStrictEqual(Array.from(p.T.clipboardWrites), [], 'written without a gesture');

  p.T.active = true;
  p.serverSend({ type: 'clipboard', id: 2, remixlet: RX_A, text: '<b>copy</b> me' });
  await tick();
  r = p.results().find((m) => m.id === 2);
  assert.strictEqual(r.ok, true, 'refused with a gesture: ' + r.error);
  assert.deepStrictEqual(Array.from(p.T.clipboardWrites), ['<b>copy</b> me']);

  p.T.clipboardFails = true;
  p.serverSend({ type: 'clipboard', id: 3, remixlet: RX_A, text: 'x' });
  await tick();
  r = p.results().find((m) => m.id === 3);
  assert.strictEqual(r.ok, false);
  assert.match(r.error, /browser refused/);

  p.serverSend({ type: 'clipboard', id: 4, remixlet: 'junk', text: 'x' });
  p.serverSend({ type: 'clipboard', id: 5, remixlet: RX_A, text: { not: 'text' } });
  await tick();
  assert.strictEqual(p.results().find((m) => m.id === 4).ok, false);
  assert.strictEqual(p.results().find((m) => m.id === 5).ok, false);
  assert.strictEqual(p.T.clipboardWrites.length, 2);
});

scenario('clipboard: a page that replaces built-ins after start-up cannot fake a gesture or see the text', async () => {
  const p = servicesPage();
  const g = p.ctx;
  let leaked = 0;
  vm.runInContext(`
    Object.defineProperty(UserActivation.prototype, 'isActive', { get() { return true; } });
    Clipboard.prototype.writeText = function () { globalThis.__leak = (globalThis.__leak || 0) + 1; return Promise.resolve(); };
    Promise.prototype.then = function () { globalThis.__leak = (globalThis.__leak || 0) + 1; };
  `, g);
  p.serverSend({ type: 'clipboard', id: 1, remixlet: RX_A, text: 'secret' });
  await tick();
  leaked = g.__leak || 0;
  assert.strictEqual(leaked, 0, 'the page saw the call');
  assert.strictEqual(p.results().find((m) => m.id === 1).ok, false, 'a replaced isActive getter faked a gesture');

  // The clipboard and activation objects are read at the op, through the getters captured at
  // start: a page that replaces them, or navigator, gets neither the text nor a faked gesture.
  const q = servicesPage();
  vm.runInContext(`
    const fake = { writeText(t) { globalThis.__stolen = t; return Promise.resolve(); } };
    Object.defineProperty(Navigator.prototype, 'clipboard', { get() { return fake; } });
    Object.defineProperty(Navigator.prototype, 'userActivation', { get() { return { isActive: true }; } });
    globalThis.navigator = { clipboard: fake, userActivation: { isActive: true } };
  `, q.ctx);
  q.serverSend({ type: 'clipboard', id: 1, remixlet: RX_A, text: 'secret' });
  await tick();
  assert.strictEqual(q.ctx.__stolen, undefined, 'the page\'s clipboard got the text');
  assert.strictEqual(q.results().find((m) => m.id === 1).ok, false, 'a replaced userActivation getter faked a gesture');
  q.T.active = true;
  q.serverSend({ type: 'clipboard', id: 2, remixlet: RX_A, text: 'mine' });
  await tick();
  assert.strictEqual(q.ctx.__stolen, undefined, 'the page\'s clipboard got the text');
  assert.deepStrictEqual(Array.from(q.T.clipboardWrites), ['mine'], 'the real clipboard was not written');
});

scenario('services where no remixlet ran at the load: nothing captured at start, the page\'s later replacements never called, the clipboard asks for a reload', async () => {
  const p = servicesPage({ remixlets: false, readyState: 'complete' });
  p.T.notificationPermission = 'granted';
  // The page's scripts, after the agent's start: they replace what the services would call.
  const g = p.T.global;
  const trapped = [];
  g.Notification = class { constructor(t) { trapped.push('Notification ' + t); } static get permission() { trapped.push('permission'); return 'granted'; } };
  Object.defineProperty(g.Navigator.prototype, 'clipboard', { get() { trapped.push('clipboard'); return { writeText(t) { trapped.push('writeText ' + t); return Promise.resolve(); } }; } });
  Object.defineProperty(g.Navigator.prototype, 'userActivation', { get() { trapped.push('userActivation'); return { isActive: true }; } });
  p.T.active = true;
  p.serverSend({ type: 'notify', remixlet: RX_A, source: 'live', title: 'switched on' });
  assert.deepStrictEqual(p.toasts().map((t) => t.slice(0, 2)), [['live', 'switched on']], 'no toast');
  p.serverSend({ type: 'clipboard', id: 7, remixlet: RX_A, text: 'copy me' });
  await tick();
  const r = p.sent().filter((m) => m.type === 'result').find((m) => m.id === 7);
  assert.strictEqual(r.ok, false);
  assert.strictEqual(r.error, 'reload the page to let this remixlet write the clipboard');
  assert.deepStrictEqual(trapped, [], 'the services called what the page replaced after the agent started');
  assert.deepStrictEqual(Array.from(p.T.notifications), [], 'a system notification from a constructor not captured at start');
  assert.deepStrictEqual(Array.from(p.T.clipboardWrites), []);
  assert.strictEqual(p.T.navReads, 0);
});

scenario('notifications: a toast shows HTML as text; system notification only when already granted; rate', () => {
  const p = servicesPage();
  const html = '<img src=x onerror="alert(1)"><b>bold</b>';
  p.serverSend({ type: 'notify', remixlet: RX_A, source: 'price watch', title: html, body: '<script>x()</' + 'script>' });
  assert.deepStrictEqual(p.toasts(), [['price watch', html, '<script>x()</' + 'script>']]);
  assert.strictEqual(p.byClass('toast')[0]._children.every((c) => c.tagName === 'span' && c._children.length === 0), true,
    'the toast holds only text spans');
  assert.deepStrictEqual(Array.from(p.T.notifications), [], 'a system notification without the permission');
  assert.strictEqual(p.tray().getAttribute('data-remixproxy-tray'), '');
  assert.strictEqual(p.T.shadowInits[p.T.shadowInits.length - 1].mode, 'closed');

  p.T.notificationPermission = 'granted';
  p.serverSend({ type: 'notify', remixlet: RX_A, source: 'price watch', title: 'Now 12', body: 'was 15' });
  assert.strictEqual(p.T.notifications.length, 1);
  assert.strictEqual(p.T.notifications[0].title, 'price watch: Now 12');
  assert.strictEqual(p.T.notifications[0].body, 'was 15');
  assert.strictEqual(p.T.notifications[0].proto, null);
  assert.strictEqual(p.toasts().length, 2);

  // At most 3 toasts at once; at most 5 a minute per remixlet.
  for (let i = 0; i < 5; i++) {
    p.serverSend({ type: 'notify', remixlet: RX_A, source: 's', title: 'n' + i });
  }
  assert.strictEqual(p.toasts().length, 3);
  assert.deepStrictEqual(p.toasts().map((t) => t[1]), ['n0', 'n1', 'n2'], 'notifications beyond 5 a minute were shown');
  p.serverSend({ type: 'notify', remixlet: RX_B, source: 'other', title: 'other' });
  assert.strictEqual(p.toasts()[2][1], 'other', 'another remixlet has its own rate');
  // Toasts go by themselves; a click dismisses one.
  p.T.advance(6000);
  assert.deepStrictEqual(p.toasts(), []);
  p.T.advance(60000);
  p.serverSend({ type: 'notify', remixlet: RX_A, source: 's', title: 'again' });
  const t = p.byClass('toast')[0];
  p.T.fire(t, 'click', new p.T.classes.Event(true));
  assert.deepStrictEqual(p.toasts(), []);
  p.serverSend({ type: 'notify', remixlet: 'junk', title: 'x' });
  p.serverSend({ type: 'notify', remixlet: RX_A, title: '' });
  assert.deepStrictEqual(p.toasts(), []);
});

scenario('menu: a button next to the launcher opens the panel, where commands are chosen; the page agent never sends a command', () => {
  const p = servicesPage();
  p.serverSend({ type: 'menu', remixlet: RX_A, source: 'expander', commands: [
    { id: 'all', label: 'Expand <all>' },
    { id: 'none', label: 'Collapse' },
  ] });
  const more = p.byClass('more')[0];
  assert.ok(!more.hasAttribute('data-none'), 'the commands button is hidden');
  assert.match(more.getAttribute('title'), /panel/);
  assert.deepStrictEqual(p.byClass('item'), [], 'commands listed in the page');
  assert.deepStrictEqual(p.byClass('menu'), [], 'a menu in the page');
  p.T.fire(more, 'click', new p.T.classes.Event(false));
  assert.strictEqual(p.frame(), null, 'an untrusted click opened the panel');
  p.T.fire(more, 'click', new p.T.classes.Event(true));
  const frame = p.frame();
  assert.ok(frame, 'a trusted click did not open the panel');
  assert.ok(frame.hasAttribute('data-open'));
  // A second click keeps it open.
  p.T.fire(more, 'click', new p.T.classes.Event(true));
  assert.ok(p.frame().hasAttribute('data-open'));
  assert.deepStrictEqual(p.sent().filter((m) => m.type === 'event'), [], 'the page agent sent an event for a command');

  // A release removes the remixlet's commands, and with them the button.
  p.serverSend({ type: 'release', remixlet: RX_A });
  assert.ok(more.hasAttribute('data-none'), 'the commands button stays after the release');
  // An empty list removes them too.
  p.serverSend({ type: 'menu', remixlet: RX_B, source: 'b', commands: [{ id: 'x', label: 'X' }] });
  assert.ok(!more.hasAttribute('data-none'));
  p.serverSend({ type: 'menu', remixlet: RX_B, source: 'b', commands: [] });
  assert.ok(more.hasAttribute('data-none'));
});

scenario('open: navigates within the page origin only, focuses when already there', () => {
  const p = servicesPage();
  p.serverSend({ type: 'open', url: 'https://evil.test/', source: 's' });
  assert.deepStrictEqual(Array.from(p.T.assigned), []);
  p.serverSend({ type: 'open', url: 'javascript:alert(1)', source: 's' });
  assert.deepStrictEqual(Array.from(p.T.assigned), []);
  p.serverSend({ type: 'open', url: ORIGIN + '/cart', source: 's' });
  assert.deepStrictEqual(Array.from(p.T.assigned), [ORIGIN + '/cart']);
  p.serverSend({ type: 'open', url: ORIGIN + '/start', source: 'reminder' });
  assert.strictEqual(p.T.windowFocused, 1);
  assert.deepStrictEqual(Array.from(p.T.assigned), [ORIGIN + '/cart']);
  assert.strictEqual(p.toasts()[0][0], 'reminder');
});

scenario('readiness: hello says where the document is; DOMContentLoaded and load reported once each, forward only', () => {
  const p = page();
  const C = p.T.classes;
  const ready = () => p.sent().filter((m) => m.type === 'ready');
  p.open();
  assert.strictEqual(p.sent()[0].ready, 'loading');
  // A DOMContentLoaded the page dispatches itself while the parser runs is not taken.
  p.T.fire(p.T.global, 'DOMContentLoaded', new C.Event(true));
  assert.deepStrictEqual(ready(), []);
  p.dcl();
  p.T.fire(p.T.global, 'DOMContentLoaded', new C.Event(true));
  // Nor a load before the document is complete.
  p.T.fire(p.T.global, 'load', new C.Event(true));
  assert.deepStrictEqual(ready(), [{ type: 'ready', state: 'interactive' }]);
  p.T.readyState = 'complete';
  p.T.fire(p.T.global, 'load', new C.Event(true));
  p.T.fire(p.T.global, 'DOMContentLoaded', new C.Event(true));
  assert.deepStrictEqual(ready(), [{ type: 'ready', state: 'interactive' }, { type: 'ready', state: 'complete' }]);
  // A new connection (a reconnect, a page back from the back/forward cache) says it in its hello.
  const first = p.socket();
  p.serverClose(1006, first);
  p.T.advance(1000);
  assert.notStrictEqual(p.socket(), first);
  p.open();
  assert.deepStrictEqual(p.sent()[0], { type: 'hello', url: ORIGIN + '/start', title: 'Fake page', top: true, ready: 'complete' });
});

scenario('readiness: a DOMContentLoaded or load the page dispatches itself is not taken, even when readyState agrees', () => {
  const p = page();
  const C = p.T.classes;
  const ready = () => p.sent().filter((m) => m.type === 'ready');
  p.open();
  // A deferred script runs with readyState already 'interactive', before the real
  // DOMContentLoaded, and dispatches its own (OPEN-ITEMS 9).
  p.T.readyState = 'interactive';
  p.T.fire(p.T.global, 'DOMContentLoaded', new C.Event(false));
  assert.deepStrictEqual(ready(), [], 'a synthetic DOMContentLoaded was taken');
  p.T.fire(p.T.global, 'DOMContentLoaded', new C.Event(true));
  assert.deepStrictEqual(ready(), [{ type: 'ready', state: 'interactive' }]);
  p.T.readyState = 'complete';
  p.T.fire(p.T.global, 'load', new C.Event(false));
  assert.deepStrictEqual(ready(), [{ type: 'ready', state: 'interactive' }], 'a synthetic load was taken');
  p.T.fire(p.T.global, 'load', new C.Event(true));
  assert.deepStrictEqual(ready(), [{ type: 'ready', state: 'interactive' }, { type: 'ready', state: 'complete' }]);
});

scenario('the observer of revealed passwords is not there while the page loads; the task after load, a key or a proxy message starts it', () => {
  const watching = (p) => p.T.observeOptions.filter((o) => o.attributeFilter === 'type,autocomplete' && o.subtree === true).length;
  const p = page();
  p.open();
  p.welcome('pt');
  p.dcl();
  p.T.advance(1000);
  assert.strictEqual(watching(p), 0, 'a document-wide attribute observer while the page loads');
  p.T.readyState = 'complete';
  p.T.fire(p.T.global, 'load', new p.T.classes.Event(true));
  assert.strictEqual(watching(p), 0, 'an observer in the load event\'s own task (its time counts in the page\'s load)');
  p.T.advance(0);
  assert.strictEqual(watching(p), 1, 'no observer in the task after load');
  p.T.fire(p.T.global, 'pointerdown', new p.T.classes.Event(true));
  assert.strictEqual(watching(p), 1, 'a second observer');

  const k = page();
  k.T.fire(k.T.global, 'keydown', new k.T.classes.Event(true));
  assert.strictEqual(watching(k), 1, 'no observer after the first key');

  for (const type of ['op', 'tool']) {
    const m = page();
    m.open();
    m.welcome('pt');
    assert.strictEqual(watching(m), 0, type + ': an observer before the message');
    m.serverSend({ type, id: 1, remixlet: RX_A, op: 'queryAll', args: ['h1'], name: 'find', args_json: '{}' });
    assert.strictEqual(watching(m), 1, 'no observer once a ' + type + ' message came');
  }
});

scenario('readiness: a document already complete when the agent starts says so in its hello', () => {
  const p = page({ readyState: 'complete' });
  p.open();
  assert.strictEqual(p.sent()[0].ready, 'complete');
});

// waitPage is an ops page that counts the document's querySelectorAll calls (T.queries).
function waitPage() {
  const p = opsPage({
    before: (T) => {
      const q = Document.prototype.querySelectorAll;
      T.queries = 0;
      Document.prototype.querySelectorAll = function (sel) {
        T.queries++;
        return q.call(this, sel);
      };
    },
  });
  let nextID = 1000;
  // wait sends a waitFor op and returns a function that lists its results so far.
  p.wait = (remixlet, sel, opts) => {
    const id = nextID++;
    p.serverSend({ type: 'op', id, remixlet, op: 'waitFor', args: [sel, opts] });
    return (s) => p.sent(s).filter((m) => m.type === 'result' && m.id === id);
  };
  // observing counts the observers watching something; the first op starts the page-change
  // reporter (rx_run.js), so it is done here and that one is counted in the baseline.
  p.ok(RX_A, 'queryAll', 'nothing-here');
  p.observing = () => p.T.observers.filter((o) => !o._disconnected && o._targets.length > 0).length;
  p.baseline = p.observing();
  return p;
}

scenario('dom.waitFor: at once when an element matches, else when one appears; the observer goes when nothing waits', () => {
  const p = waitPage();
  const h1 = p.add('h1', {});
  const now = p.wait(RX_A, 'h1', { timeout: 1000 });
  assert.deepStrictEqual(now(), [{ type: 'result', id: 1000, ok: true, value: { $h: 1 } }]);
  const late = p.wait(RX_A, '.late', { timeout: 1000 });
  assert.deepStrictEqual(late(), [], 'answered before the element exists');
  p.add('div', { class: 'other' });
  p.T.flushMutations();
  assert.deepStrictEqual(late(), []);
  p.T.advance(20);
  const el = p.add('div', { class: 'late' });
  p.T.flushMutations();
  assert.deepStrictEqual(late(), [{ type: 'result', id: 1001, ok: true, value: { $h: 2 } }]);
  assert.deepStrictEqual(p.ok(RX_A, 'query', '.late'), { $h: 2 }, 'the handle is the remixlet\'s handle of that element');
  assert.notStrictEqual(el, h1);
  p.T.advance(2000);
  assert.strictEqual(late().length, 1, 'answered twice');
  assert.strictEqual(p.observing(), p.baseline, 'an observer is left after the waits ended');
});

scenario('dom.waitFor: times out with a clear error; bad options and too many waits are refused', () => {
  const p = waitPage();
  const never = p.wait(RX_A, '.never', { timeout: 500 });
  p.T.advance(499);
  assert.deepStrictEqual(never(), []);
  p.T.advance(1);
  assert.deepStrictEqual(never(), [{ type: 'result', id: 1000, ok: false, error: 'no element matched ".never" within 500 ms' }]);
  for (const opts of [undefined, null, {}, { timeout: 0 }, { timeout: 60001 }, { timeout: '5' }]) {
    const r = p.wait(RX_A, 'h2', opts)();
    assert.strictEqual(r.length, 1);
    assert.strictEqual(r[0].ok, false);
    assert.match(r[0].error, /timeout must be a number of milliseconds from 1 to 60000/);
  }
  const bad = p.wait(RX_A, 'div[', { timeout: 100 })();
  assert.match(bad[0].error, /invalid selector/);
  const waiting = [];
  for (let i = 0; i < 32; i++) {
    waiting.push(p.wait(RX_A, '.w' + i, { timeout: 1000 }));
  }
  assert.ok(waiting.every((w) => w().length === 0));
  const over = p.wait(RX_A, '.w32', { timeout: 1000 })();
  assert.match(over[0].error, /more than 32 dom\.waitFor calls are waiting/);
  assert.deepStrictEqual(p.wait(RX_B, '.b', { timeout: 1000 })(), [], 'another remixlet counts its own waits');
});

scenario('dom.waitFor: a page that changes constantly costs one try per waiting selector per 16 ms', () => {
  const p = waitPage();
  const waits = [];
  for (let i = 0; i < 4; i++) {
    waits.push(p.wait(RX_A, '.never' + i, { timeout: 10000 }));
  }
  const before = p.T.queries;
  // 1000 changes in 160 ms: one each 0.16 ms.
  for (let i = 0; i < 1000; i++) {
    p.add('span', {});
    p.T.flushMutations();
    if (i % 100 === 99) {
      p.T.advance(16);
    }
  }
  p.T.advance(16);
  const tries = (p.T.queries - before) / 4;
  assert.ok(tries >= 10 && tries <= 22, 'tried each selector ' + tries + ' times for 1000 changes in 160 ms, want about 11');
  assert.ok(waits.every((w) => w().length === 0));
});

scenario('page policy: selectors that could test what is typed are refused as in Go (field_selectors.json)', () => {
  const p = opsPage();
  p.add('div', { id: 'user' });
  const cases = JSON.parse(fs.readFileSync(require('path').join(__dirname, 'field_selectors.json'), 'utf8'));
  for (const sel of cases.refused) {
    p.refused(/refused|may not/, RX_A, 'query', sel);
  }
  // dataValues (a data-* value compared) are allowed until a secret is typed on the page.
  for (const sel of cases.allowed.concat(cases.dataValues)) {
    const m = p.op(RX_A, 'query', sel);
    // The harness's selector engine knows little CSS: an invalid selector here is not a refusal.
    assert.ok(m.ok || /invalid selector/.test(m.error), sel + ': ' + m.error);
  }
});

// typeSecret sends a key typed into a new password field of page p through the page's window
// (where the page agent's capture listener sees it first), or, with type beforeinput, the
// first event of a paste from the menu or a drop.
function typeSecret(p, type) {
  const pw = p.add('input', { type: 'password' });
  pw._value = 'h';
  const ev = type === 'beforeinput' ? new p.T.classes.Event(true) : new p.T.classes.KeyboardEvent('h');
  ev._target = pw;
  p.T.fire(p.T.global, type || 'keydown', ev);
  return pw;
}

scenario('page policy: a data-* value may be compared until a secret is typed; a wait on one ends refused at the first key', () => {
  const p = waitPage();
  const cases = JSON.parse(fs.readFileSync(require('path').join(__dirname, 'field_selectors.json'), 'utf8'));
  p.add('div', { 'data-state': 'open' });
  assert.strictEqual(p.op(RX_A, 'query', '[data-state="open"]').ok, true);
  const pending = p.wait(RX_A, '[data-len="1"]', { timeout: 5000 });
  const other = p.wait(RX_A, '.later', { timeout: 5000 });
  assert.deepStrictEqual(pending(), []);
  typeSecret(p);
  // Ended at the key itself, before the page could write a mirror, with the query's refusal.
  assert.strictEqual(pending().length, 1);
  assert.strictEqual(pending()[0].ok, false);
  assert.match(pending()[0].error, /compare the value of attribute data-len .*only until a password or other secret is typed/);
  assert.deepStrictEqual(other(), [], 'a wait that compares no data-* value goes on');
  p.add('div', { 'data-len': '1', class: 'later' });
  p.T.flushMutations();
  p.T.advance(16);
  assert.strictEqual(other().length, 1);
  assert.strictEqual(other()[0].ok, true);
  for (const sel of cases.dataValues) {
    p.refused(/may not compare the value of attribute data-/, RX_A, 'query', sel);
  }
  assert.strictEqual(p.op(RX_A, 'query', '[data-state]').ok, true, 'presence tests stay');
  assert.strictEqual(p.op(RX_A, 'query', '[data-testid="x"]').ok, true, 'test ids stay');
  // A paste or drop starts with beforeinput, where a page may write its mirror first.
  const q = waitPage();
  const pasted = q.wait(RX_A, '[data-len="1"]', { timeout: 5000 });
  typeSecret(q, 'beforeinput');
  assert.strictEqual(pasted().length, 1);
  assert.match(pasted()[0].error, /compare the value of attribute data-len/);
});

scenario('page policy: no data-* value is compared while a sensitive field holds a value nobody typed', () => {
  const p = opsPage();
  p.add('div', { 'data-len': '7' });
  assert.strictEqual(p.op(RX_A, 'query', '[data-len="7"]').ok, true);
  const pw = p.add('input', { type: 'password' });
  pw._value = 'hunter2'; // filled by the browser or the page, no key typed
  p.refused(/compare the value of attribute data-len/, RX_A, 'query', '[data-len="7"]');
  pw._value = '';
  const m = p.op(RX_A, 'query', '[data-len="7"]');
  assert.strictEqual(m.ok, true, 'nothing typed, nothing held: ' + m.error);
});

scenario('page policy: the mirror watch stays on while a typed secret is held, and a grace after; not after a key that left the fields empty', () => {
  // The fake observer reports no records: what is written is tested in Chromium
  // (e2e/latemirrors_test.go); here, how long the watch observes.
  const p = waitPage();
  const pw = typeSecret(p); // holds "h"
  p.T.advance(1);
  assert.strictEqual(p.observing(), p.baseline + 1, 'no late watch while the password is in its field');
  p.T.advance(5000);
  assert.strictEqual(p.observing(), p.baseline + 1, 'the late watch ended with the password still in its field');
  pw._value = ''; // emptied without an input event (a form reset)
  p.T.advance(1000);
  assert.strictEqual(p.observing(), p.baseline + 1, 'the late watch ended before the grace');
  p.T.advance(2100);
  assert.strictEqual(p.observing(), p.baseline, 'the late watch goes on after the field was emptied and the grace passed');
  // A key that leaves the field empty (a Tab into it): the key's watch only.
  const q = waitPage();
  const empty = typeSecret(q);
  empty.setAttribute('aria-label', 'Password');
  empty._value = '';
  q.T.advance(1);
  assert.strictEqual(q.observing(), q.baseline, 'a late watch after a key that left the field empty');
});

scenario('agent tools: read_page_data\'s globals and inspect_styles are withheld while a typed secret is held, and a grace after', () => {
  // The hold is the mirror watch's (rx_mirrors.js); what the page writes meanwhile is tested
  // in Chromium (e2e/heldreads_test.go).
  const DATA = 'the page\'s script data is withheld while a password is typed on this page; ask again after signing in';
  const STYLES = 'computed styles are withheld while a password is typed on this page; ask again after signing in';
  const toolsPage = () => {
    const p = waitPage();
    let nextTool = 5000;
    p.tool = (name, args) => {
      const id = nextTool++;
      p.serverSend({ type: 'tool', id, tool: name, args: args || {} });
      const r = p.sent().filter((m) => m.type === 'toolResult' && m.id === id);
      assert.strictEqual(r.length, 1, 'one answer to ' + name);
      return r[0];
    };
    p.ctx.pwLen = 0;
    p.add('form', { id: 'f' });
    p.ref = p.tool('read_page_data').value.forms[0].ref;
    // held: whether both tools withhold (the fake has no computed styles: inspect_styles is
    // refused otherwise with another reason).
    p.held = (why) => {
      const d = p.tool('read_page_data').value;
      const st = p.tool('inspect_styles', { ref: p.ref });
      const data = d.globalsWithheld === DATA && Object.keys(d.globals).length === 0 && d.forms.length === 1;
      const shown = !('globalsWithheld' in d) && d.globals.pwLen === 0;
      assert.ok(data || shown, why + ': read_page_data ' + JSON.stringify(d));
      assert.strictEqual(st.ok, false, why);
      assert.strictEqual(st.error === STYLES, data, why + ': inspect_styles ' + st.error + ', read_page_data ' + JSON.stringify(d));
      return data;
    };
    return p;
  };
  const p = toolsPage();
  assert.strictEqual(p.held('before the typing'), false, 'withheld before the typing');
  const pw = typeSecret(p); // holds "h"
  pw.setAttribute('aria-label', 'Password'); // named: the fake has no previousSibling for a name from the text before it
  p.T.advance(1);
  assert.strictEqual(p.held('the password in its field'), true, 'shown while the password is in its field');
  p.T.advance(5000);
  assert.strictEqual(p.held('the password in its field, 5 s on'), true, 'shown while the password is still in its field');
  pw._value = ''; // emptied without an input event (a form reset)
  p.T.advance(1000);
  assert.strictEqual(p.held('within the grace'), true, 'shown before the grace passed');
  p.T.advance(2100);
  assert.strictEqual(p.held('after the grace'), false, 'withheld after the field was emptied and the grace passed');
  // A key that leaves the field empty (a Tab into it): nothing held.
  const q = toolsPage();
  const empty = typeSecret(q);
  empty.setAttribute('aria-label', 'Password');
  empty._value = '';
  q.T.advance(1);
  assert.strictEqual(q.held('a Tab into an empty password field'), false, 'withheld after a key that left the field empty');
});

scenario('dom.waitFor: the selector is checked as dom.query\'s', () => {
  const p = waitPage();
  // A presence test is allowed, and a data-* value before a secret is typed; a value test is
  // refused on every page (red-team pass 6c), with dom.query's words.
  const ok = p.wait(RX_A, 'input[data-x]', { timeout: 1000 });
  const data = p.wait(RX_A, 'input[data-x^="a"]', { timeout: 1000 });
  assert.deepStrictEqual(ok(), []);
  assert.deepStrictEqual(data(), []);
  p.add('input', { 'data-x': 'ab' });
  p.T.flushMutations();
  p.T.advance(16);
  assert.strictEqual(ok().length, 1);
  assert.strictEqual(ok()[0].ok, true);
  assert.strictEqual(data().length, 1);
  assert.strictEqual(data()[0].ok, true);
  for (const sel of ['input[value^="a"]', 'input[aria-valuenow="3"]', 'form:has(input:invalid)']) {
    const v = p.wait(RX_A, sel, { timeout: 1000 });
    assert.strictEqual(v().length, 1, sel);
    assert.strictEqual(v()[0].ok, false, sel);
    assert.match(v()[0].error, /value attribute|compare the value of attribute aria-valuenow|field-state/, sel);
    p.refused(/value attribute|compare the value of attribute aria-valuenow|field-state/, RX_A, 'query', sel);
  }
});

scenario('dom.waitFor: a released remixlet\'s waits and those of an earlier connection end unanswered', () => {
  const p = waitPage();
  const a = p.wait(RX_A, '.x', { timeout: 1000 });
  const b = p.wait(RX_B, '.x', { timeout: 1000 });
  p.serverSend({ type: 'release', remixlet: RX_A });
  p.add('div', { class: 'x' });
  p.T.flushMutations();
  assert.deepStrictEqual(a(), [], 'a released remixlet\'s wait was answered');
  assert.strictEqual(b().length, 1);
  assert.strictEqual(b()[0].ok, true);
  // A wait of the connection before a reconnect is never answered on the new one.
  const old = p.socket();
  const c = p.wait(RX_A, '.y', { timeout: 1000 });
  p.serverClose(1006, old);
  p.T.advance(1000);
  p.open();
  p.welcome('pt2');
  p.add('div', { class: 'y' });
  p.T.flushMutations();
  p.T.advance(2000);
  assert.deepStrictEqual(c(old), []);
  assert.deepStrictEqual(c(), []);
  assert.strictEqual(p.observing(), p.baseline, 'an observer is left after the waits ended');
});

(async () => {
  for (const s of scenarios) {
    try {
      await s.fn(); // a scenario may be async (e.g. waiting for a Promise the agent chains)
      console.log('ok   ' + s.name);
    } catch (e) {
      failed++;
      console.log('FAIL ' + s.name + '\n' + (e && e.stack || e));
    }
  }
  console.log(failed ? failed + ' of ' + scenarios.length + ' scenarios failed' : 'all ' + scenarios.length + ' scenarios passed');
  process.exit(failed ? 1 : 0);
})();
