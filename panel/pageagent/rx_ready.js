// ---- Document readiness, for the remixlets' run times. --------------------------------------
//
// The proxy starts each remixlet's script at its run time (manifest.json "run_at":
// document_start at once, document_end after DOMContentLoaded, document_idle at load or a
// grace after DOMContentLoaded). The page agent only reports what it saw: the state in every
// hello (readiness(), so a page restored from the back/forward cache or reconnecting says where
// it is), and {type:'ready', state} when DOMContentLoaded and the window's load happen. Reports
// only go forward, and an event that document.readyState contradicts (a DOMContentLoaded the
// page dispatches itself while the parser still runs, a load before the document is complete)
// is not taken. A document_end script may start earlier (the hello says holds: true); its ops
// then wait here until that DOMContentLoaded report (below).

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
  runHeldOps();
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
  on(win, 'DOMContentLoaded', function () { advanceReady('interactive'); }, true);
  on(win, 'load', function () { advanceReady('complete'); }, true);
}

// ---- Ops held until the document is parsed. ----
//
// A script whose run time is not document_start may start in the proxy while the page is still
// parsing (proxy/remixlet/hold.go); its dom calls come marked after: 'interactive'. While the
// document is loading they wait here, in arrival order, and run right after the DOMContentLoaded
// report, in the same task: they see the parsed document, as if the script had started then, one
// round trip sooner. A held op is dropped unanswered when its remixlet is released or its
// connection ends (the proxy fails it itself; a restored page is a new session).

var heldOps = null; // a list of {req, sock}, in arrival order; null when none

// holdOp holds req when it must wait for the parsed document; true when held.
function holdOp(req) {
  if (own(req, 'after') !== 'interactive' || docReady !== 'loading') {
    return false;
  }
  if (!heldOps) {
    heldOps = list();
  }
  var h = dict();
  h.req = req;
  h.sock = sock;
  put(heldOps, heldOps.length, h);
  return true;
}

// runHeldOps runs the held ops of the current connection, in order, once the document is parsed.
function runHeldOps() {
  var ops = heldOps;
  heldOps = null;
  var i;
  for (i = 0; ops && i < ops.length; i++) {
    if (ops[i].sock === sock && sock) {
      runOp(ops[i].req);
    }
  }
}

// dropHeldOps forgets the held ops of remixlet rx (released).
function dropHeldOps(rx) {
  var ops = heldOps;
  if (!ops) {
    return;
  }
  heldOps = null;
  var i;
  for (i = 0; i < ops.length; i++) {
    if (own(ops[i].req, 'remixlet') !== rx) {
      if (!heldOps) {
        heldOps = list();
      }
      put(heldOps, heldOps.length, ops[i]);
    }
  }
}
