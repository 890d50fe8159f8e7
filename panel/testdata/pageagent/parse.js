// Checks that each page agent file named on the command line is a valid script on its own, as
// it is and in strict mode (the closure the files run in is strict). node's parser with the
// Script goal: node --check reads a file as CommonJS, which would accept a top-level return.
//
//   node testdata/pageagent/parse.js pageagent/prologue.js pageagent/capture.js ...
'use strict';

const vm = require('vm');
const fs = require('fs');

let failed = 0;
for (const file of process.argv.slice(2)) {
  const src = fs.readFileSync(file, 'utf8');
  let ok = true;
  // 'use strict' is prepended on the first line, so line numbers stay those of the file.
  for (const [mode, text] of [['as it is', src], ['in strict mode', "'use strict';" + src]]) {
    try {
      new vm.Script(text, { filename: file });
    } catch (e) {
      ok = false;
      failed++;
      console.log(file + ' does not parse ' + mode + ':\n' + String(e.stack).split('\n').slice(0, 4).join('\n'));
    }
  }
  if (ok) {
    console.log('ok ' + file);
  }
}
process.exit(failed ? 1 : 0);
