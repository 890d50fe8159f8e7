// ---- navigate, back, forward. ----

function toolNavigate(args, done) {
  checkArgs(args, 'navigate', allowed(['url']));
  var raw = strArg(args, 'url', true, 4096);
  var origin = pageOriginOrEmpty();
  var u = parseURLOrNull(raw, href());
  if (!u) {
    refuse('"' + cut(raw, 200) + '" is not a valid address');
  }
  var p = urlPart(u, urlProtocolG);
  if ((p !== 'http:' && p !== 'https:') || urlPart(u, urlOriginG) !== origin) {
    refuse('navigate only goes to pages of this site (' + origin + '); ' + cut(urlPart(u, urlHrefG), 200) + ' is not one');
  }
  if (!locationAssign) {
    refuse('this browser cannot navigate for the agent');
  }
  var dest = urlPart(u, urlHrefG);
  var res = dict();
  res.navigating = shortDest(u, origin);
  res.sameDocument = noHash(dest) === noHash(href()) && contains(dest, '#');
  res.mayLeave = !res.sameDocument;
  done(true, res);
  later(function () {
    try {
      agentAssign(dest); // person_nav.js
    } catch (e) { /* the page is going anyway */ }
  }, 20);
  return PENDING;
}
function historyStep(tool, args, done, delta) {
  checkArgs(args, tool, allowed([]));
  var fn = delta < 0 ? historyBack : historyForward;
  if (!navigation || !navEntries || !navCurrentEntryG || !entryIndexG || !entryUrlG || !fn) {
    refuse('this browser cannot tell where ' + tool + ' leads, so the agent does not go there');
  }
  var cur = apply(navCurrentEntryG, navigation, []);
  var entries = apply(navEntries, navigation, []);
  var at = cur ? num(apply(entryIndexG, cur, [])) : -1;
  var to = null;
  var i;
  for (i = 0; entries && i < entries.length; i++) {
    if (num(apply(entryIndexG, entries[i], [])) === at + delta) {
      to = entries[i];
    }
  }
  // The Navigation API lists only this origin's entries next to the current one: an entry
  // not found may be another site's.
  var u = to ? parseURLOrNull('' + apply(entryUrlG, to, []), undefined) : null;
  var origin = pageOriginOrEmpty();
  if (!u || urlPart(u, urlOriginG) !== origin) {
    refuse('there is no ' + (delta < 0 ? 'previous' : 'next') + ' page of this site in the tab\'s history (another site\'s is never visited by the agent)');
  }
  var res = dict();
  res.going = shortDest(u, origin);
  res.mayLeave = true;
  done(true, res);
  later(function () {
    try {
      apply(fn, hist, []);
    } catch (e) { /* the page is going anyway */ }
  }, 20);
  return PENDING;
}
function toolBack(args, done) {
  return historyStep('back', args, done, -1);
}
function toolForward(args, done) {
  return historyStep('forward', args, done, 1);
}
