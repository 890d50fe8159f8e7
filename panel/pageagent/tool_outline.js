// ---- Outline. ---------------------------------------------------------------------------

// newOutline makes the state of one outline walk. live: the page's own document (styles,
// boxes, refs); otherwise an inert parsed document (no boxes, no refs).
function newOutline(filter, budget, live, base) {
  var o = dict();
  o.filter = filter;
  o.budget = budget;
  // The walk collects up to four budgets' worth, so that text can give way to elements
  // when the outline is cut to the budget (finishOutline).
  o.walkBudget = budget * 4;
  o.live = live;
  o.base = base;
  o.origin = '';
  o.path = '';
  o.query = '';
  var bu = parseURLOrNull(base, undefined);
  if (bu) {
    o.origin = urlPart(bu, urlOriginG);
    o.path = urlPart(bu, urlPathnameG);
    o.query = urlPart(bu, urlSearchG);
  }
  o.lines = list();
  o.chars = 0;
  o.full = false;
  o.more = 0;
  o.visited = 0;
  o.nodeCap = false;
  o.pending = '';
  o.pendingDepth = 0;
  o.textShown = true;
  o.textMax = filter === 'all' ? MAX_TEXT_ALL : MAX_TEXT_LINE;
  o.maxNodes = MAX_NODES;
  o.inLeaf = false;
  o.skip = null;
  layoutCache = null; // the page may have changed since the last outline
  o.vw = live ? viewWidth() : 0;
  o.vh = live ? viewHeight() : 0;
  return o;
}
function pushLine(o, line, isElement) {
  if (o.full || o.chars + line.length + 1 > o.walkBudget) {
    o.full = true;
    if (isElement) {
      o.more++;
    }
    return false;
  }
  put(o.lines, o.lines.length, line);
  o.chars = o.chars + line.length + 1;
  return true;
}
function popLine(o) {
  var last = o.lines[o.lines.length - 1];
  o.chars = o.chars - last.length - 1;
  o.lines.length = o.lines.length - 1;
}
function indent(depth) {
  var s = '';
  var i;
  for (i = 0; i < depth; i++) {
    s = s + ' ';
  }
  return s;
}
function flushText(o) {
  if (o.pending === '') {
    return;
  }
  var s = collapse(o.pending, o.textMax);
  o.pending = '';
  if (s !== '') {
    pushLine(o, indent(o.pendingDepth) + quote(s), false);
  }
}
function addText(o, node, depth) {
  if (o.inLeaf || o.filter === 'interactive' || !o.textShown || o.full) {
    return;
  }
  var d = '';
  try {
    d = '' + apply(charDataG, node, []);
  } catch (e) {
    return;
  }
  if (textMirrorIn(node)) { // rx_mirrors.js: a length counter, a strength label
    if (contains(o.pending, HIDDEN_WHILE_TYPED)) {
      return;
    }
    d = ' ' + HIDDEN_WHILE_TYPED + ' ';
  }
  if (o.filter === 'visible' && o.live && !textInView(o, node)) {
    return;
  }
  if (o.pending === '') {
    if (collapse(d, 2) === '') {
      return;
    }
    o.pendingDepth = depth;
  }
  if (o.pending.length < 2 * o.textMax) {
    o.pending = o.pending + d;
  }
}

// textInView reports whether a text node's box meets the viewport (a long page of text in
// one element is cut to what is on screen).
var range = null;
function textInView(o, node) {
  if (!createRange || !rangeSelect || !rangeBCR) {
    return true;
  }
  try {
    if (!range) {
      range = apply(createRange, doc, []);
    }
    apply(rangeSelect, range, [node]);
    var b = apply(rangeBCR, range, []);
    var r = dict();
    r.x = num(apply(rectLeft, b, []));
    r.y = num(apply(rectTop, b, []));
    r.width = num(apply(rectWidthG, b, []));
    r.height = num(apply(rectHeightG, b, []));
    r.clip = null;
    var d = ownerDoc(node);
    if (d !== doc && d !== null) {
      inFrame(r, frameOf(d));
    }
    return inView(r, o.vw, o.vh);
  } catch (e) {
    return true;
  }
}

// walkChildren visits what is rendered inside node: the open shadow root's tree instead of
// the light children, and a slot's assigned nodes instead of its fallback.
function walkChildren(o, node, depth) {
  var parent = node;
  if (nodeTypeOrZero(node) === 1) {
    var sr = null;
    try {
      sr = shadowRootG ? apply(shadowRootG, node, []) : null;
    } catch (e) { /* none */ }
    if (sr) {
      parent = sr;
    } else if (o.live && assignedNodes && localName(node) === 'slot') {
      var opts = dict();
      opts.flatten = true;
      var assigned = null;
      try {
        assigned = apply(assignedNodes, node, [opts]);
      } catch (e) { /* not a slot */ }
      if (assigned && assigned.length > 0) {
        var i;
        for (i = 0; i < assigned.length && !o.nodeCap; i++) {
          visit(o, assigned[i], depth);
        }
        return;
      }
    }
  }
  var c = firstChild(parent);
  while (c && !o.nodeCap) {
    visit(o, c, depth);
    c = nextSibling(c);
  }
}

