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
//     a secret was typed (a strength meter, a length counter, a preview: textMirrorMarks).
// Late mirrors (OPEN-ITEMS 107, mirrors7): the watch stays on after the key's task for as long as
// a typed secret is held - from a key into a sensitive field the page agent sees that leaves one
// holding a value, until the fields have been found empty for HELD_GRACE_MS (looks every
// HELD_POLL_MS: a form reset or a script emptying the field fires no input event, and a debounce
// may still write after it) - and what the page writes meanwhile is a mirror too, whatever
// it holds: an attribute other than class (lateWrites: dom.attr reads it empty; comparing its
// value in a selector is refused while an element holding such a write is in the document,
// mirroredName - presence tests answer), a text (a debounced length
// counter, a strength label). The marks stay for the element's life. Class names are left out:
// class selectors answer the same question and cannot be refused (item 106), so blanking
// dom.attr(el, 'class') would cost honest remixlets and stop nobody. What a remixlet's own
// operations write is not the page's (remixletWrites). The agent's page tools show the same
// marks to the model as HIDDEN_WHILE_TYPED (tool_read.js, tool_outline.js, tool_names.js).
// Inserted elements (inserted8): a page often builds an element and sets its attributes before
// it puts it in the document (an aria-label "7 characters", a data-len, a child's title); the
// observer then sees the insertion, not the attributes. An element the page inserts during a
// watch (in a key's task or late) is remembered (insertedMarks: the inserted root only, no walk
// of its subtree), and every attribute but class of it or of an element inside it (insertedIn,
// looking up at most MAX_MIRROR_DEPTH ancestors) counts as written then, for its life (a clone
// carries it). The cost: a widget the page inserts while a password is typed (an autocomplete
// list, a tooltip, a "show password" button that appears at the first key, a form a framework
// re-mounts) reads blank to dom.attr and is shown hidden to the model for its life, id and
// aria-label included; an element the page moves out of it later reads again.
// Value mirrors (reviewb7): a page may write the length into another control's value property
// (a readonly counter input), which no observer sees. So during a watch the page agent looks at
// the values of the page's other fields (lookAtValues: at a secret key, at the end of its task,
// at each look at the held fields, at a read of a value); a field whose value changed between
// two looks, other than by the person's own input into it, is a value mirror for its life:
// dom.value reads it empty.
// An in-page sign-in (OPEN-ITEMS 123, secret8): a single-page app that signs in often keeps its
// filled form in the DOM, hidden. The late watch ends as soon as the fields that hold a value are
// all out of the layout (display: none on them or around them: fieldsHolding, checkVisibility),
// looked at when the page's writes are noted and at each look: the dashboard rendered in the
// task that hid the form reads normally. So too when the field last typed into has left the
// document and no sensitive field holds a value (inserted8: an app that replaced its form with
// the dashboard, which would otherwise be an inserted element for its life, above). A page that hides its field and keeps writing copies of
// it is not watched then (nor what it wrote in that same task).
// The page writing into a remixlet's element (secret8): during a watch, an element remixlets made
// that the page writes into loses its own mark (rx_sheets.js disown), so the own copies of the
// remixlets' sheets no longer select it.
// What the watch does not see: a mirror inside a shadow root or a frame, one already in the
// markup, one written after the grace; a secret typed into a closed shadow root counts when its
// input event reaches the document with a host we cannot see into (secretEvent). The stylesheet
// rule holds for those.

