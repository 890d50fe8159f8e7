// Unit tests of pageagent/person_nav.js, the reports of the person's own clicks for the agent's
// navigation guard (proxy/chat/navguard_person.go), alone with the files it uses. The stub adds
// a socket that records what is sent, events with isTrusted and a composed path, and the getters
// the reports read (a link's href, a submitter's formAction, an input's form, a form's action).
'use strict';

const assert = require('assert');
const { test, done, personLoad } = require('./load.js');

const { a, event, sent } = personLoad(['person_nav.js'],
  ['onPersonClick', 'onPersonEnter', 'personWindowOpen', 'onPersonNavigate', 'onPersonFrameLoad', 'personWatchFrames', 'agentAssign', 'agentActs'], 'https://blog.test/continue?to=x', `(function () {
  const g = globalThis;
  const abs = (v) => new URL(v || '', location.href).href;
  g.timers = [];
  g.setTimeout = (fn) => { g.timers.push(fn); return g.timers.length; };
  g.clearTimeout = () => {};
  Object.defineProperty(Node.prototype, 'nodeType', { get() { return this._nt || 1; } });
  class HTMLElement extends Element {}
  class HTMLAnchorElement extends HTMLElement { get href() { return abs(this.getAttribute('href')); } }
  class HTMLAreaElement extends HTMLElement { get href() { return abs(this.getAttribute('href')); } }
  class HTMLButtonElement extends HTMLElement { get formAction() { return abs(this.getAttribute('formaction') || (this._form && this._form.getAttribute('action'))); } get form() { return this._form || null; } }
  class HTMLInputElement extends HTMLElement { get formAction() { return abs(this.getAttribute('formaction') || (this._form && this._form.getAttribute('action'))); } get form() { return this._form || null; } }
  class HTMLFormElement extends HTMLElement { get action() { return abs(this.getAttribute('action')); } }
  Object.defineProperty(Event.prototype, 'target', { get() { return this._target; }, configurable: true });
  EventTarget.prototype.addEventListener = function (type, fn, capture) { (this._listeners = this._listeners || []).push(type + (capture ? ' capture' : '')); };
  Object.assign(g, { HTMLElement, HTMLAnchorElement, HTMLAreaElement, HTMLButtonElement, HTMLInputElement, HTMLFormElement });
  g.opened = [];
  g.open = function (u) { g.opened.push(String(u)); return null; };
  class NavigationDestination { get url() { return this._url; } }
  class NavigateEvent extends Event { get destination() { return this._dest; } }
  Object.assign(g, { NavigationDestination, NavigateEvent });
  class HTMLIFrameElement extends HTMLElement { get contentDocument() { return this._doc || null; } get contentWindow() { return this._win || null; } }
  g.HTMLIFrameElement = HTMLIFrameElement;
  Document.prototype.querySelectorAll = function (sel) { return new NodeList(sel === 'iframe' ? (this._iframes || []) : []); };
  g.assigned = [];
  location.assign = function (u) { g.assigned.push(String(u)); if (g.onAssign) { g.onAssign(String(u)); } };
})();`);

// el makes a stub element of the class named (HTMLElement for a bare tag name such as 'span').
function el(ctor, attrs) {
  const tags = { HTMLAnchorElement: 'a', HTMLButtonElement: 'button', HTMLInputElement: 'input', HTMLFormElement: 'form' };
  if (!tags[ctor]) {
    return new a.ctx.HTMLElement(a.ns.html, ctor, attrs || {});
  }
  return new a.ctx[ctor](a.ns.html, tags[ctor], attrs || {});
}
function reports() {
  return sent().map((m) => m.type + ' ' + m.url + (m.form ? ' form' : ''));
}

test('a trusted click inside a link reports the link as the browser resolves it', () => {
  const link = el('HTMLAnchorElement', { href: '/out?to=1' });
  a.onPersonClick(event([el('span'), link], true));
  assert.deepStrictEqual(reports(), ['person https://blog.test/out?to=1']);
});

test('a synthetic click reports nothing', () => {
  a.onPersonClick(event([el('HTMLAnchorElement', { href: 'https://witness.test/' })], false));
  assert.deepStrictEqual(reports(), []);
});

