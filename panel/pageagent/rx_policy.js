// The page policy: which attributes a remixlet may write (checkAttr), the elements that load or
// navigate (isLoader), and password (and other sensitive) fields, which read back empty.

var REFUSED_ATTRS = dict();
(function () {
  var names = ['src', 'href', 'action', 'formaction', 'srcdoc', 'style', 'xlink:href', 'srcset',
    'imagesrcset', 'ping', 'poster', 'background', 'data', 'codebase', 'archive', 'lowsrc', 'dynsrc',
    'manifest', 'http-equiv', 'is', 'formtarget', 'target', 'xmlns', 'attributionsrc'];
  var i;
  for (i = 0; i < names.length; i++) {
    REFUSED_ATTRS[names[i]] = true;
  }
})();
var PASSWORD_LOCKED = dict();
PASSWORD_LOCKED.type = true;
PASSWORD_LOCKED.autocomplete = true;
PASSWORD_LOCKED.pattern = true;
PASSWORD_LOCKED.minlength = true;
PASSWORD_LOCKED.maxlength = true;
PASSWORD_LOCKED.value = true;
(function () {
  var more = ['form', 'formmethod', 'formenctype', 'formnovalidate', 'popovertarget',
    'popovertargetaction', 'command', 'commandfor', 'integrity', 'nonce', 'slot', 'shadowrootmode',
    'shadowrootdelegatesfocus', 'shadowrootclonable', 'shadowrootserializable',
    // Meaningful only on elements that load or navigate, or they change how a load is made
    // (loaderAttrs in proxy/remixlets_policy.go).
    'content', 'charset', 'rel', 'as', 'referrerpolicy', 'crossorigin', 'sandbox', 'allow', 'csp',
    'credentialless', 'attributename', 'blocking',
    // sizes picks among a srcset's candidates: written back and forth on a page's image it
    // makes the browser ask their host again and again (red-team pass 5a).
    'sizes', 'imagesizes'];
  var i;
  for (i = 0; i < more.length; i++) {
    REFUSED_ATTRS[more[i]] = true;
  }
})();
var SVG_NS = 'http://www.w3.org/2000/svg';
var HTML_NS = 'http://www.w3.org/1999/xhtml';
// Elements dom.create and dom.setHTML may build (the same list as CREATE_TAGS in
// proxy/remixlets_policy.go): layout, text, form controls but not form, img, simple SVG.
var CREATE_TAGS = dict();
var SVG_TAGS = dict();
(function () {
  var html = ['div', 'span', 'p', 'a', 'b', 'i', 'u', 's', 'em', 'strong', 'small', 'mark', 'sub', 'sup',
    'code', 'pre', 'kbd', 'samp', 'var', 'q', 'blockquote', 'cite', 'abbr', 'time', 'br', 'hr', 'wbr',
    'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'table', 'thead', 'tbody',
    'tfoot', 'tr', 'td', 'th', 'caption', 'colgroup', 'col', 'section', 'article', 'aside', 'header',
    'footer', 'nav', 'main', 'figure', 'figcaption', 'details', 'summary', 'address', 'del', 'ins',
    'dfn', 'bdi', 'bdo', 'ruby', 'rt', 'rp', 'label', 'fieldset', 'legend', 'input', 'button',
    'select', 'option', 'optgroup', 'textarea', 'datalist', 'output', 'progress', 'meter', 'img'];
  var svg = ['svg', 'path', 'circle', 'rect', 'line', 'polyline', 'polygon', 'g', 'text'];
  var i;
  for (i = 0; i < html.length; i++) {
    CREATE_TAGS[html[i]] = true;
  }
  for (i = 0; i < svg.length; i++) {
    SVG_TAGS[svg[i]] = true;
  }
})();
// Elements stripped from clones and never moved by dom.insert: they load or run something.
var LOADING_TAGS = dict();
(function () {
  var names = ['script', 'style', 'link', 'meta', 'base', 'iframe', 'frame', 'frameset', 'object', 'embed',
    'video', 'audio', 'source', 'track', 'template', 'noscript', 'slot', 'portal', 'applet', 'form',
    'use', 'image', 'foreignobject', 'animate', 'animatemotion', 'animatetransform', 'set', 'feimage',
    'math', 'param', 'picture', 'fencedframe'];
  var i;
  for (i = 0; i < names.length; i++) {
    LOADING_TAGS[names[i]] = true;
  }
})();
// Elements whose content dom.setHTML, dom.insert (into) and dom.create children never touch.
var RAW_TARGETS = dict();
(function () {
  var names = ['script', 'style', 'template', 'iframe', 'frame', 'object', 'embed', 'noscript', 'textarea',
    'title', 'xmp', 'plaintext', 'noembed', 'noframes', 'math'];
  var i;
  for (i = 0; i < names.length; i++) {
    RAW_TARGETS[names[i]] = true;
  }
})();
// Page elements that load, navigate or change how the document is fetched, by namespace and
// lowercase local name (isLoader): a remixlet writes no attribute on them except the few in
// LOADER_WRITABLE, and sets no text or content inside them (a form's content excepted). Every
// element outside the HTML and SVG namespaces counts as one; so does <input type=image>.
var LOADER_HTML = dict();
var LOADER_SVG = dict();
(function () {
  var html = ['meta', 'link', 'base', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'param',
    'script', 'style', 'form', 'source', 'track', 'video', 'audio', 'picture', 'portal', 'fencedframe',
    'template'];
  var svg = ['a', 'image', 'use', 'feimage', 'script', 'style', 'animate', 'animatemotion',
    'animatetransform', 'animatecolor', 'set', 'discard', 'foreignobject', 'mpath', 'textpath', 'tref',
    'cursor', 'font-face-uri'];
  var i;
  for (i = 0; i < html.length; i++) {
    LOADER_HTML[html[i]] = true;
  }
  for (i = 0; i < svg.length; i++) {
    LOADER_SVG[svg[i]] = true;
  }
})();
var LOADER_WRITABLE = dict();
LOADER_WRITABLE['class'] = true;
LOADER_WRITABLE.hidden = true;
LOADER_WRITABLE.title = true; // not on link and style: there it picks stylesheet sets
LOADER_WRITABLE.lang = true;
LOADER_WRITABLE.dir = true;
// Attributes a clone keeps as the page wrote them although a remixlet may not write them: they
// only restrict how the clone's own link or image loads.
var CLONE_KEEPS = dict();
CLONE_KEEPS.rel = true;
CLONE_KEEPS.referrerpolicy = true;
CLONE_KEEPS.crossorigin = true;
// id and name values that would shadow a document or window property for the page's scripts.
var CLOBBER = dict();
(function () {
  var names = ['cookie', 'location', 'body', 'head', 'document', 'window', 'domain', 'forms', 'images',
    'links', 'scripts', 'anchors', 'defaultview', 'documentelement', 'baseuri', 'url', 'referrer', 'title',
    'top', 'parent', 'self', 'frames', 'opener', 'name', 'origin', 'createelement', 'queryselector',
    'queryselectorall', 'getelementbyid', 'implementation', 'currentscript', 'alert', 'fetch',
    'attributes', 'nodename', 'nodetype', 'parentnode', 'childnodes', 'firstchild', 'lastchild',
    'ownerdocument', 'textcontent', 'innerhtml', 'outerhtml', 'activeelement', 'defaultvalue', 'action',
    'method', 'submit', 'reset', 'elements', 'length', 'tostring', 'valueof', 'constructor',
    '__proto__', 'prototype', 'hasownproperty'];
  var i;
  for (i = 0; i < names.length; i++) {
    CLOBBER[names[i]] = true;
  }
})();

