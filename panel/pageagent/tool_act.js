// ---- Page actions (Act mode, issue 6). --------------------------------------------------
//
// type, set_field, select, press_keys, scroll, hover, navigate, back, forward, wait_for,
// wait_for_stable; find (a text search over the outline) and page_state (open dialogs and
// forms with unsaved input, for the proxy's check of done). The events they dispatch are
// synthetic (isTrusted false): they reach the page's handlers, and the browser's default
// actions that only trusted events have (moving focus on Tab, submitting on Enter,
// scrolling on PageDown, editing on Backspace) are done here by hand where it is safe.
// Typed text and option names are data: they become values and event fields, never code,
// HTML or selectors. Password fields are never typed into. navigate and back/forward stay
// on the page's origin (navigate's address is also checked by the proxy first).

var EventCtor = win.Event;
var InputEventCtor = win.InputEvent;
var KeyboardEventCtor = win.KeyboardEvent;
var MouseEventCtor = win.MouseEvent;
var PointerEventCtor = win.PointerEvent;
var dispatchEventFn = EventTarget.prototype.dispatchEvent;
var defaultPreventedG = getter(Event.prototype, 'defaultPrevented');
// rx_build.js's scrub empties textareas with it, outside any tool call: captured now.
var textareaSetValue = setter(proto(win.HTMLTextAreaElement), 'value');
var winScrollBy = win.scrollBy;
var winScrollTo = win.scrollTo;
// The rest is captured at the first tool call from the fresh realm (captureActTools, called by
// tool_capture.js's captureTools).
var activeElementDoc, activeElementRoot;
var selectFn = dict();
var setRangeFn = dict();
var selStartG = dict();
var selEndG = dict();
var selectedIndexS, optionValueG, optionSelectedG, optionDefaultSelectedG;
var inputDefaultValueG, textareaDefaultValueG, defaultCheckedG, isContentEditableG;
var execCommandFn, requestSubmitFn, elScrollBy;
var scrollTopG, scrollLeftG, clientHeightG, clientWidthG, scrollWidthG;
var historyBack, historyForward, navEntries, navCurrentEntryG, entryIndexG, entryUrlG;

function captureActTools(w, inputProto, selectProto, textareaProto, formProto) {
  var elementProto = proto(w.Element);
  var docProto = proto(w.Document);
  activeElementDoc = getter(docProto, 'activeElement');
  activeElementRoot = getter(proto(w.ShadowRoot), 'activeElement');
  selectFn.input = inputProto && inputProto.select;
  selectFn.textarea = textareaProto && textareaProto.select;
  setRangeFn.input = inputProto && inputProto.setSelectionRange;
  setRangeFn.textarea = textareaProto && textareaProto.setSelectionRange;
  selStartG.input = getter(inputProto, 'selectionStart');
  selStartG.textarea = getter(textareaProto, 'selectionStart');
  selEndG.input = getter(inputProto, 'selectionEnd');
  selEndG.textarea = getter(textareaProto, 'selectionEnd');
  selectedIndexS = setter(selectProto, 'selectedIndex');
  var optionProto = proto(w.HTMLOptionElement);
  optionValueG = getter(optionProto, 'value');
  optionSelectedG = getter(optionProto, 'selected');
  optionDefaultSelectedG = getter(optionProto, 'defaultSelected');
  inputDefaultValueG = getter(inputProto, 'defaultValue');
  textareaDefaultValueG = getter(textareaProto, 'defaultValue');
  defaultCheckedG = getter(inputProto, 'defaultChecked');
  isContentEditableG = getter(proto(w.HTMLElement), 'isContentEditable');
  execCommandFn = docProto.execCommand;
  requestSubmitFn = formProto && formProto.requestSubmit;
  elScrollBy = elementProto.scrollBy;
  scrollTopG = getter(elementProto, 'scrollTop');
  scrollLeftG = getter(elementProto, 'scrollLeft');
  clientHeightG = getter(elementProto, 'clientHeight');
  clientWidthG = getter(elementProto, 'clientWidth');
  scrollWidthG = getter(elementProto, 'scrollWidth');
  var histProto = proto(w.History);
  historyBack = histProto && histProto.back;
  historyForward = histProto && histProto.forward;
  var navProto = proto(w.Navigation);
  navEntries = navProto && navProto.entries;
  navCurrentEntryG = getter(navProto, 'currentEntry');
  var entryProto = proto(w.NavigationHistoryEntry);
  entryIndexG = getter(entryProto, 'index');
  entryUrlG = getter(entryProto, 'url');
}

