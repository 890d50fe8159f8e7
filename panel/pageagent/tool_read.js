// ---- capture_page. ----------------------------------------------------------------------

function toolCapture(args) {
  checkArgs(args, 'capture_page', allowed(['maxChars']));
  var max = intArg(args, 'maxChars', 8000, 100, 100000);
  var r = dict();
  r.url = href();
  r.title = title();
  var v = dict();
  v.width = round(viewWidth());
  v.height = round(viewHeight());
  v.scrollX = 0;
  v.scrollY = 0;
  try {
    v.scrollX = round(apply(scrollXG, win, []));
    v.scrollY = round(apply(scrollYG, win, []));
  } catch (e) { /* keep 0 */ }
  var de = apply(documentElement, doc, []);
  v.pageHeight = de && scrollHeightG ? round(apply(scrollHeightG, de, [])) : 0;
  r.viewport = v;
  var t = bodyText(doc);
  // Same-origin frames' text follows, each under a line naming the frame (other sites'
  // frames are never read).
  var fl = frameList();
  var i;
  for (i = 0; i < fl.length && t.length <= max; i++) {
    var ft = bodyText(fl[i].doc);
    if (ft !== '') {
      var name = attrOf(fl[i].frame, 'title');
      t = t + '\n[frame' + (typeof name === 'string' && name !== '' ? ' "' + cut(name, 80) + '"' : '') + ']\n' + ft;
    }
  }
  r.truncated = t.length > max;
  // The cut is marked where it is, as every other cut of a text is: the proxy's redaction stage
  // takes the first digits of a card number cut there (a cut the model chooses could show all
  // but the last digit, which the Luhn check gives).
  r.text = r.truncated ? apply(strSlice, t, [0, max - 1]) + ELLIPSIS : t;
  return r;
}

// bodyText is the rendered text of a document's body (innerText), or '': with the text the page
// wrote while a password was typed or held (rx_mirrors.js: a length counter, a strength label)
// shown as HIDDEN_WHILE_TYPED.
function bodyText(d) {
  var body = null;
  try {
    body = bodyOf ? apply(bodyOf, d, []) : null;
  } catch (e) { /* not an HTML document */ }
  if (!body || !innerTextG) {
    return '';
  }
  try {
    flushMirrors();
    return d === doc && textMirrorCount > 0 ? shownText(body, 0) : '' + apply(innerTextG, body, []);
  } catch (e) {
    return '';
  }
}

// shownText is el's innerText with its text mirrors shown as HIDDEN_WHILE_TYPED: the parts that
// hold none are the browser's innerText, those that hold one are walked (a block's text on lines
// of its own, as innerText has it; hidden elements left out).
function shownText(el, depth) {
  if (isTextMirror(el)) {
    return HIDDEN_WHILE_TYPED;
  }
  if (!holdsTextMirror(el) || depth > 64) {
    return '' + apply(innerTextG, el, []);
  }
  var out = '';
  var c = firstChild(el);
  for (; c; c = nextSibling(c)) {
    var t = nodeType(c);
    if (t === 3) {
      out = out + collapse('' + apply(charDataG, c, []), ELEMENT_TEXT_MAX);
    } else if (t === 1 && c !== host) {
      var display = cssValue(computed(c), 'display');
      if (display === 'none' || SKIP[localName(c)] === true) {
        continue;
      }
      var part = shownText(c, depth + 1);
      out = apply(strSlice, display, [0, 6]) === 'inline' ? out + ' ' + part + ' ' : out + '\n' + part + '\n';
    }
  }
  return out;
}

// ---- query. -----------------------------------------------------------------------------

var QUERY_ATTRS = ['id', 'class', 'name', 'type', 'role', 'href', 'src', 'alt', 'title', 'aria-label',
  'aria-expanded', 'aria-checked', 'aria-selected', 'aria-disabled', 'placeholder', 'value', 'for', 'action',
  'method', 'target', 'disabled', 'checked', 'data-testid'];