// The form owner of each form-associated element (rx_policy.js offsiteFormAction).
var FORM_OWNER = dict();
FORM_OWNER.input = inputForm;
FORM_OWNER.button = buttonForm;
FORM_OWNER.select = getter(proto(win.HTMLSelectElement), 'form');
FORM_OWNER.textarea = getter(proto(win.HTMLTextAreaElement), 'form');
FORM_OWNER.fieldset = getter(proto(win.HTMLFieldSetElement), 'form');
FORM_OWNER.output = getter(proto(win.HTMLOutputElement), 'form');
FORM_OWNER.object = getter(proto(win.HTMLObjectElement), 'form');
var formMethodOf = getter(proto(win.HTMLFormElement), 'method');
// offsiteFormAction returns where the form el belongs to is sent, when that is not the page's
// origin; '' when el belongs to no form, or to one sent to the page's origin (or a dialog form,
// which sends nothing). The form is el's form owner as the browser finds it: the nearest
// form-associated element from el up answers with its form (a form attribute counts), else the
// nearest form element. A remixlet may not change what such a form sends: the person's next
// search through another site's form would carry what the remixlet wrote (the redirect guard's
// rule: what leaves is what the remixlet wrote, whoever clicks). Past the walk's bound the
// answer is "an address not checked", never ''.
function offsiteFormAction(el) {
  var n = el;
  var steps = 0;
  while (n && nodeType(n) === 1) {
    if (++steps > 4096) {
      return 'an address not checked (the element is nested too deep)';
    }
    if (nsOf(n) === HTML_NS) {
      var tag = localName(n);
      var g = FORM_OWNER[tag];
      if (g) {
        var f = apply(g, n, []);
        return f ? formLeaves(f) : '';
      }
      if (tag === 'form') {
        return formLeaves(n);
      }
    }
    n = parentOf(n);
  }
  return '';
}
function formLeaves(form) {
  if (!formAction) {
    return 'an address not checked';
  }
  if (formMethodOf && '' + apply(formMethodOf, form, []) === 'dialog') {
    return '';
  }
  var action = '' + apply(formAction, form, []);
  return sameOriginAddress(action) ? '' : action;
}
// refuseOffsiteForm refuses op on el when el belongs to a form sent to another origin.
function refuseOffsiteForm(el, what) {
  var to = offsiteFormAction(el);
  if (to !== '') {
    refuse(what + 'the element belongs to a form that is sent to ' + to + ', not to the page\'s origin; ' +
      'a remixlet may not change what it sends');
  }
}

