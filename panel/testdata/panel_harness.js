// Behavioural test of static/panel.js in node, with a minimal fake DOM and WebSocket.
//
//   node testdata/panel_harness.js static/panel.js
//
// Exit status 0 means every scenario passed.
'use strict';

const vm = require('vm');
const fs = require('fs');
const assert = require('assert');

const panelPath = process.argv[2];
if (!panelPath) {
  console.error('usage: node panel_harness.js path/to/panel.js');
  process.exit(2);
}
const panelSource = fs.readFileSync(panelPath, 'utf8');

// A minimal fake DOM: elements with children, attributes, listeners and text. Every HTML sink
// throws, so a scenario fails if panel.js ever parses HTML.
class FakeText {
  constructor(text) {
    this.nodeType = 3;
    this.data = String(text);
    this.parentNode = null;
  }
  get textContent() { return this.data; }
}

class FakeElement {
  constructor(tag, id) {
    this.nodeType = 1;
    this.tagName = String(tag).toUpperCase();
    this.id = id || '';
    this.childNodes = [];
    this.parentNode = null;
    this.attrs = {};
    this.listeners = {};
    this.className = '';
    this.hidden = false;
    this.disabled = false;
    this.value = '';
    this.open = false;
    this.type = '';
    this.scrollTop = 0;
    this.scrollHeight = 0;
    this.clientHeight = 0;
    this.style = {};
  }
  // offsetHeight is what FakeElement.layout says (a scenario sets it), else unknown.
  get offsetHeight() { return FakeElement.layout ? FakeElement.layout(this) : undefined; }
  get textContent() { return this.childNodes.map((c) => c.textContent).join(''); }
  set textContent(v) {
    for (const c of this.childNodes) c.parentNode = null;
    this.childNodes = v === '' || v === null || v === undefined ? [] : [new FakeText(v)];
  }
  set innerHTML(v) { throw new Error('innerHTML used'); }
  get innerHTML() { throw new Error('innerHTML read'); }
  set outerHTML(v) { throw new Error('outerHTML used'); }
  insertAdjacentHTML() { throw new Error('insertAdjacentHTML used'); }
  appendChild(c) {
    assert.ok(c instanceof FakeElement || c instanceof FakeText, 'appendChild of a non-node: ' + c);
    if (c.parentNode) c.parentNode.removeChild(c);
    c.parentNode = this;
    this.childNodes.push(c);
    return c;
  }
  removeChild(c) {
    const i = this.childNodes.indexOf(c);
    assert.ok(i >= 0, 'removeChild of a non-child');
    this.childNodes.splice(i, 1);
    c.parentNode = null;
    return c;
  }
  replaceChild(n, o) {
    const i = this.childNodes.indexOf(o);
    assert.ok(i >= 0, 'replaceChild of a non-child');
    if (n.parentNode) n.parentNode.removeChild(n);
    this.childNodes[i] = n;
    n.parentNode = this;
    o.parentNode = null;
    return o;
  }
  setAttribute(name, value) { this.attrs[name] = String(value); }
  getAttribute(name) { return Object.prototype.hasOwnProperty.call(this.attrs, name) ? this.attrs[name] : null; }
  addEventListener(type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); }
  // fire dispatches ev (trusted unless it says otherwise) to this element's listeners.
  fire(type, ev) {
    const e = Object.assign({ type, isTrusted: true, preventDefault() { this.defaultPrevented = true; } }, ev || {});
    for (const fn of this.listeners[type] || []) fn(e);
    return e;
  }
  hasClass(c) { return this.className.split(/\s+/).includes(c); }
  // all returns every descendant element for which pred is true.
  all(pred) {
    const out = [];
    const walk = (n) => {
      for (const c of n.childNodes) {
        if (c instanceof FakeElement) {
          if (pred(c)) out.push(c);
          walk(c);
        }
      }
    };
    walk(this);
    return out;
  }
  byClass(c) { return this.all((e) => e.hasClass(c)); }
  byTag(t) { return this.all((e) => e.tagName === t.toUpperCase()); }
}

// The ids panel.html gives panel.js (panel_test.go checks the list against panel.html).
const ELEMENT_IDS = {
  status: 'p', 'status-text': 'span', error: 'p', 'page-title': 'p', 'page-url': 'p',
  'new-chat': 'button', 'mode-ask': 'button', 'mode-build': 'button', 'mode-act': 'button',
  model: 'select', log: 'main', empty: 'p', composer: 'form', input: 'textarea', send: 'button',
  usage: 'span', manage: 'a', announce: 'div', 'api-access': 'button', 'act-submits': 'button',
  commands: 'section', 'command-list': 'div', 'commands-note': 'p', resume: 'section', 'resume-chat': 'button',
};

