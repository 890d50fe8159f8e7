// ---- Secrets for the proxy's redaction stage (issue 11). ----------------------------------
//
// The proxy removes the values of this page's password fields from everything the model is
// sent, whatever tool or path carried them (proxy/redact.go); it learns them here, never from
// the model: {type:'secrets', fields:[{id, value}], cookies:[value]}. A report goes when a
// tool starts and before its answer, and when a password field changes (input and change
// events reach the window from open shadow roots too; a frame's fields are reported with the
// next tool). The proxy keeps the values in memory for this page session only. Fields are
// found in the page, its same-origin frames and the open shadow roots in them. "Password
// field" here is the page policy's isSensitive: a password input (also one the page turned
// into text to show it), and an input or textarea the page marks as a password, a one-time
// code or a card; the reading tools never read their values out either.
var fragQSA = fragProto && fragProto.querySelectorAll;
var eventProto = proto(win.Event);
var composedPathFn = eventProto && eventProto.composedPath;
var eventTargetG = getter(eventProto, 'target');
var secretIds = new WeakMapC();
var secretNext = 0;
var lastReport = '';
var lastReportSock = null;
var MAX_REPORTED_VALUE = 1024;
var fieldsFound = null; // passwordFields' list, found again by each report

// passwordFields lists the password inputs of the page, its same-origin frames and the open
// shadow roots in them (the list of the last report, or found now).
function passwordFields() {
  if (fieldsFound) {
    return fieldsFound;
  }
  var out = list();
  var roots = list();
  put(roots, 0, doc);
  var fl = frameList();
  var i;
  for (i = 0; i < fl.length; i++) {
    put(roots, roots.length, fl[i].doc);
  }
  for (i = 0; i < roots.length; i++) {
    var r = roots[i];
    var isDoc = nodeTypeOrZero(r) === 9;
    var all;
    try {
      all = isDoc ? apply(querySelectorAllDoc, r, ['*']) : apply(fragQSA, r, ['*']);
    } catch (e) {
      continue;
    }
    var n = apply(nodeListLength, all, []);
    var j;
    for (j = 0; j < n; j++) {
      var el = apply(nodeListItem, all, [j]);
      if (isSensitive(el)) {
        put(out, out.length, el);
      }
      var sr = null;
      try {
        sr = shadowRootG ? apply(shadowRootG, el, []) : null;
      } catch (e) { /* none */ }
      if (sr && fragQSA) {
        put(roots, roots.length, sr);
      }
    }
  }
  fieldsFound = out;
  return out;
}
function secretId(el) {
  var id = apply(weakGet, secretIds, [el]);
  if (!id) {
    secretNext++;
    id = secretNext;
    apply(weakSet, secretIds, [el, id]);
  }
  return id;
}
function secretField(el) {
  var v = secretValue(el);
  if (v === '') {
    return null;
  }
  var f = dict();
  f.id = secretId(el);
  f.value = v.length > MAX_REPORTED_VALUE ? apply(strSlice, v, [0, MAX_REPORTED_VALUE]) : v;
  return f;
}
// secretValue is the value of a password (or other sensitive) input or textarea; '' when none.
function secretValue(el) {
  try {
    return '' + apply(localName(el) === 'textarea' ? textareaValue : inputValue, el, []);
  } catch (e) {
    return ''; // not a field after all
  }
}
// cookieValues are the values of the page's script-visible cookies.
function cookieValues() {
  var out = list();
  if (!cookieG) {
    return out;
  }
  try {
    var pairs = apply(cookieG, doc, []);
    pairs = typeof pairs === 'string' ? pairs : '';
    var start = 0;
    while (start < pairs.length && out.length < 64) {
      var end = apply(strIndexOf, pairs, [';', start]);
      if (end < 0) {
        end = pairs.length;
      }
      var pair = apply(strSlice, pairs, [start, end]);
      var eq = apply(strIndexOf, pair, ['=']);
      var v = eq >= 0 ? trimSpaces(apply(strSlice, pair, [eq + 1])) : '';
      if (v !== '') {
        put(out, out.length, v);
      }
      start = end + 1;
    }
  } catch (e) { /* no cookies */ }
  return out;
}
function trimSpaces(s) {
  var a = 0;
  var b = s.length;
  while (a < b && apply(charCodeAt, s, [a]) === 32) {
    a++;
  }
  while (b > a && apply(charCodeAt, s, [b - 1]) === 32) {
    b--;
  }
  return apply(strSlice, s, [a, b]);
}
function sendReport(fields, cookies) {
  var m = message('secrets');
  m.fields = fields;
  m.cookies = cookies;
  var s = apply(jsonStringify, null, [m]);
  if (s === lastReport && sock === lastReportSock) {
    return; // the proxy has these already
  }
  lastReport = s;
  lastReportSock = sock;
  sendText(s);
}
// reportSecrets reports every password field's value and the cookies.
function reportSecrets() {
  var fields = list();
  fieldsFound = null; // fields come and go: found again for each report
  try {
    var pw = passwordFields();
    var i;
    for (i = 0; i < pw.length; i++) {
      var f = secretField(pw[i]);
      if (f) {
        put(fields, fields.length, f);
      }
    }
  } catch (e) { /* report what was found */ }
  sendReport(fields, cookieValues());
}
// A password field that changes is reported at once, so a value typed a moment ago is known.
function onPasswordChange(ev) {
  try {
    var path = composedPathFn ? apply(composedPathFn, ev, []) : null;
    var t = path && path.length > 0 ? path[0] : apply(eventTargetG, ev, []);
    if (t && nodeTypeOrZero(t) === 1 && isSensitive(t)) {
      var f = secretField(t);
      if (f) {
        var fields = list();
        put(fields, 0, f);
        sendReport(fields, list());
      }
    }
  } catch (e) { /* never break the page's events */ }
}
// watchPasswordFields reports password fields as they change, and notes the person's own
// choices in selects (rx_policy.js pageSetValue).
function watchPasswordFields() {
  on(win, 'input', onPasswordChange, true);
  on(win, 'change', onPasswordChange, true);
  on(win, 'input', notePersonChoice, true);
  on(win, 'change', notePersonChoice, true);
}