// isPassword reports whether node is a password input: type=password, autocomplete naming a
// current or new password, or an input that was a password field before the page turned it
// into another type (a "show password" button flips type to text: the value is still the
// password; revealedPasswords).
function isPassword(node) {
  if (localName(node) !== 'input') {
    return false;
  }
  if (apply(weakGet, revealedPasswords, [node]) === true) {
    return true;
  }
  var type = attrOf(node, 'type');
  if (typeof type === 'string' && lower(type) === 'password') {
    return true;
  }
  return passwordAutocomplete(node);
}
function passwordAutocomplete(node) {
  var ac = attrOf(node, 'autocomplete');
  if (typeof ac === 'string') {
    ac = lower(ac);
    return contains(ac, 'current-password') || contains(ac, 'new-password');
  }
  return false;
}
// revealedPasswords holds the inputs (as keys, value true) that were password fields when the
// page changed their type or autocomplete (watchRevealedPasswords), and clones of them.
var revealedPasswords = new WeakMapCtor();
// watchRevealedPasswords arranges an observer of the type and autocomplete attributes of the
// document's elements: an input that stops being a password field (its old type was password,
// or its old autocomplete named a password) stays one for the page policy and the page tools.
// The observer's records arrive before the next operation: a remixlet that presses the page's
// "show password" button reads the field back empty afterwards.
//
// The observer starts at the first of: the task after the load event (not in the load event's
// own handlers, whose time counts in the page's load: noteMasked's walk of the fields was 0.3 ms
// there, NOTES.lazy14.md); the first pointer, key, touch or focus
// event anywhere in the page (window, capture phase, registered before any page script, so it
// runs before the page's own handlers of that event: a "show password" button pressed by the
// person is seen); the first message of the proxy that runs something in the page (a
// remixlet's op, a tool; receive in channel.js). Not at start: a document-wide subtree observer
// present while the page parses and loads cost +13.9 ms of DOMContentLoaded and +15.5 ms of
// load at the median of the 130 corpus pages, on every page (a same-run A/B in Chromium against
// this lazy start; NOTES, 2026-12-02). What the late start leaves: a field a page script turns
// from a password into text before any of those, that is before the person has touched the
// page and before anything of ours has read it - it can hold only what the page itself put
// there (or, at most, a value the browser autofilled, which Chromium gives page scripts only
// after the person's first interaction, when the observer has started). Residual as before:
// fields inside shadow roots (the observer does not see them), and a page that replaces the
// field with a new text input holding the same value.
// pointerdown stands for mousedown and touchstart too: Chromium fires it before either.
var REVEAL_TRIGGERS = ['pointerdown', 'keydown', 'focusin'];
var revealWatchStarted = false;
function watchRevealedPasswords() {
  var i;
  for (i = 0; i < REVEAL_TRIGGERS.length; i++) {
    on(win, REVEAL_TRIGGERS[i], startRevealWatch, true);
  }
  try {
    if (apply(readyState, doc, []) === 'complete') {
      startRevealWatch();
      return;
    }
  } catch (e) { /* start after load */ }
  on(win, 'load', function () {
    later(startRevealWatch, 0);
  }, true);
}
function startRevealWatch() {
  if (revealWatchStarted) {
    return;
  }
  revealWatchStarted = true;
  noteMasked(doc);
  if (typeof MO !== 'function' || !moObserve || !recordTarget || !recordOldValue) {
    return;
  }
  var mo = new MO(function (records) {
    var n = records.length;
    var i;
    for (i = 0; i < n; i++) {
      try {
        var old = apply(recordOldValue, records[i], []);
        if (typeof old === 'string' && (lower(old) === 'password' || contains(lower(old), 'current-password') ||
            contains(lower(old), 'new-password'))) {
          rememberPassword(apply(recordTarget, records[i], []));
        }
      } catch (e) { /* not a record */ }
    }
  });
  var opts = dict();
  opts.attributes = true;
  opts.attributeOldValue = true;
  opts.subtree = true;
  var names = list();
  put(names, 0, 'type');
  put(names, 1, 'autocomplete');
  opts.attributeFilter = names;
  try {
    apply(moObserve, mo, [doc, opts]);
  } catch (e) { /* no observer: nothing to remember */ }
}
function rememberPassword(node) {
  var name = localName(node);
  if (name === 'input' || name === 'textarea') {
    apply(weakSet, revealedPasswords, [node, true]);
  }
}
// carryPasswords marks the fields of copy (a clone of src, the same shape) that are sensitive
// in src, so that scrub blanks them as it blanks password fields: fields that were password
// fields (revealedPasswords) and fields the page's styles mask, which a clone outside the
// document no longer shows masked (isMasked).
function carryPasswords(src, copy, count) {
  count.n = count.n + 1;
  if (count.n > 20000) {
    refuse('the element is too large to clone');
  }
  if (nodeType(src) === 1) {
    var ln = localName(src);
    if ((ln === 'input' || ln === 'textarea') && isSensitive(src)) {
      rememberPassword(copy);
    }
    carryMirrors(src, copy);
  }
  var a = firstChild(src);
  var b = firstChild(copy);
  while (a && b) {
    carryPasswords(a, b, count);
    a = nextSibling(a);
    b = nextSibling(b);
  }
}
// isSensitive is the remixlet policy's notion of a password field: one (isPassword), a field
// the page marks as holding a secret with its autocomplete tokens (one-time codes, card
// numbers and codes) or calls one by its name (namedSecretField), or a masked one. Remixlets
// read all of them back empty, as passwords, and the page tools keep their values from the
// model.
function isSensitive(node) {
  if (isPassword(node)) {
    return true;
  }
  var name = localName(node);
  if (name !== 'input' && name !== 'textarea') {
    return false;
  }
  if (name === 'textarea' && (passwordAutocomplete(node) || apply(weakGet, revealedPasswords, [node]) === true)) {
    return true; // a textarea the page marks as a password (a key, a passphrase), or masked
  }
  var ac = attrOf(node, 'autocomplete');
  if (typeof ac === 'string') {
    ac = lower(ac);
    if (contains(ac, 'one-time-code') || contains(ac, 'cc-')) {
      return true;
    }
  }
  if (name === 'input' && namedSecretField(node)) {
    return true;
  }
  return isMasked(node, name);
}
// SECRET_FIELD_PHRASES and SECRET_FIELD_CODES recognise, by what a field is called, a text
// field that holds a card number, a card's security code or a one-time code where the page did
// not mark it with autocomplete tokens (many shops and banks do not; Chromium's autofill still
// fills such fields by their names, and people type the codes into them). A phrase is looked for
// in an attribute's letters and digits, lower case (card-number, card_number and cardNumber all
// read "cardnumber"); a code must be a word of its own (cardCvc, cvv2 and "CVC" are; "hotpink"
// holds no "otp"). From Chromium's autofill heuristics (kCardNumberRe, kCardCvcRe), the
// unambiguous part only: "pin" alone is a postcode in India, "code" alone a coupon. A field too
// many is only read back empty and kept from the model; the Go side has the same lists
// (proxy/internal/redact/fields.go, checked equal by its test). Password names count too
// (red-team pass 6c): a field called a password stays sensitive when the page shows it as text
// (a "show password" default, or a type flipped before the reveal watch started), since what
// the person types into it is still their password.
var SECRET_FIELD_PHRASES = ['cardnumber', 'cardnum', 'cardno', 'ccnumber', 'ccnum', 'creditcardno',
  'kartennummer', 'numerodetarjeta', 'numerodecarte', 'numerocarta', 'securitycode', 'cardcode',
  'cardverification', 'cardpin', 'onetimecode', 'onetimepass', 'otpcode', 'verificationcode',
  'smscode', 'mfacode', 'twofactorcode', 'authenticatorcode', 'password', 'passwd', 'passwort', 'passcode',
  'motdepasse', 'contrasena', 'wachtwoord'];