// newPanel runs panel.js in a fresh context whose location is url and whose parent is a separate
// window object (the page) unless framed is false. io chooses the IntersectionObserver: 'v2'
// (the default: trackVisibility and isVisible), 'v1' (no visibility tracking), 'missing' or
// 'throws'.
function newPanel(url, framed, io) {
  io = io || 'v2';
  const listeners = {};
  const docListeners = {};
  const elements = {};
  for (const id of Object.keys(ELEMENT_IDS)) {
    elements[id] = new FakeElement(ELEMENT_IDS[id], id);
  }
  elements.error.hidden = true;
  elements['page-title'].hidden = true;
  elements.manage.hidden = true;
  elements['api-access'].hidden = true;
  elements['act-submits'].hidden = true;
  elements.commands.hidden = true;
  elements.resume.hidden = true;
  elements.log.appendChild(elements.empty);
  const sockets = [];
  const timers = [];
  const clock = { t: 1000 };
  class WebSocket {
    constructor(u) {
      this.url = u;
      this.listeners = {};
      this.closedWith = null;
      this.readyState = 0;
      this.sent = [];
      sockets.push(this);
    }
    addEventListener(type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); }
    close(code, reason) { this.closedWith = [code, reason]; this.readyState = 3; }
    send(data) {
      assert.strictEqual(this.readyState, 1, 'send on a socket that is not open');
      assert.strictEqual(typeof data, 'string');
      this.sent.push(JSON.parse(data));
    }
    fire(type, ev) { for (const fn of this.listeners[type] || []) fn(ev); }
  }
  const observers = [];
  class IntersectionObserver {
    constructor(cb, opts) {
      if (io === 'throws') throw new Error('no');
      this.cb = cb;
      this.opts = opts;
      this.targets = [];
      this.disconnected = false;
      if (io === 'v2') this.trackVisibility = opts.trackVisibility === true;
      observers.push(this);
    }
    observe(t) { this.targets.push(t); }
    disconnect() { this.disconnected = true; }
  }
  const loc = new URL(url);
  const parent = framed === false ? null : { name: 'page window' };
  const document = {
    visibilityState: 'visible',
    getElementById: (id) => elements[id] || null,
    createElement: (tag) => new FakeElement(tag),
    createTextNode: (t) => new FakeText(t),
    addEventListener(type, fn) { (docListeners[type] = docListeners[type] || []).push(fn); },
    write() { throw new Error('document.write used'); },
  };
  const ctx = {
    WebSocket,
    JSON,
    Math,
    String,
    URL,
    URLSearchParams,
    encodeURIComponent,
    decodeURIComponent,
    location: {
      get protocol() { return loc.protocol; },
      get hash() { return loc.hash; },
      get pathname() { return loc.pathname; },
      get search() { return loc.search; },
    },
    history: {
      state: null,
      replaceState(state, unused, u) { const n = new URL(u, loc.href); loc.hash = n.hash; loc.pathname = n.pathname; loc.search = n.search; },
    },
    document,
    performance: { now: () => clock.t },
    setTimeout(fn, ms) { timers.push({ fn, ms, at: clock.t + ms, done: false }); return timers.length; },
    clearTimeout(id) { if (id > 0 && timers[id - 1]) timers[id - 1].done = true; },
    addEventListener(type, fn) { (listeners[type] = listeners[type] || []).push(fn); },
    // window.open: the confirmation window for Allow. openResult decides what it returns.
    open(u, name, features) {
      opened.push({ open: u });
      p.features = features;
      assert.match(name, /^remixproxy-confirm-/);
      assert.match(features, /popup/);
      return p.openResult;
    },
  };
  const opened = [];
  if (io !== 'missing') ctx.IntersectionObserver = IntersectionObserver;
  ctx.window = ctx;
  ctx.parent = parent || ctx;
  vm.createContext(ctx);
  vm.runInContext(panelSource, ctx, { filename: 'panel.js' });
  const p = {
    ctx, elements, sockets, timers, loc, clock, observers, document,
    socket: () => sockets[sockets.length - 1],
    status: () => elements['status-text'].textContent,
    state: () => elements.status.attrs['data-state'],
    error: () => (elements.error.hidden ? '' : elements.error.textContent),
    fire: (type, ev) => { for (const fn of listeners[type] || []) fn(ev); },
    fireDoc: (type, ev) => { for (const fn of docListeners[type] || []) fn(ev); },
    post: (data, source) => p.fire('message', { data, source: source === undefined ? ctx.parent : source }),
    server: (obj) => p.socket().fire('message', { data: JSON.stringify(obj) }),
    close: (code) => p.socket().fire('close', { code }),
    // open marks the socket open, as the browser does.
    open: () => { p.socket().readyState = 1; p.socket().fire('open', {}); },
    openResult: {},
    // sent returns what panel.js sent on the current socket, then the confirmation windows it
    // opened ({open: url}), and forgets both.
    sent: () => {
      const s = p.socket().sent.slice().concat(opened);
      p.socket().sent.length = 0;
      opened.length = 0;
      return s;
    },
    // advance moves the clock on by ms, running the timers that fall due.
    advance: (ms) => {
      const end = clock.t + ms;
      for (;;) {
        const due = timers.filter((t) => !t.done && t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        clock.t = Math.max(clock.t, due.at);
        due.done = true;
        due.fn();
      }
      clock.t = end;
    },
    items: () => elements.log.childNodes.filter((c) => c !== elements.empty),
    item: (i) => p.items()[i],
    // see makes the newest live observer report an entry for its card (targets[0]) and one for
    // the card's buttons (targets[1]): entry for the card, buttons for the buttons (entry for
    // both when buttons is undefined; null reports the card alone).
    see: (entry, buttons) => {
      const o = observers.filter((x) => !x.disconnected).pop();
      assert.ok(o, 'no live IntersectionObserver');
      const base = { isIntersecting: true, intersectionRatio: 1, isVisible: true };
      const es = [Object.assign({ target: o.targets[0] }, base, entry || {})];
      if (buttons !== null && o.targets[1]) {
        es.push(Object.assign({ target: o.targets[1] }, base, (buttons === undefined ? entry : buttons) || {}));
      }
      o.cb(es, o);
    },
  };
  return p;
}

const scenarios = [];
function scenario(name, fn) {
  scenarios.push({ name, fn });
}

scenario('waits for a token, then takes it from its parent', () => {
  const p = newPanel('https://remix.proxy/panel?for=https://shop.test');
  assert.strictEqual(p.sockets.length, 0);
  assert.match(p.status(), /Waiting/);
  p.post({ type: 'panel-token', token: 'a b' }, {}); // not from the parent: ignored
  p.post({ type: 'other', token: 'x' });
  p.post('panel-token');
  assert.strictEqual(p.sockets.length, 0);
  p.post({ type: 'panel-token', token: 'a b' });
  assert.strictEqual(p.socket().url, 'wss://remix.proxy/panel/ws?t=a%20b&for=https%3A%2F%2Fshop.test');
  p.post({ type: 'panel-token', token: 'a b' }); // the same token again: nothing new
  assert.strictEqual(p.sockets.length, 1);
});

scenario('takes a token from the fragment and clears it', () => {
  const p = newPanel('http://remix.proxy/panel#tok%2F1', false);
  assert.strictEqual(p.socket().url, 'ws://remix.proxy/panel/ws?t=tok%2F1&for=', 'opened by hand: no page frames it, the proxy refuses it');
  assert.strictEqual(p.loc.hash, '');
  p.post({ type: 'panel-token', token: 'x' }); // not framed: no parent to listen to
  assert.strictEqual(p.sockets.length, 1);
});

scenario('shows state as text', () => {
  const p = newPanel('https://remix.proxy/panel#t');
  p.server({ type: 'state', connected: true, url: 'https://a.test/<b>', title: '<i>T</i>', session: 's' });
  assert.strictEqual(p.status(), 'Connected');
  assert.strictEqual(p.state(), 'connected');
  assert.strictEqual(p.elements['page-url'].textContent, 'https://a.test/<b>');
  assert.strictEqual(p.elements['page-title'].textContent, '<i>T</i>');
  assert.strictEqual(p.elements['page-title'].hidden, false);
  p.server({ type: 'state', connected: false, url: 'https://a.test/', title: '' });
  assert.strictEqual(p.status(), 'Page disconnected');
  assert.strictEqual(p.elements['page-title'].hidden, true);
  p.server({ type: 'error', message: 'boom' });
  assert.strictEqual(p.error(), 'boom');
  p.server({ type: 'future' });
  p.socket().fire('message', { data: 'not json' });
  assert.strictEqual(p.error(), 'boom');
});

scenario('reconnects on abnormal close, stops on 1000, 4401, 4403 until a new token', () => {
  const p = newPanel('https://remix.proxy/panel#t');
  p.close(1006);
  assert.match(p.status(), /reconnecting/);
  assert.deepStrictEqual(p.timers.map((t) => t.ms), [1000]);
  p.timers[0].fn();
  assert.strictEqual(p.sockets.length, 2);
  for (const code of [1000, 4401, 4403]) {
    const before = p.timers.length;
    p.close(code);
    assert.strictEqual(p.timers.length, before, 'retry scheduled after ' + code);
    if (code === 1000) {
      assert.strictEqual(p.status(), 'Page disconnected');
    } else {
      assert.ok(p.error() !== '', 'no explanation after ' + code);
    }
    const n = p.sockets.length;
    p.post({ type: 'panel-token', token: 't' }); // the agent re-sends on its next welcome
    assert.strictEqual(p.sockets.length, n + 1, 'not woken by a token after ' + code);
  }
});

scenario('a refused panel says why', () => {
  const p = newPanel('https://remix.proxy/panel?for=https://evil.test#t');
  assert.strictEqual(p.socket().url, 'wss://remix.proxy/panel/ws?t=t&for=https%3A%2F%2Fevil.test');
  p.socket().fire('close', { code: 4403, reason: 'this panel is shown inside a page of another origin; reload the page and open the chat from its remixproxy button' });
  assert.strictEqual(p.error(), 'The proxy refused this panel: this panel is shown inside a page of another origin; reload the page and open the chat from its remixproxy button.');
  assert.strictEqual(p.status(), 'Disconnected');
});

