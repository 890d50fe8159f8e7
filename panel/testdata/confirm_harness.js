// Behavioural test of static/confirm.js (the confirmation window of a card's Allow) in node,
// with a minimal fake DOM, clock and WebSocket.
//
//   node testdata/confirm_harness.js static/confirm.js
//
// Exit status 0 means every scenario passed.
'use strict';

const vm = require('vm');
const fs = require('fs');
const assert = require('assert');

const source = fs.readFileSync(process.argv[2], 'utf8');

class El {
  constructor(id) {
    this.id = id;
    this.children = [];
    this.attrs = {};
    this.listeners = {};
    this.hidden = false;
    this.disabled = false;
    this._text = '';
  }
  get textContent() { return this._text + this.children.map((c) => c.textContent).join(''); }
  set textContent(v) { this._text = String(v); this.children = []; }
  set innerHTML(v) { throw new Error('innerHTML used'); }
  appendChild(c) { this.children.push(c); return c; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return this.attrs[k]; }
  addEventListener(t, fn) { (this.listeners[t] = this.listeners[t] || []).push(fn); }
  fire(t, ev) { for (const fn of this.listeners[t] || []) fn(Object.assign({ isTrusted: true }, ev)); }
}

const CARD = {
  id: 'k1', kind: 'card', card: 'permissions', title: 'Remixlet needs permission',
  remixlet: { name: 'prices', url: 'https://remix.proxy/manager/r/rx_1' },
  rows: ['Send requests to api.shop.test as you, with your cookies'],
  allow: 'Allow', deny: 'Not now', state: 'pending', armAfterMs: 800,
};

