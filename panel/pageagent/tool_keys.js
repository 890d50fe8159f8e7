// ---- press_keys. ----

var KEYS = dict();
function defKey(name, k, code, keyCode, shift) {
  var d = dict();
  d.key = k;
  d.code = code;
  d.keyCode = keyCode;
  d.shift = shift;
  KEYS[name] = d;
}
defKey('Enter', 'Enter', 'Enter', 13, false);
defKey('Escape', 'Escape', 'Escape', 27, false);
defKey('Tab', 'Tab', 'Tab', 9, false);
defKey('Shift+Tab', 'Tab', 'Tab', 9, true);
defKey('ArrowUp', 'ArrowUp', 'ArrowUp', 38, false);
defKey('ArrowDown', 'ArrowDown', 'ArrowDown', 40, false);
defKey('ArrowLeft', 'ArrowLeft', 'ArrowLeft', 37, false);
defKey('ArrowRight', 'ArrowRight', 'ArrowRight', 39, false);
defKey('PageUp', 'PageUp', 'PageUp', 33, false);
defKey('PageDown', 'PageDown', 'PageDown', 34, false);
defKey('Home', 'Home', 'Home', 36, false);
defKey('End', 'End', 'End', 35, false);
defKey('Backspace', 'Backspace', 'Backspace', 8, false);

var FOCUSABLE = 'a[href], area[href], button, input, select, textarea, summary, iframe, [tabindex], [contenteditable=""], [contenteditable=true]';

// moveFocus does what Tab does: focus the next (or previous) focusable element.
function focusable(n) {
  var ti = attrOf(n, 'tabindex');
  return !ours(n) && !(typeof ti === 'string' && num(+ti) < 0) && !matches(n, ':disabled') &&
    !(localName(n) === 'input' && inputType(n) === 'hidden') && !hiddenAttr(n) && shownLive(n);
}
function moveFocus(from, back) {
  var all = queryDoc(FOCUSABLE);
  var n = all.length;
  var at = -1;
  var i;
  for (i = 0; i < n; i++) {
    if (all[i] === from) {
      at = i;
    }
  }
  var step;
  for (step = 1; step <= n; step++) {
    var idx = back ? (at < 0 ? n - step : (at - step + n) % n) : (at < 0 ? step - 1 : (at + step) % n);
    if (focusable(all[idx])) {
      focusOn(all[idx]);
      return all[idx];
    }
  }
  return null;
}
function toolPressKeys(args) {
  checkArgs(args, 'press_keys', allowed(['keys', 'recent', 'probe', 'expect']));
  var keys = own(args, 'keys');
  if (typeof keys === 'string') {
    var one = list();
    put(one, 0, keys);
    keys = one;
  }
  if (!isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS) {
    refuse('keys must be a list of 1 to ' + MAX_KEYS + ' key names, e.g. ["ArrowDown", "Enter"]');
  }
  var names = list();
  var i;
  for (i = 0; i < keys.length; i++) {
    var k = keys[i];
    if (typeof k !== 'string' || typeof KEYS[k] !== 'object') {
      refuse('key ' + cut('' + k, 30) + ' is not one the agent may press; the keys are: ' + joinKeys(KEYS));
    }
    put(names, i, k);
  }
  // Enter in a form's field may submit it (the page's key handler): guarded like a click on
  // the form's default button, before any key is pressed.
  var guarded = '';
  var first = activeDeep();
  var facts = null;
  for (i = 0; i < names.length && guarded === ''; i++) {
    var ef = KEYS[names[i]].key === 'Enter' && first && !ours(first) ? enterSubmits(first) : null;
    if (ef) {
      guarded = submitName(ef);
      recentClick(own(args, 'recent'), guarded, 'Enter in ' + describe(first, true) + ' (the form\'s submission, ' + guarded + ')');
      facts = checked(args) ? enterFacts(first, ef) : null;
    }
  }
  if (own(args, 'probe') === true) {
    return probed(facts);
  }
  var pressed = list();
  for (i = 0; i < names.length; i++) {
    var name = names[i];
    var node = activeDeep();
    var bodyEl = bodyOf ? apply(bodyOf, doc, []) : null;
    if (!node || ours(node)) {
      node = bodyEl;
    }
    if (!node) {
      refuse('the page has no element to send keys to');
    }
    if (KEYS[name].key === 'Enter' && !ours(node) && checked(args)) {
      var sf = enterSubmits(node);
      expected(args, sf ? enterFacts(node, sf) : null, 'Enter in ' + describe(node, true));
    }
    var go = key(node, name);
    var note = name;
    if (!go) {
      note = name + ' (handled by the page)';
    } else if (KEYS[name].key === 'Tab') {
      var to = moveFocus(node === bodyEl ? null : node, KEYS[name].shift);
      note = name + (to ? ' -> ' + describe(to, true) : '');
    } else if (name === 'Backspace') {
      var ln = localName(node);
      if ((ln === 'input' || ln === 'textarea') && !isPassword(node) && !hasAttr(node, 'readonly') &&
          (ln === 'textarea' || NOT_TYPED[inputType(node)] !== true)) {
        var cur = currentValue(node, ln);
        if (cur !== '') {
          setValue(node, ln, apply(strSlice, cur, [0, cur.length - 1]), 'deleteContentBackward', null);
        }
      }
    } else if (node === bodyEl && winScrollBy && winScrollTo &&
        (name === 'PageUp' || name === 'PageDown' || name === 'Home' || name === 'End')) {
      scrollWindow(name === 'PageUp' ? 'up' : name === 'PageDown' ? 'down' : name === 'Home' ? 'top' : 'bottom');
    }
    put(pressed, i, note);
  }
  var res = dict();
  res.pressed = pressed;
  if (guarded !== '') {
    res.name = guarded;
  }
  var f = activeDeep();
  res.focused = f && !ours(f) ? describe(f, true) : 'nothing';
  res.url = href();
  return res;
}
