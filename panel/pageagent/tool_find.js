// ---- find. ----

function toolFind(args) {
  checkArgs(args, 'find', allowed(['text', 'limit']));
  var want = normal(strArg(args, 'text', true, 200));
  var limit = intArg(args, 'limit', 20, 1, 100);
  if (want === '') {
    refuse('text must not be blank');
  }
  var oa = dict();
  oa.filter = 'all';
  var whole = toolOutline(oa, true);
  var lines = splitLines(whole.outline);
  var keep = dict();
  var matched = 0;
  var i;
  for (i = 0; i < lines.length; i++) {
    var line = lines[i];
    if (line === '' || line === OVERLAYS_HEAD || line === PAGE_HEAD || apply(charCodeAt, line, [0]) === 8230 ||
        !contains(lower(line), want)) {
      continue;
    }
    matched++;
    if (matched > limit) {
      continue;
    }
    keep[i] = true;
    var level = indentOf(line);
    var j;
    for (j = i - 1; j >= 0 && level > 0; j--) {
      var lj = indentOf(lines[j]);
      if (lj < level) {
        keep[j] = true;
        level = lj;
      }
    }
  }
  var out = '';
  var last = -2;
  for (i = 0; i < lines.length; i++) {
    if (keep[i] === true) {
      out = out + (out === '' ? '' : '\n') + (last >= 0 && i !== last + 1 ? indent(indentOf(lines[i])) + ELLIPSIS + '\n' : '') + lines[i];
      last = i;
    }
  }
  var res = dict();
  res.matches = matched;
  res.outline = matched === 0 ? '(no line of the outline contains "' + cut(want, 60) + '")' : out;
  res.truncated = matched > limit || whole.truncated === true;
  if (matched > limit) {
    res.outline = res.outline + '\n' + ELLIPSIS + ' (' + (matched - limit) + ' more matches; raise limit or search for more words)';
  }
  return res;
}
function splitLines(s) {
  var out = list();
  var from = 0;
  while (from <= s.length) {
    var at = apply(strIndexOf, s, ['\n', from]);
    if (at < 0) {
      put(out, out.length, apply(strSlice, s, [from]));
      break;
    }
    put(out, out.length, apply(strSlice, s, [from, at]));
    from = at + 1;
  }
  return out;
}
