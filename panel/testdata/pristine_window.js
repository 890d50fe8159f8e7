'use strict';
// pristineWindow stands, in the harnesses' fake DOMs, for the window of the fresh realm the page
// agent makes for the captures it takes late (pageagent/fresh_realm.js): each global class a
// function whose prototype holds the original prototype's own properties, and g's own
// properties, copied when it is called — after the fake DOM is installed, before the agent or any
// page script runs. Both harnesses run it inside their vm context (serialised with toString).
function pristineWindow(g) {
  const defineProperty = Object.defineProperty;
  const pristine = {};
  for (const k of Reflect.ownKeys(g)) {
    const d = Object.getOwnPropertyDescriptor(g, k);
    const C = d.value;
    if (typeof C === 'function' && C.prototype) {
      const copy = function () {};
      const p = {};
      for (const name of Reflect.ownKeys(C.prototype)) defineProperty(p, name, Object.getOwnPropertyDescriptor(C.prototype, name));
      copy.prototype = p;
      d.value = copy;
    }
    defineProperty(pristine, k, d);
  }
  return pristine;
}

module.exports = { pristineWindow };
