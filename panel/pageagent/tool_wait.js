// ---- wait_for and wait_for_stable. ----

// pageText is the page's text and its same-origin frames', lowercased.
function pageText() {
  return lower(rawPageText());
}
// rawPageText is the page's text and its same-origin frames', as shown.
function rawPageText() {
  var t = docText(doc);
  var fl = frameList();
  var i;
  for (i = 0; i < fl.length; i++) {
    t = t + '\n' + docText(fl[i].doc);
  }
  return t;
}
function docText(d) {
  var body = bodyOf ? apply(bodyOf, d, []) : null;
  if (!body || !innerTextG) {
    return '';
  }
  try {
    return '' + apply(innerTextG, body, []);
  } catch (e) {
    return '';
  }
}
function hasText(want) {
  return hasTextIn(pageText(), want);
}
// hasTextIn is hasText over t, the page's text lowercased.
function hasTextIn(t, want) {
  if (contains(t, want)) {
    return true;
  }
  return t.length < 300000 && contains(collapse(t, 300000), want);
}
// waitLast is the page text the last textNow answer sent, and its id: the chat polls every
// 100 ms, and a page whose text holds the text only in a secret (or that shows it while
// waiting for it to go) would otherwise send its whole text each time.
var waitLast = null;
var waitSeq = 0;
function toolWaitFor(args, done) {
  checkArgs(args, 'wait_for', allowed(['ref', 'text', 'gone', 'timeoutMs', 'textNow', 'since']));
  if (own(args, 'textNow') === true) {
    // The chat's own (proxy/chat/oracle_wait.go; never the model's): whether the text is on
    // the page now and, when it is, the page's text, which Go searches after redaction, so
    // that a text found only inside a secret is not found (and a page without it sends
    // nothing). A text the same as the one sent under since is not sent again (same).
    var raw = rawPageText();
    var now = dict();
    now.present = hasTextIn(lower(raw), normal(strArg(args, 'text', true, 400)));
    if (now.present) {
      if (waitLast !== null && own(args, 'since') === waitLast.id && raw === waitLast.text) {
        now.same = true;
      } else {
        waitSeq++;
        waitLast = dict();
        waitLast.id = waitSeq;
        waitLast.text = raw;
        now.text = raw;
      }
      now.textId = waitLast.id;
    }
    return now;
  }
  var ref = strArg(args, 'ref', false, 20);
  var text = strArg(args, 'text', false, 400);
  var gone = boolArg(args, 'gone', false);
  var timeout = intArg(args, 'timeoutMs', 5000, 0, MAX_WAIT);
  if ((ref !== null) === (text !== null)) {
    refuse('give exactly one of ref or text');
  }
  var n = 0;
  if (ref !== null) {
    var plain = ref;
    if (plain.length > 2 && apply(charCodeAt, plain, [0]) === 91) {
      plain = apply(strSlice, plain, [1, plain.length - 1]);
    }
    n = refNumber(plain);
    if (!n) {
      refuse('"' + cut(ref, 20) + '" is not an element ref (refs look like e12; get them from outline or query)');
    }
  }
  var want = text !== null ? normal(text) : '';
  var start = nowMs();
  var what = ref !== null ? 'element ' + ref : '"' + cut(text, 60) + '"';
  function met() {
    if (ref !== null) {
      var node = liveRef(n);
      var shown = node !== null && !hiddenAttr(node) && shownLive(node);
      return gone ? !shown : shown;
    }
    return gone ? !hasText(want) : hasText(want);
  }
  function check() {
    if (met()) {
      var res = dict();
      res.found = !gone;
      res.gone = gone;
      res.waitedMs = round(nowMs() - start);
      if (ref !== null && !gone) {
        res.element = describe(liveRef(n), true);
      }
      done(true, res);
      return;
    }
    if (nowMs() - start >= timeout) {
      done(false, what + (gone ? ' was still there' : ' did not appear') + ' after ' + timeout + ' ms' +
        (ref !== null && !gone && liveRef(n) === null ? ' (the ref names no element on the page; call outline again)' : ''));
      return;
    }
    runLater('wait_for', done, POLL_MS, check);
  }
  check();
  return PENDING;
}
function toolWaitStable(args, done) {
  checkArgs(args, 'wait_for_stable', allowed(['ms', 'timeoutMs']));
  var quiet = intArg(args, 'ms', 500, 50, 5000);
  var timeout = intArg(args, 'timeoutMs', 5000, 100, MAX_WAIT);
  if (typeof MO !== 'function' || !moObserve || !moDisconnect) {
    refuse('this browser cannot watch the page for the agent');
  }
  var start = nowMs();
  var last = start;
  var count = 0;
  var mo = new MO(function (records) {
    last = nowMs();
    count = count + (records ? num(records.length) : 1);
  });
  var o = dict();
  o.subtree = true;
  o.childList = true;
  o.attributes = true;
  o.characterData = true;
  apply(moObserve, mo, [apply(documentElement, doc, []), o]);
  // Same-origin frames count too: one observer watches each frame's document as well.
  var fl = frameList();
  var fi;
  for (fi = 0; fi < fl.length; fi++) {
    try {
      var fde = apply(documentElement, fl[fi].doc, []);
      if (fde) {
        apply(moObserve, mo, [fde, o]);
      }
    } catch (e) { /* a frame that went */ }
  }
  function finish(stable) {
    try {
      apply(moDisconnect, mo, []);
    } catch (e) { /* gone */ }
    var res = dict();
    res.stable = stable;
    res.waitedMs = round(nowMs() - start);
    res.mutations = count;
    if (!stable) {
      res.note = 'the page was still changing after ' + timeout + ' ms';
    }
    done(true, res);
  }
  function check() {
    var t = nowMs();
    if (t - last >= quiet) {
      finish(true);
    } else if (t - start >= timeout) {
      finish(false);
    } else {
      later(check, 50);
    }
  }
  later(check, 50);
  return PENDING;
}
