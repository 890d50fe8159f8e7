// Unit tests of pageagent/rx_styles.js, inline styles, alone (with helpers.js).
'use strict';

const assert = require('assert');
const { load, test, refusal, done } = require('./load.js');

const a = load(['helpers.js', 'rx_styles.js'], ['kebab', 'checkStyleValue']);

test('kebab turns property names into CSS names', () => {
  const cases = [
    ['color', 'color'],
    ['fontWeight', 'font-weight'],
    ['borderTopLeftRadius', 'border-top-left-radius'],
    ['--my-var', '--my-var'],
    ['webkitLineClamp', 'webkit-line-clamp'],
  ];
  for (const [name, want] of cases) {
    assert.strictEqual(a.kebab(name), want, 'kebab(' + name + ')');
  }
});

test('kebab refuses what is not a plain property name, and properties that run code', () => {
  const cases = [
    ['', 'not a CSS property name'],
    [7, 'not a CSS property name'],
    ['x'.repeat(65), 'not a CSS property name'],
    ['font_weight', '"font_weight" is not a CSS property name'],
    ['color;background', 'is not a CSS property name'],
    ['behavior', 'style behavior runs code'],
    ['MozBinding', 'style -moz-binding runs code'],
  ];
  for (const [name, want] of cases) {
    const why = refusal(() => a.kebab(name));
    assert.ok(why.includes(want), 'kebab(' + JSON.stringify(name) + '): got "' + why + '", want "' + want + '"');
  }
});

test('checkStyleValue refuses values that load or hide something', () => {
  for (const value of ['red', '12px solid #fff', 'rgba(0, 0, 0, 0.5)', 'calc(100% - 2px)']) {
    a.checkStyleValue('x', value); // no refusal
  }
  const cases = [
    ['url(https://evil.test/x)', 'may not contain url('],
    ['URL(x)', 'may not contain url('],
    ['image-set("x" 1x)', 'may not contain image-set('],
    ['-webkit-image-set(x)', 'may not contain image-set('],
    ['\\75rl(x)', 'may not contain \\'],
    ['u/**/rl(x)', 'may not contain /*'],
    ['paint(worklet)', 'may not contain paint('],
    [7, 'the value must be a string'],
    ['x'.repeat(1025), 'of at most 1024 characters'],
  ];
  for (const [value, want] of cases) {
    const why = refusal(() => a.checkStyleValue('background', value));
    assert.ok(why.includes(want), 'checkStyleValue(' + JSON.stringify(value).slice(0, 40) + '): got "' + why + '", want "' + want + '"');
  }
});

done();
