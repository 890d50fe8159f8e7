  // ---- Page tools of the AI agent (included into agent.js by panel.go). -----------------------
  //
  // The proxy sends {type:'tool', id, tool, args} when the agent of a chat on this tab calls one
  // of its page tools; the answer is {type:'toolResult', id, ok, value | error}. The arguments
  // are data filled in by the model: nothing here evaluates them as code, a selector is only
  // ever given to the captured querySelectorAll, and no HTML from them reaches the live page.
  //
  // Tools (see proxy/pagetools.go for the result shapes): capture_page, outline, query,
  // inspect_styles, read_page_data, click, fetch_page; and the page actions of Act mode: type,
  // set_field, select, press_keys, scroll, hover, navigate, back, forward, wait_for,
  // wait_for_stable, with find and page_state.
  //
  // Rules kept here, on top of agent.js's:
  //   - password fields never give their value: not in outlines, queries, form data or names;
  //     and every answer is scrubbed of the current values of the page's password fields (and,
  //     for read_page_data, of its script-visible cookie values) before it is sent; the values
  //     of password fields are reported to the proxy alone, for its redaction stage, which is
  //     the layer that counts (see "Secrets for the proxy's redaction stage");
  //   - element refs ("e12") name elements in a registry of this closure (element -> number in a
  //     WeakMap, number -> WeakRef): stable for the element's life, never reused;
  //   - a click goes only to an element that is connected, visible, enabled and on top at its
  //     centre, and only if what it activates stays on the page's origin (links, form
  //     submission; formaction, other targets, ping and download refused);
  //   - fetch_page fetches only the page's own origin, without following redirects, and parses
  //     the answer in an inert document (DOMParser: no scripts, no loads).
  //   - answers are bounded (MAX_ANSWER_BYTES, under the proxy's message limit).
  //   - same-origin iframes are read and acted on from here (they have no page agent), with
  //     this window's captured functions only; cross-origin ones are one line, never read; the
  //     password rules and the scrub cover the frames' fields too (see "Same-origin frames").
  //
  // Everything is captured now, at script start, before any page script runs.

  var runTool = (function () {
    var getComputedStyleFn = win.getComputedStyle;
    var cssDecl = proto(win.CSSStyleDeclaration);
    var getPropertyValue = cssDecl && cssDecl.getPropertyValue;
    var getBCR = Element.prototype.getBoundingClientRect;
    var createRange = Document.prototype.createRange;
    var rangeProto = proto(win.Range);
    var rangeSelect = rangeProto && rangeProto.selectNodeContents;
    var rangeBCR = rangeProto && rangeProto.getBoundingClientRect;
    var rectProto = proto(win.DOMRectReadOnly) || proto(win.DOMRect);
    var rectLeft = getter(rectProto, 'left');
    var rectTop = getter(rectProto, 'top');
    var rectWidth = getter(rectProto, 'width');
    var rectHeight = getter(rectProto, 'height');
    var winProto = proto(win.Window);
    var innerWidthG = getter(win, 'innerWidth') || getter(winProto, 'innerWidth');
    var innerHeightG = getter(win, 'innerHeight') || getter(winProto, 'innerHeight');
    var scrollXG = getter(win, 'scrollX') || getter(winProto, 'scrollX');
    var scrollYG = getter(win, 'scrollY') || getter(winProto, 'scrollY');
    var scrollHeightG = getter(Element.prototype, 'scrollHeight');
    var firstChildG = getter(Node.prototype, 'firstChild');
    var nextSiblingG = getter(Node.prototype, 'nextSibling');
    var previousSiblingG = getter(Node.prototype, 'previousSibling');
    var nodeTypeG = getter(Node.prototype, 'nodeType');
    var charDataG = getter(proto(win.CharacterData), 'data');
    var shadowRootG = getter(Element.prototype, 'shadowRoot');
    var slotProto = proto(win.HTMLSlotElement);
    var assignedNodes = slotProto && slotProto.assignedNodes;
    var innerTextG = getter(proto(win.HTMLElement), 'innerText');
    var getElementByIdDoc = Document.prototype.getElementById;
    var fragProto = proto(win.DocumentFragment);
    var getElementByIdFrag = fragProto && fragProto.getElementById;
    var getRootNode = Node.prototype.getRootNode;
    var rootHostG = getter(proto(win.ShadowRoot), 'host');
    var inputProto = proto(win.HTMLInputElement);
    var selectProto = proto(win.HTMLSelectElement);
    var textareaProto = proto(win.HTMLTextAreaElement);
    var buttonProto = proto(win.HTMLButtonElement);
    var labelsOf = dict();
    labelsOf.input = getter(inputProto, 'labels');
    labelsOf.select = getter(selectProto, 'labels');
    labelsOf.textarea = getter(textareaProto, 'labels');
    labelsOf.button = getter(buttonProto, 'labels');
    labelsOf.meter = getter(proto(win.HTMLMeterElement), 'labels');
    labelsOf.progress = getter(proto(win.HTMLProgressElement), 'labels');
    var formOf = dict();
    formOf.input = getter(inputProto, 'form');
    formOf.select = getter(selectProto, 'form');
    formOf.textarea = getter(textareaProto, 'form');
    formOf.button = getter(buttonProto, 'form');
    var checkedG = getter(inputProto, 'checked');
    var buttonTypeG = getter(buttonProto, 'type');
    var optionTextG = getter(proto(win.HTMLOptionElement), 'text');
    var labelControlG = getter(proto(win.HTMLLabelElement), 'control');
    var matchesFn = Element.prototype.matches;
    var closestFn = Element.prototype.closest;
    var containsFn = Node.prototype.contains;
    var elementFromPoint = Document.prototype.elementFromPoint;
    var clickFn = proto(win.HTMLElement) && win.HTMLElement.prototype.click;
    var scrollIntoView = Element.prototype.scrollIntoView;
    var anchorHrefG = getter(proto(win.HTMLAnchorElement), 'href');
    var areaHrefG = getter(proto(win.HTMLAreaElement), 'href');
    var formProto = proto(win.HTMLFormElement);
    var formActionG = getter(formProto, 'action');
    var formMethodG = getter(formProto, 'method');
    var cookieG = getter(Document.prototype, 'cookie');
    var URLCtor = win.URL;
    var urlProto = proto(URLCtor);
    var urlOriginG = getter(urlProto, 'origin');
    var urlHrefG = getter(urlProto, 'href');
    var urlProtocolG = getter(urlProto, 'protocol');
    var urlPathnameG = getter(urlProto, 'pathname');
    var urlSearchG = getter(urlProto, 'search');
    var urlHashG = getter(urlProto, 'hash');
    var WeakRefCtor = win.WeakRef;
    var weakDeref = WeakRefCtor && WeakRefCtor.prototype.deref;
    var isArray = Array.isArray;
    var fetchFn = win.fetch;
    var respProto = proto(win.Response);
    var respText = respProto && respProto.text;
    var respStatusG = getter(respProto, 'status');
    var respTypeG = getter(respProto, 'type');
    var respHeadersG = getter(respProto, 'headers');
    var headersGet = proto(win.Headers) && win.Headers.prototype.get;
    var promiseThen = Promise.prototype.then;
    var getPrototypeOf = Object.getPrototypeOf;
    var DOMParserCtor = win.DOMParser;
    var parseFromString = DOMParserCtor && DOMParserCtor.prototype.parseFromString;
    var mathRound = Math.round;
    var strLastIndexOf = String.prototype.lastIndexOf;
    var WeakMapC = WeakMap;

    // The window's own enumerable properties now, before any page script: what read_page_data
    // leaves out as built-in.
    var builtinGlobals = dict();
    (function () {
      var names = objectKeys(win);
      var i;
      for (i = 0; i < names.length; i++) {
        builtinGlobals[names[i]] = true;
      }
    })();

    // Bounds.
    var MAX_ANSWER_BYTES = 250000;      // the proxy reads at most 260 KiB per message
    var MAX_NODES = 20000;              // elements and text nodes an outline visits
    var FIND_NODES = 200000;            // and find's outline, which is never answered whole
    var FIND_BUDGET = 2000000;          // characters of find's outline
    var MAX_NAME = 100;                 // characters of an accessible name in a line
    var MAX_TEXT_LINE = 200;            // characters of a text line
    var MAX_TEXT_ALL = 100;             // and in the whole-page outline (capture_page has the text)
    var DATA_BUDGET = 32768;            // characters of page globals in read_page_data
    var DATA_DEPTH = 4;
    var PRUNE_REFS_AT = 10000;
    var ELLIPSIS = '\u2026';
    var OVERLAYS_HEAD = '# open overlays';
    var PAGE_HEAD = '# page';

    var PENDING = dict(); // returned by a tool that answers later

    // ---- Small helpers. ---------------------------------------------------------------------

    function nodeType(n) {
      try {
        return apply(nodeTypeG, n, []);
      } catch (e) {
        return 0;
      }
    }
    function firstChild(n) {
      return apply(firstChildG, n, []);
    }
    function nextSibling(n) {
      return apply(nextSiblingG, n, []);
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
    function allowed(namesList) {
      var d = dict();
      var i;
      for (i = 0; i < namesList.length; i++) {
        d[namesList[i]] = true;
      }
      return d;
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
        r.width = num(apply(rectWidth, b, []));
        r.height = num(apply(rectHeight, b, []));
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


    // ---- Same-origin frames. ----------------------------------------------------------------
    //
    // The proxy injects only top-level documents, so frames have no page agent of their own:
    // the outline, find, query and the actions reach same-origin iframes from here, through
    // contentDocument. A frame's window has its own built-ins, which its scripts may have
    // replaced; none of them is used: every call on a frame's nodes goes through the functions
    // captured above from this window (DOM methods work across same-origin windows), and what
    // comes out of a frame is data, like anything else on the page. A cross-origin frame
    // (contentDocument is null) is one outline line and is never read. A frame inside a shadow
    // tree is reached once an outline has met it (noteFrame); frames nested deeper than
    // MAX_FRAME_DEPTH, and more than MAX_FRAMES, are not.

    var contentDocumentG = getter(proto(win.HTMLIFrameElement), 'contentDocument');
    var ownerDocumentG = getter(Node.prototype, 'ownerDocument');
    var clientLeftG = getter(Element.prototype, 'clientLeft');
    var clientTopG = getter(Element.prototype, 'clientTop');
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
        return d && d !== doc && nodeType(d) === 9 ? d : null;
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
      var t = now();
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
      var u = typeof raw === 'string' && raw !== '' ? parseURL(raw, o.base) : null;
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

    // ---- URLs. ------------------------------------------------------------------------------

    function parseURL(raw, base) {
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
    function pageOrigin() {
      var u = parseURL(href(), undefined);
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

    // ---- Element refs. ----------------------------------------------------------------------

    var refByEl = new WeakMapC();
    var elByRef = new MapCtor();
    var nextRef = 1;

    function refFor(node) {
      var n = apply(weakGet, refByEl, [node]);
      if (!n) {
        n = nextRef;
        nextRef = nextRef + 1;
        apply(weakSet, refByEl, [node, n]);
        apply(mapSet, elByRef, [n, typeof WeakRefCtor === 'function' ? new WeakRefCtor(node) : node]);
        pruneRefs();
      }
      return 'e' + n;
    }
    function deref(w) {
      if (w && typeof WeakRefCtor === 'function' && weakDeref) {
        return apply(weakDeref, w, []);
      }
      return w;
    }
    function pruneRefs() {
      if (!mapSize || apply(mapSize, elByRef, []) < PRUNE_REFS_AT) {
        return;
      }
      apply(mapForEach, elByRef, [function (w, n) {
        var node = deref(w);
        if (!node || !connected(node)) {
          apply(mapDelete, elByRef, [n]);
        }
      }]);
    }
    function refNumber(ref) {
      if (typeof ref !== 'string' || ref.length < 2 || ref.length > 12 || apply(charCodeAt, ref, [0]) !== 101) {
        return 0;
      }
      var n = 0;
      var i;
      for (i = 1; i < ref.length; i++) {
        var c = apply(charCodeAt, ref, [i]);
        if (c < 48 || c > 57) {
          return 0;
        }
        n = n * 10 + (c - 48);
      }
      return n;
    }
    function liveRef(n) {
      var node = deref(apply(mapGet, elByRef, [n]));
      return node && connected(node) ? node : null;
    }
    // byRef returns the element of a ref, or refuses with refs near it that still live.
    function byRef(ref) {
      if (typeof ref === 'string' && ref.length > 2 && apply(charCodeAt, ref, [0]) === 91 &&
          apply(charCodeAt, ref, [ref.length - 1]) === 93) {
        ref = apply(strSlice, ref, [1, ref.length - 1]); // "[e12]" as the outline writes it
      }
      var n = refNumber(ref);
      if (!n) {
        refuse('"' + cut('' + ref, 20) + '" is not an element ref (refs look like e12; get them from outline or query)');
      }
      var node = liveRef(n);
      if (node) {
        return node;
      }
      var near = '';
      var k;
      var found = 0;
      for (k = 1; k <= 6 && found < 4; k++) {
        var cands = [n - k, n + k];
        var j;
        for (j = 0; j < 2; j++) {
          var other = cands[j] > 0 ? liveRef(cands[j]) : null;
          if (other) {
            near = near + (near === '' ? '' : ', ') + 'e' + cands[j] + ' ' + describe(other, false);
            found++;
          }
        }
      }
      refuse('element ' + ref + ' is no longer on the page (or was never seen); call outline again' +
        (near === '' ? '' : '. Refs near it that still exist: ' + near));
      return null;
    }

    // ---- Roles and names. -------------------------------------------------------------------

    var SKIP = allowed(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title', 'base']);
    var NO_CHILDREN = allowed(['select', 'textarea', 'input', 'img', 'svg', 'iframe', 'frame', 'video',
      'audio', 'canvas', 'object', 'embed', 'math', 'option']);
    var INLINE = allowed(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'dfn', 'em', 'i', 'kbd',
      'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var', 'label', 'font']);
    var LEAF = allowed(['link', 'button', 'heading', 'img', 'textbox', 'searchbox', 'checkbox', 'radio',
      'combobox', 'slider', 'spinbutton', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
      'switch', 'progressbar', 'meter', 'iframe', 'listbox']);
    var INTERACTIVE = allowed(['link', 'button', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox',
      'slider', 'spinbutton', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch',
      'listbox', 'treeitem', 'gridcell']);
    // Roles named by their content. (Cells, rows and tree items are too, in ARIA; the outline
    // shows their content as their children instead, or inline when it is one text.)
    var NAME_FROM_CONTENT = allowed(['link', 'button', 'heading', 'option', 'menuitem', 'menuitemcheckbox',
      'menuitemradio', 'tab', 'checkbox', 'radio', 'switch', 'tooltip']);
    var STRUCTURE = allowed(['list', 'listitem', 'navigation', 'main', 'banner', 'contentinfo', 'complementary',
      'form', 'search', 'region', 'dialog', 'alertdialog', 'table', 'grid', 'treegrid', 'row', 'cell',
      'gridcell', 'columnheader', 'rowheader', 'group', 'article', 'menu', 'menubar', 'tablist', 'toolbar',
      'alert', 'status', 'tree', 'treeitem', 'radiogroup', 'tabpanel', 'figure', 'log', 'note', 'feed',
      'tooltip', 'definition', 'term', 'math', 'application', 'document', 'rowgroup', 'directory', 'timer',
      'marquee', 'contentinfo']);
    // Unnamed containers left out when they hold a single element line.
    var FOLD = allowed(['listitem', 'row', 'cell', 'gridcell', 'rowgroup', 'group']);
    var INPUT_ROLE = dict();
    INPUT_ROLE.button = 'button';
    INPUT_ROLE.submit = 'button';
    INPUT_ROLE.reset = 'button';
    INPUT_ROLE.image = 'button';
    INPUT_ROLE.file = 'button';
    INPUT_ROLE.checkbox = 'checkbox';
    INPUT_ROLE.radio = 'radio';
    INPUT_ROLE.range = 'slider';
    INPUT_ROLE.number = 'spinbutton';
    INPUT_ROLE.search = 'searchbox';
    INPUT_ROLE.color = 'button';
    var TAG_ROLE = dict();
    TAG_ROLE.button = 'button';
    TAG_ROLE.textarea = 'textbox';
    TAG_ROLE.h1 = 'heading';
    TAG_ROLE.h2 = 'heading';
    TAG_ROLE.h3 = 'heading';
    TAG_ROLE.h4 = 'heading';
    TAG_ROLE.h5 = 'heading';
    TAG_ROLE.h6 = 'heading';
    TAG_ROLE.nav = 'navigation';
    TAG_ROLE.main = 'main';
    TAG_ROLE.header = 'banner';
    TAG_ROLE.footer = 'contentinfo';
    TAG_ROLE.aside = 'complementary';
    TAG_ROLE.form = 'form';
    TAG_ROLE.search = 'search';
    TAG_ROLE.article = 'article';
    TAG_ROLE.dialog = 'dialog';
    TAG_ROLE.ul = 'list';
    TAG_ROLE.ol = 'list';
    TAG_ROLE.menu = 'list';
    TAG_ROLE.li = 'listitem';
    TAG_ROLE.table = 'table';
    TAG_ROLE.tr = 'row';
    TAG_ROLE.th = 'columnheader';
    TAG_ROLE.td = 'cell';
    TAG_ROLE.details = 'group';
    TAG_ROLE.fieldset = 'group';
    TAG_ROLE.summary = 'button';
    TAG_ROLE.option = 'option';
    TAG_ROLE.progress = 'progressbar';
    TAG_ROLE.meter = 'meter';
    TAG_ROLE.iframe = 'iframe';
    TAG_ROLE.figure = 'figure';

    function inputType(node) {
      var t = attrOf(node, 'type');
      return typeof t === 'string' && t !== '' ? lower(t) : 'text';
    }

    // roleOf is the element's ARIA role: the first token of role="", else the tag's implicit
    // role; '' for generic containers (their children are shown in their place).
    function roleOf(node, ln) {
      var r = attrOf(node, 'role');
      if (typeof r === 'string') {
        var parts = splitSpace(lower(r));
        if (parts.length > 0) {
          return parts[0] === 'presentation' || parts[0] === 'none' ? '' : parts[0];
        }
      }
      if (ln === 'a' || ln === 'area') {
        return hasAttr(node, 'href') ? 'link' : '';
      }
      if (ln === 'input') {
        var t = inputType(node);
        if (t === 'hidden') {
          return '';
        }
        var ir = INPUT_ROLE[t];
        if (ir) {
          return ir;
        }
        return hasAttr(node, 'list') ? 'combobox' : 'textbox';
      }
      if (ln === 'select') {
        return hasAttr(node, 'multiple') || num(+attrStr(node, 'size')) > 1 ? 'listbox' : 'combobox';
      }
      if (ln === 'img') {
        var alt = attrOf(node, 'alt');
        return alt === '' ? '' : 'img';
      }
      if (ln === 'svg') {
        return hasAttr(node, 'aria-label') || hasAttr(node, 'aria-labelledby') ? 'img' : '';
      }
      if (ln === 'section') {
        return hasAttr(node, 'aria-label') || hasAttr(node, 'aria-labelledby') ? 'region' : '';
      }
      if ((ln === 'table' || ln === 'tr' || ln === 'td' || ln === 'th') && layoutTable(ln === 'table' ? node : closest(node, 'table'))) {
        return '';
      }
      var tr = TAG_ROLE[ln];
      return tr ? tr : '';
    }

    // layoutTable reports whether a table only lays out the page (no header cells, caption or
    // label): its rows and cells are then shown through their content.
    var layoutCache = null;
    function layoutTable(table) {
      if (!table || hasAttr(table, 'role') || hasAttr(table, 'aria-label') || hasAttr(table, 'aria-labelledby')) {
        return false;
      }
      if (!layoutCache) {
        layoutCache = new WeakMapC();
      }
      var known = apply(weakGet, layoutCache, [table]);
      if (known !== undefined) {
        return known;
      }
      var layout = queryIn(table, 'th, thead, caption').length === 0;
      apply(weakSet, layoutCache, [table, layout]);
      return layout;
    }

    // textOf is the text an element's content gives its name: text nodes, alt of images,
    // aria-label of descendants; never the value of a form field.
    function textOf(node, live, budget) {
      var st = dict();
      st.out = '';
      st.left = budget;
      st.nodes = 300; // elements looked at
      contentText(node, live, st, 0);
      return st.out;
    }
    function contentText(node, live, st, depth) {
      var c = firstChild(node);
      while (c && st.left > 0) {
        var t = nodeType(c);
        if (t === 3) {
          var d = '' + apply(charDataG, c, []);
          st.out = st.out + d;
          st.left = st.left - d.length;
        } else if (t === 1 && depth < 12 && st.nodes-- > 0) {
          var ln = localName(c);
          if (SKIP[ln] !== true && ln !== 'select' && ln !== 'textarea' && c !== host && !hiddenAttr(c) &&
              (!live || cssValue(computed(c), 'display') !== 'none')) {
            var label = attrOf(c, 'aria-label');
            var sep = INLINE[ln] === true ? '' : ' ';
            if (typeof label === 'string' && collapse(label, 10) !== '') {
              st.out = st.out + sep + label + sep;
            } else if (ln === 'img' || ln === 'area') {
              st.out = st.out + sep + attrStr(c, 'alt') + sep;
            } else if (ln === 'input') {
              var it = inputType(c);
              if (it === 'button' || it === 'submit' || it === 'reset') {
                st.out = st.out + ' ' + attrStr(c, 'value') + ' ';
              }
            } else if (ln !== 'svg') {
              st.out = st.out + sep;
              contentText(c, live, st, depth + 1);
              st.out = st.out + sep;
            }
          }
        }
        c = nextSibling(c);
      }
    }
    function hiddenAttr(node) {
      return hasAttr(node, 'hidden') || attrOf(node, 'aria-hidden') === 'true';
    }
    function idLookup(node, id) {
      var root = null;
      try {
        root = apply(getRootNode, node, []);
      } catch (e) { /* detached */ }
      try {
        if (root && nodeType(root) === 9) {
          return apply(getElementByIdDoc, root, [id]);
        }
        if (root && nodeType(root) === 11 && getElementByIdFrag) {
          return apply(getElementByIdFrag, root, [id]);
        }
      } catch (e) { /* not found */ }
      return null;
    }

    // nameOf computes an accessible name: aria-labelledby, aria-label, labels of form fields,
    // alt, legend and caption, content (for the roles named by it), title, placeholder, and for
    // an unlabelled field the short text just before it.
    function nameOf(node, ln, role, live) {
      var s = '';
      var ids = attrOf(node, 'aria-labelledby');
      if (typeof ids === 'string') {
        var parts = splitSpace(ids);
        var i;
        for (i = 0; i < parts.length && i < 8; i++) {
          var ref = idLookup(node, parts[i]);
          if (ref && ref !== node) {
            var al = attrOf(ref, 'aria-label');
            s = s + ' ' + (typeof al === 'string' && al !== '' ? al : textOf(ref, false, 400));
          }
        }
        s = collapse(s, MAX_NAME);
        if (s !== '') {
          return s;
        }
      }
      s = collapse(attrStr(node, 'aria-label'), MAX_NAME);
      if (s !== '') {
        return s;
      }
      var field = ln === 'input' || ln === 'select' || ln === 'textarea';
      if (ln === 'input') {
        var t = inputType(node);
        if (t === 'button' || t === 'submit' || t === 'reset') {
          s = collapse(attrStr(node, 'value'), MAX_NAME);
          return s !== '' ? s : t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '';
        }
        if (t === 'image') {
          s = collapse(attrStr(node, 'alt') || attrStr(node, 'value'), MAX_NAME);
          return s !== '' ? s : 'Submit';
        }
      }
      var lg = labelsOf[ln];
      if (lg) {
        try {
          var labels = nodeList(apply(lg, node, []));
          var j;
          for (j = 0; j < labels.length && j < 4; j++) {
            s = s + ' ' + textOf(labels[j], live, 400);
          }
        } catch (e) { /* no labels */ }
        s = collapse(s, MAX_NAME);
        if (s !== '') {
          return s;
        }
      }
      if (ln === 'img' || ln === 'area') {
        s = collapse(attrStr(node, 'alt'), MAX_NAME);
      } else if (ln === 'fieldset' || ln === 'table' || ln === 'svg' || ln === 'figure') {
        var sub = ln === 'fieldset' ? 'legend' : ln === 'table' ? 'caption' : ln === 'svg' ? 'title' : 'figcaption';
        var c = firstChild(node);
        while (c) {
          if (nodeType(c) === 1 && localName(c) === sub) {
            s = collapse(textOf(c, false, 400), MAX_NAME);
            break;
          }
          c = nextSibling(c);
        }
      } else if (NAME_FROM_CONTENT[role] === true) {
        s = collapse(textOf(node, live, 600), MAX_NAME);
      }
      if (s === '') {
        s = collapse(attrStr(node, 'title'), MAX_NAME);
      }
      if (s === '' && field) {
        s = collapse(attrStr(node, 'placeholder'), MAX_NAME);
        if (s === '') {
          s = textBefore(node);
        }
      }
      return s;
    }
    // textBefore is the short text right before an unlabelled field ("Email: [    ]").
    function textBefore(node) {
      var prev = apply(previousSiblingG, node, []);
      var k = 0;
      while (prev && k < 3) {
        var t = nodeType(prev);
        var s = '';
        if (t === 3) {
          s = collapse('' + apply(charDataG, prev, []), 80);
        } else if (t === 1) {
          var ln = localName(prev);
          if (ln === 'input' || ln === 'select' || ln === 'textarea' || ln === 'button') {
            return '';
          }
          s = collapse(textOf(prev, false, 200), 80);
        }
        if (s !== '') {
          return s.length <= 60 ? s : '';
        }
        prev = apply(previousSiblingG, prev, []);
        k++;
      }
      return '';
    }

    function fieldValue(node, ln) {
      if (isPassword(node)) {
        return null;
      }
      try {
        if (ln === 'input') {
          return '' + apply(inputValue, node, []);
        }
        if (ln === 'textarea') {
          return '' + apply(textareaValue, node, []);
        }
        if (ln === 'select') {
          var sel = queryIn(node, 'option:checked');
          var out = '';
          var i;
          for (i = 0; i < sel.length && i < 5; i++) {
            out = out + (i ? ', ' : '') + collapse('' + apply(optionTextG, sel[i], []), 60);
          }
          return out;
        }
      } catch (e) { /* not a field after all */ }
      return null;
    }

    // states lists the element's state flags: " [checked] [disabled] [level=2]".
    function states(node, ln, role) {
      var s = '';
      if (role === 'heading') {
        var lvl = attrStr(node, 'aria-level');
        if (lvl === '' && ln.length === 2 && apply(charCodeAt, ln, [0]) === 104) {
          lvl = apply(strSlice, ln, [1]);
        }
        if (lvl !== '') {
          s = s + ' [level=' + cut(lvl, 2) + ']';
        }
      }
      if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
        var checked = false;
        var ac = attrOf(node, 'aria-checked');
        if (ln === 'input' && checkedG) {
          checked = apply(checkedG, node, []) === true;
        } else if (ac === 'mixed') {
          s = s + ' [mixed]';
        } else {
          checked = ac === 'true';
        }
        if (checked) {
          s = s + ' [checked]';
        }
      }
      if (role === 'option' && (attrOf(node, 'aria-selected') === 'true' || (ln === 'option' && matches(node, ':checked')))) {
        s = s + ' [selected]';
      } else if (attrOf(node, 'aria-selected') === 'true') {
        s = s + ' [selected]';
      }
      var exp = attrOf(node, 'aria-expanded');
      if (exp === 'true') {
        s = s + ' [expanded]';
      } else if (exp === 'false') {
        s = s + ' [collapsed]';
      } else if (ln === 'summary') {
        var det = closest(node, 'details');
        if (det) {
          s = s + (hasAttr(det, 'open') ? ' [expanded]' : ' [collapsed]');
        }
      }
      var pressed = attrOf(node, 'aria-pressed');
      if (pressed === 'true' || pressed === 'mixed') {
        s = s + ' [pressed]';
      }
      if (attrOf(node, 'aria-disabled') === 'true' || matches(node, ':disabled')) {
        s = s + ' [disabled]';
      }
      if (hasAttr(node, 'required') || attrOf(node, 'aria-required') === 'true') {
        s = s + ' [required]';
      }
      return s;
    }

    // describe names an element for messages: role (or tag) and name, and its ref when asked.
    function describe(node, withRef) {
      var ln = localName(node);
      var role = roleOf(node, ln);
      var name = nameOf(node, ln, role || 'button', false);
      if (name === '' && !role) {
        name = collapse(textOf(node, false, 200), 60);
      }
      return (role || ln) + (name === '' ? '' : ' ' + quote(cut(name, 60))) + (withRef ? ' [' + refFor(node) + ']' : '');
    }

    // ---- Outline. ---------------------------------------------------------------------------

    // newOutline makes the state of one outline walk. live: the page's own document (styles,
    // boxes, refs); otherwise an inert parsed document (no boxes, no refs).
    function newOutline(filter, budget, live, base) {
      var o = dict();
      o.filter = filter;
      o.budget = budget;
      // The walk collects up to four budgets' worth, so that text can give way to elements
      // when the outline is cut to the budget (finishOutline).
      o.walkBudget = budget * 4;
      o.live = live;
      o.base = base;
      o.origin = '';
      o.path = '';
      o.query = '';
      var bu = parseURL(base, undefined);
      if (bu) {
        o.origin = urlPart(bu, urlOriginG);
        o.path = urlPart(bu, urlPathnameG);
        o.query = urlPart(bu, urlSearchG);
      }
      o.lines = list();
      o.chars = 0;
      o.full = false;
      o.more = 0;
      o.visited = 0;
      o.nodeCap = false;
      o.pending = '';
      o.pendingDepth = 0;
      o.textShown = true;
      o.textMax = filter === 'all' ? MAX_TEXT_ALL : MAX_TEXT_LINE;
      o.maxNodes = MAX_NODES;
      o.inLeaf = false;
      o.skip = null;
      layoutCache = null; // the page may have changed since the last outline
      o.vw = live ? viewWidth() : 0;
      o.vh = live ? viewHeight() : 0;
      return o;
    }
    function pushLine(o, line, isElement) {
      if (o.full || o.chars + line.length + 1 > o.walkBudget) {
        o.full = true;
        if (isElement) {
          o.more++;
        }
        return false;
      }
      put(o.lines, o.lines.length, line);
      o.chars = o.chars + line.length + 1;
      return true;
    }
    function popLine(o) {
      var last = o.lines[o.lines.length - 1];
      o.chars = o.chars - last.length - 1;
      o.lines.length = o.lines.length - 1;
    }
    function indent(depth) {
      var s = '';
      var i;
      for (i = 0; i < depth; i++) {
        s = s + ' ';
      }
      return s;
    }
    function flushText(o) {
      if (o.pending === '') {
        return;
      }
      var s = collapse(o.pending, o.textMax);
      o.pending = '';
      if (s !== '') {
        pushLine(o, indent(o.pendingDepth) + quote(s), false);
      }
    }
    function addText(o, node, depth) {
      if (o.inLeaf || o.filter === 'interactive' || !o.textShown || o.full) {
        return;
      }
      var d = '';
      try {
        d = '' + apply(charDataG, node, []);
      } catch (e) {
        return;
      }
      if (o.filter === 'visible' && o.live && !textInView(o, node)) {
        return;
      }
      if (o.pending === '') {
        if (collapse(d, 2) === '') {
          return;
        }
        o.pendingDepth = depth;
      }
      if (o.pending.length < 2 * o.textMax) {
        o.pending = o.pending + d;
      }
    }

    // textInView reports whether a text node's box meets the viewport (a long page of text in
    // one element is cut to what is on screen).
    var range = null;
    function textInView(o, node) {
      if (!createRange || !rangeSelect || !rangeBCR) {
        return true;
      }
      try {
        if (!range) {
          range = apply(createRange, doc, []);
        }
        apply(rangeSelect, range, [node]);
        var b = apply(rangeBCR, range, []);
        var r = dict();
        r.x = num(apply(rectLeft, b, []));
        r.y = num(apply(rectTop, b, []));
        r.width = num(apply(rectWidth, b, []));
        r.height = num(apply(rectHeight, b, []));
        r.clip = null;
        var d = ownerDoc(node);
        if (d !== doc && d !== null) {
          inFrame(r, frameOf(d));
        }
        return inView(r, o.vw, o.vh);
      } catch (e) {
        return true;
      }
    }

    // walkChildren visits what is rendered inside node: the open shadow root's tree instead of
    // the light children, and a slot's assigned nodes instead of its fallback.
    function walkChildren(o, node, depth) {
      var parent = node;
      if (nodeType(node) === 1) {
        var sr = null;
        try {
          sr = shadowRootG ? apply(shadowRootG, node, []) : null;
        } catch (e) { /* none */ }
        if (sr) {
          parent = sr;
        } else if (o.live && assignedNodes && localName(node) === 'slot') {
          var opts = dict();
          opts.flatten = true;
          var assigned = null;
          try {
            assigned = apply(assignedNodes, node, [opts]);
          } catch (e) { /* not a slot */ }
          if (assigned && assigned.length > 0) {
            var i;
            for (i = 0; i < assigned.length && !o.nodeCap; i++) {
              visit(o, assigned[i], depth);
            }
            return;
          }
        }
      }
      var c = firstChild(parent);
      while (c && !o.nodeCap) {
        visit(o, c, depth);
        c = nextSibling(c);
      }
    }

    function visit(o, node, depth) {
      o.visited++;
      if (o.visited > o.maxNodes) {
        o.nodeCap = true;
        return;
      }
      var t = nodeType(node);
      if (t === 3) {
        addText(o, node, depth);
        return;
      }
      if (t !== 1 || node === host) {
        return;
      }
      var ln = localName(node);
      if (SKIP[ln] === true || (o.skip && apply(weakGet, o.skip, [node]))) {
        return;
      }
      if (hiddenAttr(node) || (ln === 'input' && inputType(node) === 'hidden')) {
        return;
      }
      var st = null;
      var shown = true;
      if (o.live) {
        st = computed(node);
        if (cssValue(st, 'display') === 'none') {
          return;
        }
        var vis = cssValue(st, 'visibility');
        shown = vis !== 'hidden' && vis !== 'collapse';
        if (shown && o.filter === 'visible') {
          shown = inView(rectOf(node), o.vw, o.vh) || cssValue(st, 'display') === 'contents';
        }
      } else {
        var inline = lower(attrStr(node, 'style'));
        if (contains(replaceAll(inline, ' ', ''), 'display:none')) {
          return;
        }
      }
      var role = roleOf(node, ln);
      if (role !== '' && LEAF[role] !== true && STRUCTURE[role] !== true && INTERACTIVE[role] !== true) {
        role = ''; // generic, paragraph, presentation and the like: shown through its content
      }
      if (role === '' || (role === 'img' && o.inLeaf)) {
        if (NO_CHILDREN[ln] === true) {
          return;
        }
        var block = INLINE[ln] !== true;
        if (o.live) {
          var disp = cssValue(st, 'display');
          block = apply(strIndexOf, disp, ['inline']) !== 0 && disp !== 'contents';
        }
        if (ln === 'br') {
          if (o.pending !== '') {
            o.pending = o.pending + ' '; // a line break joins the text around it
          }
          return;
        }
        if (block) {
          flushText(o);
        }
        var saveShown = o.textShown;
        // A label's text is its field's name, shown on the field's line.
        o.textShown = shown && !(ln === 'label' && labelControl(node));
        walkChildren(o, node, depth);
        o.textShown = saveShown;
        if (block) {
          flushText(o);
        }
        return;
      }
      flushText(o);
      var interactive = INTERACTIVE[role] === true;
      var emit = shown && (!o.inLeaf || interactive) && (o.filter !== 'interactive' || interactive);
      var line = '';
      var name = '';
      if (emit) {
        name = nameOf(node, ln, role, o.live);
        if (role === 'img' && name === '') {
          emit = false;
        }
      }
      var at = -1;
      if (emit) {
        line = indent(depth) + role + (name === '' ? '' : ' ' + quote(name)) + states(node, ln, role);
        var val = role === 'textbox' || role === 'searchbox' || role === 'combobox' || role === 'spinbutton' ||
          role === 'slider' || role === 'listbox' ? fieldValue(node, ln) : null;
        if (val !== null && val !== '') {
          line = line + ' value=' + quote(collapse(val, MAX_NAME));
        } else if (isPassword(node)) {
          line = line + ' [password]';
        }
        if (role === 'link') {
          var dest = linkDest(o, node, ln);
          if (dest !== '') {
            line = line + ' -> ' + dest;
          }
        }
        var otherSite = ln === 'iframe' && o.live ? frameLine(o, node) : '';
        line = line + otherSite;
        if (o.live && otherSite === '' && !o.full && o.chars + line.length + 12 <= o.walkBudget) {
          line = line + ' [' + refFor(node) + ']';
        }
        if (pushLine(o, line, true)) {
          at = o.lines.length - 1;
        }
      }
      if (ln === 'iframe' && o.live) {
        frameContent(o, node, at >= 0 && o.filter !== 'interactive' ? depth + 1 : depth, shown);
        return;
      }
      if (NO_CHILDREN[ln] === true) {
        return;
      }
      var childDepth = at >= 0 && o.filter !== 'interactive' ? depth + 1 : depth;
      var saveLeaf = o.inLeaf;
      var saveShown2 = o.textShown;
      if (LEAF[role] === true || STRUCTURE[role] !== true && role !== '') {
        o.inLeaf = o.inLeaf || LEAF[role] === true;
      }
      o.textShown = shown;
      walkChildren(o, node, childDepth);
      flushText(o);
      o.inLeaf = saveLeaf;
      o.textShown = saveShown2;
      if (at >= 0 && LEAF[role] !== true && !o.full) {
        var kids = o.lines.length - at - 1;
        if (kids === 0 && name === '' && o.filter !== 'interactive') {
          popLine(o); // an empty list or row says nothing
        } else if (kids === 1 && name === '') {
          var child = o.lines[at + 1];
          if (FOLD[role] === true && isElementLine(child) && o.filter !== 'interactive') {
            // A list item or cell holding one element says no more than that element.
            popLine(o);
            popLine(o);
            pushLine(o, apply(strSlice, child, [1]), false);
          } else if (isTextLine(child) && indentOf(child) === childDepth) {
            var merged = o.lines[at];
            var refAt = apply(strIndexOf, merged, [' [e']);
            var text = apply(strSlice, child, [childDepth]);
            popLine(o);
            popLine(o);
            merged = refAt >= 0 ? apply(strSlice, merged, [0, refAt]) + ' ' + text + apply(strSlice, merged, [refAt]) : merged + ' ' + text;
            pushLine(o, merged, false);
          }
        }
      }
    }

    function labelControl(node) {
      try {
        return labelControlG ? apply(labelControlG, node, []) : null;
      } catch (e) {
        return null;
      }
    }

    function linkDest(o, node, ln) {
      var raw = attrOf(node, 'href');
      if (typeof raw !== 'string') {
        return '';
      }
      var u = null;
      if (o.live) {
        var g = ln === 'a' ? anchorHrefG : ln === 'area' ? areaHrefG : null;
        if (g) {
          try {
            u = parseURL('' + apply(g, node, []), undefined);
          } catch (e) { /* not a link element */ }
        }
      }
      if (!u) {
        u = parseURL(raw, o.base);
      }
      if (!u) {
        return cut(collapse(raw, 200), 200);
      }
      var p = urlPart(u, urlProtocolG);
      if (p !== 'http:' && p !== 'https:') {
        return p;
      }
      if (urlPart(u, urlOriginG) === o.origin && urlPart(u, urlPathnameG) === o.path) {
        // On this page: its fragment, or its other query (relative references, as in HTML).
        var q = urlPart(u, urlSearchG);
        var h = urlPart(u, urlHashG);
        if (q === o.query && h !== '') {
          return cut(h, 120);
        }
        if (q !== '') {
          return cut(q + h, 120);
        }
      }
      return cut(shortDest(u, o.origin), 120);
    }

    // overlays lists the open dialogs, popup listboxes and menus, outermost only.
    function overlays() {
      var found = queryDoc('dialog[open], [role=dialog], [role=alertdialog], [aria-modal=true], [role=listbox], [role=menu]');
      var out = list();
      var i;
      for (i = 0; i < found.length; i++) {
        var node = found[i];
        if (node === host || localName(node) === 'select' || hiddenAttr(node) || !shownLive(node)) {
          continue;
        }
        var inside = false;
        var j;
        for (j = 0; j < found.length; j++) {
          if (found[j] !== node && within(found[j], node) && shownLive(found[j])) {
            inside = true;
            break;
          }
        }
        if (!inside) {
          put(out, out.length, node);
        }
      }
      return out;
    }

    // An outline line is indented one space per level; a text line is a quoted string, an
    // element line starts with its role; the section headings start with '#', the notes with an
    // ellipsis.
    function isTextLine(line) {
      return apply(charCodeAt, line, [indentOf(line)]) === 34;
    }
    function isElementLine(line) {
      var c = apply(charCodeAt, line, [indentOf(line)]);
      return c >= 97 && c <= 122;
    }

    // withoutDest is a link line without its " -> destination", or the line itself.
    function withoutDest(line) {
      var i = indentOf(line);
      if (apply(strSlice, line, [i, i + 5]) !== 'link ') {
        return line;
      }
      var q = apply(strLastIndexOf, line, ['"']);
      var a = apply(strIndexOf, line, [' -> ', q < 0 ? i : q]);
      if (a < 0) {
        return line;
      }
      var r = apply(strLastIndexOf, line, [' [e']);
      return r > a ? apply(strSlice, line, [0, a]) + apply(strSlice, line, [r]) : apply(strSlice, line, [0, a]);
    }

    // finishOutline fits the collected lines to the budget: text lines go first, from the end,
    // then link destinations, then the outline is cut, and each is said in a last line.
    function finishOutline(o) {
      var lines = o.lines;
      var total = o.chars;
      var droppedText = false;
      var i;
      if (total > o.budget) {
        var drop = dict();
        for (i = lines.length - 1; i >= 0 && total > o.budget; i--) {
          if (isTextLine(lines[i])) {
            drop[i] = true;
            total = total - lines[i].length - 1;
            droppedText = true;
          }
        }
        var kept = list();
        for (i = 0; i < lines.length; i++) {
          if (drop[i] !== true) {
            put(kept, kept.length, lines[i]);
          }
        }
        lines = kept;
      }
      // Then link destinations, from the end (the ref still clicks; query gives the href).
      var droppedDest = false;
      for (i = lines.length - 1; i >= 0 && total > o.budget; i--) {
        var bare = withoutDest(lines[i]);
        if (bare !== lines[i]) {
          total = total - (lines[i].length - bare.length);
          lines[i] = bare;
          droppedDest = true;
        }
      }
      var text = '';
      var chars = 0;
      var refs = 0;
      var more = o.more;
      for (i = 0; i < lines.length; i++) {
        var line = lines[i];
        if (chars + line.length + 1 > o.budget) {
          break;
        }
        text = text + (i ? '\n' : '') + line;
        chars = chars + line.length + 1;
        if (contains(line, ' [e')) {
          refs++;
        }
      }
      var cut = i < lines.length || o.full;
      for (; i < lines.length; i++) {
        if (isElementLine(lines[i])) {
          more++;
        }
      }
      if (droppedText && droppedDest) {
        text = text + (text === '' ? '' : '\n') + ELLIPSIS + ' (text and link destinations left out to fit the budget; capture_page has the text, query the hrefs)';
      } else if (droppedText) {
        text = text + (text === '' ? '' : '\n') + ELLIPSIS + ' (some text left out to fit the budget; capture_page has the page\'s text)';
      } else if (droppedDest) {
        text = text + (text === '' ? '' : '\n') + ELLIPSIS + ' (link destinations left out to fit the budget; query by ref gives the href)';
      }
      if (cut) {
        text = text + (text === '' ? '' : '\n') + ELLIPSIS + ' (truncated: ' + more + (o.nodeCap ? '+' : '') +
          ' more elements; use ref= or filter= to see more)';
      } else if (o.nodeCap) {
        text = text + (text === '' ? '' : '\n') + ELLIPSIS + ' (truncated: the page has more than ' + o.maxNodes + ' nodes; use ref= to see a part)';
      }
      var r = dict();
      r.outline = text;
      r.truncated = cut || droppedText || droppedDest || o.nodeCap;
      r.refs = refs;
      return r;
    }

    // toolOutline answers the outline tool. find passes wide: the whole page (its bounds
    // instead of the answer's) with longer text lines.
    function toolOutline(args, wide) {
      checkArgs(args, 'outline', allowed(['budget', 'ref', 'filter']));
      var budget = intArg(args, 'budget', 3000, 200, 100000);
      var ref = strArg(args, 'ref', false, 20);
      var filter = strArg(args, 'filter', false, 20);
      if (filter === null) {
        filter = ref === null ? 'visible' : 'all';
      }
      if (filter !== 'visible' && filter !== 'interactive' && filter !== 'all') {
        refuse('filter must be "visible", "interactive" or "all"');
      }
      var o = newOutline(filter, budget, true, href());
      if (wide === true) { // (the dispatcher passes its callback here)
        o.budget = FIND_BUDGET;
        o.walkBudget = FIND_BUDGET;
        o.maxNodes = FIND_NODES;
        o.textMax = MAX_TEXT_LINE;
      }
      if (ref !== null) {
        visit(o, byRef(ref), 0);
        flushText(o);
        return noneShown(finishOutline(o), filter);
      }
      var root = bodyOf ? apply(bodyOf, doc, []) : null;
      if (!root) {
        root = apply(documentElement, doc, []);
      }
      if (!root) {
        return finishOutline(o);
      }
      var ovs = overlays();
      var depth = 0;
      if (ovs.length > 0) {
        o.skip = new WeakMapC();
        pushLine(o, OVERLAYS_HEAD, false);
        var i;
        var saveFilter = o.filter;
        if (o.filter === 'visible') {
          o.filter = 'all'; // an open overlay is shown whole, within the budget
        }
        for (i = 0; i < ovs.length; i++) {
          visit(o, ovs[i], 1);
          flushText(o);
          apply(weakSet, o.skip, [ovs[i], true]);
        }
        o.filter = saveFilter;
        pushLine(o, PAGE_HEAD, false);
        depth = 1;
      }
      walkChildren(o, root, depth);
      flushText(o);
      var r = finishOutline(o);
      if (r.outline === '' && filter === 'all') {
        r.outline = '(nothing to show: the page shows no text or elements yet)';
      }
      return noneShown(r, filter);
    }
    function noneShown(r, filter) {
      if (r.outline === '') {
        r.outline = '(nothing to show with filter ' + filter + (filter === 'all' ? ': the element is hidden)' : '; try filter all)');
      }
      return r;
    }

    // ---- capture_page. ----------------------------------------------------------------------

    function toolCapture(args) {
      checkArgs(args, 'capture_page', allowed(['maxChars']));
      var max = intArg(args, 'maxChars', 8000, 100, 100000);
      var r = dict();
      r.url = href();
      r.title = title();
      var v = dict();
      v.width = round(viewWidth());
      v.height = round(viewHeight());
      v.scrollX = 0;
      v.scrollY = 0;
      try {
        v.scrollX = round(apply(scrollXG, win, []));
        v.scrollY = round(apply(scrollYG, win, []));
      } catch (e) { /* keep 0 */ }
      var de = apply(documentElement, doc, []);
      v.pageHeight = de && scrollHeightG ? round(apply(scrollHeightG, de, [])) : 0;
      r.viewport = v;
      var t = bodyText(doc);
      // Same-origin frames' text follows, each under a line naming the frame (other sites'
      // frames are never read).
      var fl = frameList();
      var i;
      for (i = 0; i < fl.length && t.length <= max; i++) {
        var ft = bodyText(fl[i].doc);
        if (ft !== '') {
          var name = attrOf(fl[i].frame, 'title');
          t = t + '\n[frame' + (typeof name === 'string' && name !== '' ? ' "' + cut(name, 80) + '"' : '') + ']\n' + ft;
        }
      }
      r.truncated = t.length > max;
      r.text = r.truncated ? apply(strSlice, t, [0, max]) : t;
      return r;
    }

    // bodyText is the rendered text of a document's body (innerText), or ''.
    function bodyText(d) {
      var body = null;
      try {
        body = bodyOf ? apply(bodyOf, d, []) : null;
      } catch (e) { /* not an HTML document */ }
      if (!body || !innerTextG) {
        return '';
      }
      try {
        return '' + apply(innerTextG, body, []);
      } catch (e) {
        return '';
      }
    }

    // ---- query. -----------------------------------------------------------------------------

    var QUERY_ATTRS = ['id', 'class', 'name', 'type', 'role', 'href', 'src', 'alt', 'title', 'aria-label',
      'aria-expanded', 'aria-checked', 'aria-selected', 'aria-disabled', 'placeholder', 'value', 'for', 'action',
      'method', 'target', 'disabled', 'checked', 'data-testid'];

    function checkSelector(sel) {
      var l = lower(sel);
      if ((contains(l, 'value') || contains(l, '\\')) && anyPassword()) {
        refuse('selectors that mention value (or use CSS escapes) are refused while the page has a password field');
      }
    }
    function select(sel) {
      try {
        return queryDoc(sel);
      } catch (e) {
        refuse('invalid selector: ' + cut(sel, 200));
      }
      return null;
    }

    function toolQuery(args) {
      checkArgs(args, 'query', allowed(['selector', 'limit']));
      var sel = strArg(args, 'selector', true, 1024);
      var limit = intArg(args, 'limit', 20, 1, 200);
      checkSelector(sel);
      var found = select(sel);
      var out = list();
      var total = 0;
      var i;
      for (i = 0; i < found.length; i++) {
        var node = found[i];
        if (node === host) {
          continue;
        }
        total++;
        if (out.length >= limit) {
          continue;
        }
        var m = dict();
        m.ref = refFor(node);
        m.tag = localName(node);
        var secret = isPassword(node);
        m.text = secret ? '' : collapse('' + apply(getTextContent, node, []), 100);
        var attrs = dict();
        var j;
        for (j = 0; j < QUERY_ATTRS.length; j++) {
          var a = QUERY_ATTRS[j];
          if (a === 'value' && secret) {
            continue;
          }
          var v = attrOf(node, a);
          if (typeof v === 'string') {
            attrs[a] = cut(v, 200);
          }
        }
        m.attrs = attrs;
        var ln = m.tag;
        if (!secret && (ln === 'input' || ln === 'textarea' || ln === 'select')) {
          var fv = fieldValue(node, ln);
          if (fv !== null) {
            m.value = cut(fv, 200);
          }
        }
        var r = rectOf(node);
        m.rect = boxRect(r);
        m.visible = shownLive(node);
        put(out, out.length, m);
      }
      var res = dict();
      res.total = total;
      res.matches = out;
      return res;
    }

    // ---- inspect_styles. --------------------------------------------------------------------

    var DEFAULT_STYLES = ['display', 'visibility', 'position', 'color', 'background-color', 'font-size',
      'font-weight', 'width', 'height', 'margin', 'padding', 'z-index', 'opacity'];

    function toolStyles(args) {
      checkArgs(args, 'inspect_styles', allowed(['ref', 'properties']));
      var ref = strArg(args, 'ref', true, 20);
      var props = own(args, 'properties');
      var names = list();
      var i;
      if (props === undefined || props === null) {
        for (i = 0; i < DEFAULT_STYLES.length; i++) {
          put(names, i, DEFAULT_STYLES[i]);
        }
      } else {
        if (!isArray(props) || props.length === 0 || props.length > 64) {
          refuse('properties must be a list of 1 to 64 CSS property names');
        }
        for (i = 0; i < props.length; i++) {
          var p = own(props, i);
          if (typeof p === 'string' && apply(strSlice, p, [0, 2]) === '--' && p.length <= 64) {
            put(names, i, p); // a custom property
          } else {
            put(names, i, kebab(p));
          }
        }
      }
      var node = byRef(ref);
      var st = computed(node);
      if (!st) {
        refuse('this element has no computed style');
      }
      var styles = dict();
      for (i = 0; i < names.length; i++) {
        styles[names[i]] = cut(cssValue(st, names[i]), 500);
      }
      var r = dict();
      r.ref = ref;
      r.element = describe(node, false);
      r.styles = styles;
      return r;
    }

    // ---- read_page_data. --------------------------------------------------------------------

    function isNodeLike(v) {
      try {
        apply(nodeTypeG, v, []);
        return true;
      } catch (e) {
        return false;
      }
    }
    // isWindowLike: a window (of this page, a frame, or another origin) has an own "window"
    // property that is itself; a cross-origin one may throw.
    function isWindowLike(v) {
      try {
        var d = getOwnPropertyDescriptor(v, 'window');
        var g = d ? own(d, 'get') : undefined;
        return typeof g === 'function' && apply(g, v, []) === v;
      } catch (e) {
        return true;
      }
    }
    var SKIPPED = dict();

    // data turns a page value into JSON data within the walk's bounds: data properties only (no
    // getter runs), no functions, DOM nodes or windows, cycles and depth cut.
    function data(w, v, depth) {
      if (w.left <= 0) {
        w.truncated = true;
        return SKIPPED;
      }
      var t = typeof v;
      if (v === null || t === 'boolean') {
        w.left = w.left - 5;
        return v;
      }
      if (t === 'number') {
        w.left = w.left - 8;
        return v === v && v !== 1 / 0 && v !== -1 / 0 ? v : null;
      }
      if (t === 'bigint') {
        w.left = w.left - 20;
        return '' + v;
      }
      if (t === 'string') {
        var s = cut(v, 2000);
        w.left = w.left - s.length - 2;
        return s;
      }
      if (t !== 'object') {
        return SKIPPED; // undefined, functions, symbols
      }
      if (v === win || isNodeLike(v) || isWindowLike(v)) {
        return SKIPPED;
      }
      if (depth >= DATA_DEPTH) {
        w.left = w.left - 10;
        w.truncated = true;
        return '[deeper]';
      }
      var i;
      for (i = 0; i < w.stack.length; i++) {
        if (w.stack[i] === v) {
          return '[cycle]';
        }
      }
      put(w.stack, w.stack.length, v);
      var out;
      try {
        var keys;
        if (isArray(v)) {
          out = list();
          var n = v.length;
          for (i = 0; i < n && i < 100 && w.left > 0; i++) {
            var d = getOwnPropertyDescriptor(v, i);
            var x = d && apply(hasOwnProperty, d, ['value']) ? data(w, own(d, 'value'), depth + 1) : null;
            put(out, out.length, x === SKIPPED ? null : x);
          }
          if (n > out.length) {
            w.truncated = true;
          }
        } else {
          out = dict();
          keys = objectKeys(v);
          for (i = 0; i < keys.length && i < 200 && w.left > 0; i++) {
            var k = keys[i];
            var desc = getOwnPropertyDescriptor(v, k);
            if (!desc || !apply(hasOwnProperty, desc, ['value'])) {
              continue;
            }
            var val = contains(lower(k), 'password') ? '[redacted]' : data(w, own(desc, 'value'), depth + 1);
            if (val !== SKIPPED) {
              out[cut(k, 200)] = val;
              w.left = w.left - k.length - 4;
            }
          }
          if (keys.length > i) {
            w.truncated = true;
          }
        }
      } catch (e) {
        out = '[unreadable]';
      }
      w.stack.length = w.stack.length - 1;
      return out;
    }

    function toolPageData(args) {
      checkArgs(args, 'read_page_data', allowed([]));
      var w = dict();
      w.left = DATA_BUDGET;
      w.truncated = false;
      w.stack = list();
      var globals = dict();
      var names = objectKeys(win);
      var i;
      for (i = 0; i < names.length; i++) {
        var name = names[i];
        if (builtinGlobals[name] === true) {
          continue;
        }
        var d = null;
        try {
          d = getOwnPropertyDescriptor(win, name);
        } catch (e) { /* unreadable */ }
        if (!d || !apply(hasOwnProperty, d, ['value'])) {
          continue;
        }
        var v = contains(lower(name), 'password') ? '[redacted]' : data(w, own(d, 'value'), 0);
        if (v !== SKIPPED) {
          globals[cut(name, 200)] = v;
        }
        if (w.left <= 0) {
          w.truncated = true;
          break;
        }
      }
      var r = dict();
      r.globals = globals;
      r.globalsTruncated = w.truncated;
      var forms = list();
      var formEls = queryDoc('form');
      for (i = 0; i < formEls.length && i < 20; i++) {
        var f = formEls[i];
        var fd = dict();
        fd.ref = refFor(f);
        fd.name = attrOf(f, 'name');
        fd.id = attrOf(f, 'id');
        try {
          fd.action = formActionG ? '' + apply(formActionG, f, []) : attrStr(f, 'action');
          fd.method = formMethodG ? '' + apply(formMethodG, f, []) : attrStr(f, 'method');
        } catch (e) { /* not a form */ }
        fd.fields = fieldsOf(queryIn(f, 'input, select, textarea'));
        put(forms, forms.length, fd);
      }
      r.forms = forms;
      var loose = list();
      var all = queryDoc('input, select, textarea');
      for (i = 0; i < all.length; i++) {
        if (!closest(all[i], 'form')) {
          put(loose, loose.length, all[i]);
        }
      }
      r.fieldsOutsideForms = fieldsOf(loose);
      return r;
    }

    function fieldsOf(els) {
      var out = list();
      var i;
      for (i = 0; i < els.length && i < 100; i++) {
        var node = els[i];
        var ln = localName(node);
        var f = dict();
        f.ref = refFor(node);
        f.tag = ln;
        f.name = attrOf(node, 'name');
        f.type = ln === 'input' ? inputType(node) : ln;
        f.label = nameOf(node, ln, roleOf(node, ln), true);
        if (isPassword(node)) {
          f.password = true; // its value is never read out
        } else if (ln === 'input' && (f.type === 'checkbox' || f.type === 'radio')) {
          f.checked = checkedG ? apply(checkedG, node, []) === true : false;
          f.value = cut(attrStr(node, 'value'), 200);
        } else {
          var v = fieldValue(node, ln);
          f.value = v === null ? null : cut(v, f.type === 'hidden' ? 200 : 1000);
        }
        put(out, out.length, f);
      }
      return out;
    }

    // ---- click. -----------------------------------------------------------------------------

    var CLICKABLE = 'a[href], area[href], button, input[type=button], input[type=submit], input[type=reset], ' +
      'input[type=image], input[type=checkbox], input[type=radio], summary, [role=button], [role=link], ' +
      '[role=menuitem], [role=menuitemcheckbox], [role=menuitemradio], [role=tab], [role=option], [role=checkbox], ' +
      '[role=radio], [role=switch], [role=treeitem]';

    // topModal is the open modal dialog a text click is scoped to: the last one in document
    // order (portals append theirs at the end), or null.
    function topModal() {
      var found = queryDoc('dialog[open], [aria-modal=true]');
      var i;
      for (i = found.length - 1; i >= 0; i--) {
        var node = found[i];
        var modal = localName(node) !== 'dialog' || matches(node, ':modal') || attrOf(node, 'aria-modal') === 'true';
        if (modal && node !== host && shownLive(node)) {
          return node;
        }
      }
      return null;
    }
    function normal(s) {
      return lower(collapse(s, 400));
    }
    function containerOf(node) {
      var c = closest(node, 'dialog, [role=dialog], [role=alertdialog], form');
      return c ? ' (in ' + describe(c, false) + ')' : '';
    }
    function candidates(nodes) {
      var s = '';
      var i;
      for (i = 0; i < nodes.length && i < 10; i++) {
        var r = rectOf(nodes[i]);
        s = s + (i ? '; ' : '') + refFor(nodes[i]) + ' ' + describe(nodes[i], false) + ' at (' + round(r.x) + ',' + round(r.y) + ')' + containerOf(nodes[i]);
      }
      return s + (nodes.length > 10 ? '; and ' + (nodes.length - 10) + ' more' : '');
    }
    function byText(text) {
      var want = normal(text);
      if (want === '') {
        refuse('text must not be blank');
      }
      var scope = topModal();
      var found = scope ? queryIn(scope, CLICKABLE) : queryDoc(CLICKABLE);
      var exact = list();
      var partial = list();
      var i;
      for (i = 0; i < found.length; i++) {
        var node = found[i];
        if (node === host || !shownLive(node)) {
          continue;
        }
        var ln = localName(node);
        var name = normal(nameOf(node, ln, roleOf(node, ln) || 'button', true));
        if (name === want) {
          put(exact, exact.length, node);
        } else if (contains(name, want)) {
          put(partial, partial.length, node);
        }
      }
      var where = scope ? ' in the open dialog ' + describe(scope, true) : '';
      if (exact.length === 1) {
        return exact[0];
      }
      if (exact.length > 1) {
        refuse(exact.length + ' elements' + where + ' are named "' + cut(text, 60) + '"; click one by ref: ' + candidates(exact));
      }
      if (partial.length === 1) {
        return partial[0];
      }
      if (partial.length > 1) {
        refuse(partial.length + ' elements' + where + ' have "' + cut(text, 60) + '" in their name; click one by ref: ' + candidates(partial));
      }
      refuse('no visible clickable element' + where + ' is named "' + cut(text, 60) + '"' +
        (scope ? ' (a text click is limited to the open dialog; close it first or click by ref)' : ''));
      return null;
    }
    function bySelector(sel) {
      checkSelector(sel);
      var found = select(sel);
      var nodes = list();
      var i;
      for (i = 0; i < found.length; i++) {
        if (found[i] !== host) {
          put(nodes, nodes.length, found[i]);
        }
      }
      if (nodes.length === 0) {
        refuse('no element matches ' + cut(sel, 200));
      }
      if (nodes.length > 1) {
        refuse(nodes.length + ' elements match ' + cut(sel, 200) + '; click one by ref: ' + candidates(nodes));
      }
      return nodes[0];
    }

    // checkActivation refuses a click whose effect would leave the page's origin: a link to
    // another origin (or another window, or with ping or download), a submit button of a form
    // that posts elsewhere, formaction and formtarget. It returns what the click leads to.
    function checkActivation(node, origin) {
      var out = dict();
      var a = closest(node, 'a[href], area[href]');
      if (a) {
        var g = localName(a) === 'a' ? anchorHrefG : areaHrefG;
        var u = parseURL(g ? '' + apply(g, a, []) : attrStr(a, 'href'), href());
        if (!u) {
          refuse('the link has no valid address');
        }
        var p = urlPart(u, urlProtocolG);
        if (p !== 'http:' && p !== 'https:') {
          refuse('the link goes to a ' + p + ' address; only links within this site can be clicked');
        }
        if (urlPart(u, urlOriginG) !== origin) {
          refuse('the link goes to ' + urlPart(u, urlOriginG) + ', another site than this page (' + origin + '); clicking it is refused');
        }
        var tg = attrOf(a, 'target');
        if (typeof tg === 'string' && tg !== '' && lower(tg) !== '_self') {
          refuse('the link opens another window or frame (target=' + cut(tg, 40) + '); clicking it is refused');
        }
        if (hasAttr(a, 'ping')) {
          refuse('the link pings other addresses when clicked; clicking it is refused');
        }
        if (hasAttr(a, 'download')) {
          refuse('the link downloads a file; clicking it is refused');
        }
        if (carriesSecret(urlPart(u, urlHrefG))) {
          refuse('the link\'s address carries a password or cookie value of this page; clicking it is refused');
        }
        out.link = shortDest(u, origin);
        out.href = urlPart(u, urlHrefG);
        out.leaves = noHash(urlPart(u, urlHrefG)) !== noHash(href());
      }
      var b = closest(node, 'button, input');
      if (b) {
        var ln = localName(b);
        var type = ln === 'button' ? (buttonTypeG ? '' + apply(buttonTypeG, b, []) : 'submit') : inputType(b);
        if (ln === 'input' && type === 'file') {
          refuse('file inputs cannot be clicked by the agent');
        }
        var submit = type === 'submit' || (ln === 'input' && type === 'image');
        if (submit) {
          if (hasAttr(b, 'formaction')) {
            refuse('the button submits to its own address (formaction); clicking it is refused');
          }
          var ft = attrOf(b, 'formtarget');
          if (typeof ft === 'string' && ft !== '' && lower(ft) !== '_self') {
            refuse('the button submits into another window or frame (formtarget); clicking it is refused');
          }
          var fg = formOf[ln];
          var form = fg ? apply(fg, b, []) : null;
          if (form) {
            var dest = formSubmits(form, origin, 'clicking its submit button');
            if (dest !== '') {
              out.submits = dest;
              out.form = form;
              out.submitter = b;
            }
          }
        }
      }
      return out;
    }
    function noHash(u) {
      var at = apply(strIndexOf, u, ['#']);
      return at < 0 ? u : apply(strSlice, u, [0, at]);
    }

    // hitOK reports whether what is at the centre is the target or inside it (for a target in
    // a shadow tree, the hit is its host or an ancestor host).
    function hitOK(target, hit) {
      if (!hit) {
        return false;
      }
      if (hit === target || within(target, hit)) {
        return true;
      }
      var root = null;
      try {
        root = apply(getRootNode, target, []);
      } catch (e) { /* detached */ }
      while (root && nodeType(root) === 11 && rootHostG) {
        var h = apply(rootHostG, root, []);
        if (h === hit) {
          return true;
        }
        root = h ? apply(getRootNode, h, []) : null;
      }
      return false;
    }

    // recentClick refuses a click on a control the proxy says was just clicked on this page:
    // recent is the proxy's list of {name, seconds} of submit-like clicks in the last 45
    // seconds (proxy/chat_act.go keeps it, so the page cannot reset it), left out when the
    // model passed resubmit.
    function recentClick(recent, name, what) {
      if (recent === undefined || recent === null || !isArray(recent) || name === '') {
        return;
      }
      var i;
      for (i = 0; i < recent.length && i < 50; i++) {
        var r = recent[i];
        var rn = r !== null && typeof r === 'object' ? own(r, 'name') : undefined;
        if (typeof rn === 'string' && normal(rn) === name) {
          var secs = own(r, 'seconds');
          refuse('not clicked: ' + what + ' was already clicked on this page ' +
            (typeof secs === 'number' ? round(secs) + ' seconds ago' : 'moments ago') +
            '. Clicking it again may submit twice (two orders, two posts). Check the page first (outline, find, page_state); ' +
            'if the first click did not take effect and you are sure, call click again with resubmit: true');
        }
      }
    }

    // defaultButton is form's default button: the one an implicit submission activates.
    function defaultButton(form) {
      var bs = queryIn(form, 'button, input[type=submit], input[type=image]');
      var i;
      for (i = 0; i < bs.length; i++) {
        var b = bs[i];
        var t = lower(attrStr(b, 'type'));
        if (localName(b) === 'button' ? t === '' || t === 'submit' : true) {
          return b;
        }
      }
      return null;
    }
    // submitName is the name under which submitting form is guarded like a click: its default
    // button's name, or "submit" when it has none.
    function submitName(form) {
      var b = defaultButton(form);
      var n = b ? normal(nameOf(b, localName(b), 'button', true)) : '';
      return n === '' ? 'submit' : n;
    }

    // activationFacts describes what an action would activate, for the proxy's decision on
    // whether the person must allow it first (proxy/chat_submit.go decides; nothing here does):
    // the control (the link or button node is in, else node), its names, the form it submits
    // with its method and target, the button's formmethod, a link's address. how is click,
    // submit (set_field) or enter (press_keys). key is the facts' fingerprint: the proxy sends
    // it back as expect, and the action is refused when what it would activate changed.
    function activationFacts(how, node, form, submitter, linkHref) {
      var ctl = closest(node, CONTROL_SEL) || node;
      var f = dict();
      var ln = localName(ctl);
      f.how = how;
      f.tag = ln;
      f.role = roleOf(ctl, ln) || '';
      var shown = nameOf(ctl, ln, f.role || 'button', true);
      f.name = cut(normal(shown), 200);
      f.shown = collapse(shown, 200);
      var labels = list();
      var n = 0;
      var add = function (v) {
        if (typeof v === 'string' && v !== '' && n < 12) {
          put(labels, n, collapse(v, 200));
          n++;
        }
      };
      if (ctl !== node) {
        add(nameOf(node, localName(node), roleOf(node, localName(node)) || 'button', true));
      }
      try {
        add(innerTextG ? '' + apply(innerTextG, ctl, []) : '');
      } catch (e) { /* not an HTML element */ }
      var attrs = ['value', 'title', 'aria-label', 'name', 'id'];
      var i;
      for (i = 0; i < attrs.length; i++) {
        add(attrOf(ctl, attrs[i]));
        if (form) {
          add(i > 1 ? attrOf(form, attrs[i]) : null);
        }
      }
      f.labels = labels;
      f.control = describe(ctl, true);
      f.submits = false;
      f.method = '';
      f.submitterMethod = '';
      f.action = '';
      f.link = typeof linkHref === 'string' ? linkHref : '';
      if (form) {
        var fm = lower(formMethodG ? '' + apply(formMethodG, form, []) : attrStr(form, 'method'));
        f.method = fm === 'post' || fm === 'dialog' ? fm : 'get';
        f.submits = fm !== 'dialog';
        var act = parseURL(formActionG ? '' + apply(formActionG, form, []) : href(), href());
        f.action = act ? urlPart(act, urlHrefG) : '';
      }
      var sm = submitter ? attrOf(submitter, 'formmethod') : null;
      if (typeof sm === 'string') {
        sm = lower(sm);
        f.submitterMethod = sm === 'post' || sm === 'dialog' ? sm : 'get';
      }
      f.key = how + '|' + f.tag + '|' + f.role + '|' + f.name + '|' + f.submits + '|' + f.method + '|' +
        f.submitterMethod + '|' + f.action + '|' + f.link;
      return f;
    }
    var CONTROL_SEL = 'a[href], area[href], button, input, [role=button], [role=link], [role=menuitem], ' +
      '[role=menuitemcheckbox], [role=menuitemradio], [role=option], [role=tab], [role=switch]';
    // checked reports whether the proxy asks for the facts of this action (probe) or checks
    // them (expect); only then are they gathered.
    function checked(args) {
      return own(args, 'probe') === true || typeof own(args, 'expect') === 'string';
    }
    // probed answers a probe (the proxy's, before an action it may ask the person about):
    // the facts, or null when the action activates nothing that needs them.
    function probed(facts) {
      var r = dict();
      r.probe = facts;
      return r;
    }
    // expected refuses an action whose facts are not those the proxy checked (expect, its own
    // argument; absent when the person let this chat submit without asking).
    function expected(args, facts, what) {
      var want = own(args, 'expect');
      if (typeof want !== 'string') {
        return;
      }
      var got = facts ? facts.key : '';
      if (got !== want) {
        refuse('not done: ' + what + ' is not what the proxy checked' +
          (want === '' ? ' (it would submit a form, which needs its own check)' : ' (the page changed it since)') +
          '; look at the page again and call the tool again' + (want === '' ? ', with Enter in a call of its own' : ''));
      }
    }
    // enterFacts are the facts of Enter in node, a field of form (activationFacts).
    function enterFacts(node, form) {
      var db = defaultButton(form);
      return activationFacts('enter', db || node, form, db, undefined);
    }
    // enterSubmits is, for a press of Enter on node, the form a page's key handler (or the
    // browser, for a real key) would submit: node's form when node is a field of it.
    function enterSubmits(node) {
      if (!node || nodeType(node) !== 1) {
        return null;
      }
      var ln = localName(node);
      if (ln !== 'input' && ln !== 'select') {
        return null;
      }
      var fg = formOf[ln];
      var form = fg ? apply(fg, node, []) : null;
      return form && connected(form) ? form : null;
    }

    function toolClick(args) {
      checkArgs(args, 'click', allowed(['ref', 'selector', 'text', 'resubmit', 'recent', 'probe', 'expect']));
      var ref = strArg(args, 'ref', false, 20);
      var sel = strArg(args, 'selector', false, 1024);
      var txt = strArg(args, 'text', false, 400);
      if ((ref !== null) + (sel !== null) + (txt !== null) !== 1) {
        refuse('give exactly one of ref, selector or text');
      }
      var node = ref !== null ? byRef(ref) : sel !== null ? bySelector(sel) : byText(txt);
      if (!connected(node)) {
        refuse('the element is no longer on the page');
      }
      if (!clickFn || !elementFromPoint) {
        refuse('this browser cannot click for the agent');
      }
      var what = describe(node, true);
      if (hiddenAttr(node) || !shownLive(node)) {
        refuse(what + ' is not visible');
      }
      if (matches(node, ':disabled') || attrOf(node, 'aria-disabled') === 'true') {
        refuse(what + ' is disabled');
      }
      var cname = normal(nameOf(node, localName(node), roleOf(node, localName(node)) || 'button', true));
      recentClick(own(args, 'recent'), cname, what);
      var origin = pageOrigin();
      var leads = checkActivation(node, origin);
      var vw = viewWidth();
      var vh = viewHeight();
      var r = rectOf(node);
      var cx = r.x + r.width / 2;
      var cy = r.y + r.height / 2;
      if (!pointIn(r, cx, cy, vw, vh)) {
        var o = dict();
        o.block = 'center';
        o.inline = 'center';
        try {
          apply(scrollIntoView, node, [o]);
        } catch (e) { /* keep where it is */ }
        framesMoved();
        r = rectOf(node);
        cx = r.x + r.width / 2;
        cy = r.y + r.height / 2;
      }
      if (!pointIn(r, cx, cy, vw, vh)) {
        refuse(what + ' cannot be scrolled into view');
      }
      var hit = hitAt(node, cx, cy);
      if (!hitOK(node, hit)) {
        if (!hit) {
          refuse('nothing is at the centre of ' + what);
        }
        refuse('another element is on top of ' + what + ' at its centre: ' +
          (hit === host ? 'the remixproxy launcher' : describe(hit, true)) + '; close or scroll it away first');
      }
      if (checked(args)) {
        var facts = activationFacts('click', node, leads.form || null, leads.submitter || null, leads.href);
        if (own(args, 'probe') === true) {
          return probed(facts);
        }
        expected(args, facts, what);
      }
      var before = href();
      apply(clickFn, node, []);
      var res = dict();
      res.clicked = what;
      res.name = cut(cname, 200);
      var ln = localName(node);
      if (ln === 'input' && checkedG && (inputType(node) === 'checkbox' || inputType(node) === 'radio')) {
        res.checked = apply(checkedG, node, []) === true;
      }
      if (leads.link !== undefined) {
        res.link = leads.link;
        res.href = leads.href;
      }
      if (leads.submits !== undefined) {
        res.submits = leads.submits;
      }
      res.navigated = href() !== before;
      res.url = href();
      // A link to another document, or a form submission, loads a new page after this answer:
      // the page agent then disconnects and the chat's tab is on the new page. In a frame, only
      // the frame loads (other targets are refused): its refs go, the page stays.
      var framed = ownerDoc(node) !== doc;
      res.mayLeave = !framed && (leads.leaves === true || leads.submits !== undefined);
      if (framed && (leads.leaves === true || leads.submits !== undefined)) {
        res.frameMayLoad = true;
      }
      return res;
    }

    // ---- Page actions (Act mode, issue 6). --------------------------------------------------
    //
    // type, set_field, select, press_keys, scroll, hover, navigate, back, forward, wait_for,
    // wait_for_stable; find (a text search over the outline) and page_state (open dialogs and
    // forms with unsaved input, for the proxy's check of done). The events they dispatch are
    // synthetic (isTrusted false): they reach the page's handlers, and the browser's default
    // actions that only trusted events have (moving focus on Tab, submitting on Enter,
    // scrolling on PageDown, editing on Backspace) are done here by hand where it is safe.
    // Typed text and option names are data: they become values and event fields, never code,
    // HTML or selectors. Password fields are never typed into. navigate and back/forward stay
    // on the page's origin (navigate's address is also checked by the proxy first).

    var EventCtor = win.Event;
    var InputEventCtor = win.InputEvent;
    var KeyboardEventCtor = win.KeyboardEvent;
    var MouseEventCtor = win.MouseEvent;
    var PointerEventCtor = win.PointerEvent;
    var dispatchEventFn = EventTarget.prototype.dispatchEvent;
    var defaultPreventedG = getter(Event.prototype, 'defaultPrevented');
    var activeElementDoc = getter(Document.prototype, 'activeElement');
    var activeElementRoot = getter(proto(win.ShadowRoot), 'activeElement');
    var textareaSetValue = setter(textareaProto, 'value');
    var selectFn = dict();
    selectFn.input = inputProto && inputProto.select;
    selectFn.textarea = textareaProto && textareaProto.select;
    var setRangeFn = dict();
    setRangeFn.input = inputProto && inputProto.setSelectionRange;
    setRangeFn.textarea = textareaProto && textareaProto.setSelectionRange;
    var selStartG = dict();
    selStartG.input = getter(inputProto, 'selectionStart');
    selStartG.textarea = getter(textareaProto, 'selectionStart');
    var selEndG = dict();
    selEndG.input = getter(inputProto, 'selectionEnd');
    selEndG.textarea = getter(textareaProto, 'selectionEnd');
    var selectedIndexS = setter(selectProto, 'selectedIndex');
    var optionProto = proto(win.HTMLOptionElement);
    var optionValueG = getter(optionProto, 'value');
    var optionSelectedG = getter(optionProto, 'selected');
    var optionDefaultSelectedG = getter(optionProto, 'defaultSelected');
    var inputDefaultValueG = getter(inputProto, 'defaultValue');
    var textareaDefaultValueG = getter(textareaProto, 'defaultValue');
    var defaultCheckedG = getter(inputProto, 'defaultChecked');
    var isContentEditableG = getter(proto(win.HTMLElement), 'isContentEditable');
    var execCommandFn = Document.prototype.execCommand;
    var requestSubmitFn = formProto && formProto.requestSubmit;
    var winScrollBy = win.scrollBy;
    var winScrollTo = win.scrollTo;
    var elScrollBy = Element.prototype.scrollBy;
    var scrollTopG = getter(Element.prototype, 'scrollTop');
    var scrollLeftG = getter(Element.prototype, 'scrollLeft');
    var clientHeightG = getter(Element.prototype, 'clientHeight');
    var clientWidthG = getter(Element.prototype, 'clientWidth');
    var scrollWidthG = getter(Element.prototype, 'scrollWidth');
    var locationAssign = loc.assign;
    var histProto = proto(win.History);
    var historyBack = histProto && histProto.back;
    var historyForward = histProto && histProto.forward;
    var navProto = proto(win.Navigation);
    var navEntries = navProto && navProto.entries;
    var navCurrentEntryG = getter(navProto, 'currentEntry');
    var entryProto = proto(win.NavigationHistoryEntry);
    var entryIndexG = getter(entryProto, 'index');
    var entryUrlG = getter(entryProto, 'url');
    var dateNow = Date.now;

    var MAX_TYPE = 10000;       // characters typed by one call
    var MAX_KEYS = 20;          // keys pressed by one call
    var MAX_WAIT = 10000;       // ms a wait may last
    var POLL_MS = 100;

    function now() {
      return num(apply(dateNow, null, []));
    }
    // runLater runs step after ms; a refusal or failure in it answers the call.
    function runLater(tool, done, ms, step) {
      later(function () {
        try {
          step();
        } catch (e) {
          done(false, e !== null && typeof e === 'object' && own(e, 'mark') === REFUSAL ? e.why : tool + ' failed in the page');
        }
      }, ms);
    }
    function boolArg(args, name, def) {
      var v = own(args, name);
      if (v === undefined || v === null) {
        return def;
      }
      if (typeof v !== 'boolean') {
        refuse(name + ' must be true or false');
      }
      return v;
    }
    // textArg is a string that may be empty (typing nothing clears a field).
    function textArg(args, name, max) {
      var v = own(args, name);
      if (typeof v !== 'string' || v.length > max) {
        refuse(name + ' must be a string of at most ' + max + ' characters');
      }
      return v;
    }
    function ours(node) {
      return host !== null && (node === host || within(host, node));
    }
    // target resolves the ref of an action and checks it is there to act on.
    function target(args) {
      var node = byRef(strArg(args, 'ref', true, 20));
      if (ours(node)) {
        refuse('that element is remixproxy\'s own launcher');
      }
      if (!connected(node)) {
        refuse('the element is no longer on the page');
      }
      var what = describe(node, true);
      if (hiddenAttr(node) || !shownLive(node)) {
        refuse(what + ' is not visible');
      }
      return node;
    }
    function makeInit(bubbles) {
      var init = dict();
      init.bubbles = bubbles;
      init.cancelable = true;
      init.composed = true;
      return init;
    }
    // fire dispatches an event and reports whether the page let its default happen.
    function fire(node, ev) {
      apply(dispatchEventFn, node, [ev]);
      return !(defaultPreventedG && apply(defaultPreventedG, ev, []) === true);
    }
    function fireEvent(node, type) {
      return fire(node, new EventCtor(type, makeInit(true)));
    }
    function fireInput(node, inputType, data) {
      var init = makeInit(true);
      init.cancelable = false;
      if (typeof InputEventCtor === 'function') {
        init.inputType = inputType;
        init.data = data;
        return fire(node, new InputEventCtor('input', init));
      }
      return fire(node, new EventCtor('input', init));
    }
    // activeDeep is the focused element, through open shadow roots.
    function activeDeep() {
      var a = activeElementDoc ? apply(activeElementDoc, doc, []) : null;
      var k = 0;
      while (a && k < 20) {
        var sr = shadowRootG ? apply(shadowRootG, a, []) : null;
        var inner = sr && activeElementRoot ? apply(activeElementRoot, sr, []) : null;
        if (!inner && localName(a) === 'iframe') {
          var fd = frameDoc(a);
          inner = fd ? apply(activeElementDoc, fd, []) : null; // focus inside a same-origin frame
        }
        if (!inner) {
          break;
        }
        a = inner;
        k++;
      }
      return a;
    }
    function focusOn(node) {
      if (focus) {
        try {
          apply(focus, node, []);
        } catch (e) { /* not focusable: the events still go to it */ }
      }
    }

    // ---- type and set_field. ----

    var NOT_TYPED = allowed(['checkbox', 'radio', 'submit', 'button', 'reset', 'image', 'file', 'hidden', 'range', 'color']);

    // typeable returns 'input', 'textarea' or 'editable' for an element text can be typed into,
    // or refuses saying why not.
    function typeable(node) {
      var ln = localName(node);
      var what = describe(node, true);
      if (isPassword(node)) {
        refuse(what + ' is a password field; the agent never types passwords: ask the person to type it');
      }
      if (ln === 'input') {
        var t = inputType(node);
        if (NOT_TYPED[t] === true) {
          refuse(what + ' is a ' + t + ' input: text cannot be typed into it' +
            (t === 'checkbox' || t === 'radio' || t === 'submit' || t === 'button' ? '; use click' : ''));
        }
      } else if (ln === 'select') {
        refuse(what + ' is a drop-down list; use select');
      } else if (ln !== 'textarea') {
        var ce = isContentEditableG ? apply(isContentEditableG, node, []) === true : false;
        if (!ce) {
          refuse(what + ' is not a text field (an input, a text area or an editable element)');
        }
        return 'editable';
      }
      if (matches(node, ':disabled')) {
        refuse(what + ' is disabled');
      }
      if (hasAttr(node, 'readonly')) {
        refuse(what + ' is read-only');
      }
      return ln;
    }
    function currentValue(node, kind) {
      if (kind === 'input') {
        return '' + apply(inputValue, node, []);
      }
      if (kind === 'textarea') {
        return '' + apply(textareaValue, node, []);
      }
      return innerTextG ? '' + apply(innerTextG, node, []) : '';
    }
    // setValue writes a field's value through the prototype's own setter, not the element's
    // (which a framework such as React wraps to track its state), then tells the page with
    // input and change events, as typing would.
    function setValue(node, kind, value, inputType, data) {
      if (kind === 'editable') {
        if (!execCommandFn) {
          refuse('this browser cannot type into an editable element for the agent');
        }
        focusOn(node);
        var ed = ownerDoc(node) || doc; // a frame's editable element edits in the frame's document
        if (inputType === 'replace') {
          apply(execCommandFn, ed, ['selectAll', false, null]);
          if (value === '') {
            apply(execCommandFn, ed, ['delete', false, null]);
          }
        }
        if (data !== '') {
          apply(execCommandFn, ed, ['insertText', false, data]);
        }
        return;
      }
      var set = kind === 'input' ? inputSetValue : textareaSetValue;
      if (!set) {
        refuse('this browser cannot type for the agent');
      }
      apply(set, node, [value]);
      fireInput(node, inputType === 'replace' ? 'insertReplacementText' : inputType, data);
    }
    // editNatively types text into a text field the way the browser's own editing does
    // (execCommand insertText on the field's selection), so the page sees trusted beforeinput
    // and input events, as from a person's keyboard. It does so only when the field is focused
    // and its selection is exactly where the text belongs (all of it to replace, the end to
    // append) — never into another element — and reports whether the field changed; where the
    // browser would not edit (a field type without a selection, an unfocused document, a page
    // that cancels beforeinput) nothing changed and the caller sets the value itself.
    function editNatively(node, kind, text, clear, before) {
      if (!execCommandFn || !selectFn[kind] || !setRangeFn[kind] || !selStartG[kind] || !selEndG[kind] || text === '') {
        return false;
      }
      var ed = ownerDoc(node) || doc;
      try {
        if (activeDeep() !== node || apply(selStartG[kind], node, []) === null) {
          return false; // not focused, or a field type without a text selection (email, number)
        }
        var n = before.length;
        if (clear) {
          apply(selectFn[kind], node, []);
        } else {
          apply(setRangeFn[kind], node, [n, n]);
        }
        if (apply(selStartG[kind], node, []) !== (clear ? 0 : n) || apply(selEndG[kind], node, []) !== n) {
          return false;
        }
        apply(execCommandFn, ed, ['insertText', false, text]);
      } catch (e) {
        return false;
      }
      return currentValue(node, kind) !== before;
    }
    function typeInto(node, text, clear) {
      var kind = typeable(node);
      focusOn(node);
      var before = currentValue(node, kind);
      var value = clear ? text : before + text;
      if (kind !== 'editable') {
        var max = num(+attrStr(node, 'maxlength'));
        if (hasAttr(node, 'maxlength') && max >= 0 && value.length > max) {
          value = apply(strSlice, value, [0, max]);
        }
      }
      var trusted = kind !== 'editable' && editNatively(node, kind, text, clear, before);
      if (!trusted) {
        setValue(node, kind, value, clear ? 'replace' : 'insertText', text);
      }
      if (kind !== 'editable') {
        fireEvent(node, 'change');
      }
      var res = dict();
      res.typed = describe(node, true);
      if (trusted) {
        res.events = 'the browser\'s own editing (trusted input events)';
      }
      var now2 = currentValue(node, kind);
      res.value = cut(now2, 400);
      res.verified = kind === 'editable' ? contains(now2, text) : now2 === value;
      if (!res.verified) {
        res.note = 'the field shows something else than what was typed: the page changed or limited it';
      }
      return res;
    }
    function toolType(args) {
      checkArgs(args, 'type', allowed(['ref', 'text', 'clear']));
      var text = textArg(args, 'text', MAX_TYPE);
      var clear = boolArg(args, 'clear', true);
      return typeInto(target(args), text, clear);
    }

    // comboLike reports whether a field picks from a list as one types: a combobox or search
    // box, a field controlling a listbox, or one with a datalist.
    function comboLike(node) {
      var r = roleOf(node, localName(node));
      if (r === 'combobox' || r === 'searchbox') {
        return true;
      }
      if (hasAttr(node, 'aria-autocomplete') || hasAttr(node, 'aria-controls') || hasAttr(node, 'aria-owns') ||
          attrOf(node, 'aria-haspopup') === 'listbox' || hasAttr(node, 'list')) {
        return true;
      }
      return closest(node, '[role=combobox]') !== null;
    }
    function keyInit(name) {
      var k = KEYS[name];
      var init = makeInit(true);
      init.key = k.key;
      init.code = k.code;
      init.shiftKey = k.shift === true;
      return init;
    }
    // key dispatches keydown (and keypress for Enter) and keyup of one key to node; it reports
    // whether the page let the keydown's default happen.
    function key(node, name) {
      if (typeof KeyboardEventCtor !== 'function') {
        refuse('this browser cannot press keys for the agent');
      }
      var k = KEYS[name];
      var down = new KeyboardEventCtor('keydown', keyInit(name));
      legacyCodes(down, k.code === 'Enter' ? 13 : k.keyCode);
      var ok = fire(node, down);
      if (ok && k.key === 'Enter') {
        var press = new KeyboardEventCtor('keypress', keyInit(name));
        legacyCodes(press, 13);
        ok = fire(node, press) && ok;
      }
      var up = new KeyboardEventCtor('keyup', keyInit(name));
      legacyCodes(up, k.keyCode);
      fire(node, up);
      return ok;
    }
    // legacyCodes gives an event the keyCode and which that older scripts read.
    function legacyCodes(ev, code) {
      var d = dict();
      d.value = code;
      d.configurable = true;
      try {
        defineProperty(ev, 'keyCode', d);
        defineProperty(ev, 'which', d);
      } catch (e) { /* keep the defaults */ }
    }
    // formSubmits checks that submitting form (by a click on its submit button, or by set_field)
    // stays on the page's origin and in this window, refusing with doing as the action's words;
    // it returns where it goes ('' for a dialog form).
    function formSubmits(form, origin, doing) {
      var fm = formMethodG ? '' + apply(formMethodG, form, []) : '';
      if (fm === 'dialog') {
        return '';
      }
      var act = parseURL(formActionG ? '' + apply(formActionG, form, []) : href(), href());
      if (!act || urlPart(act, urlOriginG) !== origin) {
        refuse('the form submits to ' + (act ? urlPart(act, urlOriginG) : 'an invalid address') +
          ', another site than this page (' + origin + '); ' + doing + ' is refused');
      }
      var tg = attrOf(form, 'target');
      if (typeof tg === 'string' && tg !== '' && lower(tg) !== '_self') {
        refuse('the form submits into another window or frame (target); ' + doing + ' is refused');
      }
      return shortDest(act, origin);
    }
    function toolSetField(args, done) {
      checkArgs(args, 'set_field', allowed(['ref', 'text', 'submit', 'recent', 'probe', 'expect']));
      var text = textArg(args, 'text', MAX_TYPE);
      var submit = boolArg(args, 'submit', false);
      var node = target(args);
      typeable(node); // a password field is refused before anything else
      var ln = localName(node);
      var fg = formOf[ln];
      var form = fg ? apply(fg, node, []) : null;
      var origin = pageOrigin();
      var combo = comboLike(node);
      var dest = null;
      var sname = '';
      if (submit && !combo && form) {
        dest = formSubmits(form, origin, 'submitting it'); // refused before anything is typed
        sname = submitName(form);
        recentClick(own(args, 'recent'), sname, 'the form\'s submission (' + sname + ')');
      }
      if (submit && checked(args)) {
        var db = form && !combo ? defaultButton(form) : null;
        var facts = form && !combo ? activationFacts('submit', db || node, form, db, undefined) : null;
        if (own(args, 'probe') === true) {
          return probed(facts);
        }
        expected(args, facts, 'submitting the form of ' + describe(node, true));
      }
      var res = typeInto(node, text, true);
      if (!submit) {
        return res;
      }
      var before = href();
      if (combo) {
        // Virtualized pickers need the first option highlighted before Enter commits it.
        res.combobox = true;
        runLater('set_field', done, 150, function () {
          key(node, 'ArrowDown');
          runLater('set_field', done, 100, function () {
            key(node, 'Enter');
            runLater('set_field', done, 100, function () {
              res.submitted = 'ArrowDown, Enter';
              res.value = cut(currentValue(node, typeable(node)), 400);
              res.navigated = href() !== before;
              res.url = href();
              done(true, res);
            });
          });
        });
        return PENDING;
      }
      if (sname !== '') {
        res.name = sname; // the proxy's duplicate-submit guard records it like a click
      }
      var go = key(node, 'Enter');
      if (go && form && dest !== null && requestSubmitFn) {
        if (connected(form)) {
          apply(requestSubmitFn, form, []);
          res.submitted = 'form';
          if (dest !== '') {
            res.submits = dest;
            res.mayLeave = true;
          }
        }
      } else {
        res.submitted = go ? 'Enter' : 'Enter (the page handled it)';
      }
      res.navigated = href() !== before;
      res.url = href();
      return res;
    }

    // ---- select. ----

    function toolSelect(args) {
      checkArgs(args, 'select', allowed(['ref', 'option']));
      var want = strArg(args, 'option', true, 400);
      var node = target(args);
      var what = describe(node, true);
      if (localName(node) !== 'select') {
        refuse(what + ' is not a drop-down list (<select>); for a custom list, click it open and click the option');
      }
      if (matches(node, ':disabled')) {
        refuse(what + ' is disabled');
      }
      var opts = queryIn(node, 'option');
      var w = normal(want);
      var exact = -1;
      var byValue = -1;
      var partial = list();
      var names = '';
      var i;
      for (i = 0; i < opts.length; i++) {
        var full = collapse('' + apply(optionTextG, opts[i], []), 400);
        var t = lower(full);
        var v = optionValueG ? '' + apply(optionValueG, opts[i], []) : '';
        if (i < 30) {
          names = names + (i ? ', ' : '') + quote(cut(full, 40));
        }
        if (t === w && exact < 0) {
          exact = i;
        } else if (v === want && byValue < 0) {
          byValue = i;
        } else if (contains(t, w)) {
          put(partial, partial.length, i);
        }
      }
      var pick = exact >= 0 ? exact : byValue >= 0 ? byValue : partial.length === 1 ? partial[0] : -1;
      if (pick < 0) {
        refuse((partial.length > 1 ? partial.length + ' options of ' + what + ' contain "' + cut(want, 60) + '"; name one exactly'
          : what + ' has no option "' + cut(want, 60) + '"') + '. Its options: ' + names + (opts.length > 30 ? ', ' + ELLIPSIS : ''));
      }
      if (matches(opts[pick], ':disabled')) {
        refuse('the option "' + cut(want, 60) + '" of ' + what + ' is disabled');
      }
      if (!selectedIndexS) {
        refuse('this browser cannot select for the agent');
      }
      focusOn(node);
      apply(selectedIndexS, node, [pick]);
      fireEvent(node, 'input');
      fireEvent(node, 'change');
      var res = dict();
      res.selected = collapse('' + apply(optionTextG, opts[pick], []), 100);
      res.value = optionValueG ? cut('' + apply(optionValueG, opts[pick], []), 200) : '';
      res.element = what;
      return res;
    }

    // ---- press_keys. ----

    var KEYS = dict();
    function defKey(name, k, code, keyCode, shift) {
      var d = dict();
      d.key = k;
      d.code = code;
      d.keyCode = keyCode;
      d.shift = shift;
      KEYS[name] = d;
    }
    defKey('Enter', 'Enter', 'Enter', 13, false);
    defKey('Escape', 'Escape', 'Escape', 27, false);
    defKey('Tab', 'Tab', 'Tab', 9, false);
    defKey('Shift+Tab', 'Tab', 'Tab', 9, true);
    defKey('ArrowUp', 'ArrowUp', 'ArrowUp', 38, false);
    defKey('ArrowDown', 'ArrowDown', 'ArrowDown', 40, false);
    defKey('ArrowLeft', 'ArrowLeft', 'ArrowLeft', 37, false);
    defKey('ArrowRight', 'ArrowRight', 'ArrowRight', 39, false);
    defKey('PageUp', 'PageUp', 'PageUp', 33, false);
    defKey('PageDown', 'PageDown', 'PageDown', 34, false);
    defKey('Home', 'Home', 'Home', 36, false);
    defKey('End', 'End', 'End', 35, false);
    defKey('Backspace', 'Backspace', 'Backspace', 8, false);

    var FOCUSABLE = 'a[href], area[href], button, input, select, textarea, summary, iframe, [tabindex], [contenteditable=""], [contenteditable=true]';

    // moveFocus does what Tab does: focus the next (or previous) focusable element.
    function focusable(n) {
      var ti = attrOf(n, 'tabindex');
      return !ours(n) && !(typeof ti === 'string' && num(+ti) < 0) && !matches(n, ':disabled') &&
        !(localName(n) === 'input' && inputType(n) === 'hidden') && !hiddenAttr(n) && shownLive(n);
    }
    function moveFocus(from, back) {
      var all = queryDoc(FOCUSABLE);
      var n = all.length;
      var at = -1;
      var i;
      for (i = 0; i < n; i++) {
        if (all[i] === from) {
          at = i;
        }
      }
      var step;
      for (step = 1; step <= n; step++) {
        var idx = back ? (at < 0 ? n - step : (at - step + n) % n) : (at < 0 ? step - 1 : (at + step) % n);
        if (focusable(all[idx])) {
          focusOn(all[idx]);
          return all[idx];
        }
      }
      return null;
    }
    function toolPressKeys(args) {
      checkArgs(args, 'press_keys', allowed(['keys', 'recent', 'probe', 'expect']));
      var keys = own(args, 'keys');
      if (typeof keys === 'string') {
        var one = list();
        put(one, 0, keys);
        keys = one;
      }
      if (!isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS) {
        refuse('keys must be a list of 1 to ' + MAX_KEYS + ' key names, e.g. ["ArrowDown", "Enter"]');
      }
      var names = list();
      var i;
      for (i = 0; i < keys.length; i++) {
        var k = keys[i];
        if (typeof k !== 'string' || typeof KEYS[k] !== 'object') {
          refuse('key ' + cut('' + k, 30) + ' is not one the agent may press; the keys are: ' + joinKeys(KEYS));
        }
        put(names, i, k);
      }
      // Enter in a form's field may submit it (the page's key handler): guarded like a click on
      // the form's default button, before any key is pressed.
      var guarded = '';
      var first = activeDeep();
      var facts = null;
      for (i = 0; i < names.length && guarded === ''; i++) {
        var ef = KEYS[names[i]].key === 'Enter' && first && !ours(first) ? enterSubmits(first) : null;
        if (ef) {
          guarded = submitName(ef);
          recentClick(own(args, 'recent'), guarded, 'Enter in ' + describe(first, true) + ' (the form\'s submission, ' + guarded + ')');
          facts = checked(args) ? enterFacts(first, ef) : null;
        }
      }
      if (own(args, 'probe') === true) {
        return probed(facts);
      }
      var pressed = list();
      for (i = 0; i < names.length; i++) {
        var name = names[i];
        var node = activeDeep();
        var bodyEl = bodyOf ? apply(bodyOf, doc, []) : null;
        if (!node || ours(node)) {
          node = bodyEl;
        }
        if (!node) {
          refuse('the page has no element to send keys to');
        }
        if (KEYS[name].key === 'Enter' && !ours(node) && checked(args)) {
          var sf = enterSubmits(node);
          expected(args, sf ? enterFacts(node, sf) : null, 'Enter in ' + describe(node, true));
        }
        var go = key(node, name);
        var note = name;
        if (!go) {
          note = name + ' (handled by the page)';
        } else if (KEYS[name].key === 'Tab') {
          var to = moveFocus(node === bodyEl ? null : node, KEYS[name].shift);
          note = name + (to ? ' -> ' + describe(to, true) : '');
        } else if (name === 'Backspace') {
          var ln = localName(node);
          if ((ln === 'input' || ln === 'textarea') && !isPassword(node) && !hasAttr(node, 'readonly') &&
              (ln === 'textarea' || NOT_TYPED[inputType(node)] !== true)) {
            var cur = currentValue(node, ln);
            if (cur !== '') {
              setValue(node, ln, apply(strSlice, cur, [0, cur.length - 1]), 'deleteContentBackward', null);
            }
          }
        } else if (node === bodyEl && winScrollBy && winScrollTo &&
            (name === 'PageUp' || name === 'PageDown' || name === 'Home' || name === 'End')) {
          scrollWindow(name === 'PageUp' ? 'up' : name === 'PageDown' ? 'down' : name === 'Home' ? 'top' : 'bottom');
        }
        put(pressed, i, note);
      }
      var res = dict();
      res.pressed = pressed;
      if (guarded !== '') {
        res.name = guarded;
      }
      var f = activeDeep();
      res.focused = f && !ours(f) ? describe(f, true) : 'nothing';
      res.url = href();
      return res;
    }

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
          res.box = boxRect(rectOf(node));
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

    // ---- navigate, back, forward. ----

    function toolNavigate(args, done) {
      checkArgs(args, 'navigate', allowed(['url']));
      var raw = strArg(args, 'url', true, 4096);
      var origin = pageOrigin();
      var u = parseURL(raw, href());
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
          apply(locationAssign, loc, [dest]);
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
      var u = to ? parseURL('' + apply(entryUrlG, to, []), undefined) : null;
      var origin = pageOrigin();
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

    // ---- wait_for and wait_for_stable. ----

    // pageText is the page's text and its same-origin frames', lowercased.
    function pageText() {
      var t = docText(doc);
      var fl = frameList();
      var i;
      for (i = 0; i < fl.length; i++) {
        t = t + '\n' + docText(fl[i].doc);
      }
      return t;
    }
    function docText(d) {
      var body = bodyOf ? apply(bodyOf, d, []) : null;
      if (!body || !innerTextG) {
        return '';
      }
      try {
        return lower('' + apply(innerTextG, body, []));
      } catch (e) {
        return '';
      }
    }
    function hasText(want) {
      var t = pageText();
      if (contains(t, want)) {
        return true;
      }
      return t.length < 300000 && contains(collapse(t, 300000), want);
    }
    function toolWaitFor(args, done) {
      checkArgs(args, 'wait_for', allowed(['ref', 'text', 'gone', 'timeoutMs']));
      var ref = strArg(args, 'ref', false, 20);
      var text = strArg(args, 'text', false, 400);
      var gone = boolArg(args, 'gone', false);
      var timeout = intArg(args, 'timeoutMs', 5000, 0, MAX_WAIT);
      if ((ref !== null) === (text !== null)) {
        refuse('give exactly one of ref or text');
      }
      var n = 0;
      if (ref !== null) {
        var plain = ref;
        if (plain.length > 2 && apply(charCodeAt, plain, [0]) === 91) {
          plain = apply(strSlice, plain, [1, plain.length - 1]);
        }
        n = refNumber(plain);
        if (!n) {
          refuse('"' + cut(ref, 20) + '" is not an element ref (refs look like e12; get them from outline or query)');
        }
      }
      var want = text !== null ? normal(text) : '';
      var start = now();
      var what = ref !== null ? 'element ' + ref : '"' + cut(text, 60) + '"';
      function met() {
        if (ref !== null) {
          var node = liveRef(n);
          var shown = node !== null && !hiddenAttr(node) && shownLive(node);
          return gone ? !shown : shown;
        }
        return gone ? !hasText(want) : hasText(want);
      }
      function check() {
        if (met()) {
          var res = dict();
          res.found = !gone;
          res.gone = gone;
          res.waitedMs = round(now() - start);
          if (ref !== null && !gone) {
            res.element = describe(liveRef(n), true);
          }
          done(true, res);
          return;
        }
        if (now() - start >= timeout) {
          done(false, what + (gone ? ' was still there' : ' did not appear') + ' after ' + timeout + ' ms' +
            (ref !== null && !gone && liveRef(n) === null ? ' (the ref names no element on the page; call outline again)' : ''));
          return;
        }
        runLater('wait_for', done, POLL_MS, check);
      }
      check();
      return PENDING;
    }
    function toolWaitStable(args, done) {
      checkArgs(args, 'wait_for_stable', allowed(['ms', 'timeoutMs']));
      var quiet = intArg(args, 'ms', 500, 50, 5000);
      var timeout = intArg(args, 'timeoutMs', 5000, 100, MAX_WAIT);
      if (typeof MO !== 'function' || !moObserve || !moDisconnect) {
        refuse('this browser cannot watch the page for the agent');
      }
      var start = now();
      var last = start;
      var count = 0;
      var mo = new MO(function (records) {
        last = now();
        count = count + (records ? num(records.length) : 1);
      });
      var o = dict();
      o.subtree = true;
      o.childList = true;
      o.attributes = true;
      o.characterData = true;
      apply(moObserve, mo, [apply(documentElement, doc, []), o]);
      // Same-origin frames count too: one observer watches each frame's document as well.
      var fl = frameList();
      var fi;
      for (fi = 0; fi < fl.length; fi++) {
        try {
          var fde = apply(documentElement, fl[fi].doc, []);
          if (fde) {
            apply(moObserve, mo, [fde, o]);
          }
        } catch (e) { /* a frame that went */ }
      }
      function finish(stable) {
        try {
          apply(moDisconnect, mo, []);
        } catch (e) { /* gone */ }
        var res = dict();
        res.stable = stable;
        res.waitedMs = round(now() - start);
        res.mutations = count;
        if (!stable) {
          res.note = 'the page was still changing after ' + timeout + ' ms';
        }
        done(true, res);
      }
      function check() {
        var t = now();
        if (t - last >= quiet) {
          finish(true);
        } else if (t - start >= timeout) {
          finish(false);
        } else {
          later(check, 50);
        }
      }
      later(check, 50);
      return PENDING;
    }

    // ---- find. ----

    function indentOf(line) {
      var i = 0;
      while (i < line.length && apply(charCodeAt, line, [i]) === 32) {
        i++;
      }
      return i;
    }
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

    // ---- page_state (for the proxy's check of done). ----

    function dirty(node, ln) {
      try {
        if (ln === 'select') {
          var opts = queryIn(node, 'option');
          var i;
          for (i = 0; i < opts.length; i++) {
            if (optionSelectedG && optionDefaultSelectedG &&
                apply(optionSelectedG, opts[i], []) !== apply(optionDefaultSelectedG, opts[i], []) &&
                (i > 0 || apply(optionDefaultSelectedG, opts[i], []))) {
              return true;
            }
          }
          return false;
        }
        if (ln === 'textarea') {
          return '' + apply(textareaValue, node, []) !== '' + apply(textareaDefaultValueG, node, []);
        }
        var t = inputType(node);
        if (t === 'checkbox' || t === 'radio') {
          return apply(checkedG, node, []) !== apply(defaultCheckedG, node, []);
        }
        if (NOT_TYPED[t] === true) {
          return false;
        }
        return '' + apply(inputValue, node, []) !== '' + apply(inputDefaultValueG, node, []);
      } catch (e) {
        return false;
      }
    }
    function toolPageState(args) {
      checkArgs(args, 'page_state', allowed([]));
      var res = dict();
      res.url = href();
      var dialogs = list();
      var ovs = overlays();
      var i;
      for (i = 0; i < ovs.length; i++) {
        var r = roleOf(ovs[i], localName(ovs[i]));
        if (r === 'dialog' || r === 'alertdialog' || attrOf(ovs[i], 'aria-modal') === 'true') {
          put(dialogs, dialogs.length, describe(ovs[i], true));
        }
      }
      res.dialogs = dialogs;
      var groups = list();
      var byGroup = new MapCtor();
      var fields = queryDoc('input, textarea, select');
      for (i = 0; i < fields.length && i < 2000; i++) {
        var f = fields[i];
        var ln = localName(f);
        if (ours(f) || (ln === 'input' && inputType(f) === 'hidden') || !dirty(f, ln) || !shownLive(f)) {
          continue;
        }
        var g = closest(f, 'form, dialog, [role=dialog], [role=alertdialog]');
        if (!g || !shownLive(g)) {
          continue; // a field outside forms and dialogs (a search box) is not unsaved work
        }
        var entry = apply(mapGet, byGroup, [g]);
        if (!entry) {
          entry = dict();
          entry.container = describe(g, true);
          entry.unsaved = list();
          apply(mapSet, byGroup, [g, entry]);
          put(groups, groups.length, entry);
        }
        if (entry.unsaved.length < 10) {
          var name = nameOf(f, ln, roleOf(f, ln) || 'textbox', true);
          put(entry.unsaved, entry.unsaved.length, (roleOf(f, ln) || ln) + (name === '' ? '' : ' ' + quote(cut(name, 60))) + ' [' + refFor(f) + ']');
        }
      }
      res.forms = groups;
      var alerts = list();
      var live = queryDoc('[role=alert], [role=status], [aria-live=assertive], [aria-live=polite], output');
      for (i = 0; i < live.length && alerts.length < 5; i++) {
        if (ours(live[i]) || !shownLive(live[i])) {
          continue;
        }
        var t = collapse(textOf(live[i], true, 400), 200);
        if (t !== '') {
          put(alerts, alerts.length, t);
        }
      }
      res.alerts = alerts;
      return res;
    }

    // ---- fetch_page. ------------------------------------------------------------------------

    function toolFetch(args, done) {
      checkArgs(args, 'fetch_page', allowed(['url', 'budget']));
      var raw = strArg(args, 'url', true, 4096);
      var budget = intArg(args, 'budget', 6000, 200, 100000);
      var origin = pageOrigin();
      var u = parseURL(raw, href());
      if (!u) {
        refuse('"' + cut(raw, 200) + '" is not a valid address');
      }
      var p = urlPart(u, urlProtocolG);
      if ((p !== 'http:' && p !== 'https:') || urlPart(u, urlOriginG) !== origin) {
        refuse('open_page only opens pages of this site (' + origin + '); ' + cut(urlPart(u, urlHrefG), 200) + ' is not one');
      }
      if (typeof fetchFn !== 'function' || !respText || !promiseThen || !respStatusG || !respTypeG) {
        refuse('this browser cannot fetch for the agent');
      }
      if (thenable(respProto)) {
        // Resolving fetch's promise would hand the Response to the page's then.
        refuse('this page has made every object look like a promise (a "then" property on Object.prototype or Response.prototype); open_page does not run here');
      }
      var url = urlPart(u, urlHrefG);
      var init = dict();
      init.method = 'GET';
      init.credentials = 'same-origin';
      init.redirect = 'manual';
      init.cache = 'no-store';
      var fail = function (why) {
        done(false, why);
      };
      var promise = apply(fetchFn, win, [url, init]);
      apply(promiseThen, promise, [function (resp) {
        var type = '';
        var status = 0;
        var ctype = '';
        try {
          type = '' + apply(respTypeG, resp, []);
          status = apply(respStatusG, resp, []);
          var hs = apply(respHeadersG, resp, []);
          var ct = apply(headersGet, hs, ['content-type']);
          ctype = typeof ct === 'string' ? lower(ct) : '';
        } catch (e) {
          fail('the answer could not be read');
          return;
        }
        if (type === 'opaqueredirect') {
          fail('the site redirects ' + cut(url, 200) + ' elsewhere; open_page does not follow redirects (open the final address instead)');
          return;
        }
        if (status < 200 || status > 299) {
          fail('the site answered ' + status + ' for ' + cut(url, 200));
          return;
        }
        apply(promiseThen, apply(respText, resp, []), [function (body) {
          try {
            done(true, pageSummary(url, status, ctype, '' + body, budget));
          } catch (e) {
            fail(e !== null && typeof e === 'object' && own(e, 'mark') === REFUSAL ? e.why : 'the page could not be read');
          }
        }, function () {
          fail('reading the page failed');
        }]);
      }, function () {
        fail('fetching ' + cut(url, 200) + ' failed (network error)');
      }]);
      return PENDING;
    }

    // outline_html outlines a page of another origin of this site that the proxy fetched itself
    // (open_page, proxy/chat_open.go): the same inert parse and summary as fetch_page, without
    // fetching anything here. Only the proxy sends it; the model cannot name this tool.
    function toolOutlineHTML(args) {
      checkArgs(args, 'outline_html', allowed(['url', 'status', 'contentType', 'html', 'budget']));
      var url = strArg(args, 'url', true, 4096);
      var status = intArg(args, 'status', 200, 100, 599);
      var ctype = own(args, 'contentType');
      var html = own(args, 'html');
      var budget = intArg(args, 'budget', 6000, 200, 100000);
      if (typeof html !== 'string') {
        refuse('outline_html needs the page as text');
      }
      return pageSummary(url, status, typeof ctype === 'string' ? lower(ctype) : 'text/html', html, budget);
    }

    // thenable reports whether objects with prototype p would be taken for promises: a "then"
    // anywhere on the chain.
    function thenable(p) {
      var k;
      for (k = 0; p && k < 16; k++) {
        if (getOwnPropertyDescriptor(p, 'then')) {
          return true;
        }
        p = getPrototypeOf(p);
      }
      return false;
    }

    function pageSummary(url, status, ctype, body, budget) {
      var r = dict();
      r.url = url;
      r.status = status;
      if (!contains(ctype, 'html')) {
        r.contentType = ctype;
        r.truncated = body.length > 8000;
        r.text = cut(body, 8000);
        return r;
      }
      if (typeof DOMParserCtor !== 'function' || !parseFromString) {
        refuse('this browser cannot parse pages for the agent');
      }
      var parsed;
      try {
        parsed = apply(parseFromString, new DOMParserCtor(), [cut(body, 4000000), 'text/html']);
      } catch (e) {
        refuse('the page could not be parsed here (the page may enforce Trusted Types)');
      }
      r.title = '';
      try {
        r.title = collapse('' + apply(documentTitle, parsed, []), 300);
      } catch (e) { /* no title */ }
      var o = newOutline('all', budget, false, url);
      var root = bodyOf ? apply(bodyOf, parsed, []) : null;
      if (root) {
        walkChildren(o, root, 0);
        flushText(o);
      }
      var res = finishOutline(o);
      r.outline = res.outline;
      r.truncated = res.truncated;
      return r;
    }

    // ---- Secrets for the proxy's redaction stage (issue 11). ----------------------------------
    //
    // The proxy removes the values of this page's password fields from everything the model is
    // sent, whatever tool or path carried them (proxy/redact.go); it learns them here, never from
    // the model: {type:'secrets', fields:[{id, value}], cookies:[value]}. A report goes when a
    // tool starts and before its answer, and when a password field changes (input and change
    // events reach the window from open shadow roots too; a frame's fields are reported with the
    // next tool). The proxy keeps the values in memory for this page session only. Fields are
    // found in the page, its same-origin frames and the open shadow roots in them.
    var fragQSA = fragProto && fragProto.querySelectorAll;
    var eventProto = proto(win.Event);
    var composedPathFn = eventProto && eventProto.composedPath;
    var eventTargetG = getter(eventProto, 'target');
    var secretIds = new WeakMapC();
    var secretNext = 0;
    var lastReport = '';
    var lastReportSock = null;
    var MAX_REPORTED_VALUE = 1024;
    var fieldsFound = null; // passwordFields' list, found again by each report

    // passwordFields lists the password inputs of the page, its same-origin frames and the open
    // shadow roots in them (the list of the last report, or found now).
    function passwordFields() {
      if (fieldsFound) {
        return fieldsFound;
      }
      var out = list();
      var roots = list();
      put(roots, 0, doc);
      var fl = frameList();
      var i;
      for (i = 0; i < fl.length; i++) {
        put(roots, roots.length, fl[i].doc);
      }
      for (i = 0; i < roots.length; i++) {
        var r = roots[i];
        var isDoc = nodeType(r) === 9;
        var all;
        try {
          all = isDoc ? apply(querySelectorAllDoc, r, ['*']) : apply(fragQSA, r, ['*']);
        } catch (e) {
          continue;
        }
        var n = apply(nodeListLength, all, []);
        var j;
        for (j = 0; j < n; j++) {
          var el = apply(nodeListItem, all, [j]);
          if (isPassword(el)) {
            put(out, out.length, el);
          }
          var sr = null;
          try {
            sr = shadowRootG ? apply(shadowRootG, el, []) : null;
          } catch (e) { /* none */ }
          if (sr && fragQSA) {
            put(roots, roots.length, sr);
          }
        }
      }
      fieldsFound = out;
      return out;
    }
    function secretId(el) {
      var id = apply(weakGet, secretIds, [el]);
      if (!id) {
        secretNext++;
        id = secretNext;
        apply(weakSet, secretIds, [el, id]);
      }
      return id;
    }
    function secretField(el) {
      var v = '';
      try {
        v = '' + apply(inputValue, el, []);
      } catch (e) { /* not an input */ }
      if (v === '') {
        return null;
      }
      var f = dict();
      f.id = secretId(el);
      f.value = v.length > MAX_REPORTED_VALUE ? apply(strSlice, v, [0, MAX_REPORTED_VALUE]) : v;
      return f;
    }
    // cookieValues are the values of the page's script-visible cookies.
    function cookieValues() {
      var out = list();
      if (!cookieG) {
        return out;
      }
      try {
        var pairs = apply(cookieG, doc, []);
        pairs = typeof pairs === 'string' ? pairs : '';
        var start = 0;
        while (start < pairs.length && out.length < 64) {
          var end = apply(strIndexOf, pairs, [';', start]);
          if (end < 0) {
            end = pairs.length;
          }
          var pair = apply(strSlice, pairs, [start, end]);
          var eq = apply(strIndexOf, pair, ['=']);
          var v = eq >= 0 ? trimSpaces(apply(strSlice, pair, [eq + 1])) : '';
          if (v !== '') {
            put(out, out.length, v);
          }
          start = end + 1;
        }
      } catch (e) { /* no cookies */ }
      return out;
    }
    function trimSpaces(s) {
      var a = 0;
      var b = s.length;
      while (a < b && apply(charCodeAt, s, [a]) === 32) {
        a++;
      }
      while (b > a && apply(charCodeAt, s, [b - 1]) === 32) {
        b--;
      }
      return apply(strSlice, s, [a, b]);
    }
    function sendReport(fields, cookies) {
      var m = message('secrets');
      m.fields = fields;
      m.cookies = cookies;
      var s = apply(jsonStringify, null, [m]);
      if (s === lastReport && sock === lastReportSock) {
        return; // the proxy has these already
      }
      lastReport = s;
      lastReportSock = sock;
      sendText(s);
    }
    // reportSecrets reports every password field's value and the cookies.
    function reportSecrets() {
      var fields = list();
      fieldsFound = null; // fields come and go: found again for each report
      try {
        var pw = passwordFields();
        var i;
        for (i = 0; i < pw.length; i++) {
          var f = secretField(pw[i]);
          if (f) {
            put(fields, fields.length, f);
          }
        }
      } catch (e) { /* report what was found */ }
      sendReport(fields, cookieValues());
    }
    // A password field that changes is reported at once, so a value typed a moment ago is known.
    function onPasswordChange(ev) {
      try {
        var path = composedPathFn ? apply(composedPathFn, ev, []) : null;
        var t = path && path.length > 0 ? path[0] : apply(eventTargetG, ev, []);
        if (t && nodeType(t) === 1 && isPassword(t)) {
          var f = secretField(t);
          if (f) {
            var fields = list();
            put(fields, 0, f);
            sendReport(fields, list());
          }
        }
      } catch (e) { /* never break the page's events */ }
    }
    on(win, 'input', onPasswordChange, true);
    on(win, 'change', onPasswordChange, true);
    // carriesSecret reports whether an address carries a password or cookie value of the page.
    function carriesSecret(address) {
      var sl = secrets(true);
      var i;
      for (i = 0; i < sl.length; i++) {
        if (contains(address, sl[i]) || contains(address, encode(sl[i]))) {
          return true;
        }
      }
      return false;
    }

    // ---- Answers. ---------------------------------------------------------------------------

    // secrets are the strings no answer may carry: the current values of the page's password
    // fields, and for read_page_data the values of its script-visible cookies.
    function secrets(withCookies) {
      var out = list();
      try {
        var inputs = passwordFields(); // the page, same-origin frames, open shadow roots
        var i;
        for (i = 0; i < inputs.length; i++) {
          if (isPassword(inputs[i])) {
            var v = '' + apply(inputValue, inputs[i], []);
            if (v.length >= 4) {
              put(out, out.length, v);
            }
          }
        }
      } catch (e) { /* no inputs */ }
      if (withCookies && cookieG) {
        try {
          var parts = apply(cookieG, doc, []);
          var pairs = typeof parts === 'string' ? parts : '';
          var cur = '';
          var j;
          for (j = 0; j <= pairs.length; j++) {
            var c = j < pairs.length ? apply(charCodeAt, pairs, [j]) : 59;
            if (c === 59) {
              var eq = apply(strIndexOf, cur, ['=']);
              var val = eq >= 0 ? collapse(apply(strSlice, cur, [eq + 1]), 4096) : '';
              if (val.length >= 8) {
                put(out, out.length, val);
              }
              cur = '';
            } else {
              cur = cur + apply(fromCharCode, null, [c]);
            }
          }
        } catch (e) { /* no cookies */ }
      }
      return out;
    }
    function scrub(json, secretList) {
      var i;
      for (i = 0; i < secretList.length; i++) {
        var esc = apply(jsonStringify, null, [secretList[i]]);
        esc = apply(strSlice, esc, [1, esc.length - 1]);
        json = replaceAll(json, esc, '[redacted]');
      }
      return json;
    }
    function utf8Length(s) {
      var n = 0;
      var i;
      for (i = 0; i < s.length; i++) {
        var c = apply(charCodeAt, s, [i]);
        n = n + (c < 128 ? 1 : c < 2048 ? 2 : 3);
      }
      return n;
    }
    function sendText(s) {
      var ws = sock;
      if (!ws || apply(wsReadyState, ws, []) !== 1) {
        return;
      }
      try {
        apply(wsSend, ws, [s]);
      } catch (e) { /* closing */ }
    }
    function answer(id, tool, ok, value, error) {
      reportSecrets(); // before the answer, so the proxy knows what to redact from it
      var m = message('toolResult');
      m.id = id;
      m.ok = ok;
      if (ok) {
        m.value = value;
      } else {
        m.error = cut('' + error, 2000);
      }
      var s;
      try {
        s = apply(jsonStringify, null, [m]);
        s = scrub(s, secrets(tool === 'read_page_data'));
        apply(jsonParse, null, [s]); // a secret cut across JSON syntax would break it
      } catch (e) {
        s = null;
      }
      if (s === null) {
        m = message('toolResult');
        m.id = id;
        m.ok = false;
        m.error = 'the result could not be sent safely';
        s = apply(jsonStringify, null, [m]);
      } else if (utf8Length(s) > MAX_ANSWER_BYTES) {
        m = message('toolResult');
        m.id = id;
        m.ok = false;
        m.error = 'the result is too large (' + utf8Length(s) + ' bytes); ask for less (a smaller budget, limit or maxChars, or a ref)';
        s = apply(jsonStringify, null, [m]);
      }
      sendText(s);
    }

    var TOOLS = dict();
    TOOLS.capture_page = toolCapture;
    TOOLS.outline = toolOutline;
    TOOLS.query = toolQuery;
    TOOLS.inspect_styles = toolStyles;
    TOOLS.read_page_data = toolPageData;
    TOOLS.click = toolClick;
    TOOLS.fetch_page = toolFetch;
    TOOLS.outline_html = toolOutlineHTML;
    TOOLS.type = toolType;
    TOOLS.set_field = toolSetField;
    TOOLS.select = toolSelect;
    TOOLS.press_keys = toolPressKeys;
    TOOLS.scroll = toolScroll;
    TOOLS.hover = toolHover;
    TOOLS.navigate = toolNavigate;
    TOOLS.back = toolBack;
    TOOLS.forward = toolForward;
    TOOLS.wait_for = toolWaitFor;
    TOOLS.wait_for_stable = toolWaitStable;
    TOOLS.find = toolFind;
    TOOLS.page_state = toolPageState;
    TOOLS.report_secrets = function () { return null; }; // the proxy's: a report comes with every answer

    return function (req) {
      framesMoved(); // frames are found and measured again for each call
      reportSecrets(); // the values as the tool starts (proxy/redact_sources.go)
      var id = own(req, 'id');
      var tool = own(req, 'tool');
      var args = own(req, 'args');
      var fn = typeof tool === 'string' ? own(TOOLS, tool) : undefined;
      if (typeof fn !== 'function') {
        answer(id, tool, false, null, 'this page agent has no tool ' + cut('' + tool, 60));
        return;
      }
      if (args === undefined || args === null) {
        args = dict();
      }
      if (typeof args !== 'object' || isArray(args)) {
        answer(id, tool, false, null, tool + ': the arguments must be a JSON object');
        return;
      }
      var settled = false;
      var done = function (ok, v) {
        if (settled) {
          return;
        }
        settled = true;
        answer(id, tool, ok, ok ? v : null, ok ? '' : v);
      };
      try {
        var v = fn(args, done);
        if (v !== PENDING) {
          done(true, v === undefined ? null : v);
        }
      } catch (e) {
        done(false, e !== null && typeof e === 'object' && own(e, 'mark') === REFUSAL ? e.why : tool + ' failed in the page');
      }
    };
  })();