var recordAttributeName = getter(proto(win.MutationRecord), 'attributeName');
var recordType = getter(proto(win.MutationRecord), 'type');
var eventTypeOf = getter(proto(win.Event), 'type');
var recordAddedNodes = getter(proto(win.MutationRecord), 'addedNodes');
var checkVisibilityFn = win.Element ? win.Element.prototype.checkVisibility : undefined;
// MAX_TEXT_MIRROR_LEN bounds the text of an element taken as a text mirror: a strength meter, a
// counter or a preview is short; a container (the body) that merely got a child in the same
// task as a key is not one, or every text read of the page would be blank.
var MAX_TEXT_MIRROR_LEN = 256;
var textMirrorMarks = new WeakMapCtor(); // element -> 1: its text the page wrote while a secret was typed or held
var textMirrorHolders = new WeakMapCtor(); // element -> true: a text mirror was inside it when noted
var textMirrorCount = 0;                   // text mirrors noted in this document
var MAX_MIRROR_DEPTH = 1024;               // ancestors looked at from a text mirror
var mirrorTaint = new WeakMapCtor(); // element -> dict of attribute names it mirrored a secret into
var lateWrites = new WeakMapCtor();  // element -> dict of attribute names the page wrote while a typed secret was held
var HIDDEN_WHILE_TYPED = '[hidden while a password is typed]'; // what the model is shown instead
var mirrorNames = dict();            // every such attribute name, for the selector check
var insertedMarks = new WeakMapCtor(); // element -> 1: the page inserted it while a secret was typed or held
var insertedCount = 0;                 // elements so noted in this document
var lateNames = dict();                // every attribute name in lateWrites (mirroredName)
var MAX_MIRRORED_LOOK = 5000;          // elements with the attribute mirroredName looks at
var valueSeen = new WeakMapCtor();    // field -> its value at the watch's last look (lookAtValues)
var valueMirrors = new WeakMapCtor(); // field -> 1: the page changed its value during a watch
var valuesLookedNow = false;          // isValueMirror looked in this task already
var secretTyped = false;             // a secret was typed into a field of the page at least once
var mirrorObserver = null;
var mirrorWindow = 0; // the timer that ends the key's watch (0: none)
var mirrorObserving = false; // the observer is connected
var heldWatch = false;       // a typed secret is held: the watch stays on after the key's task
var heldPoll = 0;            // the timer of the next look at the fields (0: none)
var heldEmptyPolls = 0;      // the looks in a row that found the fields empty (timers, not the clock)
var heldSeen = false;        // a sensitive field was seen holding a value during the late watch
var heldField = null;        // the sensitive field of the last secret key seen (heldFieldLeft)
var HELD_POLL_MS = 500;
var HELD_GRACE_MS = 2000;    // a debounce or a fetch after the field was emptied still counts
// beforeinput comes before input, and is the first event of a paste from the menu, a drop or
// an autofill: a page may write its mirror there, before any input event.
var MIRROR_EVENTS = ['keydown', 'keyup', 'beforeinput', 'input', 'change', 'paste', 'cut'];

// watchMirrors registers the capture listeners; the observer runs only during a watch.
function watchMirrors() {
  var i;
  for (i = 0; i < MIRROR_EVENTS.length; i++) {
    on(win, MIRROR_EVENTS[i], noteSecretTyping, true);
  }
  on(win, 'pointerdown', notePersonMovesFocus, true);
  on(win, 'keydown', notePersonMovesFocus, true);
  on(win, 'focusout', noteFocusLeaves, true);
  on(win, 'focusin', noteFocusArrives, true);
}

// The focus taken from a secret field (reviewc8). While the person types a password, a remixlet
// (dom.focus, or dom.click on a label of its own input) or the page (an auto-advance that finds
// the next box by id, and finds a remixlet's element of that id first) can move the focus to an
// element of a remixlet's (an input, an editable div), and the person's next keys go there, where
// the remixlet reads them (its value, its key events). So when the focus leaves a sensitive
// field, not by the person's pointer or Tab, for an element of a remixlet's own (OWN_ATTR), the
// focus goes back to that field, and the element, if a field, is sensitive for its life
// (rememberPassword): its value reads back empty. The person's own moves (a click, a tap, Tab)
// are not this.
var personMovingFocus = false; // a trusted pointerdown or Tab in this task
var focusLeftSecret = null;    // the sensitive field the focus just left, not by the person

// notePersonMovesFocus notes a trusted pointerdown or Tab key, which moves the focus in its task.
function notePersonMovesFocus(ev) {
  if (ev.isTrusted !== true || personMovingFocus) {
    return;
  }
  if (keyOf && '' + apply(eventTypeOf, ev, []) === 'keydown' && '' + apply(keyOf, ev, []) !== 'Tab') {
    return;
  }
  personMovingFocus = true;
  later(personMovedFocus, 0);
}
function personMovedFocus() {
  personMovingFocus = false;
}

// noteFocusLeaves notes the sensitive field the focus leaves, when not by the person's move.
function noteFocusLeaves(ev) {
  var path = eventPath(ev);
  focusLeftSecret = !personMovingFocus && path.length > 0 && isSensitive(path[0]) ? path[0] : null;
}

