// SPDX-License-Identifier: Apache-2.0
// The calculator page in headless Chromium: it prices what the CLI prices, its links
// round-trip, it embeds, and bad input gets an inline error without losing anything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { openPage, shownStepTime, cliStepTime, pageRequest, artifactPath, root, startForTests, settle, useConfig,
  closeWithoutErrors } from './helpers.mjs';

const env = startForTests();

/** Two animation frames: the page reprices within one. */

async function assertMatchesCli(page) {
  await settle(page);
  const request = await pageRequest(page);
  assert.equal(await shownStepTime(page), cliStepTime(request),
    `page and CLI differ for ${JSON.stringify(request).slice(0, 300)}`);
  return request;
}

test('the first view prices the default step exactly as the CLI does', async () => {
  const page = await openPage(env.browser, env.base);
  const request = await assertMatchesCli(page);
  assert.equal(request.model, 'llama-3.1-8b-instruct');
  assert.equal(request.tp, 1);
  assert.deepEqual(request.step.prefill_requests, [{ progress_index: 0, num_new_prefill_tokens: 2048 }]);
  assert.equal(request.step.decode_requests.length, 64);
  assert.match(page.url(), /#v=1&m=llama-3\.1-8b-instruct&/);
  // The headline says how far this mode's step times were from measured vLLM steps.
  const accuracy = JSON.parse(readFileSync(path.join(root, 'docs/accuracy.json'), 'utf8'));
  const checked = page.getByTestId('step-accuracy');
  await checked.waitFor();
  const mode = await page.inputValue('#mode');
  const other = mode === 'blis-v2' ? 'corrected' : 'blis-v2';
  assert.match(await checked.textContent(), new RegExp(`${mode} misses measured vLLM step times by ` +
    `${accuracy.modes[mode].mape.toFixed(2)}% on average over ${accuracy.steps.toLocaleString('en-US')} steps`));
  await page.selectOption('#mode', other);
  await settle(page);
  assert.match(await checked.textContent(),
    new RegExp(`${other} misses .* by ${accuracy.modes[other].mape.toFixed(2)}%`));
  await page.selectOption('#mode', mode);
  await settle(page);
  await page.waitForSelector('table.lookups', { state: 'attached' }); // in a closed <details>
  assert.equal(await page.locator('svg.breakdown').count(), 1);
  assert.equal(await page.locator('#sweeps svg.line').count(), 3);
  assert.ok((await page.locator('table.lookups tbody tr').count()) > 10);
  await page.evaluate(() => { document.querySelector('#io').open = false; scrollTo(0, 0); });
  // The summary strip's serving figures are in (they come from a simulation in a worker).
  await page.waitForFunction(() => document.querySelector('#summary').dataset.serving === 'done', null,
    { timeout: 60000 });
  await page.screenshot({ path: artifactPath('page-desktop.png') });
  // The artifact stays in test-results/; STEPCALC_UPDATE_SCREENSHOT=1 also refreshes
  // the README's picture (so a test run never dirties the working tree by itself).
  if (process.env.STEPCALC_UPDATE_SCREENSHOT === '1') {
    copyFileSync(artifactPath('page-desktop.png'), path.join(root, 'docs/screenshot.png'));
  }
  await page.screenshot({ path: artifactPath('page-desktop-full.png'), fullPage: true });
  await page.setViewportSize({ width: 360, height: 780 });
  await settle(page);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 360), 'no sideways scrolling at 360 px');
  await page.screenshot({ path: artifactPath('page-360.png'), fullPage: true });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('editing the model, machine and rows reprices like the CLI, and the link round-trips', async () => {
  const page = await openPage(env.browser, env.base);
  await page.selectOption('#model-preset', 'qwen2.5-7b-instruct');
  await page.getByLabel('Prefill 1 new tokens').fill('4096');
  await assertMatchesCli(page);

  await page.fill('[data-bulk="decode-count"]', '40');
  await page.fill('[data-bulk="decode-kv"]', '1000');
  await page.fill('[data-bulk="decode-kv-to"]', '9000');
  await page.getByRole('button', { name: 'Add decodes' }).click();
  await page.getByRole('button', { name: 'Remove decode 1', exact: true }).click();
  await page.getByRole('button', { name: 'Duplicate decode 3', exact: true }).click();
  await page.getByLabel('Decode 2 KV length').fill('30000');
  await page.fill('[data-bulk="prefill-total"]', '5000');
  await page.fill('[data-bulk="prefill-chunk"]', '2048');
  await page.fill('[data-bulk="prefill-index"]', '3');
  await page.getByRole('button', { name: 'Add this step\'s chunk' }).click();
  let request = await assertMatchesCli(page);
  assert.equal(request.step.decode_requests.length, 64 + 40);
  assert.deepEqual(request.step.prefill_requests.slice(1).map((r) => [r.progress_index, r.num_new_prefill_tokens]),
    [[4096, 904]]);

  await page.fill('#tp', '2');
  await page.click('#hw-constants summary'); // the reference modes' constants, folded in measured
  await page.fill('input[name="bwEfficiencyFactor"]', '0.9');
  await page.fill('input[name="hidden_size"]', '4096');
  request = await assertMatchesCli(page);
  assert.equal(typeof request.model, 'object');
  assert.equal(request.hardware.bwEfficiencyFactor, 0.9);
  assert.equal(request.tp, 2);

  const link = page.url();
  const shown = await shownStepTime(page);
  const again = await openPage(env.browser, link);
  assert.equal(await shownStepTime(again), shown);
  assert.deepEqual(await pageRequest(again), request);
  assert.equal(again.url(), link, 'the reopened page writes the same link');
  assert.deepEqual([...page.problems, ...again.problems], []);
  await page.close();
  await again.close();
});

test('a #json= link prices the given request, config object and all', async () => {
  const config = JSON.parse(readFileSync(path.join(root, 'presets/models/deepseek-v2-lite.json'), 'utf8'));
  const request = {
    model: config, gpu: 'H100', hardware: { TFlopsPeak: 900, perLayerOverhead: 80 }, tp: 1, mode: 'blis-v2',
    step: {
      prefill_requests: [{ progress_index: 1000, num_new_prefill_tokens: 3000 }],
      decode_requests: Array.from({ length: 20 },
        (_, i) => ({ progress_index: 100 * i + 7, num_new_decode_tokens: 1 })),
    },
  };
  const page = await openPage(env.browser, `${env.base}#json=${encodeURIComponent(JSON.stringify(request))}`);
  assert.equal(await shownStepTime(page), cliStepTime(request));
  assert.match(await page.textContent('.warnings'), /mixture-of-experts/);
  assert.match(page.url(), /#v=1&ms=27_2048_16_16_10944_102400_2&mx=/,
    'the page rewrites the link in its compact form');
  await closeWithoutErrors(page);
});

test('the page shows exactly the core\'s warnings, none of its own', async () => {
  const config = JSON.parse(readFileSync(path.join(root, 'presets/models/deepseek-v2-lite.json'), 'utf8'));
  const requests = [
    { model: config, tp: 1, step: { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 512 }],
      decode_requests: [{ progress_index: 900 }] } },
    { model: 'llama-2-7b-hf', tp: 3, step: { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 700 }] } },
  ];
  for (const request of requests) {
    const page = await openPage(env.browser, `${env.base}#json=${encodeURIComponent(JSON.stringify(request))}`);
    await settle(page);
    const out = execFileSync(path.join(root, 'build/stepcalc'), ['price'], { input: JSON.stringify(request) });
    const expected = JSON.parse(out.toString()).warnings.map((w) => w.message);
    assert.ok(expected.length > 0);
    assert.deepEqual(await page.locator('ul.warnings li').allTextContents(), expected);
    await page.close();
  }
});

