// ---- Same-origin frames. ----------------------------------------------------------------
//
// The proxy injects only top-level documents, so frames have no page agent of their own:
// the outline, find, query and the actions reach same-origin iframes from here, through
// contentDocument. A frame's window has its own built-ins, which its scripts may have
// replaced; none of them is used: every call on a frame's nodes goes through the functions
// captured from this window at start or from the agent's fresh realm at the first tool call
// (tool_capture.js; DOM methods work across same-origin windows), and what
// comes out of a frame is data, like anything else on the page. A cross-origin frame
// (contentDocument is null) is one outline line and is never read. A frame inside a shadow
// tree is reached once an outline has met it (noteFrame); frames nested deeper than
// MAX_FRAME_DEPTH, and more than MAX_FRAMES, are not.

var MAX_FRAMES = 50;
var MAX_FRAME_DEPTH = 4;
var FRAMES_FRESH_MS = 250; // geometry is measured again after this, or after a scroll

// frameDoc is the document of a same-origin iframe, or null.
function frameDoc(iframe) {
  if (!contentDocumentG) {
    return null;
  }
  try {
    var d = apply(contentDocumentG, iframe, []);
    return d && d !== doc && nodeTypeOrZero(d) === 9 ? d : null;
  } catch (e) {
    return null;
  }
}
function ownerDoc(node) {
  try {
    var d = apply(ownerDocumentG, node, []);
    return d ? d : null;
  } catch (e) {
    return null;
  }
}
function cssPx(st, prop) {
  var v = cssValue(st, prop);
  return apply(strSlice, v, [v.length - 2]) === 'px' ? num(+apply(strSlice, v, [0, v.length - 2])) : 0;
}

