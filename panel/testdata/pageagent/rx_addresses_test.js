// Unit tests of pageagent/rx_addresses.js, the address rule, alone (with the files it uses:
// helpers.js, rx_run.js for the op's state, rx_handles.js for the mark prefix).
'use strict';

const assert = require('assert');
const { load, test, refusal, plain, done } = require('./load.js');

const a = load(['helpers.js', 'rx_run.js', 'rx_handles.js', 'rx_addresses.js'],
  ['addressesIn', 'encodedAddressesIn', 'addressKey', 'addressSet', 'checkAddress', 'opHosts=', 'opAddrs=', 'opRelative='],
  'https://shop.test/a/b?q=1');

function reset() {
  a['opHosts='](null);
  a['opAddrs='](null);
  a['opRelative='](false);
}

test('addressesIn finds every address in a value, up to a space, quote, comma or bracket', () => {
  const cases = [
    ['https://a.test/x', ['https://a.test/x']],
    ['see https://a.test/x and //b.test/y, wss://c.test', ['https://a.test/x', '//b.test/y', 'wss://c.test']],
    ['url("https://a.test/x"),(http://b.test/y)', ['https://a.test/x', 'http://b.test/y']],
    ['ht\ttps://a.te\nst/x', ['https://a.test/x']],
    ['HTTPS://A.test/X', ['HTTPS://A.test/X']],
    ['\\\\evil.test/x', ['\\\\evil.test/x']],
    ['///evil.test', ['///evil.test']],
    ['//[::1]/x', ['//']], // stops at the bracket; '//' does not parse, so such a value is refused
    ['xhttps://a.test', []],
    ['no address here', []],
    ['a/b/c', []],
    ['//', []],
    ['', []],
  ];
  for (const [value, want] of cases) {
    assert.deepStrictEqual(plain(a.addressesIn(value)), want, 'addressesIn(' + JSON.stringify(value) + ')');
  }
});

test('encodedAddressesIn finds what proxy/remixlet/deputies.go finds (the cases are shared)', () => {
  const cases = JSON.parse(require('fs').readFileSync(require('path').join(__dirname, 'encoded_addresses.json'), 'utf8'));
  for (const [value, want] of cases) {
    assert.deepStrictEqual(plain(a.addressesIn(value)).slice(plain(a.addressesIn(value)).length - want.length), want,
      'addressesIn(' + JSON.stringify(value) + ')');
    assert.deepStrictEqual(plain(a.encodedAddressesIn(value)), want, 'encodedAddressesIn(' + JSON.stringify(value) + ')');
  }
});

test('addressKey decodes escapes of printable ASCII but % / ? #', () => {
  const cases = [
    ['https://a.test/x', 'https://a.test/x'],
    ['https://a.test/%7Cx%5e', 'https://a.test/|x^'],
    ['https://a.test/%41%61', 'https://a.test/Aa'],
    ['https://a.test/%2F%3F%23%25', 'https://a.test/%2F%3F%23%25'],
    ['https://a.test/%20%7F%C3%A9', 'https://a.test/%20%7F%C3%A9'],
    ['https://a.test/%4', 'https://a.test/%4'],
    ['https://a.test/%zz', 'https://a.test/%zz'],
  ];
  for (const [addr, want] of cases) {
    assert.strictEqual(a.addressKey(addr), want, 'addressKey(' + addr + ')');
  }
});

test('addressSet: ops that write addresses get a set (empty when the proxy found none), others null', () => {
  assert.strictEqual(a.addressSet('query', ['https://shop.test/x']), null);
  const s = a.addressSet('setAttr', ['https://shop.test/%7Cx', 7, null]);
  assert.deepStrictEqual(Object.keys(s), ['https://shop.test/|x']);
  assert.deepStrictEqual(Object.keys(a.addressSet('create', null)), []);
  assert.deepStrictEqual(Object.keys(a.addressSet('setHTML', 'not a list')), []);
});

test('checkAddress resolves against the page and allows its own origin', () => {
  reset();
  assert.strictEqual(a.checkAddress('href', 'c?d=1', true), 'https://shop.test/a/c?d=1');
  assert.strictEqual(a.checkAddress('href', '/x#top', true), 'https://shop.test/x#top');
  assert.strictEqual(a.checkAddress('src', 'HTTPS://SHOP.test:443/y', false), 'https://shop.test/y');
});

test('checkAddress refuses other schemes, user names and other sites', () => {
  reset();
  const cases = [
    ['javascript:alert(1)', 'javascript: addresses are not allowed'],
    ['blob:https://shop.test/1', 'blob: addresses are not allowed'],
    ['data:image/svg+xml,<svg/>', 'only data:image/png, gif, jpeg or webp'],
    ['data:text/html,x', 'only data:image/png, gif, jpeg or webp'],
    ['https://user:pw@shop.test/', 'addresses with a user name are not allowed'],
    ['https://other.test/x', 'https://other.test/x is not on the page\'s origin'],
    ['http://shop.test/x', 'http://shop.test/x is not on the page\'s origin'],
    ['//other.test/x', 'https://other.test/x is not on the page\'s origin'],
    ['https://[bad', 'the address does not parse'],
    [7, 'the address must be a string'],
  ];
  for (const [value, want] of cases) {
    const why = refusal(() => a.checkAddress('href', value, true));
    assert.ok(why.includes(want), 'checkAddress(' + JSON.stringify(value) + '): got "' + why + '", want it to say "' + want + '"');
  }
});

