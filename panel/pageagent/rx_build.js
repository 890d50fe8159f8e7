// ---- create, insert, clone, setHTML. ----

var MAX_HTML_NODES = 2000;
var MAX_CREATE_NODES = 500;

// makeElement creates an allow-listed element of this document, in the SVG namespace inside
// svg. It refuses anything else.
function makeElement(tag, inSVG) {
  if (typeof tag !== 'string') {
    refuse('the tag must be a string');
  }
  tag = lower(tag);
  if (CREATE_TAGS[tag] !== true && SVG_TAGS[tag] !== true) {
    refuse('element <' + tag + '> refused: only layout, text, form control (not form), img and simple SVG elements can be created');
  }
  if (inSVG && SVG_TAGS[tag] !== true) {
    refuse('element <' + tag + '> refused inside svg: only path, circle, rect, line, polyline, polygon, g and text');
  }
  if (!inSVG && SVG_TAGS[tag] === true && tag !== 'svg') {
    refuse('element <' + tag + '> refused outside svg');
  }
  if (SVG_TAGS[tag] === true) {
    if (!createElementNS) {
      refuse('this browser cannot create SVG elements here');
    }
    return apply(createElementNS, doc, [SVG_NS, tag]);
  }
  return apply(createElement, doc, [tag]);
}

function buildSpec(t, spec, inSVG, depth, count) {
  if (spec === null || typeof spec !== 'object') {
    refuse('an element spec must be an object {tag, attrs?, text?, children?}');
  }
  count.n = count.n + 1;
  if (count.n > MAX_CREATE_NODES || depth > 16) {
    refuse('the spec has more than ' + MAX_CREATE_NODES + ' elements or is nested deeper than 16');
  }
  var tag = own(spec, 'tag');
  var el = makeElement(tag, inSVG);
  var tagName = localName(el);
  var attrs = own(spec, 'attrs');
  if (attrs !== undefined && attrs !== null) {
    if (typeof attrs !== 'object') {
      refuse('attrs must be an object of attribute names and values');
    }
    var names = objectKeys(attrs);
    var i;
    for (i = 0; i < names.length; i++) {
      var n = lower(names[i]);
      attr(el, n, checkAttr(el, n, own(attrs, names[i])));
    }
  }
  var txt = own(spec, 'text');
  if (txt !== undefined && txt !== null) {
    if (typeof txt !== 'string') {
      refuse('text must be a string');
    }
    if (isSensitive(el)) {
      refuse('a password field has no text');
    }
    text(el, txt);
  }
  var children = own(spec, 'children');
  if (children !== undefined && children !== null) {
    var len = typeof children === 'object' ? own(children, 'length') : undefined;
    if (typeof len !== 'number') {
      refuse('children must be an array of element specs');
    }
    for (var c = 0; c < len; c++) {
      apply(appendChild, el, [buildSpec(t, own(children, c), inSVG || tagName === 'svg', depth + 1, count)]);
    }
  }
  attr(el, t.mark, '');
  attr(el, OWN_ATTR, '');
  return el;
}

function opCreate(t, spec) {
  var count = dict();
  count.n = 0;
  return handleFor(t, buildSpec(t, spec, false, 0, count));
}

// holdsLoading reports whether node is or contains an element that loads or runs something.
function holdsLoading(node) {
  if (nodeType(node) !== 1) {
    return false;
  }
  if (LOADING_TAGS[localName(node)] === true && localName(node) !== 'form') {
    return true;
  }
  var found = apply(querySelectorAllEl, node, ['script,style,link,meta,base,iframe,frame,frameset,object,embed,portal,applet,noscript,template']);
  return apply(nodeListLength, found, []) > 0;
}

function opInsert(t, target, node, position) {
  if (position === undefined || position === null) {
    position = 'append';
  }
  if (position !== 'before' && position !== 'after' && position !== 'prepend' && position !== 'append') {
    refuse('the position must be "before", "after", "prepend" or "append"');
  }
  if (node === host || target === host || isPageFrame(node)) {
    refuse('the page\'s html, head and body elements cannot be moved');
  }
  if (holdsLoading(node)) {
    refuse('elements that load or run something (script, iframe, object, link, style ...) cannot be moved');
  }
  var into = position === 'prepend' || position === 'append' ? target : parentOf(target);
  if (!into || nodeType(into) !== 1 || target === apply(documentElement, doc, []) && into !== target) {
    refuse('there is no element to insert into there');
  }
  if (RAW_TARGETS[localName(into)] === true || (isLoader(into) && localName(into) !== 'form')) {
    refuse('nothing can be inserted into ' + localName(into) + ' elements');
  }
  checkFormOwners(node, into);
  if (offsiteFormAction(into) !== '') {
    refuse('nothing can be inserted into a form that is sent to ' + offsiteFormAction(into) + ', not to the page\'s origin');
  }
  if (nsOf(into) === SVG_NS && nsOf(node) !== SVG_NS) {
    refuse('only SVG elements can be inserted into SVG');
  }
  if (position === 'append') {
    apply(appendChild, target, [node]);
  } else if (position === 'prepend') {
    apply(insertBefore, target, [node, firstChild(target)]);
  } else if (position === 'before') {
    apply(insertBefore, into, [node, target]);
  } else {
    apply(insertBefore, into, [node, nextSibling(target)]);
  }
  mark(t, node, '');
}