function checkSelector(sel) {
  var l = lower(sel);
  if ((contains(l, 'value') || contains(l, '\\')) && anyPassword()) {
    refuse('selectors that mention value (or use CSS escapes) are refused while the page has a password field');
  }
}
function select(sel) {
  try {
    return queryDoc(sel);
  } catch (e) {
    refuse('invalid selector: ' + cut(sel, 200));
  }
  return null;
}

function toolQuery(args) {
  checkArgs(args, 'query', allowed(['selector', 'limit', 'attrNames', 'values', 'valuesId', 'drop', 'from']));
  var sel = strArg(args, 'selector', true, 1024);
  var limit = intArg(args, 'limit', 20, 1, 200);
  // attrNames, values, valuesId and drop are the chat's own (proxy/chat/oracle_query.go; never
  // the model's), for a selector that matches attribute values. First (values) it asks for
  // every value the named attributes hold on the page, which Go redacts; then it asks the
  // query again with the values whose match it cannot tell from what the model may see
  // (drop, by their place in the first answer), and the elements holding one of them, or a
  // value the first answer did not have, are left out before anything is counted: a list cut
  // at the limit after the count told, by whether it was cut, whether a secret matched.
  var names = own(args, 'attrNames');
  if (names !== undefined && (!isArray(names) || names.length > 16)) {
    refuse('attrNames must be a list of at most 16 names');
  }
  var from = intArg(args, 'from', 0, 0, 1e9);
  if (own(args, 'values') === true && from > 0) {
    return queryValuesPart(intArg(args, 'valuesId', 0, 0, 1e9), from);
  }
  checkSelector(sel);
  var found = select(sel);
  if (own(args, 'values') === true) {
    queryValues(found, names);
    return queryValuesPart(queryKept.id, 0);
  }
  var skip = null;
  if (own(args, 'valuesId') !== undefined) {
    skip = queryDrop(intArg(args, 'valuesId', 0, 0, 1e9), own(args, 'drop'));
  }
  var out = list();
  var total = 0;
  var held = passwordHeld();
  var boxesWithheld = '';
  var i;
  for (i = 0; i < found.length; i++) {
    var node = found[i];
    if (node === host || skip !== null && skip(node)) {
      continue;
    }
    total++;
    if (out.length >= limit) {
      continue;
    }
    var m = dict();
    m.ref = refFor(node);
    m.tag = localName(node);
    var secret = isSensitive(node);
    var pageSet = !secret && pageSetValue(node, m.tag); // rx_policy.js: a value the page set while a password was held
    m.text = secret ? '' : textMirrorIn(node) ? HIDDEN_WHILE_TYPED : collapse(elementText(node), 100);
    var attrs = dict();
    var j;
    for (j = 0; j < QUERY_ATTRS.length; j++) {
      var a = QUERY_ATTRS[j];
      if (a === 'value' && secret) {
        continue;
      }
      var v = attrOf(node, a);
      if (typeof v === 'string') {
        attrs[a] = pageWroteWhileTyped(node, a) || a === 'value' && pageSet ? HIDDEN_WHILE_TYPED : cut(v, 200); // rx_mirrors.js
      }
    }
    m.attrs = attrs;
    var ln = m.tag;
    if (!secret && (ln === 'input' || ln === 'textarea' || ln === 'select')) {
      var fv = fieldValue(node, ln);
      if (fv !== null) {
        m.value = cut(fv, 200);
      }
    }
    // Sizes and positions, as computed styles (inspect_styles), may follow a typed password.
    if (held) {
      boxesWithheld = BOXES_WITHHELD;
    } else if (pageChangedWhileTyped(node)) {
      boxesWithheld = boxesWithheld === '' ? BOXES_CHANGED : boxesWithheld;
    } else {
      m.rect = boxRect(rectOf(node));
    }
    m.visible = shownLive(node);
    put(out, out.length, m);
  }
  var res = dict();
  res.total = total;
  res.matches = out;
  if (boxesWithheld !== '') {
    res.rectsWithheld = boxesWithheld;
  }
  return res;
}

