// Behavioural test of the page tools (pageagent/tool_*.js, in the assembled page agent) in node,
// with a small fake DOM: enough of Node, Element, the form elements, layout (one box per
// element), computed styles and a WebSocket for the page agent to start and answer tool calls.
//
//   node testdata/agent_tools_harness.js path/to/assembled/agent.js
//
// Each scenario runs the agent in a fresh vm context, sends it {type:'tool'} messages and checks
// the {type:'toolResult'} answers: argument checks, the outline (roles, names, states, refs),
// query, read_page_data, click's refusals, the password scrub and the size bound, also after
// the page replaced the built-ins the agent captured; and Act mode's find, type, press_keys,
// page_state and the duplicate-click refusal (e2e/act_test.go runs all the actions in Chromium). Real behaviour is tested in Chromium by
// e2e/pagetools_test.go; this one catches logic mistakes quickly. Exit status 0: all passed.
'use strict';

const vm = require('vm');
const fs = require('fs');
const assert = require('assert');
const { pristineWindow } = require('./pristine_window.js');

const agentPath = process.argv[2];
if (!agentPath) {
  console.error('usage: node agent_tools_harness.js path/to/agent.js');
  process.exit(2);
}
const agentSource = fs.readFileSync(agentPath, 'utf8');

// installFakeDOM runs inside the vm context (serialised with toString). It calls built-ins only
// through what it captured first, so a scenario can replace them as a hostile page would.
function installFakeDOM(opts) {
  const g = globalThis;
  const R = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapHas = Map.prototype.has;
  const mapDelete = Map.prototype.delete;
  const strIndexOf = String.prototype.indexOf;
  const strSlice = String.prototype.slice;
  const strLower = String.prototype.toLowerCase;
  const StringCtor = String;
  const reExec = RegExp.prototype.exec;
  const weakGet = WeakMap.prototype.get;
  const weakSet = WeakMap.prototype.set;
  const NodeURL = opts.URL;

  // add appends without the Array.prototype setters a hostile page may define.
  const add = (a, v) => { defineProperty(a, a.length, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true }); };
  const has = (a, v) => { for (let i = 0; i < a.length; i++) { if (a[i] === v) return true; } return false; };
  const trim = (s) => {
    let a = 0;
    let b = s.length;
    while (a < b && (s[a] === ' ' || s[a] === '\n' || s[a] === '\t')) a++;
    while (b > a && (s[b - 1] === ' ' || s[b - 1] === '\n' || s[b - 1] === '\t')) b--;
    return R(strSlice, s, [a, b]);
  };
  const splitTop = (s, sep) => { // split on sep outside [] and ()
    const out = [];
    let depth = 0;
    let cur = '';
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c === '[' || c === '(') depth++;
      if (c === ']' || c === ')') depth--;
      if (depth === 0 && (sep === ' ' ? (c === ' ' || c === '>') : c === sep)) {
        if (trim(cur) !== '') add(out, trim(cur));
        cur = '';
      } else {
        cur += c;
      }
    }
    if (trim(cur) !== '') add(out, trim(cur));
    return out;
  };

  const T = { sent: [], sockets: [], navigations: [], clicks: [], events: [], cookie: '', hit: null };
  g.T = T;

  const listeners = new WeakMap();
  class EventTarget {
    addEventListener(type, fn) {
      let m = R(weakGet, listeners, [this]);
      if (!m) {
        m = new Map();
        R(weakSet, listeners, [this, m]);
      }
      if (!R(mapHas, m, [type])) R(mapSet, m, [type, []]);
      add(R(mapGet, m, [type]), fn);
    }
    dispatchEvent(ev) {
      add(T.events, ev.type + ' ' + (this._tag || '?'));
      T.fire(this, ev.type, ev);
      return !ev._prevented;
    }
  }
  T.fire = (target, type, ev) => {
    const m = R(weakGet, listeners, [target]);
    const list = m && R(mapHas, m, [type]) ? R(mapGet, m, [type]) : [];
    for (let i = 0; i < list.length; i++) R(list[i], target, [ev]);
  };
  class Event {
    constructor(type, init) { this._type = type; this._init = init || {}; }
    get defaultPrevented() { return this._prevented === true; }
    preventDefault() { this._prevented = true; }
    get key() { return this._init.key; }
    get isTrusted() { return true; }
    get type() { return this._type; }
    get target() { return this._target || null; }
  }
  class MessageEvent extends Event {
    constructor(data) { super('message'); this._data = data; }
    get data() { return this._data; }
  }
  class CloseEvent extends Event {
    constructor(code) { super('close'); this._code = code; }
    get code() { return this._code; }
  }

  class NodeList {
    constructor(a) { this._a = a; }
    get length() { return this._a.length; }
    item(i) { return this._a[i] || null; }
  }

  class Node extends EventTarget {
    constructor(type) {
      super();
      this._type = type;
      this._children = [];
      this._parent = null;
    }
    get nodeType() {
      if (!(this instanceof Node)) throw new TypeError('Illegal invocation'); // a brand check, as browsers have
      return this._type;
    }
    get parentNode() { return this._parent; }
    get firstChild() { return this._children[0] || null; }
    get nextSibling() {
      const p = this._parent;
      if (!p) return null;
      for (let i = 0; i < p._children.length; i++) {
        if (p._children[i] === this) return p._children[i + 1] || null;
      }
      return null;
    }
    get previousSibling() {
      const p = this._parent;
      if (!p) return null;
      for (let i = 0; i < p._children.length; i++) {
        if (p._children[i] === this) return p._children[i - 1] || null;
      }
      return null;
    }
    get isConnected() {
      let n = this;
      while (n._parent) n = n._parent;
      return n instanceof Document; // the page's document or a frame's
    }
    get ownerDocument() {
      if (this instanceof Document) return null;
      let n = this;
      while (n._parent) n = n._parent;
      return n instanceof Document ? n : g.document;
    }
    get textContent() {
      let s = '';
      for (let i = 0; i < this._children.length; i++) s += this._children[i].textContent;
      return s;
    }
    set textContent(v) {
      this._children = [];
      this.appendChild(new Text(StringCtor(v)));
    }
    appendChild(c) {
      if (c._parent) c._parent.removeChild(c);
      c._parent = this;
      add(this._children, c);
      return c;
    }
    removeChild(c) {
      const kept = [];
      for (let i = 0; i < this._children.length; i++) {
        if (this._children[i] !== c) add(kept, this._children[i]);
      }
      this._children = kept;
      c._parent = null;
      return c;
    }
    contains(other) {
      for (let n = other; n; n = n._parent) {
        if (n === this) return true;
      }
      return false;
    }
    getRootNode() {
      let n = this;
      while (n._parent) n = n._parent;
      return n;
    }
    querySelectorAll(sel) { return new NodeList(select(this, StringCtor(sel))); }
  }
  const nodeContains = Node.prototype.contains; // the fake's own use, safe from the page's replacement
  class CharacterData extends Node {
    constructor(data) { super(3); this._data = data; }
    get data() { return this._data; }
    get textContent() { return this._data; }
  }
  class Text extends CharacterData {}
  const getA = (el, n) => (R(mapHas, el._attrs, [n]) ? R(mapGet, el._attrs, [n]) : null);
  const hasA = (el, n) => R(mapHas, el._attrs, [n]);

  // Selectors: lists of compound selectors joined by descendant combinators; a compound is a
  // tag or *, #id, .class, [attr], [attr=value], [attr^=value] and :checked, :disabled, :modal.
  function parseCompound(s) {
    const c = { tag: null, id: null, classes: [], attrs: [], pseudos: [] };
    let i = 0;
    const ident = () => {
      let out = '';
      while (i < s.length && R(reExec, /[A-Za-z0-9_-]/, [s[i]])) out += s[i++];
      if (out === '') throw new SyntaxError('bad selector ' + s);
      return out;
    };
    if (s[0] === '*') i++;
    else if (R(reExec, /[A-Za-z]/, [s[0] || ''])) c.tag = R(strLower, ident(), []);
    while (i < s.length) {
      if (s[i] === '#') { i++; c.id = ident(); }
      else if (s[i] === '.') { i++; add(c.classes, ident()); }
      else if (s[i] === ':') { i++; add(c.pseudos, ident()); }
      else if (s[i] === '[') {
        const end = R(strIndexOf, s, [']', i]);
        if (end < 0) throw new SyntaxError('bad selector ' + s);
        const m = R(reExec, /^([A-Za-z-]+)(?:(\^?=)["']?([^"']*)["']?)?$/, [R(strSlice, s, [i + 1, end])]);
        if (!m) throw new SyntaxError('bad selector ' + s);
        add(c.attrs, { name: m[1], op: m[2] || null, value: m[3] });
        i = end + 1;
      } else {
        throw new SyntaxError('bad selector ' + s);
      }
    }
    return c;
  }
  function matchesCompound(el, c) {
    if (!(el instanceof Element)) return false;
    if (c.tag && el._tag !== c.tag) return false;
    if (c.id !== null && getA(el, 'id') !== c.id) return false;
    const cls = ' ' + (getA(el, 'class') || '') + ' ';
    for (let i = 0; i < c.classes.length; i++) {
      if (R(strIndexOf, cls, [' ' + c.classes[i] + ' ']) < 0) return false;
    }
    for (let i = 0; i < c.attrs.length; i++) {
      const a = c.attrs[i];
      const v = getA(el, a.name);
      if (v === null || (a.op === '=' && v !== a.value) || (a.op === '^=' && R(strIndexOf, v, [a.value]) !== 0)) return false;
    }
    for (let i = 0; i < c.pseudos.length; i++) {
      const p = c.pseudos[i];
      if (p === 'checked' && !(el._checked === true || el._selected === true)) return false;
      if (p === 'disabled' && !hasA(el, 'disabled')) return false;
      if (p === 'modal' && !el._modal) return false;
      if (p !== 'checked' && p !== 'disabled' && p !== 'modal') throw new SyntaxError('unsupported :' + p);
    }
    return true;
  }
  function parseSelector(sel) {
    const list = splitTop(sel, ',');
    if (list.length === 0) throw new SyntaxError('empty selector');
    const out = [];
    for (let i = 0; i < list.length; i++) {
      const parts = splitTop(list[i], ' ');
      const chain = [];
      for (let j = 0; j < parts.length; j++) add(chain, parseCompound(parts[j]));
      add(out, chain);
    }
    return out;
  }
  function matchesChain(el, chain, scope) {
    if (!matchesCompound(el, chain[chain.length - 1])) return false;
    let k = chain.length - 2;
    for (let n = el._parent; n && k >= 0 && n !== scope; n = n._parent) {
      if (matchesCompound(n, chain[k])) k--;
    }
    return k < 0;
  }
  function matchesAny(el, chains, scope) {
    for (let i = 0; i < chains.length; i++) {
      if (matchesChain(el, chains[i], scope)) return true;
    }
    return false;
  }
  function select(root, sel) {
    const chains = parseSelector(sel);
    const out = [];
    const walk = (n) => {
      for (let i = 0; i < n._children.length; i++) {
        const k = n._children[i];
        if (matchesAny(k, chains, null)) add(out, k);
        walk(k);
      }
    };
    walk(root);
    return out;
  }

  class DOMRectReadOnly {
    constructor(x, y, w, h) { this._x = x; this._y = y; this._w = w; this._h = h; }
    get left() { return this._x; }
    get top() { return this._y; }
    get x() { return this._x; }
    get y() { return this._y; }
    get width() { return this._w; }
    get height() { return this._h; }
  }
  class CSSStyleDeclaration {
    constructor(map) { this._map = map; }
    getPropertyValue(p) { return this._map[p] === undefined ? '' : this._map[p]; }
  }

  const INLINE = { a: 1, span: 1, b: 1, i: 1, label: 1, img: 1, input: 1, button: 1, select: 1, textarea: 1, em: 1, strong: 1 };
  let created = 0;
  class Element extends Node {
    constructor(tag) {
      super(1);
      this._tag = tag;
      this._attrs = new Map();
      this._style = {};
      this._n = created++;
      this._rect = null;
    }
    get localName() { return this._tag; }
    getAttribute(n) { return R(mapHas, this._attrs, [n]) ? R(mapGet, this._attrs, [n]) : null; }
    hasAttribute(n) { return R(mapHas, this._attrs, [n]); }
    setAttribute(n, v) { R(mapSet, this._attrs, [n, StringCtor(v)]); }
    removeAttribute(n) { R(mapDelete, this._attrs, [n]); }
    // A closed shadow root: not a child, so nothing the tools walk reaches into it.
    attachShadow() { this._shadow = new Node(11); return this._shadow; }
    matches(sel) { return matchesAny(this, parseSelector(sel), null); }
    closest(sel) {
      const chains = parseSelector(sel);
      for (let n = this; n instanceof Element; n = n._parent) {
        if (matchesAny(n, chains, null)) return n;
      }
      return null;
    }
    get shadowRoot() { return null; }
    scrollIntoView() {}
    getBoundingClientRect() {
      if (!displayed(this)) return new DOMRectReadOnly(0, 0, 0, 0);
      const r = this._rect || { x: 10 + 130 * (this._n % 9), y: 10 + 24 * ((this._n - this._n % 9) / 9), w: 120, h: 20 };
      return new DOMRectReadOnly(r.x, r.y, r.w, r.h);
    }
  }
  function displayed(el) {
    for (let n = el; n instanceof Element; n = n._parent) {
      if (computedDisplay(n) === 'none') return false;
    }
    return true;
  }
  function computedDisplay(el) {
    if (el._style.display) return el._style.display;
    if (hasA(el, 'hidden')) return 'none';
    if (el._tag === 'dialog' && !hasA(el, 'open')) return 'none';
    return INLINE[el._tag] ? 'inline' : 'block';
  }
  function computedVisibility(el) {
    for (let n = el; n instanceof Element; n = n._parent) {
      if (n._style.visibility) return n._style.visibility;
    }
    return 'visible';
  }
  const elementBCR = Element.prototype.getBoundingClientRect; // the fake's own use, as nodeContains
  class HTMLElement extends Element {
    get innerText() {
      let s = '';
      const walk = (n) => {
        for (let i = 0; i < n._children.length; i++) {
          const k = n._children[i];
          if (k instanceof Text) s += k._data;
          else if (k._tag !== 'script' && k._tag !== 'style' && displayed(k)) walk(k);
        }
      };
      walk(this);
      return s;
    }
    click() {
      add(T.clicks, this);
      T.fire(this, 'click', new Event('click'));
      if (this._tag === 'input' && getA(this, 'type') === 'checkbox') this._checked = !this._checked;
      for (let n = this; n instanceof Element; n = n._parent) {
        if (n._tag === 'a' && hasA(n, 'href')) {
          add(T.navigations, resolve(getA(n, 'href')));
          break;
        }
      }
    }
    focus() {}
  }
  function byId(id) {
    const walk = (n) => {
      for (let i = 0; i < n._children.length; i++) {
        const k = n._children[i];
        if (k instanceof Element && getA(k, 'id') === id) return k;
        const f = walk(k);
        if (f) return f;
      }
      return null;
    };
    return walk(g.document);
  }
  function resolve(raw) {
    try {
      return new NodeURL(raw, T.href).href;
    } catch (e) {
      return raw;
    }
  }
  function labelsOf(el) {
    const out = [];
    const id = getA(el, 'id');
    const all = select(g.document, 'label');
    for (let i = 0; i < all.length; i++) {
      const l = all[i];
      if ((id !== null && getA(l, 'for') === id) || (getA(l, 'for') === null && R(nodeContains, l, [el]))) add(out, l);
    }
    return new NodeList(out);
  }
  function formOf(el) {
    const f = getA(el, 'form');
    if (f !== null) return byId(f);
    for (let n = el._parent; n instanceof Element; n = n._parent) {
      if (n._tag === 'form') return n;
    }
    return null;
  }
  class HTMLInputElement extends HTMLElement {
    constructor() { super('input'); this._value = null; this._checked = false; }
    get value() { return this._value !== null ? this._value : (getA(this, 'value') || ''); }
    set value(v) { this._value = StringCtor(v); }
    get defaultValue() { return getA(this, 'value') || ''; }
    get defaultChecked() { return hasA(this, 'checked'); }
    get checked() { return this._checked; }
    get labels() { return labelsOf(this); }
    get form() { return formOf(this); }
  }
  class HTMLTextAreaElement extends HTMLElement {
    constructor() { super('textarea'); this._value = null; }
    get value() { return this._value !== null ? this._value : this.textContent; }
    set value(v) { this._value = StringCtor(v); }
    get defaultValue() { return this.textContent; }
    get labels() { return labelsOf(this); }
    get form() { return formOf(this); }
  }
  class HTMLSelectElement extends HTMLElement {
    constructor() { super('select'); }
    get value() { const o = select(this, 'option:checked')[0]; return o ? o.textContent : ''; }
    get labels() { return labelsOf(this); }
    get form() { return formOf(this); }
  }
  class HTMLOptionElement extends HTMLElement {
    constructor() { super('option'); }
    get text() { return this.textContent; }
  }
  class HTMLButtonElement extends HTMLElement {
    constructor() { super('button'); }
    get type() { const t = getA(this, 'type'); return t === 'button' || t === 'reset' ? t : 'submit'; }
    get labels() { return labelsOf(this); }
    get form() { return formOf(this); }
  }
  class HTMLLabelElement extends HTMLElement {
    constructor() { super('label'); }
    get control() {
      const f = getA(this, 'for');
      if (f !== null) return byId(f);
      return select(this, 'input, select, textarea, button')[0] || null;
    }
  }
  class HTMLAnchorElement extends HTMLElement {
    constructor() { super('a'); }
    get href() { return resolve(getA(this, 'href') || ''); }
  }
  class HTMLAreaElement extends HTMLElement {
    constructor() { super('area'); }
    get href() { return resolve(getA(this, 'href') || ''); }
  }
  class HTMLFormElement extends HTMLElement {
    constructor() { super('form'); }
    get action() { return resolve(getA(this, 'action') || T.href); }
    get method() { const m = getA(this, 'method'); return m === 'post' || m === 'dialog' ? m : 'get'; }
  }
  class HTMLIFrameElement extends HTMLElement {
    constructor() { super('iframe'); this._doc = null; }
    get contentDocument() { return this._doc; } // null: another site's frame
    // A frame the page agent makes (no document of the harness's) is a fresh realm: the
    // built-ins as they were before any page script ran (T.pristine).
    get contentWindow() { return this._doc ? null : T.pristine; }
  }
  const CLASSES = {
    iframe: HTMLIFrameElement,
    input: HTMLInputElement, textarea: HTMLTextAreaElement, select: HTMLSelectElement, option: HTMLOptionElement,
    button: HTMLButtonElement, label: HTMLLabelElement, a: HTMLAnchorElement, area: HTMLAreaElement, form: HTMLFormElement,
  };

  class Document extends Node {
    constructor() {
      super(9);
      this._html = new HTMLElement('html');
      this.appendChild(this._html);
      this._head = this._html.appendChild(new HTMLElement('head'));
      this._body = this._html.appendChild(new HTMLElement('body'));
      this._script = null;
    }
    get documentElement() { return this._html; }
    get head() { return this._head; }
    get body() { return this._body; }
    get readyState() { return 'complete'; }
    get title() { return T.title || ''; }
    get activeElement() { return this === g.document ? T.active || null : null; }
    get currentScript() { return this._script; }
    get cookie() { return T.cookie; }
    createElement(tag) {
      const C = CLASSES[tag];
      return C ? new C() : new HTMLElement(tag);
    }
    getElementById(id) { return byId(id); }
    elementFromPoint(x, y) {
      if (T.hit) return T.hit;
      let found = null;
      const walk = (n) => {
        for (let i = 0; i < n._children.length; i++) {
          const k = n._children[i];
          if (!(k instanceof Element) || !displayed(k)) continue;
          const r = R(elementBCR, k, []);
          if (x >= r.left && x < r.left + r.width && y >= r.top && y < r.top + r.height) found = k;
          walk(k);
        }
      };
      walk(this);
      return found;
    }
  }

  class WebSocket extends EventTarget {
    constructor(url) {
      super();
      this.url = url;
      this._state = 0;
      add(T.sockets, this);
    }
    get readyState() { return this._state; }
    send(data) { add(T.sent, data); }
    close() { this._state = 3; }
  }

  const locationObj = {};
  defineProperty(locationObj, 'href', { get() { return T.href; }, enumerable: true });
  defineProperty(locationObj, 'protocol', { get() { return R(strSlice, T.href, [0, R(strIndexOf, T.href, [':']) + 1]); }, enumerable: true });
  defineProperty(locationObj, 'origin', { get() { var m = /^[a-z]+:\/\/[^\/?#]*/.exec(T.href); return m ? m[0] : 'null'; }, enumerable: true });
  locationObj.reload = function () {};

  const timers = [];
  const globals = {
    window: g, top: g, self: g,
    EventTarget, Event, InputEvent: Event, KeyboardEvent: Event, MessageEvent, CloseEvent, Node, CharacterData, Text, Element, HTMLElement,
    HTMLInputElement, HTMLTextAreaElement, HTMLSelectElement, HTMLOptionElement, HTMLButtonElement, HTMLLabelElement,
    HTMLAnchorElement, HTMLAreaElement, HTMLFormElement, HTMLIFrameElement, Document, NodeList, DOMRectReadOnly, CSSStyleDeclaration,
    WebSocket, URL: NodeURL,
    location: locationObj,
    history: { pushState() {}, replaceState() {} },
    console: { warn() {}, log() {} },
    setTimeout(fn) { add(timers, fn); return timers.length; },
    clearTimeout() {},
    getComputedStyle(el) {
      return new CSSStyleDeclaration({
        display: computedDisplay(el), visibility: computedVisibility(el), color: el._style.color || 'rgb(0, 0, 0)',
        'font-weight': el._style['font-weight'] || (el._tag === 'h1' || el._tag === 'h2' ? '700' : '400'),
      });
    },
  };
  for (const k in globals) {
    defineProperty(g, k, { value: globals[k], writable: true, configurable: true, enumerable: k === 'window' || k === 'location' });
  }
  for (const k of ['innerWidth', 'innerHeight', 'scrollX', 'scrollY']) {
    const v = k === 'innerWidth' ? 1280 : k === 'innerHeight' ? 900 : 0;
    defineProperty(g, k, { get() { return v; }, configurable: true, enumerable: true });
  }
  defineProperty(g, 'document', { value: new Document(), writable: true, configurable: true, enumerable: true });
  // T.pristine: the fresh realm's window, set by the harness right after this (pristine_window.js).
  const script = new HTMLElement('script');
  script.setAttribute('data-remixproxy', 'tok');
  g.document._head.appendChild(script);
  g.document._script = script;

  // el builds elements: el('a', {href: '/x'}, 'text', child ...).
  T.el = function (tag, attrs) {
    const e = g.document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === 'style') e._style = attrs[k];
      else if (k === 'rect') e._rect = attrs[k];
      else if (k === 'checked') e._checked = attrs[k];
      else if (k === 'selected') e._selected = attrs[k];
      else if (k === 'modal') e._modal = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (let i = 2; i < arguments.length; i++) {
      const c = arguments[i];
      e.appendChild(typeof c === 'string' ? new Text(c) : c);
    }
    return e;
  };
  T.text = (s) => new Text(s);
  // frameDoc gives an iframe a document of its own: a same-origin frame.
  T.frameDoc = (iframe) => { iframe._doc = new Document(); return iframe._doc; };
  T.open = function () {
    const s = T.sockets[T.sockets.length - 1];
    s._state = 1;
    T.fire(s, 'open', new Event('open'));
    T.fire(s, 'message', new MessageEvent(JSON.stringify({ type: 'welcome', session: 's', url: T.href, panel: 'p' })));
  };
  T.deliver = function (m) {
    const s = T.sockets[T.sockets.length - 1];
    T.fire(s, 'message', new MessageEvent(m));
  };
}

// newPage starts the agent in a fresh context on url and returns a driver.
function newPage(url) {
  const ctx = vm.createContext({});
  vm.runInContext('(' + installFakeDOM.toString() + ')(opts)', Object.assign(ctx, { opts: { URL } }));
  vm.runInContext('T.pristine = (' + pristineWindow.toString() + ')(globalThis)', ctx);
  delete ctx.opts;
  vm.runInContext('T.href = ' + JSON.stringify(url), ctx);
  vm.runInContext(agentSource, ctx, { filename: 'agent.js' });
  const T = ctx.T;
  T.open();
  let next = 1;
  const page = {
    ctx,
    T,
    body: ctx.document.body,
    el: T.el,
    run(src) { return vm.runInContext(src, ctx); },
    // call sends one tool call and returns the parsed answer.
    call(tool, args) {
      const id = next++;
      const before = T.sent.length;
      T.deliver(JSON.stringify({ type: 'tool', id, tool, args }));
      for (let i = before; i < T.sent.length; i++) {
        const m = JSON.parse(T.sent[i]);
        if (m.type === 'toolResult' && m.id === id) {
          m.raw = T.sent[i];
          return m;
        }
      }
      throw new Error(tool + ': no answer');
    },
    ok(tool, args) {
      const m = page.call(tool, args);
      assert.strictEqual(m.ok, true, tool + ' ' + JSON.stringify(args) + ' failed: ' + m.error);
      return m.value;
    },
    refused(tool, args, want) {
      const m = page.call(tool, args);
      assert.strictEqual(m.ok, false, tool + ' ' + JSON.stringify(args) + ' was not refused: ' + m.raw);
      assert.ok(m.error.includes(want), tool + ' ' + JSON.stringify(args) + ': error ' + JSON.stringify(m.error) + ', want ' + JSON.stringify(want));
      return m.error;
    },
  };
  return page;
}

// formPage builds the page most scenarios use.
function formPage() {
  const p = newPage('https://site.test/account');
  const e = p.el;
  p.run("T.title = 'Account'");
  p.body.appendChild(e('nav', { 'aria-label': 'Main' },
    e('a', { href: '/docs' }, 'Docs'), e('a', { id: 'away', href: 'https://witness.test/x' }, 'Away'),
    e('a', { id: 'blank', href: '/new', target: '_blank' }, 'New window'),
    e('a', { id: 'ping', href: '/p', ping: 'https://witness.test/ping' }, 'Pinged')));
  p.body.appendChild(e('h1', {}, 'Account'));
  p.body.appendChild(e('p', {}, 'Hello ', e('b', {}, 'reader'), '.'));
  const form = e('form', { id: 'login', action: '/login', method: 'post' },
    e('label', { for: 'email' }, 'Email'), e('input', { id: 'email', name: 'email', type: 'email', value: 'a@b.test', required: '' }),
    e('label', {}, 'Password ', e('input', { id: 'pw', name: 'password', type: 'password' })),
    e('label', {}, e('input', { type: 'checkbox', name: 'remember', checked: true }), ' Remember me'),
    e('input', { type: 'hidden', name: 'csrf', value: 'tok123' }),
    'Phone: ', e('input', { name: 'phone' }),
    e('input', { name: 'q', placeholder: 'Search here' }),
    e('select', { name: 'plan' }, e('option', {}, 'Free'), e('option', { selected: true }, 'Gold')),
    e('span', { id: 'save-label' }, 'Save changes'),
    e('button', { id: 'save', 'aria-labelledby': 'save-label' }, 'x'),
    e('input', { type: 'submit', value: 'Send' }),
    e('button', { id: 'dis', disabled: '' }, 'Disabled'));
  p.body.appendChild(form);
  p.body.appendChild(e('form', { action: 'https://witness.test/collect' }, e('button', { id: 'away-submit' }, 'Elsewhere')));
  p.body.appendChild(e('button', { id: 'fa', formaction: '/x', form: 'login' }, 'Formaction'));
  p.body.appendChild(e('img', { alt: 'A red square' }));
  p.body.appendChild(e('img', { alt: '' }));
  p.body.appendChild(e('ul', {}, e('li', {}, 'First'), e('li', {}, e('a', { href: '#second' }, 'Second'))));
  p.body.appendChild(e('div', { hidden: '' }, e('button', { id: 'hidden-btn' }, 'Hidden')));
  p.body.appendChild(e('button', { id: 'twin1' }, 'Twin'));
  p.body.appendChild(e('button', { id: 'twin2' }, 'Twin'));
  p.body.appendChild(e('div', { 'aria-hidden': 'true' }, 'Invisible to the outline'));
  p.body.appendChild(e('script', {}, 'var leaked = "script text";'));
  // The person types a password.
  p.run("document.getElementById('pw').value = 'hunter2-Secret!'");
  return p;
}

const scenarios = [];
function scenario(name, fn) {
  scenarios.push({ name, fn });
}

scenario('arguments are checked and every call is answered', () => {
  const p = formPage();
  p.refused('eval', {}, 'this page agent has no tool eval');
  p.refused('outline', [1], 'the arguments must be a JSON object');
  p.refused('outline', 'x', 'the arguments must be a JSON object');
  p.refused('outline', { budget: 'big' }, 'budget must be a whole number from 200 to 100000');
  p.refused('outline', { budget: 1.5 }, 'budget must be a whole number');
  p.refused('outline', { colour: 1 }, 'outline: unknown argument "colour" (known: budget, ref, filter)');
  p.refused('query', {}, 'selector is required');
  p.refused('query', { selector: '' }, 'selector must be a string of 1 to 1024 characters');
  p.refused('inspect_styles', { ref: 'e1', properties: 'color' }, 'properties must be a list');
  p.refused('click', {}, 'give exactly one of ref, selector or text');
  p.refused('fetch_page', { url: 'https://witness.test/' }, 'open_page only opens pages of this site (https://site.test)');
  // No arguments at all is an empty object.
  assert.strictEqual(p.call('capture_page', null).ok, true);
});

scenario('outline: roles, names, states, values and refs', () => {
  const p = formPage();
  const v = p.ok('outline', {});
  const o = v.outline;
  const want = [
    'navigation "Main" [e',
    'link "Docs" -> /docs [e',
    'link "Away" -> https://witness.test/\u2026 [e',
    'heading "Account" [level=1] [e',
    '"Hello reader."',
    'form [e',
    'textbox "Email" [required] value="a@b.test" [e',
    'textbox "Password" [password] [e',
    'checkbox "Remember me" [checked] [e',
    'textbox "Phone:" [e',
    'textbox "Search here" [e',
  ];
  for (const w of want) {
    assert.ok(o.includes(w), 'the outline lacks ' + JSON.stringify(w) + ':\n' + o);
  }
  for (const w of ['combobox value="Gold" [e', 'button "Save changes" [e', 'button "Send" [e', 'button "Disabled" [disabled] [e',
    'img "A red square" [e', 'list [e', 'listitem "First" [e', 'link "Second" -> #second [e']) {
    assert.ok(o.includes(w), 'the outline lacks ' + JSON.stringify(w) + ':\n' + o);
  }
  for (const w of ['hunter2', 'tok123', 'Hidden', 'Invisible', 'script text', 'img [', 'img "" ']) {
    assert.ok(!o.includes(w), 'the outline shows ' + JSON.stringify(w) + ':\n' + o);
  }
  // A label's text is its field's name, not a text line of its own.
  for (const w of ['"Email"', '"Remember me"']) {
    assert.ok(!o.split('\n').some((l) => l.trim() === w), 'the outline shows the text ' + w + ':\n' + o);
  }
  assert.strictEqual(v.truncated, false);
  assert.strictEqual(v.refs, (o.match(/\[e\d+\]/g) || []).length);
  // Refs are stable and the subtree of one is shown alone.
  const ref = (line) => /\[(e\d+)\]$/.exec(o.split('\n').find((l) => l.includes(line)))[1];
  const again = p.ok('outline', {}).outline;
  assert.strictEqual(again, o, 'a second outline differs');
  const sub = p.ok('outline', { ref: ref('form [') }).outline;
  assert.ok(sub.startsWith('form [') && sub.includes('textbox "Email"') && !sub.includes('Account'), sub);
  // The interactive filter: controls only, flat.
  const inter = p.ok('outline', { filter: 'interactive' }).outline;
  assert.ok(inter.includes('button "Save changes"') && !inter.includes('heading') && !/^ *"/m.test(inter) && !/^ /m.test(inter), inter);
  // A small budget: text goes first, then link destinations, then the cut is marked.
  const small = p.ok('outline', { budget: 300 });
  assert.ok(small.truncated && small.outline.length < 560 && /\u2026 \(truncated: \d+ more elements; use ref= or filter= to see more\)$/.test(small.outline), small.outline);
  assert.ok(small.outline.includes('link "Docs" [e') && !small.outline.includes('-> /docs') &&
    small.outline.includes('(text and link destinations left out to fit the budget'), small.outline);
  const textChars = o.split('\n').filter((l) => l.trimStart().startsWith('"')).reduce((n, l) => n + l.length + 1, 0);
  const roomy = p.ok('outline', { budget: o.length + 1 - textChars + 2 }).outline;
  assert.ok(roomy.includes('(some text left out'), roomy);
  assert.ok(roomy.includes('link "Docs" -> /docs [e'), 'destinations were left out although the text alone made room:\n' + roomy);
  // A stale ref names the live refs near it.
  const h1 = ref('heading "Account"');
  p.run("document.body.removeChild(document.querySelectorAll('h1').item(0))");
  const err = p.refused('outline', { ref: h1 }, 'element ' + h1 + ' is no longer on the page');
  assert.ok(/Refs near it that still exist: e\d+ /.test(err), err);
  p.refused('outline', { ref: 'e0x' }, 'is not an element ref');
  const form = ref('form [');
  assert.ok(p.ok('outline', { ref: '[' + form + ']' }).outline.startsWith('form ['), 'a ref in brackets');
  p.run("document.getElementById('login')._style.display = 'none'");
  assert.strictEqual(p.ok('outline', { ref: form }).outline, '(nothing to show with filter all: the element is hidden)');
});

scenario('outline: compact lines — joined line breaks, short text in the whole-page outline, this page\'s links relative', () => {
  const p = formPage();
  const e = p.el;
  const long = 'Lorem ipsum dolor sit amet '.repeat(8) + 'needle-word at the end';
  p.body.appendChild(e('p', {}, 'First line', e('br', {}), 'second line'));
  p.body.appendChild(e('p', {}, long));
  p.body.appendChild(e('a', { href: '/account?page=2' }, 'Page two'));
  p.body.appendChild(e('a', { href: '/account#top' }, 'Top'));
  const o = p.ok('outline', {}).outline;
  assert.ok(o.split('\n').some((l) => l.trim() === '"First line second line"'), 'a <br> splits the text:\n' + o);
  assert.ok(o.includes('link "Page two" -> ?page=2 [e') && o.includes('link "Top" -> #top [e'), o);
  const textLine = (out) => out.split('\n').find((l) => l.includes('Lorem ipsum')).trim();
  const near = (n, want) => n >= want && n <= want + 4; // quotes, a space and the ellipsis
  assert.ok(near(textLine(o).length, 200), 'the default outline keeps 200 characters of a text:\n' + textLine(o));
  const all = p.ok('outline', { filter: 'all' }).outline;
  assert.ok(near(textLine(all).length, 100), 'the whole-page outline keeps 100 characters of a text:\n' + textLine(all));
  assert.ok(!all.includes('needle-word'), all);
  // find still reads the whole text run (its own longer lines).
  const f = p.ok('find', { text: 'needle-word' });
  assert.strictEqual(f.matches, 0, 'past 200 characters a text run is cut in find too:\n' + f.outline);
  const g = p.ok('find', { text: 'dolor sit amet lorem ipsum dolor sit amet lorem' });
  assert.ok(g.matches === 1 && g.outline.includes('Lorem ipsum'), g.outline);
});

scenario('find reads the whole page, past the outline\'s largest answer', () => {
  const p = newPage('https://site.test/long');
  const e = p.el;
  const pad = 'x'.repeat(80);
  for (let i = 1; i <= 1000; i++) {
    p.body.appendChild(e('button', { rect: { x: 0, y: 20 * i, w: 100, h: 20 } }, 'Button ' + i + ' ' + pad));
  }
  p.body.appendChild(e('button', { rect: { x: 0, y: 20100, w: 100, h: 20 } }, 'needle-last'));
  const all = p.ok('outline', { filter: 'all', budget: 100000 });
  assert.ok(all.truncated && !all.outline.includes('needle-last'), 'the page is meant to be larger than an outline answer');
  const f = p.ok('find', { text: 'needle-last' });
  assert.strictEqual(f.matches, 1, f.outline);
  assert.ok(/button "needle-last" \[e\d+\]/.test(f.outline), f.outline);
});

scenario('open dialogs come first', () => {
  const p = formPage();
  const e = p.el;
  p.body.appendChild(e('dialog', { open: '', 'aria-label': 'Confirm', modal: true }, e('p', {}, 'Sure?'), e('button', { id: 'dlg-twin' }, 'Twin')));
  const o = p.ok('outline', {}).outline;
  assert.ok(o.startsWith('# open overlays\n dialog "Confirm" [e'), o);
  assert.ok(o.indexOf('Sure?') < o.indexOf('\n# page\n'), o);
  assert.strictEqual(o.split(' dialog "').length, 2, 'the dialog is shown twice:\n' + o);
  // A text click is scoped to the open modal: its Twin, not the page's two.
  const v = p.ok('click', { text: 'Twin' });
  assert.ok(/^button "Twin" \[e\d+\]$/.test(v.clicked), v.clicked);
  assert.strictEqual(p.T.clicks[p.T.clicks.length - 1].getAttribute('id'), 'dlg-twin');
});

scenario('query: refs, attributes, no password values, value selectors refused', () => {
  const p = formPage();
  const v = p.ok('query', { selector: 'form input' });
  assert.strictEqual(v.total, 7);
  const pw = v.matches.find((m) => m.attrs.id === 'pw');
  assert.ok(pw && !('value' in pw) && pw.text === '', JSON.stringify(pw));
  const email = v.matches.find((m) => m.attrs.id === 'email');
  assert.strictEqual(email.value, 'a@b.test');
  assert.deepStrictEqual(Object.keys(email.rect), ['x', 'y', 'width', 'height']);
  assert.strictEqual(p.ok('query', { selector: 'li', limit: 1 }).matches.length, 1);
  p.refused('query', { selector: 'input[value^=h]' }, 'refused while the page has a password field');
  p.refused('query', { selector: 'a[\\68ref]' }, 'refused while the page has a password field');
  p.refused('query', { selector: 'a:has(' }, 'invalid selector');
  p.refused('query', { selector: 'li', limit: 201 }, 'limit must be a whole number from 1 to 200');
});

scenario('read_page_data: own globals, forms, never passwords or cookies', () => {
  const p = formPage();
  p.run(`
    window.appState = {user: {name: 'Reader'}, fn: function () {}, deep: {a: {b: {c: {d: 1}}}}, list: [1, 'two', null]};
    window.loop = {}; loop.self = loop;
    window.draft = {typed: document.getElementById('pw').value, password: 'x'};
    window.session = 'sid=' + 'cookie-secret-value';
    Object.defineProperty(window, 'getterGlobal', {get() { throw new Error('ran a getter'); }, enumerable: true});
    window.aNode = document.body;
    T.cookie = 'sid=cookie-secret-value; theme=dark';
  `);
  const v = p.ok('read_page_data', {});
  const g = v.globals;
  assert.deepStrictEqual(g.appState.user, { name: 'Reader' });
  assert.ok(!('fn' in g.appState), 'a function was kept');
  assert.deepStrictEqual(g.appState.deep, { a: { b: { c: '[deeper]' } } });
  assert.deepStrictEqual(g.appState.list, [1, 'two', null]);
  assert.strictEqual(g.loop.self, '[cycle]');
  assert.strictEqual(g.draft.typed, '[redacted]');
  assert.strictEqual(g.draft.password, '[redacted]');
  assert.strictEqual(g.session, 'sid=[redacted]');
  assert.ok(!('getterGlobal' in g) && !('aNode' in g) && !('document' in g) && !('location' in g) && !('T' in g), Object.keys(g).join());
  const login = v.forms.find((f) => f.id === 'login');
  assert.strictEqual(login.action, 'https://site.test/login');
  assert.strictEqual(login.method, 'post');
  const byName = Object.fromEntries(login.fields.map((f) => [f.name, f]));
  assert.strictEqual(byName.email.value, 'a@b.test');
  assert.strictEqual(byName.email.label, 'Email');
  assert.strictEqual(byName.csrf.value, 'tok123');
  assert.strictEqual(byName.remember.checked, true);
  assert.strictEqual(byName.password.password, true);
  assert.ok(!('value' in byName.password));
  assert.strictEqual(byName.plan.value, 'Gold');
});

scenario('click: only what stays on the site, visible, enabled and on top', () => {
  const p = formPage();
  p.refused('click', { text: 'Away' }, 'the link goes to https://witness.test, another site than this page (https://site.test); clicking it is refused');
  p.refused('click', { selector: '#blank' }, 'opens another window or frame');
  p.refused('click', { selector: '#ping' }, 'pings other addresses');
  p.refused('click', { selector: '#away-submit' }, 'the form submits to https://witness.test, another site than this page (https://site.test); clicking its submit button is refused');
  p.body.appendChild(p.el('form', { action: '/elsewhere', target: '_blank' }, p.el('input', { id: 'popup-field' }), p.el('button', { id: 'popup-submit' }, 'Popup')));
  p.refused('click', { selector: '#popup-submit' }, 'the form submits into another window or frame (target); clicking its submit button is refused');
  p.refused('set_field', { ref: p.ok('query', { selector: '#popup-field' }).matches[0].ref, text: 'x', submit: true },
    'the form submits into another window or frame (target); submitting it is refused');
  p.refused('click', { selector: '#fa' }, 'formaction');
  p.refused('click', { selector: '#dis' }, 'is disabled');
  p.refused('click', { selector: '#hidden-btn' }, 'is not visible');
  const many = p.refused('click', { text: 'Twin' }, '2 elements are named "Twin"; click one by ref: e');
  assert.ok(/e\d+ button "Twin" at \(\d+,\d+\); e\d+ button "Twin"/.test(many), many);
  p.refused('click', { text: 'No such thing' }, 'no visible clickable element is named "No such thing"');
  p.refused('click', { selector: 'button' }, 'elements match button; click one by ref');
  // Something else on top at the centre: refused, naming it.
  const save = p.run("document.getElementById('save')");
  const cover = p.el('div', { id: 'cover' }, 'Cookie banner');
  p.body.appendChild(cover);
  cover._rect = { x: 0, y: 0, w: 2000, h: 2000 };
  p.refused('click', { selector: '#save' }, 'another element is on top of button "Save changes" [e');
  p.refused('click', { selector: '#save' }, 'div "Cookie banner" [e');
  p.body.removeChild(cover);
  assert.strictEqual(p.T.clicks.length, 0, 'something was clicked');
  // The same site: clicked.
  let v = p.ok('click', { text: 'Docs' });
  assert.strictEqual(v.link, '/docs');
  assert.strictEqual(v.mayLeave, true);
  assert.deepStrictEqual(Array.from(p.T.navigations), ['https://site.test/docs']);
  v = p.ok('click', { selector: '#save' });
  assert.strictEqual(v.submits, '/login');
  assert.ok(p.T.clicks[p.T.clicks.length - 1] === save);
  v = p.ok('click', { text: 'Second' });
  assert.strictEqual(v.mayLeave, false);
});

scenario('answers never carry a password and stay under the message limit', () => {
  const p = formPage();
  p.run("document.body.appendChild(T.el('p', {}, 'you typed hunter2-Secret! here'))");
  const v = p.call('capture_page', {});
  assert.ok(v.ok && !v.raw.includes('hunter2') && v.value.text.includes('you typed [redacted] here'), v.raw);
  const outline = p.call('outline', { filter: 'all' });
  assert.ok(!outline.raw.includes('hunter2'), outline.raw);
  // A page of 100 000 three-byte characters is too big to send: a clear error instead.
  p.run("document.body.appendChild(T.el('p', {}, '\\u20ac'.repeat(100000)))");
  p.refused('capture_page', { maxChars: 100000 }, 'the result is too large (');
  assert.strictEqual(p.ok('capture_page', { maxChars: 5000 }).truncated, true);
});

scenario('the tools keep working after the page replaced built-ins', () => {
  const p = formPage();
  const before = p.ok('outline', {}).outline;
  p.run(`
    window.caught = '';
    const trap = (what) => function () { window.caught += what + ' '; throw new Error('trap ' + what); };
    Array.prototype.push = trap('push'); Array.prototype.indexOf = trap('indexOf'); Array.prototype.slice = trap('slice');
    Array.prototype.join = trap('join');
    String.prototype.indexOf = trap('s.indexOf'); String.prototype.slice = trap('s.slice');
    String.prototype.toLowerCase = trap('toLowerCase'); String.prototype.charCodeAt = trap('charCodeAt');
    JSON.stringify = trap('stringify'); JSON.parse = trap('parse');
    Map.prototype.get = trap('map.get'); WeakMap.prototype.get = trap('weak.get'); WeakMap.prototype.set = trap('weak.set');
    Object.keys = trap('keys'); Reflect.apply = trap('apply'); Array.isArray = trap('isArray');
    Object.defineProperty(Object.prototype, 'toJSON', {get() { window.caught += 'toJSON '; }, configurable: true});
    Object.defineProperty(Array.prototype, '0', {set(v) { window.caught += 'array-set '; }, configurable: true});
    window.getComputedStyle = trap('getComputedStyle');
    Element.prototype.getAttribute = trap('getAttribute');
    window.pageGlobal = 1;
  `);
  const after = p.ok('outline', {}).outline;
  assert.strictEqual(after, before, 'the outline changed after the page replaced built-ins');
  assert.strictEqual(p.ok('read_page_data', {}).globals.pageGlobal, 1);
  p.refused('click', { text: 'Away' }, 'another site');
  assert.strictEqual(p.run('window.caught'), '');
});

scenario('the tools\' first call after the page replaced what they capture then', () => {
  // The tools' captures are taken at the first tool call, from a fresh realm: a page script
  // that replaced those built-ins before it is never called (tool_capture.js, fresh_realm.js).
  const want = formPage().ok('outline', {}).outline;
  const p = formPage();
  p.run(`
    window.caught = '';
    const trap = (what) => function () { window.caught += what + ' '; throw new Error('trap ' + what); };
    const trapGet = (obj, name) => Object.defineProperty(obj, name, { get: trap(name), configurable: true });
    Element.prototype.getBoundingClientRect = trap('getBoundingClientRect');
    Element.prototype.matches = trap('matches'); Element.prototype.closest = trap('closest');
    Node.prototype.contains = trap('contains'); Node.prototype.getRootNode = trap('getRootNode');
    Document.prototype.getElementById = trap('getElementById'); Document.prototype.elementFromPoint = trap('elementFromPoint');
    HTMLElement.prototype.click = trap('click');
    trapGet(Node.prototype, 'previousSibling'); trapGet(Node.prototype, 'ownerDocument');
    trapGet(HTMLInputElement.prototype, 'checked'); trapGet(HTMLInputElement.prototype, 'labels');
    trapGet(HTMLFormElement.prototype, 'action'); trapGet(HTMLAnchorElement.prototype, 'href');
    trapGet(HTMLOptionElement.prototype, 'text'); trapGet(CharacterData.prototype, 'data');
    trapGet(window, 'innerWidth'); trapGet(window, 'scrollY');
  `);
  const got = p.ok('outline', {}).outline;
  assert.strictEqual(p.run('window.caught'), '', 'the page\'s replacements were called');
  assert.strictEqual(got, want, 'the outline differs on the page that replaced built-ins first');
  p.refused('click', { text: 'Away' }, 'another site');
  p.ok('click', { text: 'Docs' });
  assert.strictEqual(p.run('window.caught'), '');
});

scenario('find: matching lines with their ancestors', () => {
  const p = formPage();
  const v = p.ok('find', { text: 'remember' });
  assert.strictEqual(v.matches, 1);
  assert.ok(/^form \[e\d+\]\n \u2026\n checkbox "Remember me" \[checked\] \[e\d+\]$/.test(v.outline), v.outline);
  const twins = p.ok('find', { text: 'twin', limit: 1 });
  assert.strictEqual(twins.matches, 2);
  assert.ok(twins.truncated && twins.outline.includes('1 more matches'), twins.outline);
  assert.strictEqual(p.ok('find', { text: 'no such words' }).matches, 0);
  p.refused('find', { text: '   ' }, 'text must not be blank');
  p.refused('find', { text: 'x', limit: 0 }, 'limit must be a whole number from 1 to 100');
});

scenario('type: React-style value setter and events; passwords and non-text fields refused', () => {
  const p = formPage();
  const o = p.ok('outline', { filter: 'all' }).outline;
  const ref = (part) => /\[(e\d+)\]$/.exec(o.split('\n').find((l) => l.includes(part)))[1];
  p.run("window.seen = []; document.querySelectorAll('input[name=q]').item(0).addEventListener('input', function (e) { seen.push(e.type + ':' + this.value); })");
  const v = p.ok('type', { ref: ref('textbox "Search here"'), text: 'shoes' });
  assert.strictEqual(v.value, 'shoes');
  assert.strictEqual(v.verified, true);
  assert.deepStrictEqual(Array.from(p.run('seen')), ['input:shoes']);
  assert.ok(p.T.events.includes('change input'), p.T.events.join());
  assert.strictEqual(p.ok('type', { ref: ref('textbox "Search here"'), text: ' red', clear: false }).value, 'shoes red');
  assert.strictEqual(p.ok('type', { ref: ref('textbox "Search here"'), text: '' }).value, '');
  p.refused('type', { ref: ref('textbox "Password"'), text: 'x' }, 'is a password field; the agent never types passwords');
  assert.strictEqual(p.run("document.getElementById('pw').value"), 'hunter2-Secret!');
  p.refused('type', { ref: ref('checkbox "Remember me"'), text: 'x' }, 'is a checkbox input: text cannot be typed into it; use click');
  p.refused('type', { ref: ref('button "Save changes"'), text: 'x' }, 'is not a text field');
  p.refused('type', { ref: ref('textbox "Search here"'), text: 5 }, 'text must be a string');
  p.refused('type', { ref: ref('textbox "Search here"'), text: 'x', clear: 'no' }, 'clear must be true or false');
  p.refused('set_field', { ref: ref('textbox "Password"'), text: 'x', submit: true }, 'is a password field');
});

scenario('press_keys: a bounded set of keys to the focused element', () => {
  const p = formPage();
  p.run("window.keys = []; document.body.addEventListener('keydown', function (e) { keys.push(e.key); })");
  const v = p.ok('press_keys', { keys: ['Escape', 'ArrowDown', 'PageDown'] });
  assert.strictEqual(v.pressed.length, 3);
  assert.deepStrictEqual(Array.from(p.run('keys')), ['Escape', 'ArrowDown', 'PageDown']);
  p.refused('press_keys', { keys: ['Control+a'] }, 'is not one the agent may press');
  p.refused('press_keys', { keys: new Array(21).fill('Tab') }, 'keys must be a list of 1 to 20');
  p.refused('press_keys', { keys: 'Enter', extra: 1 }, 'unknown argument "extra"');
});

scenario('click: refused when the proxy says the same control was just clicked', () => {
  const p = formPage();
  p.refused('click', { text: 'Send', recent: [{ name: 'send', seconds: 12 }] }, 'not clicked: button "Send" [e');
  p.refused('click', { text: 'Send', recent: [{ name: 'send', seconds: 12 }] }, 'was already clicked on this page 12 seconds ago');
  assert.strictEqual(p.T.clicks.length, 0);
  const v = p.ok('click', { text: 'Send', recent: [{ name: 'save changes', seconds: 1 }], resubmit: true });
  assert.strictEqual(v.name, 'send');
  // set_field's submission is the click of the form's default button ("Save changes" here).
  const o = p.ok('outline', {}).outline;
  const phone = /textbox "Phone:" \[(e\d+)\]/.exec(o)[1];
  p.refused('set_field', { ref: phone, text: '555', submit: true, recent: [{ name: 'save changes', seconds: 3 }] },
    'not clicked: the form\'s submission (save changes) was already clicked on this page 3 seconds ago');
  assert.strictEqual(p.run("document.querySelectorAll('input[name=phone]').item(0).value"), '', 'typed before the refusal');
  const sf = p.ok('set_field', { ref: phone, text: '555', submit: true, recent: [{ name: 'send', seconds: 3 }] });
  assert.strictEqual(sf.name, 'save changes', JSON.stringify(sf));
  assert.strictEqual(p.ok('set_field', { ref: phone, text: '556' }).name, undefined, 'a fill without submit is not a submission');
});

scenario('probe and expect: the proxy learns what an action would activate, then the action must match it', () => {
  const p = formPage();
  const e = p.el;
  // A click on a POST form's submit button: facts, and nothing clicked.
  let f = p.ok('click', { selector: '#save', probe: true }).probe;
  assert.strictEqual(f.how, 'click');
  assert.strictEqual(f.tag, 'button');
  assert.strictEqual(f.name, 'save changes');
  assert.strictEqual(f.shown, 'Save changes');
  assert.strictEqual(f.submits, true);
  assert.strictEqual(f.method, 'post');
  assert.strictEqual(f.submitterMethod, '');
  assert.strictEqual(f.action, 'https://site.test/login');
  assert.ok(f.control.startsWith('button "Save changes" [e'), f.control);
  assert.ok(typeof f.key === 'string' && f.key !== '', f.key);
  assert.strictEqual(p.T.clicks.length, 0, 'a probe clicked');
  // The probe runs the click's checks: another site's form is refused there already.
  p.refused('click', { selector: '#away-submit', probe: true }, 'another site than this page');
  // With the probe's key the click goes; with another it does not.
  p.refused('click', { selector: '#save', expect: 'something else' }, 'not done: button "Save changes" [e');
  p.refused('click', { selector: '#save', expect: f.key.replace('post', 'get') }, 'is not what the proxy checked (the page changed it since)');
  assert.strictEqual(p.T.clicks.length, 0);
  p.ok('click', { selector: '#save', expect: f.key });
  assert.strictEqual(p.T.clicks.length, 1);
  // The page switches the button to formmethod=post after the probe: refused.
  p.body.appendChild(e('form', { id: 'g', action: '/search' }, e('input', { id: 'gq', name: 'gq' }), e('button', { id: 'go' }, 'Go')));
  f = p.ok('click', { selector: '#go', probe: true }).probe;
  assert.strictEqual(f.method, 'get');
  p.run("document.getElementById('go').setAttribute('formmethod', 'POST')");
  p.refused('click', { selector: '#go', expect: f.key }, 'is not what the proxy checked');
  assert.strictEqual(p.ok('click', { selector: '#go', probe: true }).probe.submitterMethod, 'post');
  // A link: its address; names the page gives it by attribute are reported too.
  p.body.appendChild(e('a', { id: 'del', href: '/account/close', 'data-x': '1', name: 'deleteAccount' }, 'Continue'));
  f = p.ok('click', { selector: '#del', probe: true }).probe;
  assert.strictEqual(f.link, 'https://site.test/account/close');
  assert.strictEqual(f.submits, false);
  assert.ok(Array.from(f.labels).includes('deleteAccount') && Array.from(f.labels).includes('del'), JSON.stringify(f.labels));
  assert.strictEqual(p.T.navigations.length, 0, 'a probe followed a link');
  // set_field with submit: the form's default button, nothing typed.
  const phone = p.run("document.querySelectorAll('input[name=phone]').item(0)");
  const o = p.ok('outline', {}).outline;
  const phoneRef = /textbox "Phone:" \[(e\d+)\]/.exec(o)[1];
  f = p.ok('set_field', { ref: phoneRef, text: '555', submit: true, probe: true }).probe;
  assert.strictEqual(f.how, 'submit');
  assert.strictEqual(f.name, 'save changes');
  assert.strictEqual(f.method, 'post');
  assert.strictEqual(phone.value, '', 'a probe typed');
  p.refused('set_field', { ref: phoneRef, text: '555', submit: true, expect: '' }, 'it would submit a form');
  assert.strictEqual(phone.value, '');
  p.ok('set_field', { ref: phoneRef, text: '555', submit: true, expect: f.key });
  assert.strictEqual(phone.value, '555');
  // Without submit nothing is probed for: the fill is not a submission.
  assert.strictEqual(p.ok('set_field', { ref: phoneRef, text: '556' }).name, undefined);
  // press_keys: Enter in a form's field is the form's submission; other keys are nothing.
  p.run("T.active = document.querySelectorAll('input[name=phone]').item(0)");
  p.run("window.keys = []; T.active.addEventListener('keydown', function (e) { keys.push(e.key); })");
  assert.strictEqual(p.ok('press_keys', { keys: ['Escape'], probe: true }).probe, null);
  f = p.ok('press_keys', { keys: ['Tab', 'Enter'], probe: true }).probe;
  assert.strictEqual(f.how, 'enter');
  assert.strictEqual(f.method, 'post');
  assert.deepStrictEqual(Array.from(p.run('keys')), [], 'a probe pressed keys');
  p.refused('press_keys', { keys: ['Enter'], expect: '' }, 'not done: Enter in textbox "Phone:"');
  assert.deepStrictEqual(Array.from(p.run('keys')), []);
  p.ok('press_keys', { keys: ['Enter'], expect: f.key });
  assert.deepStrictEqual(Array.from(p.run('keys')), ['Enter']);
  p.run('T.active = null');
});

scenario('probe: a label passes the click to its control, a plain button to the submit button around it', () => {
  const p = formPage();
  const e = p.el;
  // "Continue" labels the hidden submit button of a POST form: the click submits that form.
  p.body.appendChild(e('form', { id: 'pay', action: '/account', method: 'post' }, e('button', { id: 'paybtn' }, 'x')));
  p.body.appendChild(e('label', { id: 'cont', for: 'paybtn' }, 'Continue'));
  let f = p.ok('click', { selector: '#cont', probe: true }).probe;
  assert.strictEqual(f.submits, true, 'the label submits its control\'s form');
  assert.strictEqual(f.method, 'post');
  assert.strictEqual(f.action, 'https://site.test/account');
  // A label of another site's submit button is refused like the button.
  p.body.appendChild(e('form', { id: 'away2', action: 'https://witness.test/s' }, e('button', { id: 'awaybtn' }, 'y')));
  p.body.appendChild(e('label', { id: 'awaylbl', for: 'awaybtn' }, 'Next'));
  p.refused('click', { selector: '#awaylbl', probe: true }, 'another site than this page');
  // A type=button button inside a POST form's submit button: the outer one submits.
  p.body.appendChild(e('form', { id: 'nest', action: '/nested', method: 'post' },
    e('button', { id: 'outer' }, e('button', { id: 'inner', type: 'button' }, 'Go on'))));
  f = p.ok('click', { selector: '#inner', probe: true }).probe;
  assert.strictEqual(f.submits, true, 'the outer submit button acts');
  assert.strictEqual(f.action, 'https://site.test/nested');
  // A label of a text field submits nothing.
  p.body.appendChild(e('form', { id: 'plain', action: '/p', method: 'post' }, e('label', { id: 'nl', for: 'nf' }, 'Name'), e('input', { id: 'nf', name: 'n' })));
  const pr = p.ok('click', { selector: '#nl', probe: true }).probe;
  assert.ok(pr === null || pr.submits === false, JSON.stringify(pr));
});

scenario('same-origin frames: outline, refs, type, click and the scrub; other sites are one line', () => {
  const p = newPage('https://site.test/frames');
  const e = p.el;
  p.body.appendChild(e('h1', {}, 'Outer'));
  const frame = e('iframe', { title: 'Login frame', src: '/inner', rect: { x: 0, y: 400, w: 600, h: 300 } });
  p.body.appendChild(frame);
  p.body.appendChild(e('iframe', { title: 'Ads', src: 'https://ads.test/slot?id=ad-secret-id', rect: { x: 0, y: 720, w: 300, h: 100 } }));
  const fd = p.T.frameDoc(frame);
  const fe = fd.body.appendChild(e('input', { id: 'fe', 'aria-label': 'Frame email', rect: { x: 10, y: 10, w: 200, h: 20 } }));
  const fpw = fd.body.appendChild(e('input', { id: 'fpw', type: 'password', 'aria-label': 'Frame password', rect: { x: 10, y: 40, w: 200, h: 20 } }));
  const go = fd.body.appendChild(e('button', { id: 'fgo', rect: { x: 10, y: 70, w: 100, h: 20 } }, 'Frame go'));
  fd.body.appendChild(e('p', { rect: { x: 10, y: 100, w: 300, h: 20 } }, 'shown frame-Secret-99'));
  fd.body.appendChild(e('button', { id: 'low', rect: { x: 10, y: 500, w: 100, h: 20 } }, 'Below the fold'));
  fpw.value = 'frame-Secret-99';

  const m = p.call('outline', {});
  assert.strictEqual(m.ok, true, m.error);
  const o = m.value.outline;
  for (const want of ['iframe "Login frame" [e', ' textbox "Frame email" [e', 'textbox "Frame password" [password] [e',
    'button "Frame go" [e', '"shown [redacted]"',
    'iframe "Ads" (other site, not readable) -> https://ads.test/\u2026']) {
    assert.ok(o.includes(want), 'outline has no ' + JSON.stringify(want) + ':\n' + o);
  }
  assert.ok(!o.includes('Below the fold'), 'the default outline shows what is out of the frame\'s view:\n' + o);
  assert.ok(!m.raw.includes('frame-Secret-99') && !m.raw.includes('ad-secret-id'), m.raw);
  assert.ok(/iframe "Ads" \(other site, not readable\)[^\n]*$/m.test(o) && !/"Ads"[^\n]*\[e\d+\]/.test(o), 'the other site\'s frame has a ref:\n' + o);
  const ref = (part) => o.split('\n').find((l) => l.includes(part)).match(/\[(e\d+)\]$/)[1];

  const typed = p.ok('type', { ref: ref('"Frame email"'), text: 'x@y.test' });
  assert.strictEqual(typed.verified, true);
  assert.strictEqual(fe.value, 'x@y.test');
  p.refused('type', { ref: ref('"Frame password"'), text: 'x' }, 'is a password field');
  p.ok('click', { ref: ref('"Frame go"') });
  assert.ok(p.T.clicks.includes(go), 'the frame\'s button was not clicked');
  p.ok('click', { text: 'Frame go' });
  p.run("T.hit = document.querySelectorAll('h1').item(0)");
  p.refused('click', { ref: ref('"Frame go"') }, 'another element is on top');
  p.run('T.hit = null');

  const q = p.ok('query', { selector: '#fe' });
  assert.strictEqual(q.total, 1);
  p.refused('query', { selector: 'input[value^=f]' }, 'refused while the page has a password field');
  const f = p.ok('find', { text: 'frame go' });
  assert.ok(f.outline.includes('iframe "Login frame"') && f.outline.includes('button "Frame go"'), f.outline);
  const all = p.ok('outline', { filter: 'all' }).outline;
  assert.ok(all.includes('button "Below the fold"'), all);

  // A frame taken off the page takes its refs with it.
  const goRef = ref('"Frame go"');
  p.body.removeChild(frame);
  p.refused('click', { ref: goRef }, 'is no longer on the page');
});

scenario('secrets: password values reported to the proxy before each answer and on change', () => {
  const p = newPage('https://site.test/login');
  const e = p.el;
  p.run("T.cookie = 'sid=cookie-value-123; theme=dark'");
  const pw = p.body.appendChild(e('input', { id: 'pw', type: 'password', 'aria-label': 'Password' }));
  const frame = p.body.appendChild(e('iframe', { title: 'Inner', src: '/inner', rect: { x: 0, y: 400, w: 600, h: 300 } }));
  const fpw = p.T.frameDoc(frame).body.appendChild(e('input', { type: 'text', autocomplete: 'current-password' }));
  pw.value = 'typed-Secret-1';
  fpw.value = 'frame-Secret-2';
  const reports = () => p.T.sent.map((s) => JSON.parse(s)).filter((m) => m.type === 'secrets');

  // A tool's start reports every field (the page's and the frame's) and the cookies, before
  // its answer; the answer itself never carries them.
  const before = p.T.sent.length;
  const m = p.call('capture_page', {});
  const first = p.T.sent.slice(before).map((s) => JSON.parse(s));
  const at = first.findIndex((x) => x.type === 'secrets');
  assert.ok(at >= 0 && at < first.findIndex((x) => x.type === 'toolResult'), 'no report before the answer: ' + JSON.stringify(first));
  const values = first[at].fields.map((f) => f.value).sort();
  assert.deepStrictEqual(values, ['frame-Secret-2', 'typed-Secret-1']);
  assert.deepStrictEqual(first[at].cookies, ['cookie-value-123', 'dark']);
  assert.ok(!m.raw.includes('typed-Secret-1'), m.raw);
  // Nothing changed: the next tool sends no second report.
  const n = reports().length;
  p.call('outline', {});
  assert.strictEqual(reports().length, n, 'an unchanged report was sent again');

  // The person types: the field is reported at once, under the same id.
  const id = reports()[0].fields.find((f) => f.value === 'typed-Secret-1').id;
  pw.value = 'typed-Secret-1-more';
  p.run("(() => { const ev = new Event('input'); ev._target = document.getElementById('pw'); T.fire(window, 'input', ev); })()");
  const last = reports()[reports().length - 1];
  assert.deepStrictEqual(last.fields, [{ id, value: 'typed-Secret-1-more' }]);
  // Other fields' events report nothing.
  const count = reports().length;
  p.body.appendChild(e('input', { id: 'q' }));
  p.run("(() => { const ev = new Event('input'); ev._target = document.getElementById('q'); T.fire(window, 'input', ev); })()");
  assert.strictEqual(reports().length, count);

  // report_secrets is the proxy's way to ask; a link that carries a secret is not clicked.
  assert.strictEqual(p.ok('report_secrets', {}), null);
  p.body.appendChild(e('a', { id: 'leak', href: '/share?p=typed-Secret-1-more', rect: { x: 0, y: 50, w: 100, h: 20 } }, 'Share'));
  p.body.appendChild(e('a', { id: 'leak2', href: '/share?c=cookie-value-123', rect: { x: 0, y: 80, w: 100, h: 20 } }, 'Share 2'));
  p.refused('click', { selector: '#leak' }, 'carries a password or cookie value of this page');
  p.refused('click', { selector: '#leak2' }, 'carries a password or cookie value of this page');
  p.body.appendChild(e('a', { id: 'fine', href: '/share?p=nothing', rect: { x: 0, y: 110, w: 100, h: 20 } }, 'Share 3'));
  p.ok('click', { selector: '#fine' });
});

scenario('secrets: fields the page marks as secret (a password textarea, a one-time code, a card) are reported, never read out', () => {
  const p = newPage('https://site.test/vault');
  const e = p.el;
  const ta = p.body.appendChild(e('textarea', { id: 'key', autocomplete: 'current-password', 'aria-label': 'Key' }));
  const otp = p.body.appendChild(e('input', { id: 'otp', autocomplete: 'one-time-code', 'aria-label': 'Code' }));
  const card = p.body.appendChild(e('input', { id: 'card', autocomplete: 'cc-number', 'aria-label': 'Card' }));
  const note = p.body.appendChild(e('input', { id: 'note', 'aria-label': 'Note' }));
  ta.value = 'Textarea-Key-9753';
  otp.value = 'OTP-864201';
  card.value = '4111 1111 1111 1111';
  note.value = 'plain note';
  const reports = () => p.T.sent.map((s) => JSON.parse(s)).filter((m) => m.type === 'secrets');
  const outline = p.ok('outline', { filter: 'all' }).outline;
  assert.ok(/textbox "Key" \[secret\]/.test(outline) && /textbox "Code" \[secret\]/.test(outline), outline);
  assert.ok(outline.includes('value="plain note"'), outline);
  const q = p.call('query', { selector: 'input, textarea' });
  const forms = p.call('read_page_data', {});
  for (const raw of [outline, q.raw, forms.raw]) {
    for (const v of ['Textarea-Key-9753', 'OTP-864201', '4111 1111 1111 1111']) {
      assert.ok(!raw.includes(v), v + ' read out: ' + raw);
    }
  }
  const values = reports()[0].fields.map((f) => f.value).sort();
  assert.deepStrictEqual(values, ['4111 1111 1111 1111', 'OTP-864201', 'Textarea-Key-9753']);
});

scenario('page_state: open dialogs and forms with unsaved input', () => {
  const p = formPage();
  let v = p.ok('page_state', {});
  assert.deepStrictEqual(Array.from(v.dialogs), []);
  const login = v.forms.find((f) => f.container.startsWith('form'));
  assert.ok(login && login.unsaved.some((s) => s.startsWith('textbox "Password"')), JSON.stringify(v.forms));
  p.body.appendChild(p.el('dialog', { open: '', 'aria-label': 'Add a product', modal: true }, p.el('input', { id: 'pname', 'aria-label': 'Product name' })));
  p.run("document.getElementById('pname').value = 'namaz'");
  v = p.ok('page_state', {});
  assert.ok(v.dialogs.length === 1 && v.dialogs[0].startsWith('dialog "Add a product" [e'), JSON.stringify(v.dialogs));
  assert.ok(v.forms.some((f) => f.container.startsWith('dialog') && f.unsaved[0].startsWith('textbox "Product name"')), JSON.stringify(v.forms));
  assert.ok(!v.raw || !v.raw.includes('hunter2'));
});

let failed = 0;
for (const s of scenarios) {
  try {
    s.fn();
    console.log('ok   ' + s.name);
  } catch (e) {
    failed++;
    console.log('FAIL ' + s.name + '\n' + (e && e.stack ? e.stack : e));
  }
}
if (failed > 0) {
  console.log(failed + ' of ' + scenarios.length + ' scenarios failed');
  process.exit(1);
}
