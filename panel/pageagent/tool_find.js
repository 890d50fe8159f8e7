// ---- find. ----

function toolFind(args) {
  checkArgs(args, 'find', allowed(['text', 'limit', 'marks']));
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
  var hit = dict();
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
    hit[i] = true;
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
  // hits are the answer's lines that matched (by their place in outline), for the chat (marks:
  // proxy/chat/oracle.go, never the model's): Go must not guess them by lowercasing again.
  var hits = list();
  var n = 0;
  for (i = 0; i < lines.length; i++) {
    if (keep[i] === true) {
      var gap = last >= 0 && i !== last + 1;
      out = out + (out === '' ? '' : '\n') + (gap ? indent(indentOf(lines[i])) + ELLIPSIS + '\n' : '') + lines[i];
      n = n + (gap ? 2 : 1);
      if (hit[i] === true) {
        put(hits, hits.length, n - 1);
      }
      last = i;
    }
  }
  var res = dict();
  res.matches = matched;
  res.outline = matched === 0 ? '(no line of the outline contains "' + cut(want, 60) + '")' : out;
  res.truncated = matched > limit || whole.truncated === true;
  if (own(args, 'marks') === true) {
    res.hits = hits;
  }
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