function start(hash, focused) {
  const ids = ['status', 'card', 'card-title', 'card-remixlet-label', 'card-name', 'card-made', 'card-rows', 'card-data', 'card-diff-label', 'card-diff', 'card-page', 'allow', 'deny', 'note'];
  const els = {};
  for (const id of ids) els[id] = new El(id);
  els.card.hidden = true;
  const clock = { t: 1000 };
  const timers = [];
  const sockets = [];
  const winListeners = {};
  const docListeners = {};
  let closed = false;
  let replaced = null;
  class WebSocket {
    constructor(u) { this.url = u; this.readyState = 0; this.sent = []; this.listeners = {}; sockets.push(this); }
    addEventListener(t, fn) { (this.listeners[t] = this.listeners[t] || []).push(fn); }
    send(d) { assert.strictEqual(this.readyState, 1); this.sent.push(JSON.parse(d)); }
    fire(t, ev) { for (const fn of this.listeners[t] || []) fn(ev); }
  }
  const doc = {
    visibilityState: 'visible',
    hasFocus: () => focused,
    getElementById: (id) => els[id] || null,
    createElement: () => new El(''),
    addEventListener(t, fn) { (docListeners[t] = docListeners[t] || []).push(fn); },
  };
  const ctx = {
    JSON, Array, String, WebSocket, URL, decodeURIComponent, encodeURIComponent,
    document: doc,
    location: { hash: hash, pathname: '/panel/confirm', protocol: 'https:' },
    history: { replaceState(s, t, u) { replaced = u; } },
    performance: { now: () => clock.t },
    setTimeout(fn, ms) { timers.push({ fn, at: clock.t + ms, done: false }); return timers.length; },
    addEventListener(t, fn) { (winListeners[t] = winListeners[t] || []).push(fn); },
    close() { closed = true; },
  };
  ctx.window = ctx;
  vm.createContext(ctx);
  vm.runInContext(source, ctx, { filename: 'confirm.js' });
  const h = {
    els, sockets, clock,
    socket: () => sockets[sockets.length - 1],
    replaced: () => replaced,
    closed: () => closed,
    open() { h.socket().readyState = 1; h.socket().fire('open', {}); },
    server(m) { h.socket().fire('message', { data: JSON.stringify(m) }); },
    advance(ms) {
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
    focus(on) { for (const fn of winListeners[on ? 'focus' : 'blur'] || []) fn({}); },
    move(extra) { els.card.fire('pointermove', extra || {}); },
    click(b, extra) { els[b].fire('click', Object.assign({ detail: 1 }, extra || {})); },
    sent: () => { const s = h.socket().sent.slice(); h.socket().sent.length = 0; return s; },
  };
  return h;
}

const scenarios = [];
function scenario(name, fn) { scenarios.push({ name, fn }); }

scenario('reads the token and card from the fragment, clears it, and shows the card', () => {
  const h = start('#tok%2B1.k1', true);
  assert.strictEqual(h.replaced(), '/panel/confirm');
  assert.strictEqual(h.socket().url, 'wss://remix.proxy/panel/ws?role=confirm&t=tok%2B1');
  h.open();
  h.server({ type: 'item', item: Object.assign({}, CARD, { id: 'other' }) });
  assert.strictEqual(h.els.card.hidden, true, 'showed another card');
  h.server({ type: 'item', item: CARD });
  assert.strictEqual(h.els.card.hidden, false);
  assert.strictEqual(h.els['card-rows'].textContent, 'Send requests to api.shop.test as you, with your cookies');
  assert.strictEqual(h.els.allow.textContent, 'Allow');
  assert.strictEqual(h.els['card-name'].textContent, 'prices');
  assert.strictEqual(h.els['card-remixlet-label'].textContent, 'Remixlet');
  h.server({ type: 'item', item: Object.assign({}, CARD, { remixlet: { name: 'prices', url: '', new: true } }) });
  assert.strictEqual(h.els['card-remixlet-label'].textContent, 'New remixlet', 'a remixlet that does not run yet is not named as new');
  h.server({ type: 'item', item: Object.assign({}, CARD, { remixlet: { name: 'prices', url: '', made: 'made by the agent 2 min ago' } }) });
  assert.strictEqual(h.els['card-made'].textContent, ' (made by the agent 2 min ago)');
  h.server({ type: 'item', item: CARD });
  assert.strictEqual(h.els['card-data'].hidden, true, 'an empty data block is shown');
  h.server({ type: 'item', item: Object.assign({}, CARD, { data: '<b>{"qty": 2}</b>' }) });
  assert.strictEqual(h.els['card-data'].textContent, '<b>{"qty": 2}</b>');
  assert.strictEqual(h.els['card-data'].hidden, false);
  // The page writes its own path and query (history.pushState): only its origin is shown here,
  // where everything else is the proxy's words.
  h.server({ type: 'state', url: 'https://shop.test/remixproxy_checked_this_change:_Allow_is_safe?x=1#y' });
  assert.strictEqual(h.els['card-page'].textContent, 'For the chat on https://shop.test');
  h.server({ type: 'state', url: 'not a url' });
  assert.strictEqual(h.els['card-page'].textContent, '');
});

scenario('shows an activation\'s change of code line by line, as text', () => {
  const h = start('#t.k2', true);
  h.open();
  const act = Object.assign({}, CARD, {
    id: 'k2', card: 'activation', title: 'Apply this change?', rows: ['Run new code with a permission you allowed for its old code: Send requests to api.shop.test as you, with your cookies'],
    diff: [
      { file: 'script.js', added: 1, removed: 1, cut: 0, lines: [
        { op: '~', text: '4 unchanged lines' }, { op: ' ', text: 'const r = 1;' },
        { op: '-', text: "rmx.fetch('https://api.shop.test/prices')" },
        { op: '+', text: "rmx.fetch('https://api.shop.test/orders', {method: 'POST'}) // <img src=x onerror=alert(1)>" },
        { op: 'x', text: 'an unknown op is not shown' }] },
      { file: 'style.css', added: 900, removed: 0, cut: 520, lines: [{ op: '+', text: 'p { color: red }' }] },
      'not a diff',
    ],
  });
  h.server({ type: 'item', item: act });
  const box = h.els['card-diff'];
  assert.strictEqual(box.hidden, false, 'the diff is hidden');
  assert.strictEqual(h.els['card-diff-label'].hidden, false, 'the diff has no label');
  const [file1, pre1, file2, pre2, cut] = box.children;
  assert.strictEqual(file1.textContent, 'script.js (1 added, 1 removed)');
  assert.deepStrictEqual(pre1.children.map((l) => l.className), ['diff-gap', 'diff-ctx', 'diff-del', 'diff-add']);
  assert.deepStrictEqual(pre1.children.map((l) => l.textContent), [
    '\u22ef 4 unchanged lines', '  const r = 1;', "- rmx.fetch('https://api.shop.test/prices')",
    "+ rmx.fetch('https://api.shop.test/orders', {method: 'POST'}) // <img src=x onerror=alert(1)>"]);
  assert.strictEqual(file2.textContent, 'style.css (900 added, 0 removed)');
  assert.strictEqual(pre2.children.length, 1);
  assert.match(cut.textContent, /^520 changed lines are not shown here, or not in full/);
  assert.strictEqual(box.children.length, 5);
  // The same card again without a diff (it was decided elsewhere): the box empties.
  h.server({ type: 'item', item: Object.assign({}, act, { diff: undefined }) });
  assert.strictEqual(box.hidden, true);
  assert.strictEqual(h.els['card-diff-label'].hidden, true);
});

scenario('decides only when armed, focused, trusted and after a pointer move', () => {
  const h = start('#t.k1', true);
  h.open();
  h.server({ type: 'item', item: CARD });
  assert.strictEqual(h.els.allow.disabled, true, 'armed at once');
  h.move();
  h.click('allow'); // the instant it appears
  assert.deepStrictEqual(h.sent(), []);
  h.advance(810); // armed 800 ms after it appeared; the buttons follow at the next update
  assert.strictEqual(h.els.allow.disabled, false, 'not armed after 800 ms');
  h.click('allow'); // no move since arming
  assert.deepStrictEqual(h.sent(), []);
  assert.match(h.els.note.textContent, /Move the pointer/);
  h.move({ isTrusted: false });
  h.click('allow');
  assert.deepStrictEqual(h.sent(), []);
  h.move();
  h.click('allow', { isTrusted: false });
  assert.deepStrictEqual(h.sent(), []);
  // Losing the focus disarms and forgets the move; regaining it starts the wait again.
  h.focus(false);
  assert.strictEqual(h.els.allow.disabled, true);
  h.focus(true);
  h.advance(500);
  h.move();
  h.click('allow');
  assert.deepStrictEqual(h.sent(), []);
  h.advance(310);
  h.move();
  h.click('allow');
  assert.deepStrictEqual(h.sent(), [{ type: 'decide', id: 'k1', allow: true }]);
  h.click('allow');
  assert.deepStrictEqual(h.sent(), [], 'decided twice');
  h.server({ type: 'item', item: Object.assign({}, CARD, { state: 'allowed' }) });
  assert.strictEqual(h.els.note.textContent, 'Allowed.');
  h.advance(1200);
  assert.strictEqual(h.closed(), true, 'the window stays open');
});

scenario('a window without the focus never arms', () => {
  const h = start('#t.k1', false);
  h.open();
  h.server({ type: 'item', item: CARD });
  h.advance(5000);
  h.move();
  h.click('allow');
  assert.deepStrictEqual(h.sent(), []);
  assert.strictEqual(h.els.allow.disabled, true);
});

scenario('Not now decides too, and nothing is sent without a token', () => {
  const h = start('#t.k1', true);
  h.open();
  h.server({ type: 'item', item: CARD });
  h.advance(800);
  h.move();
  h.click('deny');
  assert.deepStrictEqual(h.sent(), [{ type: 'decide', id: 'k1', allow: false }]);
  const none = start('', true);
  assert.strictEqual(none.sockets.length, 0);
  assert.match(none.els.status.textContent, /Nothing to confirm/);
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
process.exit(failed ? 1 : 0);
