// ---- Small helpers over the captures. -------------------------------------------------------

function on(target, type, fn, capture) {
  apply(addEventListener, target, [type, fn, capture === true]);
}
function dict() {
  return create(null);
}
// allowed is a null-prototype set of names: allowed(['a', 'b']).a === true; allowed(names, more)
// holds the names of both lists.
function allowed(namesList, more) {
  var d = dict();
  var i;
  for (i = 0; i < namesList.length; i++) {
    d[namesList[i]] = true;
  }
  for (i = 0; more && i < more.length; i++) {
    d[more[i]] = true;
  }
  return d;
}
function own(obj, key) {
  return apply(hasOwnProperty, obj, [key]) ? obj[key] : undefined;
}
function later(fn, ms) {
  return apply(setTimeoutFn, win, [fn, ms]);
}
function cancel(id) {
  if (id) {
    apply(clearTimeoutFn, win, [id]);
  }
}

// How long after DOMContentLoaded afterLoad's work runs on a page whose load event has not come
// (a subresource that never ends), and the latest it runs after the agent starts on a page that
// is never even parsed (a document that streams forever).
var AFTER_LOAD_LATE_MS = 1000;
var AFTER_LOAD_MAX_MS = 5000;

// afterLoad runs fn once: in a task after the load event, so that neither DOMContentLoaded nor
// load waits for it; AFTER_LOAD_LATE_MS after DOMContentLoaded, or AFTER_LOAD_MAX_MS after the
// first call, when the load does not come; at once on a page that has loaded already. The work
// the page agent can leave until the page has loaded (the launcher, and the socket where it need
// not connect at once) goes here, off the person's wait for the page. All of it shares one set of
// listeners and timers, and each function runs in a task of its own, in the order given.
var afterLoadQueue = null; // the functions waiting for the load; null before the first call
var afterLoadDone = false;
var afterLoadLate = 0;
var afterLoadMax = 0;

function afterLoad(fn) {
  if (afterLoadDone) {
    fn();
    return;
  }
  if (afterLoadQueue === null) {
    var rs = apply(readyState, doc, []);
    if (rs === 'complete') {
      fn();
      return;
    }
    afterLoadQueue = [];
    on(win, 'load', function () {
      later(flushAfterLoad, 0);
    }, true);
    if (rs === 'loading') {
      on(win, 'DOMContentLoaded', function () {
        afterLoadLate = later(flushAfterLoad, AFTER_LOAD_LATE_MS);
      }, true);
      afterLoadMax = later(flushAfterLoad, AFTER_LOAD_MAX_MS);
    } else {
      afterLoadLate = later(flushAfterLoad, AFTER_LOAD_LATE_MS);
    }
  }
  afterLoadQueue[afterLoadQueue.length] = fn;
}

function flushAfterLoad() {
  cancel(afterLoadLate);
  cancel(afterLoadMax);
  if (afterLoadDone) {
    return;
  }
  afterLoadDone = true;
  var q = afterLoadQueue;
  afterLoadQueue = null;
  var i;
  for (i = 0; i < q.length; i++) {
    later(q[i], 0);
  }
}
function warn(text) {
  if (consoleWarn) {
    try {
      apply(consoleWarn, consoleObj, ['remixproxy: ' + text]);
    } catch (e) { /* console replaced by something that throws */ }
  }
}
function href() {
  return '' + apply(locationHref, loc, []);
}
function title() {
  try {
    return '' + apply(documentTitle, doc, []);
  } catch (e) {
    return '';
  }
}
function el(tag) {
  return apply(createElement, doc, [tag]);
}
function attr(node, name, value) {
  apply(setAttribute, node, [name, value]);
}
function unattr(node, name) {
  apply(removeAttribute, node, [name]);
}
function text(node, value) {
  apply(setTextContent, node, [value]);
}

var REFUSAL = dict();  // marks the objects refuse() throws

function refuse(why) {
  var r = dict();
  r.mark = REFUSAL;
  r.why = why;
  throw r;
}
function lower(s) {
  return apply(strLower, s, []);
}
function contains(s, part) {
  return apply(strIndexOf, s, [part]) >= 0;
}
function attrOf(node, name) {
  return apply(getAttribute, node, [name]);
}
// targetOf is the target a link, an area or a form acts in, as the browser reads it (HTML, "get
// an element's target"): its own target attribute, even empty, or, when it has none, that of
// the first <base target> of its document d; null when neither says. A check of the attribute
// alone misses a page that sends every link and form elsewhere with one <base target>.
function targetOf(el, d) {
  var own = attrOf(el, 'target');
  if (own !== null) {
    return own;
  }
  try {
    var bases = apply(querySelectorAllDoc, d, ['base[target]']);
    return apply(nodeListLength, bases, []) > 0 ? attrOf(apply(nodeListItem, bases, [0]), 'target') : null;
  } catch (e) {
    return null;
  }
}
// otherTarget reports whether target tg (from targetOf, or a formtarget) is another window or
// frame than this one.
function otherTarget(tg) {
  return typeof tg === 'string' && tg !== '' && lower(tg) !== '_self';
}
function localName(node) {
  try {
    return localNameOf ? '' + apply(localNameOf, node, []) : '';
  } catch (e) {
    return '';
  }
}
// list returns an empty array without a prototype, and put fills it, so neither the page's
// Array.prototype setters nor a toJSON it adds see our results.
function list() {
  var a = [];
  setPrototypeOf(a, null);
  return a;
}
function put(a, i, v) {
  var d = dict();
  d.value = v;
  d.writable = true;
  d.enumerable = true;
  d.configurable = true;
  defineProperty(a, i, d);
}

function parentOf(node) {
  return parentNodeOf ? apply(parentNodeOf, node, []) : null;
}
function firstChild(node) {
  return apply(firstChildOf, node, []);
}
function nextSibling(node) {
  return apply(nextSiblingOf, node, []);
}
function nodeType(node) {
  return apply(nodeTypeOf, node, []);
}
