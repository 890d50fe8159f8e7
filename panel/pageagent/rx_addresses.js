// ---- The address rule. ----

// DATA_IMAGE_TYPES are the data: addresses an img may have.
var DATA_IMAGE_TYPES = dict();
DATA_IMAGE_TYPES['image/png'] = true;
DATA_IMAGE_TYPES['image/gif'] = true;
DATA_IMAGE_TYPES['image/jpeg'] = true;
DATA_IMAGE_TYPES['image/webp'] = true;
// dataImageByte reports whether a data: image's payload may hold the character code c: the
// base64 alphabets, % escapes and . _ ~ (Go's dataImage, proxy/remixlet/policy.go).
function dataImageByte(c) {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) ||
    c === 43 || c === 47 || c === 61 || c === 37 || c === 46 || c === 95 || c === 126 || c === 45;
}

// addressesIn finds the addresses an attribute value holds anywhere in it, as a page script
// that loads them would read them (lazy loaders copy data-src to src, some after
// decodeURIComponent or atob): those plainAddressesIn finds in the value as written, then those
// in its percent-decoded and base64-decoded forms (encodedAddressesIn). The same as addressesIn
// in proxy/remixlet/policy.go and deputies.go.
function addressesIn(value) {
  var out = plainAddressesIn(value);
  var more = encodedAddressesIn(value);
  var i;
  for (i = 0; i < more.length; i++) {
    put(out, out.length, more[i]);
  }
  return out;
}
// plainAddressesIn: tabs and newlines removed, every http:, https:, ws: or wss: address and
// every scheme-relative one (//host, ///host, any slash written as a backslash), up to a space,
// quote, comma or bracket.
function plainAddressesIn(value) {
  var v = '';
  var lv = ''; // v with ASCII letters in lowercase, position for position
  var i;
  for (i = 0; i < value.length; i++) {
    var c = apply(charCodeAt, value, [i]);
    if (c !== 9 && c !== 10 && c !== 13) {
      v = v + apply(fromCharCode, null, [c]);
      lv = lv + apply(fromCharCode, null, [c >= 65 && c <= 90 ? c + 32 : c]);
    }
  }
  var out = list();
  var schemes = ['https:', 'http:', 'wss:', 'ws:'];
  var p;
  for (p = 0; p < v.length; p++) {
    var start = -1;
    var prev = p > 0 ? apply(charCodeAt, lv, [p - 1]) : -1;
    for (i = 0; i < schemes.length && start < 0; i++) {
      if (apply(strSlice, lv, [p, p + schemes[i].length]) === schemes[i] && !isSchemeCode(prev)) {
        start = p;
      }
    }
    if (start < 0 && isSlashCode(apply(charCodeAt, v, [p])) && isSlashCode(apply(charCodeAt, v, [p + 1])) &&
        prev !== 58 && !isSlashCode(prev)) {
      var h = p + 2;
      while (h < v.length && isSlashCode(apply(charCodeAt, v, [h]))) {
        h++;
      }
      var hc = h < v.length ? apply(charCodeAt, v, [h]) : -1;
      if ((hc >= 97 && hc <= 122) || (hc >= 65 && hc <= 90) || (hc >= 48 && hc <= 57) || hc === 91 || hc >= 128) {
        start = p;
      }
    }
    if (start < 0) {
      continue;
    }
    var end = start;
    while (end < v.length && !contains(ADDRESS_ENDS, apply(strSlice, v, [end, end + 1]))) {
      end++;
    }
    put(out, out.length, apply(strSlice, v, [start, end]));
    p = end;
  }
  return out;
}
// encodedAddressesIn (red-team pass 6d; see proxy/remixlet/deputies.go, which this follows
// step for step): the addresses in the value's percent-decoded levels (each %XX of a printable
// ASCII character decoded, up to three times), then in the printable stretches (8 bytes or
// more) of the base64 decodings, from each of the first four offsets, of every run of at least
// 12 base64 characters (either alphabet) of the value and of each decoded level.
function encodedAddressesIn(value) {
  var out = list();
  var levels = decodedLevels(value);
  var i;
  var j;
  var k;
  for (i = 0; i < levels.length; i++) {
    var found = plainAddressesIn(levels[i]);
    for (j = 0; j < found.length; j++) {
      put(out, out.length, found[j]);
    }
  }
  var all = list();
  put(all, 0, value);
  for (i = 0; i < levels.length; i++) {
    put(all, all.length, levels[i]);
  }
  for (i = 0; i < all.length; i++) {
    var texts = base64Texts(all[i]);
    for (j = 0; j < texts.length; j++) {
      var f = plainAddressesIn(texts[j]);
      for (k = 0; k < f.length; k++) {
        put(out, out.length, f[k]);
      }
    }
  }
  return out;
}
function decodedLevels(value) {
  var out = list();
  var cur = value;
  var r;
  for (r = 0; r < 3; r++) {
    var next = decodePrintable(cur);
    if (next === cur) {
      break;
    }
    put(out, out.length, next);
    cur = next;
  }
  return out;
}
// decodePercents decodes the %XX escapes of s whose byte value decodes accepts, and keeps the
// rest as written (decodePrintable and addressKey differ only in which bytes they decode).
function decodePercents(s, decodes) {
  if (apply(strIndexOf, s, ['%']) < 0) {
    return s;
  }
  var out = '';
  var i;
  for (i = 0; i < s.length; i++) {
    var c = apply(charCodeAt, s, [i]);
    if (c === 37 && i + 2 < s.length) {
      var hi = hexValue(apply(charCodeAt, s, [i + 1]));
      var lo = hexValue(apply(charCodeAt, s, [i + 2]));
      if (hi >= 0 && lo >= 0 && decodes(hi * 16 + lo)) {
        out = out + apply(fromCharCode, null, [hi * 16 + lo]);
        i += 2;
        continue;
      }
    }
    out = out + apply(fromCharCode, null, [c]);
  }
  return out;
}
function printableByte(v) {
  return v >= 32 && v < 127;
}
function decodePrintable(s) {
  return decodePercents(s, printableByte);
}
function base64Value(c) {
  if (c >= 65 && c <= 90) {
    return c - 65;
  }
  if (c >= 97 && c <= 122) {
    return c - 97 + 26;
  }
  if (c >= 48 && c <= 57) {
    return c - 48 + 52;
  }
  if (c === 43 || c === 45) {
    return 62;
  }
  if (c === 47 || c === 95) {
    return 63;
  }
  return -1;
}
function base64Texts(s) {
  var out = list();
  var i = 0;
  while (i < s.length) {
    if (base64Value(apply(charCodeAt, s, [i])) < 0) {
      i++;
      continue;
    }
    var j = i;
    while (j < s.length && base64Value(apply(charCodeAt, s, [j])) >= 0) {
      j++;
    }
    if (j - i >= 12) {
      var off;
      for (off = 0; off < 4; off++) {
        var texts = printableStretches(s, i + off, j);
        var t;
        for (t = 0; t < texts.length; t++) {
          put(out, out.length, texts[t]);
        }
      }
    }
    i = j;
  }
  return out;
}
// printableStretches decodes s[from, to) as base64 and returns the runs of printable ASCII of
// at least 8 bytes in the result.
function printableStretches(s, from, to) {
  var out = list();
  var acc = 0;
  var bits = 0;
  var run = '';
  var i;
  for (i = from; i <= to; i++) {
    var b = -1;
    if (i < to) {
      acc = (acc * 64 + base64Value(apply(charCodeAt, s, [i]))) % 16384;
      bits += 6;
      if (bits < 8) {
        continue;
      }
      bits -= 8;
      var p = 1;
      var n;
      for (n = 0; n < bits; n++) {
        p = p * 2;
      }
      b = (acc - acc % p) / p;
      acc = acc % p;
    }
    if (b >= 32 && b < 127) {
      run = run + apply(fromCharCode, null, [b]);
      continue;
    }
    if (run.length >= 8) {
      put(out, out.length, run);
    }
    run = '';
  }
  return out;
}
var ADDRESS_ENDS = ' \f"\'`,;<>()[]{}|^';
function isSchemeCode(c) {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
}
function isSlashCode(c) {
  return c === 47 || c === 92;
}
function parseURL(value, base) {
  if (typeof URLCtor !== 'function' || !urlHref) {
    refuse('this browser cannot check addresses');
  }
  try {
    return new URLCtor(value, base);
  } catch (e) {
    return null;
  }
}
function withoutFragment(u) {
  var i = apply(strIndexOf, u, ['#']);
  return i < 0 ? u : apply(strSlice, u, [0, i]);
}
function pageOrigin() {
  var u = parseURL(href(), undefined);
  return u ? '' + apply(urlOrigin, u, []) : '';
}
// pageLoads reports whether the page already links to abs exactly: a resource it fetched, an
// image it shows or one of its links. checkAddress asks it for links only (see there).
function pageLoads(abs, link) {
  var i;
  var n;
  if (perf && getEntriesByType && entryName) {
    try {
      var entries = apply(getEntriesByType, perf, ['resource']);
      n = entries.length;
      for (i = 0; i < n; i++) {
        if ('' + apply(entryName, entries[i], []) === abs) {
          return true;
        }
      }
    } catch (e) { /* no resource timing */ }
  }
  var imgs = apply(querySelectorAllDoc, doc, ['img[src]']);
  n = apply(nodeListLength, imgs, []);
  for (i = 0; i < n && imageSrc; i++) {
    if ('' + apply(imageSrc, apply(nodeListItem, imgs, [i]), []) === abs) {
      return true;
    }
  }
  if (link && anchorHref) {
    var links = apply(querySelectorAllDoc, doc, ['a[href]']);
    n = apply(nodeListLength, links, []);
    for (i = 0; i < n; i++) {
      var a = apply(nodeListItem, links, [i]);
      if (!isMarked(a) && '' + apply(anchorHref, a, []) === abs) {
        return true;
      }
    }
  }
  return false;
}
// isMarked reports whether any remixlet changed el (its href then is no proof the page links
// there).
function isMarked(el) {
  var names = getAttributeNames ? apply(getAttributeNames, el, []) : null;
  var i;
  for (i = 0; names && i < names.length; i++) {
    if (apply(strSlice, '' + names[i], [0, MARK_PREFIX.length]) === MARK_PREFIX) {
      return true;
    }
  }
  return false;
}
function hexValue(c) {
  return c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1;
}
// addressKey is an address with every escape of a printable ASCII character other than
// % / ? # decoded: Chromium escapes a few characters the URL Standard leaves raw (| and ^ in
// paths), so the proxy's serialisation and the browser's may differ there and nowhere else.
// The redirect guard compares with all escapes decoded, so this is never looser than it.
function keyByte(v) {
  return v > 32 && v < 127 && v !== 37 && v !== 47 && v !== 63 && v !== 35;
}
function addressKey(a) {
  return decodePercents(a, keyByte);
}
// addressSet turns Op.addrs into a set (by addressKey) for checkAddress; ops that write
// addresses always get one (empty when the proxy found none), other ops null.
function addressSet(name, list) {
  if (name !== 'setAttr' && name !== 'create' && name !== 'setHTML') {
    return null;
  }
  var set = dict();
  var n = list !== null && typeof list === 'object' ? own(list, 'length') : undefined;
  var i;
  for (i = 0; typeof n === 'number' && i < n; i++) {
    var a = own(list, i);
    if (typeof a === 'string') {
      set[addressKey(a)] = true;
    }
  }
  return set;
}
// opAllowsHost reports whether the proxy allowed host for this op (Op.hosts): a host, or, for
// a clone, the remixlet's site patterns ("*.example.com" covers example.com and its subdomains;
// "*" every host, for a remixlet that runs on every site).
function opAllowsHost(host) {
  var hs = opHosts;
  if (hs === null || typeof hs !== 'object') {
    return false;
  }
  var n = own(hs, 'length');
  var i;
  for (i = 0; typeof n === 'number' && i < n && i < 256; i++) {
    var h = own(hs, i);
    if (h === host || h === '*') {
      return true;
    }
    if (typeof h === 'string' && apply(strSlice, h, [0, 2]) === '*.') {
      var base = apply(strSlice, h, [2]);
      if (host === base || (host.length > base.length + 1 && apply(strSlice, host, [host.length - base.length - 1]) === '.' + base)) {
        return true;
      }
    }
  }
  return false;
}
// checkAddress applies the address rule to an href or src value and returns the absolute
// address the element gets. The value is resolved against the document's URL and against its
// base URL; when they differ (a <base> element) the value must be absolute.
function checkAddress(name, value, link) {
  if (typeof value !== 'string' || value.length > 65536) {
    refuse(name + ': the address must be a string of at most 65536 characters');
  }
  var docURL = href();
  var base = baseURIOf ? '' + apply(baseURIOf, doc, []) : docURL;
  var a = parseURL(value, docURL);
  var b = parseURL(value, base);
  if (!a || !b) {
    refuse(name + ' refused: the address does not parse');
  }
  var abs = '' + apply(urlHref, a, []);
  if (abs !== '' + apply(urlHref, b, []) || (opRelative && withoutFragment(base) !== withoutFragment(docURL))) {
    refuse(name + ' refused: the page has a <base> element that changes where relative addresses go; use an absolute address');
  }
  var protocol = '' + apply(urlProtocol, a, []);
  if (protocol === 'data:') {
    var comma = apply(strIndexOf, abs, [',']);
    var type = comma < 0 ? '' : lower(apply(strSlice, abs, [5, comma]));
    var semi = apply(strIndexOf, type, [';']);
    if (semi >= 0 && apply(strSlice, type, [semi]) === ';base64') {
      type = apply(strSlice, type, [0, semi]);
    }
    if (DATA_IMAGE_TYPES[type] !== true) {
      refuse(name + ' refused: only data:image/png, gif, jpeg or webp addresses are allowed (not svg, not other types)');
    }
    var j;
    for (j = comma + 1; j < abs.length; j++) {
      if (!dataImageByte(apply(charCodeAt, abs, [j]))) {
        refuse(name + ' refused: a data: image may hold only base64 characters and % escapes');
      }
    }
    return abs;
  }
  if (protocol !== 'https:' && protocol !== 'http:') {
    refuse(name + ' refused: ' + protocol + ' addresses are not allowed (only http, https and data: images)');
  }
  if ('' + apply(urlUsername, a, []) !== '' || '' + apply(urlPassword, a, []) !== '') {
    refuse(name + ' refused: addresses with a user name are not allowed');
  }
  // The address the browser will request must be one the proxy read the same way, checked and
  // guarded against redirects (Op.addrs): a spelling the two read differently, or an address
  // in HTML the proxy's parser did not find, is refused rather than written unchecked.
  if (opAddrs !== null && opAddrs[addressKey(withoutFragment(abs))] !== true) {
    refuse(name + ' refused: the browser reads this address as ' + abs + ', which is not an address the proxy checked');
  }
  // The host as the proxy names it (weburl's HostKey: without a trailing dot).
  var hostname = '' + apply(urlHostname, a, []);
  if (apply(strSlice, hostname, [-1]) === '.') {
    hostname = apply(strSlice, hostname, [0, -1]);
  }
  if ('' + apply(urlOrigin, a, []) === pageOrigin() || opAllowsHost(hostname)) {
    return abs;
  }
  // A link the page itself has may be copied: it loads nothing until someone clicks it (the
  // person, or dom.click under its own checks). An image loads at once, and again each time a
  // remixlet writes it when its host does not let the browser keep it: two images a comment
  // plants on the page (evil/0, evil/1) were a channel to evil for anything the remixlet read,
  // in the order and number it chose (red-team pass 5a). So an image, a clone's included, loads
  // only from the page's origin and the remixlet's own sites and fetch: hosts.
  if (link && pageLoads(abs, link)) {
    return abs;
  }
  if (!link) {
    refuse(name + ' refused: ' + abs + ' is not on the page\'s origin or one of the remixlet\'s sites or fetch: hosts ' +
      '(an image from another host, even one the page shows, needs a fetch: permission for it)');
  }
  refuse(name + ' refused: ' + abs + ' is not on the page\'s origin, not one of the remixlet\'s sites or fetch: hosts, and not an address the page already links to');
  return '';
}
