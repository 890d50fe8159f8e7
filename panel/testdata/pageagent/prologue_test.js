// Unit tests of pageagent/prologue.js: the token is read from the agent's own <script> element,
// which is removed first in every case; there is a token only in the top-level frame.
'use strict';

const assert = require('assert');
const { load, test, done } = require('./load.js');

// page loads the prologue with a current script carrying attrs (none: no current script).
function page(attrs, top) {
  const setup = (attrs ? 'stubScript = new Element(HTML_NS, "script", ' + JSON.stringify(attrs) + ');' +
    'globalThis.removed = [];' +
    'stubScript.parentNode = { removeChild(c) { removed.push(c); } };' : '') +
    (top ? 'globalThis.top = globalThis;' : 'globalThis.top = {};');
  const a = load([], ['token'], 'https://shop.test/', setup);
  return { token: a.token, removed: a.ctx.removed ? a.ctx.removed.length : 0 };
}

test('the token of the top-level frame, and the script element removed', () => {
  assert.deepStrictEqual(page({ 'data-remixproxy': 'tok123' }, true), { token: 'tok123', removed: 1 });
});

test('no token: no current script, no attribute, an empty one, or a frame', () => {
  assert.deepStrictEqual(page(null, true), { token: '', removed: 0 });
  assert.deepStrictEqual(page({}, true), { token: '', removed: 1 });
  assert.deepStrictEqual(page({ 'data-remixproxy': '' }, true), { token: '', removed: 1 });
  assert.deepStrictEqual(page({ 'data-remixproxy': 'tok123' }, false), { token: '', removed: 1 });
});

done();
