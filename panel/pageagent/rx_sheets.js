// ---- Remixlet stylesheets. ------------------------------------------------------------------
//
// The proxy sends a remixlet's style.css as {type:'style', remixlet, css}, after checking it
// again for this page (nothing in it loads from where it should not; refused parts are left
// out). It goes into a constructable stylesheet of its own adopted by the document: the page's
// CSP style-src does not govern it, so there is no <style> element and no policy change. A
// second message for the same remixlet replaces the rules of that sheet, and adopts it again
// if the page had dropped it. Sheets are appended with the captured Array.prototype.push on
// the document's adoptedStyleSheets, an observable array whose traps are the browser's, so no
// function of the page is called with it. (The page can read document.adoptedStyleSheets, as
// it can read its own stylesheets; what the sheets load was decided by the proxy.)
//
// dom.addStyle(css) arrives as an op (checked by the proxy with the same rules, one piece at a
// time); each piece gets a sheet of its own, adopted after style.css's and the earlier pieces,
// so the browser parses each piece exactly as it was checked: nothing one piece leaves open
// (a comment, a string, a block) can reach into the next (DESIGN invariant 9). A remixlet may
// add at most MAX_STYLE_PIECES pieces and 256 KiB per page; more is refused. A release
// empties its sheets (they are reused, in order, if it starts again).
//
// Own and droppable sheets (OPEN-ITEMS 118 and 120, secret8). Each sheet comes twice: as the
// remixlet wrote it (css: the droppable sheet) and as the proxy's own copy of it (own,
// rewrite/ownsheet.go: every rule restricted to the elements remixlets made, OWN_ATTR, which the
// page agent puts on each element of dom.create, dom.clone and dom.setHTML, but not on a clone's
// element that carries its source's mirrors: markOwn). The own sheet is
// adopted just before its droppable one, so together they style the page as the droppable one
// alone. At the first key of a secret on the page (noteSecretTyping, rx_mirrors.js, before the
// page's own handlers of that key) dropPageSheets empties every droppable sheet for the rest of
// the document, and none is filled again in it; a droppable sheet is not filled either while
// secretOnPage() (a sensitive field holds a value nobody typed). Why: a rule keyed on page state
// (body:has(#wrap.s3) .rx-p3, [data-len="7"]) would put the remixlet's own elements under the
// person's pointer by what the page writes while the secret is typed, and the person's click or
// :hover would tell the remixlet (the pointer channel). The remixlet's own UI keeps its rules; its
// rules on the page (hiding a banner, restyling the form) are gone until the next load. An element
// of a remixlet that the page itself writes into while a secret is typed or held loses OWN_ATTR
// (disown): the page may have taken it for its own mirror.
//
// First-frame sheets: the bootstrap tag carries the style.css of the remixlets that match the
// page, checked by the proxy exactly as for a style message (panel.FirstSheet), read by the
// prologue with the token. adoptFirstSheets puts each into its remixlet's sheet at start, so
// the page's first frame has them; firstSheets remembers their versions until a style message
// or a release for that remixlet, and the socket's address lists them (firstSheetsQuery), so
// the proxy does not send them again.

var MAX_STYLE_PIECES = 256;
var OWN_ATTR = 'data-remixlet-own';
var MAX_OWN_STYLE_BYTES = 1048576; // the own copies of a remixlet's addStyle pieces on a page
// remixlet ID -> {id, base: style.css sheet, baseOwn: its own copy, pieces: addStyle sheets,
// ownPieces: their own copies, used, size}
var styleSheets = null;
var firstSheets = null; // remixlet ID -> version of the first-frame sheet in its base, untouched since
var pageSheetsDropped = false; // the droppable sheets were emptied for the rest of the document

function sheetsFor(rx) {
  if (!styleSheets) {
    styleSheets = new MapCtor();
  }
  var rec = apply(mapGet, styleSheets, [rx]);
  if (!rec) {
    rec = dict();
    rec.id = rx;
    rec.base = new Sheet();
    rec.baseOwn = new Sheet();
    rec.pieces = list();
    rec.ownPieces = list();
    rec.used = 0;
    rec.size = 0;
    rec.ownSize = 0;
    apply(mapSet, styleSheets, [rx, rec]);
  }
  return rec;
}

