// ---- Small helpers of the page tools. ---------------------------------------------------------

function nodeTypeOrZero(n) {
  try {
    return apply(nodeTypeG, n, []);
  } catch (e) {
    return 0;
  }
}
function connected(n) {
  if (apply(isConnected, n, []) !== true) {
    return false;
  }
  var d = ownerDoc(n);
  return d === doc || d === null || frameOf(d) !== null; // a frame's document while the frame is there
}
function hasAttr(n, name) {
  return apply(hasAttribute, n, [name]);
}
function attrStr(n, name) {
  var v = attrOf(n, name);
  return typeof v === 'string' ? v : '';
}
function matches(n, sel) {
  try {
    return apply(matchesFn, n, [sel]) === true;
  } catch (e) {
    return false;
  }
}
function closest(n, sel) {
  try {
    return apply(closestFn, n, [sel]);
  } catch (e) {
    return null;
  }
}
function within(outer, inner) {
  return apply(containsFn, outer, [inner]) === true;
}
function isSpace(c) {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 160;
}
// collapse turns whitespace runs into one space, trims, and cuts to max characters.
function collapse(s, max) {
  if (typeof s !== 'string') {
    return '';
  }
  var out = '';
  var space = false;
  var i;
  var n = s.length;
  for (i = 0; i < n; i++) {
    var c = apply(charCodeAt, s, [i]);
    if (isSpace(c)) {
      space = out !== '';
      continue;
    }
    if (space) {
      out = out + ' ';
      space = false;
    }
    if (out.length >= max) {
      return out + ELLIPSIS;
    }
    out = out + apply(fromCharCode, null, [c]);
  }
  return out;
}
function cut(s, max) {
  return s.length > max ? apply(strSlice, s, [0, max]) + ELLIPSIS : s;
}
// quote writes s as a double-quoted string for an outline line.
function quote(s) {
  var out = '"';
  var i;
  for (i = 0; i < s.length; i++) {
    var c = apply(charCodeAt, s, [i]);
    if (c === 34 || c === 92) {
      out = out + '\\';
    }
    out = out + apply(fromCharCode, null, [c]);
  }
  return out + '"';
}
// splitSpace splits s on whitespace, dropping empty parts.
function splitSpace(s) {
  var out = list();
  var cur = '';
  var i;
  for (i = 0; i <= s.length; i++) {
    var c = i < s.length ? apply(charCodeAt, s, [i]) : 32;
    if (isSpace(c)) {
      if (cur !== '') {
        put(out, out.length, cur);
      }
      cur = '';
    } else {
      cur = cur + apply(fromCharCode, null, [c]);
    }
  }
  return out;
}
function replaceAll(s, find, repl) {
  if (find === '') {
    return s;
  }
  var out = '';
  var from = 0;
  for (;;) {
    var at = apply(strIndexOf, s, [find, from]);
    if (at < 0) {
      return out + apply(strSlice, s, [from]);
    }
    out = out + apply(strSlice, s, [from, at]) + repl;
    from = at + find.length;
  }
}
function nodeList(nl) {
  var out = list();
  var n = apply(nodeListLength, nl, []);
  var i;
  for (i = 0; i < n; i++) {
    put(out, i, apply(nodeListItem, nl, [i]));
  }
  return out;
}
// queryDoc queries the page and its same-origin frames (see frameList), in that order.
function queryDoc(sel) {
  var out = nodeList(apply(querySelectorAllDoc, doc, [sel]));
  var frames = frameList();
  var i;
  for (i = 0; i < frames.length; i++) {
    var more = nodeList(apply(querySelectorAllDoc, frames[i].doc, [sel]));
    var j;
    for (j = 0; j < more.length; j++) {
      put(out, out.length, more[j]);
    }
  }
  return out;
}
function queryIn(node, sel) {
  return nodeList(apply(querySelectorAllEl, node, [sel]));
}
function num(x) {
  return typeof x === 'number' && x === x ? x : 0;
}
function round(x) {
  return mathRound(num(x));
}

// ---- Arguments. -------------------------------------------------------------------------

function checkArgs(args, tool, allowed) {
  var names = objectKeys(args);
  var i;
  for (i = 0; i < names.length; i++) {
    if (allowed[names[i]] !== true) {
      refuse(tool + ': unknown argument "' + cut('' + names[i], 40) + '" (known: ' + joinKeys(allowed) + ')');
    }
  }
}
function joinKeys(d) {
  var names = objectKeys(d);
  var out = '';
  var i;
  for (i = 0; i < names.length; i++) {
    out = out + (i ? ', ' : '') + names[i];
  }
  return out === '' ? 'none' : out;
}
function intArg(args, name, def, min, max) {
  var v = own(args, name);
  if (v === undefined || v === null) {
    return def;
  }
  if (typeof v !== 'number' || v !== v || v < min || v > max || mathRound(v) !== v) {
    refuse(name + ' must be a whole number from ' + min + ' to ' + max);
  }
  return v;
}
function strArg(args, name, required, max) {
  var v = own(args, name);
  if (v === undefined || v === null) {
    if (required) {
      refuse(name + ' is required');
    }
    return null;
  }
  if (typeof v !== 'string' || v === '' || v.length > max) {
    refuse(name + ' must be a string of 1 to ' + max + ' characters');
  }
  return v;
}

// ---- URLs. ------------------------------------------------------------------------------

function parseURLOrNull(raw, base) {
  if (typeof URLCtor !== 'function') {
    return null;
  }
  try {
    return new URLCtor(raw, base);
  } catch (e) {
    return null;
  }
}
function urlPart(u, g) {
  return '' + apply(g, u, []);
}
function pageOriginOrEmpty() {
  var u = parseURLOrNull(href(), undefined);
  return u ? urlPart(u, urlOriginG) : '';
}
// shortDest writes a link destination: path, query and fragment on the page's origin; on
// another site only its origin, with an ellipsis when there is more (the agent cannot follow
// such a link, the site is what the person wants to know, and the rest is mostly tracking
// parameters; query shows the full href when it is needed).
function shortDest(u, origin) {
  var o = urlPart(u, urlOriginG);
  if (o === origin) {
    return urlPart(u, urlPathnameG) + urlPart(u, urlSearchG) + urlPart(u, urlHashG);
  }
  var rest = urlPart(u, urlPathnameG) + urlPart(u, urlSearchG) + urlPart(u, urlHashG);
  return o + '/' + (rest !== '/' && rest !== '' ? ELLIPSIS : '');
}
