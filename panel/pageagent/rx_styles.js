// Inline styles (dom.setStyle, dom.hide): no loads, no code, nothing that makes a box depend on
// what is typed into a field.

var STYLE_REFUSED = ['url(', '@import', 'expression(', 'image-set(', 'image(', 'element(', 'cross-fade(',
  'src(', 'paint(', 'javascript:', '\\', '/*'];
function styleOfNode(node) {
  var st = styleOf ? apply(styleOf, node, []) : null;
  if (!st || !setProperty || !removeProperty) {
    refuse('this element has no inline style');
  }
  return st;
}
function checkStyleValue(name, value) {
  if (typeof value !== 'string' || value.length > 1024) {
    refuse('style ' + name + ': the value must be a string of at most 1024 characters');
  }
  var v = lower(value);
  var i;
  for (i = 0; i < STYLE_REFUSED.length; i++) {
    if (contains(v, STYLE_REFUSED[i])) {
      refuse('style ' + name + ' refused: inline styles may not contain ' + STYLE_REFUSED[i]);
    }
  }
}
// kebab turns fontWeight into font-weight and refuses anything but a plain property name.
function kebab(name) {
  if (typeof name !== 'string' || name === '' || name.length > 64) {
    refuse('not a CSS property name');
  }
  var out = '';
  var i;
  for (i = 0; i < name.length; i++) {
    var c = apply(charCodeAt, name, [i]);
    if (c >= 65 && c <= 90) {
      out = out + '-' + apply(fromCharCode, null, [c + 32]);
    } else if (c === 45 || (c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      out = out + apply(fromCharCode, null, [c]);
    } else {
      refuse('"' + name + '" is not a CSS property name');
    }
  }
  if (out === 'behavior' || out === '-moz-binding' || out === 'binding') {
    refuse('style ' + out + ' runs code');
  }
  return out;
}

function opSetStyle(t, node, styles) {
  if (styles === null || typeof styles !== 'object') {
    refuse('styles must be an object of property names and values');
  }
  var names = objectKeys(styles);
  if (names.length > 64) {
    refuse('more than 64 style properties');
  }
  var st = styleOfNode(node);
  var i;
  var kebabs = list();
  for (i = 0; i < names.length; i++) {
    put(kebabs, i, kebab(names[i]));
    if (kebabs[i] === 'field-sizing' || kebabs[i] === '-webkit-field-sizing') {
      refuse('style ' + names[i] + ' refused: it makes a field\'s size follow its text, so a password\'s length would show in the layout');
    }
    checkStyleValue(names[i], own(styles, names[i]));
  }
  for (i = 0; i < names.length; i++) {
    apply(setProperty, st, [kebabs[i], own(styles, names[i]), '']);
  }
  mark(t, node, '');
}