// noteFocusArrives gives the focus back to the secret field it came from when it came to an
// element of a remixlet's own (see above).
function noteFocusArrives(ev) {
  var from = focusLeftSecret;
  focusLeftSecret = null;
  var path = eventPath(ev);
  if (!from || path.length === 0 || nodeType(path[0]) !== 1) {
    return;
  }
  var el = path[0];
  if (!apply(hasAttribute, el, [OWN_ATTR]) || isSensitive(el)) {
    return;
  }
  rememberPassword(el); // rx_policy.js: read back empty, as a password (fields only)
  try {
    apply(focus, from, []);
  } catch (e) { /* the field is gone */ }
}

// noteSecretTyping starts a watch when ev comes from a sensitive field, or (an input, beforeinput
// or change event, which only fields and editable elements fire) from a host we cannot see into.
function noteSecretTyping(ev) {
  var path = eventPath(ev);
  var secret = false;
  var i;
  for (i = 0; i < path.length && !secret; i++) {
    secret = isSensitive(path[i]);
    if (secret) {
      heldField = path[i];
    }
  }
  var known = secret; // a field we see: whether it still holds a value can be told
  if (!secret && path.length > 0) {
    var type = '';
    try {
      type = '' + apply(eventTypeOf, ev, []);
    } catch (e) { /* not an event */ }
    secret = (type === 'input' || type === 'beforeinput' || type === 'change') && secretEvent(path);
  }
  if (!secret) {
    personTypedValue(ev, path);
    return;
  }
  if (mirrorWindow === 0) {
    lookAtValues(heldWatch); // once a key's task (its end looks again: endMirrorWatch)
  }
  if (!secretTyped) {
    secretTyped = true;
    endRefusedWaits(); // rx_wait.js: a wait on [data-len="7"] must not match the mirror
    dropPageSheets();  // rx_sheets.js: no remixlet rule keyed on the page from now on
  }
  holdPageChanges();
  if (typeof MO !== 'function' || !moObserve || !moDisconnect || !recordTarget || !recordAttributeName) {
    return;
  }
  if (!mirrorObserver) {
    mirrorObserver = new MO(noteMirrors);
  }
  if (known) {
    // The late watch, only for a field seen: a closed shadow root's cannot be told held or
    // empty, and every key typed into any of its fields would hide what the page writes next.
    if (!heldWatch) {
      heldSeen = false;
    }
    heldWatch = true;
    heldEmptyPolls = 0;
  }
  if (!mirrorObserving) {
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
    mirrorObserving = true;
  }
  cancel(mirrorWindow);
  // The page's handlers of this event, and the microtasks they queue, run within this task; a
  // timer of 0 ms runs after them.
  mirrorWindow = later(endMirrorWatch, 0);
  if (heldWatch && heldPoll === 0) {
    heldPoll = later(lookAtHeld, HELD_POLL_MS);
  }
}

// endMirrorWatch ends the key's watch: what the page writes from now on is a late write.
function endMirrorWatch() {
  flushMirrors();
  lookAtValues(true);
  mirrorWindow = 0;
  if (heldWatch && !heldSeen) {
    // A key that left every field empty (a Tab into a password field, a key on an empty
    // one): nothing is held, no late watch.
    heldSeen = secretFilled();
    heldWatch = heldSeen;
  }
  if (!heldWatch) {
    stopMirrorObserver();
  }
}
function stopMirrorObserver() {
  try {
    apply(moDisconnect, mirrorObserver, []);
  } catch (e) { /* not observing */ }
  mirrorObserving = false;
}

// lookAtHeld ends the late watch once the sensitive fields have been empty for HELD_GRACE_MS.
function lookAtHeld() {
  heldPoll = 0;
  if (!heldWatch) {
    return;
  }
  lookAtValues(true);
  var held = fieldsHolding(true);
  if (held === 2) {
    heldSeen = true;
    heldEmptyPolls = 0;
  } else if ((held === 1 || held === 0 && heldFieldLeft()) && mirrorWindow === 0) {
    flushMirrors(); // ends the hold, if the fields were put away since the last records
    if (heldWatch) {
      endHold();
    }
    return;
  } else if (++heldEmptyPolls > HELD_GRACE_MS / HELD_POLL_MS && mirrorWindow === 0) {
    flushMirrors();
    endHold();
    return;
  }
  heldPoll = later(lookAtHeld, HELD_POLL_MS);
}

