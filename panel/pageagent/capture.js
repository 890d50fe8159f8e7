// Captures. Everything the agent calls after start-up is read here, or at the top of the file that
// needs it, before any page script runs; afterwards it is called only through the captured
// Reflect.apply (or new on a captured constructor). No function reads a global.

var apply = Reflect.apply;
var getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
var defineProperty = Object.defineProperty;
var create = Object.create;
var hasOwnProperty = Object.prototype.hasOwnProperty;
var jsonParse = JSON.parse;
var jsonStringify = JSON.stringify;
var encode = encodeURIComponent;

function getter(obj, name) {
  var d = obj ? getOwnPropertyDescriptor(obj, name) : undefined;
  return d ? d.get : undefined;
}
function setter(obj, name) {
  var d = obj ? getOwnPropertyDescriptor(obj, name) : undefined;
  return d ? d.set : undefined;
}
function proto(ctor) {
  return typeof ctor === 'function' ? ctor.prototype : undefined;
}

var WS = win.WebSocket;
var wsSend = WS && WS.prototype.send;
var wsClose = WS && WS.prototype.close;
var wsReadyState = getter(proto(WS), 'readyState');

var addEventListener = EventTarget.prototype.addEventListener;
var eventTarget = getter(Event.prototype, 'target');
var messageData = getter(proto(win.MessageEvent), 'data');
var closeCode = getter(proto(win.CloseEvent), 'code');
var closeReason = getter(proto(win.CloseEvent), 'reason');
var pagePersisted = getter(proto(win.PageTransitionEvent), 'persisted');

var createElement = Document.prototype.createElement;
var documentElement = getter(Document.prototype, 'documentElement');
var readyState = getter(Document.prototype, 'readyState');
var documentTitle = getter(Document.prototype, 'title');
var attachShadow = Element.prototype.attachShadow;
var setAttribute = Element.prototype.setAttribute;
var removeAttribute = Element.prototype.removeAttribute;
var appendChild = Node.prototype.appendChild;
var isConnected = getter(Node.prototype, 'isConnected');
var setTextContent = setter(Node.prototype, 'textContent');
var focus = proto(win.HTMLElement) && win.HTMLElement.prototype.focus;
var contentWindow = getter(proto(win.HTMLIFrameElement), 'contentWindow');

var Sheet = win.CSSStyleSheet;
var replaceSync = Sheet && Sheet.prototype.replaceSync;
var setAdoptedStyleSheets = setter(proto(win.ShadowRoot), 'adoptedStyleSheets');

var MO = win.MutationObserver;
var moObserve = MO && MO.prototype.observe;
var moDisconnect = MO && MO.prototype.disconnect;

// Location's properties are own, non-configurable accessors ([LegacyUnforgeable]); capturing
// the getters still keeps us independent of anything on the way to them.
var loc = win.location;
var locationHref = getter(loc, 'href');
var locationProtocol = getter(loc, 'protocol');
var locationOrigin = getter(loc, 'origin');

var hist = win.history;
var originalPushState = hist && hist.pushState;
var originalReplaceState = hist && hist.replaceState;

var navigation = win.navigation;
var navigationType = getter(proto(win.NavigationCurrentEntryChangeEvent), 'navigationType');
var navigationActivation = getter(proto(win.Navigation), 'activation');
var activationFrom = getter(proto(win.NavigationActivation), 'from');
var entryURL = getter(proto(win.NavigationHistoryEntry), 'url');
var entryIndex = getter(proto(win.NavigationHistoryEntry), 'index');

