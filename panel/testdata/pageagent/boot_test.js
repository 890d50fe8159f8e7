// Unit tests of pageagent/boot.js: loadRest creates the rest's <script> with its address on the
// magic origin, its SRI integrity, crossorigin and the boot tag's nonce, set before it is
// inserted; the hand-over property can be neither replaced nor deleted, and answers once, only
// while the captured document.currentScript is that element (a page's own getter does not
// count), then takes the element out of the document.
'use strict';

const assert = require('assert');
const vm = require('vm');
const { load, test, done } = require('./load.js');

const setup = `
Document.prototype.createElement = function (tag) { return new Element(HTML_NS, tag, {}); };
Element.prototype.setAttribute = function (n, v) {
  if (this._parent) { throw new Error('set ' + n + ' after insertion'); }
  this._attrs[n] = v;
};
Node.prototype.appendChild = function (c) { c._parent = this; (globalThis.appended = globalThis.appended || []).push(c); return c; };
Node.prototype.removeChild = function (c) { c._parent = null; globalThis.removedCount = (globalThis.removedCount || 0) + 1; return c; };
Object.defineProperty(Node.prototype, 'parentNode', { get() { return this._parent || null; }, configurable: true });
globalThis.htmlEl = new Element(HTML_NS, 'html', {});
Object.defineProperty(Document.prototype, 'documentElement', { get() { return globalThis.htmlEl; }, configurable: true });
globalThis.top = globalThis;
stubScript = new Element(HTML_NS, 'script', { 'data-remixproxy': 'tok' });
stubScript.nonce = 'n0nce';
stubScript._parent = { removeChild() {} };
`;

function boot() {
  const a = load(['helpers.js', 'early.js', 'boot.js'], ['loadRest', 'token'], 'https://shop.test/', setup);
  const names = ['the boot\'s names'];
  a.loadRest('__rxTest', '/agent/abc.js', 'sha384-xyz', () => names);
  a.names = names;
  a.el = a.ctx.appended && a.ctx.appended[0];
  a.ctx.stubScript = null;
  return a;
}

test('the rest\'s element: address, integrity, crossorigin and nonce, then inserted', () => {
  const a = boot();
  assert.strictEqual(a.token, 'tok');
  assert.ok(a.el, 'no element inserted');
  assert.strictEqual(a.el.localName, 'script');
  assert.strictEqual(a.el._parent, a.ctx.htmlEl);
  assert.strictEqual(JSON.stringify(a.el._attrs), JSON.stringify({
    integrity: 'sha384-xyz', crossorigin: 'anonymous', nonce: 'n0nce', src: 'https://remix.proxy/agent/abc.js',
  }));
});

test('the hand-over property cannot be replaced or deleted', () => {
  const a = boot();
  const d = Object.getOwnPropertyDescriptor(a.ctx, '__rxTest');
  assert.strictEqual(d.writable, false);
  assert.strictEqual(d.configurable, false);
  assert.throws(() => { Object.defineProperty(a.ctx, '__rxTest', { value: 1 }); });
  assert.throws(() => { 'use strict'; delete a.ctx.__rxTest; });
  assert.strictEqual(typeof a.ctx.__rxTest, 'function');
});

test('it answers nothing to any other current script, or none', () => {
  const a = boot();
  assert.strictEqual(a.ctx.__rxTest(), null);
  a.ctx.stubScript = new a.ctx.Element(a.ctx.HTML_NS, 'script', {});
  assert.strictEqual(a.ctx.__rxTest(), null);
});

test('a page\'s own currentScript getter naming the element does not count', () => {
  const a = boot();
  vm.runInContext("Object.defineProperty(Document.prototype, 'currentScript', { get() { return appended[0]; }, configurable: true });", a.ctx);
  assert.strictEqual(a.ctx.document.currentScript, a.el);
  assert.strictEqual(a.ctx.__rxTest(), null);
});

test('it answers the element once, and takes it out of the document', () => {
  const a = boot();
  a.ctx.stubScript = a.el;
  assert.strictEqual(a.ctx.__rxTest(), a.names);
  assert.strictEqual(a.el._parent, null);
  assert.strictEqual(a.ctx.__rxTest(), null);
});

test('an http page loads the rest from http://remix.proxy', () => {
  const a = load(['helpers.js', 'early.js', 'boot.js'], ['loadRest'], 'http://shop.test/', setup);
  a.loadRest('__rxTest', '/agent/abc.js', 'sha384-xyz', () => []);
  assert.strictEqual(a.ctx.appended[0]._attrs.src, 'http://remix.proxy/agent/abc.js');
});

done();
