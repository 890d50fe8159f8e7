// ---- type and set_field. ----

// typeable returns 'input', 'textarea' or 'editable' for an element text can be typed into,
// or refuses saying why not.
function typeable(node) {
  var ln = localName(node);
  var what = describe(node, true);
  if (isPassword(node)) {
    refuse(what + ' is a password field; the agent never types passwords: ask the person to type it');
  }
  if (ln === 'input') {
    var t = inputType(node);
    if (NOT_TYPED[t] === true) {
      refuse(what + ' is a ' + t + ' input: text cannot be typed into it' +
        (t === 'checkbox' || t === 'radio' || t === 'submit' || t === 'button' ? '; use click' : ''));
    }
  } else if (ln === 'select') {
    refuse(what + ' is a drop-down list; use select');
  } else if (ln !== 'textarea') {
    var ce = isContentEditableG ? apply(isContentEditableG, node, []) === true : false;
    if (!ce) {
      refuse(what + ' is not a text field (an input, a text area or an editable element)');
    }
    return 'editable';
  }
  if (matches(node, ':disabled')) {
    refuse(what + ' is disabled');
  }
  if (hasAttr(node, 'readonly')) {
    refuse(what + ' is read-only');
  }
  return ln;
}
function currentValue(node, kind) {
  if (kind === 'input') {
    return '' + apply(inputValue, node, []);
  }
  if (kind === 'textarea') {
    return '' + apply(textareaValue, node, []);
  }
  return innerTextG ? '' + apply(innerTextG, node, []) : '';
}
// setValue writes a field's value through the prototype's own setter, not the element's
// (which a framework such as React wraps to track its state), then tells the page with
// input and change events, as typing would.
function setValue(node, kind, value, inputType, data) {
  if (kind === 'editable') {
    if (!execCommandFn) {
      refuse('this browser cannot type into an editable element for the agent');
    }
    focusOn(node);
    var ed = ownerDoc(node) || doc; // a frame's editable element edits in the frame's document
    if (inputType === 'replace') {
      apply(execCommandFn, ed, ['selectAll', false, null]);
      if (value === '') {
        apply(execCommandFn, ed, ['delete', false, null]);
      }
    }
    if (data !== '') {
      apply(execCommandFn, ed, ['insertText', false, data]);
    }
    return;
  }
  var set = kind === 'input' ? inputSetValue : textareaSetValue;
  if (!set) {
    refuse('this browser cannot type for the agent');
  }
  apply(set, node, [value]);
  fireInput(node, inputType === 'replace' ? 'insertReplacementText' : inputType, data);
}
// editNatively types text into a text field the way the browser's own editing does
// (execCommand insertText on the field's selection), so the page sees trusted beforeinput
// and input events, as from a person's keyboard. It does so only when the field is focused
// and its selection is exactly where the text belongs (all of it to replace, the end to
// append), never into another element, and reports whether the field changed; where the
// browser would not edit (a field type without a selection, an unfocused document, a page
// that cancels beforeinput) nothing changed and the caller sets the value itself.
function editNatively(node, kind, text, clear, before) {
  if (!execCommandFn || !selectFn[kind] || !setRangeFn[kind] || !selStartG[kind] || !selEndG[kind] || text === '') {
    return false;
  }
  var ed = ownerDoc(node) || doc;
  try {
    if (activeDeep() !== node || apply(selStartG[kind], node, []) === null) {
      return false; // not focused, or a field type without a text selection (email, number)
    }
    var n = before.length;
    if (clear) {
      apply(selectFn[kind], node, []);
    } else {
      apply(setRangeFn[kind], node, [n, n]);
    }
    if (apply(selStartG[kind], node, []) !== (clear ? 0 : n) || apply(selEndG[kind], node, []) !== n) {
      return false;
    }
    apply(execCommandFn, ed, ['insertText', false, text]);
  } catch (e) {
    return false;
  }
  return currentValue(node, kind) !== before;
}
function typeInto(node, text, clear) {
  var kind = typeable(node);
  focusOn(node);
  var before = currentValue(node, kind);
  var value = clear ? text : before + text;
  if (kind !== 'editable') {
    var max = num(+attrStr(node, 'maxlength'));
    if (hasAttr(node, 'maxlength') && max >= 0 && value.length > max) {
      value = apply(strSlice, value, [0, max]);
    }
  }
  var trusted = kind !== 'editable' && editNatively(node, kind, text, clear, before);
  if (!trusted) {
    setValue(node, kind, value, clear ? 'replace' : 'insertText', text);
  }
  if (kind !== 'editable') {
    fireEvent(node, 'change');
  }
  var res = dict();
  res.typed = describe(node, true);
  if (trusted) {
    res.events = 'the browser\'s own editing (trusted input events)';
  }
  var now2 = currentValue(node, kind);
  res.value = cut(now2, 400);
  res.verified = kind === 'editable' ? contains(now2, text) : now2 === value;
  if (!res.verified) {
    res.note = 'the field shows something else than what was typed: the page changed or limited it';
  }
  return res;
}
function toolType(args) {
  checkArgs(args, 'type', allowed(['ref', 'text', 'clear']));
  var text = textArg(args, 'text', MAX_TYPE);
  var clear = boolArg(args, 'clear', true);
  return typeInto(target(args), text, clear);
}

