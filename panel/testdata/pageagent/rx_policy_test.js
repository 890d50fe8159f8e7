// Unit tests of pageagent/rx_policy.js, the page policy (attributes, loaders, password fields),
// alone with the files it uses (helpers.js, rx_run.js, rx_handles.js, rx_mirrors.js, rx_addresses.js,
// rx_layout.js).
'use strict';

const assert = require('assert');
const { load, test, refusal, done } = require('./load.js');

const a = load(['helpers.js', 'rx_run.js', 'rx_handles.js', 'rx_policy.js', 'rx_mirrors.js', 'rx_addresses.js', 'rx_layout.js'],
  ['isLoader', 'loaderWritable', 'isPassword', 'isSensitive', 'fieldSelectorProblem', 'checkAttr', 'secretTyped='],
  'https://shop.test/',
  // secretOnPage walks the document's fields (none here): it asks the document's node type.
  "Object.defineProperty(Node.prototype, 'nodeType', { get() { return this instanceof Document ? 9 : 1; } });");
const { html, svg, mathml } = a.ns;

test('isLoader: elements that load, navigate or change how the page is fetched', () => {
  const cases = [
    ['link', html, {}, true],
    ['iframe', html, {}, true],
    ['form', html, {}, true],
    ['template', html, {}, true],
    ['input', html, { type: 'IMAGE' }, true],
    ['input', html, { type: 'text' }, false],
    ['div', html, {}, false],
    ['a', html, {}, false], // its href keeps the address rule
    ['img', html, {}, false],
    ['a', svg, {}, true],
    ['use', svg, {}, true],
    ['feimage', svg, {}, true],
    ['rect', svg, {}, false],
    ['math', mathml, {}, true], // everything outside HTML and SVG
    ['mi', mathml, {}, true],
  ];
  for (const [ln, ns, attrs, want] of cases) {
    assert.strictEqual(a.isLoader(a.el(ln, ns, attrs)), want, 'isLoader(<' + ln + '> in ' + ns + ')');
  }
});

test('loaderWritable: class, hidden, title (not on link and style), lang, dir, aria-*', () => {
  const link = a.el('link');
  const iframe = a.el('iframe');
  for (const name of ['class', 'hidden', 'lang', 'dir', 'aria-label']) {
    assert.strictEqual(a.loaderWritable(iframe, name), true, name + ' on iframe');
  }
  assert.strictEqual(a.loaderWritable(iframe, 'title'), true, 'title on iframe');
  assert.strictEqual(a.loaderWritable(link, 'title'), false, 'title on link picks a stylesheet set');
  for (const name of ['src', 'name', 'width', 'data-x', 'id']) {
    assert.strictEqual(a.loaderWritable(iframe, name), false, name + ' on iframe');
  }
});

test('password fields: type password, autocomplete passwords; sensitive adds one-time codes and cards', () => {
  const cases = [
    [a.el('input', html, { type: 'Password' }), true, true],
    [a.el('input', html, { autocomplete: 'username current-password' }), true, true],
    [a.el('input', html, { autocomplete: 'new-password' }), true, true],
    [a.el('input', html, { autocomplete: 'one-time-code' }), false, true],
    [a.el('textarea', html, { autocomplete: 'cc-number' }), false, true],
    [a.el('input', html, { type: 'text' }), false, false],
    [a.el('div', html, { type: 'password' }), false, false],
  ];
  cases.forEach(([el, password, sensitive], i) => {
    assert.strictEqual(a.isPassword(el), password, 'isPassword case ' + i);
    assert.strictEqual(a.isSensitive(el), sensitive, 'isSensitive case ' + i);
  });
});

