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