// passwordHeld reports whether a typed password (or other secret) is held on the page now, for
// the tools whose answers cannot be told apart from what the page derived from it
// (read_page_data's globals, inspect_styles, query's rects, scroll's box; OPEN-ITEMS 111): the
// state in which the page's writes are hidden from the model (rx_mirrors.js: from a key into a
// sensitive field that left one holding a value until the fields have been found empty for its
// grace, and the key's own task).
function passwordHeld() {
  return heldWatch || mirrorWindow !== 0;
}

// carriesSecret reports whether an address carries a password or cookie value of the page.
function carriesSecret(address) {
  var sl = secrets(true);
  var i;
  for (i = 0; i < sl.length; i++) {
    if (contains(address, sl[i]) || contains(address, encode(sl[i]))) {
      return true;
    }
  }
  return false;
}

// secrets are the strings no answer may carry: the current values of the page's password
// fields, and for read_page_data the values of its script-visible cookies.
function secrets(withCookies) {
  var out = list();
  try {
    var inputs = passwordFields(); // the page, same-origin frames, open shadow roots
    var i;
    for (i = 0; i < inputs.length; i++) {
      if (isSensitive(inputs[i])) {
        var v = secretValue(inputs[i]);
        if (v.length >= 4) {
          put(out, out.length, v);
        }
      }
    }
  } catch (e) { /* no inputs */ }
  if (withCookies && cookieG) {
    try {
      var parts = apply(cookieG, doc, []);
      var pairs = typeof parts === 'string' ? parts : '';
      var cur = '';
      var j;
      for (j = 0; j <= pairs.length; j++) {
        var c = j < pairs.length ? apply(charCodeAt, pairs, [j]) : 59;
        if (c === 59) {
          var eq = apply(strIndexOf, cur, ['=']);
          var val = eq >= 0 ? collapse(apply(strSlice, cur, [eq + 1]), 4096) : '';
          if (val.length >= 8) {
            put(out, out.length, val);
          }
          cur = '';
        } else {
          cur = cur + apply(fromCharCode, null, [c]);
        }
      }
    } catch (e) { /* no cookies */ }
  }
  return out;
}
function scrubSecrets(json, secretList) {
  var i;
  for (i = 0; i < secretList.length; i++) {
    var esc = apply(jsonStringify, null, [secretList[i]]);
    esc = apply(strSlice, esc, [1, esc.length - 1]);
    json = replaceAll(json, esc, '[redacted]');
  }
  return json;
}