// checkFormOwners refuses a move of node into into that would put a password (or other
// sensitive) field node holds under another form: submitted by the person with that form,
// its value would go to that form's address.
function checkFormOwners(node, into) {
  var fields = isSensitive(node) ? null : apply(querySelectorAllEl, node, ['input,textarea']);
  var n = fields ? apply(nodeListLength, fields, []) : 1;
  var target = nearestForm(into, null);
  var i;
  for (i = 0; i < n; i++) {
    var f = fields ? apply(nodeListItem, fields, [i]) : node;
    if (!isSensitive(f) || apply(hasAttribute, f, ['form'])) {
      continue; // a form attribute names the form by id, wherever the field is
    }
    // Its form after the move: one between it and node (they move together), else into's.
    var inside = nearestForm(f === node ? null : parentOf(f), node);
    var after = inside !== null ? inside : target;
    if (after !== nearestForm(f, null)) {
      refuse('a password field cannot be moved to another form (or out of its own)');
    }
  }
}
// nearestForm returns the nearest <form> from n up (stopping after stop, when given), or null.
function nearestForm(n, stop) {
  while (n && nodeType(n) === 1) {
    if (nsOf(n) === HTML_NS && localName(n) === 'form') {
      return n;
    }
    if (n === stop) {
      return null;
    }
    n = parentOf(n);
  }
  return null;
}

// scrub makes a clone safe to keep: elements that load or run something and SVG or MathML
// elements outside the SVG allow-list are removed, refused attributes stripped (href and src
// kept only where the address rule passes), password fields blanked.
function scrub(node, count) {
  count.n = count.n + 1;
  if (count.n > 20000) {
    refuse('the element is too large to clone');
  }
  var child = firstChild(node);
  while (child) {
    var next = nextSibling(child);
    var type = nodeType(child);
    if (type === 1) {
      var ns = nsOf(child);
      var tag = localName(child);
      if (LOADING_TAGS[tag] === true || (ns === SVG_NS && SVG_TAGS[tag] !== true) || (ns !== SVG_NS && ns !== HTML_NS)) {
        apply(removeChildFn, node, [child]);
      } else {
        scrubElement(child);
        scrub(child, count);
      }
    } else if (type !== 3) {
      apply(removeChildFn, node, [child]); // comments, processing instructions
    }
    child = next;
  }
}
function scrubElement(el) {
  var names = getAttributeNames ? apply(getAttributeNames, el, []) : null;
  if (!names) {
    refuse('this browser cannot list attributes');
  }
  // A password field stays one (its type, autocomplete ... are kept as they are) and is
  // blanked: no value attribute, an empty value.
  var pw = isSensitive(el);
  if (pw) {
    unattr(el, 'value');
    if (localName(el) === 'textarea') {
      // A textarea's text is its default value: the clone keeps none of it.
      var tc = firstChild(el);
      while (tc) {
        apply(removeChildFn, el, [tc]);
        tc = firstChild(el);
      }
      if (textareaSetValue) {
        apply(textareaSetValue, el, ['']);
      }
    } else if (inputSetValue) {
      apply(inputSetValue, el, ['']);
    }
  }
  var n = names.length;
  var i;
  for (i = 0; i < n; i++) {
    var name = '' + names[i];
    var ln = lower(name);
    if (ln === 'style' || (apply(strSlice, ln, [0, MARK_PREFIX.length]) === MARK_PREFIX) ||
        (pw && PASSWORD_LOCKED[ln] === true) || CLONE_KEEPS[ln] === true) {
      continue; // the page's own inline style, marks, a password field's type, rel and the like stay
    }
    try {
      var v = checkAttr(el, ln, attrOf(el, name));
      if (ln === 'href' || ln === 'src') {
        attr(el, ln, v);
      }
    } catch (e) {
      unattr(el, name);
    }
  }
}

function opClone(t, node, deep) {
  if (!cloneNodeFn || !getAttributeNames) {
    refuse('this browser cannot clone here');
  }
  var tag = localName(node);
  var ns = nsOf(node);
  if (LOADING_TAGS[tag] === true || node === host || (ns === SVG_NS && SVG_TAGS[tag] !== true) || (ns !== SVG_NS && ns !== HTML_NS)) {
    refuse('<' + tag + '> elements cannot be cloned');
  }
  var copy = apply(cloneNodeFn, node, [deep === true]);
  var count = dict();
  count.n = 0;
  carryPasswords(node, copy, count);
  count.n = 0;
  scrubElement(copy);
  scrub(copy, count);
  attr(copy, t.mark, '');
  markOwn(copy);
  return handleFor(t, copy);
}

