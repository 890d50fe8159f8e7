// ---- The person's own input, for the agent's send guard. --------------------------------------
//
// For 30 s after an action of the AI agent the proxy holds the requests that change something
// which a page of the chat's site sends, until the person allows them on a card
// (proxy/chat/sendguard.go). The person's own "Send", "Like" or Enter in that page would be
// carded too. So the page agent reports the person's own input that may make a page send: a
// trusted click or auxclick on something that can be clicked (a link, a button, a form control,
// an element with a clickable role, tabindex, onclick or contenteditable, or a pointer cursor),
// and a trusted keydown that is Enter or Space, or any key in an editable field. The proxy lets
// a request of the same origin go without a card when it follows such a report closely
// (proxy/chat/sendguard_person.go has the rule and why the agent cannot take it).
//
// Only isTrusted input counts: the agent's clicks and keys are synthetic (isTrusted false). Not
// submit, change or input events: the browser fires them trusted for a page's own
// form.requestSubmit(), a checkbox's synthetic click() and execCommand, which the agent's
// synthetic input can start. The listeners are at window, capture phase, registered before any
// page script: a page cannot stop them. Clicks in frames are not seen (frames have no page agent):
// their sends are carded. Input on the proxy's own launcher and tray is not input to the page
// (a click to show the panel just after the agent's action must not release what it sends). A page's script can send reports of its own; a hostile script gains
// nothing by it (it could post outside the window or off the site as well), and a report counts
// only for requests of its own origin.

var PERSON_INPUT_PATH_MAX = 32; // elements of a click's path looked at
// PERSON_INPUT_KEY_GAP: typing in a field reports at most once in this many ms (a report stands
// for 2 s in the proxy); clicks, Enter and Space always report.
var PERSON_INPUT_KEY_GAP = 250;
var personInputKeyAt = 0;
var personInputTags = allowed(['a', 'area', 'button', 'input', 'select', 'textarea', 'label', 'summary', 'option']);
var personInputRoles = allowed(['button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'tab',
  'checkbox', 'switch', 'radio', 'treeitem', 'gridcell', 'combobox', 'textbox']);

// personInputReport tells the proxy that the person gave the page input now.
function personInputReport() {
  send(message('person-input'));
}

// personInProxyUI reports whether the path goes through the proxy's own launcher or tray
// (launcher.js, services.js): input there is not the person's input to the page.
function personInProxyUI(path) {
  var n = path.length < PERSON_INPUT_PATH_MAX ? path.length : PERSON_INPUT_PATH_MAX;
  var i;
  for (i = 0; i < n; i++) {
    if (path[i] === host || path[i] === tray) {
      return true;
    }
  }
  return false;
}

// personClickable reports whether a trusted click on the path may be the person using a
// control of the page (not a click on text or blank space).
function personClickable(path) {
  if (personInProxyUI(path)) {
    return false;
  }
  var n = path.length < PERSON_INPUT_PATH_MAX ? path.length : PERSON_INPUT_PATH_MAX;
  var i;
  for (i = 0; i < n; i++) {
    var el = path[i];
    if (nodeTypeOrZero(el) !== 1) {
      continue;
    }
    if (personInputTags[localName(el)] === true || personInputRoles[lower('' + (attrOf(el, 'role') || ''))] === true) {
      return true;
    }
    if (apply(hasAttribute, el, ['tabindex']) || apply(hasAttribute, el, ['onclick']) ||
        (contentEditable && apply(contentEditable, el, []) === true)) {
      return true;
    }
  }
  if (n === 0 || nodeTypeOrZero(path[0]) !== 1 || typeof getComputedStyleFn !== 'function' || !getPropertyValue) {
    return false;
  }
  // A div with a click listener: sites style what can be clicked with a pointer cursor (it is
  // inherited, so the target's computed value says it for its ancestors too).
  return '' + apply(getPropertyValue, apply(getComputedStyleFn, win, [path[0]]), ['cursor']) === 'pointer';
}

// onPersonInputClick reports a trusted click on something that can be clicked.
function onPersonInputClick(ev) {
  if (ev.isTrusted !== true || !composedPathOf) {
    return;
  }
  try {
    if (personClickable(apply(composedPathOf, ev, []))) {
      personInputReport();
    }
  } catch (e) { /* never break the page's clicks */ }
}

// onPersonInputKey reports a trusted Enter or Space anywhere, and any key in an editable field.
function onPersonInputKey(ev) {
  if (ev.isTrusted !== true || !keyOf || !composedPathOf) {
    return;
  }
  try {
    var path = apply(composedPathOf, ev, []);
    if (personInProxyUI(path)) {
      return;
    }
    var key = '' + apply(keyOf, ev, []);
    if (key === 'Enter' || key === ' ') {
      personInputReport();
      return;
    }
    var el = path.length > 0 ? path[0] : null;
    if (nodeTypeOrZero(el) !== 1) {
      return;
    }
    var tag = localName(el);
    if (tag === 'input' || tag === 'textarea' || (contentEditable && apply(contentEditable, el, []) === true)) {
      var now = apply(dateNow, null, []);
      if (now - personInputKeyAt >= PERSON_INPUT_KEY_GAP) {
        personInputKeyAt = now;
        personInputReport();
      }
    }
  } catch (e) { /* never break the page's keys */ }
}

// startPersonInputReports listens for the person's input.
function startPersonInputReports() {
  on(win, 'click', onPersonInputClick, true);
  on(win, 'auxclick', onPersonInputClick, true);
  on(win, 'keydown', onPersonInputKey, true);
}
