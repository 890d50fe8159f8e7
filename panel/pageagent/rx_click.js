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
  var tg = attrOf(el, what);
  if (typeof tg === 'string' && tg !== '' && lower(tg) !== '_self') {
    refuse('dom.click refused: the ' + localName(el) + ' opens in target "' + tg + '"; only the page itself');
  }
}
// activation finds what a click on node would activate: node or its nearest ancestor with an
// activation behaviour.
function activation(node) {
  var n = node;
  var depth = 0;
  while (n && nodeType(n) === 1 && depth < 256) {
    var tag = localName(n);
    var ns = nsOf(n);
    if (ns === HTML_NS) {
      if ((tag === 'a' || tag === 'area') && apply(hasAttribute, n, ['href'])) {
        return n;
      }
      if (tag === 'button' || tag === 'label' || tag === 'summary') {
        return n;
      }
      if (tag === 'input') {
        return n;
      }
    } else if (ns === SVG_NS && tag === 'a') {
      return n;
    }
    n = parentOf(n);
    depth++;
  }
  return null;
}
function checkClick(node, depth) {
  var act = activation(node);
  if (!act) {
    return;
  }
  var tag = localName(act);
  if (nsOf(act) === SVG_NS) {
    refuse('dom.click refused: it would follow an SVG link');
  }
  if (tag === 'a' || tag === 'area') {
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
  var type = lower('' + (attrOf(act, 'type') || ''));
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