scenario('a new token replaces the connection', () => {
  const p = newPanel('https://remix.proxy/panel#one');
  const first = p.socket();
  p.post({ type: 'panel-token', token: 'two' });
  assert.deepStrictEqual(first.closedWith, [1000, 'new token']);
  assert.strictEqual(p.socket().url, 'wss://remix.proxy/panel/ws?t=two&for=');
  first.fire('close', { code: 1000 }); // the old socket's close changes nothing
  assert.strictEqual(p.status(), 'Connecting\u2026');
});

// ---- The chat ----

// connected returns a panel with an open socket and a chat message received.
function connected(io, chat) {
  const p = newPanel('https://remix.proxy/panel#t', true, io);
  p.open();
  p.server({ type: 'state', connected: true, url: 'https://shop.test/', title: 'Shop', session: 's' });
  p.server(Object.assign({
    type: 'chat',
    chat: { id: 'c1', mode: 'ask', provider: 'openai', model: 'gpt-x', running: false, steps: 0, maxSteps: 40, inputTokens: 0, outputTokens: 0, cost: '' },
    providers: [{ name: 'openai', models: ['gpt-x', 'gpt-y'] }, { name: 'ollama', models: ['llama'] }],
    managerURL: 'https://remix.proxy/manager',
  }, chat || {}));
  return p;
}

const md = (text) => [{ t: 'p', c: [{ t: '', x: text }] }];

scenario('renders user, assistant, notice and tool items, and replaces an item by id in place', () => {
  const p = connected();
  assert.strictEqual(p.elements.empty.hidden, false);
  p.server({ type: 'item', item: { id: 'u1', kind: 'user', md: md('hide the ads') } });
  p.server({ type: 'item', item: { id: 'a1', kind: 'assistant', md: md('Look') } });
  p.server({ type: 'item', item: { id: 't1', kind: 'tool', name: 'outline', args: '{"max":\n 20}', status: 'running' } });
  p.server({ type: 'item', item: { id: 'n1', kind: 'notice', md: md('Stopped') } });
  assert.strictEqual(p.elements.empty.hidden, true);
  assert.strictEqual(p.items().length, 4);
  assert.ok(p.item(0).hasClass('user') && p.item(0).textContent.includes('hide the ads'));
  assert.ok(p.item(1).hasClass('assistant'));
  assert.ok(p.item(3).hasClass('notice'));
  assert.match(p.elements.announce.textContent, /Stopped/);
  // Streaming: the assistant item again, with more text, stays in its place.
  p.server({ type: 'item', item: { id: 'a1', kind: 'assistant', md: md('Looking at the page now') } });
  assert.strictEqual(p.items().length, 4);
  assert.ok(p.item(1).hasClass('assistant'));
  assert.match(p.item(1).textContent, /Looking at the page now/);
  assert.doesNotMatch(p.item(1).textContent, /^Look$/);
  // Tool: a compact line with name, status and short args that opens to the full text.
  const tool = p.item(2);
  assert.strictEqual(tool.getAttribute('data-status'), 'running');
  const details = tool.byTag('details')[0];
  const summary = details.byTag('summary')[0];
  assert.match(summary.textContent, /outline/);
  assert.match(summary.byClass('tool-args')[0].textContent, /^\{"max": 20\}$/);
  assert.strictEqual(details.byClass('tool-text')[0].textContent, '{"max":\n 20}');
  details.open = true; // the person opened it
  p.server({ type: 'item', item: { id: 't1', kind: 'tool', name: 'outline', args: '{"max": 20}', status: 'error', result: 'x'.repeat(30000) } });
  const tool2 = p.item(2);
  assert.notStrictEqual(tool2, tool);
  assert.strictEqual(tool2.getAttribute('data-status'), 'error');
  assert.strictEqual(tool2.byTag('details')[0].open, true, 'an open tool line closed when it was replaced');
  assert.match(tool2.textContent, /failed/);
  const result = tool2.byClass('tool-text')[1].textContent;
  assert.ok(result.length < 20100 && /more characters/.test(result), 'a long result is not cut');
  // Items of unknown kinds or without an id are ignored.
  p.server({ type: 'item', item: { id: 'x', kind: 'script', md: md('no') } });
  p.server({ type: 'item', item: { kind: 'user', md: md('no id') } });
  p.server({ type: 'item', item: 'nope' });
  assert.strictEqual(p.items().length, 4);
  // clear removes everything.
  p.server({ type: 'clear' });
  assert.strictEqual(p.items().length, 0);
  assert.strictEqual(p.elements.empty.hidden, false);
  p.server({ type: 'item', item: { id: 'a1', kind: 'assistant', md: md('fresh') } });
  assert.strictEqual(p.items().length, 1);
});

scenario('builds markdown nodes from the allow-list, with safe links only', () => {
  const p = connected();
  const nodes = [
    { t: 'h3', c: [{ t: '', x: 'Title' }] },
    { t: 'p', c: [
      { t: '', x: 'a ' },
      { t: 'strong', c: [{ t: 'em', c: [{ t: '', x: '<b>x</b>' }] }] },
      { t: 'a', h: 'https://docs.test/page?q=1', c: [{ t: '', x: 'docs' }] },
      { t: 'a', h: 'javascript:alert(1)', c: [{ t: '', x: 'js' }] },
      { t: 'a', h: 'JAVASCRIPT:alert(1)', c: [{ t: '', x: 'JS' }] },
      { t: 'a', h: 'data:text/html,<script>x</script>', c: [{ t: '', x: 'data' }] },
      { t: 'a', h: '/relative', c: [{ t: '', x: 'rel' }] },
      { t: 'a', h: 'ftp://files.test/x', c: [{ t: '', x: 'ftp' }] },
      { t: 'a', h: 'https://bank.test@evil.test/', c: [{ t: '', x: 'bank' }] },
      { t: 'a', c: [{ t: '', x: 'nohref' }] },
      { t: 'img', h: 'https://witness.test/?secret=1', c: [{ t: '', x: 'img' }] },
      { t: 'script', c: [{ t: '', x: 'alert(2)' }] },
      { t: 'iframe', x: 'dropped', c: [] },
      { t: '__proto__', c: [{ t: '', x: 'proto' }] },
      { t: 'br', c: [{ t: '', x: 'never inside br' }] },
      { t: 'code', h: 'https://x.test/', c: [{ t: '', x: 'code' }] },
      null, 7, 'str',
    ] },
    { t: 'table', c: [{ t: 'tbody', c: [{ t: 'tr', c: [{ t: 'td', c: [{ t: '', x: 'cell' }] }] }] }] },
  ];
  p.server({ type: 'item', item: { id: 'a', kind: 'assistant', md: nodes } });
  const item = p.item(0);
  const tags = item.all(() => true).map((e) => e.tagName.toLowerCase());
  const allowed = ['div', 'span', 'p', 'h3', 'strong', 'em', 'a', 'br', 'code', 'table', 'tbody', 'tr', 'td'];
  for (const t of tags) assert.ok(allowed.includes(t), 'element ' + t + ' was created');
  const links = item.byTag('a');
  assert.strictEqual(links.length, 1, 'only the https link is a link: ' + links.map((a) => a.getAttribute('href')));
  const a = links[0];
  assert.strictEqual(a.getAttribute('href'), 'https://docs.test/page?q=1');
  assert.strictEqual(a.getAttribute('target'), '_blank');
  assert.strictEqual(a.getAttribute('rel'), 'noopener noreferrer');
  assert.strictEqual(a.byClass('host')[0].textContent, ' (docs.test)');
  assert.strictEqual(item.byTag('code')[0].getAttribute('href'), null);
  const text = item.textContent;
  for (const s of ['js', 'JS', 'data', 'rel', 'ftp', 'bank', 'nohref', 'img', 'alert(2)', 'proto', 'code', 'cell', '<b>x</b>']) {
    assert.ok(text.includes(s), 'the text ' + s + ' is lost');
  }
  assert.ok(!text.includes('never inside br') && !text.includes('dropped'));
  assert.ok(!JSON.stringify(item.all(() => true).map((e) => e.attrs)).includes('witness'));
  // Very deep nesting stops making elements.
  let deep = [{ t: '', x: 'bottom' }];
  for (let i = 0; i < 200; i++) deep = [{ t: 'blockquote', c: deep }];
  p.server({ type: 'item', item: { id: 'd', kind: 'assistant', md: deep } });
  assert.ok(p.item(1).byTag('blockquote').length <= 40);
  assert.match(p.item(1).textContent, /bottom/);
});

