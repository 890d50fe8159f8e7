// ---- Navigation reports. --------------------------------------------------------------------

// reportNav tells the proxy about a same-document navigation, once per distinct URL. It never
// trusts an event's content: it re-reads location.href.
function reportNav(kind) {
  try {
    var url = href();
    if (url === reportedURL()) {
      return;
    }
    setReportedURL(url);
    var m = message('nav');
    m.url = url;
    m.kind = kind;
    send(m);
  } catch (e) { /* never break the page's navigation */ }
}

// startNavigationReports reports what the boot's history wrappers and navigation listeners see
// (early.js watchNavigation).
function startNavigationReports() {
  onEarly('nav', reportNav);
}