test('fields called a card number, a security code or a one-time code are sensitive without autocomplete tokens', () => {
  const secret = [
    { name: 'cardnumber' }, { name: 'card_number' }, { id: 'cardNumber' }, { name: 'cc-num' },
    { name: 'payment[card][number]' }, { name: 'cvc' }, { id: 'cardCvc' }, { name: 'CVV2' },
    { name: 'cc_csc' }, { placeholder: 'CVC' }, { 'aria-label': 'Security code' },
    { name: 'securityCode' }, { name: 'otp' }, { id: 'OTPCode' }, { name: 'otp-input' },
    { name: 'verification_code' }, { name: 'one-time-code' }, { placeholder: 'Card number' },
    { name: 'kartennummer' }, { name: 'cvc', type: 'tel' }, { name: 'cvc', type: 'PASSWORD' },
  ];
  secret.forEach((attrs, i) => {
    assert.strictEqual(a.isSensitive(a.el('input', html, attrs)), true, 'secret case ' + i + ' ' + JSON.stringify(attrs));
  });
  const plain = [
    { name: 'hotpink' }, { name: 'footprint' }, { name: 'pincode' }, { name: 'coupon_code' },
    { name: 'promoCode' }, { name: 'postal-code' }, { name: 'cardholder' }, { name: 'card-name' },
    { name: 'discount' }, { placeholder: 'Search' }, { name: 'cvc', type: 'hidden' },
    { name: 'otp', type: 'checkbox' }, { id: 'cscart' }, { name: 'q' },
  ];
  plain.forEach((attrs, i) => {
    assert.strictEqual(a.isSensitive(a.el('input', html, attrs)), false, 'plain case ' + i + ' ' + JSON.stringify(attrs));
  });
  assert.strictEqual(a.isSensitive(a.el('div', html, { name: 'cvc' })), false, 'not a field');
  assert.strictEqual(a.isSensitive(a.el('textarea', html, { name: 'cvc' })), false, 'textareas go by their marks only');
});

test('a textarea the page marks as a password is sensitive', () => {
  assert.strictEqual(a.isSensitive(a.el('textarea', html, { autocomplete: 'current-password' })), true);
  assert.strictEqual(a.isSensitive(a.el('textarea', html, { autocomplete: 'section-x new-password' })), true);
  assert.strictEqual(a.isSensitive(a.el('textarea', html, { autocomplete: 'street-address' })), false);
});

// A page whose "show password" button turns the field into a text field: the stub's
// MutationObserver hands its callback to the test, which plays the records the browser would.
const setupObserver = `(function () {
    class MutationRecord {
      constructor(t, old) { this._t = t; this._old = old; }
      get target() { return this._t; }
      get oldValue() { return this._old; }
    }
    class MutationObserver {
      constructor(cb) { globalThis.moCallback = cb; globalThis.moCount = (globalThis.moCount || 0) + 1; }
      observe(node, opts) { globalThis.moOptions = opts; }
    }
    // Listeners by type, so the test can fire the events that start the observer.
    globalThis.listeners = {};
    EventTarget.prototype.addEventListener = function (type, fn) { (globalThis.listeners[type] = globalThis.listeners[type] || []).push(fn); };
    Object.defineProperty(Node.prototype, 'firstChild', { get() { return this._kids && this._kids[0] || null; } });
    Object.defineProperty(Node.prototype, 'nextSibling', { get() {
      const k = this._parent && this._parent._kids; const i = k ? k.indexOf(this) : -1;
      return i >= 0 && i + 1 < k.length ? k[i + 1] : null; } });
    Object.defineProperty(Node.prototype, 'nodeType', { get() { return 1; } });
    // The document loads; its load event's listener queues the observer's start for the task
    // after it (afterLoad, helpers.js), which runTimers runs.
    Object.defineProperty(Document.prototype, 'readyState', { get() { return 'loading'; } });
    globalThis.timers = [];
    globalThis.setTimeout = function (fn) { globalThis.timers.push(fn); return globalThis.timers.length; };
    globalThis.clearTimeout = function () {};
    globalThis.runTimers = function () { while (globalThis.timers.length) globalThis.timers.shift()(); };
    Object.assign(globalThis, { MutationRecord, MutationObserver });
  })();`;
const r = load(['helpers.js', 'rx_run.js', 'rx_handles.js', 'rx_policy.js', 'rx_mirrors.js', 'rx_addresses.js'],
  ['isPassword', 'isSensitive', 'watchRevealedPasswords', 'carryPasswords'], 'https://shop.test/', setupObserver);