function visit(o, node, depth) {
  o.visited++;
  if (o.visited > o.maxNodes) {
    o.nodeCap = true;
    return;
  }
  var t = nodeTypeOrZero(node);
  if (t === 3) {
    addText(o, node, depth);
    return;
  }
  if (t !== 1 || node === host) {
    return;
  }
  var ln = localName(node);
  if (SKIP[ln] === true || (o.skip && apply(weakGet, o.skip, [node]))) {
    return;
  }
  if (hiddenAttr(node) || (ln === 'input' && inputType(node) === 'hidden')) {
    return;
  }
  var st = null;
  var shown = true;
  if (o.live) {
    st = computed(node);
    if (cssValue(st, 'display') === 'none') {
      return;
    }
    var vis = cssValue(st, 'visibility');
    shown = vis !== 'hidden' && vis !== 'collapse';
    if (shown && o.filter === 'visible') {
      shown = inView(rectOf(node), o.vw, o.vh) || cssValue(st, 'display') === 'contents';
    }
  } else {
    var inline = lower(attrStr(node, 'style'));
    if (contains(replaceAll(inline, ' ', ''), 'display:none')) {
      return;
    }
  }
  var role = roleOf(node, ln);
  if (role !== '' && LEAF[role] !== true && STRUCTURE[role] !== true && INTERACTIVE[role] !== true) {
    role = ''; // generic, paragraph, presentation and the like: shown through its content
  }
  if (role === '' || (role === 'img' && o.inLeaf)) {
    if (NO_CHILDREN[ln] === true) {
      return;
    }
    var block = INLINE[ln] !== true;
    if (o.live) {
      var disp = cssValue(st, 'display');
      block = apply(strIndexOf, disp, ['inline']) !== 0 && disp !== 'contents';
    }
    if (ln === 'br') {
      if (o.pending !== '') {
        o.pending = o.pending + ' '; // a line break joins the text around it
      }
      return;
    }
    if (block) {
      flushText(o);
    }
    var saveShown = o.textShown;
    // A label's text is its field's name, shown on the field's line.
    o.textShown = shown && !(ln === 'label' && labelledControl(node));
    walkChildren(o, node, depth);
    o.textShown = saveShown;
    if (block) {
      flushText(o);
    }
    return;
  }
  flushText(o);
  var interactive = INTERACTIVE[role] === true;
  var emit = shown && (!o.inLeaf || interactive) && (o.filter !== 'interactive' || interactive);
  var line = '';
  var name = '';
  if (emit) {
    name = nameOf(node, ln, role, o.live);
    if (role === 'img' && name === '') {
      emit = false;
    }
  }
  var at = -1;
  if (emit) {
    line = indent(depth) + role + (name === '' ? '' : ' ' + quote(name)) + states(node, ln, role);
    var val = role === 'textbox' || role === 'searchbox' || role === 'combobox' || role === 'spinbutton' ||
      role === 'slider' || role === 'listbox' ? fieldValue(node, ln) : null;
    if (val !== null && val !== '') {
      line = line + ' value=' + quote(collapse(val, MAX_NAME));
    } else if (isPassword(node)) {
      line = line + ' [password]';
    } else if (isSensitive(node)) {
      line = line + ' [secret]';
    }
    if (role === 'link') {
      var dest = linkDest(o, node, ln);
      if (dest !== '') {
        line = line + ' -> ' + dest;
      }
    }
    var otherSite = ln === 'iframe' && o.live ? frameLine(o, node) : '';
    line = line + otherSite;
    if (o.live && otherSite === '' && !o.full && o.chars + line.length + 12 <= o.walkBudget) {
      line = line + ' [' + refFor(node) + ']';
    }
    if (pushLine(o, line, true)) {
      at = o.lines.length - 1;
    }
  }
  if (ln === 'iframe' && o.live) {
    frameContent(o, node, at >= 0 && o.filter !== 'interactive' ? depth + 1 : depth, shown);
    return;
  }
  if (NO_CHILDREN[ln] === true) {
    return;
  }
  var childDepth = at >= 0 && o.filter !== 'interactive' ? depth + 1 : depth;
  var saveLeaf = o.inLeaf;
  var saveShown2 = o.textShown;
  if (LEAF[role] === true || STRUCTURE[role] !== true && role !== '') {
    o.inLeaf = o.inLeaf || LEAF[role] === true;
  }
  o.textShown = shown;
  walkChildren(o, node, childDepth);
  flushText(o);
  o.inLeaf = saveLeaf;
  o.textShown = saveShown2;
  if (at >= 0 && LEAF[role] !== true && !o.full) {
    var kids = o.lines.length - at - 1;
    if (kids === 0 && name === '' && o.filter !== 'interactive') {
      popLine(o); // an empty list or row says nothing
    } else if (kids === 1 && name === '') {
      var child = o.lines[at + 1];
      if (FOLD[role] === true && isElementLine(child) && o.filter !== 'interactive') {
        // A list item or cell holding one element says no more than that element.
        popLine(o);
        popLine(o);
        pushLine(o, apply(strSlice, child, [1]), false);
      } else if (isTextLine(child) && indentOf(child) === childDepth) {
        var merged = o.lines[at];
        var refAt = apply(strIndexOf, merged, [' [e']);
        var text = apply(strSlice, child, [childDepth]);
        popLine(o);
        popLine(o);
        merged = refAt >= 0 ? apply(strSlice, merged, [0, refAt]) + ' ' + text + apply(strSlice, merged, [refAt]) : merged + ' ' + text;
        pushLine(o, merged, false);
      }
    }
  }
}

