// Unit tests of the boot's hello (pageagent/boot.js openEarlySocket, with early.js, rx_ready.js
// and the rest's channel.js and navigation.js): the boot says hello once as soon as its socket
// opens, and reports readiness and same-document navigations on it, in order, while the rest has
// not taken the socket; the rest sends no second hello for that socket at the take-over, and its
// reports go out once it has it; a reconnect says hello again, once. Nothing of it reaches a
// window property.
'use strict';

const assert = require('assert');
const { load, test, done } = require('./load.js');

// A stub WebSocket (sockets records every one, with what it was sent), listeners that can be
// fired (fire), a document whose readyState and title the test sets, and timers run by hand.
const setup = `
const listeners = new WeakMap(); // target -> type -> [fn]
EventTarget.prototype.addEventListener = function (type, fn) {
  if (!listeners.has(this)) { listeners.set(this, {}); }
  const byType = listeners.get(this);
  (byType[type] = byType[type] || []).push(fn);
};
globalThis.fire = function (target, type, ev) {
  const l = (listeners.get(target) || {})[type] || [];
  for (const fn of l.slice()) { fn(ev || {}); }
};
// fireWindow fires the window's own listeners (outside the vm, the context object is not the
// window its scripts see).
globalThis.fireWindow = function (type) { fire(window, type); };
globalThis.pageURL = location.href;
const pageLoc = {};
Object.defineProperty(pageLoc, 'href', { get() { return pageURL; } });
Object.defineProperty(pageLoc, 'protocol', { get() { return new URL(pageURL).protocol; } });
globalThis.location = pageLoc;
globalThis.sockets = [];
globalThis.WebSocket = class WebSocket extends EventTarget {
  constructor(url) { super(); this.url = url; this.sent = []; this._rs = 0; sockets.push(this); }
  get readyState() { return this._rs; }
  send(d) { if (this._rs !== 1) { throw new Error('send while not open'); } this.sent.push(JSON.parse(d)); }
  close() { this._rs = 3; }
};
globalThis.docState = 'loading';
globalThis.docTitle = 'Shop';
Object.defineProperty(Document.prototype, 'readyState', { get() { return docState; }, configurable: true });
Object.defineProperty(Document.prototype, 'title', { get() { return docTitle; }, configurable: true });
globalThis.timers = [];
globalThis.setTimeout = function (fn) { timers.push(fn); return timers.length; };
globalThis.clearTimeout = function () {};
globalThis.render = function () {}; // the launcher's (launcher.js), not loaded here
globalThis.top = globalThis;
stubScript = new Element(HTML_NS, 'script', { 'data-remixproxy': 'tok' });
stubScript._parent = { removeChild() {} };
`;

const FILES = ['helpers.js', 'early.js', 'rx_ready.js', 'rx_sheets.js', 'boot.js', 'channel.js', 'navigation.js'];
const NAMES = ['startReadinessReports', 'openEarlySocket', 'useToken', 'onEarly', 'fireEarly', 'sendReady',
  'reportNav', 'connect'];

// boot loads the files, starts the boot's readiness reports and opens its socket, as
// boot.js startBoot does; before: the global names before it ran.
function boot(href) {
  const a = load(FILES, NAMES, href || 'https://shop.test/', setup);
  a.before = Object.getOwnPropertyNames(a.ctx);
  a.ctx.stubScript = null;
  a.startReadinessReports();
  a.openEarlySocket();
  a.sock = a.ctx.sockets[0];
  return a;
}

// open makes s open and fires its open event.
function open(a, s) {
  s._rs = 1;
  a.ctx.fire(s, 'open');
}

// takeOver starts the rest's channel as start.js startRest does.
function takeOver(a) {
  a.useToken();
  a.onEarly('nav', a.reportNav);
  a.onEarly('ready', a.sendReady);
  a.connect();
}

// navigate moves the stub page to url and fires the boot's navigation report.
function navigate(a, url, kind) {
  a.ctx.pageURL = url;
  a.fireEarly('nav', kind);
}

function types(s) {
  return JSON.stringify(s.sent.map((m) => m.type + (m.state ? ':' + m.state : '') + (m.kind ? ':' + m.kind : '')));
}

