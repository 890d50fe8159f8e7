// Unit tests of pageagent/rx_click.js, the check of a remixlet's dom.click, alone with the files
// it uses (helpers.js, rx_run.js, rx_handles.js, rx_policy.js, rx_addresses.js). The stub adds a
// tree (parentNode, nodeType, assignedSlot, shadow roots' host) and the getters the check reads
// (a link's href, a button's form, a form's action, a label's control).
'use strict';

const assert = require('assert');
const { load, test, refusal, done } = require('./load.js');

const setup = `(function () {
  const g = globalThis;
  const abs = (el, name) => new URL(el.getAttribute(name) || '', location.href).href;
  Object.defineProperty(Node.prototype, 'nodeType', { get() { return this._nt || 1; } });
  Object.defineProperty(Node.prototype, 'parentNode', { get() { return this._parent || null; } });
  Object.defineProperty(Element.prototype, 'assignedSlot', { get() { return this._slot || null; } });
  class ShadowRoot extends Node { constructor(h) { super(); this._nt = 11; this._host = h; } get host() { return this._host; } }
  class HTMLElement extends Element { click() { g.clicked = this; } }
  class HTMLAnchorElement extends HTMLElement { get href() { return abs(this, 'href'); } }
  class HTMLAreaElement extends HTMLElement { get href() { return abs(this, 'href'); } }
  class HTMLButtonElement extends HTMLElement { get form() { return this._form || null; } }
  class HTMLInputElement extends HTMLElement { get form() { return this._form || null; } }
  class HTMLFormElement extends HTMLElement { get action() { return abs(this, 'action'); } }
  class HTMLLabelElement extends HTMLElement { get control() { return this._control || null; } }
  // The document's <base target> elements: what querySelectorAll('base[target]') finds.
  g.stubBases = [];
  Document.prototype.querySelectorAll = function (sel) { return new NodeList(sel === 'base[target]' ? g.stubBases : []); };
  Object.assign(g, { ShadowRoot, HTMLElement, HTMLAnchorElement, HTMLAreaElement, HTMLButtonElement,
    HTMLInputElement, HTMLFormElement, HTMLLabelElement });
})();`;

const a = load(['helpers.js', 'rx_run.js', 'rx_handles.js', 'rx_policy.js', 'rx_addresses.js', 'rx_click.js'],
  ['checkClick'], 'https://shop.test/page', setup);

// build makes elements from [tag, attrs, ...children], each linked to its parent, and returns
// them by id (the top one as root).
function build(spec) {
  const byId = {};
  const walk = (s, parent) => {
    const [tag, attrs, ...children] = s;
    const el = a.el(tag, a.ns.html, attrs || {});
    el._parent = parent;
    if (attrs && attrs.id) {
      byId[attrs.id] = el;
    }
    for (const c of children) {
      walk(c, el);
    }
    return el;
  };
  byId.root = walk(spec, null);
  return byId;
}

test('a click is judged by every element it would activate on the way up, not only the nearest', () => {
  const cases = [
    ['a type=button button inside a link to another site',
      ['a', { href: 'https://witness.test/x' }, ['button', { id: 't', type: 'button' }]], /the link goes to https:\/\/witness.test\/x/],
    ['a label inside a link to another site',
      ['a', { href: 'https://witness.test/l' }, ['label', { id: 't' }]], /the link goes to https:\/\/witness.test\/l/],
    ['a checkbox inside a link to another site',
      ['a', { href: '//witness.test/c' }, ['input', { id: 't', type: 'checkbox' }]], /the link goes to https:\/\/witness.test\/c/],
    ['a span inside a button inside a link with ping',
      ['a', { href: '/ok', ping: '/p' }, ['button', { type: 'button' }, ['span', { id: 't' }]]], /pings other addresses/],
    ['a link on the page\'s origin inside another site\'s link',
      ['a', { href: 'https://witness.test/outer' }, ['a', { id: 't', href: '/inner' }]], /witness.test\/outer/],
  ];
  for (const [name, spec, want] of cases) {
    const t = build(spec).t;
    assert.match(refusal(() => a.checkClick(t, 0)), want, name);
  }
});