scenario('shows the chat: mode, model, usage, Send or Stop, manager link', () => {
  const p = connected();
  const e = p.elements;
  assert.strictEqual(e['mode-ask'].getAttribute('aria-pressed'), 'true');
  assert.strictEqual(e['mode-build'].getAttribute('aria-pressed'), 'false');
  const groups = e.model.byTag('optgroup');
  assert.deepStrictEqual(groups.map((g) => g.getAttribute('label')), ['openai', 'ollama']);
  assert.deepStrictEqual(e.model.byTag('option').map((o) => o.textContent), ['gpt-x', 'gpt-y', 'llama']);
  assert.strictEqual(e.model.value, '0');
  assert.strictEqual(e.send.textContent, 'Send');
  assert.strictEqual(e.usage.textContent, '0 in \u00b7 0 out');
  assert.strictEqual(e.manage.hidden, false);
  assert.strictEqual(e.manage.getAttribute('href'), 'https://remix.proxy/manager');
  p.server({ type: 'item', item: { id: 'a', kind: 'assistant', md: md('working') } });
  p.server({
    type: 'chat',
    chat: { id: 'c1', mode: 'build', provider: 'local', model: 'mine', running: true, steps: 3, maxSteps: 40, inputTokens: 12345, outputTokens: 678, cost: '$0.02' },
    providers: [{ name: 'openai', models: ['gpt-x'] }, { name: '<b>', models: [1, null] }, null],
    managerURL: 'https://evil.test/manager',
  });
  assert.strictEqual(e['mode-build'].getAttribute('aria-pressed'), 'true');
  assert.strictEqual(e['mode-ask'].getAttribute('aria-pressed'), 'false');
  assert.strictEqual(e.send.textContent, 'Stop');
  assert.strictEqual(e.usage.textContent, '12k in \u00b7 678 out \u00b7 $0.02 \u00b7 step 3 of 40');
  assert.deepStrictEqual(e.model.byTag('option').map((o) => o.textContent), ['gpt-x', 'mine'], 'the current model is listed');
  assert.strictEqual(e.model.value, '1');
  assert.strictEqual(e.manage.hidden, true, 'a manager link to another site is shown');
  e.announce.textContent = '';
  p.server({ type: 'item', item: { id: 'a', kind: 'assistant', md: md('All done.') } });
  assert.strictEqual(e.announce.textContent, '', 'a reply is announced while it streams');
  p.server({ type: 'chat', chat: { id: 'c1', mode: 'build', running: false }, providers: [], managerURL: '' });
  assert.match(e.announce.textContent, /All done\./);
  assert.strictEqual(e.send.textContent, 'Send');
});

scenario('sends send, stop, new, mode and model', () => {
  const p = connected();
  const e = p.elements;
  p.sent();
  e.input.value = 'hide the ads';
  let ev = e.input.fire('keydown', { key: 'Enter', shiftKey: true });
  assert.ok(!ev.defaultPrevented, 'Shift+Enter is not a newline');
  ev = e.input.fire('keydown', { key: 'Enter', isComposing: true });
  assert.deepStrictEqual(p.sent(), []);
  ev = e.input.fire('keydown', { key: 'Enter' });
  assert.ok(ev.defaultPrevented);
  assert.deepStrictEqual(p.sent(), [{ type: 'send', text: 'hide the ads' }]);
  assert.strictEqual(e.input.value, '');
  e.input.value = '   ';
  e.composer.fire('submit', {});
  assert.deepStrictEqual(p.sent(), [], 'blank text was sent');
  e.input.value = 'second';
  ev = e.composer.fire('submit', {});
  assert.ok(ev.defaultPrevented, 'the form submits to a page');
  assert.deepStrictEqual(p.sent(), [{ type: 'send', text: 'second' }]);
  // While running, the button stops and Enter does not send.
  p.server({ type: 'chat', chat: { mode: 'ask', provider: 'openai', model: 'gpt-x', running: true }, providers: [{ name: 'openai', models: ['gpt-x', 'gpt-y'] }] });
  e.input.value = 'more';
  e.input.fire('keydown', { key: 'Enter' });
  assert.deepStrictEqual(p.sent(), []);
  assert.strictEqual(e.input.value, 'more');
  e.composer.fire('submit', {});
  assert.deepStrictEqual(p.sent(), [{ type: 'stop' }]);
  e['new-chat'].fire('click', {});
  e['mode-ask'].fire('click', {}); // already the mode
  e['mode-act'].fire('click', {});
  e.model.value = '1';
  e.model.fire('change', {});
  assert.deepStrictEqual(p.sent(), [{ type: 'new' }, { type: 'mode', mode: 'act' }, { type: 'model', provider: 'openai', model: 'gpt-y' }]);
  // Nothing is sent on a closed socket, and the controls say so.
  p.close(1006);
  assert.strictEqual(e.send.disabled, true);
  assert.strictEqual(e['mode-build'].disabled, true);
  p.socket().readyState = 3;
  e.composer.fire('submit', {});
  assert.match(p.error(), /Not connected/);
});

// ---- Cards and their clickjacking defence ----

const CARD = {
  id: 'k1', kind: 'card', card: 'permissions', title: '', remixlet: { name: 'Price per kilo', url: 'https://remix.proxy/manager/remixlets/rx_1' },
  rows: ['Send requests to api.shop.test', 'Store data in this browser'], allow: 'Allow', deny: 'Not now', state: 'pending', armAfterMs: 800,
};

// CONFIRM_K1 is Allow on card k1: the confirmation window opened with the panel token (t) and
// the card's ID in its fragment; nothing is sent on the socket.
const CONFIRM_K1 = { open: 'https://remix.proxy/panel/confirm#t.k1' };

// cardPanel returns a connected panel showing CARD (with changes) and its parts.
function cardPanel(io, changes, before) {
  const p = connected(io);
  if (before) before(p);
  p.sent();
  p.server({ type: 'item', item: Object.assign({}, CARD, changes || {}) });
  const card = p.items().find((x) => x.hasClass('card'));
  const allow = card.byClass('allow')[0];
  const deny = card.byClass('deny')[0];
  const note = () => card.byClass('card-note')[0].textContent;
  // pointer events carry the frame's place on the screen: screenX - clientX.
  const move = (extra) => card.fire('pointermove', Object.assign({ clientX: 50, clientY: 60, screenX: 350, screenY: 460 }, extra || {}));
  const click = (b, extra) => b.fire('click', Object.assign({ detail: 1, clientX: 52, clientY: 61, screenX: 352, screenY: 461 }, extra || {}));
  return { p, card, allow, deny, note, move, click };
}

