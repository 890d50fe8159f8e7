// ---- Roles and names. -------------------------------------------------------------------

var SKIP = allowed(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title', 'base']);
var NO_CHILDREN = allowed(['select', 'textarea', 'input', 'img', 'svg', 'iframe', 'frame', 'video',
  'audio', 'canvas', 'object', 'embed', 'math', 'option']);
var INLINE = allowed(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'dfn', 'em', 'i', 'kbd',
  'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var', 'label', 'font']);
var LEAF = allowed(['link', 'button', 'heading', 'img', 'textbox', 'searchbox', 'checkbox', 'radio',
  'combobox', 'slider', 'spinbutton', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
  'switch', 'progressbar', 'meter', 'iframe', 'listbox']);
var INTERACTIVE = allowed(['link', 'button', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox',
  'slider', 'spinbutton', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch',
  'listbox', 'treeitem', 'gridcell']);
// Roles named by their content. (Cells, rows and tree items are too, in ARIA; the outline
// shows their content as their children instead, or inline when it is one text.)
var NAME_FROM_CONTENT = allowed(['link', 'button', 'heading', 'option', 'menuitem', 'menuitemcheckbox',
  'menuitemradio', 'tab', 'checkbox', 'radio', 'switch', 'tooltip']);
var STRUCTURE = allowed(['list', 'listitem', 'navigation', 'main', 'banner', 'contentinfo', 'complementary',
  'form', 'search', 'region', 'dialog', 'alertdialog', 'table', 'grid', 'treegrid', 'row', 'cell',
  'gridcell', 'columnheader', 'rowheader', 'group', 'article', 'menu', 'menubar', 'tablist', 'toolbar',
  'alert', 'status', 'tree', 'treeitem', 'radiogroup', 'tabpanel', 'figure', 'log', 'note', 'feed',
  'tooltip', 'definition', 'term', 'math', 'application', 'document', 'rowgroup', 'directory', 'timer',
  'marquee', 'contentinfo']);
// Unnamed containers left out when they hold a single element line.
var FOLD = allowed(['listitem', 'row', 'cell', 'gridcell', 'rowgroup', 'group']);
var INPUT_ROLE = dict();
INPUT_ROLE.button = 'button';
INPUT_ROLE.submit = 'button';
INPUT_ROLE.reset = 'button';
INPUT_ROLE.image = 'button';
INPUT_ROLE.file = 'button';
INPUT_ROLE.checkbox = 'checkbox';
INPUT_ROLE.radio = 'radio';
INPUT_ROLE.range = 'slider';
INPUT_ROLE.number = 'spinbutton';
INPUT_ROLE.search = 'searchbox';
INPUT_ROLE.color = 'button';
var TAG_ROLE = dict();
TAG_ROLE.button = 'button';
TAG_ROLE.textarea = 'textbox';
TAG_ROLE.h1 = 'heading';
TAG_ROLE.h2 = 'heading';
TAG_ROLE.h3 = 'heading';
TAG_ROLE.h4 = 'heading';
TAG_ROLE.h5 = 'heading';
TAG_ROLE.h6 = 'heading';
TAG_ROLE.nav = 'navigation';
TAG_ROLE.main = 'main';
TAG_ROLE.header = 'banner';
TAG_ROLE.footer = 'contentinfo';
TAG_ROLE.aside = 'complementary';
TAG_ROLE.form = 'form';
TAG_ROLE.search = 'search';
TAG_ROLE.article = 'article';
TAG_ROLE.dialog = 'dialog';
TAG_ROLE.ul = 'list';
TAG_ROLE.ol = 'list';
TAG_ROLE.menu = 'list';
TAG_ROLE.li = 'listitem';
TAG_ROLE.table = 'table';
TAG_ROLE.tr = 'row';
TAG_ROLE.th = 'columnheader';
TAG_ROLE.td = 'cell';
TAG_ROLE.details = 'group';
TAG_ROLE.fieldset = 'group';
TAG_ROLE.summary = 'button';
TAG_ROLE.option = 'option';
TAG_ROLE.progress = 'progressbar';
TAG_ROLE.meter = 'meter';
TAG_ROLE.iframe = 'iframe';
TAG_ROLE.figure = 'figure';

