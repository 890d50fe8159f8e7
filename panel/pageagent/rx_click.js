// ---- focus, scrollIntoView, click. ----

function requireHTML(node, what) {
  if (nsOf(node) !== HTML_NS || node === host) {
    refuse(what + ' works on HTML elements of the page');
  }
}

function sameOriginAddress(abs) {
  var u = parseURL(abs, undefined);
  return u !== null && '' + apply(urlOrigin, u, []) === pageOrigin() &&
    ('' + apply(urlProtocol, u, []) === 'https:' || '' + apply(urlProtocol, u, []) === 'http:');
}
function checkTarget(el, what) {
  var tg = what === 'target' ? targetOf(el, doc) : attrOf(el, what);
  if (otherTarget(tg)) {
    var base = what === 'target' && attrOf(el, 'target') === null ? ' (the page\'s <base target>)' : '';
    refuse('dom.click refused: the ' + localName(el) + ' opens in target "' + tg + '"' + base + '; only the page itself');
  }
}
// checkClick refuses a click a remixlet makes when anything it would activate leaves the page's
// origin. The element clicked is not the only one that acts: Chromium lets a link or a submit
// button act on a click that reached it from a control inside it whose own activation does not
// stop the click (a type=button button, a label, a checkbox, a summary, a button the remixlet
// put there). So every element with an activation behaviour on the way up is checked - from
// node through its ancestors, into the host of an open shadow root and to the slot an element
// is assigned to - not only the nearest. A label's control is checked the same way (once).
function checkClick(node, depth) {
  var n = node;
  var steps = 0;
  while (n && steps < 512) {
    var type = nodeType(n);
    if (type === 11) {
      n = shadowHostOf ? apply(shadowHostOf, n, []) : null;
    } else if (type === 1) {
      checkActivated(n, node, depth);
      var slot = assignedSlotOf ? apply(assignedSlotOf, n, []) : null;
      n = slot ? slot : parentOf(n);
    } else {
      n = null;
    }
    steps++;
  }
  if (n) {
    refuse('dom.click refused: the element is nested too deep to check what the click would activate');
  }
}
// checkActivated checks one element on a click's way up (see checkClick): links and submit
// buttons must stay on the page's origin; a label's control is checked in turn.
function checkActivated(act, node, depth) {
  var tag = localName(act);
  var ns = nsOf(act);
  if (ns === SVG_NS && tag === 'a') {
    refuse('dom.click refused: it would follow an SVG link');
  }
  if (ns !== HTML_NS) {
    return;
  }
  if (tag === 'a' || tag === 'area') {
    if (!apply(hasAttribute, act, ['href'])) {
      return;
    }
    var to = '' + apply(tag === 'a' ? anchorHref : areaHref, act, []);
    if (!sameOriginAddress(to)) {
      refuse('dom.click refused: the link goes to ' + to + ', not to the page\'s origin');
    }
    checkTarget(act, 'target');
    if (apply(hasAttribute, act, ['ping'])) {
      refuse('dom.click refused: the link pings other addresses');
    }
    return;
  }
  if (tag === 'label') {
    if (depth > 0) {
      return;
    }
    var control = labelControl ? apply(labelControl, act, []) : null;
    if (control && control !== node) {
      checkClick(control, depth + 1);
    }
    return;
  }
  if (tag !== 'button' && tag !== 'input') {
    return;
  }
  var type = lower('' + (attrOf(act, 'type') || ''));
  if (tag === 'input' && (type === 'checkbox' || type === 'radio')) {
    // Its state is sent with its form: not one that goes to another site.
    refuseOffsiteForm(act, 'dom.click refused: ');
  }
  // A button whose type is missing or not one the browser knows submits its form.
  var submits = tag === 'button' ? type !== 'button' && type !== 'reset' : type === 'submit' || type === 'image';
  if (!submits) {
    return;
  }
  if (apply(hasAttribute, act, ['formaction'])) {
    refuse('dom.click refused: the button has a formaction');
  }
  checkTarget(act, 'formtarget');
  var fm = attrOf(act, 'formmethod');
  if (typeof fm === 'string' && fm !== '' && lower(fm) !== 'get' && lower(fm) !== 'post') {
    refuse('dom.click refused: the button submits with method ' + fm);
  }
  var form = apply(tag === 'button' ? buttonForm : inputForm, act, []);
  if (!form) {
    return;
  }
  var action = '' + apply(formAction, form, []);
  if (!sameOriginAddress(action)) {
    refuse('dom.click refused: the form is sent to ' + action + ', not to the page\'s origin');
  }
  var method = attrOf(form, 'method');
  if (typeof method === 'string' && method !== '' && lower(method) !== 'get' && lower(method) !== 'post') {
    refuse('dom.click refused: the form is sent with method ' + method);
  }
  checkTarget(form, 'target');
}

function opClick(node) {
  requireHTML(node, 'dom.click');
  if (!htmlClick || !formAction || !anchorHref || !buttonForm || !inputForm) {
    refuse('this browser cannot check clicks here');
  }
  checkClick(node, 0);
  apply(htmlClick, node, []);
}