test('checkAddress allows data: images and the hosts the proxy allowed for the op', () => {
  reset();
  assert.strictEqual(a.checkAddress('src', 'data:image/png;base64,AAAA', false), 'data:image/png;base64,AAAA');
  assert.strictEqual(a.checkAddress('src', 'DATA:IMAGE/WEBP,x', false), 'data:IMAGE/WEBP,x');
  a['opHosts='](['cdn.test']);
  assert.strictEqual(a.checkAddress('src', 'https://cdn.test/i.png', false), 'https://cdn.test/i.png');
  assert.ok(refusal(() => a.checkAddress('src', 'https://evil.test/i.png', false)).includes('not on the page\'s origin'));
  reset();
});

test('checkAddress writes only addresses the proxy checked (Op.addrs), compared by addressKey', () => {
  reset();
  a['opAddrs='](a.addressSet('setAttr', ['https://shop.test/a/c', 'https://shop.test/p%7Cq']));
  assert.strictEqual(a.checkAddress('href', 'c#frag', true), 'https://shop.test/a/c#frag');
  // The URL Standard leaves | raw in a path where Chromium (and the proxy's list) escape it.
  assert.strictEqual(a.checkAddress('href', '/p|q', true), 'https://shop.test/p|q');
  const why = refusal(() => a.checkAddress('href', 'd', true));
  assert.ok(why.includes('the browser reads this address as https://shop.test/a/d, which is not an address the proxy checked'), why);
  reset();
});

test('opAllowsHost takes the site patterns a clone gets: *.site and *', () => {
  reset();
  a['opHosts='](['*.own.test', 'api.test']);
  assert.strictEqual(a.checkAddress('src', 'https://own.test/i.png', false), 'https://own.test/i.png');
  assert.strictEqual(a.checkAddress('src', 'https://img.own.test/i.png', false), 'https://img.own.test/i.png');
  assert.strictEqual(a.checkAddress('src', 'https://api.test/i.png', false), 'https://api.test/i.png');
  for (const bad of ['https://notown.test/i.png', 'https://own.test.evil.test/i.png', 'https://sub.api.test/i.png']) {
    assert.ok(refusal(() => a.checkAddress('src', bad, false)).includes('is not on the page\'s origin'), bad);
  }
  a['opHosts='](['*']);
  assert.strictEqual(a.checkAddress('src', 'https://any.test/i.png', false), 'https://any.test/i.png');
  reset();
});

// A page that has loaded (and links to) https://planted.test/0: a comment's image, say.
const planted = load(['helpers.js', 'rx_run.js', 'rx_handles.js', 'rx_addresses.js'],
  ['checkAddress', 'opHosts=', 'opAddrs=', 'opRelative='], 'https://shop.test/a/b', `
class PerformanceEntry { constructor(n) { this._n = n; } get name() { return this._n; } }
class Performance { getEntriesByType(t) { return t === 'resource' ? [new PerformanceEntry('https://planted.test/0')] : []; } }
Object.assign(globalThis, { PerformanceEntry, Performance, performance: new Performance() });
`);

test('an address the page loads may be a link, never an image (red-team pass 5a: a channel to its host)', () => {
  assert.strictEqual(planted.checkAddress('href', 'https://planted.test/0', true), 'https://planted.test/0');
  const why = refusal(() => planted.checkAddress('src', 'https://planted.test/0', false));
  assert.ok(why.includes('needs a fetch: permission'), why);
  // Nor in another attribute's value (a lazy loader's data-src).
  assert.ok(refusal(() => planted.checkAddress('data-src', 'https://planted.test/0', false)).includes('is not on the page\'s origin'));
  assert.ok(refusal(() => planted.checkAddress('href', 'https://planted.test/1', true)).includes('not an address the page already links to'));
});


// The image rule, one table for Go (TestImageRuleMatchesThePageAgent in
// proxy/remixlet/policy_test.go: imageAllowed, checkDOMCall's hosts, cloneHosts) and the page
// agent (checkAddress with link false, given the Op.hosts and Op.addrs Go sends): every row
// decided alike.
test('checkAddress(link false) decides every row of image_rule.json as Go does (the cases are shared)', () => {
  const cases = JSON.parse(require('fs').readFileSync(require('path').join(__dirname, 'image_rule.json'), 'utf8'));
  const pages = {};
  const wrong = [];
  for (const c of cases) {
    if (!pages[c.page]) {
      pages[c.page] = load(['helpers.js', 'rx_run.js', 'rx_handles.js', 'rx_addresses.js'],
        ['checkAddress', 'addressSet', 'opHosts=', 'opAddrs=', 'opRelative='], c.page);
    }
    const p = pages[c.page];
    p['opHosts='](c.hosts);
    p['opAddrs='](c.op === 'clone' ? null : p.addressSet(c.op, c.addrs || []));
    p['opRelative='](false);
    let why = '';
    try {
      p.checkAddress('src', c.value, false);
    } catch (e) {
      why = refusal(() => { throw e; }); // rethrows what is not a refusal
    }
    if ((why === '') !== c.allowed) {
      wrong.push(c.name + ': the page agent ' + (why === '' ? 'allowed it' : 'refused it: ' + why) + '; want allowed ' + c.allowed);
    }
  }
  assert.deepStrictEqual(wrong, []);
});

done();
