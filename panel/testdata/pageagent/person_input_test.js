// Unit tests of pageagent/person_input.js, the reports of the person's own input for the agent's
// send guard (proxy/chat/sendguard_person.go), alone with the files it uses. The stub adds a
// socket that records what is sent, events with isTrusted and a composed path, a pointer cursor
// by a stub computed style, and isContentEditable.
'use strict';

const assert = require('assert');
const { test, done, personLoad } = require('./load.js');

const { a, event, sent } = personLoad(['launcher.js', 'services.js', 'person_input.js'],
  ['onPersonInputClick', 'onPersonInputKey', 'host=', 'tray='], 'https://board.test/', `(function () {
  const g = globalThis;
  g.clock = 1000000;
  Date.now = () => g.clock;
  Object.defineProperty(Node.prototype, 'nodeType', { get() { if (!(this instanceof Node)) { throw new TypeError('Illegal invocation'); } return this instanceof Document ? 9 : 1; } });
  class HTMLElement extends Element { get isContentEditable() { return this._editable === true; } }
  class CSSStyleDeclaration { getPropertyValue(p) { return p === 'cursor' ? this._cursor : ''; } }
  g.getComputedStyle = (el) => { const s = new CSSStyleDeclaration(); s._cursor = el._cursor || 'auto'; return s; };
  Object.assign(g, { HTMLElement, CSSStyleDeclaration });
})();`);

function el(tag, attrs, extra) {
  return Object.assign(new a.ctx.HTMLElement(a.ns.html, tag, attrs || {}), extra || {});
}
function reports() {
  return sent().length;
}

test('a trusted click on a control of the page reports the input', () => {
  for (const path of [[el('span'), el('button')], [el('span', { role: 'Button' })], [el('a', { href: '#' })],
    [el('div', { tabindex: '0' })], [el('div', { onclick: 'x()' })], [el('div', {}, { _cursor: 'pointer' })]]) {
    a.onPersonInputClick(event(path, true));
    assert.strictEqual(reports(), 1, 'path ' + path.map((e) => e.localName + JSON.stringify(e._attrs)).join(' '));
  }
});

test("a synthetic click (the agent's) reports nothing, on any control", () => {
  a.onPersonInputClick(event([el('button')], false));
  a.onPersonInputClick(event([el('span', { role: 'button' })], false));
  assert.strictEqual(reports(), 0);
});

test("a trusted click on the proxy's own launcher reports nothing", () => {
  const launcher = el('div', { 'data-remixproxy-launcher': '' }, { _cursor: 'pointer' });
  a['host='](launcher);
  a.onPersonInputClick(event([launcher, el('body')], true));
  a.onPersonInputKey(event([launcher, el('body')], true, 'Enter'));
  a['host='](null);
  assert.strictEqual(reports(), 0);
});

test("a trusted click on the proxy's own tray reports nothing", () => {
  const tray = el('div', { 'data-remixproxy-tray': '' }, { _cursor: 'pointer' });
  a['tray='](tray);
  a.onPersonInputClick(event([tray, el('body')], true));
  a.onPersonInputKey(event([tray, el('body')], true, 'Enter'));
  a['tray='](null);
  assert.strictEqual(reports(), 0);
});

test('a trusted click on text or blank space reports nothing', () => {
  a.onPersonInputClick(event([el('p'), el('div')], true));
  a.onPersonInputClick(event([el('span', { role: 'presentation' })], true));
  assert.strictEqual(reports(), 0);
});

test('Enter or Space on the page report; other keys and synthetic keys do not', () => {
  a.onPersonInputKey(event([el('body')], true, 'Enter'));
  a.onPersonInputKey(event([el('body')], true, ' '));
  assert.strictEqual(reports(), 2);
  a.onPersonInputKey(event([el('body')], true, 'ArrowDown'));
  a.onPersonInputKey(event([el('input')], false, 'Enter'));
  a.onPersonInputKey(event([el('input')], false, 'h'));
  assert.strictEqual(reports(), 0);
});

// Eleventh session (OPEN-ITEMS 122): only deliberate input reports — a click on a control, Enter,
// Space on a control — and each report says which page it is.

test('typing in a field reports nothing, however long; Space in a text field neither', () => {
  for (const field of [el('input'), el('input', { type: 'search' }), el('textarea'), el('div', {}, { _editable: true })]) {
    for (const key of ['h', 'i', ' ', 'Backspace', 'a']) {
      a.ctx.clock += 300;
      a.onPersonInputKey(event([field], true, key));
    }
    assert.strictEqual(reports(), 0, field.localName + JSON.stringify(field._attrs));
  }
});

test('Enter in a field reports; Space on a control or the page reports', () => {
  a.onPersonInputKey(event([el('input')], true, 'Enter'));
  a.onPersonInputKey(event([el('textarea')], true, 'Enter'));
  a.onPersonInputKey(event([el('button')], true, ' '));
  a.onPersonInputKey(event([el('input', { type: 'checkbox' })], true, ' '));
  a.onPersonInputKey(event([el('span', { role: 'button', tabindex: '0' })], true, ' '));
  assert.strictEqual(reports(), 5);
});

test('a click into a text field reports nothing; on a button, a link, a submit or a label, it does', () => {
  for (const path of [[el('input')], [el('input', { type: 'email' })], [el('textarea')], [el('div', {}, { _editable: true, _cursor: 'text' })],
    [el('span'), el('div', { role: 'textbox', tabindex: '0' })]]) {
    a.onPersonInputClick(event(path, true));
    assert.strictEqual(reports(), 0, 'path ' + path.map((e) => e.localName + JSON.stringify(e._attrs)).join(' '));
  }
  for (const path of [[el('button')], [el('a', { href: '/x' })], [el('input', { type: 'submit' })], [el('input', { type: 'checkbox' })],
    [el('label', { for: 'quick' })], [el('span'), el('label')]]) {
    a.onPersonInputClick(event(path, true));
    assert.strictEqual(reports(), 1, 'path ' + path.map((e) => e.localName + JSON.stringify(e._attrs)).join(' '));
  }
});

test("a report carries the page's address as the page agent knows it", () => {
  a.onPersonInputClick(event([el('button')], true));
  assert.deepStrictEqual(Array.from(a.ctx.sent, (m) => [m.type, m.url]), [['person-input', 'https://board.test/']]);
  a.ctx.sent.length = 0;
});

done();