scenario('lists the page\'s remixlet commands and sends a trusted click on one once the list has been visible', () => {
  const p = connected();
  p.sent();
  const box = p.elements.commands;
  assert.strictEqual(box.hidden, true, 'the commands list shows without commands');
  assert.strictEqual(p.observers.length, 0, 'observed without commands');
  const state = (commands) => p.server({ type: 'state', connected: true, url: 'https://shop.test/', title: 'Shop', session: 's', commands });
  state([{ remixlet: 'rx_a', source: 'Expander <b>', commands: [{ id: 'all', label: 'Expand <all>' }, { id: 'none', label: 'Collapse' }] },
    { remixlet: '', source: 'junk', commands: [{ id: 'x', label: 'X' }] }, null, { remixlet: 'rx_b', source: 'b', commands: [{ id: '', label: 'no id' }] }]);
  assert.strictEqual(box.hidden, false);
  const buttons = p.elements['command-list'].byTag('button');
  assert.deepStrictEqual(buttons.map((b) => b.textContent), ['Expand <all>', 'Collapse']);
  assert.strictEqual(p.elements['command-list'].byClass('command-src')[0].textContent, 'Expander <b>');
  assert.ok(buttons.every((b) => b.disabled), 'enabled before the list was seen');
  const o = p.observers[0];
  assert.strictEqual(o.opts.trackVisibility, true);
  assert.strictEqual(o.targets[0], p.elements['command-list']);
  buttons[1].fire('click', { detail: 1 });
  assert.deepStrictEqual(p.sent(), [], 'a click before the list was seen');
  p.see({ isVisible: true }, null);
  p.advance(700);
  buttons[1].fire('click', { detail: 1 });
  assert.deepStrictEqual(p.sent(), [], 'a click before the list was visible for 800 ms');
  p.advance(200);
  assert.ok(buttons.every((b) => !b.disabled), 'not enabled after 800 ms');
  buttons[1].fire('click', { detail: 1, isTrusted: false });
  assert.deepStrictEqual(p.sent(), [], 'an untrusted click');
  buttons[1].fire('click', { detail: 1 });
  assert.deepStrictEqual(p.sent(), [{ type: 'command', remixlet: 'rx_a', id: 'none' }]);
  assert.match(p.elements['commands-note'].textContent, /Collapse/);
  // Covered: off again at once.
  p.see({ isVisible: false }, null);
  assert.ok(buttons.every((b) => b.disabled), 'enabled while covered');
  buttons[0].fire('click', { detail: 1 });
  assert.deepStrictEqual(p.sent(), []);
  // The same list again changes nothing; an empty one hides it and stops observing.
  state([{ remixlet: 'rx_a', source: 'Expander <b>', commands: [{ id: 'all', label: 'Expand <all>' }, { id: 'none', label: 'Collapse' }] }]);
  assert.strictEqual(p.elements['command-list'].byTag('button')[0], buttons[0], 'the same list was rebuilt');
  state([]);
  assert.strictEqual(box.hidden, true);
  assert.ok(p.observers.every((x) => x.disconnected));
});

// tabStorage gives panel p a sessionStorage holding the chat ID this tab kept, and returns it.
function tabStorage(p, chatID) {
  const store = { 'remixproxy-chat': chatID };
  p.ctx.sessionStorage = {
    getItem: (k) => (k in store ? store[k] : null),
    setItem: (k, v) => { store[k] = String(v); },
    removeItem: (k) => { delete store[k]; },
  };
  return store;
}

scenario('offers the chat this tab kept and resumes it only on a trusted click once the offer has been visible', () => {
  // A page that holds a panel token of its own origin frames this panel unseen in the tab whose
  // sessionStorage keeps the person's chat (red-team pass 6b): nothing may resume by itself.
  const p = newPanel('https://remix.proxy/panel#t', true);
  const store = tabStorage(p, 'old1');
  p.open();
  assert.deepStrictEqual(p.sent(), [], 'sent something by itself on open');
  const box = p.elements.resume;
  const b = p.elements['resume-chat'];
  assert.strictEqual(box.hidden, false, 'the chat this tab kept is not offered');
  assert.strictEqual(b.disabled, true);
  // The proxy's fresh chat does not make the tab forget the chat offered.
  p.server({ type: 'chat', chat: { id: '', mode: 'ask', running: false }, providers: [] });
  assert.strictEqual(store['remixproxy-chat'], 'old1');
  b.fire('click', { detail: 1 });
  assert.deepStrictEqual(p.sent(), [], 'a click before the offer was seen');
  const o = p.observers[p.observers.length - 1];
  assert.strictEqual(o.targets[0], box);
  p.see({ isVisible: true }, null);
  p.advance(700);
  b.fire('click', { detail: 1 });
  assert.deepStrictEqual(p.sent(), [], 'a click before the offer was visible for 800 ms');
  p.advance(200);
  assert.strictEqual(b.disabled, false);
  b.fire('click', { detail: 1, isTrusted: false });
  assert.deepStrictEqual(p.sent(), [], 'an untrusted click');
  b.fire('click', { detail: 1 });
  assert.deepStrictEqual(p.sent(), [{ type: 'resume', chat: 'old1' }]);
  assert.strictEqual(box.hidden, true);
});

scenario('a chat that comes to the tab (sent, or followed here) ends the offer', () => {
  const p = newPanel('https://remix.proxy/panel#t', true);
  const store = tabStorage(p, 'old1');
  p.open();
  assert.strictEqual(p.elements.resume.hidden, false);
  p.server({ type: 'chat', chat: { id: 'c9', mode: 'ask', running: false }, providers: [] });
  assert.strictEqual(p.elements.resume.hidden, true);
  assert.strictEqual(store['remixproxy-chat'], 'c9');
  p.advance(2000);
  p.elements['resume-chat'].fire('click', { detail: 1 });
  assert.deepStrictEqual(p.sent(), []);
});

scenario('without IntersectionObserver v2 the commands stay off and say why', () => {
  const p = connected('v1');
  p.sent();
  p.server({ type: 'state', connected: true, url: 'https://shop.test/', title: 'Shop', session: 's', commands: [{ remixlet: 'rx_a', source: 's', commands: [{ id: 'a', label: 'A' }] }] });
  const b = p.elements['command-list'].byTag('button')[0];
  assert.strictEqual(b.disabled, true);
  assert.match(p.elements['commands-note'].textContent, /cannot confirm/);
  p.advance(2000);
  b.fire('click', { detail: 1 });
  assert.deepStrictEqual(p.sent(), []);
});

