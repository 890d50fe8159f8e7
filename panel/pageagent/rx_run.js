// ---- Remixlet operations. -------------------------------------------------------------------
//
// The proxy relays a remixlet's dom.* calls as {type:'op', id, remixlet, op, args}; each runs
// here under the page policy and is answered with {type:'result', id, ok, value | error}. The
// proxy has already applied the static checks; the ones repeated here keep the page safe even
// if it did not, and the ones that need the DOM (password fields, handles) live only here.
//   - Handles: one table per remixlet, number -> element, in this closure. A handle from
//     another remixlet's table is unknown here, so a remixlet acts only on what it obtained.
//   - Password fields (type=password, or autocomplete naming a current or new password, a
//     one-time code or a card: isSensitive) read back empty through text, attr('value'), value
//     and key and input events (judged on the event's composed path, so inside open shadow
//     roots too, and withheld when the real target may host a closed shadow root); their
//     type, autocomplete, pattern, minlength, maxlength and value cannot be set; they cannot
//     be moved to another form; while the page has one, a selector mentioning "value", a
//     field-state pseudo-class (or using an escape or comment) is refused, and while one is
//     sized by its content (field-sizing) dom.rect and dom.style are refused.
//   - Elements that load, navigate or change how the page is fetched (isLoader: meta, link,
//     base, script, style, iframe, form, media, svg a/use/animate ...) take no attribute write
//     but class, hidden, title, lang, dir and aria-*, and no text or content (a form's
//     content excepted).
//   - Attributes that load or run something are refused; an address anywhere in another
//     attribute's value follows the address rule. href (on links) and src (on images)
//     follow the address rule (checkAddress): the page's origin, the hosts the proxy allowed
//     for this op (the remixlet's own sites and fetch: hosts), an address the page already
//     loads exactly as written, or a data: image; never javascript:, blob: or anything else.
//     The element gets the resolved absolute address, and for setAttr, create and setHTML only
//     if the browser reads it as one the proxy resolved, checked and guarded (Op.addrs).
//   - dom.create and dom.setHTML build only allow-listed elements (CREATE_TAGS; SVG ones in
//     the SVG namespace, inside svg); setHTML parses in an inert DOMParser document and copies
//     what passes into new elements of this document, never the parsed nodes or a string.
//   - Clones: password fields blanked (value and value attribute), refused attributes and
//     elements stripped. Clicks are checked against what they would activate (links and
//     forms must stay on the page's origin; formaction, other targets and ping are refused).
//   - Every element a remixlet changes or creates carries its mark, data-remixlet-<8 hex>.
//   - Inline styles may not load anything (url(), image-set(), @import, escapes, comments).
// Page changes are reported as {type:'mutated'} (the first at once, then at most every 16 ms) once a remixlet has run an
// operation; the agent's own changes are taken out of the observer's queue before they count.

var HIDDEN_ATTR = 'data-remixlet-hidden';
var MUTATION_DEBOUNCE_MS = 16;
var opHosts = null;   // the hosts the proxy allowed for the op being run (Op.hosts)
var opRelative = false; // the op's addresses were written relative (Op.rel)
var opAddrs = null;     // setAttr, create, setHTML: the addresses the proxy checked (Op.addrs), as a set

var observer = null;   // the page-change observer, started on the first operation
var mutationTimer = 0;
var mutationDirty = false; // a change came during the cooldown

function mutationCooldown() {
  if (mutationDirty) {
    mutationDirty = false;
    send(message('mutated'));
    mutationTimer = later(mutationCooldown, MUTATION_DEBOUNCE_MS);
    return;
  }
  mutationTimer = 0;
}
function arg(args, i) {
  return args !== null && typeof args === 'object' ? own(args, i) : undefined;
}
function stringArg(args, i, what) {
  var v = arg(args, i);
  if (typeof v !== 'string') {
    refuse(what + ' must be a string');
  }
  return v;
}

// ---- Release: the proxy stopped a remixlet on this page. ----