function labelledControl(node) {
  try {
    return labelControlG ? apply(labelControlG, node, []) : null;
  } catch (e) {
    return null;
  }
}

function linkDest(o, node, ln) {
  var raw = attrOf(node, 'href');
  if (typeof raw !== 'string') {
    return '';
  }
  var u = null;
  if (o.live) {
    var g = ln === 'a' ? anchorHrefG : ln === 'area' ? areaHrefG : null;
    if (g) {
      try {
        u = parseURLOrNull('' + apply(g, node, []), undefined);
      } catch (e) { /* not a link element */ }
    }
  }
  if (!u) {
    u = parseURLOrNull(raw, o.base);
  }
  if (!u) {
    return cut(collapse(raw, 200), 200);
  }
  var p = urlPart(u, urlProtocolG);
  if (p !== 'http:' && p !== 'https:') {
    return p;
  }
  if (urlPart(u, urlOriginG) === o.origin && urlPart(u, urlPathnameG) === o.path) {
    // On this page: its fragment, or its other query (relative references, as in HTML).
    var q = urlPart(u, urlSearchG);
    var h = urlPart(u, urlHashG);
    if (q === o.query && h !== '') {
      return cut(h, 120);
    }
    if (q !== '') {
      return cut(q + h, 120);
    }
  }
  return cut(shortDest(u, o.origin), 120);
}

// overlays lists the open dialogs, popup listboxes and menus, outermost only.
function overlays() {
  var found = queryDoc('dialog[open], [role=dialog], [role=alertdialog], [aria-modal=true], [role=listbox], [role=menu]');
  var out = list();
  var i;
  for (i = 0; i < found.length; i++) {
    var node = found[i];
    if (node === host || localName(node) === 'select' || hiddenAttr(node) || !shownLive(node)) {
      continue;
    }
    var inside = false;
    var j;
    for (j = 0; j < found.length; j++) {
      if (found[j] !== node && within(found[j], node) && shownLive(found[j])) {
        inside = true;
        break;
      }
    }
    if (!inside) {
      put(out, out.length, node);
    }
  }
  return out;
}

// An outline line is indented one space per level; a text line is a quoted string, an
// element line starts with its role; the section headings start with '#', the notes with an
// ellipsis.
function indentOf(line) {
  var i = 0;
  while (i < line.length && apply(charCodeAt, line, [i]) === 32) {
    i++;
  }
  return i;
}
function isTextLine(line) {
  return apply(charCodeAt, line, [indentOf(line)]) === 34;
}
function isElementLine(line) {
  var c = apply(charCodeAt, line, [indentOf(line)]);
  return c >= 97 && c <= 122;
}

// withoutDest is a link line without its " -> destination", or the line itself.
function withoutDest(line) {
  var i = indentOf(line);
  if (apply(strSlice, line, [i, i + 5]) !== 'link ') {
    return line;
  }
  var q = apply(strLastIndexOf, line, ['"']);
  var a = apply(strIndexOf, line, [' -> ', q < 0 ? i : q]);
  if (a < 0) {
    return line;
  }
  var r = apply(strLastIndexOf, line, [' [e']);
  return r > a ? apply(strSlice, line, [0, a]) + apply(strSlice, line, [r]) : apply(strSlice, line, [0, a]);
}

