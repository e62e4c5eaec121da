// Browser tests of `ballast serve`: Debian's chromium driven by playwright-core.
//
// Environment: BALLAST (the binary), RESULTS (the results directory to serve),
// SCREENS (optional: a directory for screenshots of the three views).
// Prints one line per check and a JSON summary of the measurements; exits 1 on a failure.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const BALLAST = process.env.BALLAST;
const RESULTS = process.env.RESULTS;
const SCREENS = process.env.SCREENS || '';
if (!BALLAST || !RESULTS) throw new Error('set BALLAST (the binary) and RESULTS (a results directory)');

const measures = {};
let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures += 1;
}

// ---------------------------------------------------------------- helpers

function parseCsv(text) {
  const rows = [];
  let row = [], field = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; }
    else if (c !== '\r') field += c;
  }
  if (field !== '' || row.length) { row.push(field); rows.push(row); }
  return rows;
}

// The items of the results directory, found independently of the server.
function itemsOnDisk(dir, prefix = '') {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.name.startsWith('.')) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...itemsOnDisk(full, prefix + e.name + '/'));
    else if (e.name.endsWith('.json') && fs.existsSync(full.replace(/\.json$/, '.csv'))) {
      try {
        const j = JSON.parse(fs.readFileSync(full, 'utf8'));
        if (j.metadata && j.rows) out.push(prefix + e.name.replace(/\.json$/, ''));
      } catch (_) { /* not an item */ }
    }
  }
  return out;
}

function cli(args) {
  return execFileSync(BALLAST, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function cliError(args) {
  try { cli(args); } catch (e) { return e.stderr.split('\n\nFor more information')[0].replace(/^error: /, '').trim(); }
  throw new Error('expected the command line to refuse ' + args.join(' '));
}

function rssKiB(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return m ? +m[1] : NaN;
}

// Every file under `dir` with its size and modification time, to show nothing was written.
function snapshot(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...snapshot(full));
    else { const st = fs.statSync(full); out.push(`${full} ${st.size} ${st.mtimeMs}`); }
  }
  return out.sort();
}

async function startServer(cwd) {
  const server = spawn(BALLAST, ['serve', '--port', '0', '--results', RESULTS, '--workers', '4', '-q'],
    { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (m) resolve(m[0]);
    });
    server.on('exit', (code) => reject(new Error('ballast serve exited with ' + code)));
    setTimeout(() => reject(new Error('ballast serve printed no address')), 20000);
  });
  return { server, url };
}

async function waitPhase(page, phases, timeout) {
  await page.waitForFunction((p) => p.includes(document.getElementById('run-status').dataset.phase),
    phases, { timeout });
  return page.$eval('#run-status', (e) => e.dataset.phase);
}

async function fillRun(page, process, params, options) {
  await page.selectOption('#process', process);
  for (const [k, v] of Object.entries(params)) await page.fill(`#params [data-param="${k}"]`, v);
  for (const [k, v] of Object.entries(options)) await page.fill(`#opt-${k}`, v);
}

async function tableValue(page, row) {
  return page.$eval(`#result-table tr[data-row="${row}"] td`, (e) => e.textContent);
}

// ---------------------------------------------------------------- tests

async function gallery(ctx, url) {
  const page = await ctx.newPage();
  const t0 = Date.now();
  await page.goto(url + '#gallery');
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#gallery-list li');
  measures.gallery_ready_ms = Date.now() - t0;
  measures.gallery_load_event_ms = await page.evaluate(() => Math.round(performance.getEntriesByType('navigation')[0].loadEventEnd));
  const expected = itemsOnDisk(RESULTS).sort();
  const listed = await page.$$eval('#gallery-list li', (lis) => lis.map((l) => l.dataset.id));
  check(JSON.stringify(listed) === JSON.stringify(expected), `gallery lists every item (${listed.length} of ${expected.length})`);
  let hovered = 0, equal = 0;
  for (const id of expected) {
    await page.click(`#gallery-list li[data-id="${id}"]`);
    await page.waitForSelector(`#item-detail[data-id="${id}"] #item-plot circle.pt`);
    // The last point drawn is on top of every other: nothing covers it.
    const dot = (await page.$$('#item-plot circle.pt')).at(-1);
    const row = +(await dot.getAttribute('data-row'));
    await dot.hover();
    await page.waitForSelector('#tooltip:not([hidden]) .tt-value span');
    const shown = await page.$eval('#tooltip .tt-value span', (e) => e.textContent);
    const csv = parseCsv(fs.readFileSync(path.join(RESULTS, id + '.csv'), 'utf8'));
    const value = csv[row + 1][csv[0].indexOf('value')];
    hovered += 1;
    if (shown === value) equal += 1; else console.log(`  ${id}: hover shows ${shown}, the CSV has ${value}`);
  }
  check(hovered === expected.length && equal === hovered, `a hover shows the CSV's value (${equal} of ${hovered} items)`);
  const first = expected.find((id) => id.includes('fig8_1')) || expected[0];
  await page.click(`#gallery-list li[data-id="${first}"]`);
  await page.waitForSelector(`#item-detail[data-id="${first}"] #item-plot circle.pt`);
  await (await page.$$('#item-plot circle.pt')).at(-1).hover();
  if (SCREENS) await page.screenshot({ path: path.join(SCREENS, 'gallery.png'), fullPage: true });
  await page.close();
}