test('a button nested in another site\'s submit button is refused; the page\'s own is not', () => {
  const away = build(['form', { action: 'https://witness.test/search' }, ['button', { id: 'outer' }, ['button', { id: 't', type: 'button' }]]]);
  away.outer._form = away.root;
  assert.match(refusal(() => a.checkClick(away.t, 0)), /the form is sent to https:\/\/witness.test\/search/);
  const home = build(['form', { action: '/search' }, ['button', { id: 'outer' }, ['button', { id: 't', type: 'button' }]]]);
  home.outer._form = home.root;
  assert.strictEqual(a.checkClick(home.t, 0), undefined);
});

test('a label\'s control is judged with its own ancestors', () => {
  const f = build(['form', { action: 'https://witness.test/s2' }, ['button', { id: 'outer' }, ['button', { id: 'inner', type: 'button' }]]]);
  f.outer._form = f.root;
  const label = a.el('label', a.ns.html, { for: 'inner' });
  label._control = f.inner;
  assert.match(refusal(() => a.checkClick(label, 0)), /the form is sent to https:\/\/witness.test\/s2/);
});

test('the way up goes through open shadow roots to their hosts, and from a slotted element to its slot', () => {
  const outer = build(['a', { href: 'https://witness.test/shadow' }, ['div', { id: 'host' }]]);
  const root = new a.ctx.ShadowRoot(outer.host);
  const inside = a.el('span', a.ns.html, {});
  inside._parent = root;
  assert.match(refusal(() => a.checkClick(inside, 0)), /witness.test\/shadow/, 'through the shadow root');

  const slotted = build(['a', { href: 'https://witness.test/slot' }, ['slot', { id: 'slot' }]]);
  const light = a.el('span', a.ns.html, {});
  light._parent = a.el('div', a.ns.html, {});
  light._slot = slotted.slot;
  assert.match(refusal(() => a.checkClick(light, 0)), /witness.test\/slot/, 'through the slot');
});

test('clicks that stay on the page\'s origin pass', () => {
  const cases = [
    ['a', { href: '/next' }, ['button', { id: 't', type: 'button' }]],
    ['div', {}, ['label', {}, ['span', { id: 't' }]]],
    ['form', { action: 'https://witness.test/f' }, ['input', { id: 't', type: 'text' }]], // focusing a field submits nothing
  ];
  for (const spec of cases) {
    assert.strictEqual(a.checkClick(build(spec).t, 0), undefined, JSON.stringify(spec));
  }
});

test('a checkbox or radio of a form sent to another site is not clicked: its state is sent', () => {
  for (const type of ['checkbox', 'radio']) {
    const f = build(['form', { action: 'https://witness.test/f' }, ['div', {}, ['input', { id: 't', type }]]]);
    f.t._form = f.root;
    assert.match(refusal(() => a.checkClick(f.t, 0)), /belongs to a form that is sent to https:\/\/witness.test\/f/, type);
    const h = build(['form', { action: '/f' }, ['input', { id: 't', type }]]);
    h.t._form = h.root;
    assert.strictEqual(a.checkClick(h.t, 0), undefined, type + ' of the page\'s own form');
  }
});

test('a page\'s <base target> counts where a link or form has no target of its own', () => {
  a.ctx.stubBases = [a.el('base', a.ns.html, { target: '_blank' })];
  try {
    assert.match(refusal(() => a.checkClick(build(['a', { id: 't', href: '/next' }]).t, 0)),
      /the a opens in target "_blank" \(the page's <base target>\)/, 'a link');
    const f = build(['form', { action: '/search' }, ['button', { id: 't' }]]);
    f.t._form = f.root;
    assert.match(refusal(() => a.checkClick(f.t, 0)), /the form opens in target "_blank" \(the page's <base target>\)/, 'a form');
    // The element's own target, even empty, is the one the browser uses.
    for (const own of ['', '_self']) {
      assert.strictEqual(a.checkClick(build(['a', { id: 't', href: '/next', target: own }]).t, 0), undefined, 'target="' + own + '"');
    }
  } finally {
    a.ctx.stubBases = [];
  }
  assert.strictEqual(a.checkClick(build(['a', { id: 't', href: '/next' }]).t, 0), undefined, 'no <base target>');
});

test('a tree deeper than the check walks is refused, not let through', () => {
  let top = a.el('a', a.ns.html, { href: 'https://witness.test/deep' });
  let n = top;
  for (let i = 0; i < 600; i++) {
    const c = a.el('div', a.ns.html, {});
    c._parent = n;
    n = c;
  }
  assert.match(refusal(() => a.checkClick(n, 0)), /nested too deep/);
});

done();