var SECRET_FIELD_CODES = allowed(['cvc', 'cvv', 'cvn', 'csc', 'ccv', 'cvd', 'cvc2', 'cvv2', 'otp', 'totp', 'pwd',
  'pass', 'pw']);
// SECRET_FIELD_ATTRS are the attributes that name a field.
var SECRET_FIELD_ATTRS = ['name', 'id', 'autocomplete', 'placeholder', 'aria-label'];

// namedSecretField reports whether the input node (not of a kind the person does not type in)
// is called a card number, a security code or a one-time code by one of its attributes.
function namedSecretField(node) {
  var type = attrOf(node, 'type');
  if (typeof type === 'string' && NOT_TYPED[lower(type)] === true) {
    return false;
  }
  var i;
  for (i = 0; i < SECRET_FIELD_ATTRS.length; i++) {
    var v = attrOf(node, SECRET_FIELD_ATTRS[i]);
    if (typeof v === 'string' && v !== '' && secretFieldName(v)) {
      return true;
    }
  }
  return false;
}

// secretFieldName reports whether the attribute value s names a secret field: one of the
// phrases in its letters and digits, or one of the codes as a word (words split at anything
// but a letter or digit, and at camelCase: cardCvc, OTPCode).
function secretFieldName(s) {
  if (s.length > 256) {
    s = apply(strSlice, s, [0, 256]);
  }
  var joined = '';
  var word = '';
  var found = false;
  var prev = 0; // 0 other, 1 lower or digit, 2 upper
  var i;
  for (i = 0; i < s.length && !found; i++) {
    var c = apply(charCodeAt, s, [i]);
    var kind = c >= 97 && c <= 122 || c >= 48 && c <= 57 ? 1 : c >= 65 && c <= 90 ? 2 : 0;
    var next = i + 1 < s.length ? apply(charCodeAt, s, [i + 1]) : 0;
    var boundary = kind === 0 || kind === 2 && (prev === 1 || prev === 2 && next >= 97 && next <= 122);
    if (boundary && word !== '') {
      found = SECRET_FIELD_CODES[word] === true;
      word = '';
    }
    if (kind !== 0) {
      var ch = apply(fromCharCode, null, [kind === 2 ? c + 32 : c]);
      word += ch;
      joined += ch;
    }
    prev = kind;
  }
  if (found || SECRET_FIELD_CODES[word] === true) {
    return true;
  }
  for (i = 0; i < SECRET_FIELD_PHRASES.length; i++) {
    if (contains(joined, SECRET_FIELD_PHRASES[i])) {
      return true;
    }
  }
  return false;
}
// noteMasked remembers the masked fields (isMasked) of root (an element, itself included, or the
// document) as sensitive before anything changes them: a remixlet's write may unmask a field
// without touching the field itself (a class on an ancestor, its removal from the document,
// where it has no computed style). op() calls it on the elements a write touches; the reveal
// watch on the whole document, before the person's first interaction and at the load.
function noteMasked(root) {
  var all;
  try {
    if (nodeType(root) === 9) {
      all = apply(querySelectorAllDoc, root, ['input,textarea']);
    } else {
      var ln = localName(root);
      if (ln === 'input' || ln === 'textarea') {
        isSensitive(root);
        return;
      }
      all = apply(querySelectorAllEl, root, ['input,textarea']);
    }
  } catch (e) {
    return;
  }
  var n = apply(nodeListLength, all, []);
  var i;
  for (i = 0; i < n; i++) {
    isSensitive(apply(nodeListItem, all, [i]));
  }
}
// NOT_TYPED are the input types whose value is not text the person types (no mask applies;
// tool_type.js refuses to type into them).
var NOT_TYPED = allowed(['hidden', 'checkbox', 'radio', 'submit', 'button', 'reset', 'image', 'file',
  'range', 'color']);
