// Mirrors: attributes the page writes while the person types a secret (red-team pass 6c).
//
// Many sites copy what is typed into a field into an attribute - the field's own data-value, a
// wrapper's data-typed or class, a strength meter's width or aria-valuenow, a length counter -
// for their styles. Such an attribute holds the secret, or a bit of it (its length, whether it is
// empty), where the page policy's field rules (isSensitive) do not look. Which attribute a page
// uses cannot be told from its name, so the page agent watches what the page does: while a key,
// input or change event of a sensitive field is being handled (from our capture listener at the
// window, registered before any page script, to the end of that task), every attribute the page
// changes is a mirror of that element (mirrorTaint). Then:
//   - dom.attr reads a mirror back empty (and any attribute of a sensitive field itself but the
//     ones selectors may compare, rewrite/fieldselectors.go comparableAttrs, and, once a secret
//     was typed, any value that holds a sensitive field's value or a start of it: a copy
//     written later, holdsTypedSecret);
//   - no selector of dom.query, dom.queryAll or dom.waitFor may test a mirror's name, even for
//     presence (fieldSelectorProblem, rx_policy.js); the stylesheets' static rule already
//     refuses comparing the value of attributes outside comparableAttrs;
//   - from the first key of a secret on, for the rest of the document, and while a sensitive
//     field holds a value, no query may compare a data-* value ([data-state="open"] is allowed
//     before: secretOnPage), and waits pending with such a selector end refused at that key,
//     before the page's own handlers can write a mirror (endRefusedWaits, rx_wait.js);
//   - (dom.rect and dom.style are refused while a sensitive field holds a value, mirror or not:
//     rx_layout.js checkLayoutReadable);
//   - a clone carries its source's mirrors (carryPasswords);
//   - page-change reports (rmx.keep) are held while a secret is typed (holdPageChanges);
//   - dom.text leaves out the text of the elements whose text or children the page changed while
//     a secret was typed (a strength meter, a length counter, a preview: textMirrors).
// What a same-task watch does not see: a mirror the page writes later (debounced, after a
// timer or a fetch: dom.attr still blanks a copy of the value, not a length or a mask), inside
// a shadow root, or already in the markup; a secret typed into a closed shadow root counts when its input event reaches the
// document with a host we cannot see into (secretEvent). The stylesheet rule holds for those.

var recordAttributeName = getter(proto(win.MutationRecord), 'attributeName');
var recordType = getter(proto(win.MutationRecord), 'type');
var eventTypeOf = getter(proto(win.Event), 'type');
var recordAddedNodes = getter(proto(win.MutationRecord), 'addedNodes');
// MAX_TEXT_MIRROR_LEN bounds the text of an element taken as a text mirror: a strength meter, a
// counter or a preview is short; a container (the body) that merely got a child in the same
// task as a key is not one, or every text read of the page would be blank.
var MAX_TEXT_MIRROR_LEN = 256;
var textMirrors = list();   // elements whose text the page wrote while a secret was typed
var MAX_TEXT_MIRRORS = 256; // past it every text read is blank (textMirrorsFull)
var textMirrorsFull = false;
var mirrorTaint = new WeakMapCtor(); // element -> dict of attribute names it mirrored a secret into
var mirrorNames = dict();            // every such attribute name, for the selector check
var secretTyped = false;             // a secret was typed into a field of the page at least once
var mirrorObserver = null;
var mirrorWindow = 0; // the timer that ends the current watch (0: none)
// beforeinput comes before input, and is the first event of a paste from the menu, a drop or
// an autofill: a page may write its mirror there, before any input event.
var MIRROR_EVENTS = ['keydown', 'keyup', 'beforeinput', 'input', 'change', 'paste', 'cut'];

// watchMirrors registers the capture listeners; the observer runs only during a watch.
function watchMirrors() {
  var i;
  for (i = 0; i < MIRROR_EVENTS.length; i++) {
    on(win, MIRROR_EVENTS[i], noteSecretTyping, true);
  }
}

