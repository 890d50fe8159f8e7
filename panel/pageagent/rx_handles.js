// Remixlet handles and marks: each remixlet has a table of its own, number -> element, and
// acts only on the elements it obtained (dom.query, dom.queryAll, dom.create, dom.clone).

var MARK_PREFIX = 'data-remixlet-';
var MAX_RESULTS = 5000;
var PRUNE_AT = 2000;
var tables = null;     // remixlet ID -> handle table, made on the first operation

// shortID checks a remixlet ID ("rx_" and 32 lowercase hex digits) and returns the 8 digits
// that name its mark.
function shortID(rx) {
  if (typeof rx !== 'string' || rx.length !== 35 || apply(strSlice, rx, [0, 3]) !== 'rx_') {
    return '';
  }
  var i;
  for (i = 3; i < 35; i++) {
    var c = apply(charCodeAt, rx, [i]);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) {
      return '';
    }
  }
  return apply(strSlice, rx, [3, 11]);
}

function tableFor(rx) {
  if (!tables) {
    tables = new MapCtor();
  }
  var t = apply(mapGet, tables, [rx]);
  if (!t) {
    t = dict();
    t.rx = rx;
    t.byId = new MapCtor();
    t.byEl = new WeakMapCtor();
    t.next = 1;
    t.listeners = 0;
    t.on = list(); // {node, type, fn} of its dom.on listeners, removed on release
    t.mark = MARK_PREFIX + shortID(rx);
    apply(mapSet, tables, [rx, t]);
  }
  return t;
}
function handleFor(t, node) {
  var id = apply(weakGet, t.byEl, [node]);
  if (!id) {
    id = t.next;
    t.next = t.next + 1;
    apply(weakSet, t.byEl, [node, id]);
  }
  apply(mapSet, t.byId, [id, node]);
  var h = dict();
  h.$h = id;
  return h;
}
function element(t, h) {
  var id = h !== null && typeof h === 'object' ? own(h, '$h') : undefined;
  var node = typeof id === 'number' ? apply(mapGet, t.byId, [id]) : undefined;
  if (!node) {
    refuse('unknown element handle: use handles this remixlet got from dom.query or dom.queryAll on this page');
  }
  return node;
}
// prune forgets handles of elements that left the document, so a site that redraws itself
// does not grow the table without end.
function prune(t) {
  if (!mapSize || apply(mapSize, t.byId, []) < PRUNE_AT || !isConnected) {
    return;
  }
  apply(mapForEach, t.byId, [function (node, id) {
    if (!apply(isConnected, node, [])) {
      apply(mapDelete, t.byId, [id]);
    }
  }]);
}

function isPageFrame(node) {
  return node === host || node === apply(documentElement, doc, []) ||
    (headOf && node === apply(headOf, doc, [])) || (bodyOf && node === apply(bodyOf, doc, []));
}

function mark(t, node, cls) {
  var cur = attrOf(node, t.mark);
  var v = typeof cur === 'string' ? cur : '';
  if (cls && !contains(' ' + v + ' ', ' ' + cls + ' ')) {
    v = v === '' ? cls : v + ' ' + cls;
  }
  attr(node, t.mark, v);
}

function opQuery(t, args, all) {
  var sel = stringArg(args, 0, 'the selector');
  if (sel === '' || sel.length > 1024) {
    refuse('the selector must be 1 to 1024 characters');
  }
  var l = lower(sel);
  var within = arg(args, 1);
  var root = within === undefined || within === null ? null : element(t, within);
  var why = fieldSelectorProblem(sel);
  if (why !== '') {
    refuse(why);
  }
  var found;
  try {
    found = root === null ? apply(querySelectorAllDoc, doc, [sel]) : apply(querySelectorAllEl, root, [sel]);
  } catch (e) {
    if (own(e, 'mark') === REFUSAL) {
      throw e;
    }
    refuse('invalid selector: ' + sel);
  }
  var n = apply(nodeListLength, found, []);
  var out = list();
  var count = 0;
  var i;
  for (i = 0; i < n && count < MAX_RESULTS; i++) {
    var node = apply(nodeListItem, found, [i]);
    if (node === host) {
      continue;
    }
    if (!all) {
      return handleFor(t, node);
    }
    put(out, count, handleFor(t, node));
    count++;
  }
  if (!all) {
    return null;
  }
  prune(t);
  return out;
}