test('the boot says hello once, as soon as its socket opens, with the token only in the address', () => {
  const a = boot();
  assert.strictEqual(a.ctx.sockets.length, 1, 'got ' + a.ctx.sockets.length + ' sockets, want 1');
  assert.strictEqual(a.sock.url, 'wss://remix.proxy/agent/ws?t=tok');
  assert.strictEqual(a.sock.sent.length, 0, 'sent before open: ' + types(a.sock));
  open(a, a.sock);
  assert.strictEqual(JSON.stringify(a.sock.sent), JSON.stringify([
    { type: 'hello', url: 'https://shop.test/', title: 'Shop', top: true, ready: 'loading' },
  ]));
  const added = Object.getOwnPropertyNames(a.ctx).filter((n) => !a.before.includes(n));
  assert.deepStrictEqual(added, [], 'window properties added by the boot: ' + added);
});

test('readiness before the socket opens rides in the hello, after it follows in order', () => {
  const a = boot();
  a.ctx.docState = 'interactive';
  a.ctx.fireWindow('DOMContentLoaded');
  assert.strictEqual(a.sock.sent.length, 0, 'sent before open: ' + types(a.sock));
  open(a, a.sock);
  a.ctx.docState = 'complete';
  a.ctx.fireWindow('load');
  assert.strictEqual(types(a.sock), '["hello","ready:complete"]');
  assert.strictEqual(a.sock.sent[0].ready, 'interactive', 'the hello\'s ready');
});

test('the boot reports navigations after its hello, once per URL', () => {
  const a = boot();
  open(a, a.sock);
  navigate(a, 'https://shop.test/a', 'push');
  navigate(a, 'https://shop.test/a', 'replace');
  a.ctx.docState = 'interactive';
  a.ctx.fireWindow('DOMContentLoaded');
  assert.strictEqual(types(a.sock), '["hello","nav:push","ready:interactive"]');
  assert.strictEqual(a.sock.sent[1].url, 'https://shop.test/a');
});

test('no second hello at the take-over; the rest reports from then on, once each', () => {
  const a = boot();
  open(a, a.sock);
  a.ctx.docState = 'interactive';
  a.ctx.fireWindow('DOMContentLoaded');
  takeOver(a);
  assert.strictEqual(a.ctx.sockets.length, 1, 'the rest opened a socket of its own');
  assert.strictEqual(types(a.sock), '["hello","ready:interactive"]');
  a.ctx.docState = 'complete';
  a.ctx.fireWindow('load');
  navigate(a, 'https://shop.test/', 'replace'); // the URL of the hello: nothing to report
  navigate(a, 'https://shop.test/b', 'push');
  assert.strictEqual(types(a.sock), '["hello","ready:interactive","ready:complete","nav:push"]');
});

test('a take-over before the socket opens: the boot\'s hello on open, only it', () => {
  const a = boot();
  takeOver(a);
  a.ctx.docState = 'interactive';
  a.ctx.fireWindow('DOMContentLoaded'); // not open yet: the hello will carry it
  open(a, a.sock);
  assert.strictEqual(types(a.sock), '["hello"]');
  assert.strictEqual(a.sock.sent[0].ready, 'interactive');
  a.ctx.docState = 'complete';
  a.ctx.fireWindow('load');
  assert.strictEqual(types(a.sock), '["hello","ready:complete"]');
});

test('a reconnect says hello once on its own socket; the boot stays silent', () => {
  const a = boot();
  open(a, a.sock);
  takeOver(a);
  a.sock._rs = 3;
  a.ctx.fire(a.sock, 'close', {});
  assert.strictEqual(a.ctx.timers.length, 1, 'got ' + a.ctx.timers.length + ' reconnect timers, want 1');
  a.ctx.timers[0]();
  assert.strictEqual(a.ctx.sockets.length, 2, 'got ' + a.ctx.sockets.length + ' sockets, want 2');
  const s2 = a.ctx.sockets[1];
  assert.strictEqual(s2.url, 'wss://remix.proxy/agent/ws?t=tok');
  navigate(a, 'https://shop.test/c', 'push'); // before open: the hello reads it
  open(a, s2);
  a.ctx.docState = 'interactive';
  a.ctx.fireWindow('DOMContentLoaded');
  assert.strictEqual(types(s2), '["hello","ready:interactive"]');
  assert.strictEqual(s2.sent[0].url, 'https://shop.test/c');
  assert.strictEqual(types(a.sock), '["hello"]', 'the first socket after its close');
});

test('an http page\'s boot opens ws://', () => {
  const a = boot('http://shop.test/');
  assert.strictEqual(a.sock.url, 'ws://remix.proxy/agent/ws?t=tok');
});

done();