// isMasked reports whether the text field node (an input or textarea, name its local name)
// shows its text as dots because of the page's styles: -webkit-text-security other than none.
// Banks and shops mask PINs and security answers this way in text inputs, to keep the browser's
// password manager away; the person types a secret although nothing in the markup says so. A
// field seen masked stays sensitive (revealedPasswords) when the page later unmasks it, as a
// password field the page turns into text does; remixlets cannot unmask one (the property and
// `all` are refused in their styles: rewrite/stylecheck.go, proxy/remixlet/policy.go).
function isMasked(node, name) {
  if (name === 'input') {
    var type = attrOf(node, 'type');
    if (typeof type === 'string' && NOT_TYPED[lower(type)] === true) {
      return false;
    }
  }
  if (typeof getComputedStyleFn !== 'function' || !getPropertyValue) {
    return false;
  }
  var mask;
  try {
    mask = '' + apply(getPropertyValue, apply(getComputedStyleFn, win, [node]), ['-webkit-text-security']);
  } catch (e) {
    return false;
  }
  if (mask === '' || mask === 'none') {
    return false;
  }
  apply(weakSet, revealedPasswords, [node, true]);
  return true;
}
function pageHasPassword() {
  return inputsHavePassword(apply(querySelectorAllDoc, doc, ['input,textarea']));
}
function inputsHavePassword(inputs) {
  var n = apply(nodeListLength, inputs, []);
  var i;
  for (i = 0; i < n; i++) {
    if (isSensitive(apply(nodeListItem, inputs, [i]))) {
      return true;
    }
  }
  return false;
}
// isLoader reports whether el loads, navigates or changes how the document is fetched
// (LOADER_HTML, LOADER_SVG, <input type=image>, anything outside HTML and SVG).
function isLoader(el) {
  var ns = nsOf(el);
  var tag = lower(localName(el));
  if (ns === HTML_NS) {
    if (tag === 'input') {
      var type = attrOf(el, 'type');
      return typeof type === 'string' && lower(type) === 'image';
    }
    return LOADER_HTML[tag] === true;
  }
  return ns !== SVG_NS || LOADER_SVG[tag] === true;
}
// loaderWritable reports whether a remixlet may write attribute name on loader el.
function loaderWritable(el, name) {
  if (apply(strSlice, name, [0, 5]) === 'aria-') {
    return true;
  }
  if (name === 'title') {
    var tag = lower(localName(el));
    return tag !== 'link' && tag !== 'style';
  }
  return LOADER_WRITABLE[name] === true;
}
// FIELD_STATE are the pseudo-classes that depend on what is typed into a field (the
// checkedFieldState of rewrite/stylecheck.go), as they appear in a lowercase selector; ':--' is
// the older spelling of a custom element's :state().
var FIELD_STATE = [':placeholder-shown', ':valid', ':invalid', ':user-valid', ':user-invalid', 'ui-valid',
  'ui-invalid', ':in-range', ':out-of-range', 'autofill', ':blank', ':state(', ':--'];