// queryValues reads, for the chat's first question, the distinct values (each cut at 4000
// characters) of the named attributes over the elements found, as [name, value] pairs, and
// keeps them for the parts of its answer (queryValuesPart) and for the second question
// (queryDrop). Refused past QUERY_VALUES_BYTES: the elements found carry an attribute only,
// whatever value the model's selector asks for, so the refusal does not hang on a guess.
var queryKept = null;
var querySeq = 0;
var QUERY_VALUES_BYTES = 2000000;
var QUERY_VALUES_PART = 200000;
function queryValues(found, names) {
  if (names === undefined) {
    refuse('values needs attrNames');
  }
  var pairs = list();
  var sizes = list(); // each pair's bytes in an answer
  var index = dict(); // name -> dict(value -> its place in pairs)
  var size = 0;
  var k;
  for (k = 0; k < names.length; k++) {
    if (typeof names[k] === 'string') {
      index[names[k]] = dict();
    }
  }
  var i;
  for (i = 0; i < found.length; i++) {
    if (found[i] === host) {
      continue;
    }
    for (k = 0; k < names.length; k++) {
      var name = names[k];
      var v = typeof name === 'string' ? queryValueOf(found[i], name) : null;
      if (typeof v !== 'string') {
        continue;
      }
      v = cut(v, 4000);
      if (own(index[name], v) !== undefined) {
        continue;
      }
      var n = utf8Length(apply(jsonStringify, null, [v])) + utf8Length(apply(jsonStringify, null, [name])) + 4;
      size += n;
      if (size > QUERY_VALUES_BYTES) {
        refuse('query refused: the attributes the selector matches values of hold more text on this page than can be checked against what the page hides; select by other attributes, or by text with find');
      }
      index[name][v] = pairs.length;
      var p = list();
      put(p, 0, name);
      put(p, 1, v);
      put(pairs, pairs.length, p);
      put(sizes, sizes.length, n);
    }
  }
  querySeq++;
  queryKept = dict();
  queryKept.id = querySeq;
  queryKept.names = names;
  queryKept.index = index;
  queryKept.pairs = pairs;
  queryKept.sizes = sizes;
}

// queryValueOf is attribute name of node as the chat's value questions see it: "[redacted]"
// (the page agent's own marker, which Go takes as a value it cannot match: proxy/chat/
// oracle_query.go shownChanged) when the page wrote it while a password was typed or held
// (rx_mirrors.js: a length the model's selector [data-dlen="7"] would otherwise find).
function queryValueOf(node, name) {
  var v = attrOf(node, name);
  return typeof v === 'string' && pageWroteWhileTyped(node, lower(name)) ? '[redacted]' : v;
}

// queryValuesPart is the part of the kept values from pair from, up to QUERY_VALUES_PART
// bytes; next is where the next part starts, -1 after the last.
function queryValuesPart(id, from) {
  if (queryKept === null || queryKept.id !== id) {
    refuse('the values being checked are gone (another query replaced them); query again');
  }
  var part = list();
  var size = 0;
  var i = from;
  for (; i < queryKept.pairs.length && (part.length === 0 || size + queryKept.sizes[i] <= QUERY_VALUES_PART); i++) {
    put(part, part.length, queryKept.pairs[i]);
    size += queryKept.sizes[i];
  }
  var res = dict();
  res.valuesId = id;
  res.values = part;
  res.next = i < queryKept.pairs.length ? i : -1;
  return res;
}

// queryDrop is the test the chat's second question asks for: an element is left out when one
// of the named attributes holds a value among drop (places in the first answer's pairs), or a
// value the first answer did not have (the page changed it since, and Go has not judged it).
function queryDrop(id, drop) {
  if (queryKept === null || queryKept.id !== id) {
    refuse('the values being checked are gone (another query replaced them); query again');
  }
  if (drop !== undefined && !isArray(drop)) {
    refuse('drop must be a list');
  }
  var dropped = dict();
  var i;
  for (i = 0; drop !== undefined && i < drop.length; i++) {
    dropped[drop[i]] = true;
  }
  var kept = queryKept;
  return function (node) {
    var k;
    for (k = 0; k < kept.names.length; k++) {
      var name = kept.names[k];
      var v = typeof name === 'string' ? queryValueOf(node, name) : null;
      if (typeof v !== 'string') {
        continue;
      }
      var at = own(kept.index[name], cut(v, 4000));
      if (at === undefined || dropped[at] === true) {
        return true;
      }
    }
    return false;
  };
}

