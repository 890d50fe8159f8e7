// Unit tests of pageagent/tool_outline.js's line format and budget (the formatter: pushLine,
// finishOutline, withoutDest), alone with the files it uses (helpers.js, tool_capture.js,
// tool_helpers.js, tool_names.js). The walk over a page is tested by agent_tools_harness.js.
'use strict';

const assert = require('assert');
const { load, test, done } = require('./load.js');

const a = load(['helpers.js', 'tool_capture.js', 'tool_helpers.js', 'tool_names.js', 'tool_outline.js'],
  ['newOutline', 'pushLine', 'finishOutline', 'withoutDest', 'isTextLine', 'isElementLine', 'indentOf', 'indent']);

const NOTE = '\u2026 ';

// outline collects lines into an outline of budget (not live: no page is measured) and finishes it.
function outline(budget, lines) {
  const o = a.newOutline('visible', budget, false, 'https://shop.test/');
  for (const l of lines) {
    a.pushLine(o, l, a.isElementLine(l));
  }
  const r = a.finishOutline(o);
  return { outline: r.outline, truncated: r.truncated, refs: r.refs };
}

test('line kinds: text lines are quoted, element lines start with a role', () => {
  assert.strictEqual(a.indentOf('   x'), 3);
  assert.strictEqual(a.indent(2), '  ');
  assert.strictEqual(a.isTextLine('  "hello"'), true);
  assert.strictEqual(a.isTextLine('  button "OK" [e1]'), false);
  assert.strictEqual(a.isElementLine('  button "OK" [e1]'), true);
  assert.strictEqual(a.isElementLine('# page'), false);
  assert.strictEqual(a.isElementLine(NOTE + '(truncated)'), false);
});

test('withoutDest drops a link line\'s destination, keeping its name and ref', () => {
  const cases = [
    [' link "Home" -> /home [e1]', ' link "Home" [e1]'],
    [' link "Home" -> /home', ' link "Home"'],
    ['link "a -> b" -> /x [e2]', 'link "a -> b" [e2]'],
    [' link "Home" [e1]', ' link "Home" [e1]'],
    [' button "a -> b" [e3]', ' button "a -> b" [e3]'],
  ];
  for (const [line, want] of cases) {
    assert.strictEqual(a.withoutDest(line), want, 'withoutDest(' + line + ')');
  }
});

test('an outline within the budget is the lines, with refs counted', () => {
  const lines = ['main', ' heading "Shop" [e1]', ' "Welcome"', ' link "Cart" -> /cart [e2]'];
  assert.deepStrictEqual(outline(3000, lines), { outline: lines.join('\n'), truncated: false, refs: 2 });
});

test('over the budget, text goes first, from the end, then link destinations, then the rest is cut', () => {
  const text = ' "' + 'x'.repeat(40) + '"';
  assert.deepStrictEqual(outline(60, ['main', ' link "Home" -> /home [e1]', text]), {
    outline: 'main\n link "Home" -> /home [e1]\n' + NOTE + '(some text left out to fit the budget; capture_page has the page\'s text)',
    truncated: true, refs: 1,
  });
  assert.deepStrictEqual(outline(30, ['main', ' link "Home" -> /home [e1]']), {
    outline: 'main\n link "Home" [e1]\n' + NOTE + '(link destinations left out to fit the budget; query by ref gives the href)',
    truncated: true, refs: 1,
  });
  assert.deepStrictEqual(outline(30, ['main', ' link "Home" -> /home [e1]', text]), {
    outline: 'main\n link "Home" [e1]\n' + NOTE + '(text and link destinations left out to fit the budget; capture_page has the text, query the hrefs)',
    truncated: true, refs: 1,
  });
  assert.deepStrictEqual(outline(20, ['main', ' button "A" [e1]', ' button "B" [e2]', ' button "C" [e3]']), {
    outline: 'main\n' + NOTE + '(truncated: 3 more elements; use ref= or filter= to see more)',
    truncated: true, refs: 0,
  });
});

test('the walk stops at four budgets, counting the elements it left out', () => {
  const lines = [];
  for (let i = 0; i < 10; i++) {
    lines.push(' button "' + i + '" [e' + i + ']'); // 17 characters and a newline each
  }
  const r = outline(20, lines);
  assert.strictEqual(r.outline, lines[0] + '\n' + NOTE + '(truncated: 9 more elements; use ref= or filter= to see more)');
  assert.strictEqual(r.truncated, true);
});

done();