// finishOutline fits the collected lines to the budget: text lines go first, from the end,
// then link destinations, then the outline is cut, and each is said in a last line.
function finishOutline(o) {
  var lines = o.lines;
  var total = o.chars;
  var droppedText = false;
  var i;
  if (total > o.budget) {
    var drop = dict();
    for (i = lines.length - 1; i >= 0 && total > o.budget; i--) {
      if (isTextLine(lines[i])) {
        drop[i] = true;
        total = total - lines[i].length - 1;
        droppedText = true;
      }
    }
    var kept = list();
    for (i = 0; i < lines.length; i++) {
      if (drop[i] !== true) {
        put(kept, kept.length, lines[i]);
      }
    }
    lines = kept;
  }
  // Then link destinations, from the end (the ref still clicks; query gives the href).
  var droppedDest = false;
  for (i = lines.length - 1; i >= 0 && total > o.budget; i--) {
    var bare = withoutDest(lines[i]);
    if (bare !== lines[i]) {
      total = total - (lines[i].length - bare.length);
      lines[i] = bare;
      droppedDest = true;
    }
  }
  var text = '';
  var chars = 0;
  var refs = 0;
  var more = o.more;
  for (i = 0; i < lines.length; i++) {
    var line = lines[i];
    if (chars + line.length + 1 > o.budget) {
      break;
    }
    text = text + (i ? '\n' : '') + line;
    chars = chars + line.length + 1;
    if (contains(line, ' [e')) {
      refs++;
    }
  }
  var cut = i < lines.length || o.full;
  for (; i < lines.length; i++) {
    if (isElementLine(lines[i])) {
      more++;
    }
  }
  if (droppedText && droppedDest) {
    text = text + (text === '' ? '' : '\n') + ELLIPSIS + ' (text and link destinations left out to fit the budget; capture_page has the text, query the hrefs)';
  } else if (droppedText) {
    text = text + (text === '' ? '' : '\n') + ELLIPSIS + ' (some text left out to fit the budget; capture_page has the page\'s text)';
  } else if (droppedDest) {
    text = text + (text === '' ? '' : '\n') + ELLIPSIS + ' (link destinations left out to fit the budget; query by ref gives the href)';
  }
  if (cut) {
    text = text + (text === '' ? '' : '\n') + ELLIPSIS + ' (truncated: ' + more + (o.nodeCap ? '+' : '') +
      ' more elements; use ref= or filter= to see more)';
  } else if (o.nodeCap) {
    text = text + (text === '' ? '' : '\n') + ELLIPSIS + ' (truncated: the page has more than ' + o.maxNodes + ' nodes; use ref= to see a part)';
  }
  var r = dict();
  r.outline = text;
  r.truncated = cut || droppedText || droppedDest || o.nodeCap;
  r.refs = refs;
  return r;
}

// toolOutline answers the outline tool. find passes wide: the whole page (its bounds
// instead of the answer's) with longer text lines.
function toolOutline(args, wide) {
  checkArgs(args, 'outline', allowed(['budget', 'ref', 'filter']));
  var budget = intArg(args, 'budget', 3000, 200, 100000);
  var ref = strArg(args, 'ref', false, 20);
  var filter = strArg(args, 'filter', false, 20);
  if (filter === null) {
    filter = ref === null ? 'visible' : 'all';
  }
  if (filter !== 'visible' && filter !== 'interactive' && filter !== 'all') {
    refuse('filter must be "visible", "interactive" or "all"');
  }
  var o = newOutline(filter, budget, true, href());
  if (wide === true) { // (the dispatcher passes its callback here)
    o.budget = FIND_BUDGET;
    o.walkBudget = FIND_BUDGET;
    o.maxNodes = FIND_NODES;
    o.textMax = MAX_TEXT_LINE;
  }
  if (ref !== null) {
    visit(o, byRef(ref), 0);
    flushText(o);
    return noneShown(finishOutline(o), filter);
  }
  var root = bodyOf ? apply(bodyOf, doc, []) : null;
  if (!root) {
    root = apply(documentElement, doc, []);
  }
  if (!root) {
    return finishOutline(o);
  }
  var ovs = overlays();
  var depth = 0;
  if (ovs.length > 0) {
    o.skip = new WeakMapC();
    pushLine(o, OVERLAYS_HEAD, false);
    var i;
    var saveFilter = o.filter;
    if (o.filter === 'visible') {
      o.filter = 'all'; // an open overlay is shown whole, within the budget
    }
    for (i = 0; i < ovs.length; i++) {
      visit(o, ovs[i], 1);
      flushText(o);
      apply(weakSet, o.skip, [ovs[i], true]);
    }
    o.filter = saveFilter;
    pushLine(o, PAGE_HEAD, false);
    depth = 1;
  }
  walkChildren(o, root, depth);
  flushText(o);
  var r = finishOutline(o);
  if (r.outline === '' && filter === 'all') {
    r.outline = '(nothing to show: the page shows no text or elements yet)';
  }
  return noneShown(r, filter);
}
function noneShown(r, filter) {
  if (r.outline === '') {
    r.outline = '(nothing to show with filter ' + filter + (filter === 'all' ? ': the element is hidden)' : '; try filter all)');
  }
  return r;
}
