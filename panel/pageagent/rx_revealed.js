// ---- Password fields the page reveals. -----------------------------------------------------
//
// Part of the page policy (rx_policy.js isSensitive) that must start before any page script: a
// page that turns a password field into a text field before the rest of the page agent arrives
// must not make it an ordinary field. The observer is started by the boot (boot.js).

// revealedPasswords holds the inputs (as keys, value true) that were password fields when the
// page changed their type or autocomplete (watchRevealedPasswords), and clones of them.
var revealedPasswords = new WeakMapCtor();
// watchRevealedPasswords starts an observer of the type and autocomplete attributes of the
// document's elements: an input that stops being a password field (its old type was password,
// or its old autocomplete named a password) stays one for the page policy and the page tools.
// The observer's records arrive before the next operation: a remixlet that presses the page's
// "show password" button reads the field back empty afterwards. Residual: fields inside shadow
// roots (the observer does not see them), and a page that replaces the field with a new text
// input holding the same value.
function watchRevealedPasswords() {
  if (typeof MO !== 'function' || !moObserve || !recordTarget || !recordOldValue) {
    return;
  }
  var mo = new MO(function (records) {
    var n = records.length;
    var i;
    for (i = 0; i < n; i++) {
      try {
        var old = apply(recordOldValue, records[i], []);
        if (typeof old === 'string' && (lower(old) === 'password' || contains(lower(old), 'current-password') ||
            contains(lower(old), 'new-password'))) {
          rememberPassword(apply(recordTarget, records[i], []));
        }
      } catch (e) { /* not a record */ }
    }
  });
  var opts = dict();
  opts.attributes = true;
  opts.attributeOldValue = true;
  opts.subtree = true;
  var names = list();
  put(names, 0, 'type');
  put(names, 1, 'autocomplete');
  opts.attributeFilter = names;
  try {
    apply(moObserve, mo, [doc, opts]);
  } catch (e) { /* no observer: nothing to remember */ }
}
function rememberPassword(node) {
  if (localName(node) === 'input') {
    apply(weakSet, revealedPasswords, [node, true]);
  }
}
