// ---- Navigation reports. --------------------------------------------------------------------

// reportNav tells the proxy about a same-document navigation, once per distinct URL. It never
// trusts an event's content: it re-reads location.href.
function reportNav(kind) {
  try {
    var url = href();
    if (url === lastURL) {
      return;
    }
    lastURL = url;
    var m = message('nav');
    m.url = url;
    m.kind = kind;
    send(m);
  } catch (e) { /* never break the page's navigation */ }
}

function wrapHistory(name, original, kind) {
  if (typeof original !== 'function') {
    return;
  }
  var wrapper = function () {
    var result = apply(original, this, arguments);
    reportNav(kind);
    return result;
  };
  replaceMethod(hist, name, wrapper, false); // history not extensible: rely on the listeners
}

// replaceMethod puts fn in obj's own property name (writable and configurable, as a built-in
// method is; enumerable as said); false when obj does not allow it.
function replaceMethod(obj, name, fn, enumerable) {
  var d = dict();
  d.value = fn;
  d.writable = true;
  d.configurable = true;
  d.enumerable = enumerable;
  try {
    defineProperty(obj, name, d);
    return true;
  } catch (e) {
    return false;
  }
}

// newWindow is true when this document came from no document of its origin in its tab: the
// Navigation API's activation names no entry it came from, or only the initial about:blank of a
// new window (an entry outside the tab's list, index -1, whose url reads null). That is the
// first page of a popup or of a new tab. (An entry of the tab whose page sent no full referrer
// also reads url null, but keeps its index.) The hello says so, and the proxy never moves a chat
// to such a page (proxy/chat/follow.go): a same-origin popup opened while a chat runs is not the
// tab's next page. Read at start; false where the browser has no activation to read.
var newWindow = false;

// cameFrom is the address of the entry of its tab this document came from, where the Navigation
// API shows it (an entry of this origin whose page sent a full referrer), else ''. The hello says
// it, and the proxy moves a chat only to a page that came from the chat's page in its own tab
// (proxy/chat/follow.go): a popup its opener navigates came from the popup's previous page, though
// its request names the opener's page as Referer.
var cameFrom = '';

function readNewWindow() {
  if (!navigation || !navigationActivation || !activationFrom || !entryURL || !entryIndex) {
    return;
  }
  try {
    var a = apply(navigationActivation, navigation, []);
    if (a === null || a === undefined) {
      return;
    }
    var from = apply(activationFrom, a, []);
    if (from === null || from === undefined) {
      newWindow = true;
      return;
    }
    var u = apply(entryURL, from, []);
    var index = apply(entryIndex, from, []);
    newWindow = index === -1 && (u === null || u === '' || u === 'about:blank');
    if (!newWindow && typeof u === 'string') {
      cameFrom = u;
    }
  } catch (e) { /* keep false */ }
}

// startNavigationReports wraps the history methods and listens for navigations.
function startNavigationReports() {
  readNewWindow();
  wrapHistory('pushState', originalPushState, 'push');
  wrapHistory('replaceState', originalReplaceState, 'replace');
  on(win, 'popstate', function () { reportNav('pop'); }, true);
  on(win, 'hashchange', function () { reportNav('hash'); }, true);
  if (navigation && navigationType) {
    // Sees pushState even when the page calls a saved original instead of our wrapper.
    try {
      on(navigation, 'currententrychange', function (ev) {
        var t = '';
        try {
          t = apply(navigationType, ev, []);
        } catch (e) { /* keep '' */ }
        if (t === 'push' || t === 'replace') {
          reportNav(t);
        } else if (t === 'traverse') {
          reportNav('pop');
        }
      });
    } catch (e) { /* not an EventTarget here */ }
  }
}
