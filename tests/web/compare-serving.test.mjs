// SPDX-License-Identifier: Apache-2.0
// The A/B comparison's serving figures (web/serving-compare.js): A and B served with the
// Serving panel's workload as the CLI serves each, A simulated in the serving worker (posted
// to it, not run on the page's thread), the kernel tables' versions said when they differ,
// and A's simulation ended when A changes while it runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { openPage, root, startForTests } from './helpers.mjs';

const env = startForTests();
const cli = (command, request) => JSON.parse(execFileSync(path.join(root, 'build/stepcalc'),
  request === undefined ? [command] : [command, '-'], { input: request && JSON.stringify(request) }).toString());
const STEP = '#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=measured&p=0.2048&d=512~64*64';

/** Records what the page posts to its serving workers and which workers it ends. */
function recordWorkers(page) {
  return page.addInitScript(() => {
    window.posted = [];
    window.ended = 0;
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (data, ...rest) {
      if (data && 'curve' in data) window.posted.push(data.request ? JSON.parse(JSON.stringify(data.request)) : null);
      // A test that must act while a job runs holds it: the job of a request at TP window.holdTp
      // is never posted, so the worker never answers it (it runs until it is stopped).
      if (data?.request && data.request.tp === window.holdTp) return undefined;
      return post.call(this, data, ...rest);
    };
    const terminate = Worker.prototype.terminate;
    Worker.prototype.terminate = function () {
      window.ended++;
      return terminate.call(this);
    };
  });
}

const cell = (page, figure, side) => page.locator(`[data-testid="compare-serving-table"] tr[data-figure="${figure}"] ` +
  `td:nth-of-type(${side === 'a' ? 1 : 2})`);

test('pin A, change the TP: A and B served with the workload as the CLI serves them, A in the worker', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const tab = await context.newPage();
  tab.problems = [];
  tab.on('pageerror', (e) => tab.problems.push(e.message));
  await recordWorkers(tab);
  await tab.goto(`${env.base}${STEP}`);
  await tab.waitForSelector('[data-testid="step-time-us"]');
  await tab.getByTestId('pin-a').click();
  await tab.fill('#tp', '2');
  // The figures are read in the same frame the comparison is done in: a later price of the page
  // (its measured tables arriving) asks for A again, and the table redraws with A pending.
  const shown = await (await tab.waitForFunction(() => {
    if (document.querySelector('[data-testid="compare-serving"]')?.dataset.state !== 'done') return false;
    const cells = [...document.querySelectorAll('[data-testid="compare-serving-table"] tr[data-figure]')]
      .map((tr) => [tr.dataset.figure, [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.dataset.value)]);
    const figures = Object.fromEntries(cells);
    // B is TP 2 once its TTFT differs from A's (both TP 1 until the edit is served).
    return ['ttft-mean', 'tpot-p90', 'tokens'].every((f) => figures[f]?.every((x) => x !== '')) &&
      figures['ttft-mean'][0] !== figures['ttft-mean'][1] ? figures : false;
  }, null, { timeout: 60000 })).jsonValue();
  const base = { model: 'llama-3.1-8b-instruct', gpu: 'H100', mode: 'measured',
    workload: { input_tokens: 1024, output_tokens: 128, concurrency: 8 } };
  const [a, b] = [cli('serve', { ...base, tp: 1 }), cli('serve', { ...base, tp: 2 })];
  assert.notEqual(a.ttft_ms.mean, b.ttft_ms.mean);
  const want = [['ttft-mean', a.ttft_ms.mean, b.ttft_ms.mean], ['tpot-p90', a.tpot_ms.p90, b.tpot_ms.p90],
    ['tokens', a.throughput.output_tokens_per_s, b.throughput.output_tokens_per_s]];
  for (const [figure, va, vb] of want) {
    assert.equal(Number(shown[figure][0]), va, `A ${figure}`);
    assert.equal(Number(shown[figure][1]), vb, `B ${figure}`);
  }
  // The difference, with the direction that is worse in the error colour.
  const row = await tab.locator('[data-testid="compare-serving-table"] tr[data-figure="ttft-mean"] td')
    .evaluateAll((tds) => tds.map((td) => [td.textContent, td.classList.contains('worse')]));
  assert.match(row[2][0], b.ttft_ms.mean > a.ttft_ms.mean ? /^\+/ : /^−/);
  assert.equal(row[2][1], b.ttft_ms.mean > a.ttft_ms.mean);
  // A was served in the serving worker: posted to it after B (the first is the page's own
  // request before the TP changed, which A then was), not served on the page's thread.
  const posted = await tab.evaluate(() => window.posted.filter(Boolean));
  assert.deepEqual(posted.map((r) => r.tp), [1, 2, 1]);
  assert.deepEqual(posted[2].workload, base.workload);
  assert.deepEqual(tab.problems, []);
  await context.close();
});