// For remixlets' dom operations (see "Remixlet operations" below). A missing one makes the
// operations that need it refuse; it never stops the agent.
var querySelectorAllDoc = Document.prototype.querySelectorAll;
var querySelectorAllEl = Element.prototype.querySelectorAll;
var nodeListLength = getter(proto(win.NodeList), 'length');
var nodeListItem = proto(win.NodeList) && win.NodeList.prototype.item;
var getAttribute = Element.prototype.getAttribute;
var hasAttribute = Element.prototype.hasAttribute;
var localNameOf = getter(Element.prototype, 'localName');
var getTextContent = getter(Node.prototype, 'textContent');
var classListOf = getter(Element.prototype, 'classList');
var tokenAdd = proto(win.DOMTokenList) && win.DOMTokenList.prototype.add;
var tokenRemove = proto(win.DOMTokenList) && win.DOMTokenList.prototype.remove;
var styleOf = getter(proto(win.HTMLElement), 'style');
var setProperty = proto(win.CSSStyleDeclaration) && win.CSSStyleDeclaration.prototype.setProperty;
var removeProperty = proto(win.CSSStyleDeclaration) && win.CSSStyleDeclaration.prototype.removeProperty;
var elementRemove = Element.prototype.remove;
var inputValue = getter(proto(win.HTMLInputElement), 'value');
var textareaValue = getter(proto(win.HTMLTextAreaElement), 'value');
var selectValue = getter(proto(win.HTMLSelectElement), 'value');
var keyOf = getter(proto(win.KeyboardEvent), 'key');
var headOf = getter(Document.prototype, 'head');
var bodyOf = getter(Document.prototype, 'body');
var MapCtor = Map;
var mapGet = Map.prototype.get;
var mapSet = Map.prototype.set;
var mapDelete = Map.prototype.delete;
var mapForEach = Map.prototype.forEach;
var mapSize = getter(Map.prototype, 'size');
var WeakMapCtor = WeakMap;
var weakGet = WeakMap.prototype.get;
var weakSet = WeakMap.prototype.set;
var objectKeys = Object.keys;
var setPrototypeOf = Object.setPrototypeOf;
var strLower = String.prototype.toLowerCase;
var strIndexOf = String.prototype.indexOf;
var strSlice = String.prototype.slice;
var charCodeAt = String.prototype.charCodeAt;
var fromCharCode = String.fromCharCode;
var moTakeRecords = MO && MO.prototype.takeRecords;
var locationReload = loc.reload;
// For remixlet stylesheets (see "Remixlet stylesheets" below).
var documentAdopted = getter(Document.prototype, 'adoptedStyleSheets');
var setDocumentAdopted = setter(Document.prototype, 'adoptedStyleSheets');
var arrayPush = Array.prototype.push;
// For the rest of the dom surface (create, insert, clone, rect, style, click, focus,
// scrollIntoView, setHTML, addStyle) and the address rule. A missing one refuses that op.
var createElementNS = Document.prototype.createElementNS;
var createTextNode = Document.prototype.createTextNode;
var createFragment = Document.prototype.createDocumentFragment;
var insertBefore = Node.prototype.insertBefore;
var removeChildFn = Node.prototype.removeChild;
var cloneNodeFn = Node.prototype.cloneNode;
var parentNodeOf = getter(Node.prototype, 'parentNode');
var firstChildOf = getter(Node.prototype, 'firstChild');
var nextSiblingOf = getter(Node.prototype, 'nextSibling');
var nodeTypeOf = getter(Node.prototype, 'nodeType');
var nodeValueOf = getter(Node.prototype, 'nodeValue');
var baseURIOf = getter(Node.prototype, 'baseURI');
var namespaceOf = getter(Element.prototype, 'namespaceURI');
var getAttributeNames = Element.prototype.getAttributeNames;
var getBoundingClientRect = Element.prototype.getBoundingClientRect;
var scrollIntoViewFn = Element.prototype.scrollIntoView;
var DOMRectRO = proto(win.DOMRectReadOnly);
var rectX = getter(DOMRectRO, 'x');
var rectY = getter(DOMRectRO, 'y');
var rectWidth = getter(DOMRectRO, 'width');
var rectHeight = getter(DOMRectRO, 'height');
var getComputedStyleFn = win.getComputedStyle;
var getPropertyValue = proto(win.CSSStyleDeclaration) && win.CSSStyleDeclaration.prototype.getPropertyValue;
var htmlClick = proto(win.HTMLElement) && win.HTMLElement.prototype.click;
var inputSetValue = setter(proto(win.HTMLInputElement), 'value');
var buttonForm = getter(proto(win.HTMLButtonElement), 'form');
var inputForm = getter(proto(win.HTMLInputElement), 'form');
var formAction = getter(proto(win.HTMLFormElement), 'action');
var labelControl = getter(proto(win.HTMLLabelElement), 'control');
var anchorHref = getter(proto(win.HTMLAnchorElement), 'href');
var areaHref = getter(proto(win.HTMLAreaElement), 'href');
var imageSrc = getter(proto(win.HTMLImageElement), 'src');
var URLCtor = win.URL;
var urlHref = getter(proto(URLCtor), 'href');
var urlOrigin = getter(proto(URLCtor), 'origin');
var urlProtocol = getter(proto(URLCtor), 'protocol');
var urlHostname = getter(proto(URLCtor), 'hostname');
var urlUsername = getter(proto(URLCtor), 'username');
var urlPassword = getter(proto(URLCtor), 'password');
var urlPathname = getter(proto(URLCtor), 'pathname');
var ParserCtor = win.DOMParser;
var parseFromString = ParserCtor && ParserCtor.prototype.parseFromString;
var perf = win.performance;
var getEntriesByType = proto(win.Performance) && win.Performance.prototype.getEntriesByType;
var entryName = getter(proto(win.PerformanceEntry), 'name');
var removeEventListener = EventTarget.prototype.removeEventListener;
// For the page policy's loader, key-event and layout rules (issue 12).
var composedPathOf = proto(win.Event) && win.Event.prototype.composedPath;
var openShadowRoot = getter(Element.prototype, 'shadowRoot');
var contentEditable = getter(proto(win.HTMLElement), 'isContentEditable');
// For clicks judged along the flat tree (rx_click.js), and fields the page turned from
// passwords into text (rx_policy.js).
var assignedSlotOf = getter(Element.prototype, 'assignedSlot');
var shadowHostOf = getter(proto(win.ShadowRoot), 'host');
var recordTarget = getter(proto(win.MutationRecord), 'target');
var recordOldValue = getter(proto(win.MutationRecord), 'oldValue');

var setTimeoutFn = win.setTimeout;
var clearTimeoutFn = win.clearTimeout;
var consoleObj = win.console;
var consoleWarn = consoleObj && consoleObj.warn;

// Shared by the page tools and the rmx services.
var promiseThen = Promise.prototype.then;
var locationAssign = loc.assign;
var dateNow = Date.now;

// capturesComplete reports whether the browser has what the agent cannot run safely without;
// with too old a browser the agent stays out of the way (start.js).
function capturesComplete() {
  return !(typeof WS !== 'function' || !wsSend || !wsClose || !wsReadyState || !messageData ||
      !closeCode || !addEventListener || !createElement || !appendChild || !setAttribute ||
      !documentElement || !readyState || !locationHref || !locationProtocol || !locationOrigin ||
      typeof setTimeoutFn !== 'function');
}