scenario('renders a card with fixed texts, styled as from remixproxy', () => {
  const { p, card, allow, deny } = cardPanel();
  assert.strictEqual(card.tagName, 'SECTION');
  assert.strictEqual(card.getAttribute('data-card'), 'permissions');
  assert.strictEqual(card.byClass('card-from')[0].textContent, 'remixproxy asks');
  assert.strictEqual(card.byClass('card-title')[0].textContent, 'Remixlet needs permission');
  assert.strictEqual(card.getAttribute('aria-labelledby'), card.byClass('card-title')[0].id);
  const name = card.byClass('card-name')[0];
  assert.strictEqual(name.textContent, 'Price per kilo');
  assert.strictEqual(name.getAttribute('href'), 'https://remix.proxy/manager/remixlets/rx_1');
  assert.deepStrictEqual(card.byTag('li').map((li) => li.textContent), CARD.rows);
  assert.strictEqual(allow.textContent, 'Allow');
  assert.strictEqual(deny.textContent, 'Not now');
  assert.strictEqual(allow.type, 'button');
  assert.match(p.elements.announce.textContent, /Remixlet needs permission/);
  const o = p.observers[0];
  assert.strictEqual(o.opts.trackVisibility, true);
  assert.ok(o.opts.delay >= 100);
  assert.strictEqual(o.targets[0], card);
  assert.strictEqual(o.targets[1], card.byClass('card-actions')[0], 'the buttons are not observed');
  assert.strictEqual(o.targets.length, 2);
  // The activation dialog, with its defaults; a remixlet URL off remix.proxy is no link.
  const q = connected();
  q.server({ type: 'item', item: Object.assign({}, CARD, { id: 'k2', card: 'activation', allow: '', deny: '', remixlet: { name: 'x', url: 'https://evil.test/' } }) });
  const c2 = q.item(0);
  assert.strictEqual(c2.byClass('card-title')[0].textContent, 'Apply this change?');
  assert.strictEqual(c2.byClass('allow')[0].textContent, 'Allow and apply');
  assert.strictEqual(c2.byClass('deny')[0].textContent, 'Don\u2019t allow');
  assert.strictEqual(c2.byClass('card-name')[0].tagName, 'SPAN');
});

scenario('a card decides only after it has been visible for armAfterMs and the pointer moved', () => {
  const { p, allow, deny, note, move, click } = cardPanel();
  assert.strictEqual(allow.disabled, true, 'enabled before any visibility report');
  p.see({ isVisible: true });
  assert.strictEqual(allow.disabled, true, 'enabled at once');
  // A click the instant the card appears, with the pointer already there, does nothing.
  move();
  click(allow);
  p.advance(700);
  move(); // a move before the wait is over does not count
  click(allow);
  assert.deepStrictEqual(p.sent(), []);
  p.advance(100);
  assert.strictEqual(allow.disabled, false, 'not armed after 800 ms of visibility');
  assert.strictEqual(note(), '');
  // Armed, but the pointer has not moved since: refused with a hint.
  click(allow);
  assert.deepStrictEqual(p.sent(), []);
  assert.match(note(), /^Move the pointer/);
  // Untrusted events count for nothing.
  move({ isTrusted: false });
  click(allow);
  assert.deepStrictEqual(p.sent(), []);
  move();
  click(allow, { isTrusted: false });
  assert.deepStrictEqual(p.sent(), []);
  click(deny);
  assert.deepStrictEqual(p.sent(), [{ type: 'decide', id: 'k1', allow: false }]);
  assert.strictEqual(allow.disabled, true, 'a card decides twice');
  click(allow);
  assert.deepStrictEqual(p.sent(), []);
  // The proxy answers with the card in its new state: no buttons, the outcome, no observer.
  p.server({ type: 'item', item: Object.assign({}, CARD, { state: 'denied' }) });
  const done = p.item(0);
  assert.strictEqual(done.byTag('button').length, 0);
  assert.strictEqual(done.byClass('card-outcome')[0].textContent, 'Not allowed.');
  assert.ok(p.observers.every((o) => o.disconnected));
});

scenario('Allow opens the confirmation window; a blocked pop-up is explained', () => {
  const { p, allow, note, move, click } = cardPanel();
  p.openResult = null;
  p.see();
  p.advance(800);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
  assert.match(note(), /blocked the confirmation window/);
  p.openResult = {};
  click(allow);
  assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
  assert.match(note(), /Confirm in the remixproxy window/);
});

scenario('Allow after a proper wait and move opens the confirmation window', () => {
  const { p, allow, move, click } = cardPanel(undefined, { armAfterMs: 2000 });
  p.see();
  p.advance(1999);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), [], 'armAfterMs from the card is not used');
  p.advance(1);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
});

scenario('a covered or hidden card keeps its buttons off', () => {
  const { p, allow, note, move, click } = cardPanel();
  p.see({ isVisible: false });
  p.advance(5000);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), []);
  assert.strictEqual(allow.disabled, true);
  assert.match(note(), /covered or hidden by the page/);
  // Not intersecting at all.
  p.see({ isIntersecting: false, isVisible: false, intersectionRatio: 0 });
  p.advance(5000);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), []);
  // Only partly in view: not enough either.
  p.see({ intersectionRatio: 0.5 });
  p.advance(5000);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), []);
  assert.match(note(), /whole card/);
});

// A card taller than the panel's log (a request with a long body, an activation with many rows):
// its body is bounded so that the whole card fits (fitCard), and the whole card is then what
// must be in view and visible. A fake layout: the card is its body plus 120 px.
function tallLayout() {
  return (el) => {
    if (el.hasClass('card-body')) return el.style.maxHeight ? parseInt(el.style.maxHeight, 10) : 480;
    if (el.hasClass('card')) return 120 + el.byClass('card-body')[0].offsetHeight;
    return undefined;
  };
}

const TALL_CARD = {
  card: 'request', title: 'Send a POST request to shop.test/api/notes', remixlet: null,
  rows: ['Sent as you, with your cookies for shop.test', 'Body: 4096 bytes (the first 300 shown)'],
  data: 'x'.repeat(300), allow: 'Send', deny: 'Not now',
};

// tallCardPanel is cardPanel with a tall card in a log logHeight px high.
function tallCardPanel(logHeight) {
  FakeElement.layout = tallLayout(logHeight);
  return cardPanel('v2', TALL_CARD, (p) => { p.elements.log.clientHeight = logHeight; });
}

scenario('a card taller than the log gets a bounded body so that it fits, and arms only wholly in view', () => {
  try {
    const { p, card, allow, note, move, click } = tallCardPanel(200);
    const body = card.byClass('card-body')[0];
    assert.strictEqual(body.style.maxHeight, '56px', 'the body is not bounded to fit the log (200 - 24 padding - 120)');
    assert.ok(card.offsetHeight <= 200);
    // Partly in view (the person scrolled): scroll to decide; the buttons alone are not enough.
    p.see({ intersectionRatio: 0.6, isVisible: false }, { intersectionRatio: 1 });
    p.advance(5000);
    move();
    click(allow);
    assert.deepStrictEqual(p.sent(), []);
    assert.match(note(), /whole card is in view/);
    // Wholly in view but covered: covered.
    p.see({ isVisible: false }, { intersectionRatio: 1 });
    p.advance(5000);
    move();
    click(allow);
    assert.deepStrictEqual(p.sent(), []);
    assert.match(note(), /covered or hidden by the page/);
    // Wholly in view and visible: it arms after the wait.
    p.see();
    p.advance(800);
    move();
    click(allow);
    assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
    // A taller panel: the body needs no bound any more.
    p.elements.log.clientHeight = 800;
    p.fire('resize', {});
    assert.strictEqual(body.style.maxHeight, '');
  } finally {
    FakeElement.layout = null;
  }
});

