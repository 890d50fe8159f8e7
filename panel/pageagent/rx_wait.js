// ---- dom.waitFor: an element that appears later. --------------------------------------------
//
// The proxy relays dom.waitFor(selector, {timeout}) as an op with args [selector, {timeout: ms}]
// (the options written out in full by the proxy). It is answered at once when an element
// matches; else later, from here: a MutationObserver on the document (children, subtree,
// attributes) tries every waiting selector after a page change (the first change at once, then
// at most once per WAIT_COOLDOWN_MS, so a page that changes constantly costs at most one try of
// each waiting selector per cooldown), each try exactly dom.query's (opQuery: the same checks,
// the password rule included, again each time). A wait ends with the first match, a refusal,
// its timeout, the remixlet's release or, silently, with the connection it came on (its answer
// would reach a session that did not ask: a page back from the back/forward cache reconnects as
// a new session). The observer is disconnected whenever nothing waits.

var WAIT_MAX_MS = 60000;   // the proxy's maximum; it writes the timeout out
var WAIT_MAX = 32;         // waits of one remixlet (the proxy counts them too)
var WAIT_COOLDOWN_MS = 16;
var WAITING = dict();      // what waitFor returns for an op it answers later
var waits = null;          // key -> {t, id, q, sock, timer}
var waitNext = 1;
var waitObserver = null;
var waitTimer = 0;
var waitDirty = false;

// waitTimeout reads the op's timeout (ms), which the proxy wrote out.
function waitTimeout(opts) {
  var ms = opts !== null && typeof opts === 'object' ? own(opts, 'timeout') : undefined;
  if (typeof ms !== 'number' || !(ms >= 1 && ms <= WAIT_MAX_MS)) {
    refuse('the timeout must be a number of milliseconds from 1 to ' + WAIT_MAX_MS);
  }
  return ms;
}

// waitCount is how many waits remixlet table t has.
function waitCount(t) {
  var n = 0;
  if (waits) {
    apply(mapForEach, waits, [function (w) {
      if (w.t === t) {
        n++;
      }
    }]);
  }
  return n;
}

// waitFor runs a dom.waitFor op: the handle of a match now, or WAITING after registering the
// wait (answered by waitEnd).
function waitFor(t, req) {
  var args = own(req, 'args');
  var ms = waitTimeout(arg(args, 1));
  var q = list();
  put(q, 0, arg(args, 0));
  var found = opQuery(t, q, false);
  if (found !== null) {
    return found;
  }
  if (typeof MO !== 'function' || !moObserve || !moDisconnect) {
    refuse('this browser cannot watch the page for dom.waitFor');
  }
  if (waitCount(t) >= WAIT_MAX) {
    refuse('more than ' + WAIT_MAX + ' dom.waitFor calls are waiting on this page');
  }
  if (!waits) {
    waits = new MapCtor();
  }
  var w = dict();
  w.key = waitNext;
  waitNext = waitNext + 1;
  w.t = t;
  w.id = own(req, 'id');
  w.q = q;
  w.sock = sock;
  w.timer = later(function () {
    waitEnd(w, false, null, 'no element matched "' + q[0] + '" within ' + ms + ' ms');
  }, ms);
  apply(mapSet, waits, [w.key, w]);
  watchWaits();
  return WAITING;
}

// waitEnd ends a wait and answers its op, on the connection it came on only; with ok false and
// error null it ends unanswered.
function waitEnd(w, ok, value, error) {
  if (!waits || apply(mapGet, waits, [w.key]) !== w) {
    return;
  }
  apply(mapDelete, waits, [w.key]);
  cancel(w.timer);
  if (apply(mapSize, waits, []) === 0) {
    unwatchWaits();
  }
  if (w.sock !== sock || !w.sock || (!ok && error === null)) {
    return;
  }
  var m = message('result');
  m.id = w.id;
  m.ok = ok;
  if (ok) {
    m.value = value;
  } else {
    m.error = error;
  }
  send(m);
}

// waitList is the waits now, in a list of our own (ending one changes the map).
function waitList() {
  var out = list();
  apply(mapForEach, waits, [function (w) {
    put(out, out.length, w);
  }]);
  return out;
}

// endRefusedWaits ends, refused, every wait whose selector the page agent now refuses: at the
// first key of a secret (rx_mirrors.js noteSecretTyping), a wait comparing a data-* value
// (fieldSelectorProblem), before the page's handlers of that key write any mirror. Its answer
// is the same whatever is typed.
function endRefusedWaits() {
  if (!waits) {
    return;
  }
  var now = waitList();
  var n = now.length;
  var i;
  for (i = 0; i < n; i++) {
    var why = fieldSelectorProblem(now[i].q[0]);
    if (why !== '') {
      waitEnd(now[i], false, null, why);
    }
  }
}

// tryWaits tries every waiting selector once (secretOnPage's walk once for all).
function tryWaits() {
  if (waits) {
    inSecretBatch(tryEachWait);
  }
}
function tryEachWait() {
  var now = waitList();
  var n = now.length;
  var i;
  for (i = 0; i < n; i++) {
    var w = now[i];
    if (w.sock !== sock || !tables || apply(mapGet, tables, [w.t.rx]) !== w.t) {
      waitEnd(w, false, null, null); // another connection's, or a released remixlet's: dropped unanswered
      continue;
    }
    var found = null;
    try {
      found = opQuery(w.t, w.q, false);
    } catch (e) {
      waitEnd(w, false, null, e !== null && typeof e === 'object' && own(e, 'mark') === REFUSAL ? e.why : 'the operation failed in the page');
      continue;
    }
    if (found !== null) {
      waitEnd(w, true, found, null);
    }
  }
}

function waitCooldown() {
  if (waitDirty) {
    waitDirty = false;
    tryWaits();
    waitTimer = later(waitCooldown, WAIT_COOLDOWN_MS);
    return;
  }
  waitTimer = 0;
}

// watchWaits starts the observer for the waits, once.
function watchWaits() {
  if (waitObserver) {
    return;
  }
  waitObserver = new MO(function () {
    if (waitTimer) {
      waitDirty = true;
      return;
    }
    tryWaits();
    waitTimer = later(waitCooldown, WAIT_COOLDOWN_MS);
  });
  var opts = dict();
  opts.childList = true;
  opts.subtree = true;
  opts.attributes = true;
  apply(moObserve, waitObserver, [doc, opts]);
}

function unwatchWaits() {
  if (waitObserver) {
    try {
      apply(moDisconnect, waitObserver, []);
    } catch (e) { /* already gone */ }
    waitObserver = null;
  }
  cancel(waitTimer);
  waitTimer = 0;
  waitDirty = false;
}

// waitRelease drops the waits of a remixlet the proxy released, unanswered (the proxy has failed
// their ops already).
function waitRelease(rx) {
  if (!waits) {
    return;
  }
  var now = waitList();
  var i;
  for (i = 0; i < now.length; i++) {
    if (now[i].t.rx === rx) {
      waitEnd(now[i], false, null, null);
    }
  }
}
