// Playwright's side of the outline benchmark (see main.go): loads each page with playwright-core
// driving Debian's Chromium (never a downloaded browser) and measures the full-page
// ariaSnapshot. Input on stdin: {"chromium": PATH, "args": [FLAGS], "urls": [URL], "host": HOST};
// output: one JSON object per line, {url, chars, interactive, error}.
//
//   cd e2e/outlinebench && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-save playwright-core
'use strict';

process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const ROLES = ['link', 'button', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'slider',
  'spinbutton', 'listbox', 'switch'];

function interactiveLines(snap) {
  let n = 0;
  for (const line of snap.split('\n')) {
    const t = line.trimStart();
    if (ROLES.some((r) => t.startsWith('- ' + r + ' ') || t.startsWith('- ' + r + ':') || t === '- ' + r)) n++;
  }
  return n;
}

async function main() {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const req = JSON.parse(input);
  const browser = await chromium.launch({ executablePath: req.chromium, args: req.args, headless: true });
  try {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    // Only the corpus host: third-party subresources fail at once, as in the proxied run.
    await context.route('**/*', (route) => {
      const u = new URL(route.request().url());
      return u.hostname === req.host ? route.continue() : route.abort();
    });
    const page = await context.newPage();
    for (const url of req.urls) {
      const out = { url };
      try {
        await page.goto(url, { waitUntil: 'load', timeout: 20000 });
        const snap = await page.locator(':root').ariaSnapshot({ timeout: 30000 });
        out.chars = [...snap].length;
        out.interactive = interactiveLines(snap);
        if (req.dump) {
          fs.writeFileSync(path.join(req.dump, path.basename(new URL(url).pathname, '.html') + '.aria.txt'), snap);
        }
      } catch (e) {
        out.error = String(e && e.message || e).split('\n')[0];
      }
      process.stdout.write(JSON.stringify(out) + '\n');
    }
  } finally {
    await browser.close();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
