// SPDX-License-Identifier: Apache-2.0
// Expert- and data-parallel layouts on the page (vLLM's --data-parallel-size and
// --enable-expert-parallel): the setup panel's DP ranks and expert-parallel box make the
// request's dp and ep (ep = TP x DP when on), priced and served as the CLI prices and serves
// them, kept in the link, and refused in words at their own field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { cliStepTime, openPage, pageRequest, root, startForTests } from './helpers.mjs';

const env = startForTests();
const LINK = '#v=1&m=qwen3-30b-a3b&g=H100&tp=2&ep=4&dp=2&mode=measured&p=0.2048&d=1000~10*32';

const stepValue = async (page) => Number(await page.getAttribute('[data-testid="step-time-us"]', 'value'));
/** Waits for the step time to change from `before`; returns the new one. */
async function repriced(page, before) {
  await page.waitForFunction((b) =>
    document.querySelector('[data-testid="step-time-us"]').getAttribute('value') !== String(b), before);
  return stepValue(page);
}

test('a link\'s DP and EP are priced as the CLI prices them, and said beside the step time', async () => {
  const page = await openPage(env.browser, `${env.base}${LINK}`);
  assert.equal(await page.isChecked('#ep'), true);
  assert.equal(await page.inputValue('#dp'), '2');
  const request = await pageRequest(page);
  assert.deepEqual([request.tp, request.ep, request.dp], [2, 4, 2]);
  assert.equal(await stepValue(page), cliStepTime(request));
  assert.match(await page.textContent('body'), /qwen3-30b-a3b on H100 · TP 2 · DP 2 · EP 4 · mode measured/);
  assert.match(await page.getByTestId('ep-hint').textContent(), /EP 4/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('expert parallelism follows TP and DP; off with DP 2 each expert is split over TP x DP, priced as the CLI does',
  async () => {
    const page = await openPage(env.browser, `${env.base}${LINK}`);
    let before = await stepValue(page);
    await page.fill('#tp', '4');
    before = await repriced(page, before);
    await page.waitForFunction(() => /&tp=4&ep=8&dp=2&/.test(location.hash));
    let request = await pageRequest(page);
    assert.deepEqual([request.tp, request.ep, request.dp], [4, 8, 2]);
    assert.equal(before, cliStepTime(request));
    // Off: each expert sliced over the TP x DP GPUs (vLLM without --enable-expert-parallel).
    await page.uncheck('#ep');
    before = await repriced(page, before);
    await page.waitForFunction(() => /&tp=4&dp=2&mode=/.test(location.hash));
    request = await pageRequest(page);
    assert.deepEqual([request.tp, request.ep, request.dp], [4, undefined, 2]);
    assert.equal(before, cliStepTime(request));
    assert.equal(await page.getAttribute('#dp', 'aria-invalid'), null);
    assert.match(await page.getByTestId('ep-hint').textContent(), /split over TP × DP/);
    await page.check('#ep');
    await repriced(page, before);
    await page.waitForFunction(() => /&tp=4&ep=8&dp=2&/.test(location.hash));
    await page.fill('#dp', '1');
    await page.waitForFunction(() => /&tp=4&ep=4&mode=/.test(location.hash));
    request = await pageRequest(page);
    assert.deepEqual([request.tp, request.ep, request.dp], [4, 4, undefined]);
    assert.equal(await stepValue(page), cliStepTime(request));
    // A dense model has no experts to spread: the core says so at the box.
    await page.selectOption('#model-preset', 'llama-3.1-8b-instruct');
    await page.waitForFunction(() => document.querySelector('#ep').getAttribute('aria-invalid') === 'true');
    await page.uncheck('#ep');
    await page.waitForFunction(() => !/&ep=/.test(location.hash));
    assert.deepEqual(page.problems, []);
    await page.close();
  });

test('one GPU (TP 1, DP 1): the box waits, disabled, and raising TP spreads the experts as it asked', async () => {
  const page = await openPage(env.browser, `${env.base}${LINK}`);
  let before = await stepValue(page);
  await page.fill('#dp', '1');
  before = await repriced(page, before);
  await page.fill('#tp', '1');
  before = await repriced(page, before);
  await page.waitForFunction(() => /&tp=1&mode=/.test(location.hash)); // no ep=, no dp=
  assert.equal(await page.isDisabled('#ep'), true);
  assert.equal(await page.isChecked('#ep'), true); // the wish, kept
  assert.match(await page.getByTestId('ep-hint').textContent(), /one GPU/);
  let request = await pageRequest(page);
  assert.deepEqual([request.tp, request.ep, request.dp], [1, undefined, undefined]);
  assert.equal(before, cliStepTime(request));
  await page.fill('#tp', '2');
  await repriced(page, before);
  await page.waitForFunction(() => /&tp=2&ep=2&mode=/.test(location.hash));
  assert.equal(await page.isDisabled('#ep'), false);
  assert.equal(await page.isChecked('#ep'), true);
  request = await pageRequest(page);
  assert.deepEqual([request.tp, request.ep], [2, 2]);
  // Off at TP 2, then one GPU again: the box stays off, and TP 2 again keeps each expert split by TP.
  await page.uncheck('#ep');
  await page.waitForFunction(() => /&tp=2&mode=/.test(location.hash));
  await page.fill('#tp', '1');
  await page.waitForFunction(() => /&tp=1&mode=/.test(location.hash));
  assert.equal(await page.isChecked('#ep'), false);
  await page.fill('#tp', '2');
  await page.waitForFunction(() => /&tp=2&mode=/.test(location.hash));
  assert.equal(await page.isChecked('#ep'), false);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the Serving panel serves the layout: one rank simulated with its share of the clients, as the CLI', async () => {
  const page = await openPage(env.browser, `${env.base}${LINK}`);
  await page.locator('#serving-panel').scrollIntoViewIfNeeded();
  await page.getByTestId('ttft').waitFor();
  await page.waitForFunction(() => /ranks of/.test(document.querySelector('[data-testid="serve-summary"]')
    ?.textContent ?? ''), null, { timeout: 60000 });
  const summary = await page.getByTestId('serve-summary').textContent();
  assert.match(summary, /2 ranks of 2 × H100/);
  const step = await pageRequest(page);
  const workload = { input_tokens: Number(await page.getByTestId('serve-input').inputValue()),
    output_tokens: Number(await page.getByTestId('serve-output').inputValue()),
    concurrency: Number(await page.getByTestId('serve-load').inputValue()) };
  const { step: _s, ...serve } = step;
  const cli = JSON.parse(execFileSync(path.join(root, 'build/stepcalc'), ['serve'],
    { input: JSON.stringify({ ...serve, workload }) }).toString());
  assert.equal(Number(await page.getByTestId('ttft').getAttribute('data-value')), cli.ttft_ms.mean);
  assert.deepEqual(page.problems, []);
  await page.close();
});