test('a click on the page, not on a link or a submitter, reports nothing', () => {
  a.onPersonClick(event([el('span'), el('span')], true));
  a.onPersonClick(event([el('HTMLButtonElement', { type: 'button' })], true));
  a.onPersonClick(event([el('HTMLAnchorElement', {})], true)); // no href: not a link
  const svgLink = new a.ctx.HTMLAnchorElement(a.ns.svg, 'a', { href: 'https://witness.test/' });
  a.onPersonClick(event([svgLink], true));
  assert.deepStrictEqual(reports(), []);
});

test('a submitter reports where its form goes', () => {
  const form = el('HTMLFormElement', { action: 'https://search.test/s?x=1' });
  const button = el('HTMLButtonElement', {});
  button._form = form;
  a.onPersonClick(event([button, form], true));
  const image = el('HTMLInputElement', { type: 'image', formaction: '/alt' });
  image._form = form;
  a.onPersonClick(event([image, form], true));
  assert.deepStrictEqual(reports(), ['person https://search.test/s?x=1 form', 'person https://blog.test/alt form']);
});

test("a link whose href the page's handler changes during the click is reported again", () => {
  const link = el('HTMLAnchorElement', { href: '/first' });
  a.onPersonClick(event([link], true));
  link._attrs.href = 'https://witness.test/second';
  a.ctx.timers.splice(0).forEach((fn) => fn());
  assert.deepStrictEqual(reports(), ['person https://blog.test/first', 'person https://witness.test/second']);
});

test("Enter in a form's field reports the form; other keys and other targets nothing", () => {
  const form = el('HTMLFormElement', { action: '/search' });
  const input = el('HTMLInputElement', { type: 'text' });
  input._form = form;
  a.onPersonEnter(event([input, form], true, 'Enter'));
  a.onPersonEnter(event([input, form], true, 'a'));
  a.onPersonEnter(event([input, form], false, 'Enter'));
  a.onPersonEnter(event([el('span')], true, 'Enter'));
  assert.deepStrictEqual(reports(), ['person https://blog.test/search form']);
});

function navigateTo(url) {
  const ev = new a.ctx.NavigateEvent();
  ev._dest = new a.ctx.NavigationDestination();
  ev._dest._url = url;
  a.onPersonNavigate(ev);
}
function nextTask() {
  a.ctx.timers.splice(0).forEach((fn) => fn());
}

test("a trusted click on a button reports the window its handler opens, until the next task", () => {
  a.onPersonClick(event([el('span'), el('HTMLButtonElement', { type: 'button' })], true));
  assert.strictEqual(a.personWindowOpen('https://witness.test/oauth?client=1'), null);
  assert.deepStrictEqual(reports(), ['person https://witness.test/oauth?client=1']);
  nextTask();
  a.personWindowOpen('https://witness.test/later');
  assert.deepStrictEqual(reports(), []);
  assert.deepStrictEqual(Array.from(a.ctx.opened.splice(0)), ['https://witness.test/oauth?client=1', 'https://witness.test/later']);
});

test("a trusted click on a role=button reports where its handler sends the tab", () => {
  a.onPersonClick(event([el('div', { role: 'Button' })], true));
  navigateTo('https://witness.test/sso?x=1');
  a.personWindowOpen('/popup');
  nextTask();
  navigateTo('https://witness.test/after');
  assert.deepStrictEqual(reports(), ['person https://witness.test/sso?x=1', 'person https://blog.test/popup']);
});

test("the page agent's own navigation during a button's click is not the person's", () => {
  // The navigate tool assigns location on a timer; a person's button click a moment before
  // leaves personButtonClick set until the next task, and the navigate event fires inside assign.
  a.onPersonClick(event([el('HTMLButtonElement', { type: 'button' })], true));
  a.ctx.onAssign = navigateTo;
  try {
    a.agentAssign('https://blog.test/viewer?doc=https://witness.test/i');
  } finally {
    a.ctx.onAssign = null;
  }
  nextTask();
  assert.deepStrictEqual(reports(), []);
  assert.deepStrictEqual(Array.from(a.ctx.assigned.splice(0)), ['https://blog.test/viewer?doc=https://witness.test/i']);
});