// noteSecretTyping starts a watch when ev comes from a sensitive field, or (an input, beforeinput
// or change event, which only fields and editable elements fire) from a host we cannot see into.
function noteSecretTyping(ev) {
  var path = eventPath(ev);
  var secret = false;
  var i;
  for (i = 0; i < path.length && !secret; i++) {
    secret = isSensitive(path[i]);
  }
  if (!secret && path.length > 0) {
    var type = '';
    try {
      type = '' + apply(eventTypeOf, ev, []);
    } catch (e) { /* not an event */ }
    secret = (type === 'input' || type === 'beforeinput' || type === 'change') && secretEvent(path);
  }
  if (!secret) {
    return;
  }
  if (!secretTyped) {
    secretTyped = true;
    endRefusedWaits(); // rx_wait.js: a wait on [data-len="7"] must not match the mirror
  }
  holdPageChanges();
  if (typeof MO !== 'function' || !moObserve || !moDisconnect || !recordTarget || !recordAttributeName) {
    return;
  }
  if (!mirrorObserver) {
    mirrorObserver = new MO(noteMirrors);
  }
  if (mirrorWindow === 0) {
    var opts = dict();
    opts.attributes = true;
    opts.characterData = true;
    opts.childList = true;
    opts.subtree = true;
    try {
      apply(moObserve, mirrorObserver, [doc, opts]);
    } catch (e) {
      return;
    }
  }
  cancel(mirrorWindow);
  // The page's handlers of this event, and the microtasks they queue, run within this task; a
  // timer of 0 ms runs after them.
  mirrorWindow = later(endMirrorWatch, 0);
}

function endMirrorWatch() {
  mirrorWindow = 0;
  flushMirrors();
  try {
    apply(moDisconnect, mirrorObserver, []);
  } catch (e) { /* not observing */ }
}

// flushMirrors notes the records the watch has queued but not yet delivered: another observer
// (a dom.waitFor's) may be called first with the same change, and must not see the attribute
// before it counts as a mirror.
function flushMirrors() {
  if (mirrorObserver && moTakeRecords) {
    try {
      noteMirrors(apply(moTakeRecords, mirrorObserver, []));
    } catch (e) { /* nothing queued */ }
  }
}

function noteMirrors(records) {
  var n = records.length;
  var i;
  for (i = 0; i < n; i++) {
    try {
      var el = apply(recordTarget, records[i], []);
      var kind = recordType ? '' + apply(recordType, records[i], []) : 'attributes';
      if (kind === 'characterData') {
        noteTextMirror(apply(parentNodeOf, el, []));
        continue;
      }
      if (kind === 'childList') {
        var added = recordAddedNodes ? apply(recordAddedNodes, records[i], []) : null;
        var m = added ? apply(nodeListLength, added, []) : 0;
        var k;
        for (k = 0; k < m; k++) {
          var a = apply(nodeListItem, added, [k]);
          noteTextMirror(nodeType(a) === 1 ? a : el);
        }
        if (m === 0) {
          noteTextMirror(el); // text taken out: what is left may say something
        }
        continue;
      }
      var name = apply(recordAttributeName, records[i], []);
      if (typeof name !== 'string' || apply(strSlice, name, [0, MARK_PREFIX.length]) === MARK_PREFIX || name === HIDDEN_ATTR) {
        continue; // a remixlet's own mark
      }
      name = lower(name);
      var set = apply(weakGet, mirrorTaint, [el]);
      if (!set) {
        set = dict();
        apply(weakSet, mirrorTaint, [el, set]);
      }
      set[name] = true;
      mirrorNames[name] = true;
    } catch (e) { /* not a record */ }
  }
}

