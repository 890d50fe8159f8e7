// ---- The person's own clicks, for the agent's navigation guard. ------------------------------
//
// On a page the AI agent loaded, the proxy lets a navigation with the person's activation leave
// the site only to an address the person clicked (proxy/chat/navguard_person.go): activation
// alone says only that there was a click or key press somewhere in the page (or in the panel)
// in the last five seconds. So every trusted click, auxclick (middle click) and Enter is
// reported with the address of the link or the form it activates, as the browser resolves it.
// The listeners are at window, capture phase, registered before any page script: a page cannot
// stop them. A page's handler that changes the link's href during the click is seen by a second
// look a task later. A page can send reports of its own: the proxy counts them only for its own
// origin's navigations, which its script could send anywhere with fetch anyway.

// A button's handler. A "Sign in with ..." button whose handler opens the provider in a popup
// (window.open) or sends the tab on (location) navigates to an address no link shows
// (OPEN-ITEMS 96). While a trusted click whose first control on its path is a button (button,
// input of a clickable type, role=button) is being dispatched (until the next task, so a
// handler's awaited promise counts too), the address window.open is called with and the
// destination of a navigation of this window (the Navigation API's navigate event) are reported
// as the person's. A click on a link (its href is reported, not what a handler does instead) or
// on the page's text ("click anywhere to continue") reports neither: red-team pass 6a's forwards.
// window.open is wrapped here, before any page script; a page that opens a window by another
// window's open, or later than the click's task (a timer), is held as before.
var personOpen = win.open;
var navigateDestination = getter(proto(win.NavigateEvent), 'destination');
var destinationURL = getter(proto(win.NavigationDestination), 'url');
var personButtonClick = false;

var personFormActionB = getter(proto(win.HTMLButtonElement), 'formAction');
var personFormActionI = getter(proto(win.HTMLInputElement), 'formAction');
var PERSON_PATH_MAX = 128; // elements of a click's path looked at

function personReport(url, form) {
  var m = message('person');
  m.url = url;
  if (form) {
    m.form = true;
  }
  send(m);
}

// personSubmits reports whether el (a button or an input, tag) submits its form when clicked.
function personSubmits(el, tag) {
  var type = lower('' + (attrOf(el, 'type') || ''));
  return tag === 'button' ? type !== 'button' && type !== 'reset' : type === 'submit' || type === 'image';
}

// personLink is the address of a link el (a, area), '' when it is none.
function personLink(el, tag) {
  if ((tag !== 'a' && tag !== 'area') || !apply(hasAttribute, el, ['href'])) {
    return '';
  }
  return '' + apply(tag === 'a' ? anchorHref : areaHref, el, []);
}

// onPersonClick reports the first link and the first submitter on a trusted click's way up.
function onPersonClick(ev) {
  if (ev.isTrusted !== true || !composedPathOf) {
    return;
  }
  try {
    var path = apply(composedPathOf, ev, []);
    var n = path.length < PERSON_PATH_MAX ? path.length : PERSON_PATH_MAX;
    var linkEl = null;
    var link = '';
    var submitted = false;
    var control = ''; // the first control on the path: 'link' or 'button'
    var i;
    for (i = 0; i < n && (linkEl === null || !submitted); i++) {
      var el = path[i];
      if (nodeTypeOrZero(el) !== 1 || nsOf(el) !== HTML_NS) {
        continue;
      }
      var tag = localName(el);
      if (control === '') {
        control = personControl(el, tag);
      }
      if (linkEl === null) {
        link = personLink(el, tag);
        if (link !== '') {
          linkEl = el;
          personReport(link, false);
          continue;
        }
      }
      if (!submitted && (tag === 'button' || tag === 'input') && personSubmits(el, tag)) {
        submitted = true;
        personReport('' + apply(tag === 'button' ? personFormActionB : personFormActionI, el, []), true);
      }
    }
    if (control === 'button') {
      personButtonClick = true;
      later(function () { personButtonClick = false; }, 0);
    }
    if (linkEl !== null) {
      later(function () {
        try {
          var now = personLink(linkEl, localName(linkEl));
          if (now !== '' && now !== link) {
            personReport(now, false); // the page's handler changed the link during the click
          }
        } catch (e) { /* the first report stands */ }
      }, 0);
    }
  } catch (e) { /* never break the page's clicks */ }
}

// personControl is 'link' for a link, 'button' for a button (button, an input the person
// clicks: button, submit, image, reset; any element with role=button), '' for anything else.
function personControl(el, tag) {
  if ((tag === 'a' || tag === 'area') && apply(hasAttribute, el, ['href'])) {
    return 'link';
  }
  if (tag === 'button' || lower('' + (attrOf(el, 'role') || '')) === 'button') {
    return 'button';
  }
  if (tag === 'input') {
    var type = lower('' + (attrOf(el, 'type') || ''));
    return type === 'button' || type === 'submit' || type === 'image' || type === 'reset' ? 'button' : '';
  }
  return '';
}

// personWindowOpen is window.open: during a button's trusted click, the address it opens is
// reported first (see personButtonClick), unless the page agent itself is acting (agentActs).
function personWindowOpen(url) {
  if (personButtonClick && !agentActing && arguments.length > 0 && url !== undefined && url !== null) {
    try {
      var u = parseURLOrNull('' + url, href());
      if (u) {
        personReport(urlPart(u, urlHrefG), false);
      }
    } catch (e) { /* open anyway */ }
  }
  return apply(personOpen, this === undefined || this === null ? win : this, arguments);
}

