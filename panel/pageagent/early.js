// ---- Window listeners and history wrappers that come first. ---------------------------------
//
// The agent's listeners on window are registered in the capture phase before any page script, so
// a page listener cannot stop them (it can only run after them); the history wrappers must be in
// place before a page script saves the originals. The rest of the page agent arrives after page
// scripts have run, so the boot registers one listener for each window event the rest needs
// (EARLY_EVENTS) and the navigation watch, and the rest hooks its handlers into them (onEarly).
// What happens before the rest arrives finds no handler of the rest: the boot's socket reports
// navigations and readiness itself (boot.js earlyNav, earlyReady), and the rest reads the rest at
// its start (the document's state for the launcher).

var EARLY_EVENTS = ['click', 'input', 'change', 'pagehide', 'pageshow', 'DOMContentLoaded'];
var earlyHandlers = dict(); // event type, or 'nav' and 'ready' -> the rest's handlers

// onEarly adds fn to the handlers of type: a window event of EARLY_EVENTS (fn gets the event),
// 'nav' (the kind of a same-document navigation) or 'ready' (the document's new state).
function onEarly(type, fn) {
  var l = own(earlyHandlers, type);
  if (!l) {
    l = list();
    earlyHandlers[type] = l;
  }
  put(l, l.length, fn);
}

// fireEarly calls the handlers of type with arg; one that throws does not stop the others.
function fireEarly(type, arg) {
  var l = own(earlyHandlers, type);
  var i;
  for (i = 0; l && i < l.length; i++) {
    try {
      l[i](arg);
    } catch (e) { /* never break the page's events */ }
  }
}

// listenEarly registers the window listeners of EARLY_EVENTS, in the capture phase.
function listenEarly() {
  var i;
  for (i = 0; i < EARLY_EVENTS.length; i++) {
    on(win, EARLY_EVENTS[i], earlyListener(EARLY_EVENTS[i]), true);
  }
}

function earlyListener(type) {
  return function (ev) {
    fireEarly(type, ev);
  };
}

// wrapHistory replaces history[name] with a wrapper that calls original and fires 'nav'.
function wrapHistory(name, original, kind) {
  if (typeof original !== 'function') {
    return;
  }
  var wrapper = function () {
    var result = apply(original, this, arguments);
    fireEarly('nav', kind);
    return result;
  };
  var d = dict();
  d.value = wrapper;
  d.writable = true;
  d.configurable = true;
  d.enumerable = false;
  try {
    defineProperty(hist, name, d);
  } catch (e) { /* history not extensible: rely on the listeners */ }
}

// watchNavigation wraps the history methods and listens for navigations, before any page script
// can save the originals or stop the events; navigation.js reports what it sees.
function watchNavigation() {
  wrapHistory('pushState', originalPushState, 'push');
  wrapHistory('replaceState', originalReplaceState, 'replace');
  on(win, 'popstate', function () { fireEarly('nav', 'pop'); }, true);
  on(win, 'hashchange', function () { fireEarly('nav', 'hash'); }, true);
  if (navigation && navigationType) {
    // Sees pushState even when the page calls a saved original instead of our wrapper.
    try {
      on(navigation, 'currententrychange', function (ev) {
        var t = '';
        try {
          t = apply(navigationType, ev, []);
        } catch (e) { /* keep '' */ }
        if (t === 'push' || t === 'replace') {
          fireEarly('nav', t);
        } else if (t === 'traverse') {
          fireEarly('nav', 'pop');
        }
      });
    } catch (e) { /* not an EventTarget here */ }
  }
}
