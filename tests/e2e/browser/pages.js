// Every page kind of the dashboard, in Debian's chromium (headless,
// JavaScript off), on data made by real runs: the demo's daemon (its
// commits, the mailed series, the tcp_rr pair).  Each page is checked for
// what a kernel developer looks for first, and kept as a screenshot.
// Prints "PASS name" / "FAIL name: why" lines.
//   PW_URL=http://127.0.0.1:PORT FIX=sha NOOP=sha SERIES=id PAIR=id
//   SHOTS=dir USER_DATA=dir node pages.js
'use strict';
const { chromium } = require('playwright-core');
const a11y = require('./a11y');

const url = process.env.PW_URL;
const shots = process.env.SHOTS;
let failed = 0;

function pass(name) { console.log(`PASS ${name}`); }
function fail(name, why) { console.log(`FAIL ${name}: ${why}`); failed = 1; }
function expect(cond, why) { if (!cond) throw new Error(why); }

async function step(name, fn) {
  try {
    await fn();
    pass(name);
  } catch (e) {
    fail(name, String(e && e.message ? e.message : e).split('\n')[0]);
  }
}

(async () => {
  const ctx = await chromium.launchPersistentContext(process.env.USER_DATA, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    javaScriptEnabled: false,
    viewport: { width: 1400, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update',
      '--disable-sync'],
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  // Each page kind shot is checked for accessibility at the end.
  const kinds = new Map();
  const shot = (name) => {
    kinds.set(name, page.url());
    return page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
  };
  const visit = async (path) => {
    const r = await page.goto(url + path);
    expect(r.status() === 200, `${path}: status ${r.status()}`);
    // No page is wider than a 1400-pixel window.
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(w <= 1400, `${path} is ${w} px wide`);
  };
  // The first table of the "What changed" section, as text.
  const changed = () => page.locator('h2:text("What changed") + table').innerText();

  await step('pages_overview', async () => {
    await visit('/');
    expect(await page.locator('.badge.v-improvement').count() >= 1, 'no improvement badge');
    expect(await page.locator('.badge.v-regression').count() >= 1, 'no regression badge (the revert)');
    // No group without a branch: the mailed series sits under the branch
    // it targets (demo / master), not under "demo / ".
    const heads = await page.locator('main h2').allInnerTexts();
    expect(heads.every((h) => !/ \/ ?$/.test(h)), `groups: ${heads.join(' | ')}`);
    expect(await page.locator(`a[href="/series/${process.env.SERIES}"]`).count() >= 1,
      'the series is not on the overview');
    await shot('demo-overview');
  });

  await step('pages_commit_of_the_fix', async () => {
    await visit('/commit/' + process.env.FIX);
    const t = await changed();
    expect(/ns_per_op/.test(t) && /improvement/.test(t), `changed table: ${t.slice(0, 200)}`);
    // The changed metric comes before the memcg facts and the telemetry.
    const html = await page.content();
    expect(html.indexOf('What changed') < html.indexOf('<h2>memcg</h2>'), 'memcg section first');
    expect(!/-1[0-9]{3}\.[0-9]{2}%/.test(html), 'a four-digit percentage');
    // What it was compared with: the parent's sha, linked, and subject.
    const base = page.locator('td.side-base a[href^="/commit/"]');
    expect(await base.count() === 1, 'no linked base commit');
    const bt = await page.locator('td.side-base').innerText();
    expect(/^[0-9a-f]{12} \S/.test(bt), `compared with: ${bt}`);
    // Its report, mailed to the demo's SMTP server and posted to its
    // webhook receiver, is listed with where it went.
    const alerts = await page.locator('h2:text("Alerts") + table').innerText();
    expect(/email/.test(alerts) && /webhook/.test(alerts) && /sent/.test(alerts) &&
      /memcg-perf@demo\.example\.org/.test(alerts), `alerts table: ${alerts.slice(0, 300)}`);
    await shot('demo-commit');
  });

  await step('pages_commit_of_the_noop', async () => {
    await visit('/commit/' + process.env.NOOP);
    expect(await page.locator('text=No metric changed beyond its min_effect').count() === 1,
      'the no-op page does not say that nothing changed');
  });

  await step('pages_series', async () => {
    await visit('/series/' + process.env.SERIES);
    const t = await changed();
    expect(/regression/.test(t), `changed table: ${t.slice(0, 200)}`);
    expect(await page.locator('tr.patch').count() === 1, 'one patch row');
    // The one patch is the tip: it carries the series' verdict.
    expect(await page.locator('tr.patch .badge.v-regression').count() === 1,
      'the patch row has no regression badge');
    await shot('demo-series');
  });

  await step('pages_pair_memcg_tax', async () => {
    await visit('/pair/' + process.env.PAIR);
    const html = await page.content();
    expect(html.includes('<h2>memcg</h2>') && html.includes('memcg_tax.throughput'),
      'no memcg section with the tax');
    // Both sides named once, in "What was compared": the demo submits
    // this pair without commits (the same build, root memcg vs nested),
    // and the page says so.
    const sides = await page.locator('table.sides tr.side').allInnerTexts();
    expect(sides.length === 2 && /^base\b/.test(sides[0]) && /^candidate\b/.test(sides[1]) &&
      sides.every((t) => /no commit/.test(t)), `sides: ${sides.join(' | ')}`);
    expect(await page.locator('td.side-base, td.side-cand').count() === 0,
      'the head repeats the sides');
    await shot('demo-pair');
  });

  await step('pages_history_change_point', async () => {
    await visit('/history?job=demo-stock&metric=ns_per_op&tree=demo&branch=master');
    expect(await page.locator('svg .cp').count() >= 1, 'no change point drawn');
    await shot('demo-history');
  });

  await step('pages_regressions_grouped', async () => {
    await visit('/regressions');
    expect(await page.locator('tr.report').count() >= 1, 'no report header row');
    const t = (await page.locator('tr.report').allInnerTexts()).join(' | ');
    expect(/drain the per-cpu charge stock again .*demo-stock on demo-runner/.test(t),
      `reports: ${t}`);
    // The mailed revert's report links its series.
    expect(await page.locator(`tr.report a[href="/series/${process.env.SERIES}"]`).count() >= 1,
      'the series report does not link its series');
    await shot('demo-regressions');
  });

  await step('pages_hosts', async () => {
    await visit('/hosts');
    expect(await page.locator('text=demo-runner').count() >= 1, 'no demo-runner');
    await shot('demo-hosts');
  });

  await step('pages_jobs', async () => {
    await visit('/jobs');
    expect(await page.locator('.badge.v-success').count() >= 10, 'fewer than 10 finished jobs');
    await shot('demo-jobs');
  });

  await step('pages_lists', async () => {
    // The series, bisections and alerts, each a page linked from the
    // header, with the demo's rows.
    await visit('/');
    await page.click('header a:text-is("Series")');
    expect(await page.locator(`a[href="/series/${process.env.SERIES}"]`).count() >= 1,
      'the series list does not list the series');
    await shot('demo-series-list');
    await page.click('header a:text-is("Alerts")');
    const alerts = await page.locator('table').first().innerText();
    expect(/email/.test(alerts) && /webhook/.test(alerts), `alerts: ${alerts.slice(0, 300)}`);
    await shot('demo-alerts');
    await page.click('header a:text-is("Bisections")');
    expect(await page.locator('h1:text-is("Bisections")').count() === 1, 'no bisections page');
    await shot('demo-bisections');
  });

  await step('pages_job_from_pair', async () => {
    // A pair's "base" link opens the job's page, its log line by line.
    await visit('/pair/' + process.env.PAIR);
    await page.locator('a:text-is("base")').first().click();
    expect(/\/jobs\/[0-9]+$/.test(page.url()), `at ${page.url()}`);
    expect(/^Job [0-9]+ - perfwatch$/.test(await page.title()), `title ${await page.title()}`);
    // Long lines wrap: the page stays within the window.
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(w <= 1400, `the job page is ${w} px wide`);
    const lines = await page.locator('pre.log span.ln').count();
    expect(lines >= 2, `${lines} log lines`);
    await shot('demo-job');
  });

  await a11y.steps(ctx, kinds, 'pages', step);

  await step('pages_no_console_errors', async () => {
    expect(problems.length === 0, problems.join('; '));
  });
  await ctx.close();
  process.exit(failed);
})().catch((e) => { console.log(`FAIL pages: ${e}`); process.exit(1); });