function release(req) {
  var rx = own(req, 'remixlet');
  if (shortID(rx) === '') {
    return;
  }
  var t = tables ? apply(mapGet, tables, [rx]) : undefined;
  if (t) {
    var l = t.on;
    var i;
    for (i = 0; l && i < l.length && removeEventListener; i++) {
      try {
        apply(removeEventListener, l[i].node, [l[i].type, l[i].fn, false]);
      } catch (e) { /* gone */ }
    }
    apply(mapDelete, tables, [rx]);
  }
  menuRelease(rx);
  waitRelease(rx);
  var rec = styleSheets ? apply(mapGet, styleSheets, [rx]) : undefined;
  if (rec) {
    emptySheets(rec);
  }
  dropOwnMutations();
}

// WRITES are the operations that could unmask a field the page masks (op() notes the masked
// fields they touch first): attributes and classes (selectors), and taking fields out of the
// document or moving them. Not setStyle (it cannot set -webkit-text-security or all) nor hide
// (display does not change the mask), the ops a keep repeats most.
var WRITE_NAMES = ['setText', 'setAttr', 'addClass', 'removeClass', 'remove', 'insert', 'setHTML'];
var WRITES = allowed(WRITE_NAMES);
// OWN_WRITES are the operations whose changes to the page are the remixlet's own, not the page's
// (the mirror watch leaves them out; dom.click and dom.focus run the page's handlers, which
// write as the page): WRITES and the style ops.
var OWN_WRITES = allowed(WRITE_NAMES, ['setStyle', 'hide', 'show', 'addStyle']);

// ops runs one operation and returns its JSON value (undefined for none).
function op(t, name, args) {
  if (name === 'query' || name === 'queryAll') {
    return opQuery(t, args, name === 'queryAll');
  }
  if (name === 'create') {
    return opCreate(t, arg(args, 0));
  }
  if (name === 'addStyle') {
    var css = stringArg(args, 0, 'the stylesheet');
    addStyle(t.rx, css, arg(args, 1)); // and its own copy (rx_sheets.js)
    return undefined;
  }
  var node = element(t, arg(args, 0));
  if (WRITES[name] === true) {
    // A write may unmask a field the page's styles mask (a class, a removal): remember them
    // first (rx_policy.js isMasked).
    noteMasked(node);
    if (name === 'insert') {
      noteMasked(element(t, arg(args, 1)));
    }
  }
  if (name === 'text') {
    return opText(node);
  } else if (name === 'attr') {
    var an = lower(stringArg(args, 1, 'the attribute name'));
    if (an === 'value' && isSensitive(node) || isMirror(node, an)) {
      return ''; // rx_mirrors.js
    }
    return attrOf(node, an);
  } else if (name === 'value') {
    return opValue(node);
  } else if (name === 'setText') {
    var txt = stringArg(args, 1, 'the text');
    var ln = localName(node);
    if ((isLoader(node) && lower(ln) !== 'form') || isSensitive(node) || isPageFrame(node)) {
      refuse('the text of ' + ln + ' elements cannot be set');
    }
    refuseOffsiteForm(node, '');
    text(node, txt);
    mark(t, node, '');
  } else if (name === 'setAttr') {
    opSetAttr(t, node, stringArg(args, 1, 'the attribute name'), arg(args, 2));
  } else if (name === 'addClass' || name === 'removeClass') {
    var cls = stringArg(args, 1, 'the class name');
    if (cls === '' || cls.length > 128 || contains(cls, ' ')) {
      refuse('"' + cls + '" is not one class name');
    }
    var cl = classListOf ? apply(classListOf, node, []) : null;
    if (!cl || !tokenAdd || !tokenRemove) {
      refuse('this element has no classes');
    }
    apply(name === 'addClass' ? tokenAdd : tokenRemove, cl, [cls]);
    mark(t, node, name === 'addClass' ? cls : '');
  } else if (name === 'setStyle') {
    opSetStyle(t, node, arg(args, 1));
  } else if (name === 'hide') {
    apply(setProperty, styleOfNode(node), ['display', 'none', 'important']);
    attr(node, HIDDEN_ATTR, '');
    mark(t, node, '');
  } else if (name === 'show') {
    if (apply(hasAttribute, node, [HIDDEN_ATTR])) {
      unattr(node, HIDDEN_ATTR);
      apply(removeProperty, styleOfNode(node), ['display']);
    }
  } else if (name === 'on') {
    opOn(t, node, arg(args, 1), arg(args, 2));
  } else if (name === 'remove') {
    if (isPageFrame(node)) {
      refuse('the page\'s html, head and body elements cannot be removed');
    }
    apply(elementRemove, node, []);
  } else if (name === 'insert') {
    opInsert(t, node, element(t, arg(args, 1)), arg(args, 2));
  } else if (name === 'clone') {
    return opClone(t, node, arg(args, 1));
  } else if (name === 'setHTML') {
    return opSetHTML(t, node, arg(args, 1));
  } else if (name === 'rect') {
    return opRect(node);
  } else if (name === 'style') {
    return opStyle(node, arg(args, 1));
  } else if (name === 'focus') {
    requireHTML(node, 'dom.focus');
    apply(focus, node, []);
  } else if (name === 'scrollIntoView') {
    if (!scrollIntoViewFn) {
      refuse('this browser cannot scroll here');
    }
    apply(scrollIntoViewFn, node, []);
  } else if (name === 'click') {
    opClick(node);
  } else {
    refuse('dom.' + name + ' is not available in this page agent');
  }
  return undefined;
}

