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
// textCandidates answers the chat's candidates (proxy/chat/oracle.go; never the model's): the
// shown clickable elements whose name holds text, as byText finds them, without clicking, so
// that Go picks among those whose redacted name still holds it. All of them, in parts from the
// shown clickable element from (next: where the next part starts, -1 after the last): a list
// cut at a count told, by which elements filled it, whether a name held the text only in a
// secret (pass 5d). Refused on a page with more than MAX_CANDIDATES shown clickable elements,
// a count that does not depend on the text.
var MAX_CANDIDATES = 5000;
var CANDIDATES_PART_BYTES = 200000;
function textCandidates(text, from) {
  var want = normal(text);
  if (want === '') {
    refuse('text must not be blank');
  }
  var scope = topModal();
  var found = scope ? queryIn(scope, CLICKABLE) : queryDoc(CLICKABLE);
  var shown = list();
  var i;
  for (i = 0; i < found.length; i++) {
    if (found[i] !== host && shownLive(found[i])) {
      put(shown, shown.length, found[i]);
    }
  }
  if (shown.length > MAX_CANDIDATES) {
    refuse('click by text refused: the page shows more than ' + MAX_CANDIDATES + ' clickable elements; click by ref (from find, outline or query)');
  }
  var out = list();
  var size = 0;
  for (i = from; i < shown.length && size < CANDIDATES_PART_BYTES; i++) {
    var node = shown[i];
    var ln = localName(node);
    var full = nameOf(node, ln, roleOf(node, ln) || 'button', true);
    var name = normal(full);
    if (contains(name, want)) {
      var c = dict();
      c.ref = refFor(node);
      c.name = name;
      c.shown = collapse(full, 400); // as written: Go redacts it (a key's case matters)
      c.describe = describe(node, false) + containerOf(node);
      put(out, out.length, c);
      size += utf8Length(apply(jsonStringify, null, [c]));
    }
  }
  var res = dict();
  res.candidates = out;
  res.next = i < shown.length ? i : -1;
  res.where = scope ? ' in the open dialog ' + describe(scope, true) : '';
  return res;
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
// that posts elsewhere, formaction and formtarget. It returns what the click leads to. A click
// acts beyond the nearest control: a label passes it to its control (a "Continue" label of a
// POST form's submit button submits that form), and a button that does not submit passes it
// on to a submit button around it; both are followed (depth bounds the labels followed).
function checkActivation(node, origin, depth) {
  var out = dict();
  var lbl = closest(node, 'label');
  var ctl = lbl ? labelledControl(lbl) : null;
  if (ctl && ctl !== node && !within(ctl, node) && !(depth > 2)) {
    var via = checkActivation(ctl, origin, (depth || 0) + 1);
    if (via.submits) {
      out.submits = via.submits;
      out.form = via.form;
      out.submitter = via.submitter;
    }
  }
  var a = closest(node, 'a[href], area[href]');
  if (a) {
    var g = localName(a) === 'a' ? anchorHrefG : areaHrefG;
    var u = parseURLOrNull(g ? '' + apply(g, a, []) : attrStr(a, 'href'), href());
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
    var tg = targetOf(a, ownerDoc(a) || doc);
    if (otherTarget(tg)) {
      refuse('the link opens another window or frame (' + (attrOf(a, 'target') === null ? 'the page\'s <base target=' : 'target=') +
        cut(tg, 40) + (attrOf(a, 'target') === null ? '>' : '') + '); clicking it is refused');
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
  while (b && !out.submits) {
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
      if (otherTarget(ft)) {
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
      break; // the nearest submit button is the one the browser uses
    }
    b = closest(parentOf(b), 'button, input');
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
  while (root && nodeTypeOrZero(root) === 11 && rootHostG) {
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
// seconds (proxy/chat/act.go keeps it, so the page cannot reset it), left out when the
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
// whether the person must allow it first (proxy/chat/submit.go decides; nothing here does):
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
    var act = parseURLOrNull(formActionG ? '' + apply(formActionG, form, []) : href(), href());
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
  if (!node || nodeTypeOrZero(node) !== 1) {
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
  checkArgs(args, 'click', allowed(['ref', 'selector', 'text', 'resubmit', 'recent', 'probe', 'expect', 'candidates', 'from']));
  var ref = strArg(args, 'ref', false, 20);
  var sel = strArg(args, 'selector', false, 1024);
  var txt = strArg(args, 'text', false, 400);
  if (txt !== null && own(args, 'candidates') === true) {
    return textCandidates(txt, intArg(args, 'from', 0, 0, MAX_CANDIDATES));
  }
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
  var cfull = nameOf(node, localName(node), roleOf(node, localName(node)) || 'button', true);
  var cname = normal(cfull);
  recentClick(own(args, 'recent'), cname, what);
  var origin = pageOriginOrEmpty();
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
  agentActs(clickFn, node, []); // person_nav.js: what a handler opens here is the agent's
  var res = dict();
  res.clicked = what;
  res.name = cut(cname, 200);
  // As written, for the chat (proxy/chat/oracle.go): name lowercased hides a key's format from
  // the redaction, so Go shows the model this one redacted, then lowercased, as name.
  res.shownName = collapse(cfull, 400);
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