async function playground(ctx, url) {
  const page = await ctx.newPage();
  const t0 = Date.now();
  await page.goto(url + '#playground');
  await page.waitForSelector('body[data-ready="true"]');
  measures.playground_ready_ms = Date.now() - t0;
  const args = ['--process', 'two_choice', '--n', '1000', '--m', '1000000', '--runs', '10', '--seed', '7'];
  const want = JSON.parse(cli(['simulate', ...args, '--json']));
  await fillRun(page, 'two_choice', {}, { n: '1000', m: '1000000', runs: '10', seed: '7' });
  await page.click('#run');
  check(await waitPhase(page, ['done', 'failed'], 120000) === 'done', 'a playground run of Two-Choice finishes');
  const got = [await tableValue(page, 'gap (mean)'), await tableValue(page, 'gap (stderr)'), await tableValue(page, 'max_load (mean)')];
  const exp = [String(want.gap.mean), String(want.gap.stderr), String(want.statistics.max_load.mean)];
  check(JSON.stringify(got) === JSON.stringify(exp), `Two-Choice n=1000 m=10^6 gives ballast simulate's numbers (${got} vs ${exp})`);
  const command = await page.$eval('#reproduce pre.command', (e) => e.textContent);
  const again = JSON.parse(cli([...command.replace(/^ballast /, '').split(' '), '--json']));
  check(again.gap.mean === want.gap.mean, `the shown command reproduces the run: ${command}`);
  const link = await page.$eval('#share-link', (a) => a.href);
  const shared = await page.context().newPage();
  await shared.goto(link);
  await shared.waitForSelector('body[data-ready="true"]');
  const restored = await shared.$$eval(['#process', '#opt-n', '#opt-m', '#opt-runs', '#opt-seed'].join(','),
    (els) => els.map((e) => e.value));
  check(JSON.stringify(restored) === JSON.stringify(['two_choice', '1000', '1000000', '10', '7']),
    `the run's link restores its form (${restored})`);
  await shared.close();
  // "Compare with": a second process on the same seeds, each the CLI's numbers.
  await fillRun(page, 'one_plus_beta', { beta: '0.5' }, { n: '500', m: '50000', runs: '8', seed: '5' });
  await page.check('#compare-on');
  await page.selectOption('#cmp-process', 'one_choice');
  await page.click('#run');
  check(await waitPhase(page, ['done', 'failed'], 120000) === 'done', 'a compared run finishes');
  const pair = await page.$$eval('#result-table tr[data-row="gap (mean)"] td', (tds) => tds.map((t) => t.textContent));
  const base = ['--n', '500', '--m', '50000', '--runs', '8', '--seed', '5', '--json'];
  const wantPair = [
    JSON.parse(cli(['simulate', '--process', 'one_plus_beta', '--param', 'beta=0.5', ...base])).gap.mean,
    JSON.parse(cli(['simulate', '--process', 'one_choice', ...base])).gap.mean,
  ].map(String);
  check(JSON.stringify(pair) === JSON.stringify(wantPair), `"compare with" gives both processes' CLI numbers (${pair})`);
  if (SCREENS) await page.screenshot({ path: path.join(SCREENS, 'playground.png'), fullPage: true });
  await page.uncheck('#compare-on');

  // Bad input: the command line's messages, next to their fields.
  const beta = cliError(['simulate', '--process', 'one_plus_beta', '--param', 'beta=2', '--n', '10', '--m', '10']);
  await fillRun(page, 'one_plus_beta', { beta: '2' }, { n: '10', m: '10' });
  await page.click('#run');
  await page.waitForFunction(() => document.querySelector('.err[data-field="param:beta"]').textContent !== '');
  check(await page.$eval('.err[data-field="param:beta"]', (e) => e.textContent) === beta, `a bad parameter shows the CLI's message next to it: ${beta}`);
  const nBad = cliError(['simulate', '--process', 'two_choice', '--n', 'abc', '--m', '10']);
  await fillRun(page, 'two_choice', {}, { n: 'abc', m: '10' });
  await page.click('#run');
  await page.waitForFunction(() => document.querySelector('.err[data-field="n"]').textContent !== '');
  check(await page.$eval('.err[data-field="n"]', (e) => e.textContent) === nBad, `a bad --n shows the CLI's message next to it: ${nBad}`);
  await page.close();
}