// sanitizeInto copies the allow-listed part of a parsed (inert) node's children into into, as
// new nodes of this document.
function sanitizeInto(src, into, inSVG, depth, count) {
  var child = firstChild(src);
  while (child) {
    count.n = count.n + 1;
    if (count.n > MAX_HTML_NODES) {
      refuse('the HTML has more than ' + MAX_HTML_NODES + ' nodes');
    }
    var type = nodeType(child);
    if (type === 3) {
      apply(appendChild, into, [apply(createTextNode, doc, ['' + apply(nodeValueOf, child, [])])]);
    } else if (type === 1 && depth < 32) {
      var tag = localName(child);
      var ns = nsOf(child);
      var ok = inSVG ? ns === SVG_NS && SVG_TAGS[tag] === true
        : (ns === HTML_NS && CREATE_TAGS[tag] === true) || (ns === SVG_NS && tag === 'svg');
      if (ok) {
        var el = makeElement(tag, inSVG);
        copyAttrs(child, el, count);
        attr(el, OWN_ATTR, '');
        sanitizeInto(child, el, inSVG || tag === 'svg', depth + 1, count);
        apply(appendChild, into, [el]);
      } else {
        leftOut(count, '<' + tag + '> (not an allowed element; left out with its content)');
      }
    } else if (type === 1) {
      leftOut(count, '<' + localName(child) + '> (nested too deep)');
    } else if (type !== 8) {
      leftOut(count, 'a node of type ' + type);
    }
    child = nextSibling(child);
  }
}
// leftOut records what setHTML left out, for its answer (and so the remixlet's log).
function leftOut(count, what) {
  if (count.left.length < 50) {
    put(count.left, count.left.length, what);
  }
}
function copyAttrs(from, to, count) {
  var names = apply(getAttributeNames, from, []);
  var n = names.length;
  var i;
  for (i = 0; i < n; i++) {
    var name = '' + names[i];
    if (i >= 64) {
      leftOut(count, '<' + localName(to) + ' ' + name + '> (more than 64 attributes)');
      continue;
    }
    try {
      var v = checkAttr(to, name, attrOf(from, name));
      apply(setAttribute, to, [lower(name) === 'href' || lower(name) === 'src' ? lower(name) : name, v]);
    } catch (e) {
      leftOut(count, '<' + localName(to) + ' ' + name + '>: ' + (own(e, 'mark') === REFUSAL ? e.why : 'not a valid attribute'));
    }
  }
}

function opSetHTML(t, node, html) {
  if (typeof html !== 'string' || html.length > 65536) {
    refuse('the HTML must be a string of at most 65536 characters');
  }
  refuseOffsiteForm(node, '');
  if (typeof ParserCtor !== 'function' || !parseFromString || !getAttributeNames || !createTextNode ||
      !createFragment || !firstChildOf || !nextSiblingOf || !nodeTypeOf) {
    refuse('this browser cannot parse HTML inertly here');
  }
  var tag = localName(node);
  if (isPageFrame(node) || RAW_TARGETS[tag] === true || nsOf(node) !== HTML_NS || isSensitive(node) ||
      (isLoader(node) && tag !== 'form')) {
    refuse('the content of ' + tag + ' elements cannot be set');
  }
  var parsed;
  try {
    parsed = apply(parseFromString, new ParserCtor(), [html, 'text/html']);
  } catch (e) {
    refuse('the page does not allow parsing HTML (Trusted Types?); use dom.create');
  }
  var body = bodyOf ? apply(bodyOf, parsed, []) : null;
  var head = headOf ? apply(headOf, parsed, []) : null;
  var frag = apply(createFragment, doc, []);
  var count = dict();
  count.n = 0;
  count.left = list();
  if (head && firstChild(head)) {
    var hc = firstChild(head);
    while (hc) {
      leftOut(count, '<' + localName(hc) + '> (not an allowed element; left out with its content)');
      hc = nextSibling(hc);
    }
  }
  if (body) {
    sanitizeInto(body, frag, false, 0, count);
  }
  var markChild = firstChild(frag);
  while (markChild) {
    if (nodeType(markChild) === 1) {
      attr(markChild, t.mark, '');
    }
    markChild = nextSibling(markChild);
  }
  var c = firstChild(node);
  while (c) {
    apply(removeChildFn, node, [c]);
    c = firstChild(node);
  }
  apply(appendChild, node, [frag]);
  mark(t, node, '');
  return count.left;
}
