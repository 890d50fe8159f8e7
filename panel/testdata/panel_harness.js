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

// newPanel runs panel.js in a fresh context whose location is url and whose parent is a separate
// window object (the page) unless framed is false.
function newPanel(url, framed) {
  const listeners = {};
  const elements = {};
  for (const id of ['status', 'status-text', 'error', 'page-title', 'page-url']) {
    elements[id] = {
      id,
      textContent: '',
      hidden: id === 'error' || id === 'page-title',
      attrs: {},
      setAttribute(name, value) { this.attrs[name] = String(value); },
      set innerHTML(v) { throw new Error('innerHTML used'); },
    };
  }
  const sockets = [];
  const timers = [];
  class WebSocket {
    constructor(u) {
      this.url = u;
      this.listeners = {};
      this.closedWith = null;
      sockets.push(this);
    }
    addEventListener(type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); }
    close(code, reason) { this.closedWith = [code, reason]; }
    fire(type, ev) { for (const fn of this.listeners[type] || []) fn(ev); }
  }
  const loc = new URL(url);
  const parent = framed === false ? null : { name: 'page window' };
  const ctx = {
    WebSocket,
    JSON,
    Math,
    String,
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
    document: { getElementById: (id) => elements[id] || null },
    setTimeout(fn, ms) { timers.push({ fn, ms }); return timers.length; },
    clearTimeout() {},
    addEventListener(type, fn) { (listeners[type] = listeners[type] || []).push(fn); },
  };
  ctx.window = ctx;
  ctx.parent = parent || ctx;
  vm.createContext(ctx);
  vm.runInContext(panelSource, ctx, { filename: 'panel.js' });
  const p = {
    ctx, elements, sockets, timers, loc,
    socket: () => sockets[sockets.length - 1],
    status: () => elements['status-text'].textContent,
    state: () => elements.status.attrs['data-state'],
    error: () => (elements.error.hidden ? '' : elements.error.textContent),
    fire: (type, ev) => { for (const fn of listeners[type] || []) fn(ev); },
    post: (data, source) => p.fire('message', { data, source: source === undefined ? ctx.parent : source }),
    server: (obj) => p.socket().fire('message', { data: JSON.stringify(obj) }),
    close: (code) => p.socket().fire('close', { code }),
  };
  return p;
}

const scenarios = [];
function scenario(name, fn) {
  scenarios.push({ name, fn });
}

scenario('waits for a token, then takes it from its parent', () => {
  const p = newPanel('https://remix.proxy/panel');
  assert.strictEqual(p.sockets.length, 0);
  assert.match(p.status(), /Waiting/);
  p.post({ type: 'panel-token', token: 'a b' }, {}); // not from the parent: ignored
  p.post({ type: 'other', token: 'x' });
  p.post('panel-token');
  assert.strictEqual(p.sockets.length, 0);
  p.post({ type: 'panel-token', token: 'a b' });
  assert.strictEqual(p.socket().url, 'wss://remix.proxy/panel/ws?t=a%20b');
  p.post({ type: 'panel-token', token: 'a b' }); // the same token again: nothing new
  assert.strictEqual(p.sockets.length, 1);
});

scenario('takes a token from the fragment and clears it', () => {
  const p = newPanel('http://remix.proxy/panel#tok%2F1', false);
  assert.strictEqual(p.socket().url, 'ws://remix.proxy/panel/ws?t=tok%2F1');
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

scenario('a new token replaces the connection', () => {
  const p = newPanel('https://remix.proxy/panel#one');
  const first = p.socket();
  p.post({ type: 'panel-token', token: 'two' });
  assert.deepStrictEqual(first.closedWith, [1000, 'new token']);
  assert.strictEqual(p.socket().url, 'wss://remix.proxy/panel/ws?t=two');
  first.fire('close', { code: 1000 }); // the old socket's close changes nothing
  assert.strictEqual(p.status(), 'Connecting\u2026');
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