// COMPARABLE_ATTRS are the attributes whose values a selector may compare (comparableAttrs in
// rewrite/fieldselectors.go, checked equal by its test): pages copy what is typed into other
// attributes (data-value, data-len), so comparing those would tell a secret's prefix or length.
var COMPARABLE_ATTRS = allowed(['id', 'class', 'href', 'src', 'type', 'rel', 'role', 'lang', 'dir', 'name',
  'for', 'target', 'title', 'alt', 'hreflang', 'media', 'method', 'action', 'slot', 'part', 'tabindex',
  'colspan', 'rowspan', 'scope', 'datetime', 'itemprop', 'itemtype', 'download', 'accept', 'autocomplete',
  'inputmode', 'enterkeyhint', 'contenteditable', 'draggable', 'hidden', 'disabled', 'checked', 'selected',
  'open', 'required', 'readonly', 'multiple', 'placeholder', 'loading', 'data-testid', 'data-test-id',
  'data-test', 'data-qa', 'data-cy']);
// comparableAttr reports whether a selector may compare the value of attribute name (lowercase):
// one of COMPARABLE_ATTRS, or an ARIA attribute other than aria-value* (a strength meter's
// aria-valuenow follows the password).
function comparableAttr(name) {
  if (apply(strSlice, name, [0, 5]) === 'aria-') {
    return apply(strSlice, name, [5, 10]) !== 'value';
  }
  return COMPARABLE_ATTRS[name] === true;
}
// fieldSelectorProblem says why a remixlet's selector (dom.query, dom.queryAll, dom.waitFor)
// could test what is typed into a field, or returns '': the same rule as the stylesheets'
// (rewrite/stylecheck.go selectorProblem, rewrite/fieldselectors.go) - an escape or comment
// (either could hide the rest), the value attribute, a FIELD_STATE pseudo-class, comparing the
// value of an attribute outside COMPARABLE_ATTRS (a data-* attribute's only once a secret was
// typed on the page or while a sensitive field holds a value: secretOnPage, rx_mirrors.js; Go
// leaves those to this check) - and, known only here, any test of an attribute the page was
// seen copying a secret into (mirrorNames, rx_mirrors.js). On every
// page: a field inside a shadow root (a closed one above all) cannot always be seen, but its
// state can reach the light DOM (a form-associated element's :invalid, its host's mirror).
function fieldSelectorProblem(sel) {
  flushMirrors();
  var l = lower(sel);
  if (contains(l, '\\') || contains(l, '/*')) {
    return 'CSS escapes and comments are refused in selectors';
  }
  var i;
  for (i = 0; i < FIELD_STATE.length; i++) {
    if (contains(l, FIELD_STATE[i])) {
      return 'field-state pseudo-classes (' + FIELD_STATE[i] + ') are refused: they tell what is typed into a field';
    }
  }
  var quote = 0;
  for (i = 0; i < l.length; i++) {
    var c = apply(charCodeAt, l, [i]);
    if (quote !== 0) {
      if (c === quote) {
        quote = 0;
      }
      continue;
    }
    if (c === 34 || c === 39) {
      quote = c;
    } else if (c === 91) { // [
      var why = attributeSelectorProblem(l, i + 1);
      if (why !== '') {
        return why;
      }
    }
  }
  return '';
}
function cssSpace(c) {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12;
}
// attributeSelectorProblem checks the attribute selector whose text starts at l[at] (after [):
// [name], [ns|name] or [*|name], then ] or a comparison.
function attributeSelectorProblem(l, at) {
  var j = at;
  while (j < l.length && cssSpace(apply(charCodeAt, l, [j]))) {
    j++;
  }
  var name = '';
  var start = j;
  for (; j < l.length; j++) {
    var c = apply(charCodeAt, l, [j]);
    if (c === 124 && apply(charCodeAt, l, [j + 1]) !== 61) { // | of a namespace, not |=
      start = j + 1;
      continue;
    }
    if (c === 42 && j === start && apply(charCodeAt, l, [j + 1]) === 124) { // * of *|
      continue;
    }
    if (!(c >= 97 && c <= 122 || c >= 48 && c <= 57 || c === 45 || c === 95 || c >= 128)) {
      break;
    }
  }
  name = apply(strSlice, l, [start, j]);
  while (j < l.length && cssSpace(apply(charCodeAt, l, [j]))) {
    j++;
  }
  var compares = j < l.length && apply(charCodeAt, l, [j]) !== 93; // anything but ]
  if (name === 'value') {
    return 'selectors may not test the value attribute (it mirrors what is typed into fields, passwords included); select by class, id or another attribute';
  }
  if (mirrorNames[name] === true) {
    return 'selectors may not test attribute ' + name + ': the page copies what is typed into a password (or other secret) field into it';
  }
  if (compares && mirroredName(name)) { // rx_mirrors.js: a title or aria-label the page wrote while a password was held
    return 'selectors may not compare the value of attribute ' + name + ': the page wrote it while a password was typed';
  }
  if (compares && !comparableAttr(name)) {
    var data = name.length > 5 && apply(strSlice, name, [0, 5]) === 'data-';
    if (data && !secretOnPage()) {
      return ''; // data-state and the like, until a secret is typed (rx_mirrors.js)
    }
    return 'selectors may not compare the value of attribute ' + name + ' (pages copy what is typed into fields, passwords included, into such attributes); ' +
      'test its presence ([' + name + ']) or compare id, class, href, role, aria-* or data-testid' +
      (data ? ' (data-* values may be compared only until a password or other secret is typed on the page)' : '');
  }
  return '';
}

