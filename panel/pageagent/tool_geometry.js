// ---- Geometry and visibility. -----------------------------------------------------------

function computed(node) {
  if (typeof getComputedStyleFn !== 'function') {
    return null;
  }
  try {
    return apply(getComputedStyleFn, win, [node]);
  } catch (e) {
    return null;
  }
}
function cssValue(st, prop) {
  if (!st || !getPropertyValue) {
    return '';
  }
  try {
    return '' + apply(getPropertyValue, st, [prop]);
  } catch (e) {
    return '';
  }
}
// rectOf is the element's border box in the page's viewport: an element in a same-origin
// frame is moved by the frame's position, and carries the frame's visible area as r.clip.
function rectOf(node) {
  var r = rawRect(node);
  var d = ownerDoc(node);
  if (d !== doc && d !== null) {
    inFrame(r, frameOf(d));
  }
  return r;
}
function rawRect(node) {
  var r = dict();
  r.x = 0;
  r.y = 0;
  r.width = 0;
  r.height = 0;
  r.clip = null;
  try {
    var b = apply(getBCR, node, []);
    r.x = num(apply(rectLeft, b, []));
    r.y = num(apply(rectTop, b, []));
    r.width = num(apply(rectWidthG, b, []));
    r.height = num(apply(rectHeightG, b, []));
  } catch (e) { /* no box */ }
  return r;
}
function inFrame(r, info) {
  if (info && info.frame) {
    r.x = r.x + info.x;
    r.y = r.y + info.y;
    r.clip = info.clip;
  } else if (info === null) {
    r.width = 0; // the frame is gone: no box
    r.height = 0;
  }
  return r;
}
function viewWidth() {
  try {
    return num(apply(innerWidthG, win, []));
  } catch (e) {
    return 0;
  }
}
function viewHeight() {
  try {
    return num(apply(innerHeightG, win, []));
  } catch (e) {
    return 0;
  }
}
function inView(r, vw, vh) {
  var c = r.clip;
  if (c && !(r.y + r.height > c.y0 && r.y < c.y1 && r.x + r.width > c.x0 && r.x < c.x1)) {
    return false; // scrolled out of its frame
  }
  return (r.width > 0 || r.height > 0) && r.y + r.height > 0 && r.y < vh && r.x + r.width > 0 && r.x < vw;
}
// pointIn reports whether the point is in the viewport and, for an element in a frame, in
// the frame's visible area.
function pointIn(r, x, y, vw, vh) {
  var c = r.clip;
  if (c && (x < c.x0 || y < c.y0 || x >= c.x1 || y >= c.y1)) {
    return false;
  }
  return x >= 0 && y >= 0 && x < vw && y < vh;
}
function boxRect(r) {
  var d = dict();
  d.x = round(r.x);
  d.y = round(r.y);
  d.width = round(r.width);
  d.height = round(r.height);
  return d;
}
// shownLive reports whether node and its ancestors are rendered and not visibility:hidden.
function shownLive(node) {
  var st = computed(node);
  if (!st) {
    return true;
  }
  if (cssValue(st, 'display') === 'none') {
    return false;
  }
  var v = cssValue(st, 'visibility');
  if (v === 'hidden' || v === 'collapse') {
    return false;
  }
  var r = rectOf(node);
  return r.width > 0 || r.height > 0;
}
