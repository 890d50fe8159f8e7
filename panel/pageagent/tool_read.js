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

// bodyText is the rendered text of a document's body (innerText), or ''.
function bodyText(d) {
  var body = null;
  try {
    body = bodyOf ? apply(bodyOf, d, []) : null;
  } catch (e) { /* not an HTML document */ }
  if (!body || !innerTextG) {
    return '';
  }
  try {
    return '' + apply(innerTextG, body, []);
  } catch (e) {
    return '';
  }
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
  checkArgs(args, 'query', allowed(['selector', 'limit', 'attrNames']));
  var sel = strArg(args, 'selector', true, 1024);
  var limit = intArg(args, 'limit', 20, 1, 200);
  // attrNames is the chat's own (proxy/chat/oracle.go; never the model's): the attributes the
  // selector's value matchers name, whose values Go redacts to judge whether a match holds
  // only in a secret. Each match then has them in extra (Go takes it out).
  var names = own(args, 'attrNames');
  if (names !== undefined && (!isArray(names) || names.length > 16)) {
    refuse('attrNames must be a list of at most 16 names');
  }
  checkSelector(sel);
  var found = select(sel);
  var out = list();
  var total = 0;
  var i;
  for (i = 0; i < found.length; i++) {
    var node = found[i];
    if (node === host) {
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
    m.text = secret ? '' : collapse('' + apply(getTextContent, node, []), 100);
    var attrs = dict();
    var j;
    for (j = 0; j < QUERY_ATTRS.length; j++) {
      var a = QUERY_ATTRS[j];
      if (a === 'value' && secret) {
        continue;
      }
      var v = attrOf(node, a);
      if (typeof v === 'string') {
        attrs[a] = cut(v, 200);
      }
    }
    m.attrs = attrs;
    if (names !== undefined) {
      var extra = dict();
      var k;
      for (k = 0; k < names.length; k++) {
        var ev = typeof names[k] === 'string' ? attrOf(node, names[k]) : null;
        if (typeof ev === 'string') {
          extra[names[k]] = cut(ev, 4000);
        }
      }
      m.extra = extra;
    }
    var ln = m.tag;
    if (!secret && (ln === 'input' || ln === 'textarea' || ln === 'select')) {
      var fv = fieldValue(node, ln);
      if (fv !== null) {
        m.value = cut(fv, 200);
      }
    }
    var r = rectOf(node);
    m.rect = boxRect(r);
    m.visible = shownLive(node);
    put(out, out.length, m);
  }
  var res = dict();
  res.total = total;
  res.matches = out;
  return res;
}

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

function toolPageData(args) {
  checkArgs(args, 'read_page_data', allowed([]));
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
  var r = dict();
  r.globals = globals;
  r.globalsTruncated = w.truncated;
  var forms = list();
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