// opText is dom.text: the element's textContent, without the text of the sensitive textareas
// inside it (a textarea's text is its default value: a key or answer the page prefilled reads
// back empty through the element around it, as through the field itself) and of the elements
// the page wrote while a secret was typed (text mirrors, rx_mirrors.js).
function opText(node) {
  if (isSensitive(node) || textMirrorIn(node)) { // rx_mirrors.js: a strength meter, a length counter
    return '';
  }
  var tas = apply(querySelectorAllEl, node, ['textarea']);
  var n = apply(nodeListLength, tas, []);
  var secret = textMirrorCount > 0; // one may be inside: walked (marks, not places, are kept)
  var i;
  for (i = 0; i < n && !secret; i++) {
    secret = isSensitive(apply(nodeListItem, tas, [i]));
  }
  if (!secret) {
    return '' + apply(getTextContent, node, []);
  }
  // textContent's walk (Text and CDATA descendants, in order) without those textareas.
  var out = '';
  var stack = list();
  var c = firstChild(node);
  while (c || stack.length > 0) {
    if (!c) {
      c = nextSibling(stack[stack.length - 1]);
      stack.length = stack.length - 1;
      continue;
    }
    var type = nodeType(c);
    if (type === 3 || type === 4) {
      out = out + apply(nodeValueOf, c, []);
    } else if (type === 1 && !(localName(c) === 'textarea' && isSensitive(c)) && !isTextMirror(c) && firstChild(c)) {
      put(stack, stack.length, c);
      c = firstChild(c);
      continue;
    }
    c = nextSibling(c);
  }
  return out;
}

function opValue(node) {
  var name = localName(node);
  if (isSensitive(node) || pageSetValue(node, name)) { // a length written into a counter field, a strength selected
    return '';
  }
  var g = name === 'input' ? inputValue : name === 'textarea' ? textareaValue : name === 'select' ? selectValue : null;
  if (!g) {
    refuse('dom.value reads form controls (input, textarea, select)');
  }
  var v = '' + apply(g, node, []);
  // A copy of a typed secret in another control (a hidden field a page script fills from the
  // password) reads back empty too (rx_mirrors.js holdsTypedSecret).
  return holdsTypedSecret(v) ? '' : v;
}

// pageSetValue reports whether the page set the value of field node (tag ln) while a typed
// secret was held (OPEN-ITEMS 107), which dom.value reads empty and the agent's tools show the
// model as HIDDEN_WHILE_TYPED (tool_names.js fieldValue): a value it changed then (rx_mirrors.js
// value mirrors), a field it added then with the value in it (noted as a text mirror when
// added, or inside one), or, once a secret was typed in the document, a select whose choice is
// neither the one its markup makes nor the person's own last one (a strength the page selects
// by its value property, which changes no attribute).
function pageSetValue(node, ln) {
  if (ln !== 'input' && ln !== 'textarea' && ln !== 'select') {
    return false;
  }
  if (textMirrorIn(node) || ln !== 'select' && isValueMirror(node)) {
    return true;
  }
  if (ln !== 'select' || !secretTyped) {
    return false;
  }
  var now = optionsOf(node, 'option:checked', 0);
  var person = apply(weakGet, personChoices, [node]);
  if (person !== undefined && sameOptions(now, person)) {
    return false;
  }
  var markup = optionsOf(node, 'option[selected]', 0);
  if (markup.length === 0 && attrOf(node, 'multiple') === null) {
    markup = optionsOf(node, 'option', 1); // none marked: the first is chosen
  }
  return !sameOptions(now, markup);
}
// optionsOf lists the options of select node matching sel (at most max, 0: all).
function optionsOf(node, sel, max) {
  var out = list();
  try {
    var found = apply(querySelectorAllEl, node, [sel]);
    var n = apply(nodeListLength, found, []);
    var i;
    for (i = 0; i < n && (max === 0 || i < max); i++) {
      put(out, out.length, apply(nodeListItem, found, [i]));
    }
  } catch (e) { /* not a select */ }
  return out;
}
function sameOptions(a, b) {
  if (a.length !== b.length) {
    return false;
  }
  var i;
  for (i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) {
      return false;
    }
  }
  return true;
}
// personChoices: select -> its chosen options after the person's own last input into it
// (trusted input and change events, noted before the page's handlers run: tool_secrets.js
// watchPasswordFields registers notePersonChoice).
var personChoices = new WeakMapCtor();
function notePersonChoice(ev) {
  try {
    var path = eventPath(ev); // rx_events.js: open shadow roots too
    var t = path.length > 0 ? path[0] : null;
    if (ev.isTrusted === true && t && nodeType(t) === 1 && localName(t) === 'select') {
      apply(weakSet, personChoices, [t, optionsOf(t, 'option:checked', 0)]);
    }
  } catch (e) { /* never break the page's events */ }
}