test('the observer of revealed passwords starts in the task after load, not while the page loads', () => {
  r.watchRevealedPasswords();
  assert.strictEqual(r.ctx.moOptions, undefined, 'no observer while the page loads');
  for (const type of ['load', 'pointerdown', 'keydown', 'focusin']) {
    assert.strictEqual((r.ctx.listeners[type] || []).length, 1, 'one listener for ' + type);
  }
  for (const type of ['mousedown', 'touchstart']) { // pointerdown comes first in Chromium
    assert.strictEqual((r.ctx.listeners[type] || []).length, 0, 'a listener for ' + type);
  }
  r.ctx.listeners.load[0]();
  assert.strictEqual(r.ctx.moOptions, undefined, 'an observer in the load event\'s own task');
  r.ctx.runTimers();
  assert.ok(r.ctx.moOptions, 'the observer started after load');
  r.ctx.listeners.pointerdown[0]();
  r.ctx.listeners.load[0](); r.ctx.runTimers();
  assert.strictEqual(r.ctx.moCount, 1, 'one observer, however many triggers');
});

test('the observer starts at the first pointer, key, touch or focus event, or the first message that runs something', () => {
  for (const type of ['pointerdown', 'keydown', 'focusin', 'message']) {
    const q = load(['helpers.js', 'rx_run.js', 'rx_handles.js', 'rx_policy.js', 'rx_mirrors.js', 'rx_addresses.js'],
      ['watchRevealedPasswords', 'startRevealWatch'], 'https://shop.test/', setupObserver);
    q.watchRevealedPasswords();
    assert.strictEqual(q.ctx.moOptions, undefined, type + ': no observer before it');
    if (type === 'message') {
      q.startRevealWatch(); // what channel.js's receive calls before an op, a tool, ...
    } else {
      q.ctx.listeners[type][0]();
    }
    assert.ok(q.ctx.moOptions, 'the observer started on ' + type);
  }
});

test('a password field the page turns into a text field stays a password field', () => {
  r.ctx.listeners.load[0](); r.ctx.runTimers();
  const opts = r.ctx.moOptions;
  assert.ok(opts && opts.attributeOldValue === true && opts.subtree === true, 'the observer keeps old values, in the whole document');
  assert.deepStrictEqual(Array.from(opts.attributeFilter), ['type', 'autocomplete']);
  const shown = r.el('input', html, { type: 'text' });
  const unmarked = r.el('input', html, { autocomplete: 'username' });
  const other = r.el('input', html, { type: 'text' });
  assert.strictEqual(r.isPassword(shown), false, 'before the record');
  const rec = (t, old) => new r.ctx.MutationRecord(t, old);
  r.ctx.moCallback([rec(shown, 'PassWord'), rec(unmarked, 'current-password'), rec(other, 'email')]);
  assert.strictEqual(r.isPassword(shown), true, 'type was password');
  assert.strictEqual(r.isSensitive(unmarked), true, 'autocomplete named a password');
  assert.strictEqual(r.isPassword(other), false, 'type was email');
});

test('clones of a revealed password field are password fields too', () => {
  const src = r.el('div', html, {});
  const field = r.el('input', html, { type: 'text' });
  src._kids = [r.el('span', html, {}), field];
  src._kids.forEach((k) => { k._parent = src; });
  r.ctx.moCallback([new r.ctx.MutationRecord(field, 'password')]);
  const copy = r.el('div', html, {});
  copy._kids = [r.el('span', html, {}), r.el('input', html, { type: 'text' })];
  copy._kids.forEach((k) => { k._parent = copy; });
  r.carryPasswords(src, copy, { n: 0 });
  assert.strictEqual(r.isPassword(copy._kids[1]), true, 'the cloned field');
  assert.strictEqual(r.isPassword(copy._kids[0]), false, 'its sibling');
});