test('the kernel tables\' versions are said when A and B differ in them', async () => {
  const h100 = cli('catalogue').gpu_specs.find((g) => g.name === 'H100');
  const other = h100.kernels.find((k) => k !== h100.default_kernels);
  assert.ok(other, 'H100 has two versions of its tables');
  const a = encodeURIComponent(`${STEP.slice(1).replace('&tp=1', `&k=${other}&tp=1`)}`);
  const page = await openPage(env.browser, `${env.base}${STEP}&a=${a}`);
  await page.waitForFunction(() => document.querySelector('[data-testid="compare-serving"]')?.dataset.state === 'done',
    null, { timeout: 60000 });
  assert.equal(await page.getByTestId('compare-diff').textContent(),
    `What changed: kernel tables ${other} → ${h100.default_kernels}.`);
  assert.match(await page.getByTestId('compare-kernels').textContent(),
    new RegExp(`^Kernel tables: A ${other.replace(/\./g, '\\.')}, B ${h100.default_kernels.replace(/\./g, '\\.')}`));
  const base = { model: 'llama-3.1-8b-instruct', gpu: 'H100', tp: 1, mode: 'measured',
    workload: { input_tokens: 1024, output_tokens: 128, concurrency: 8 } };
  assert.equal(Number(await cell(page, 'tpot-mean', 'a').getAttribute('data-value')),
    cli('serve', { ...base, kernels: other }).tpot_ms.mean);
  // Same tables: nothing said.
  await page.getByRole('button', { name: 'Make the shown step A' }).click();
  await page.waitForFunction(() => !document.querySelector('[data-testid="compare-kernels"]'));
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('A changed while its simulation runs: that simulation ends, and the comparison follows', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await recordWorkers(page);
  await page.goto(`${env.base}${STEP}&sv=1024_2048_c256_n2000_u0`);
  await page.waitForSelector('[data-testid="step-time-us"]');
  await page.getByTestId('pin-a').click();
  // A (TP 1) is held: its simulation cannot end before A changes, however slow or fast the machine.
  await page.evaluate(() => { window.holdTp = 1; });
  await page.fill('#tp', '2');
  // B's own simulation first, then A's: wait for A's.
  await page.waitForFunction(() => /Simulating A for the comparison/.test(
    document.querySelector('[data-testid="serve-status"]')?.textContent), null, { timeout: 120000 });
  const ended = await page.evaluate(() => window.ended);
  await page.getByTestId('unpin-a').click();
  // A's job ended (its worker terminated) and nothing says it is simulating A any more.
  await page.waitForFunction((n) => window.ended > n, ended, { timeout: 5000 });
  assert.doesNotMatch(await page.getByTestId('serve-status').textContent(), /Simulating A/);
  // The comparison panel is redrawn among the page's follow-up tasks (web/result-view.js), after
  // the job has ended: on a loaded machine a few frames later.
  await page.locator('#compare-section').waitFor({ state: 'hidden', timeout: 10000 });
  assert.equal(await page.locator('[data-testid="compare-serving"]').textContent(), '');
  await context.close();
});
