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
    [el('div', { tabindex: '0' })], [el('div', { onclick: 'x()' })], [el('div', {}, { _editable: true })],
    [el('div', {}, { _cursor: 'pointer' })]]) {
    a.onPersonInputClick(event(path, true));
    assert.strictEqual(reports(), 1, 'path ' + path.map((e) => e.localName + JSON.stringify(e._attrs)).join(' '));
  }
});

test('typing in a field reports at most once in 250 ms; Enter always', () => {
  a.ctx.clock += 1000;
  a.onPersonInputKey(event([el('input')], true, 'a'));
  a.ctx.clock += 100;
  a.onPersonInputKey(event([el('input')], true, 'b'));
  a.onPersonInputKey(event([el('input')], true, 'Enter'));
  assert.strictEqual(reports(), 2);
  a.ctx.clock += 200;
  a.onPersonInputKey(event([el('input')], true, 'c'));
  assert.strictEqual(reports(), 1);
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

test('Enter or Space anywhere, and any key in a field, report; other keys and synthetic keys do not', () => {
  a.onPersonInputKey(event([el('body')], true, 'Enter'));
  a.onPersonInputKey(event([el('body')], true, ' '));
  assert.strictEqual(reports(), 2);
  for (const field of [el('input'), el('textarea'), el('div', {}, { _editable: true })]) {
    a.ctx.clock += 300;
    a.onPersonInputKey(event([field], true, 'h'));
    assert.strictEqual(reports(), 1, field.localName);
  }
  a.onPersonInputKey(event([el('body')], true, 'ArrowDown'));
  a.onPersonInputKey(event([el('input')], false, 'Enter'));
  a.onPersonInputKey(event([el('input')], false, 'h'));
  assert.strictEqual(reports(), 0);
});

done();