test("what a handler opens inside the agent's own dispatch is not the person's", () => {
  // The act tool's click a moment after a person's button click (personButtonClick still set):
  // the handler's window.open and its navigation run inside agentActs.
  a.onPersonClick(event([el('HTMLButtonElement', { type: 'button' })], true));
  a.agentActs(function () {
    a.personWindowOpen('https://witness.test/oauth?d=agent');
    navigateTo('https://witness.test/sso?d=agent');
  }, null, []);
  nextTask();
  assert.deepStrictEqual(reports(), []);
  a.ctx.opened.length = 0;
});

test("a synthetic click on a button reports nothing its handler opens", () => {
  a.onPersonClick(event([el('HTMLButtonElement', { type: 'button' })], false));
  a.personWindowOpen('https://witness.test/oauth');
  navigateTo('https://witness.test/sso');
  nextTask();
  assert.deepStrictEqual(reports(), []);
  a.ctx.opened.length = 0;
});

test("a click on the page's text or on a link reports nothing a handler opens instead", () => {
  a.onPersonClick(event([el('p')], true));
  a.personWindowOpen('https://witness.test/c?d=1');
  navigateTo('https://witness.test/c?d=2');
  a.onPersonClick(event([el('span'), el('HTMLAnchorElement', { href: '/mine' })], true)); // the link's href is reported, not what a handler does
  a.personWindowOpen('https://witness.test/c?d=3');
  nextTask();
  assert.deepStrictEqual(reports(), ['person https://blog.test/mine']);
  a.ctx.opened.length = 0;
});

test("a frame of the page's origin gets the listeners when it loads; another origin's does not", () => {
  const listening = (t) => () => Array.from(t._listeners || []);
  const same = new a.ctx.HTMLIFrameElement(a.ns.html, 'iframe', {});
  same._win = new a.ctx.EventTarget();
  same._doc = new a.ctx.EventTarget();
  const onWin = listening(same._win);
  const onDoc = listening(same._doc);
  const other = new a.ctx.HTMLIFrameElement(a.ns.html, 'iframe', {});
  other._win = new a.ctx.EventTarget(); // another origin: contentDocument is null
  const onOther = listening(other._win);
  const img = new a.ctx.HTMLElement(a.ns.html, 'img', {});
  for (const t of [same, other, img]) {
    const ev = new a.ctx.Event();
    ev._target = t;
    a.onPersonFrameLoad(ev);
  }
  assert.deepStrictEqual(onWin(), ['click capture', 'auxclick capture', 'keydown capture']);
  assert.deepStrictEqual(onDoc(), ['load capture']);
  assert.deepStrictEqual(onOther(), []);
});

test('the frames already in a document are hooked with it, and theirs in turn (the page\'s own, in the task after its load)', () => {
  const listening = (t) => Array.from(t._listeners || []);
  const frameWith = (doc) => {
    const f = new a.ctx.HTMLIFrameElement(a.ns.html, 'iframe', {});
    f._win = new a.ctx.EventTarget();
    f._doc = doc;
    return f;
  };
  const innerDoc = new a.ctx.Document();
  const inner = frameWith(innerDoc);
  const outerDoc = new a.ctx.Document();
  outerDoc._iframes = [inner];
  const outer = frameWith(outerDoc);
  const other = new a.ctx.HTMLIFrameElement(a.ns.html, 'iframe', {});
  other._win = new a.ctx.EventTarget(); // another origin's
  const pageDoc = new a.ctx.Document();
  pageDoc._iframes = [outer, other];
  a.personWatchFrames(pageDoc);
  assert.deepStrictEqual(listening(pageDoc), ['load capture']);
  for (const f of [outer, inner]) {
    assert.deepStrictEqual(listening(f._win), ['click capture', 'auxclick capture', 'keydown capture']);
    assert.deepStrictEqual(listening(f._doc), ['load capture']);
  }
  assert.deepStrictEqual(listening(other._win), []);
});

done();