// comboLike reports whether a field picks from a list as one types: a combobox or search
// box, a field controlling a listbox, or one with a datalist.
function comboLike(node) {
  var r = roleOf(node, localName(node));
  if (r === 'combobox' || r === 'searchbox') {
    return true;
  }
  if (hasAttr(node, 'aria-autocomplete') || hasAttr(node, 'aria-controls') || hasAttr(node, 'aria-owns') ||
      attrOf(node, 'aria-haspopup') === 'listbox' || hasAttr(node, 'list')) {
    return true;
  }
  return closest(node, '[role=combobox]') !== null;
}
function keyInit(name) {
  var k = KEYS[name];
  var init = makeInit(true);
  init.key = k.key;
  init.code = k.code;
  init.shiftKey = k.shift === true;
  return init;
}
// key dispatches keydown (and keypress for Enter) and keyup of one key to node; it reports
// whether the page let the keydown's default happen.
function key(node, name) {
  if (typeof KeyboardEventCtor !== 'function') {
    refuse('this browser cannot press keys for the agent');
  }
  var k = KEYS[name];
  var down = new KeyboardEventCtor('keydown', keyInit(name));
  legacyCodes(down, k.code === 'Enter' ? 13 : k.keyCode);
  var ok = fire(node, down);
  if (ok && k.key === 'Enter') {
    var press = new KeyboardEventCtor('keypress', keyInit(name));
    legacyCodes(press, 13);
    ok = fire(node, press) && ok;
  }
  var up = new KeyboardEventCtor('keyup', keyInit(name));
  legacyCodes(up, k.keyCode);
  fire(node, up);
  return ok;
}
// legacyCodes gives an event the keyCode and which that older scripts read.
function legacyCodes(ev, code) {
  var d = dict();
  d.value = code;
  d.configurable = true;
  try {
    defineProperty(ev, 'keyCode', d);
    defineProperty(ev, 'which', d);
  } catch (e) { /* keep the defaults */ }
}
// formSubmits checks that submitting form (by a click on its submit button, or by set_field)
// stays on the page's origin and in this window, refusing with doing as the action's words;
// it returns where it goes ('' for a dialog form).
function formSubmits(form, origin, doing) {
  var fm = formMethodG ? '' + apply(formMethodG, form, []) : '';
  if (fm === 'dialog') {
    return '';
  }
  var act = parseURLOrNull(formActionG ? '' + apply(formActionG, form, []) : href(), href());
  if (!act || urlPart(act, urlOriginG) !== origin) {
    refuse('the form submits to ' + (act ? urlPart(act, urlOriginG) : 'an invalid address') +
      ', another site than this page (' + origin + '); ' + doing + ' is refused');
  }
  var tg = targetOf(form, ownerDoc(form) || doc);
  if (otherTarget(tg)) {
    refuse('the form submits into another window or frame (' + (attrOf(form, 'target') === null ? 'the page\'s <base target>' : 'target') +
      '); ' + doing + ' is refused');
  }
  return shortDest(act, origin);
}
function toolSetField(args, done) {
  checkArgs(args, 'set_field', allowed(['ref', 'text', 'submit', 'recent', 'probe', 'expect']));
  var text = textArg(args, 'text', MAX_TYPE);
  var submit = boolArg(args, 'submit', false);
  var node = target(args);
  typeable(node); // a password field is refused before anything else
  var ln = localName(node);
  var fg = formOf[ln];
  var form = fg ? apply(fg, node, []) : null;
  var origin = pageOriginOrEmpty();
  var combo = comboLike(node);
  var dest = null;
  var sname = '';
  if (submit && !combo && form) {
    dest = formSubmits(form, origin, 'submitting it'); // refused before anything is typed
    sname = submitName(form);
    recentClick(own(args, 'recent'), sname, 'the form\'s submission (' + sname + ')');
  }
  if (submit && checked(args)) {
    var db = form && !combo ? defaultButton(form) : null;
    var facts = form && !combo ? activationFacts('submit', db || node, form, db, undefined) : null;
    if (own(args, 'probe') === true) {
      return probed(facts);
    }
    expected(args, facts, 'submitting the form of ' + describe(node, true));
  }
  var res = typeInto(node, text, true);
  if (!submit) {
    return res;
  }
  var before = href();
  if (combo) {
    // Virtualized pickers need the first option highlighted before Enter commits it.
    res.combobox = true;
    runLater('set_field', done, 150, function () {
      key(node, 'ArrowDown');
      runLater('set_field', done, 100, function () {
        key(node, 'Enter');
        runLater('set_field', done, 100, function () {
          res.submitted = 'ArrowDown, Enter';
          res.value = cut(currentValue(node, typeable(node)), 400);
          res.navigated = href() !== before;
          res.url = href();
          done(true, res);
        });
      });
    });
    return PENDING;
  }
  if (sname !== '') {
    res.name = sname; // the proxy's duplicate-submit guard records it like a click
  }
  var go = key(node, 'Enter');
  if (go && form && dest !== null && requestSubmitFn) {
    if (connected(form)) {
      agentActs(requestSubmitFn, form, []);
      res.submitted = 'form';
      if (dest !== '') {
        res.submits = dest;
        res.mayLeave = true;
      }
    }
  } else {
    res.submitted = go ? 'Enter' : 'Enter (the page handled it)';
  }
  res.navigated = href() !== before;
  res.url = href();
  return res;
}

