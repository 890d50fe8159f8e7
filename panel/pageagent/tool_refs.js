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