function applyStyle(req) {
  var rx = own(req, 'remixlet');
  var css = own(req, 'css');
  if (shortID(rx) === '' || typeof css !== 'string') {
    return;
  }
  if (typeof Sheet !== 'function' || !replaceSync || !documentAdopted) {
    warn('this browser cannot apply remixlet stylesheets');
    return;
  }
  forgetFirstSheet(rx);
  try {
    fillSheets(sheetsFor(rx), -1, css, own(req, 'own'));
  } catch (e) {
    warn('a remixlet stylesheet could not be applied');
  }
}

// adoptFirstSheets adopts the bootstrap's first-frame sheets, at start, before any page script
// has run; a malformed list or entry is left out (the proxy then sends the sheet on connect).
function adoptFirstSheets() {
  var text = firstSheetsText;
  firstSheetsText = '';
  if (text === '' || typeof Sheet !== 'function' || !replaceSync || !documentAdopted) {
    return;
  }
  var l;
  try {
    l = apply(jsonParse, null, [text]);
  } catch (e) {
    return;
  }
  var n = l !== null && typeof l === 'object' ? own(l, 'length') : 0;
  var i;
  for (i = 0; typeof n === 'number' && i < n; i++) {
    var e = own(l, i);
    var rx = e !== null && typeof e === 'object' ? own(e, 'remixlet') : undefined;
    var version = rx ? own(e, 'version') : undefined;
    var css = rx ? own(e, 'css') : undefined;
    if (shortID(rx) === '' || typeof version !== 'number' || typeof css !== 'string') {
      continue;
    }
    try {
      fillSheets(sheetsFor(rx), -1, css, own(e, 'own'));
    } catch (err) {
      continue;
    }
    if (!firstSheets) {
      firstSheets = new MapCtor();
    }
    apply(mapSet, firstSheets, [rx, version]);
  }
}

// forgetFirstSheet drops rx's first-frame sheet from the list the socket's address carries: its
// sheet now holds what a style message or a release made of it.
function forgetFirstSheet(rx) {
  if (firstSheets) {
    apply(mapDelete, firstSheets, [rx]);
  }
}

// firstSheetsQuery is the part of the socket's address that lists the first-frame sheets still
// held ('&s=ID:VERSION,...'), or ''.
function firstSheetsQuery() {
  var q = '';
  if (firstSheets) {
    apply(mapForEach, firstSheets, [function (version, rx) {
      q = q + (q === '' ? '' : ',') + rx + ':' + version;
    }]);
  }
  return q === '' ? '' : '?s=' + encode(q);
}

function addStyle(rx, css, ownCSS) {
  if (typeof Sheet !== 'function' || !replaceSync || !documentAdopted) {
    refuse('this browser cannot apply remixlet stylesheets');
  }
  if (css.length > 65536) {
    refuse('the stylesheet is longer than 65536 characters');
  }
  var rec = sheetsFor(rx);
  if (rec.used >= MAX_STYLE_PIECES) {
    refuse('the remixlet added more than ' + MAX_STYLE_PIECES + ' stylesheets to this page; add fewer, larger ones');
  }
  if (rec.size + css.length > 262144) {
    refuse('the remixlet added more than 256 KiB of styles to this page');
  }
  if (rec.used === rec.pieces.length) {
    put(rec.ownPieces, rec.used, new Sheet());
    put(rec.pieces, rec.used, new Sheet());
  }
  // The own copies (at most about four times a piece, rewrite/ownsheet.go) get a budget of their
  // own: past it a piece keeps no own copy (its rules go at the drop).
  var ownLen = typeof ownCSS === 'string' ? ownCSS.length : 0;
  if (rec.ownSize + ownLen > MAX_OWN_STYLE_BYTES) {
    ownCSS = '';
    ownLen = 0;
  }
  fillSheets(rec, rec.used, css, ownCSS);
  rec.used = rec.used + 1;
  rec.size = rec.size + css.length;
  rec.ownSize = rec.ownSize + ownLen;
}

