// Shared loader of the unit tests of single page agent files (the *_test.js files here; run by
// TestPageAgentPartUnits in panel/pageagent_test.go, or by hand: node testdata/pageagent/X_test.js).
//
// load(files, names, href, setup) joins prologue.js, capture.js and the files given (the file
// under test and the few it needs), in that order, into one strict closure as panel/pageagent.go
// does, runs it in a fresh vm context with a stub browser on page href (after the script setup,
// if any), and returns the values of the names: functions, or a variable's value at the end of
// the start-up. A name written "x=" returns a setter of the closure's variable x instead.
// start.js never runs unless given, so nothing starts: no socket, no listeners, no launcher; and
// the stub's document has no current script (stubScript), so the prologue finds no token.
//
// The stub browser has only what the captures read at start-up and what the tested functions
// call: classes EventTarget, Node, Element (namespace, local name and attributes given at
// construction), Document (its cookie set with setCookie) and NodeList, a location with href and
// protocol, and node's WHATWG URL.
// Behaviour in a whole (fake) page is tested by agent_harness.js and agent_tools_harness.js,
// and in Chromium by the e2e suite.
'use strict';

const vm = require('vm');
const fs = require('fs');
const path = require('path');

const DIR = path.join(__dirname, '..', '..', 'pageagent');

// stubBrowser runs inside the vm context (serialised with toString).
function stubBrowser(href) {
  const g = globalThis;
  g.window = g;
  class EventTarget {
    addEventListener() {}
    removeEventListener() {}
  }
  class Node extends EventTarget {
    get isConnected() { return true; }
  }
  class Element extends Node {
    constructor(ns, localName, attrs) {
      super();
      this._ns = ns;
      this._ln = localName;
      this._attrs = attrs || {};
    }
    get namespaceURI() { return this._ns; }
    get localName() { return this._ln; }
    getAttribute(name) { return Object.prototype.hasOwnProperty.call(this._attrs, name) ? this._attrs[name] : null; }
    hasAttribute(name) { return Object.prototype.hasOwnProperty.call(this._attrs, name); }
    querySelectorAll() { return new NodeList([]); }
  }
  class NodeList {
    constructor(items) { this._items = items; }
    get length() { return this._items.length; }
    item(i) { return i < this._items.length ? this._items[i] : null; }
  }
  class Document extends Node {
    get currentScript() { return g.stubScript; }
    get cookie() { return g.stubCookie; }
    querySelectorAll() { return new NodeList([]); }
  }
  class Event {}
  Object.assign(g, { EventTarget, Node, Element, NodeList, Document, Event });
  g.document = new Document();
  g.stubCookie = '';
  g.stubScript = null;
  const loc = {};
  Object.defineProperty(loc, 'href', { get() { return href; } });
  Object.defineProperty(loc, 'protocol', { get() { return new g.URL(href).protocol; } });
  g.location = loc;
  g.HTML_NS = 'http://www.w3.org/1999/xhtml';
  g.SVG_NS = 'http://www.w3.org/2000/svg';
  g.MATHML_NS = 'http://www.w3.org/1998/Math/MathML';
}

function load(files, names, href, setup) {
  const ctx = vm.createContext({ URL });
  vm.runInContext('(' + stubBrowser.toString() + ')(' + JSON.stringify(href || 'https://shop.test/') + ')', ctx);
  if (setup) {
    vm.runInContext(setup, ctx);
  }
  let src = "(function () {\n'use strict';\n";
  for (const f of ['prologue.js', 'capture.js'].concat(files)) {
    src += fs.readFileSync(path.join(DIR, f), 'utf8') + '\n';
  }
  src += 'return {\n' + names.map((n) => n.endsWith('=')
    ? JSON.stringify(n) + ': function (v) { ' + n.slice(0, -1) + ' = v; }'
    : JSON.stringify(n) + ': ' + n).join(',\n') + '\n};\n})()';
  const agent = vm.runInContext(src, ctx, { filename: files.join('+') });
  // el makes a stub element: el('div'), el('a', SVG), el('input', HTML, {type: 'image'}).
  agent.el = (ln, ns, attrs) => new ctx.Element(ns || ctx.HTML_NS, ln, attrs);
  agent.ns = { html: ctx.HTML_NS, svg: ctx.SVG_NS, mathml: ctx.MATHML_NS };
  // setCookie sets what document.cookie reads.
  agent.setCookie = (s) => { ctx.stubCookie = s; };
  agent.ctx = ctx;
  return agent;
}