// ---- select. ----

function toolSelect(args) {
  checkArgs(args, 'select', allowed(['ref', 'option', 'options', 'index']));
  var want = strArg(args, 'option', true, 400);
  var node = target(args);
  var what = describe(node, true);
  if (localName(node) !== 'select') {
    refuse(what + ' is not a drop-down list (<select>); for a custom list, click it open and click the option');
  }
  if (matches(node, ':disabled')) {
    refuse(what + ' is disabled');
  }
  var opts = queryIn(node, 'option');
  var w = normal(want);
  var exact = -1;
  var byValue = -1;
  var partial = list();
  var names = '';
  var i;
  for (i = 0; i < opts.length; i++) {
    var full = collapse('' + apply(optionTextG, opts[i], []), 400);
    var t = lower(full);
    var v = optionValueG ? '' + apply(optionValueG, opts[i], []) : '';
    if (i < 30) {
      names = names + (i ? ', ' : '') + quote(cut(full, 40));
    }
    if (t === w && exact < 0) {
      exact = i;
    } else if (v === want && byValue < 0) {
      byValue = i;
    } else if (contains(t, w)) {
      put(partial, partial.length, i);
    }
  }
  // options and index are the chat's own (proxy/chat/oracle.go; never the model's): options
  // lists the options as written, without selecting, and Go decides over their redacted texts
  // which one the option names (a text found only inside a secret names none); index selects it.
  if (own(args, 'options') === true) {
    var listed = list();
    for (i = 0; i < opts.length; i++) {
      var o = dict();
      o.text = collapse('' + apply(optionTextG, opts[i], []), 400);
      o.value = optionValueG ? '' + apply(optionValueG, opts[i], []) : '';
      put(listed, listed.length, o);
    }
    var lr = dict();
    lr.options = listed;
    lr.element = what;
    return lr;
  }
  var pick = exact >= 0 ? exact : byValue >= 0 ? byValue : partial.length === 1 ? partial[0] : -1;
  var index = own(args, 'index');
  if (index !== undefined) {
    if (typeof index !== 'number' || index !== index || index < 0 || index >= opts.length || index !== (index | 0)) {
      refuse('the option index is not one of ' + what);
    }
    pick = index;
  }
  if (pick < 0) {
    refuse((partial.length > 1 ? partial.length + ' options of ' + what + ' contain "' + cut(want, 60) + '"; name one exactly'
      : what + ' has no option "' + cut(want, 60) + '"') + '. Its options: ' + names + (opts.length > 30 ? ', ' + ELLIPSIS : ''));
  }
  if (matches(opts[pick], ':disabled')) {
    refuse('the option "' + cut(want, 60) + '" of ' + what + ' is disabled');
  }
  if (!selectedIndexS) {
    refuse('this browser cannot select for the agent');
  }
  focusOn(node);
  apply(selectedIndexS, node, [pick]);
  fireEvent(node, 'input');
  fireEvent(node, 'change');
  var res = dict();
  res.selected = collapse('' + apply(optionTextG, opts[pick], []), 100);
  res.value = optionValueG ? cut('' + apply(optionValueG, opts[pick], []), 200) : '';
  res.element = what;
  return res;
}