// When even the bounded card cannot fit (a log shorter than the card's title and buttons), the
// card cannot be wholly in view: its buttons, wholly in view and visible, decide.
scenario('a card that cannot fit the log arms once its buttons are wholly in view, not before', () => {
  try {
    const { p, card, allow, note, move, click } = tallCardPanel(150);
    assert.strictEqual(card.byClass('card-body')[0].style.maxHeight, '48px', 'the body is not at its least height');
    assert.ok(card.offsetHeight > 150);
    // The card's top is in view, its buttons below the log's edge: scroll to decide.
    p.see({ intersectionRatio: 0.4, isVisible: false }, { isIntersecting: false, isVisible: false, intersectionRatio: 0 });
    p.advance(5000);
    move();
    click(allow);
    assert.deepStrictEqual(p.sent(), []);
    assert.strictEqual(allow.disabled, true);
    assert.match(note(), /buttons are wholly in view/);
    // Half of the buttons in view: still not.
    p.see({ intersectionRatio: 0.6, isVisible: false }, { intersectionRatio: 0.5 });
    p.advance(5000);
    move();
    click(allow);
    assert.deepStrictEqual(p.sent(), []);
    assert.match(note(), /buttons are wholly in view/);
    // The page covers the buttons: covered.
    p.see({ intersectionRatio: 0.6, isVisible: false }, { intersectionRatio: 1, isVisible: false });
    p.advance(5000);
    move();
    click(allow);
    assert.deepStrictEqual(p.sent(), []);
    assert.match(note(), /covered or hidden by the page/);
    // Scrolled to the buttons, which are visible: it arms after the wait (the clipped card's
    // own report, not visible, is not asked), and Send goes to the confirmation window.
    p.see({ intersectionRatio: 0.6, isVisible: false }, { intersectionRatio: 1 });
    p.advance(700);
    move();
    click(allow);
    assert.deepStrictEqual(p.sent(), [], 'armed before the wait');
    p.advance(100);
    assert.strictEqual(allow.disabled, false);
    move();
    click(allow);
    assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
  } finally {
    FakeElement.layout = null;
  }
});

scenario('losing visibility starts the wait again', () => {
  const { p, allow, move, click } = cardPanel();
  p.see();
  p.advance(700);
  p.see({ isVisible: false }); // the page covers the panel
  p.advance(50);
  p.see(); // and uncovers it just before the click
  p.advance(500);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), []);
  assert.strictEqual(allow.disabled, true);
  p.advance(300);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
});

scenario('an armed card forgets the pointer when it loses visibility or the page hides', () => {
  const { p, allow, move, click } = cardPanel();
  p.see();
  p.advance(800);
  move();
  p.see({ isVisible: false });
  p.see();
  p.advance(800);
  click(allow); // no move since it came back
  assert.deepStrictEqual(p.sent(), []);
  p.document.visibilityState = 'hidden';
  p.fireDoc('visibilitychange', {});
  assert.strictEqual(allow.disabled, true);
  p.document.visibilityState = 'visible';
  p.see();
  p.advance(800);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
});

scenario('a frame moved under the pointer after the move is refused', () => {
  const { p, allow, note, move, click } = cardPanel();
  p.see();
  p.advance(800);
  move();
  // The page moved the iframe by 100 px; the pointer stayed, so clientX changed but screenX not.
  click(allow, { clientX: -48, screenX: 352 });
  assert.deepStrictEqual(p.sent(), []);
  assert.match(note(), /panel moved/);
  click(allow);
  assert.deepStrictEqual(p.sent(), [], 'the move before the frame moved still counts');
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
});

scenario('keyboard decisions need the focus to stay in the card', () => {
  const { p, card, allow, note, click } = cardPanel();
  p.see();
  p.advance(800);
  card.fire('focusin', {});
  click(allow, { detail: 0 });
  assert.deepStrictEqual(p.sent(), []);
  assert.match(note(), /focused/);
  card.fire('focusout', {});
  card.fire('focusin', { isTrusted: false });
  p.advance(1000);
  click(allow, { detail: 0 });
  assert.deepStrictEqual(p.sent(), [], 'an untrusted focus counted');
  card.fire('focusin', {});
  p.advance(800);
  click(allow, { detail: 0 });
  assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
});

scenario('without IntersectionObserver v2 the buttons stay off', () => {
  for (const io of ['missing', 'v1', 'throws']) {
    const { p, allow, note, move, click } = cardPanel(io);
    if (io === 'v1') {
      assert.ok(p.observers[0].disconnected, 'a v1 observer is left running');
    }
    p.advance(5000);
    move();
    click(allow);
    assert.deepStrictEqual(p.sent(), [], io);
    assert.strictEqual(allow.disabled, true, io);
    assert.match(note(), /cannot confirm/, io);
  }
});

scenario('a card does not decide on a closed socket, and a replaced card starts over', () => {
  const { p, allow, note, move, click } = cardPanel();
  p.see();
  p.advance(800);
  move();
  p.close(1006);
  assert.strictEqual(allow.disabled, true);
  assert.match(note(), /Not connected/);
  click(allow);
  assert.strictEqual(p.socket().sent.length, 0);
  // Reconnected; the proxy sends the card again: a new card with a new wait.
  p.advance(1000);
  p.open();
  p.server({ type: 'item', item: Object.assign({}, CARD, { rows: ['Send requests to api.shop.test'] }) });
  assert.strictEqual(p.observers.filter((o) => !o.disconnected).length, 1);
  const card2 = p.item(0);
  const allow2 = card2.byClass('allow')[0];
  p.see();
  move();
  allow2.fire('click', { detail: 1, clientX: 52, clientY: 61, screenX: 352, screenY: 461 });
  assert.deepStrictEqual(p.sent(), []);
  p.advance(800);
  card2.fire('pointermove', { clientX: 50, clientY: 60, screenX: 350, screenY: 460 });
  allow2.fire('click', { detail: 1, clientX: 52, clientY: 61, screenX: 352, screenY: 461 });
  assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
  // An expired card has no buttons.
  p.server({ type: 'item', item: Object.assign({}, CARD, { id: 'k9', state: 'expired' }) });
  assert.strictEqual(p.item(1).byTag('button').length, 0);
  assert.match(p.item(1).textContent, /expired/);
});

// ---- API access, request cards and plan cards (issue 6) ----

scenario('the API access switch: shown in Act mode, sends the person\'s choice, reflects the chat', () => {
  const p = connected();
  const b = p.elements['api-access'];
  assert.strictEqual(b.hidden, true, 'shown outside Act mode while off');
  const act = (on) => p.server({ type: 'chat', chat: { id: 'c1', mode: 'act', provider: 'openai', model: 'gpt-x', running: false, apiAccess: on }, providers: [{ name: 'openai', models: ['gpt-x'] }] });
  act(false);
  assert.strictEqual(b.hidden, false);
  assert.strictEqual(b.disabled, false);
  assert.strictEqual(b.getAttribute('aria-pressed'), 'false');
  assert.strictEqual(b.textContent, 'API access: off');
  p.sent();
  b.fire('click', { isTrusted: false });
  assert.deepStrictEqual(p.sent(), [], 'an untrusted click changed API access');
  b.fire('click', {});
  assert.deepStrictEqual(p.sent(), [{ type: 'api', on: true }]);
  assert.strictEqual(b.getAttribute('aria-pressed'), 'false', 'the switch moved before the proxy said so');
  act(true);
  assert.strictEqual(b.getAttribute('aria-pressed'), 'true');
  assert.strictEqual(b.textContent, 'API access: on');
  b.fire('click', {});
  assert.deepStrictEqual(p.sent(), [{ type: 'api', on: false }]);
  // While on it stays in view in other modes, so it can be turned off.
  p.server({ type: 'chat', chat: { id: 'c1', mode: 'build', apiAccess: true }, providers: [] });
  assert.strictEqual(b.hidden, false);
  p.close(1006);
  assert.strictEqual(b.disabled, true);
});

