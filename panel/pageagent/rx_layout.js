// ---- rect, style: layout, unless it could tell a password's length. ----

var querySelectorAllFragment = win.DocumentFragment ? win.DocumentFragment.prototype.querySelectorAll : null;

// sizedByContent reports whether a password (or other sensitive) field of the page is sized
// by what is typed into it (field-sizing: content, from the page's own styles; a remixlet may
// not set it): then any box on the page may move with the length of the secret, so dom.rect
// and dom.style are refused. (Without it a field's box does not depend on its text.) Fields in
// open shadow roots count (their host grows with them); closed ones cannot be seen.
function sizedByContent() {
  var found = false;
  eachField(doc, function (f) {
    found = found || isSensitive(f) && '' + apply(getPropertyValue, apply(getComputedStyleFn, win, [f]), ['field-sizing']) === 'content';
    return found;
  }, 0);
  return found;
}
// eachField calls fn on the input and textarea elements of root (a document or shadow root)
// and of the open shadow roots inside it, until fn returns true; depth bounds the nesting.
function eachField(root, fn, depth) {
  var isDoc = nodeType(root) === 9;
  var fields = isDoc ? apply(querySelectorAllDoc, root, ['input,textarea']) : apply(querySelectorAllFragment, root, ['input,textarea']);
  var n = apply(nodeListLength, fields, []);
  var i;
  for (i = 0; i < n; i++) {
    if (fn(apply(nodeListItem, fields, [i]))) {
      return true;
    }
  }
  if (!openShadowRoot || !querySelectorAllFragment || depth > 16) {
    return false;
  }
  var all = isDoc ? apply(querySelectorAllDoc, root, ['*']) : apply(querySelectorAllFragment, root, ['*']);
  n = apply(nodeListLength, all, []);
  for (i = 0; i < n; i++) {
    var sr = apply(openShadowRoot, apply(nodeListItem, all, [i]), []);
    if (sr && eachField(sr, fn, depth + 1)) {
      return true;
    }
  }
  return false;
}
function checkLayoutReadable(what) {
  if (typeof getComputedStyleFn !== 'function' || !getPropertyValue) {
    refuse('this browser cannot read computed styles here');
  }
  if (sizedByContent()) {
    refuse(what + ' is refused on this page: a password field here is sized by its content (field-sizing: content), so sizes would tell its length');
  }
  // Once a secret was typed, and while a sensitive field holds a value, the page's own styles
  // may follow it anywhere: a floating label on :placeholder-shown, an outline on :invalid with
  // minlength or pattern, a strength meter's width, a copy in an attribute its rules test
  // (rx_mirrors.js). Which of them a page has cannot be told cheaply (cross-origin sheets cannot
  // even be read), so layout is not read then; once the fields are empty or gone it is again. A
  // value the page itself put there, untouched, changes nothing in its layout while a remixlet
  // looks (red-team pass 6c).
  if (secretTyped && secretHeld()) {
    refuse(what + ' is refused on this page while a password (or other secret) field holds what was typed: the page\'s styles may follow it');
  }
}

function opRect(node) {
  if (!getBoundingClientRect || !rectX) {
    refuse('this browser cannot measure elements here');
  }
  checkLayoutReadable('dom.rect');
  var r = apply(getBoundingClientRect, node, []);
  var out = dict();
  out.x = apply(rectX, r, []);
  out.y = apply(rectY, r, []);
  out.width = apply(rectWidth, r, []);
  out.height = apply(rectHeight, r, []);
  return out;
}

function opStyle(node, props) {
  checkLayoutReadable('dom.style');
  var cs = apply(getComputedStyleFn, win, [node]);
  if (typeof props === 'string') {
    return '' + apply(getPropertyValue, cs, [kebab(props)]);
  }
  var n = props !== null && typeof props === 'object' ? own(props, 'length') : undefined;
  if (typeof n !== 'number' || n < 1 || n > 64) {
    refuse('dom.style takes a property name or an array of 1 to 64 names');
  }
  var out = dict();
  var i;
  for (i = 0; i < n; i++) {
    var p = own(props, i);
    out[p] = '' + apply(getPropertyValue, cs, [kebab(p)]);
  }
  return out;
}
