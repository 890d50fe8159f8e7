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
    var i;
    for (i = 0; i < n && (linkEl === null || !submitted); i++) {
      var el = path[i];
      if (nodeTypeOrZero(el) !== 1 || nsOf(el) !== HTML_NS) {
        continue;
      }
      var tag = localName(el);
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

// startPersonNavReports listens for the person's clicks.
function startPersonNavReports() {
  on(win, 'click', onPersonClick, true);
  on(win, 'auxclick', onPersonClick, true);
  on(win, 'keydown', onPersonEnter, true);
}
