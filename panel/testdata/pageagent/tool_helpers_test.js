// Unit tests of pageagent/tool_helpers.js, the page tools' text, argument and URL helpers,
// alone (with helpers.js and tool_capture.js).
'use strict';

const assert = require('assert');
const { load, test, refusal, plain, done } = require('./load.js');

const a = load(['helpers.js', 'tool_capture.js', 'tool_helpers.js'],
  ['collapse', 'cut', 'quote', 'splitSpace', 'replaceAll', 'allowed', 'checkArgs', 'intArg', 'strArg',
    'parseURLOrNull', 'pageOriginOrEmpty', 'shortDest'],
  'https://shop.test/cart?x=1');

test('collapse: whitespace runs become one space, trimmed, cut with an ellipsis', () => {
  const cases = [
    ['  a \n\t b  ', 10, 'a b'],
    ['a\u00a0\u00a0b', 10, 'a b'],
    ['abcdef', 3, 'abc\u2026'],
    ['abc', 3, 'abc'],
    ['   ', 5, ''],
    [7, 5, ''],
  ];
  for (const [s, max, want] of cases) {
    assert.strictEqual(a.collapse(s, max), want, 'collapse(' + JSON.stringify(s) + ', ' + max + ')');
  }
});

test('cut, quote, splitSpace, replaceAll', () => {
  assert.strictEqual(a.cut('abcdef', 4), 'abcd\u2026');
  assert.strictEqual(a.cut('abc', 4), 'abc');
  assert.strictEqual(a.quote('say "hi" \\ bye'), '"say \\"hi\\" \\\\ bye"');
  assert.deepStrictEqual(plain(a.splitSpace(' a  b\tc\n')), ['a', 'b', 'c']);
  assert.deepStrictEqual(plain(a.splitSpace('   ')), []);
  assert.strictEqual(a.replaceAll('aXbXXc', 'X', '--'), 'a--b----c');
  assert.strictEqual(a.replaceAll('abc', '', 'z'), 'abc');
  assert.strictEqual(a.replaceAll('aaa', 'aa', 'b'), 'ba');
});

test('arguments: unknown names, whole numbers in range, strings of a length', () => {
  a.checkArgs({ ref: 'e1' }, 'outline', a.allowed(['ref', 'budget']));
  assert.strictEqual(refusal(() => a.checkArgs({ ref: 'e1', x: 1 }, 'outline', a.allowed(['ref', 'budget']))),
    'outline: unknown argument "x" (known: ref, budget)');
  assert.strictEqual(refusal(() => a.checkArgs({ x: 1 }, 'back', a.allowed([]))), 'back: unknown argument "x" (known: none)');
  assert.strictEqual(a.intArg({}, 'budget', 3000, 200, 100000), 3000);
  assert.strictEqual(a.intArg({ budget: 500 }, 'budget', 3000, 200, 100000), 500);
  for (const v of [1.5, 100, 200000, '500', NaN]) {
    assert.strictEqual(refusal(() => a.intArg({ budget: v }, 'budget', 3000, 200, 100000)),
      'budget must be a whole number from 200 to 100000', 'intArg(' + v + ')');
  }
  assert.strictEqual(a.strArg({}, 'ref', false, 20), null);
  assert.strictEqual(refusal(() => a.strArg({}, 'ref', true, 20)), 'ref is required');
  for (const v of ['', 'x'.repeat(21), 7]) {
    assert.strictEqual(refusal(() => a.strArg({ ref: v }, 'ref', true, 20)), 'ref must be a string of 1 to 20 characters');
  }
});

test('URLs: parse or null, the page\'s origin, link destinations', () => {
  assert.strictEqual(a.parseURLOrNull('https://[bad', undefined), null);
  assert.strictEqual(a.pageOriginOrEmpty(), 'https://shop.test');
  const origin = 'https://shop.test';
  const cases = [
    ['https://shop.test/p?q=1#h', '/p?q=1#h'],
    ['https://other.test/', 'https://other.test/'],
    ['https://other.test/track?id=1', 'https://other.test/\u2026'],
    ['http://shop.test/x', 'http://shop.test/\u2026'],
  ];
  for (const [u, want] of cases) {
    assert.strictEqual(a.shortDest(a.parseURLOrNull(u, undefined), origin), want, 'shortDest(' + u + ')');
  }
});

done();
