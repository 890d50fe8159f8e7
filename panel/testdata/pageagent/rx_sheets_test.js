// Unit tests of pageagent/rx_sheets.js's first-frame sheets: the bootstrap's list (read by the
// prologue from the tag's data-remixproxy-sheets) is adopted at start, each sheet after its own
// copy, listed in the socket's address until a style message or a release touches the remixlet,
// and a malformed list or entry is left out. (The drop at the first key of a secret:
// agent_harness.js.)
'use strict';

const assert = require('assert');
const { load, test, done } = require('./load.js');

const A = 'rx_' + 'a'.repeat(32);
const B = 'rx_' + 'b'.repeat(32);

// stubSheets gives the stub browser constructable stylesheets and document.adoptedStyleSheets.
const stubSheets = `
  class CSSStyleSheet { constructor() { this.css = null; } replaceSync(t) { this.css = t; } }
  globalThis.CSSStyleSheet = CSSStyleSheet;
  globalThis.adopted = [];
  globalThis.secretOnPage = () => globalThis.secretNow === true; // rx_mirrors.js's, not loaded here
  Object.defineProperty(Document.prototype, 'adoptedStyleSheets', { get() { return adopted; }, configurable: true });
`;

// agent loads the sheets file with the bootstrap's sheets attribute text (null: none).
function agent(text) {
  const setup = stubSheets + 'globalThis.top = globalThis;' +
    'stubScript = new Element(HTML_NS, "script", ' + JSON.stringify(Object.assign({ 'data-remixproxy': 'tok' },
      text === null ? {} : { 'data-remixproxy-sheets': text })) + ');' +
    'stubScript.parentNode = { removeChild() {} };';
  return load(['helpers.js', 'rx_handles.js', 'rx_sheets.js'],
    ['adoptFirstSheets', 'firstSheetsQuery', 'applyStyle', 'emptySheets', 'sheetsFor'], 'https://shop.test/', setup);
}

// adoptedCSS lists the adopted sheets as written (each own copy comes just before its sheet).
function adoptedCSS(a) {
  return Array.from(a.ctx.adopted, (s) => s.css).filter((_, i) => i % 2 === 1);
}

// ownCSS lists the own copies adopted.
function ownCSS(a) {
  return Array.from(a.ctx.adopted, (s) => s.css).filter((_, i) => i % 2 === 0);
}

test('the first-frame sheets are adopted, in order, and listed in the socket address', () => {
  const a = agent(JSON.stringify([{ remixlet: A, version: 7, css: 'h1{color:red}', own: 'h1.o{}' }, { remixlet: B, version: 9, css: '.p{display:none}' }]));
  a.adoptFirstSheets();
  assert.deepStrictEqual(adoptedCSS(a), ['h1{color:red}', '.p{display:none}']);
  assert.deepStrictEqual(ownCSS(a), ['h1.o{}', '']);
  assert.strictEqual(a.firstSheetsQuery(), '?s=' + encodeURIComponent(A + ':7,' + B + ':9'));
});

test('a style message or a release takes a sheet off the list; its sheet is reused, not doubled', () => {
  const a = agent(JSON.stringify([{ remixlet: A, version: 7, css: 'h1{color:red}' }, { remixlet: B, version: 9, css: '.p{display:none}' }]));
  a.adoptFirstSheets();
  a.applyStyle({ type: 'style', remixlet: A, css: 'h1{color:blue}' });
  assert.deepStrictEqual(adoptedCSS(a), ['h1{color:blue}', '.p{display:none}']);
  assert.strictEqual(a.firstSheetsQuery(), '?s=' + encodeURIComponent(B + ':9'));
  a.emptySheets(a.sheetsFor(B));
  assert.deepStrictEqual(adoptedCSS(a), ['h1{color:blue}', '']);
  assert.strictEqual(a.firstSheetsQuery(), '');
});

test('no attribute, malformed JSON or entries: nothing adopted for them', () => {
  for (const [name, text] of [['none', null], ['empty', ''], ['not JSON', '[{'], ['an object', '{"remixlet":"x"}'], ['a number', '5']]) {
    const a = agent(text);
    a.adoptFirstSheets();
    assert.deepStrictEqual(adoptedCSS(a), [], name);
    assert.strictEqual(a.firstSheetsQuery(), '', name);
  }
  const a = agent(JSON.stringify([{ remixlet: 'rx_short', version: 1, css: 'a{}' }, { remixlet: A, version: '7', css: 'a{}' },
    { remixlet: A, version: 7, css: 5 }, null, { remixlet: B, version: 2, css: 'b{}' }]));
  a.adoptFirstSheets();
  assert.deepStrictEqual(adoptedCSS(a), ['b{}']);
  assert.strictEqual(a.firstSheetsQuery(), '?s=' + encodeURIComponent(B + ':2'));
});

test('the list is read once', () => {
  const a = agent(JSON.stringify([{ remixlet: A, version: 7, css: 'h1{}' }]));
  a.adoptFirstSheets();
  a.adoptFirstSheets();
  assert.strictEqual(a.ctx.adopted.length, 2);
});

test('while a secret is on the page a first-frame sheet is adopted as its own copy only', () => {
  const a = agent(JSON.stringify([{ remixlet: A, version: 7, css: 'body:has(.s3) .p{}', own: '.p.o{}' }]));
  a.ctx.secretNow = true;
  a.adoptFirstSheets();
  assert.deepStrictEqual(ownCSS(a), ['.p.o{}']);
  assert.deepStrictEqual(adoptedCSS(a), ['']);
  // For the rest of the document.
  a.ctx.secretNow = false;
  a.applyStyle({ type: 'style', remixlet: A, css: 'body:has(.s3) .q{}', own: '.q.o{}' });
  assert.deepStrictEqual(adoptedCSS(a), ['']);
  assert.deepStrictEqual(ownCSS(a), ['.q.o{}']);
});

done();
