// Unit tests of pageagent/rx_run.js's operation sets, alone (with helpers.js).
'use strict';

const assert = require('assert');
const { load, test, done } = require('./load.js');

const a = load(['helpers.js', 'rx_run.js'], ['WRITES', 'OWN_WRITES']);

test('the remixlet\'s own writes are the ops that may unmask a field and the style ops; clicks write as the page', () => {
  const writes = ['setText', 'setAttr', 'addClass', 'removeClass', 'remove', 'insert', 'setHTML'];
  const style = ['setStyle', 'hide', 'show', 'addStyle'];
  for (const name of writes) {
    assert.strictEqual(a.WRITES[name], true, 'WRITES lacks ' + name);
    assert.strictEqual(a.OWN_WRITES[name], true, 'OWN_WRITES lacks ' + name);
  }
  for (const name of style) {
    assert.strictEqual(a.WRITES[name], undefined, 'WRITES holds ' + name);
    assert.strictEqual(a.OWN_WRITES[name], true, 'OWN_WRITES lacks ' + name);
  }
  for (const name of ['click', 'focus', 'query', 'queryAll', 'constructor', 'toString']) {
    assert.strictEqual(a.OWN_WRITES[name], undefined, 'OWN_WRITES holds ' + name);
  }
  assert.strictEqual(Object.keys(a.OWN_WRITES).length, writes.length + style.length);
});

done();
