// ---- The person's own input, for the agent's send guard. --------------------------------------
//
// For 30 s after an action of the AI agent the proxy holds the requests that change something
// which a page of the chat's site sends, until the person allows them on a card
// (proxy/chat/sendguard.go). The person's own "Send", "Like" or Enter in that page would be
// carded too. So the page agent reports the person's own deliberate input that may make a page
// send: a trusted click or auxclick on something that can be clicked (a link, a button, a form
// control that is not a text field, a label, an element with a clickable role, tabindex, onclick,
// or a pointer cursor), a trusted Enter, and a trusted Space outside a text field (it activates
// the focused control). Typing is not reported, nor a click into a text field (eleventh
// session: a report every 250 ms of typing let any late post of the agent's action on the page
// go while the person wrote; the cost is that a draft the page saves as the person types, during
// the window, is carded). Each report carries the page's address: the proxy lets a request go
// without a card only when its Referer is the reporting page and it follows the report closely
// (proxy/chat/sendguard_person.go has the rule and why the agent cannot take it).
//
// Only isTrusted input counts: the agent's clicks and keys are synthetic (isTrusted false). Not
// submit, change or input events: the browser fires them trusted for a page's own
// form.requestSubmit(), a checkbox's synthetic click() and execCommand, which the agent's
// synthetic input can start; the person's own submission comes with their click on the submit
// button or their Enter, which report. The listeners are at window, capture phase, registered
// before any page script: a page cannot stop them. Clicks in frames are not seen (frames have no
// page agent): their sends are carded. Input on the proxy's own launcher and tray is not input to
// the page (a click to show the panel just after the agent's action must not release what it
// sends). A page's script can send reports of its own; a hostile script gains nothing by it (it
// could post outside the window or off the site as well), and a report counts only for requests
// of its own page.

var PERSON_INPUT_PATH_MAX = 32; // elements of a click's path looked at
var personInputTags = allowed(['a', 'area', 'button', 'input', 'select', 'label', 'summary', 'option']);
var personInputRoles = allowed(['button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'tab',
  'checkbox', 'switch', 'radio', 'treeitem', 'gridcell', 'combobox']);
// personInputButtons are the input types that are controls, not text fields.
var personInputButtons = allowed(['button', 'submit', 'reset', 'image', 'checkbox', 'radio', 'file', 'color', 'range']);

// personInputReport tells the proxy that the person gave this page input now.
function personInputReport() {
  var m = message('person-input');
  m.url = href();
  send(m);
}

// personTextField reports whether el is where the person types: a text input, a textarea, an
// editable element, a textbox or searchbox role. Keys there are writing, a click there is not
// a control's.
function personTextField(el) {
  if (nodeTypeOrZero(el) !== 1) {
    return false;
  }
  var tag = localName(el);
  if (tag === 'textarea' || tag === 'input' && personInputButtons[lower('' + (attrOf(el, 'type') || ''))] !== true) {
    return true;
  }
  var role = lower('' + (attrOf(el, 'role') || ''));
  return role === 'textbox' || role === 'searchbox' || (contentEditable && apply(contentEditable, el, []) === true);
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
    if (personTextField(el)) {
      return false; // a click into a field, to type
    }
    if (personInputTags[localName(el)] === true || personInputRoles[lower('' + (attrOf(el, 'role') || ''))] === true) {
      return true;
    }
    if (apply(hasAttribute, el, ['tabindex']) || apply(hasAttribute, el, ['onclick'])) {
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

// onPersonInputKey reports a trusted Enter anywhere, and a trusted Space outside a text field
// (on a focused control, it activates it). Other keys, and Space in a field, are typing.
function onPersonInputKey(ev) {
  if (ev.isTrusted !== true || !keyOf || !composedPathOf) {
    return;
  }
  try {
    var key = '' + apply(keyOf, ev, []);
    if (key !== 'Enter' && key !== ' ') {
      return;
    }
    var path = apply(composedPathOf, ev, []);
    if (personInProxyUI(path) || key === ' ' && path.length > 0 && personTextField(path[0])) {
      return;
    }
    personInputReport();
  } catch (e) { /* never break the page's keys */ }
}

// startPersonInputReports listens for the person's input.
function startPersonInputReports() {
  on(win, 'click', onPersonInputClick, true);
  on(win, 'auxclick', onPersonInputClick, true);
  on(win, 'keydown', onPersonInputKey, true);
}
