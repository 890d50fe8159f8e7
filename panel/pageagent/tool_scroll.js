// ---- scroll and hover. ----

function scrollState() {
  var s = dict();
  var de = apply(documentElement, doc, []);
  s.scrollX = 0;
  s.scrollY = 0;
  try {
    s.scrollX = round(apply(scrollXG, win, []));
    s.scrollY = round(apply(scrollYG, win, []));
  } catch (e) { /* keep 0 */ }
  s.viewportHeight = round(viewHeight());
  s.pageHeight = de && scrollHeightG ? round(apply(scrollHeightG, de, [])) : 0;
  s.atTop = s.scrollY <= 0;
  s.atBottom = s.scrollY + s.viewportHeight >= s.pageHeight - 2;
  return s;
}
function scrollOptions(top, left) {
  var o = dict();
  o.top = top;
  o.left = left;
  o.behavior = 'instant';
  return o;
}
function scrollWindow(direction) {
  var vh = viewHeight();
  var vw = viewWidth();
  if (!winScrollBy || !winScrollTo) {
    refuse('this browser cannot scroll for the agent');
  }
  if (direction === 'top' || direction === 'bottom') {
    var de = apply(documentElement, doc, []);
    var h = de && scrollHeightG ? num(apply(scrollHeightG, de, [])) : 0;
    apply(winScrollTo, win, [scrollOptions(direction === 'top' ? 0 : h, 0)]);
    return;
  }
  var dy = direction === 'down' ? vh * 0.8 : direction === 'up' ? -vh * 0.8 : 0;
  var dx = direction === 'right' ? vw * 0.8 : direction === 'left' ? -vw * 0.8 : 0;
  apply(winScrollBy, win, [scrollOptions(mathRound(dy), mathRound(dx))]);
}
function toolScroll(args) {
  checkArgs(args, 'scroll', allowed(['direction', 'ref']));
  var direction = strArg(args, 'direction', false, 10);
  var ref = strArg(args, 'ref', false, 20);
  if (direction !== null && direction !== 'up' && direction !== 'down' && direction !== 'left' &&
      direction !== 'right' && direction !== 'top' && direction !== 'bottom') {
    refuse('direction must be up, down, left, right, top or bottom');
  }
  if (direction === null && ref === null) {
    refuse('give a direction, a ref, or both');
  }
  var before = scrollState();
  var res = dict();
  if (ref !== null) {
    var node = target(args);
    if (direction === null) {
      var o = dict();
      o.block = 'center';
      o.inline = 'nearest';
      apply(scrollIntoView, node, [o]);
      framesMoved();
      res.scrolledTo = describe(node, true);
      if (passwordHeld()) {
        res.boxWithheld = BOXES_WITHHELD; // tool_read.js: a size may follow a typed password
      } else if (pageChangedWhileTyped(node)) {
        res.boxWithheld = 'the page changed this element while a password was typed on this page, so its box is withheld';
      } else {
        res.box = boxRect(rectOf(node));
      }
    } else {
      var ch = clientHeightG ? num(apply(clientHeightG, node, [])) : 0;
      var cw = clientWidthG ? num(apply(clientWidthG, node, [])) : 0;
      var sh = scrollHeightG ? num(apply(scrollHeightG, node, [])) : 0;
      var sw = scrollWidthG ? num(apply(scrollWidthG, node, [])) : 0;
      if (!elScrollBy || (sh <= ch + 1 && sw <= cw + 1)) {
        refuse(describe(node, true) + ' does not scroll; scroll the page, or give the ref of its scrolling container');
      }
      var top0 = num(apply(scrollTopG, node, []));
      var big = sh + sw + 1;
      var dy = direction === 'down' ? ch * 0.8 : direction === 'up' ? -ch * 0.8 : direction === 'bottom' ? big : direction === 'top' ? -big : 0;
      var dx = direction === 'right' ? cw * 0.8 : direction === 'left' ? -cw * 0.8 : 0;
      apply(elScrollBy, node, [scrollOptions(mathRound(dy), mathRound(dx))]);
      var top1 = num(apply(scrollTopG, node, []));
      res.element = describe(node, true);
      res.scrollTop = round(top1);
      res.scrollLeft = round(num(apply(scrollLeftG, node, [])));
      res.moved = top1 !== top0 || dx !== 0;
      res.atEnd = top1 + ch >= sh - 2;
      return res;
    }
  } else {
    scrollWindow(direction);
  }
  var after = scrollState();
  res.scrollX = after.scrollX;
  res.scrollY = after.scrollY;
  res.viewportHeight = after.viewportHeight;
  res.pageHeight = after.pageHeight;
  res.atTop = after.atTop;
  res.atBottom = after.atBottom;
  res.moved = after.scrollY !== before.scrollY || after.scrollX !== before.scrollX;
  return res;
}
function pointerInit(x, y, bubbles) {
  var init = makeInit(bubbles);
  init.clientX = x;
  init.clientY = y;
  init.view = win;
  return init;
}
function toolHover(args) {
  checkArgs(args, 'hover', allowed(['ref']));
  var node = target(args);
  if (typeof MouseEventCtor !== 'function') {
    refuse('this browser cannot move the pointer for the agent');
  }
  var r = rectOf(node);
  var vw = viewWidth();
  var vh = viewHeight();
  if (!inView(r, vw, vh)) {
    var o = dict();
    o.block = 'center';
    o.inline = 'center';
    apply(scrollIntoView, node, [o]);
    framesMoved();
    r = rectOf(node);
  }
  var x = r.x + r.width / 2;
  var y = r.y + r.height / 2;
  var P = typeof PointerEventCtor === 'function' ? PointerEventCtor : MouseEventCtor;
  fire(node, new P('pointerover', pointerInit(x, y, true)));
  fire(node, new P('pointerenter', pointerInit(x, y, false)));
  fire(node, new MouseEventCtor('mouseover', pointerInit(x, y, true)));
  fire(node, new MouseEventCtor('mouseenter', pointerInit(x, y, false)));
  fire(node, new P('pointermove', pointerInit(x, y, true)));
  fire(node, new MouseEventCtor('mousemove', pointerInit(x, y, true)));
  var res = dict();
  res.hovered = describe(node, true);
  var hit = elementFromPoint ? hitAt(node, x, y) : null;
  if (hit && !hitOK(node, hit)) {
    res.coveredBy = hit === host ? 'the remixproxy launcher' : describe(hit, true);
  }
  return res;
}