function inputType(node) {
  var t = attrOf(node, 'type');
  return typeof t === 'string' && t !== '' ? lower(t) : 'text';
}

// roleOf is the element's ARIA role: the first token of role="", else the tag's implicit
// role; '' for generic containers (their children are shown in their place).
function roleOf(node, ln) {
  var r = attrOf(node, 'role');
  if (typeof r === 'string') {
    var parts = splitSpace(lower(r));
    if (parts.length > 0) {
      return parts[0] === 'presentation' || parts[0] === 'none' ? '' : parts[0];
    }
  }
  if (ln === 'a' || ln === 'area') {
    return hasAttr(node, 'href') ? 'link' : '';
  }
  if (ln === 'input') {
    var t = inputType(node);
    if (t === 'hidden') {
      return '';
    }
    var ir = INPUT_ROLE[t];
    if (ir) {
      return ir;
    }
    return hasAttr(node, 'list') ? 'combobox' : 'textbox';
  }
  if (ln === 'select') {
    return hasAttr(node, 'multiple') || num(+attrStr(node, 'size')) > 1 ? 'listbox' : 'combobox';
  }
  if (ln === 'img') {
    var alt = attrOf(node, 'alt');
    return alt === '' ? '' : 'img';
  }
  if (ln === 'svg') {
    return hasAttr(node, 'aria-label') || hasAttr(node, 'aria-labelledby') ? 'img' : '';
  }
  if (ln === 'section') {
    return hasAttr(node, 'aria-label') || hasAttr(node, 'aria-labelledby') ? 'region' : '';
  }
  if ((ln === 'table' || ln === 'tr' || ln === 'td' || ln === 'th') && layoutTable(ln === 'table' ? node : closest(node, 'table'))) {
    return '';
  }
  var tr = TAG_ROLE[ln];
  return tr ? tr : '';
}

// layoutTable reports whether a table only lays out the page (no header cells, caption or
// label): its rows and cells are then shown through their content.
var layoutCache = null;
function layoutTable(table) {
  if (!table || hasAttr(table, 'role') || hasAttr(table, 'aria-label') || hasAttr(table, 'aria-labelledby')) {
    return false;
  }
  if (!layoutCache) {
    layoutCache = new WeakMapC();
  }
  var known = apply(weakGet, layoutCache, [table]);
  if (known !== undefined) {
    return known;
  }
  var layout = queryIn(table, 'th, thead, caption').length === 0;
  apply(weakSet, layoutCache, [table, layout]);
  return layout;
}

// nameAttr is attribute name of n for a name, shown as HIDDEN_WHILE_TYPED when the page wrote it
// while a password was typed or held (rx_mirrors.js: "7 characters").
function nameAttr(n, name) {
  return pageWroteWhileTyped(n, name) ? HIDDEN_WHILE_TYPED : attrStr(n, name);
}

// textOf is the text an element's content gives its name: text nodes, alt of images,
// aria-label of descendants; never the value of a form field.
function textOf(node, live, budget) {
  if (textMirrorIn(node)) { // rx_mirrors.js: a length counter, a strength label
    return HIDDEN_WHILE_TYPED;
  }
  var st = dict();
  st.out = '';
  st.left = budget;
  st.nodes = 300; // elements looked at
  contentText(node, live, st, 0);
  return st.out;
}
function contentText(node, live, st, depth) {
  var c = firstChild(node);
  while (c && st.left > 0) {
    var t = nodeTypeOrZero(c);
    if (t === 3) {
      var d = '' + apply(charDataG, c, []);
      st.out = st.out + d;
      st.left = st.left - d.length;
    } else if (t === 1 && isTextMirror(c)) {
      st.out = st.out + ' ' + HIDDEN_WHILE_TYPED + ' ';
    } else if (t === 1 && depth < 12 && st.nodes-- > 0) {
      var ln = localName(c);
      if (SKIP[ln] !== true && ln !== 'select' && ln !== 'textarea' && c !== host && !hiddenAttr(c) &&
          (!live || cssValue(computed(c), 'display') !== 'none')) {
        var label = nameAttr(c, 'aria-label');
        var sep = INLINE[ln] === true ? '' : ' ';
        if (typeof label === 'string' && collapse(label, 10) !== '') {
          st.out = st.out + sep + label + sep;
        } else if (ln === 'img' || ln === 'area') {
          st.out = st.out + sep + nameAttr(c, 'alt') + sep;
        } else if (ln === 'input') {
          var it = inputType(c);
          if (it === 'button' || it === 'submit' || it === 'reset') {
            st.out = st.out + ' ' + attrStr(c, 'value') + ' ';
          }
        } else if (ln !== 'svg') {
          st.out = st.out + sep;
          contentText(c, live, st, depth + 1);
          st.out = st.out + sep;
        }
      }
    }
    c = nextSibling(c);
  }
}
function hiddenAttr(node) {
  return hasAttr(node, 'hidden') || attrOf(node, 'aria-hidden') === 'true';
}
function idLookup(node, id) {
  var root = null;
  try {
    root = apply(getRootNode, node, []);
  } catch (e) { /* detached */ }
  try {
    if (root && nodeTypeOrZero(root) === 9) {
      return apply(getElementByIdDoc, root, [id]);
    }
    if (root && nodeTypeOrZero(root) === 11 && getElementByIdFrag) {
      return apply(getElementByIdFrag, root, [id]);
    }
  } catch (e) { /* not found */ }
  return null;
}

