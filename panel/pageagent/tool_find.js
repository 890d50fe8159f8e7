// ---- find. ----

function toolFind(args) {
  checkArgs(args, 'find', allowed(['text', 'limit', 'from', 'outlineId']));
  var want = normal(strArg(args, 'text', true, 200));
  var limit = intArg(args, 'limit', 20, 1, 100);
  if (want === '') {
    refuse('text must not be blank');
  }
  if (own(args, 'from') !== undefined) {
    return findLines(args);
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
      var gap = last >= 0 && i !== last + 1;
      out = out + (out === '' ? '' : '\n') + (gap ? indent(indentOf(lines[i])) + ELLIPSIS + '\n' : '') + lines[i];
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
// findLines answers the chat's own question (from and outlineId: proxy/chat/oracle_find.go,
// never the model's): the lines of find's whole outline from line from, as many as fit in one
// answer, for Go to search over what the model may see. Searching here and sending the matches
// cut at a limit told, by whether the list was cut, whether a match lay in a secret; the whole
// outline does not depend on what is searched for. The first part (from 0) reads the outline
// and keeps it for the next parts, which name it by outlineId: a page that changed between
// parts would otherwise give lines of two outlines.
var findWhole = null;
var findSeq = 0;
var FIND_PART_BYTES = 200000;
function findLines(args) {
  var from = intArg(args, 'from', 0, 0, FIND_BUDGET);
  var id = intArg(args, 'outlineId', 0, 0, 1e9);
  if (from === 0) {
    var oa = dict();
    oa.filter = 'all';
    var whole = toolOutline(oa, true);
    findSeq++;
    findWhole = dict();
    findWhole.id = findSeq;
    findWhole.lines = splitLines(whole.outline);
    findWhole.truncated = whole.truncated === true;
  } else if (findWhole === null || findWhole.id !== id) {
    refuse('the outline being searched is gone (another search replaced it); search again');
  }
  var part = list();
  var size = 0;
  var i = from;
  for (; i < findWhole.lines.length; i++) {
    var n = utf8Length(apply(jsonStringify, null, [findWhole.lines[i]])) + 1;
    if (part.length > 0 && size + n > FIND_PART_BYTES) {
      break;
    }
    put(part, part.length, findWhole.lines[i]);
    size += n;
  }
  var res = dict();
  res.outlineId = findWhole.id;
  res.lines = part;
  res.next = i < findWhole.lines.length ? i : -1;
  res.truncated = findWhole.truncated;
  if (res.next < 0) {
    findWhole = null; // the last part: the outline is not kept
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