// endHold ends the late watch.
function endHold() {
  heldWatch = false;
  cancel(heldPoll);
  heldPoll = 0;
  stopMirrorObserver();
}

// lookAtValues notes the values of the page's fields other than the sensitive ones; with mark,
// a field whose value changed since the last look is a value mirror (see the top of the file).
function lookAtValues(mark) {
  eachField(doc, function (f) {
    if (isSensitive(f)) {
      return false;
    }
    var v;
    try {
      v = '' + apply(localName(f) === 'input' ? inputValue : textareaValue, f, []);
    } catch (e) {
      return false;
    }
    var was = apply(weakGet, valueSeen, [f]);
    if (mark && typeof was === 'string' && was !== v) {
      apply(weakSet, valueMirrors, [f, 1]);
    }
    apply(weakSet, valueSeen, [f, v]);
    return false;
  }, 0);
}

// personTypedValue takes the value of a field the person's own input just changed (a trusted
// event of MIRROR_EVENTS, before the page's handlers) as seen: their typing is not a mirror.
function personTypedValue(ev, path) {
  if (ev.isTrusted !== true || path.length === 0) {
    return;
  }
  var f = path[0];
  var ln = nodeType(f) === 1 ? localName(f) : '';
  if ((ln === 'input' || ln === 'textarea') && typeof apply(weakGet, valueSeen, [f]) === 'string') {
    try {
      apply(weakSet, valueSeen, [f, '' + apply(ln === 'input' ? inputValue : textareaValue, f, [])]);
    } catch (e) { /* read at the next look */ }
  }
}

// isValueMirror reports whether the page wrote el's value while a secret was typed or held
// (during a watch, looked at now: a debounce may have written since the last look).
function isValueMirror(el) {
  if ((heldWatch || mirrorWindow !== 0) && !valuesLookedNow) {
    lookAtValues(true);
    valuesLookedNow = true; // a tool's hundred fields: one look
    later(valuesLookedLater, 0);
  }
  return apply(weakGet, valueMirrors, [el]) === 1;
}
function valuesLookedLater() {
  valuesLookedNow = false;
}