// nameOf computes an accessible name: aria-labelledby, aria-label, labels of form fields,
// alt, legend and caption, content (for the roles named by it), title, placeholder, and for
// an unlabelled field the short text just before it.
function nameOf(node, ln, role, live) {
  var s = '';
  var ids = attrOf(node, 'aria-labelledby');
  if (typeof ids === 'string') {
    var parts = splitSpace(ids);
    var i;
    for (i = 0; i < parts.length && i < 8; i++) {
      var ref = idLookup(node, parts[i]);
      if (ref && ref !== node) {
        var al = nameAttr(ref, 'aria-label');
        s = s + ' ' + (typeof al === 'string' && al !== '' ? al : textOf(ref, false, 400));
      }
    }
    s = collapse(s, MAX_NAME);
    if (s !== '') {
      return s;
    }
  }
  s = collapse(nameAttr(node, 'aria-label'), MAX_NAME);
  if (s !== '') {
    return s;
  }
  var field = ln === 'input' || ln === 'select' || ln === 'textarea';
  if (ln === 'input') {
    var t = inputType(node);
    if (t === 'button' || t === 'submit' || t === 'reset') {
      s = collapse(attrStr(node, 'value'), MAX_NAME);
      return s !== '' ? s : t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '';
    }
    if (t === 'image') {
      s = collapse(nameAttr(node, 'alt') || attrStr(node, 'value'), MAX_NAME);
      return s !== '' ? s : 'Submit';
    }
  }
  var lg = labelsOf[ln];
  if (lg) {
    try {
      var labels = nodeList(apply(lg, node, []));
      var j;
      for (j = 0; j < labels.length && j < 4; j++) {
        s = s + ' ' + textOf(labels[j], live, 400);
      }
    } catch (e) { /* no labels */ }
    s = collapse(s, MAX_NAME);
    if (s !== '') {
      return s;
    }
  }
  if (ln === 'img' || ln === 'area') {
    s = collapse(nameAttr(node, 'alt'), MAX_NAME);
  } else if (ln === 'fieldset' || ln === 'table' || ln === 'svg' || ln === 'figure') {
    var sub = ln === 'fieldset' ? 'legend' : ln === 'table' ? 'caption' : ln === 'svg' ? 'title' : 'figcaption';
    var c = firstChild(node);
    while (c) {
      if (nodeTypeOrZero(c) === 1 && localName(c) === sub) {
        s = collapse(textOf(c, false, 400), MAX_NAME);
        break;
      }
      c = nextSibling(c);
    }
  } else if (NAME_FROM_CONTENT[role] === true) {
    s = collapse(textOf(node, live, 600), MAX_NAME);
  }
  if (s === '') {
    s = collapse(nameAttr(node, 'title'), MAX_NAME);
  }
  if (s === '' && field) {
    s = collapse(nameAttr(node, 'placeholder'), MAX_NAME);
    if (s === '') {
      s = textBefore(node);
    }
  }
  return s;
}
// textBefore is the short text right before an unlabelled field ("Email: [    ]").
function textBefore(node) {
  var prev = apply(previousSiblingG, node, []);
  var k = 0;
  while (prev && k < 3) {
    var t = nodeTypeOrZero(prev);
    var s = '';
    if (t === 3) {
      s = collapse('' + apply(charDataG, prev, []), 80);
    } else if (t === 1) {
      var ln = localName(prev);
      if (ln === 'input' || ln === 'select' || ln === 'textarea' || ln === 'button') {
        return '';
      }
      s = collapse(textOf(prev, false, 200), 80);
    }
    if (s !== '') {
      return s.length <= 60 ? s : '';
    }
    prev = apply(previousSiblingG, prev, []);
    k++;
  }
  return '';
}

