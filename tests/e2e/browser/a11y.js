// Accessibility of the dashboard's pages: axe-core (from the npm
// registry, package.json) run in each; what it calls serious or critical
// (contrast, form labels, table headers, ...) is a failure.  The tests
// browse with scripts off, and axe needs them (it waits on timers), so
// the check loads each page again in a browser of its own with scripts
// on and the same cookies (a logged-in page stays logged in); the pages
// have no scripts of their own, so they are the same pages.
//   const a11y = require('./a11y');
//   a11y.loaded()                false when axe-core cannot be loaded (SKIP)
//   await a11y.check(ctx, url)   [] or one "rule: target (why)" per problem
//   await a11y.close()
//   await a11y.steps(ctx, kinds, prefix, step)
//                                a step PREFIX_a11y_NAME for each NAME -> url
//                                of the Map kinds, then close(); one line
//                                "SKIP PREFIX_a11y" when axe-core is missing
'use strict';
const fs = require('fs');
const { chromium } = require('playwright-core');

let source = null;
try {
  source = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
} catch (e) {
  source = null;
}
let browser = null;

function loaded() { return source !== null; }

const run = `
axe.run(document, { resultTypes: ['violations'] }).then((r) =>
  r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => v.nodes.slice(0, 3).map((n) =>
      v.id + ': ' + n.target.join(' ') + ' (' +
        (n.failureSummary || v.help).replace(/\\s+/g, ' ').slice(0, 200) + ')')
      .concat(v.nodes.length > 3 ? [v.id + ': ' + (v.nodes.length - 3) + ' more'] : []))
    .flat())`;

async function check(from, url) {
  if (browser === null) {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update',
        '--disable-sync'],
    });
  }
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  try {
    await ctx.addCookies(await from.cookies());
    const page = await ctx.newPage();
    const r = await page.goto(url);
    if (r.status() !== 200) return [`${url}: status ${r.status()}`];
    await page.evaluate(source);
    return await page.evaluate(run);
  } finally {
    await ctx.close();
  }
}

async function close() {
  if (browser !== null) await browser.close();
  browser = null;
}

async function steps(ctx, kinds, prefix, step) {
  if (!loaded()) {
    console.log(`SKIP ${prefix}_a11y: axe-core cannot be loaded (npm ci in tests/e2e/browser)`);
    return;
  }
  for (const [name, at] of kinds) {
    await step(`${prefix}_a11y_${name}`, async () => {
      const bad = await check(ctx, at);
      if (bad.length > 0) throw new Error(`${at}: ${bad.join('; ')}`);
    });
  }
  await close();
}

module.exports = { loaded, check, close, steps };