var MAX_TYPE = 10000;       // characters typed by one call
var MAX_KEYS = 20;          // keys pressed by one call
var MAX_WAIT = 10000;       // ms a wait may last
var POLL_MS = 100;

function nowMs() {
  return num(apply(dateNow, null, []));
}
// runLater runs step after ms; a refusal or failure in it answers the call.
function runLater(tool, done, ms, step) {
  later(function () {
    try {
      step();
    } catch (e) {
      done(false, e !== null && typeof e === 'object' && own(e, 'mark') === REFUSAL ? e.why : tool + ' failed in the page');
    }
  }, ms);
}
function boolArg(args, name, def) {
  var v = own(args, name);
  if (v === undefined || v === null) {
    return def;
  }
  if (typeof v !== 'boolean') {
    refuse(name + ' must be true or false');
  }
  return v;
}
// textArg is a string that may be empty (typing nothing clears a field).
function textArg(args, name, max) {
  var v = own(args, name);
  if (typeof v !== 'string' || v.length > max) {
    refuse(name + ' must be a string of at most ' + max + ' characters');
  }
  return v;
}
function ours(node) {
  return host !== null && (node === host || within(host, node));
}
// target resolves the ref of an action and checks it is there to act on.
function target(args) {
  var node = byRef(strArg(args, 'ref', true, 20));
  if (ours(node)) {
    refuse('that element is remixproxy\'s own launcher');
  }
  if (!connected(node)) {
    refuse('the element is no longer on the page');
  }
  var what = describe(node, true);
  if (hiddenAttr(node) || !shownLive(node)) {
    refuse(what + ' is not visible');
  }
  return node;
}
function makeInit(bubbles) {
  var init = dict();
  init.bubbles = bubbles;
  init.cancelable = true;
  init.composed = true;
  return init;
}
// fire dispatches an event and reports whether the page let its default happen.
function fire(node, ev) {
  agentActs(dispatchEventFn, node, [ev]); // person_nav.js: what a handler opens here is the agent's
  return !(defaultPreventedG && apply(defaultPreventedG, ev, []) === true);
}
function fireEvent(node, type) {
  return fire(node, new EventCtor(type, makeInit(true)));
}
function fireInput(node, inputType, data) {
  var init = makeInit(true);
  init.cancelable = false;
  if (typeof InputEventCtor === 'function') {
    init.inputType = inputType;
    init.data = data;
    return fire(node, new InputEventCtor('input', init));
  }
  return fire(node, new EventCtor('input', init));
}
// activeDeep is the focused element, through open shadow roots.
function activeDeep() {
  var a = activeElementDoc ? apply(activeElementDoc, doc, []) : null;
  var k = 0;
  while (a && k < 20) {
    var sr = shadowRootG ? apply(shadowRootG, a, []) : null;
    var inner = sr && activeElementRoot ? apply(activeElementRoot, sr, []) : null;
    if (!inner && localName(a) === 'iframe') {
      var fd = frameDoc(a);
      inner = fd ? apply(activeElementDoc, fd, []) : null; // focus inside a same-origin frame
    }
    if (!inner) {
      break;
    }
    a = inner;
    k++;
  }
  return a;
}
function focusOn(node) {
  if (focus) {
    try {
      apply(focus, node, []);
    } catch (e) { /* not focusable: the events still go to it */ }
  }
}