// fieldValue is the value of a field as the model is shown it (null: never read out).
function fieldValue(node, ln) {
  if (isSensitive(node)) {
    return null; // a password, or what the page marks as one (a key, a one-time code, a card)
  }
  if (pageSetValue(node, ln)) {
    return HIDDEN_WHILE_TYPED; // rx_policy.js: a length the page wrote into a counter field, a strength it selected
  }
  try {
    if (ln === 'input') {
      return '' + apply(inputValue, node, []);
    }
    if (ln === 'textarea') {
      return '' + apply(textareaValue, node, []);
    }
    if (ln === 'select') {
      return selectedText(node);
    }
  } catch (e) { /* not a field after all */ }
  return null;
}
// selectedText is the text of a select's chosen options, joined.
function selectedText(node) {
  var opts = queryIn(node, 'option:checked');
  var out = '';
  var i;
  for (i = 0; i < opts.length && i < 5; i++) {
    out = out + (i ? ', ' : '') + collapse('' + apply(optionTextG, opts[i], []), 60);
  }
  return out;
}

// states lists the element's state flags: " [checked] [disabled] [level=2]".
function states(node, ln, role) {
  var s = '';
  if (role === 'heading') {
    var lvl = attrStr(node, 'aria-level');
    if (lvl === '' && ln.length === 2 && apply(charCodeAt, ln, [0]) === 104) {
      lvl = apply(strSlice, ln, [1]);
    }
    if (lvl !== '') {
      s = s + ' [level=' + cut(lvl, 2) + ']';
    }
  }
  if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
    var checked = false;
    var ac = attrOf(node, 'aria-checked');
    if (ln === 'input' && checkedG) {
      checked = apply(checkedG, node, []) === true;
    } else if (ac === 'mixed') {
      s = s + ' [mixed]';
    } else {
      checked = ac === 'true';
    }
    if (checked) {
      s = s + ' [checked]';
    }
  }
  if (role === 'option' && (attrOf(node, 'aria-selected') === 'true' || (ln === 'option' && matches(node, ':checked')))) {
    s = s + ' [selected]';
  } else if (attrOf(node, 'aria-selected') === 'true') {
    s = s + ' [selected]';
  }
  var exp = attrOf(node, 'aria-expanded');
  if (exp === 'true') {
    s = s + ' [expanded]';
  } else if (exp === 'false') {
    s = s + ' [collapsed]';
  } else if (ln === 'summary') {
    var det = closest(node, 'details');
    if (det) {
      s = s + (hasAttr(det, 'open') ? ' [expanded]' : ' [collapsed]');
    }
  }
  var pressed = attrOf(node, 'aria-pressed');
  if (pressed === 'true' || pressed === 'mixed') {
    s = s + ' [pressed]';
  }
  if (attrOf(node, 'aria-disabled') === 'true' || matches(node, ':disabled')) {
    s = s + ' [disabled]';
  }
  if (hasAttr(node, 'required') || attrOf(node, 'aria-required') === 'true') {
    s = s + ' [required]';
  }
  return s;
}

// describe names an element for messages: role (or tag) and name, and its ref when asked.
function describe(node, withRef) {
  var ln = localName(node);
  var role = roleOf(node, ln);
  var name = nameOf(node, ln, role || 'button', false);
  if (name === '' && !role) {
    name = collapse(textOf(node, false, 200), 60);
  }
  return (role || ln) + (name === '' ? '' : ' ' + quote(cut(name, 60))) + (withRef ? ' [' + refFor(node) + ']' : '');
}
