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
  var d = dict();
  d.value = wrapper;
  d.writable = true;
  d.configurable = true;
  d.enumerable = false;
  try {
    defineProperty(hist, name, d);
  } catch (e) { /* history not extensible: rely on the listeners */ }
}

// startNavigationReports wraps the history methods and listens for navigations.
function startNavigationReports() {
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