// ---- A new page an action's page handlers start (OPEN-ITEMS 97). -----------------------------
//
// A click whose target is a plain button answers "mayLeave: false", yet the page's click
// handler may submit a form (requestSubmit, form.submit()) or set location: the new page's
// request then reaches the proxy after the answer, and under load after the proxy's short
// watch (act.go navQuiet), so the model was told the click had done what it said while the
// proxy held the submission. So during click, set_field, press_keys and select the page agent
// notes a submit event the page does not cancel and a navigate event (Navigation API) to another
// document while the action runs: when either came, the answer says pageLeaves (mayLeave says
// the action itself activated a link or a form), and the proxy waits for the new page's request
// as for a link's (act.go, finish's waitStart). A navigate event to another document within
// ACT_LEAVE_TAIL after the answer (a form's submit(): Chromium fires it a task later) is
// reported on its own (TypeLeaving); the proxy's watch of the action takes it (act_leaving.go).
// Not seen: a navigation the handler starts later than that (a timer).
// Listeners at window and navigation, capture phase, registered before any page script.

var destSameDocG = getter(proto(win.NavigationDestination), 'sameDocument'); // destination: navigateDestination, person_nav.js
var actWatch = null; // while an action runs: {submits: [events], navs: count}
var ACT_LEAVE_TAIL = 1000; // ms after an action's answer a new page is still reported as its
var actTailUntil = 0; // dateNow() until which one is (0: none)

function onActSubmit(ev) {
  if (actWatch !== null && actWatch.submits.length < 16) {
    actWatch.submits[actWatch.submits.length] = ev;
  }
}
function onActNavigate(ev) {
  if (actWatch === null && actTailUntil === 0) {
    return;
  }
  try {
    if (apply(destSameDocG, apply(navigateDestination, ev, []), []) === true) {
      return;
    }
    if (actWatch !== null) {
      actWatch.navs++;
    } else if (apply(dateNow, null, []) <= actTailUntil) {
      // After the answer (a form's submit() navigates a task later): the proxy's watch of the
      // action takes this report (proxy/chat/act_leaving.go).
      actTailUntil = 0;
      send(message('leaving'));
    }
  } catch (e) { /* counted as nothing */ }
}

// startActLeaveWatch listens for submissions and navigations (start.js).
function startActLeaveWatch() {
  on(win, 'submit', onActSubmit, true);
  if (navigation && navigateDestination && destSameDocG) {
    on(navigation, 'navigate', onActNavigate, true);
  }
}

// actLeft reports whether the watch w saw the page start loading another document.
function actLeft(w) {
  if (w.navs > 0) {
    return true;
  }
  var i;
  for (i = 0; i < w.submits.length; i++) {
    var ev = w.submits[i];
    try {
      // A dialog's form closes the dialog: no new page.
      if (apply(defaultPreventedG, ev, []) !== true && lower('' + (attrOf(apply(eventTarget, ev, []), 'method') || '')) !== 'dialog') {
        return true;
      }
    } catch (e) {
      return true; // unknown: the proxy waits a little longer for a page that may come
    }
  }
  return false;
}

// watchedLeave wraps an action tool: its answer says pageLeaves when the page started loading
// another document while it ran (an answer that comes later, PENDING, is looked at then).
function watchedLeave(fn) {
  return function (args, done) {
    var w = dict();
    w.submits = [];
    w.navs = 0;
    var outer = actWatch;
    actWatch = w;
    var mark = function (ok, v) {
      if (ok && v !== null && typeof v === 'object' && v !== PENDING && v.mayLeave !== true && actLeft(w)) {
        v.pageLeaves = true;
      }
      if (v !== PENDING) {
        actTailUntil = apply(dateNow, null, []) + ACT_LEAVE_TAIL;
      }
      return v;
    };
    var v;
    try {
      v = fn(args, function (ok, r) {
        done(ok, mark(ok, r));
      });
    } finally {
      actWatch = outer;
    }
    return mark(true, v);
  };
}