// isSVG reports whether el is in the SVG namespace; isHTML whether in the HTML one.
function nsOf(el) {
  try {
    return namespaceOf ? '' + apply(namespaceOf, el, []) : HTML_NS;
  } catch (e) {
    return '';
  }
}

// checkAttr checks one attribute write on el (a page element, a created one or one in a
// clone or setHTML result) and returns the value to write. It refuses with the reason.
function checkAttr(el, name, value) {
  name = lower(name);
  if (typeof value !== 'string' || value.length > 65536 || (name !== 'src' && value.length > 8192)) {
    refuse('the value must be a string of at most 8192 characters');
  }
  var k;
  for (k = 0; k < name.length; k++) {
    var ch = apply(charCodeAt, name, [k]);
    if (!((ch >= 97 && ch <= 122) || (k > 0 && ((ch >= 48 && ch <= 57) || ch === 45 || ch === 95 || ch === 46 || ch === 58)))) {
      refuse('"' + name + '" is not an attribute name that can be set');
    }
  }
  if (name === '') {
    refuse('the attribute name is empty');
  }
  if (apply(strSlice, name, [0, 2]) === 'on') {
    refuse('attribute ' + name + ' refused: event handler attributes (on*) run code');
  }
  if (apply(strSlice, name, [0, MARK_PREFIX.length]) === MARK_PREFIX) {
    refuse('attributes starting with ' + MARK_PREFIX + ' are the remixlets\' marks');
  }
  if (contains(name, ':')) {
    refuse('attribute ' + name + ' refused: namespaced attributes are not allowed');
  }
  var tag = localName(el);
  var ns = nsOf(el);
  if (isLoader(el) && !loaderWritable(el, name)) {
    refuse('attribute ' + name + ' refused: <' + tag + '> elements load, navigate or change how the page is fetched; ' +
      'on them a remixlet may set only class, hidden, title, lang, dir and aria-* attributes');
  }
  if (name === 'href' || name === 'src') {
    if (name === 'href' && !(ns === HTML_NS && (tag === 'a' || tag === 'area'))) {
      refuse('attribute href refused: only links (a) may have an href');
    }
    if (name === 'src' && !(ns === HTML_NS && tag === 'img')) {
      refuse('attribute src refused: only images (img) may have a src');
    }
    // A link that pings (hyperlink auditing) tells the ping addresses where it goes when it is
    // followed (Ping-To): the address a remixlet wrote would reach hosts it may not load from,
    // on the person's click (dom.click does not click such links). Red-team pass 5a.
    if (name === 'href' && apply(hasAttribute, el, ['ping'])) {
      refuse('attribute href refused: the link pings other addresses, which would be sent its new address when it is followed');
    }
    return checkAddress('attribute ' + name, value, name === 'href');
  }
  if (REFUSED_ATTRS[name] === true) {
    refuse('attribute ' + name + ' refused: it loads or runs something');
  }
  if (name === 'id' || name === 'name') {
    var v = lower(value);
    if (CLOBBER[v] === true || (value in doc) || apply(hasOwnProperty, win, [value])) {
      refuse('attribute ' + name + '="' + value + '" refused: it would shadow document.' + value + ' or window.' + value + ' for the page\'s scripts');
    }
  }
  if (PASSWORD_LOCKED[name] === true && isSensitive(el)) {
    refuse('attribute ' + name + ' of a password field cannot be changed');
  }
  if (name === 'type' && tag === 'input' && lower(value) === 'image') {
    refuse('<input type="image"> refused: use an img inside a button');
  }
  var lv = lower(value);
  if (contains(lv, 'url(') || contains(lv, 'image-set(') || (ns === SVG_NS && contains(lv, '\\'))) {
    refuse('attribute ' + name + ' refused: its value may not contain url(, image-set( or (on SVG) CSS escapes');
  }
  // A value that reads as a script address is refused everywhere, whatever the attribute.
  var squeezed = '';
  for (k = 0; k < lv.length && squeezed.length < 16; k++) {
    var c2 = apply(charCodeAt, lv, [k]);
    if (c2 > 32) {
      squeezed = squeezed + apply(fromCharCode, null, [c2]);
    }
  }
  if (apply(strSlice, squeezed, [0, 11]) === 'javascript:' || apply(strSlice, squeezed, [0, 9]) === 'vbscript:' ||
      apply(strSlice, squeezed, [0, 10]) === 'data:text/') {
    refuse('attribute ' + name + ' refused: its value reads as a script address');
  }
  // A page script may load what an attribute holds, so an address anywhere in the value
  // follows the address rule too; the value is written as given.
  var found = addressesIn(value);
  for (k = 0; k < found.length; k++) {
    checkAddress('attribute ' + name + ' (its value holds the address ' + found[k] + ')', found[k], false);
  }
  return value;
}

function opSetAttr(t, node, name, value) {
  name = lower(name);
  var v = checkAttr(node, name, value);
  if (!loaderWritable(node, name)) {
    refuseOffsiteForm(node, 'attribute ' + name + ' refused: ');
  }
  attr(node, name, v);
  mark(t, node, '');
}
