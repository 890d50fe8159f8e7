// ---- Document readiness, for the remixlets' run times. --------------------------------------
//
// The proxy starts each remixlet's script at its run time (manifest.json "run_at":
// document_start at once, document_end after DOMContentLoaded, document_idle at load or a
// grace after DOMContentLoaded). The page agent only reports what it saw: the state in every
// hello (readiness(), so a page restored from the back/forward cache or reconnecting says where
// it is), and {type:'ready', state} when DOMContentLoaded and the window's load happen. Reports
// only go forward; an event the page dispatches itself (not isTrusted) is not taken, nor one
// that document.readyState contradicts (a DOMContentLoaded while the parser still runs, a load
// before the document is complete).

var docReady = 'loading'; // 'loading' | 'interactive' (DOMContentLoaded fired) | 'complete' (load fired)

// readiness is the document's state as the hello reports it.
function readiness() {
  return docReady;
}

// advanceReady takes a DOMContentLoaded ('interactive') or load ('complete') and reports it.
function advanceReady(state) {
  var rs;
  try {
    rs = '' + apply(readyState, doc, []);
  } catch (e) {
    return;
  }
  if (rs === 'loading' || (state === 'complete' && rs !== 'complete')) {
    return;
  }
  if (docReady === 'complete' || docReady === state) {
    return;
  }
  docReady = state;
  var m = message('ready');
  m.state = state;
  send(m);
}

// startReadinessReports listens for DOMContentLoaded and load, in the capture phase on window,
// registered before any page script (a page listener cannot stop them). A document already
// complete counts as loaded; one 'interactive' at start may still have DOMContentLoaded ahead
// (deferred scripts run first), so the event decides.
function startReadinessReports() {
  try {
    if (apply(readyState, doc, []) === 'complete') {
      docReady = 'complete';
    }
  } catch (e) { /* keep 'loading' */ }
  // Only the browser's own events: a deferred page script runs with readyState already
  // 'interactive', before the real DOMContentLoaded, and could dispatch one of its own (isTrusted
  // is an unforgeable own property of every event).
  on(win, 'DOMContentLoaded', function (ev) {
    if (ev.isTrusted === true) {
      advanceReady('interactive');
    }
  }, true);
  on(win, 'load', function (ev) {
    if (ev.isTrusted === true) {
      advanceReady('complete');
    }
  }, true);
}