// fillSheets puts css and its own copy into rec's style.css sheets (piece -1) or its addStyle
// piece, and adopts them: the droppable one only until a secret is on the page.
function fillSheets(rec, piece, css, ownCSS) {
  apply(replaceSync, piece < 0 ? rec.baseOwn : rec.ownPieces[piece], [typeof ownCSS === 'string' ? ownCSS : '']);
  if (!pageSheetsDropped && css !== '' && secretOnPage()) {
    dropPageSheets();
  }
  apply(replaceSync, piece < 0 ? rec.base : rec.pieces[piece], [pageSheetsDropped ? '' : css]);
  adoptAll(rec);
}

// dropPageSheets empties every droppable sheet, for the rest of the document: called at the
// first key of a secret on the page, before the page's handlers of it (see the top of the file).
function dropPageSheets() {
  pageSheetsDropped = true;
  if (!styleSheets) {
    return;
  }
  apply(mapForEach, styleSheets, [function (rec) {
    var i;
    try {
      apply(replaceSync, rec.base, ['']);
      for (i = 0; i < rec.pieces.length; i++) {
        apply(replaceSync, rec.pieces[i], ['']);
      }
    } catch (e) { /* nothing to empty */ }
  }]);
}

// disown takes OWN_ATTR off el, an element the page itself wrote into (an attribute, a class, its
// text or children) while a secret was typed or held (rx_mirrors.js noteMirrors): a page that
// finds its mirror by id or selector may find a remixlet's element first (a remixlet that made
// its own #strength before the page's), and the own copies of the sheets must not key on what
// the page wrote there.
function disown(el) {
  if (el && nodeType(el) === 1 && apply(hasAttribute, el, [OWN_ATTR])) {
    unattr(el, OWN_ATTR);
  }
}

// markOwn marks el and the elements inside it as made by a remixlet (OWN_ATTR): the own copies
// of the remixlets' sheets style those only. No remixlet may write the attribute (it starts
// with MARK_PREFIX). An element of a clone that carries its source's mirrors (carriesMirror,
// rx_mirrors.js) is not marked: what the page wrote there while a secret was typed is the page's.
function markOwn(el) {
  markOwnOne(el);
  var inside = apply(querySelectorAllEl, el, ['*']);
  var n = apply(nodeListLength, inside, []);
  var i;
  for (i = 0; i < n; i++) {
    markOwnOne(apply(nodeListItem, inside, [i]));
  }
}

function markOwnOne(el) {
  if (!carriesMirror(el)) {
    attr(el, OWN_ATTR, '');
  }
}

// emptySheets empties a remixlet's sheets (a release); they stay adopted, in order, for reuse.
function emptySheets(rec) {
  forgetFirstSheet(rec.id);
  var i;
  try {
    apply(replaceSync, rec.base, ['']);
    apply(replaceSync, rec.baseOwn, ['']);
    for (i = 0; i < rec.pieces.length; i++) {
      apply(replaceSync, rec.pieces[i], ['']);
      apply(replaceSync, rec.ownPieces[i], ['']);
    }
  } catch (e) { /* nothing to empty */ }
  rec.used = 0;
  rec.size = 0;
  rec.ownSize = 0;
}

// adoptAll adopts a remixlet's sheets that the document does not have: style.css's, then the
// pieces in the order they were added, each own copy just before its droppable sheet.
function adoptAll(rec) {
  adopt(rec.baseOwn);
  adopt(rec.base);
  var i;
  for (i = 0; i < rec.pieces.length; i++) {
    adopt(rec.ownPieces[i]);
    adopt(rec.pieces[i]);
  }
}

// adopt appends sheet to the document's adopted stylesheets unless it is there already.
function adopt(sheet) {
  var sheets = apply(documentAdopted, doc, []);
  var n = sheets.length;
  var i;
  for (i = 0; i < n; i++) {
    if (sheets[i] === sheet) {
      return;
    }
  }
  try {
    apply(arrayPush, sheets, [sheet]);
    return;
  } catch (e) { /* a frozen array: a browser from before observable arrays */ }
  if (!setDocumentAdopted) {
    return;
  }
  // The browser converts this array with the page's Array iterator; at worst the page sees our
  // stylesheet object, which it can read from document.adoptedStyleSheets anyway.
  var next = [];
  for (i = 0; i < n; i++) {
    put(next, i, sheets[i]);
  }
  put(next, n, sheet);
  apply(setDocumentAdopted, doc, [next]);
}