// noteTextMirror remembers el (an element whose text or children the page changed while a
// secret was typed: a strength meter, a length counter, a preview) as a text mirror.
function noteTextMirror(el) {
  if (!el || nodeType(el) !== 1 || isPageFrame(el) || ('' + apply(getTextContent, el, [])).length > MAX_TEXT_MIRROR_LEN) {
    return;
  }
  var i;
  for (i = 0; i < textMirrors.length; i++) {
    if (textMirrors[i] === el) {
      return;
    }
  }
  if (textMirrors.length >= MAX_TEXT_MIRRORS) {
    textMirrorsFull = true;
    return;
  }
  put(textMirrors, textMirrors.length, el);
}

// textMirrorIn reports whether node is a text mirror or inside one (1), holds one (2), or
// neither (0).
function textMirrorIn(node) {
  flushMirrors();
  if (textMirrorsFull) {
    return 1;
  }
  var holds = 0;
  var i;
  for (i = 0; i < textMirrors.length; i++) {
    var m = textMirrors[i];
    if (apply(nodeContains, m, [node])) {
      return 1;
    }
    if (holds === 0 && apply(nodeContains, node, [m])) {
      holds = 2;
    }
  }
  return holds;
}
function isTextMirror(el) {
  var i;
  for (i = 0; i < textMirrors.length; i++) {
    if (textMirrors[i] === el) {
      return true;
    }
  }
  return false;
}

// isMirror reports whether attribute name (lowercase) of el may hold what is typed into a
// sensitive field: the page wrote it while one was typed into, or el is such a field and the
// attribute is not one of those a selector may compare (COMPARABLE_ATTRS).
function isMirror(el, name) {
  flushMirrors();
  var set = apply(weakGet, mirrorTaint, [el]);
  if (set && set[name] === true) {
    return true;
  }
  return isSensitive(el) && !comparableAttr(name) || holdsTypedSecret(attrOf(el, name));
}

// secretHeld reports whether a sensitive field of the page (or of an open shadow root in it)
// holds a value now.
function secretHeld() {
  var held = false;
  eachField(doc, function (f) {
    if (!isSensitive(f)) {
      return false;
    }
    try {
      held = '' + apply(localName(f) === 'input' ? inputValue : textareaValue, f, []) !== '';
    } catch (e) {
      held = true; // unknown: hold
    }
    return held;
  }, 0);
  return held;
}

// secretOnPage reports whether a query may no longer compare data-* values (datasel7): a secret
// was typed into a field of this document (for the rest of it: a page whose field was emptied
// without an input event, by a form reset or a script, keeps its data-len mirror), or a
// sensitive field holds a value now (a password the browser or the page filled in, which a
// page script may copy with no key typed). Within a batch of tries (tryWaits) the fields are
// looked at once: no page script runs in between.
var heldInBatch = 0; // 0: no batch; 1: in one, not yet known; 2: known empty; 3: known held
function secretOnPage() {
  if (secretTyped) {
    return true;
  }
  if (heldInBatch >= 2) {
    return heldInBatch === 3;
  }
  var held = secretFilled();
  if (heldInBatch === 1) {
    heldInBatch = held ? 3 : 2;
  }
  return held;
}
// inSecretBatch runs fn (a batch of queries in one task) with secretOnPage's look at the fields
// done once.
function inSecretBatch(fn) {
  if (heldInBatch !== 0) {
    fn();
    return;
  }
  heldInBatch = 1;
  try {
    fn();
  } finally {
    heldInBatch = 0;
  }
}
// secretFilled reports whether a sensitive field holds a value: the document's own fields each
// time (a value read first, the costlier sensitivity check only then), those in open shadow
// roots as sensitiveFields found them (at most SENSITIVE_FIELDS_MS ago: walking every element
// on each query of a large React page would cost more than the query).
function secretFilled() {
  var fields = apply(querySelectorAllDoc, doc, ['input,textarea']);
  var n = apply(nodeListLength, fields, []);
  var i;
  for (i = 0; i < n; i++) {
    var f = apply(nodeListItem, fields, [i]);
    if (secretFieldValue(f) !== '' && isSensitive(f)) {
      return true;
    }
  }
  var shadowed = sensitiveFields();
  for (i = 0; i < shadowed.length; i++) {
    if (secretFieldValue(shadowed[i]) !== '') {
      return true;
    }
  }
  return false;
}
// secretFieldValue is an input's or textarea's value ("?" when it cannot be read: unknown, held).
function secretFieldValue(f) {
  try {
    return '' + apply(localName(f) === 'input' ? inputValue : textareaValue, f, []);
  } catch (e) {
    return '?';
  }
}