// frames is {at, list, byDoc}: the reachable same-origin frames, each {doc, frame, parent,
// x, y, clip} with the position of its viewport's origin and its visible area in the page's
// viewport. seenFrames are iframes the outline met inside open shadow roots, which
// querySelectorAll does not reach (weakly held, the last MAX_FRAMES).
var frames = null;
var seenFrames = list();
function noteFrame(iframe) {
  var i;
  for (i = 0; i < seenFrames.length; i++) {
    if (deref(seenFrames[i]) === iframe) {
      return;
    }
  }
  if (seenFrames.length >= MAX_FRAMES) {
    var kept = list();
    for (i = 1; i < seenFrames.length; i++) {
      put(kept, kept.length, seenFrames[i]);
    }
    seenFrames = kept;
  }
  put(seenFrames, seenFrames.length, typeof WeakRefCtor === 'function' ? new WeakRefCtor(iframe) : iframe);
  framesMoved();
}
// framesIn lists the iframes of a document: its own, then those met in its shadow trees.
function framesIn(d) {
  var out = nodeList(apply(querySelectorAllDoc, d, ['iframe']));
  var i;
  for (i = 0; i < seenFrames.length; i++) {
    var f = deref(seenFrames[i]);
    if (f && ownerDoc(f) === d && apply(isConnected, f, []) === true) {
      put(out, out.length, f);
    }
  }
  return out;
}
function frameList() {
  var t = nowMs();
  if (frames && t - frames.at < FRAMES_FRESH_MS && t >= frames.at) {
    return frames.list;
  }
  frames = dict();
  frames.at = t;
  frames.list = list();
  frames.byDoc = new WeakMapC();
  var top = dict();
  top.doc = doc;
  top.frame = null;
  top.parent = null;
  top.depth = 0;
  top.x = 0;
  top.y = 0;
  top.clip = null;
  var queue = list();
  put(queue, 0, top);
  var qi;
  for (qi = 0; qi < queue.length && frames.list.length < MAX_FRAMES; qi++) {
    var parent = queue[qi];
    if (parent.depth >= MAX_FRAME_DEPTH) {
      continue;
    }
    var found = null;
    try {
      found = framesIn(parent.doc);
    } catch (e) {
      continue;
    }
    var i;
    for (i = 0; i < found.length && frames.list.length < MAX_FRAMES; i++) {
      var f = found[i];
      var d = frameDoc(f);
      if (!d || apply(weakGet, frames.byDoc, [d])) {
        continue;
      }
      var info = dict();
      info.doc = d;
      info.frame = f;
      info.parent = parent;
      info.depth = parent.depth + 1;
      var b = rawRect(f);
      var st = computed(f);
      var bl = 0;
      var bt = 0;
      try {
        bl = num(apply(clientLeftG, f, []));
        bt = num(apply(clientTopG, f, []));
      } catch (e) { /* no box */ }
      info.x = parent.x + b.x + bl + cssPx(st, 'padding-left');
      info.y = parent.y + b.y + bt + cssPx(st, 'padding-top');
      var c = dict();
      c.x0 = info.x;
      c.y0 = info.y;
      var cw = b.width;
      var ch = b.height;
      try {
        cw = num(apply(clientWidthG, f, []));
        ch = num(apply(clientHeightG, f, []));
      } catch (e) { /* the border box, then */ }
      c.x1 = info.x + cw - cssPx(st, 'padding-left') - cssPx(st, 'padding-right');
      c.y1 = info.y + ch - cssPx(st, 'padding-top') - cssPx(st, 'padding-bottom');
      var pc = parent.clip;
      if (pc) {
        c.x0 = c.x0 > pc.x0 ? c.x0 : pc.x0;
        c.y0 = c.y0 > pc.y0 ? c.y0 : pc.y0;
        c.x1 = c.x1 < pc.x1 ? c.x1 : pc.x1;
        c.y1 = c.y1 < pc.y1 ? c.y1 : pc.y1;
      }
      info.clip = c;
      apply(weakSet, frames.byDoc, [d, info]);
      put(frames.list, frames.list.length, info);
      put(queue, queue.length, info);
    }
  }
  return frames.list;
}
// frameOf is the frame entry of a document of a same-origin frame, or null when it is not
// (or no longer) in a frame of the page.
function frameOf(d) {
  frameList();
  var info = apply(weakGet, frames.byDoc, [d]);
  return info ? info : null;
}
function framesMoved() {
  frames = null;
}
// hitAt is what is on top at the point (page viewport) for node: through each frame on the
// way to node's document, the frame itself must be what is there.
function hitAt(node, x, y) {
  var d = ownerDoc(node);
  var chain = list();
  var info = d && d !== doc ? frameOf(d) : null;
  while (info && info.frame) {
    put(chain, chain.length, info);
    info = info.parent;
  }
  var at = doc;
  var ox = 0;
  var oy = 0;
  var i;
  for (i = chain.length - 1; i >= 0; i--) {
    var h = apply(elementFromPoint, at, [x - ox, y - oy]);
    if (!hitOK(chain[i].frame, h)) {
      return h; // something else covers the frame (a frame in a shadow tree hits its host)
    }
    at = chain[i].doc;
    ox = chain[i].x;
    oy = chain[i].y;
  }
  return apply(elementFromPoint, at, [x - ox, y - oy]);
}
// anyPassword reports whether the page or one of its same-origin frames has a password field.
function anyPassword() {
  if (pageHasPassword()) {
    return true;
  }
  var fl = frameList();
  var i;
  for (i = 0; i < fl.length; i++) {
    try {
      if (inputsHavePassword(apply(querySelectorAllDoc, fl[i].doc, ['input']))) {
        return true;
      }
    } catch (e) { /* gone */ }
  }
  return false;
}
// frameLine is what an iframe's outline line says after its name: nothing for a same-origin
// frame (its content follows), else that it is not read, and the site it shows.
function frameLine(o, node) {
  if (frameDoc(node)) {
    return '';
  }
  var s = ' (other site, not readable)';
  var raw = attrOf(node, 'src');
  var u = typeof raw === 'string' && raw !== '' ? parseURLOrNull(raw, o.base) : null;
  if (u) {
    var p = urlPart(u, urlProtocolG);
    if (p === 'http:' || p === 'https:') {
      var rest = urlPart(u, urlPathnameG) + urlPart(u, urlSearchG);
      s = s + ' -> ' + urlPart(u, urlOriginG) + '/' + (rest !== '/' && rest !== '' ? ELLIPSIS : '');
    }
  }
  return s;
}
// frameContent walks a same-origin frame's document under its line.
function frameContent(o, node, depth, shown) {
  var fd = frameDoc(node);
  if (!fd || !shown) {
    return;
  }
  if (frameOf(fd) === null) {
    noteFrame(node); // in a shadow tree, or nested deeper than the frames looked up
    if (frameOf(fd) === null) {
      return;
    }
  }
  var root = bodyOf ? apply(bodyOf, fd, []) : null;
  if (!root) {
    root = apply(documentElement, fd, []);
  }
  if (!root) {
    return;
  }
  var saveLeaf = o.inLeaf;
  var saveShown = o.textShown;
  o.inLeaf = false;
  o.textShown = true;
  flushText(o);
  walkChildren(o, root, depth);
  flushText(o);
  o.inLeaf = saveLeaf;
  o.textShown = saveShown;
}