// elementText is an element's text as textContent joins it, with a space where an element
// that is not inline text (an option, a list item, a cell, a line break) begins or ends:
// textContent runs a <select>'s options together, and a key followed by the next option's
// text is no longer a word the redaction recognises.
function elementText(node) {
  if (!firstChildOf || !nextSiblingOf || !parentNodeOf || !nodeTypeOf || !nodeValueOf) {
    return '' + apply(getTextContent, node, []);
  }
  var out = '';
  var n = apply(firstChildOf, node, []);
  while (n && out.length < ELEMENT_TEXT_MAX) {
    var t = nodeType(n);
    var child = null;
    if (t === 3 || t === 4) {
      out = out + apply(nodeValueOf, n, []);
    } else if (t === 1 && isTextMirror(n)) { // rx_mirrors.js: a length counter, a strength label
      out = out + ' ' + HIDDEN_WHILE_TYPED + ' ';
    } else if (t === 1) {
      var block = INLINE_TAGS[localName(n)] !== true;
      out = block ? out + ' ' : out;
      child = apply(firstChildOf, n, []);
      out = block && !child ? out + ' ' : out;
    }
    if (child) {
      n = child;
      continue;
    }
    // The next node in document order under node: a sibling, or a parent's (an element that
    // ends here).
    while (n) {
      var sib = apply(nextSiblingOf, n, []);
      if (sib) {
        n = sib;
        break;
      }
      n = apply(parentNodeOf, n, []);
      if (!n || n === node) {
        n = null;
        break;
      }
      out = INLINE_TAGS[localName(n)] !== true ? out + ' ' : out;
    }
  }
  return out;
}
var ELEMENT_TEXT_MAX = 100000;
var INLINE_TAGS = allowed(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font', 'i',
  'ins', 'kbd', 'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var', 'wbr']);

// ---- inspect_styles. --------------------------------------------------------------------

var DEFAULT_STYLES = ['display', 'visibility', 'position', 'color', 'background-color', 'font-size',
  'font-weight', 'width', 'height', 'margin', 'padding', 'z-index', 'opacity'];

function toolStyles(args) {
  checkArgs(args, 'inspect_styles', allowed(['ref', 'properties']));
  var ref = strArg(args, 'ref', true, 20);
  var props = own(args, 'properties');
  var names = list();
  var i;
  if (props === undefined || props === null) {
    for (i = 0; i < DEFAULT_STYLES.length; i++) {
      put(names, i, DEFAULT_STYLES[i]);
    }
  } else {
    if (!isArray(props) || props.length === 0 || props.length > 64) {
      refuse('properties must be a list of 1 to 64 CSS property names');
    }
    for (i = 0; i < props.length; i++) {
      var p = own(props, i);
      if (typeof p === 'string' && apply(strSlice, p, [0, 2]) === '--' && p.length <= 64) {
        put(names, i, p); // a custom property
      } else {
        put(names, i, kebab(p));
      }
    }
  }
  var node = byRef(ref);
  // While a typed password is held the page's styles may follow it anywhere (a strength meter's
  // width, a custom property with its length, a rule on a mirror attribute), and which element
  // carries it cannot be told: every computed value is withheld then. After, an element the page
  // changed meanwhile keeps its marks (rx_mirrors.js) and its styles stay withheld.
  if (passwordHeld()) {
    refuse(STYLES_WITHHELD);
  }
  if (pageChangedWhileTyped(node)) {
    refuse('the page changed this element while a password was typed on this page, so its computed styles are withheld (they may follow the password); inspect another element, or ask after the page is loaded again');
  }
  var st = computed(node);
  if (!st) {
    refuse('this element has no computed style');
  }
  var styles = dict();
  for (i = 0; i < names.length; i++) {
    styles[names[i]] = cut(cssValue(st, names[i]), 500);
  }
  var r = dict();
  r.ref = ref;
  r.element = describe(node, false);
  r.styles = styles;
  return r;
}