scenario('the "Act may submit forms" switch: shown in Act mode, asks with the person\'s click, reflects the chat', () => {
  const p = connected();
  const b = p.elements['act-submits'];
  assert.strictEqual(b.hidden, true, 'shown outside Act mode while off');
  const act = (on) => p.server({ type: 'chat', chat: { id: 'c1', mode: 'act', provider: 'openai', model: 'gpt-x', running: false, actSubmits: on }, providers: [{ name: 'openai', models: ['gpt-x'] }] });
  act(false);
  assert.strictEqual(b.hidden, false);
  assert.strictEqual(b.disabled, false);
  assert.strictEqual(b.getAttribute('aria-pressed'), 'false');
  assert.strictEqual(b.textContent, 'Act may submit forms: off');
  p.sent();
  b.fire('click', { isTrusted: false });
  assert.deepStrictEqual(p.sent(), [], 'an untrusted click asked to change the switch');
  b.fire('click', {});
  assert.deepStrictEqual(p.sent(), [{ type: 'submit', on: true }]);
  assert.strictEqual(b.getAttribute('aria-pressed'), 'false', 'the switch moved before the proxy said so (it asks on a card first)');
  act(true);
  assert.strictEqual(b.getAttribute('aria-pressed'), 'true');
  assert.strictEqual(b.textContent, 'Act may submit forms: on');
  b.fire('click', {});
  assert.deepStrictEqual(p.sent(), [{ type: 'submit', on: false }]);
  p.server({ type: 'chat', chat: { id: 'c1', mode: 'ask', actSubmits: true }, providers: [] });
  assert.strictEqual(b.hidden, false, 'hidden while on, so it could not be turned off');
  p.close(1006);
  assert.strictEqual(b.disabled, true);
});

scenario('a request card shows the body apart, as data, and Allow goes to the confirmation window', () => {
  const { p, card, allow, move, click } = cardPanel('v2', {
    card: 'request', title: 'Send a POST request to shop.test/api/cart', remixlet: null,
    rows: ['Sent as you, with your cookies for shop.test', 'Body: 23 bytes, application/json'],
    data: '{"sku":"<b>socks</b>"}', allow: 'Send', deny: 'Not now',
  });
  assert.strictEqual(card.getAttribute('data-card'), 'request');
  assert.strictEqual(card.byClass('card-title')[0].textContent, 'Send a POST request to shop.test/api/cart');
  const data = card.byClass('card-data')[0];
  assert.strictEqual(data.tagName, 'PRE');
  assert.strictEqual(data.textContent, '{"sku":"<b>socks</b>"}');
  assert.strictEqual(card.byTag('b').length, 0, 'the body was parsed as HTML');
  assert.deepStrictEqual(card.byTag('li').map((li) => li.textContent), ['Sent as you, with your cookies for shop.test', 'Body: 23 bytes, application/json']);
  assert.strictEqual(allow.textContent, 'Send');
  p.see({ isVisible: true });
  p.advance(800);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
});

scenario('an activation card sums up the code it would apply; the confirmation window opens larger for it', () => {
  const { p, card, allow, move, click } = cardPanel('v2', {
    card: 'activation', title: 'Apply this change?', allow: 'Allow and apply', deny: 'Don\u2019t allow',
    rows: ['Change code that also runs on other sites than this page\'s (forum.test): bank.test'],
    diff: [{ file: 'script.js', added: 3, removed: 1, lines: [{ op: '+', text: '<b>steal()</b>' }] }, null],
  });
  assert.deepStrictEqual(card.byClass('card-code')[0].byTag('li').map((li) => li.textContent), ['script.js: 3 lines added, 1 line removed']);
  assert.ok(!card.textContent.includes('steal()'), 'the panel card shows the code itself');
  assert.strictEqual(card.byTag('b').length, 0);
  p.see({ isVisible: true });
  p.advance(800);
  move();
  click(allow);
  assert.deepStrictEqual(p.sent(), [CONFIRM_K1]);
  assert.match(p.features, /width=900/);
  const plain = cardPanel();
  plain.p.see({ isVisible: true });
  plain.p.advance(800);
  plain.move();
  plain.click(plain.allow);
  assert.match(plain.p.features, /width=460/);
  assert.strictEqual(plain.card.byClass('card-code').length, 0);
});

const PLAN = {
  id: 'p1', kind: 'card', card: 'plan', title: 'The agent\u2019s plan', rows: ['Edit the steps if you like.'],
  steps: ['Open the cart', 'Remove every item'], risks: ['Other items could go too'],
  allow: 'Approve', deny: 'Reject', state: 'pending', armAfterMs: 800,
};

scenario('a plan card: editable steps, approved with the person\'s version after the wait', () => {
  const p = connected();
  p.sent();
  p.server({ type: 'item', item: PLAN });
  const card = p.item(0);
  assert.strictEqual(card.getAttribute('data-card'), 'plan');
  assert.strictEqual(card.byClass('card-title')[0].textContent, 'The agent\u2019s plan');
  const fields = card.byClass('plan-step');
  assert.deepStrictEqual(fields.map((f) => f.tagName + ':' + f.value), ['TEXTAREA:Open the cart', 'TEXTAREA:Remove every item']);
  assert.deepStrictEqual(card.byClass('plan-risks')[0].byTag('li').map((li) => li.textContent), ['Other items could go too']);
  assert.strictEqual(p.observers.length, 0, 'a plan card needs no visibility gate');
  const approve = card.byClass('allow')[0];
  const note = () => card.byClass('card-note')[0].textContent;
  assert.strictEqual(approve.textContent, 'Approve');
  approve.fire('click', {});
  assert.deepStrictEqual(p.sent(), [], 'approved before the wait');
  assert.match(note(), /Read the plan first/);
  p.advance(800);
  approve.fire('click', { isTrusted: false });
  assert.deepStrictEqual(p.sent(), [], 'an untrusted click approved');
  fields[1].value = '  Remove only the red socks ';
  approve.fire('click', {});
  assert.deepStrictEqual(p.sent(), [{ type: 'plan', id: 'p1', approve: true, steps: ['Open the cart', 'Remove only the red socks'] }]);
  assert.strictEqual(approve.disabled, true);
  approve.fire('click', {});
  assert.deepStrictEqual(p.sent(), [], 'decided twice');
  // The proxy's answer: the approved version, no fields.
  p.server({ type: 'item', item: Object.assign({}, PLAN, { state: 'allowed', steps: ['Open the cart', 'Remove only the red socks'] }) });
  const done = p.item(0);
  assert.strictEqual(done.byClass('plan-step').length, 0);
  assert.deepStrictEqual(done.byClass('plan-steps')[0].byTag('li').map((li) => li.textContent), ['Open the cart', 'Remove only the red socks']);
  assert.match(done.textContent, /Approved\./);
});

scenario('a plan card: rejecting, and a plan emptied by the person is not sent', () => {
  const p = connected();
  p.sent();
  p.server({ type: 'item', item: PLAN });
  const card = p.item(0);
  p.advance(800);
  card.byClass('plan-step').forEach((f) => { f.value = '   '; });
  card.byClass('allow')[0].fire('click', {});
  assert.deepStrictEqual(p.sent(), []);
  assert.match(card.byClass('card-note')[0].textContent, /at least one step/);
  card.byClass('deny')[0].fire('click', {});
  assert.deepStrictEqual(p.sent(), [{ type: 'plan', id: 'p1', approve: false }]);
  p.server({ type: 'item', item: Object.assign({}, PLAN, { state: 'denied' }) });
  assert.match(p.item(0).textContent, /Rejected\./);
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