test('?embed=1 renders the compact widget with a link to the full calculator', async () => {
  const request = { model: 'llama-3.1-70b-instruct', tp: 4, step: { decode_requests: [{ progress_index: 4096 }] } };
  const page = await openPage(env.browser, `${env.base}?embed=1#json=${encodeURIComponent(JSON.stringify(request))}`,
    { width: 480, height: 420 });
  assert.equal(await shownStepTime(page), cliStepTime(request));
  assert.ok(await page.isVisible('svg.breakdown'));
  assert.equal(await page.isVisible('#model-panel'), false);
  assert.equal(await page.isVisible('#sweeps'), false);
  const href = await page.getAttribute('#open-full', 'href');
  assert.equal(new URL(href).search, '', 'the full calculator, not another embed');
  assert.match(new URL(href).hash, /^#v=1&m=llama-3\.1-70b-instruct&g=H100&tp=4&/);
  await page.screenshot({ path: artifactPath('page-embed.png') });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a malformed config or a bad field shows an inline error; the last result and the typing stay', async () => {
  const page = await openPage(env.browser, env.base);
  const before = await shownStepTime(page);
  await page.locator('details.config summary').click();
  await useConfig(page, '{"num_hidden_layers": 32, "hidden_size": ');
  await page.waitForSelector('.config [data-testid="error"]');
  assert.match(await page.textContent('.config [data-testid="error"]'), /not a config\.json/);
  await useConfig(page, '{"num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 8, "torch_dtype": "f7"}');
  assert.match(await page.textContent('.config [data-testid="error"]'), /torch_dtype.*Unknown dtype 'f7'/);
  assert.equal(await shownStepTime(page), before);

  await page.getByLabel('Decode 5 KV length').fill('12x');
  await settle(page);
  const note = page.locator('#step-panel [data-testid="error"]');
  assert.equal(await note.count(), 1);
  assert.equal(await page.getByLabel('Decode 5 KV length').getAttribute('aria-invalid'), 'true');
  assert.equal(await shownStepTime(page), before, 'the last good result stays');
  assert.equal(await page.getByLabel('Decode 5 KV length').inputValue(), '12x', 'the typing stays');
  await page.fill('#tp', '0');
  await settle(page);
  assert.ok((await page.locator('[data-testid="error"]').count()) >= 2);

  await page.fill('#tp', '1');
  await page.getByLabel('Decode 5 KV length').fill('120000');
  await useConfig(page,
    '{"num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 8, "torch_dtype": "bfloat16"}');
  await assertMatchesCli(page);
  await closeWithoutErrors(page);
});

test('hostile or broken links show an error and keep the defaults', async () => {
  const page = await openPage(env.browser, env.base);
  const defaults = await shownStepTime(page);
  const payload = '<img src=x onerror="window.pwned=1">';
  const links = [
    '#json=%7Bnot json',
    '#json=%E0%A4%A',
    `#json=${encodeURIComponent(JSON.stringify({ model: payload, step: {} }))}`,
    `#v=1&m=${encodeURIComponent(payload)}&p=&d=`,
    '#v=1&m=llama-3.1-8b-instruct&d=1*999999',
    '#v=1&m=llama-3.1-8b-instruct&d=1.2.3',
    `#json=${'x'.repeat(300000)}`,
    '#v=9',
  ];
  for (const hash of links) {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await page.waitForSelector('#link-error [data-testid="error"]');
    assert.equal(await shownStepTime(page), defaults, hash.slice(0, 40));
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForSelector('#link-error [data-testid="error"]', { state: 'detached' });
  }
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.equal(await page.locator('img').count(), 0);
  assert.deepEqual(page.problems, []);
  await page.close();
});