var BOXES_WITHHELD = 'sizes and positions are withheld while a password is typed on this page; ask again after signing in';
var BOXES_CHANGED = 'the sizes and positions of the matches without a rect are withheld: the page changed them while a password was typed on this page';
var STYLES_WITHHELD = 'computed styles are withheld while a password is typed on this page; ask again after signing in';

// pageChangedWhileTyped reports whether the page wrote an attribute of el, its text or its value
// while a typed secret was held (the marks of rx_mirrors.js, kept for the element's life).
function pageChangedWhileTyped(el) {
  flushMirrors();
  return !!apply(weakGet, mirrorTaint, [el]) || !!apply(weakGet, lateWrites, [el]) || isTextMirror(el) || isValueMirror(el);
}

// ---- read_page_data. --------------------------------------------------------------------

function isNodeLike(v) {
  try {
    apply(nodeTypeG, v, []);
    return true;
  } catch (e) {
    return false;
  }
}
// isWindowLike: a window (of this page, a frame, or another origin) has an own "window"
// property that is itself; a cross-origin one may throw.
function isWindowLike(v) {
  try {
    var d = getOwnPropertyDescriptor(v, 'window');
    var g = d ? own(d, 'get') : undefined;
    return typeof g === 'function' && apply(g, v, []) === v;
  } catch (e) {
    return true;
  }
}
var SKIPPED = dict();

// data turns a page value into JSON data within the walk's bounds: data properties only (no
// getter runs), no functions, DOM nodes or windows, cycles and depth cut.
function data(w, v, depth) {
  if (w.left <= 0) {
    w.truncated = true;
    return SKIPPED;
  }
  var t = typeof v;
  if (v === null || t === 'boolean') {
    w.left = w.left - 5;
    return v;
  }
  if (t === 'number') {
    w.left = w.left - 8;
    return v === v && v !== 1 / 0 && v !== -1 / 0 ? v : null;
  }
  if (t === 'bigint') {
    w.left = w.left - 20;
    return '' + v;
  }
  if (t === 'string') {
    var s = cut(v, 2000);
    w.left = w.left - s.length - 2;
    return s;
  }
  if (t !== 'object') {
    return SKIPPED; // undefined, functions, symbols
  }
  if (v === win || isNodeLike(v) || isWindowLike(v)) {
    return SKIPPED;
  }
  if (depth >= DATA_DEPTH) {
    w.left = w.left - 10;
    w.truncated = true;
    return '[deeper]';
  }
  var i;
  for (i = 0; i < w.stack.length; i++) {
    if (w.stack[i] === v) {
      return '[cycle]';
    }
  }
  put(w.stack, w.stack.length, v);
  var out;
  try {
    var keys;
    if (isArray(v)) {
      out = list();
      var n = v.length;
      for (i = 0; i < n && i < 100 && w.left > 0; i++) {
        var d = getOwnPropertyDescriptor(v, i);
        var x = d && apply(hasOwnProperty, d, ['value']) ? data(w, own(d, 'value'), depth + 1) : null;
        put(out, out.length, x === SKIPPED ? null : x);
      }
      if (n > out.length) {
        w.truncated = true;
      }
    } else {
      out = dict();
      keys = objectKeys(v);
      for (i = 0; i < keys.length && i < 200 && w.left > 0; i++) {
        var k = keys[i];
        var desc = getOwnPropertyDescriptor(v, k);
        if (!desc || !apply(hasOwnProperty, desc, ['value'])) {
          continue;
        }
        var val = contains(lower(k), 'password') ? '[redacted]' : data(w, own(desc, 'value'), depth + 1);
        if (val !== SKIPPED) {
          out[cut(k, 200)] = val;
          w.left = w.left - k.length - 4;
        }
      }
      if (keys.length > i) {
        w.truncated = true;
      }
    }
  } catch (e) {
    out = '[unreadable]';
  }
  w.stack.length = w.stack.length - 1;
  return out;
}