// remixletWrites runs fn, a remixlet's operation that writes into the page, and leaves what it
// wrote out of the watch: the records queued before are noted first, those it queued dropped.
// (A page's custom element that answers the write synchronously, attributeChangedCallback, is
// dropped with it.)
function remixletWrites(fn) {
  if (!mirrorObserving || !moTakeRecords) {
    return fn();
  }
  flushMirrors();
  try {
    return fn();
  } finally {
    try {
      apply(moTakeRecords, mirrorObserver, []);
    } catch (e) { /* nothing queued */ }
  }
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
  var late = mirrorWindow === 0; // after the key's task, while a typed secret is held
  var n = records.length;
  var i;
  var held = n > 0 && (heldWatch || !late) ? fieldsHolding(true) : 2;
  if (held === 1 || held === 0 && heldFieldLeft()) {
    // Signed in: the filled fields are out of the layout (OPEN-ITEMS 123), or the field typed
    // into left the document and no other holds a value (an app that replaced its form with
    // the dashboard: inserted8). What the page wrote in this task (a dashboard) is not a
    // mirror; nothing after it is watched. (Also within a key's task: the change event of the
    // field's blur opens one, and the click on Sign in may come before it ends.)
    endHold();
    return;
  }
  for (i = 0; i < n; i++) {
    try {
      var el = apply(recordTarget, records[i], []);
      var kind = recordType ? '' + apply(recordType, records[i], []) : 'attributes';
      if (kind === 'characterData') {
        disown(apply(parentNodeOf, el, [])); // rx_sheets.js
        noteTextMirror(apply(parentNodeOf, el, []));
        continue;
      }
      if (kind === 'childList') {
        disown(el);
        var added = recordAddedNodes ? apply(recordAddedNodes, records[i], []) : null;
        var m = added ? apply(nodeListLength, added, []) : 0;
        var k;
        for (k = 0; k < m; k++) {
          var a = apply(nodeListItem, added, [k]);
          noteInserted(a);
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
      disown(el);
      name = lower(name);
      if (late && name === 'class') {
        continue; // class selectors tell the same (item 106): see the top of this file
      }
      var marks = late ? lateWrites : mirrorTaint;
      var set = apply(weakGet, marks, [el]);
      if (!set) {
        set = dict();
        apply(weakSet, marks, [el, set]);
      }
      set[name] = true;
      if (!late) {
        mirrorNames[name] = true;
      } else {
        lateNames[name] = true;
      }
    } catch (e) { /* not a record */ }
  }
}

// noteInserted remembers el, an element the page inserted while a secret was typed or held: its
// attributes, and those of the elements inside it, were set before it was in the document (an
// aria-label "7 characters", a data-len, a child's title), so the observer saw no attribute
// record. Only the inserted root is remembered (a big subtree is not walked); insertedIn looks
// up from an element read.
function noteInserted(el) {
  if (!el || el === host || nodeType(el) !== 1 || apply(weakGet, insertedMarks, [el]) === 1) {
    return;
  }
  apply(weakSet, insertedMarks, [el, 1]);
  insertedCount++;
}

// insertedIn reports whether node is an element the page inserted while a secret was typed or
// held, or inside one (at most MAX_MIRROR_DEPTH ancestors, as textMirrorIn).
function insertedIn(node) {
  return insertedCount > 0 && markedIn(insertedMarks, node);
}

// markedIn reports whether node, or one of its ancestors (at most MAX_MIRROR_DEPTH), is marked 1
// in marks.
function markedIn(marks, node) {
  var depth = 0;
  while (node && depth++ < MAX_MIRROR_DEPTH) {
    if (nodeType(node) === 1 && apply(weakGet, marks, [node]) === 1) {
      return true;
    }
    node = apply(parentNodeOf, node, []);
  }
  return false;
}

// noteTextMirror remembers el (an element whose text or children the page changed while a
// secret was typed or held: a strength meter, a length counter, a preview) as a text mirror,
// and its ancestors as holding one (for the agent's capture_page).
function noteTextMirror(el) {
  if (!el || el === host || nodeType(el) !== 1 || isPageFrame(el) || apply(weakGet, textMirrorMarks, [el]) === 1 ||
      ('' + apply(getTextContent, el, [])).length > MAX_TEXT_MIRROR_LEN) {
    return;
  }
  apply(weakSet, textMirrorMarks, [el, 1]);
  textMirrorCount++;
  var up = el;
  var depth = 0;
  while (up && depth++ < MAX_MIRROR_DEPTH) {
    up = apply(parentNodeOf, up, []);
    if (up && nodeType(up) === 1) {
      apply(weakSet, textMirrorHolders, [up, true]);
    }
  }
}

// textMirrorIn reports whether node is a text mirror or inside one.
function textMirrorIn(node) {
  flushMirrors();
  return textMirrorCount > 0 && markedIn(textMirrorMarks, node);
}
function isTextMirror(el) {
  return textMirrorCount > 0 && apply(weakGet, textMirrorMarks, [el]) === 1;
}
// carriesMirror reports whether el holds what the page wrote while a secret was typed or held: an
// attribute (mirrorTaint, lateWrites) or its text (textMirrorMarks), its own or, for a clone,
// its source's (carryMirrors). Such an element is not one of the remixlet's own (rx_sheets.js
// markOwn): the own copies of its sheets could compare what it holds (a clone of the page's
// data-len mirror, [data-len="7"]), which no query may then.
function carriesMirror(el) {
  return !!apply(weakGet, mirrorTaint, [el]) || !!apply(weakGet, lateWrites, [el]) || isTextMirror(el);
}
// holdsTextMirror reports whether a text mirror was inside el when it was noted (a hint: an
// element moved since is not known at its new place).
function holdsTextMirror(el) {
  return textMirrorCount > 0 && apply(weakGet, textMirrorHolders, [el]) === true;
}

// pageWroteWhileTyped reports whether the page wrote attribute name (lowercase) of el while a
// secret was typed or held (the marks alone, for the agent's page tools: the proxy's redaction
// stage takes out copies of the value): it changed the attribute then, or it inserted el or an
// element around it then (every attribute but class and the remixlets' marks: insertedIn).
function pageWroteWhileTyped(el, name) {
  flushMirrors();
  var set = apply(weakGet, mirrorTaint, [el]);
  var late = apply(weakGet, lateWrites, [el]);
  if (set && set[name] === true || late && late[name] === true) {
    return true;
  }
  return insertedCount > 0 && name !== 'class' && apply(strSlice, name, [0, MARK_PREFIX.length]) !== MARK_PREFIX && insertedIn(el);
}

// mirroredName reports whether a selector may not compare the value of attribute name
// (lowercase, as the selector check parsed it) because an element of the document holds one the
// page wrote while a secret was held (late, or inserted: pageWroteWhileTyped): a remixlet's
// dom.query('#box span[title="7 chars"]') would tell the length as a title or aria-label, which
// selectors may otherwise compare (COMPARABLE_ATTRS). For as long as such an element is in the
// document, every comparison of that name is refused (a control's too); a presence test
// ([title]) still answers. More than MAX_MIRRORED_LOOK elements with it: refused.
function mirroredName(name) {
  flushMirrors();
  if (lateNames[name] !== true && insertedCount === 0 || name === 'class') {
    return false;
  }
  var found;
  try {
    found = apply(querySelectorAllDoc, doc, ['[' + name + ']']);
  } catch (e) {
    return true; // not a name the browser takes: refused
  }
  var n = apply(nodeListLength, found, []);
  if (n > MAX_MIRRORED_LOOK) {
    return true;
  }
  var i;
  for (i = 0; i < n; i++) {
    if (pageWroteWhileTyped(apply(nodeListItem, found, [i]), name)) {
      return true;
    }
  }
  return false;
}

// isMirror reports whether attribute name (lowercase) of el may hold what is typed into a
// sensitive field: the page wrote it while one was typed into, or el is such a field and the
// attribute is not one of those a selector may compare (COMPARABLE_ATTRS).
function isMirror(el, name) {
  if (pageWroteWhileTyped(el, name)) {
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
  return fieldsHolding(false) !== 0;
}
// fieldsHolding looks at the sensitive fields as secretFilled does: 0 none holds a value, 2 one
// does; with rendering, 2 only for one the browser renders, and 1 when those that hold one are
// all out of the layout (display: none on them or around them, checkVisibility): a single-page
// app that signed in and kept its form, hidden (the late watch ends then: lookAtHeld).
function fieldsHolding(rendering) {
  var held = 0;
  var fields = apply(querySelectorAllDoc, doc, ['input,textarea']);
  var n = apply(nodeListLength, fields, []);
  var i;
  for (i = 0; i < n; i++) {
    var f = apply(nodeListItem, fields, [i]);
    if (secretFieldValue(f) !== '' && isSensitive(f)) {
      if (!rendering || rendered(f)) {
        return 2;
      }
      held = 1;
    }
  }
  var shadowed = sensitiveFields();
  for (i = 0; i < shadowed.length; i++) {
    if (secretFieldValue(shadowed[i]) !== '') {
      if (!rendering || rendered(shadowed[i])) {
        return 2;
      }
      held = 1;
    }
  }
  return held;
}
// heldFieldLeft reports whether the sensitive field last typed into is no longer in the
// document (a form the page removed at sign-in; a field emptied and kept is not: its grace).
function heldFieldLeft() {
  if (heldField === null || !isConnected) {
    return false;
  }
  try {
    return apply(isConnected, heldField, []) === false;
  } catch (e) {
    return false;
  }
}

// rendered reports whether the browser renders field f (true when it cannot tell).
function rendered(f) {
  if (typeof checkVisibilityFn !== 'function') {
    return true;
  }
  try {
    return apply(checkVisibilityFn, f, []) !== false;
  } catch (e) {
    return true;
  }
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

// carryMirrors gives copy (a clone of src) src's mirrors: attributes and text.
function carryMirrors(src, copy) {
  var set = apply(weakGet, mirrorTaint, [src]);
  if (set) {
    apply(weakSet, mirrorTaint, [copy, set]);
  }
  var late = apply(weakGet, lateWrites, [src]);
  if (late) {
    apply(weakSet, lateWrites, [copy, late]);
  }
  if (isTextMirror(src)) {
    apply(weakSet, textMirrorMarks, [copy, 1]);
    textMirrorCount++;
  }
  if (insertedIn(src)) {
    noteInserted(copy);
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