// Stop ends a long run; another tab's run, interrupted by it, still gives the CLI's numbers.
async function stop(ctx, url) {
  const other = await ctx.newPage();
  await other.goto(url + '#playground');
  await other.waitForSelector('body[data-ready="true"]');
  const args = ['--process', 'two_choice', '--n', '1000', '--m', '1000000', '--runs', '600', '--seed', '3'];
  const want = JSON.parse(cli(['simulate', ...args, '--json']));
  await fillRun(other, 'two_choice', {}, { n: '1000', m: '1000000', runs: '600', seed: '3' });
  const page = await ctx.newPage();
  await page.goto(url + '#playground');
  await page.waitForSelector('body[data-ready="true"]');
  await fillRun(page, 'two_choice', {}, { n: '1000', m: '1000000', runs: '1000000', seed: '1' });
  await page.click('#run');
  await waitPhase(page, ['running'], 10000);
  await other.click('#run');
  await waitPhase(other, ['running'], 10000);
  await page.waitForTimeout(1500);
  const t0 = Date.now();
  await page.click('#stop');
  check(await waitPhase(page, ['stopped', 'done', 'failed'], 60000) === 'stopped', 'Stop ends a long run');
  measures.stop_ms = Date.now() - t0;
  check(await waitPhase(other, ['done', 'failed'], 120000) === 'done', "the other tab's run finishes");
  const restarts = await other.$eval('#run-status', (e) => e.textContent);
  const got = await tableValue(other, 'gap (mean)');
  check(got === String(want.gap.mean), `the other tab's numbers are the CLI's (${got}; ${restarts})`);
  await page.close();
  await other.close();
}

async function animation(ctx, url) {
  const page = await ctx.newPage();
  const t0 = Date.now();
  await page.goto(url + '#animation');
  await page.waitForSelector('body[data-ready="true"]');
  measures.animation_ready_ms = Date.now() - t0;
  await page.click('#animate');
  await page.waitForFunction(() => +document.getElementById('frame-label').dataset.frame >= 1, null, { timeout: 30000 });
  const a = await page.$eval('#frame-label', (e) => +e.dataset.frame);
  await page.waitForTimeout(1000);
  const b = await page.$eval('#frame-label', (e) => +e.dataset.frame);
  const text = await page.$eval('#frame-label', (e) => e.textContent);
  check(b > a && / balls, gap /.test(text), `the animation advances (frame ${a} → ${b}: ${text})`);
  if (SCREENS) await page.screenshot({ path: path.join(SCREENS, 'animation.png'), fullPage: true });
  await page.close();
}

// Four tabs run at once: the server's memory meanwhile; a fifth run is told "busy".
async function fourTabs(ctx, url, pid) {
  const pages = [];
  for (let i = 0; i < 4; i++) {
    const p = await ctx.newPage();
    await p.goto(url + '#playground');
    await p.waitForSelector('body[data-ready="true"]');
    await fillRun(p, 'two_choice', {}, { n: '10000', m: '10000000', runs: '100000', seed: String(i + 1) });
    await p.click('#run');
    await waitPhase(p, ['running'], 10000);
    pages.push(p);
  }
  const fifth = await ctx.newPage();
  await fifth.goto(url + '#playground');
  await fifth.waitForSelector('body[data-ready="true"]');
  await fifth.click('#run');
  await fifth.waitForFunction(() => document.getElementById('form-error').textContent !== '');
  const busy = await fifth.$eval('#form-error', (e) => e.textContent);
  check(busy.startsWith('busy:'), `a fifth run is refused: ${busy}`);
  let peak = 0;
  for (let i = 0; i < 10; i++) { peak = Math.max(peak, rssKiB(pid)); await fifth.waitForTimeout(300); }
  measures.server_rss_4_runs_kib = peak;
  for (const p of pages) await p.click('#stop');
  for (const p of pages) check(await waitPhase(p, ['stopped'], 120000) === 'stopped', 'a tab stops');
  for (const p of [...pages, fifth]) await p.close();
}

async function main() {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'ballast-serve-cwd-'));
  const before = snapshot(RESULTS);
  const { server, url } = await startServer(cwd);
  measures.server_rss_idle_kib = rssKiB(server.pid);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ballast-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
  });
  try {
    for (const [name, test] of [['gallery', gallery], ['playground', playground], ['stop', stop], ['animation', animation]]) {
      try { await test(ctx, url); } catch (e) { check(false, `${name}: ${e.message}`); }
    }
    try { await fourTabs(ctx, url, server.pid); } catch (e) { check(false, `four tabs: ${e.message}`); }
  } finally {
    await ctx.close();
    server.kill('SIGTERM');
    fs.rmSync(profile, { recursive: true, force: true });
  }
  check(fs.readdirSync(cwd).length === 0, 'the server wrote nothing in its working directory');
  check(JSON.stringify(snapshot(RESULTS)) === JSON.stringify(before), 'the results directory is unchanged');
  fs.rmSync(cwd, { recursive: true, force: true });
  console.log('measures ' + JSON.stringify(measures));
  if (failures) { console.log(`${failures} check(s) failed`); process.exit(1); }
  console.log('all browser checks passed');
}

main().catch((e) => { console.error(e); process.exit(1); });
