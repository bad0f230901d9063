// SPDX-License-Identifier: Apache-2.0
// ?embed=1 as the README embeds it (480x440): it says what it prices in one line,
// fits, shows the bars that bind in every mode, and a bad link shows an error and no
// number at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, shownStepTime, cliStepTime, artifactPath, startForTests } from './helpers.mjs';

const env = startForTests();

const SIZE = { width: 480, height: 440 };
const link = (request) => `${env.base}?embed=1#json=${encodeURIComponent(JSON.stringify(request))}`;

test('an embed states model, GPU, TP and mode in one line and fits 480x440', async () => {
  const request = { model: 'llama-3.1-70b-instruct', gpu: 'H100', tp: 4,
    step: { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 2048 }],
      decode_requests: Array.from({ length: 64 }, (_, i) => ({ progress_index: 512 + 64 * i })) } };
  for (const colorScheme of ['light', 'dark']) {
    const page = await openPage(env.browser, link(request), SIZE, { colorScheme });
    assert.equal(await shownStepTime(page), cliStepTime(request));
    const context = page.getByTestId('context');
    assert.match(await context.textContent(), /^llama-3\.1-70b-instruct on H100 · TP 4 · mode blis-v2$/);
    const box = await context.boundingBox();
    const lineHeight = await context.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight));
    assert.ok(box.height <= lineHeight * 1.2, `the context takes ${box.height} px (one line is ${lineHeight})`);
    const size = await page.evaluate(() =>
      [document.documentElement.scrollWidth, document.documentElement.scrollHeight]);
    assert.ok(size[0] <= SIZE.width && size[1] <= SIZE.height, `the embed is ${size.join('x')}`);
    const legend = await page.locator('.legend li')
      .evaluateAll((lis) => lis.map((li) => li.getBoundingClientRect().bottom));
    assert.ok(legend.length > 3 && Math.max(...legend) <= SIZE.height, 'the legend is inside the frame');
    await page.screenshot({ path: artifactPath(`embed-${colorScheme}.png`) });
    assert.deepEqual(page.problems, []);
    await page.close();
  }
});

test('a corrected-mode embed shows the bars that bind above the fold', async () => {
  const request = { model: 'llama-3.1-8b-instruct', mode: 'corrected',
    step: { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 2048 }],
      decode_requests: Array.from({ length: 64 }, (_, i) => ({ progress_index: 1000 + i })) } };
  const page = await openPage(env.browser, link(request), SIZE);
  assert.equal(await shownStepTime(page), cliStepTime(request));
  assert.match(await page.getByTestId('context').textContent(), /mode corrected$/);
  const labels = await page.locator('svg.breakdown text.row-label').evaluateAll((els) => els
    .filter((el) => el.getBoundingClientRect().bottom <= 440).map((el) => el.textContent));
  assert.ok(labels.length >= 3, labels.join(' | '));
  assert.ok(labels.slice(0, 3).every((l) => !/not binding/.test(l)), `first bars: ${labels.slice(0, 3).join(' | ')}`);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a bad embed link shows the error and no number', async () => {
  for (const hash of ['#v=1&m=llama-3.1-8b-instruct&d=-5', '#v=1&m=no-such-model&d=100',
    `#json=${encodeURIComponent('{"model":"llama-3.1-8b-instruct","step":{"decode_requests":' +
      '[{"progress_index":-1}]}}')}`]) {
    const page = await env.browser.newPage({ viewport: SIZE });
    await page.goto(`${env.base}?embed=1${hash}`);
    await page.waitForSelector('[data-testid="error"]');
    assert.equal(await page.locator('[data-testid="step-time-us"]').count(), 0, `${hash}: a number is shown`);
    const text = await page.evaluate(() => document.body.innerText);
    assert.ok(!/\d+(\.\d+)? ?(ms|µs)/.test(text), `${hash}: a time is shown: ${text}`);
    assert.equal(await page.locator('svg.breakdown').isVisible().catch(() => false), false);
    assert.doesNotMatch(await page.textContent('[data-testid="error"]'), /default step/,
      'an embed does not offer the default');
    await page.close();
  }
});

test('an embed link naming only model, GPU and TP prices the page\'s default step, not an empty one', async () => {
  const page = await openPage(env.browser, `${env.base}?embed=1#v=1&m=llama-3.1-70b-instruct&g=H100&tp=4`, SIZE);
  const shown = await shownStepTime(page);
  const empty = cliStepTime({ model: 'llama-3.1-70b-instruct', gpu: 'H100', tp: 4, step: {} });
  assert.ok(shown > empty, `${shown} us: the empty step costs ${empty} us`);
  assert.deepEqual(page.problems, []);
  await page.close();
});
