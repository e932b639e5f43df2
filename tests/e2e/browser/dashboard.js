// Drives Debian's chromium (headless, JavaScript off: the pages must be
// readable without it) through the dashboard of a daemon the calling test
// started and filled.  Prints "PASS name" / "FAIL name: why" lines.
//   PW_URL=http://127.0.0.1:PORT PW_ADMIN=token SHOTS=dir USER_DATA=dir
//   node dashboard.js
'use strict';
const { chromium } = require('playwright-core');
const a11y = require('./a11y');

const url = process.env.PW_URL;
const admin = process.env.PW_ADMIN;
const shots = process.env.SHOTS;
let failed = 0;

function pass(name) { console.log(`PASS ${name}`); }
function fail(name, why) { console.log(`FAIL ${name}: ${why}`); failed = 1; }

async function step(name, fn) {
  try {
    await fn();
    pass(name);
  } catch (e) {
    fail(name, String(e && e.message ? e.message : e).split('\n')[0]);
  }
}

function expect(cond, why) { if (!cond) throw new Error(why); }

(async () => {
  const ctx = await chromium.launchPersistentContext(process.env.USER_DATA, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    javaScriptEnabled: false,
    viewport: { width: 1300, height: 900 },
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

  await step('browser_overview', async () => {
    const r = await page.goto(url + '/');
    expect(r.status() === 200, `status ${r.status()}`);
    expect(await page.title() === 'Overview - perfwatch', `title ${await page.title()}`);
    expect(await page.locator('.badge.v-regression').count() >= 1, 'no regression badge');
    expect(await page.locator('text=hosts online').count() === 1, 'no hosts summary');
    await shot('overview');
  });

  await step('browser_click_to_pair', async () => {
    await page.click('a[href="/pair/3"]');
    expect(page.url() === url + '/pair/3', `at ${page.url()}`);
    const row = page.locator('tr', { hasText: 'ops/s' }).first();
    expect(await row.locator('.badge.v-regression').count() === 1, 'row has no regression badge');
    expect(await page.locator('svg.cibar').count() >= 1, 'no CI bar');
    // Hostile text is shown as text, never as markup.
    expect(await page.locator('text=<script>alert(1)</script>').count() >= 1,
      'hostile point not shown as text');
    expect(await page.locator('script').count() === 0, 'a script element exists');
    await shot('pair');
  });

  await step('browser_click_to_job', async () => {
    // The pair's "cand" link opens the job's page, not its JSON; its log
    // is shown line by line, its markup as text.
    await page.locator('a:text-is("cand")').first().click();
    expect(/\/jobs\/[0-9]+$/.test(page.url()), `at ${page.url()}`);
    expect(await page.locator('h1').innerText() === `Job ${page.url().split('/').pop()}`,
      'no job heading');
    const lines = await page.locator('pre.log span.ln').allInnerTexts();
    expect(lines.length === 3 && lines[0].startsWith('build ok <b>bold</b>') &&
      lines[1] === 'run 0 <i>done</i>' && lines[2] === 'all done', `log lines: ${lines}`);
    await shot('job');
    await page.goBack();
  });

  await step('browser_history_chart', async () => {
    await page.click('a:text-is("ops")');
    expect(page.url().startsWith(url + '/history?'), `at ${page.url()}`);
    const pts = await page.locator('svg.chart circle').count();
    expect(pts === 6, `${pts} points, want 6`);
    expect(await page.locator('svg.chart circle.alert').count() === 1, 'no alert point');
    const title = await page.locator('svg.chart circle.alert title').textContent();
    expect(/regression/.test(title), `alert title: ${title}`);
    const box = await page.locator('svg.chart').boundingBox();
    expect(box && box.width > 300 && box.height > 150, 'chart not laid out');
    await shot('history');
  });

  await step('browser_hosts', async () => {
    await page.click('header a:text-is("Hosts")');
    expect(await page.locator('text=AMD EPYC 7702 <script>').count() === 1, 'cpu model');
    expect(await page.locator('.badge:text-is("online")').count() === 1, 'not online');
    await shot('hosts');
  });

  await step('browser_jobs', async () => {
    await page.click('header a:text-is("Jobs")');
    expect(await page.locator('td .badge.v-success').count() === 6, 'six finished jobs');
    await shot('jobs');
  });

  await step('browser_lists', async () => {
    for (const [nav, h1] of [['Trees', 'Trees'], ['Series', 'Series'],
      ['Bisections', 'Bisections'], ['Alerts', 'Alerts']]) {
      await page.click(`header a:text-is("${nav}")`);
      expect(await page.locator('h1').innerText() === h1, `${nav}: no heading`);
      expect(await page.locator('header a.on').innerText() === nav, `${nav}: not marked`);
      kinds.set(nav.toLowerCase(), page.url());
    }
  });

  await step('browser_login_and_triage', async () => {
    await page.click('header a:text-is("Regressions")');
    await page.click('a:text-is("Log in")');
    kinds.set('login', page.url());
    await page.fill('input[name=token]', admin);
    await page.click('button:text-is("log in")');
    expect(page.url() === url + '/regressions', `after login at ${page.url()}`);
    const form = page.locator('form[action="/regressions/1/triage"]');
    expect(await form.count() === 1, 'no triage form');
    await form.locator('select[name=state]').selectOption('acknowledged');
    await form.locator('input[name=note]').fill('bisecting <now>');
    await form.locator('button').click();
    expect(/\/regressions\?saved=1/.test(page.url()), `after triage at ${page.url()}`);
    expect(await page.locator('#flash').textContent() === 'Regression 1 saved.', 'no flash');
    const f2 = page.locator('form[action="/regressions/1/triage"]');
    expect(await f2.locator('select[name=state]').inputValue() === 'acknowledged', 'state not kept');
    expect(await f2.locator('input[name=note]').inputValue() === 'bisecting <now>', 'note not kept');
    await shot('regressions-triaged');
  });

  await a11y.steps(ctx, kinds, 'browser', step);

  await step('browser_no_console_errors', async () => {
    expect(problems.length === 0, problems.join('; '));
  });
  await ctx.close();
  process.exit(failed);
})().catch((e) => { console.log(`FAIL browser: ${e}`); process.exit(1); });