// ownOp runs op; what a write of the remixlet's changes in the page is not the page's writing
// (rx_mirrors.js remixletWrites).
function ownOp(t, name, args) {
  if (OWN_WRITES[name] !== true) {
    return op(t, name, args);
  }
  return remixletWrites(function () {
    return op(t, name, args);
  });
}

function runOp(req) {
  var m = message('result');
  m.id = own(req, 'id');
  var rx = own(req, 'remixlet');
  try {
    if (shortID(rx) === '') {
      refuse('unknown remixlet');
    }
    if (!observer) {
      observe();
    }
    opHosts = own(req, 'hosts');
    opRelative = own(req, 'rel') === true;
    opAddrs = addressSet(own(req, 'op'), own(req, 'addrs'));
    var v = own(req, 'op') === 'waitFor' ? waitFor(tableFor(rx), req) : ownOp(tableFor(rx), own(req, 'op'), own(req, 'args'));
    opHosts = null;
    opAddrs = null;
    if (v === WAITING) {
      return; // answered when an element matches or the wait ends (rx_wait.js)
    }
    m.ok = true;
    m.value = v === undefined ? null : v;
  } catch (e) {
    opHosts = null;
    opAddrs = null;
    m.ok = false;
    m.error = e !== null && typeof e === 'object' && own(e, 'mark') === REFUSAL ? e.why : 'the operation failed in the page';
  }
  dropOwnMutations();
  send(m);
}

// observe starts reporting page changes to the proxy, so rmx.keep checks run again.
function observe() {
  if (typeof MO !== 'function' || !moObserve) {
    observer = true;
    return;
  }
  // The first change is reported at once (a keep repairs within the frame); changes during
  // the next MUTATION_DEBOUNCE_MS are coalesced into one notice at its end.
  observer = new MO(function () {
    if (pageChangeHolds()) {
      return; // a secret is being typed: one report after it (rx_mirrors.js)
    }
    if (mutationTimer) {
      mutationDirty = true;
      return;
    }
    send(message('mutated'));
    mutationTimer = later(mutationCooldown, MUTATION_DEBOUNCE_MS);
  });
  var opts = dict();
  opts.childList = true;
  opts.subtree = true;
  opts.attributes = true;
  opts.characterData = true;
  apply(moObserve, observer, [doc, opts]);
}
// dropOwnMutations takes the records of the operation just run out of the observer's queue:
// the agent's own changes must not wake rmx.keep (a repair would otherwise trigger itself).
function dropOwnMutations() {
  if (observer && observer !== true && moTakeRecords) {
    try {
      apply(moTakeRecords, observer, []);
    } catch (e) { /* nothing queued */ }
  }
}

function reloadPage() {
  if (typeof locationReload === 'function') {
    try {
      apply(locationReload, loc, []);
    } catch (e) { /* reload refused */ }
  }
}