// personStubs is the setup personLoad runs first for the tests of the person's own input: a socket
// whose sends are recorded in sent, events whose composedPath is their _path, and a
// KeyboardEvent whose key is its _key. A test's own setup may follow it.
const personStubs = `(function () {
  const g = globalThis;
  g.sent = [];
  class WebSocket { get readyState() { return 1; } send(s) { g.sent.push(JSON.parse(s)); } close() {} }
  Event.prototype.composedPath = function () { return this._path; };
  class KeyboardEvent extends Event { get key() { return this._key; } }
  Object.assign(g, { WebSocket, KeyboardEvent });
})();
`;

// personEvent makes an event of an agent loaded after personStubs: a KeyboardEvent when key is
// given, trusted or not, whose composed path is path then the document and the window.
function personEvent(agent, path, trusted, key) {
  const ev = key === undefined ? new agent.ctx.Event() : new agent.ctx.KeyboardEvent();
  Object.defineProperty(ev, 'isTrusted', { value: trusted });
  ev._path = path.concat([agent.ctx.document, agent.ctx]);
  ev._key = key;
  return ev;
}

// PERSON_FILES are the files the page agent's reports of the person's input need before their
// own: the socket (channel.js) and the checks the reports use.
const PERSON_FILES = ['helpers.js', 'channel.js', 'rx_run.js', 'rx_handles.js', 'rx_policy.js', 'tool_capture.js', 'tool_helpers.js'];

// personLoad is load for the tests of the person's own input: PERSON_FILES then files, with the
// names and the closure's socket, on page href, setup run after personStubs. The agent gets the
// stub socket. It returns the agent a, event (personEvent for a) and sent (the messages a sent
// since the last call).
function personLoad(files, names, href, setup) {
  const a = load(PERSON_FILES.concat(files), names.concat(['sock=']), href, personStubs + setup);
  a['sock='](new a.ctx.WebSocket());
  return {
    a,
    event: (path, trusted, key) => personEvent(a, path, trusted, key),
    sent: () => {
      const got = Array.from(a.ctx.sent);
      a.ctx.sent.length = 0;
      return got;
    },
  };
}

let count = 0;
let failures = 0;

// test runs one named case.
function test(name, fn) {
  count++;
  try {
    fn();
    console.log('ok   ' + name);
  } catch (e) {
    failures++;
    console.log('FAIL ' + name + '\n' + (e && e.stack ? e.stack : e));
  }
}

// refusal returns the reason fn was refused for (the page agent's refuse()); it fails when fn
// returns, or throws anything else.
function refusal(fn) {
  let v;
  try {
    v = fn();
  } catch (e) {
    if (e !== null && typeof e === 'object' && typeof e.why === 'string') {
      return e.why;
    }
    throw e;
  }
  throw new Error('not refused; got ' + JSON.stringify(v));
}

// plain copies an array (or a null-prototype list of the page agent) into a plain array.
function plain(list) {
  const out = [];
  for (let i = 0; i < list.length; i++) {
    out.push(list[i]);
  }
  return out;
}

// done ends the run: exit status 1 when a case failed.
function done() {
  if (failures > 0) {
    console.log(failures + ' of ' + count + ' failed');
    process.exit(1);
  }
  console.log('all ' + count + ' passed');
}

module.exports = { load, test, refusal, plain, done, personLoad };