// agentActs calls fn for the page agent itself: the agent's dispatched events and clicks
// (tool_act.js, tool_click.js), its form submissions (tool_type.js) and its navigations
// (agentAssign). What a page handler opens or where it sends the window inside that call is the
// agent's, even when a person's button click a moment before left personButtonClick set (it
// lasts until the next task): neither personWindowOpen nor onPersonNavigate reports it.
var agentActing = false;
function agentActs(fn, self, args) {
  var was = agentActing;
  agentActing = true;
  try {
    return apply(fn, self, args);
  } finally {
    agentActing = was;
  }
}

// agentAssign sends this window to dest for the page agent itself (the navigate tool, a
// scheduled reminder); the navigate event fires inside location.assign.
function agentAssign(dest) {
  agentActs(locationAssign, loc, [dest]);
}

// onPersonNavigate reports where this window navigates during a button's trusted click, unless
// the page agent itself sends it (agentAssign).
function onPersonNavigate(ev) {
  if (!personButtonClick || agentActing || !navigateDestination || !destinationURL) {
    return;
  }
  try {
    var d = apply(navigateDestination, ev, []);
    var u = d ? apply(destinationURL, d, []) : '';
    if (typeof u === 'string' && u !== '') {
      personReport(u, false);
    }
  } catch (e) { /* never break the page's navigation */ }
}

// onPersonEnter reports the form that Enter in one of its fields submits.
function onPersonEnter(ev) {
  if (ev.isTrusted !== true || !keyOf || !composedPathOf) {
    return;
  }
  try {
    if ('' + apply(keyOf, ev, []) !== 'Enter') {
      return;
    }
    var path = apply(composedPathOf, ev, []);
    var el = path.length > 0 ? path[0] : null;
    if (nodeTypeOrZero(el) !== 1 || localName(el) !== 'input' || !inputForm || !formAction) {
      return; // links and buttons take Enter as a click
    }
    var form = apply(inputForm, el, []);
    if (form) {
      personReport('' + apply(formAction, form, []), true);
    }
  } catch (e) { /* never break the page's keys */ }
}

// Same-origin frames (OPEN-ITEMS 96). A frame has no page agent of its own (the proxy injects
// top-level documents only), so the person's click on a link in a frame was never reported and a
// page the agent loaded held it. A frame of this page's origin (its contentDocument can be read)
// gets the same listeners from here each time it loads a document, and its frames in turn; the
// proxy matches its reports by the frame's origin, which is the page's. A frame of another
// origin stays unseen (held, as before), and a click in a frame's first moments, before its
// load event, is not seen either, nor one in any frame before the page's own load (the frames
// are hooked in the task after it). The listeners come after the frame's own scripts.
var personFrameDoc = getter(proto(win.HTMLIFrameElement), 'contentDocument');

function onPersonFrameLoad(ev) {
  try {
    hookPersonFrame(apply(eventTarget, ev, []));
  } catch (e) { /* a frame that went, or another origin's */ }
}

// hookPersonFrame gives the listeners to the document loaded in t when t is an iframe of this
// page's origin, and to the frames already in it.
function hookPersonFrame(t) {
  if (nodeTypeOrZero(t) !== 1 || nsOf(t) !== HTML_NS || localName(t) !== 'iframe' || !personFrameDoc) {
    return;
  }
  var fd = apply(personFrameDoc, t, []);
  var fw = fd ? apply(contentWindow, t, []) : null;
  if (!fw) {
    return; // another origin's: not ours to listen in
  }
  personListen(fw, fd);
  personWatchFrames(fd);
}

// personListen adds the listeners for the person's clicks to a window w.
function personListen(w) {
  on(w, 'click', onPersonClick, true);
  on(w, 'auxclick', onPersonClick, true);
  on(w, 'keydown', onPersonEnter, true);
}

// personWatchFrames hooks the frames of document d: those it loads from now on (an iframe's
// load reaches its document, not its window) and those already there. For the page's own
// document this runs in the task after its load (startPersonNavReports): a capture listener for
// load on the document before then ran for every image and script the page loads (0.22 ms of
// each page's main thread before its load, NOTES.lazy14.md). Adding a listener twice adds it
// once, so a frame met both ways is hooked once.
function personWatchFrames(d) {
  on(d, 'load', onPersonFrameLoad, true);
  try {
    var frames = apply(querySelectorAllDoc, d, ['iframe']);
    var n = apply(nodeListLength, frames, []);
    for (var i = 0; i < n; i++) {
      try {
        hookPersonFrame(apply(nodeListItem, frames, [i]));
      } catch (e) { /* a frame that went, or another origin's */ }
    }
  } catch (e) { /* not a document we can read */ }
}

// startPersonNavReports listens for the person's clicks.
function startPersonNavReports() {
  personListen(win);
  afterLoad(function () {
    personWatchFrames(doc);
  });
  if (typeof personOpen === 'function') {
    replaceMethod(win, 'open', personWindowOpen, true); // not replaceable: a button's popup stays held
  }
  if (navigation && navigateDestination) {
    try {
      on(navigation, 'navigate', onPersonNavigate);
    } catch (e) { /* not an EventTarget here */ }
  }
}
