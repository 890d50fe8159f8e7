// ---- Page tools of the AI agent (tool_*.js). ------------------------------------------------
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
// Rules kept here, on top of the page agent's (prologue.js):
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
// The tools' built-ins are captured at the first tool call, from a fresh realm (fresh_realm.js,
// toolsReady below), not from the page's window; declared here, filled by captureTools. What a
// path other than a tool call also uses, the JavaScript built-ins, fetch (the page's own) and the
// URL getters (URL is the page's, captured in capture.js) are captured now, at script start,
// before any page script runs.

var getBCR, createRange, rangeSelect, rangeBCR;
var rectLeft, rectTop, rectWidthG, rectHeightG;
var innerWidthG, innerHeightG, scrollXG, scrollYG, scrollHeightG;
var previousSiblingG, charDataG, shadowRootG, assignedNodes, innerTextG;
var getElementByIdDoc, getElementByIdFrag, getRootNode, rootHostG;
var labelsOf = dict();
var formOf = dict();
var checkedG, buttonTypeG, optionTextG, labelControlG;
var matchesFn, closestFn, containsFn, elementFromPoint, clickFn, scrollIntoView;
var anchorHrefG, areaHrefG, formActionG, formMethodG, cookieG;
var contentDocumentG, ownerDocumentG, clientLeftG, clientTopG; // same-origin frames (tool_frames.js)
var builtinGlobals = dict(); // the window's own enumerable properties, which read_page_data leaves out

var nodeTypeG = getter(Node.prototype, 'nodeType'); // the password reports use it (tool_secrets.js)
var urlProto = proto(URLCtor);
var urlOriginG = getter(urlProto, 'origin');
var urlHrefG = getter(urlProto, 'href');
var urlProtocolG = getter(urlProto, 'protocol');
var urlPathnameG = getter(urlProto, 'pathname');
var urlSearchG = getter(urlProto, 'search');
var urlHashG = getter(urlProto, 'hash');
var fragProto = proto(win.DocumentFragment); // tool_secrets.js's fragQSA
// fetch_page's Response is the page's (fetchFn): its prototype is checked for a then (tool_fetch.js).
var respProto = proto(win.Response);
var respText = respProto && respProto.text;
var respStatusG = getter(respProto, 'status');
var respTypeG = getter(respProto, 'type');
var respHeadersG = getter(respProto, 'headers');
var headersGet = proto(win.Headers) && win.Headers.prototype.get;
var WeakRefCtor = win.WeakRef;
var weakDeref = WeakRefCtor && WeakRefCtor.prototype.deref;
var isArray = Array.isArray;
var fetchFn = win.fetch;
var getPrototypeOf = Object.getPrototypeOf;
var DOMParserCtor = ParserCtor;
var mathRound = Math.round;
var strLastIndexOf = String.prototype.lastIndexOf;
var WeakMapC = WeakMap;

// captureTools fills the tools' captures from w, the fresh realm's window. Getters of the window
// (innerWidth ...) are w's, applied to the page's window.
function captureTools(w) {
  var elementProto = proto(w.Element);
  var nodeProto = proto(w.Node);
  var docProto = proto(w.Document);
  var htmlProto = proto(w.HTMLElement);
  getBCR = elementProto.getBoundingClientRect;
  createRange = docProto.createRange;
  var rangeProto = proto(w.Range);
  rangeSelect = rangeProto && rangeProto.selectNodeContents;
  rangeBCR = rangeProto && rangeProto.getBoundingClientRect;
  var rectProto = proto(w.DOMRectReadOnly) || proto(w.DOMRect);
  rectLeft = getter(rectProto, 'left');
  rectTop = getter(rectProto, 'top');
  rectWidthG = getter(rectProto, 'width');
  rectHeightG = getter(rectProto, 'height');
  var winProto = proto(w.Window);
  innerWidthG = getter(w, 'innerWidth') || getter(winProto, 'innerWidth');
  innerHeightG = getter(w, 'innerHeight') || getter(winProto, 'innerHeight');
  scrollXG = getter(w, 'scrollX') || getter(winProto, 'scrollX');
  scrollYG = getter(w, 'scrollY') || getter(winProto, 'scrollY');
  scrollHeightG = getter(elementProto, 'scrollHeight');
  previousSiblingG = getter(nodeProto, 'previousSibling');
  charDataG = getter(proto(w.CharacterData), 'data');
  shadowRootG = getter(elementProto, 'shadowRoot');
  var slotProto = proto(w.HTMLSlotElement);
  assignedNodes = slotProto && slotProto.assignedNodes;
  innerTextG = getter(htmlProto, 'innerText');
  getElementByIdDoc = docProto.getElementById;
  var wFragProto = proto(w.DocumentFragment);
  getElementByIdFrag = wFragProto && wFragProto.getElementById;
  getRootNode = nodeProto.getRootNode;
  rootHostG = getter(proto(w.ShadowRoot), 'host');
  var inputProto = proto(w.HTMLInputElement);
  var selectProto = proto(w.HTMLSelectElement);
  var textareaProto = proto(w.HTMLTextAreaElement);
  var buttonProto = proto(w.HTMLButtonElement);
  labelsOf.input = getter(inputProto, 'labels');
  labelsOf.select = getter(selectProto, 'labels');
  labelsOf.textarea = getter(textareaProto, 'labels');
  labelsOf.button = getter(buttonProto, 'labels');
  labelsOf.meter = getter(proto(w.HTMLMeterElement), 'labels');
  labelsOf.progress = getter(proto(w.HTMLProgressElement), 'labels');
  formOf.input = getter(inputProto, 'form');
  formOf.select = getter(selectProto, 'form');
  formOf.textarea = getter(textareaProto, 'form');
  formOf.button = getter(buttonProto, 'form');
  checkedG = getter(inputProto, 'checked');
  buttonTypeG = getter(buttonProto, 'type');
  optionTextG = getter(proto(w.HTMLOptionElement), 'text');
  labelControlG = getter(proto(w.HTMLLabelElement), 'control');
  matchesFn = elementProto.matches;
  closestFn = elementProto.closest;
  containsFn = nodeProto.contains;
  elementFromPoint = docProto.elementFromPoint;
  clickFn = htmlProto && htmlProto.click;
  scrollIntoView = elementProto.scrollIntoView;
  anchorHrefG = getter(proto(w.HTMLAnchorElement), 'href');
  areaHrefG = getter(proto(w.HTMLAreaElement), 'href');
  var formProto = proto(w.HTMLFormElement);
  formActionG = getter(formProto, 'action');
  formMethodG = getter(formProto, 'method');
  cookieG = getter(docProto, 'cookie');
  contentDocumentG = getter(proto(w.HTMLIFrameElement), 'contentDocument');
  ownerDocumentG = getter(nodeProto, 'ownerDocument');
  clientLeftG = getter(elementProto, 'clientLeft');
  clientTopG = getter(elementProto, 'clientTop');
  var names = objectKeys(w);
  var i;
  for (i = 0; i < names.length; i++) {
    builtinGlobals[names[i]] = true;
  }
  captureActTools(w, inputProto, selectProto, textareaProto, formProto); // tool_act.js
}

// toolsReady reports whether the tools' captures are there, taking them at the first call; false
// where the fresh realm cannot be made or lacks what the tools need.
var toolsCaptured = false;
function toolsReady() {
  if (!toolsCaptured) {
    var w = freshRealm();
    if (!w) {
      return false;
    }
    try {
      captureTools(w);
    } catch (e) {
      return false;
    }
    toolsCaptured = true;
  }
  return true;
}

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