var DATA_WITHHELD = 'the page\'s script data is withheld while a password is typed on this page; ask again after signing in';

function toolPageData(args) {
  checkArgs(args, 'read_page_data', allowed([]));
  var r = dict();
  // While a typed password is held the page's globals may hold what it derived from it (a
  // length, a strength score, a store of the form's state), which no redaction by value
  // recognises: they are withheld then (OPEN-ITEMS 111); the forms are read as ever.
  if (passwordHeld()) {
    r.globals = dict();
    r.globalsTruncated = false;
    r.globalsWithheld = DATA_WITHHELD;
  } else {
    pageGlobals(r);
  }
  var forms = list();
  var i;
  var formEls = queryDoc('form');
  for (i = 0; i < formEls.length && i < 20; i++) {
    var f = formEls[i];
    var fd = dict();
    fd.ref = refFor(f);
    fd.name = attrOf(f, 'name');
    fd.id = attrOf(f, 'id');
    try {
      fd.action = formActionG ? '' + apply(formActionG, f, []) : attrStr(f, 'action');
      fd.method = formMethodG ? '' + apply(formMethodG, f, []) : attrStr(f, 'method');
    } catch (e) { /* not a form */ }
    fd.fields = fieldsOf(queryIn(f, 'input, select, textarea'));
    put(forms, forms.length, fd);
  }
  r.forms = forms;
  var loose = list();
  var all = queryDoc('input, select, textarea');
  for (i = 0; i < all.length; i++) {
    if (!closest(all[i], 'form')) {
      put(loose, loose.length, all[i]);
    }
  }
  r.fieldsOutsideForms = fieldsOf(loose);
  return r;
}

// pageGlobals puts into r the page's own globals (the window's enumerable data properties added
// after the page agent started), as data within DATA_BUDGET.
function pageGlobals(r) {
  var w = dict();
  w.left = DATA_BUDGET;
  w.truncated = false;
  w.stack = list();
  var globals = dict();
  var names = objectKeys(win);
  var i;
  for (i = 0; i < names.length; i++) {
    var name = names[i];
    if (builtinGlobals[name] === true) {
      continue;
    }
    var d = null;
    try {
      d = getOwnPropertyDescriptor(win, name);
    } catch (e) { /* unreadable */ }
    if (!d || !apply(hasOwnProperty, d, ['value'])) {
      continue;
    }
    var v = contains(lower(name), 'password') ? '[redacted]' : data(w, own(d, 'value'), 0);
    if (v !== SKIPPED) {
      globals[cut(name, 200)] = v;
    }
    if (w.left <= 0) {
      w.truncated = true;
      break;
    }
  }
  r.globals = globals;
  r.globalsTruncated = w.truncated;
}

function fieldsOf(els) {
  var out = list();
  var i;
  for (i = 0; i < els.length && i < 100; i++) {
    var node = els[i];
    var ln = localName(node);
    var f = dict();
    f.ref = refFor(node);
    f.tag = ln;
    f.name = attrOf(node, 'name');
    f.type = ln === 'input' ? inputType(node) : ln;
    f.label = nameOf(node, ln, roleOf(node, ln), true);
    if (isSensitive(node)) {
      f.password = true; // its value is never read out (a password, or marked as secret by the page)
    } else if (ln === 'input' && (f.type === 'checkbox' || f.type === 'radio')) {
      f.checked = checkedG ? apply(checkedG, node, []) === true : false;
      f.value = cut(attrStr(node, 'value'), 200);
    } else {
      var v = fieldValue(node, ln);
      f.value = v === null ? null : cut(v, f.type === 'hidden' ? 200 : 1000);
    }
    put(out, out.length, f);
  }
  return out;
}
