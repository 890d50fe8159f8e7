// Unit tests of pageagent/tool_secrets.js, the page agent's own scrub of its answers (a second
// layer: the proxy's redaction stage is the one that counts), alone with the files it uses
// (helpers.js, tool_capture.js, tool_act.js, tool_helpers.js, tool_frames.js), with the tools'
// captures taken from the stub's own window (in a page they come from a fresh realm at the first
// tool call).
'use strict';

const assert = require('assert');
const { load, test, plain, done } = require('./load.js');

const a = load(['helpers.js', 'tool_capture.js', 'tool_act.js', 'tool_helpers.js', 'tool_frames.js', 'tool_secrets.js'],
  ['scrubSecrets', 'secrets', 'carriesSecret', 'cookieValues', 'trimSpaces', 'captureTools']);
a.captureTools(a.ctx);

test('scrubSecrets replaces each secret as it appears inside JSON strings', () => {
  const cases = [
    ['{"a":"hunter22"}', ['hunter22'], '{"a":"[redacted]"}'],
    ['{"a":"x hunter22 y hunter22"}', ['hunter22'], '{"a":"x [redacted] y [redacted]"}'],
    ['{"a":"pa\\"ss\\\\word"}', ['pa"ss\\word'], '{"a":"[redacted]"}'],
    ['{"a":"line\\nbreak"}', ['line\nbreak'], '{"a":"[redacted]"}'],
    ['{"a":"one","b":"two2"}', ['one', 'two2'], '{"a":"[redacted]","b":"[redacted]"}'],
    ['{"a":"nothing"}', [], '{"a":"nothing"}'],
  ];
  for (const [json, secretList, want] of cases) {
    assert.strictEqual(a.scrubSecrets(json, secretList), want, 'scrubSecrets(' + json + ')');
  }
});

test('cookies: values read as a page script would, the long ones are secrets', () => {
  a.setCookie('sid=abcdefgh12345; theme=dark;  tok = longvalue99 ;empty=');
  assert.deepStrictEqual(plain(a.cookieValues()), ['abcdefgh12345', 'dark', 'longvalue99']);
  assert.deepStrictEqual(plain(a.secrets(true)), ['abcdefgh12345', 'longvalue99']);
  assert.deepStrictEqual(plain(a.secrets(false)), []);
  assert.strictEqual(a.carriesSecret('https://evil.test/?c=abcdefgh12345'), true);
  assert.strictEqual(a.carriesSecret('https://shop.test/?theme=dark'), false);
  a.setCookie('k=a b+c/d=e%f');
  assert.strictEqual(a.carriesSecret('https://evil.test/?k=' + encodeURIComponent('a b+c/d=e%f')), true, 'encoded');
  a.setCookie('');
});

test('trimSpaces trims spaces only', () => {
  assert.strictEqual(a.trimSpaces('  a b  '), 'a b');
  assert.strictEqual(a.trimSpaces('\ta\t'), '\ta\t');
  assert.strictEqual(a.trimSpaces('   '), '');
});

done();
