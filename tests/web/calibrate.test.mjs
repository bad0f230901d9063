// SPDX-License-Identifier: Apache-2.0
// The calibrate panel in headless Chromium: a CSV of measured steps is fitted in the
// page, the fit does not do worse than the defaults, "Apply" prices the shown step
// with it (and puts it in the link), the bundled sample fits the shipped CPU
// parameters back, and a bad file gets an inline error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startForTests, openPage, openDetails, artifactPath, root } from './helpers.mjs';

const env = startForTests();
let dir;
before(() => { dir = mkdtempSync(path.join(tmpdir(), 'stepcalc-calibrate-')); });
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

/** The first `n` steps of the bundled file, as a CSV file in a temp folder. */
function sampleFile(n) {
  const lines = readFileSync(path.join(root, 'data/calibration/h100-vllm-steps-llama-2-70b-tp4.csv'), 'utf8').trim()
    .split('\n');
  const file = path.join(dir, `steps-${n}.csv`);
  writeFileSync(file, lines.slice(0, n + 1).join('\n'));
  return file;
}

const pct = (text) => Number(text.replace('%', ''));

test('a CSV of measured steps is fitted in the page and the fit can be applied', async () => {
  const page = await openPage(env.browser, env.base);
  const uploads = [];
  page.on('request', (r) => { if (r.method() !== 'GET') uploads.push(r.url()); });
  await openDetails(page, '#calibrate');
  await page.setInputFiles('#calibrate-file', sampleFile(60));
  const rows = page.locator('[data-testid="calibration-result"] tbody tr');
  await rows.nth(2).waitFor();
  assert.equal(await rows.count(), 3);
  const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  assert.deepEqual(cells.map((c) => c[0].replace(/:.*/, '')), ['blis-v2', 'corrected (defaults)', 'corrected (fitted']);
  assert.deepEqual(cells.map((c) => c[1]), ['60', '60', '60']);
  const [, defaults, fitted] = cells.map((c) => pct(c[2]));
  assert.ok(fitted <= defaults, `fitted MAPE ${fitted} > default ${defaults}`);
  const [, stepUs, perRequestUs] = cells[2][0].match(/cpu_step_us=([\d.]+), cpu_per_request_us=([\d.]+)/).map(Number);
  assert.match(await page.textContent('[data-testid="calibration-result"]'), /added linearly/);
  await page.screenshot({ path: artifactPath('calibrate.png'), fullPage: true });

  assert.equal(await page.inputValue('#mode'), 'measured'); // the page's first mode
  await page.click('[data-testid="apply-fit"]');
  await page.waitForFunction(() => location.hash.includes('cr='));
  assert.equal(await page.inputValue('#mode'), 'corrected');
  const cr = JSON.parse(new URLSearchParams(new URL(page.url()).hash.slice(1)).get('cr'));
  assert.deepEqual(cr, { params: { cpu_step_us: stepUs, cpu_per_request_us: perRequestUs } });
  assert.match(page.url(), /mode=corrected/);
  assert.deepEqual(uploads, [], 'nothing is sent anywhere');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the bundled sample fits the shipped CPU parameters back', async () => {
  const page = await openPage(env.browser, env.base);
  await openDetails(page, '#calibrate');
  await page.getByRole('button', { name: 'Try it with the bundled sample' }).click();
  const rows = page.locator('[data-testid="calibration-result"] tbody tr');
  await rows.nth(2).waitFor({ timeout: 60000 });
  const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  assert.deepEqual(cells.map((c) => c[1]), ['1251', '1251', '1251']);
  const [, stepUs, perRequestUs] = cells[2][0].match(/cpu_step_us=([\d.]+), cpu_per_request_us=([\d.]+)/).map(Number);
  assert.ok(Math.abs(stepUs - 1700) < 50 && Math.abs(perRequestUs - 14) < 1, cells[2][0]);
  assert.ok(pct(cells[2][2]) <= pct(cells[1][2]));
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a bad CSV or an unknown model shows an inline error and the page keeps working', async () => {
  const page = await openPage(env.browser, env.base);
  await openDetails(page, '#calibrate');
  const bad = path.join(dir, 'bad.csv');
  writeFileSync(bad, 'model,tp\nllama-2-70b,four\n');
  await page.setInputFiles('#calibrate-file', bad);
  const error = page.locator('#calibrate [data-testid="error"]');
  await error.waitFor();
  assert.match(await error.textContent(), /^line 1: the header lacks the columns batch\.prefill_tokens/);

  const lines = readFileSync(sampleFile(3), 'utf8').split('\n');
  const unknown = path.join(dir, 'unknown.csv');
  writeFileSync(unknown, [lines[0], lines[1], lines[2].replace(',llama-2-70b,', ',gpt-9,')].join('\n'));
  await page.setInputFiles('#calibrate-file', unknown);
  await page.waitForFunction(() =>
    /line 3: model "gpt-9"/.test(document.querySelector('#calibrate [data-testid="error"]')?.textContent));

  await page.getByLabel('Prefill 1 new tokens').fill('4096');
  await page.waitForFunction(() => location.hash.includes('p=0.4096'));
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a line asking for 30,000,000 decodes gets its own error at once; the page keeps working', async () => {
  const page = await openPage(env.browser, env.base);
  await openDetails(page, '#calibrate');
  const lines = readFileSync(sampleFile(3), 'utf8').split('\n');
  const header = lines[0].split(',');
  const at = header.indexOf('batch.num_decode_reqs');
  const huge = lines[2].split(',').map((c, i) => (i === at ? '30000000' : c)).join(',');
  const file = path.join(dir, 'huge.csv');
  writeFileSync(file, [lines[0], lines[1], huge, lines[3]].join('\n'));
  await page.setInputFiles('#calibrate-file', file);
  const error = page.locator('#calibrate [data-testid="error"]');
  await error.waitFor({ timeout: 10000 });
  assert.equal(await error.textContent(),
    `line 3, column ${at + 1} (batch.num_decode_reqs): 30000000 requests in one step; a step holds at most 65536 ` +
      `(prefill + decode).`);
  // The page was never blocked: it reprices an edit at once.
  await page.getByLabel('Prefill 1 new tokens').fill('4096');
  await page.waitForFunction(() => location.hash.includes('p=0.4096'));
  assert.deepEqual(page.problems, []);
  await page.close();
});
