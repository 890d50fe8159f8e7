// Unit tests of pageagent/rx_handles.js, remixlet handles and marks, alone (with helpers.js).
'use strict';

const assert = require('assert');
const { load, test, refusal, done } = require('./load.js');

const a = load(['helpers.js', 'rx_handles.js'], ['shortID', 'tableFor', 'handleFor', 'element']);

const RX1 = 'rx_0123456789abcdef0123456789abcdef';
const RX2 = 'rx_fedcba9876543210fedcba9876543210';

test('shortID takes the 8 digits that name a remixlet\'s mark, and only from a well-formed ID', () => {
  assert.strictEqual(a.shortID(RX1), '01234567');
  const bad = [
    'rx_0123456789ABCDEF0123456789abcdef', // uppercase
    'rx_0123456789abcdef0123456789abcde', // short
    'rx_0123456789abcdef0123456789abcdef0', // long
    'xx_0123456789abcdef0123456789abcdef',
    'rx_0123456789abcdef0123456789abcdeg',
    null, 7, {},
  ];
  for (const rx of bad) {
    assert.strictEqual(a.shortID(rx), '', 'shortID(' + JSON.stringify(rx) + ')');
  }
});

test('a handle names an element in its remixlet\'s table only', () => {
  const t1 = a.tableFor(RX1);
  const t2 = a.tableFor(RX2);
  assert.strictEqual(a.tableFor(RX1), t1, 'one table per remixlet');
  assert.strictEqual(t1.mark, 'data-remixlet-01234567');
  const el = a.el('div');
  const h = a.handleFor(t1, el);
  assert.strictEqual(h.$h, 1);
  assert.strictEqual(a.handleFor(t1, el).$h, 1, 'the same element keeps its handle');
  assert.strictEqual(a.handleFor(t1, a.el('p')).$h, 2);
  assert.strictEqual(Object.getPrototypeOf(h), null, 'handles have no prototype');
  assert.strictEqual(a.element(t1, { $h: 1 }), el);
  for (const [t, handle] of [[t2, { $h: 1 }], [t1, { $h: 99 }], [t1, { $h: '1' }], [t1, null], [t1, 1]]) {
    const why = refusal(() => a.element(t, handle));
    assert.ok(why.includes('unknown element handle'), why);
  }
});

done();