test('fieldSelectorProblem: selectors that could read what is typed into a field', () => {
  const cases = [
    ['input[value^=a]', true],
    ['input:placeholder-shown', true],
    ['input:-webkit-autofill', true],
    [':user-invalid', true],
    ['input:in-range', true],
    ['a\\76 alue', true], // an escape could spell value
    ['input/**/', true], // so could a comment
    ['[data-value^=h]', false], // a data-* value, until a secret is typed (below)
    ['[data-len="7"]', false],
    ['[aria-valuenow="7"]', true], // a strength meter's
    ['[x-len="7"]', true],
    ['x-pin:state(empty)', true],
    ['input.name', false],
    ['div > p:hover', false],
    ['[data-value]', false],
    ['[data-testid="x"] a[href^="/"]', false],
    ['.value', false],
  ];
  for (const [sel, want] of cases) {
    assert.strictEqual(a.fieldSelectorProblem(sel) !== '', want, 'fieldSelectorProblem(' + sel + ')');
  }
  // Once a secret was typed on the page, a data-* value is refused too (a page's copy of it).
  a['secretTyped='](true);
  try {
    for (const sel of ['[data-value^=h]', '[data-len="7"]', 'form:has([data-state=open])']) {
      assert.match(a.fieldSelectorProblem(sel), /compare the value of attribute data-.*until a password/, sel);
    }
    assert.strictEqual(a.fieldSelectorProblem('[data-state]'), '', 'presence');
    assert.strictEqual(a.fieldSelectorProblem('[data-testid="x"]'), '', 'test id');
  } finally {
    a['secretTyped='](false);
  }
});

test('checkAttr refuses what loads, runs or shadows, and addresses in any value', () => {
  const div = a.el('div');
  const cases = [
    [div, 'onclick', 'x()', 'event handler attributes (on*) run code'],
    [div, 'style', 'color: red', 'it loads or runs something'],
    [div, 'srcset', 'x.png 1x', 'it loads or runs something'],
    [div, 'data-remixlet-1234abcd', '', 'are the remixlets\' marks'],
    [div, 'xlink:href', '#a', 'namespaced attributes are not allowed'],
    [div, 'id', 'cookie', 'would shadow document.cookie'],
    [div, 'href', '/x', 'only links (a) may have an href'],
    [div, 'data-src', 'https://evil.test/x.png', 'holds the address https://evil.test/x.png'],
    [div, 'title', ' javascript:alert(1)', 'reads as a script address'],
    [div, 'data-x', 'url(https://evil.test)', 'may not contain url('],
    [a.el('iframe'), 'name', 'x', '<iframe> elements load, navigate or change how the page is fetched'],
    [a.el('input', html, { type: 'password' }), 'value', 'x', 'of a password field cannot be changed'],
    [a.el('input'), 'type', 'image', '<input type="image"> refused'],
    [div, '1x', 'y', 'is not an attribute name that can be set'],
    // A link that pings tells the ping host where it goes (red-team pass 5a).
    [a.el('a', html, { ping: 'https://evil.test/p' }), 'href', '/same-origin', 'the link pings other addresses'],
    [a.el('area', html, { ping: '/p' }), 'href', '/same-origin', 'the link pings other addresses'],
    // sizes flips a page's srcset between its candidates, each flip a request.
    [a.el('img', html, { srcset: 'https://evil.test/0 100w, https://evil.test/1 1000w' }), 'sizes', '900px', 'it loads or runs something'],
  ];
  for (const [el, name, value, want] of cases) {
    const why = refusal(() => a.checkAttr(el, name, value));
    assert.ok(why.includes(want), 'checkAttr(' + name + '=' + JSON.stringify(value) + '): got "' + why + '", want "' + want + '"');
  }
});

test('checkAttr returns the value to write, and the resolved address for href and src', () => {
  assert.strictEqual(a.checkAttr(a.el('div'), 'title', 'Hello'), 'Hello');
  assert.strictEqual(a.checkAttr(a.el('div'), 'data-src', 'https://shop.test/x.png'), 'https://shop.test/x.png');
  assert.strictEqual(a.checkAttr(a.el('a'), 'HREF', 'y'), 'https://shop.test/y');
  assert.strictEqual(a.checkAttr(a.el('img'), 'src', '/i.png'), 'https://shop.test/i.png');
  assert.strictEqual(a.checkAttr(a.el('iframe'), 'aria-label', 'ad'), 'ad');
});

done();
