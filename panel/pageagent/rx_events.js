// dom.on: a remixlet's listeners, and what an event may tell it (nothing of password fields:
// their events are not delivered at all; of an element that may hide one in a closed shadow
// root, no key, input or change events, and its other events without a value).

var MAX_LISTENERS = 1000;
var EVENTS = dict();
EVENTS.click = true;
EVENTS.dblclick = true;
EVENTS.mouseenter = true;
EVENTS.mouseleave = true;
EVENTS.input = true;
EVENTS.change = true;
EVENTS.focus = true;
EVENTS.blur = true;
EVENTS.keydown = true;
EVENTS.keyup = true;
// TYPING_EVENTS come once per key typed, or when typing ends: none is delivered where
// secretEvent says a secret may be typed.
var TYPING_EVENTS = dict();
TYPING_EVENTS.keydown = true;
TYPING_EVENTS.keyup = true;
TYPING_EVENTS.input = true;
TYPING_EVENTS.change = true;

function opOn(t, node, type, listener) {
  if (typeof type !== 'string' || EVENTS[type] !== true) {
    refuse('event ' + type + ' is not supported');
  }
  var id = listener !== null && typeof listener === 'object' ? own(listener, '$listener') : undefined;
  if (typeof id !== 'number') {
    refuse('the listener is missing');
  }
  if (t.listeners >= MAX_LISTENERS) {
    refuse('more than ' + MAX_LISTENERS + ' listeners');
  }
  t.listeners = t.listeners + 1;
  var rx = t.rx;
  var fn = function (ev) {
    var path = eventPath(ev);
    var target = path.length > 0 ? path[0] : null;
    var secret = secretEvent(path);
    if (secret && (TYPING_EVENTS[type] === true || sensitiveOnPath(path))) {
      // Not even a blank event: the number of key and input events of a password field is
      // its length, their times its rhythm (red-team pass 6c); a password field's other
      // events are not delivered either.
      return;
    }
    var data = dict();
    data.type = type;
    data.target = handleFor(t, node);
    if (keyOf && (type === 'keydown' || type === 'keyup')) {
      try {
        data.key = '' + apply(keyOf, ev, []);
      } catch (e) { /* not a keyboard event */ }
    }
    if (secret) {
      // Only an element that may host a closed shadow root: a click or a focus there counts no
      // keys and is delivered without a value. The person's click on a heading or a div is one
      // of these, and must reach a remixlet's click handler.
      data.value = '';
    } else if (target !== null) {
      var n = localName(target);
      if (n === 'input' || n === 'textarea' || n === 'select') {
        try {
          data.value = opValue(target);
        } catch (e) { /* no value */ }
      }
    }
    if (apply(mapGet, tables, [rx]) !== t) {
      return; // released
    }
    var m = message('event');
    m.remixlet = rx;
    m.listener = id;
    m.event = data;
    send(m);
  };
  on(node, type, fn);
  var rec = dict();
  rec.node = node;
  rec.type = type;
  rec.fn = fn;
  put(t.on, t.on.length, rec);
  mark(t, node, '');
}

// eventPath returns the elements an event passes through, the real target first, as far as
// this document can see: composedPath() reaches into open shadow roots (event.target is
// retargeted to their host), and stops at the host of a closed one.
function eventPath(ev) {
  var out = list();
  var p = null;
  try {
    p = composedPathOf ? apply(composedPathOf, ev, []) : null;
  } catch (e) { /* not an event */ }
  if (p === null) {
    try {
      p = list();
      put(p, 0, apply(eventTarget, ev, []));
    } catch (e) { /* not an event */ }
  }
  var n = p !== null && typeof p === 'object' ? p.length : 0;
  var i;
  for (i = 0; i < n; i++) {
    var node = p[i];
    try {
      if (node !== null && typeof node === 'object' && nodeType(node) === 1) {
        put(out, out.length, node);
      }
    } catch (e) { /* the window, not a node */ }
  }
  return out;
}
// SHADOW_HOSTS are the HTML elements that can host a shadow root (custom elements too).
var SHADOW_HOSTS = dict();
(function () {
  var names = ['article', 'aside', 'blockquote', 'div', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
    'header', 'main', 'nav', 'p', 'section', 'span'];
  var i;
  for (i = 0; i < names.length; i++) {
    SHADOW_HOSTS[names[i]] = true;
  }
})();
// sensitiveOnPath reports whether a password (or other sensitive) field is on an event's path.
function sensitiveOnPath(path) {
  var i;
  for (i = 0; i < path.length; i++) {
    if (isSensitive(path[i])) {
      return true;
    }
  }
  return false;
}
// secretEvent reports whether an event must be withheld: a password (or other
// sensitive) field is on its path, or its real target may host a closed shadow root, whose
// inside (a password field, maybe) this document cannot see. Body, elements that can host no
// shadow root and editable elements with the caret in their own content are seen as they are.
function secretEvent(path) {
  if (sensitiveOnPath(path)) {
    return true;
  }
  if (path.length === 0) {
    return false;
  }
  var el = path[0];
  var tag = localName(el);
  if (nsOf(el) !== HTML_NS || (SHADOW_HOSTS[tag] !== true && !contains(tag, '-'))) {
    return false;
  }
  try {
    if ((openShadowRoot && apply(openShadowRoot, el, []) !== null) ||
        (contentEditable && apply(contentEditable, el, []) === true && caretIn(el))) {
      return false;
    }
  } catch (e) { /* unknown: withhold */ }
  return true;
}
var getSelectionFn = win.getSelection;
var selectionFocusNode = getter(proto(win.Selection), 'focusNode');
var nodeContains = win.Node && win.Node.prototype.contains;
// caretIn reports whether the document's selection (the caret) is in el's own content. An
// editable element may also host a closed shadow root (a declarative one even on a div, or a
// custom element's): a key typed into a field inside it targets the host as far as this document
// sees, and the selection is then reported at the host's parent, outside el; a key typed into el
// itself has the caret inside el (red-team pass 6c, OPEN-ITEMS 31).
function caretIn(el) {
  if (typeof getSelectionFn !== 'function' || !selectionFocusNode || !nodeContains) {
    return false;
  }
  var sel = apply(getSelectionFn, win, []);
  var n = sel ? apply(selectionFocusNode, sel, []) : null;
  return !!n && apply(nodeContains, el, [n]) === true;
}