// holdsTypedSecret reports whether v (an attribute value, another control's value) holds what is in a sensitive field
// now, once a secret was typed: a copy the page writes later than the typing's task (after a
// debounce timer, a fetch), which the watch does not see. v holds it when it contains the
// field's value (of 3 characters or more: shorter ones are in too many values), or is a start
// of it (a copy that lags behind the typing).
function holdsTypedSecret(v) {
  if (!secretTyped || typeof v !== 'string' || v === '') {
    return false;
  }
  var fields = sensitiveFields();
  var i;
  for (i = 0; i < fields.length; i++) {
    var s = '';
    try {
      s = '' + apply(localName(fields[i]) === 'input' ? inputValue : textareaValue, fields[i], []);
    } catch (e) {
      continue;
    }
    if (s !== '' && (s.length >= 3 && contains(v, s) || v.length <= s.length && apply(strSlice, s, [0, v.length]) === v)) {
      return true;
    }
  }
  return false;
}

// sensitiveFields lists the sensitive fields of the page and its open shadow roots, found again
// at most every SENSITIVE_FIELDS_MS (a remixlet reading a thousand attributes walks the page
// once, not a thousand times); their values are read fresh by the caller.
var SENSITIVE_FIELDS_MS = 250;
var sensitiveFieldsAt = -1;
var sensitiveFieldsList = null;
function sensitiveFields() {
  var now = apply(dateNow, null, []);
  if (sensitiveFieldsList === null || now - sensitiveFieldsAt > SENSITIVE_FIELDS_MS || now < sensitiveFieldsAt) {
    var out = list();
    eachField(doc, function (f) {
      if (isSensitive(f)) {
        put(out, out.length, f);
      }
      return false;
    }, 0);
    sensitiveFieldsList = out;
    sensitiveFieldsAt = now;
  }
  return sensitiveFieldsList;
}

// carryMirrors gives copy (a clone of src) src's mirrors.
function carryMirrors(src, copy) {
  var set = apply(weakGet, mirrorTaint, [src]);
  if (set) {
    apply(weakSet, mirrorTaint, [copy, set]);
  }
}

// Page-change reports while a secret is typed. rmx.keep checks run on every report of a page
// change (rx_run.js observe), and a page that changes itself on every key typed into a password
// field (its mirrors, a controlled input's re-render) would let a remixlet count the keys, which
// is the password's length, and time them. While a secret is being typed, and until
// SECRET_QUIET_MS after its last key, the reports are held and then sent as one.
var SECRET_QUIET_MS = 1000;
var secretQuiet = 0;       // the timer that ends the hold (0: not holding)
var pageChangeHeld = false; // a page change came during the hold

function holdPageChanges() {
  cancel(secretQuiet);
  secretQuiet = later(releasePageChanges, SECRET_QUIET_MS);
}
function releasePageChanges() {
  secretQuiet = 0;
  if (pageChangeHeld) {
    pageChangeHeld = false;
    send(message('mutated'));
  }
}
// pageChangeHolds reports whether the page-change observer must hold its report now (and
// remembers that one is due).
function pageChangeHolds() {
  if (secretQuiet === 0) {
    return false;
  }
  pageChangeHeld = true;
  return true;
}
