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
// Everything is captured now, at script start, before any page script runs.

var getBCR = Element.prototype.getBoundingClientRect;
var createRange = Document.prototype.createRange;
var rangeProto = proto(win.Range);
var rangeSelect = rangeProto && rangeProto.selectNodeContents;
var rangeBCR = rangeProto && rangeProto.getBoundingClientRect;
var rectProto = proto(win.DOMRectReadOnly) || proto(win.DOMRect);
var rectLeft = getter(rectProto, 'left');
var rectTop = getter(rectProto, 'top');
var rectWidthG = getter(rectProto, 'width');
var rectHeightG = getter(rectProto, 'height');
var winProto = proto(win.Window);
var innerWidthG = getter(win, 'innerWidth') || getter(winProto, 'innerWidth');
var innerHeightG = getter(win, 'innerHeight') || getter(winProto, 'innerHeight');
var scrollXG = getter(win, 'scrollX') || getter(winProto, 'scrollX');
var scrollYG = getter(win, 'scrollY') || getter(winProto, 'scrollY');
var scrollHeightG = getter(Element.prototype, 'scrollHeight');
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
var getPrototypeOf = Object.getPrototypeOf;
var DOMParserCtor = win.DOMParser;
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
