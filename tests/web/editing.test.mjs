// SPDX-License-Identifier: Apache-2.0
// Editing as a first-time user does: errors in the page's words (the JSON path stays
// in the API), no invalid value echoed, "1,000" accepted, the chunk of THIS step,
// a pasted preset config recognised, a bad link kept in the address bar, a fit that
// says what it was fitted on, and file:// explained.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openPage, shownStepTime, nextStepTime, cliStepTime, pageRequest, root, startForTests, settle,
  useConfig, openDetails, closeWithoutErrors } from './helpers.mjs';

const env = startForTests();


test('a bad field shows an error in the page\'s words; the summary echoes no invalid value', async () => {
  const page = await openPage(env.browser, env.base);
  await page.getByLabel('Decode 1 KV length').fill('-1');
  await settle(page);
  const note = page.locator('#step-panel [data-testid="error"]');
  assert.equal(await note.textContent(), 'Decode row 1: KV length must not be negative.');
  const summary = await page.locator('#step-panel .summary').textContent();
  assert.doesNotMatch(summary, /-1/, summary);
  assert.match(summary, /1 row with an error/);
  await page.fill('#tp', '0');
  await settle(page);
  assert.match(await page.locator('#setup-panel [data-testid="error"]').textContent(),
    /^TP degree must be at least 1\.$/);
  const all = await page.locator('[data-testid="error"]').allTextContents();
  assert.ok(all.every((t) => !/step\.|progress_index|\[\d+\]/.test(t)), all.join(' | '));
  await page.close();
});

test('shapes and TP degrees vLLM refuses are said so: errors from the core, warnings at the TP field', async () => {
  // blis-v2 prices such a TP with a warning (measured refuses it, as vLLM does).
  const page = await openPage(env.browser,
    `${env.base}#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=blis-v2&p=0.2048&d=512~64*64`);
  const before = await shownStepTime(page);
  await page.fill('input[name="num_key_value_heads"]', '48');
  await settle(page);
  assert.equal(await page.locator('#model-panel [data-testid="error"]').textContent(),
    'Model: KV heads (48) must divide attention heads (32): each KV head serves an equal group of query heads.');
  assert.equal(await shownStepTime(page), before, 'nothing is priced from it');
  await page.fill('input[name="num_key_value_heads"]', '5');
  await settle(page);
  assert.match(await page.locator('#model-panel [data-testid="error"]').textContent(), /KV heads \(5\) must divide/);
  await page.fill('input[name="num_key_value_heads"]', '8');
  for (const [tp, words] of [['12', /TP 12 and the 8 KV heads do not divide one another: vLLM refuses/],
    ['3', /TP 3 does not divide the 32 attention heads: vLLM refuses/],
    ['64', /TP 64 is more than the 32 attention heads: vLLM refuses/]]) {
    await page.fill('#tp', tp);
    await page.waitForFunction((t) => new URLSearchParams(location.hash.slice(1)).get('tp') === t, tp);
    assert.match(await page.getByTestId('tp-warning').textContent(), words);
  }
  await page.fill('#tp', '8');
  await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('tp') === '8');
  assert.equal(await page.getByTestId('tp-warning').isVisible(), false);
  // bytes/param says what it does in this mode, and that this compute-bound step does not change.
  assert.match(await page.getByTestId('bytes-note').textContent(), /memory traffic only .*does not change/);
  await page.close();
});

test('"1,000" and "2_048" are numbers', async () => {
  const page = await openPage(env.browser, env.base);
  const before = await shownStepTime(page);
  await page.getByLabel('Decode 1 KV length').fill('1,000');
  await page.getByLabel('Prefill 1 new tokens').fill('4_096');
  await nextStepTime(page, before);
  const request = await pageRequest(page);
  assert.equal(request.step.decode_requests[0].progress_index, 1000);
  assert.equal(request.step.prefill_requests[0].num_new_prefill_tokens, 4096);
  // The first edit may be priced on its own before the second: wait for the price of both.
  const expected = cliStepTime(request);
  await page.waitForFunction((v) =>
    document.querySelector('[data-testid="step-time-us"]')?.getAttribute('value') === String(v), expected)
    .catch(() => {});
  assert.equal(await shownStepTime(page), expected);
  assert.equal(await page.locator('[data-testid="error"]').count(), 0);
  await page.close();
});

test('the bulk prefill adds the chunk this step runs, with the prompt before it as cached prefix', async () => {
  const page = await openPage(env.browser, env.base);
  await page.getByRole('button', { name: 'Clear prefills' }).click();
  await page.fill('[data-bulk="prefill-total"]', '16384');
  await page.fill('[data-bulk="prefill-chunk"]', '2048');
  await page.fill('[data-bulk="prefill-prefix"]', '1000');
  await page.fill('[data-bulk="prefill-index"]', '3');
  assert.match(await page.locator('#step-panel .bulk small').last().textContent(),
    /chunk 3 of 8, 2,048 new tokens after a cached prefix of 5,096/);
  await page.getByRole('button', { name: 'Add this step\'s chunk' }).click();
  await page.fill('[data-bulk="prefill-index"]', '8');
  await page.getByRole('button', { name: 'Add this step\'s chunk' }).click();
  await settle(page);
  const request = await pageRequest(page);
  assert.deepEqual(request.step.prefill_requests.map((r) => [r.progress_index, r.num_new_prefill_tokens]),
    [[5096, 2048], [15336, 1048]]);
  assert.equal(await shownStepTime(page), cliStepTime(request));
  await page.fill('[data-bulk="prefill-index"]', '9');
  await page.getByRole('button', { name: 'Add this step\'s chunk' }).click();
  assert.match(await page.locator('#step-panel [data-testid="error"]').textContent(), /whole number from 1 to 8/);
  await page.close();
});

test('a pasted config identical to a preset is recognised as that preset', async () => {
  const page = await openPage(env.browser, env.base);
  const config = readFileSync(path.join(root, 'presets/models/qwen2.5-7b-instruct.json'), 'utf8');
  await page.locator('details.config summary').click();
  await useConfig(page, config);
  await page.waitForFunction(() => /qwen2\.5-7b-instruct/.test(location.hash));
  assert.match(page.url(), /&m=qwen2\.5-7b-instruct&/);
  assert.equal(await page.inputValue('#model-preset'), 'qwen2.5-7b-instruct');
  assert.match(await page.locator('#model-panel p.muted').first().textContent(), /is the preset qwen2\.5-7b-instruct/);
  // One change and it is a config of its own again.
  await useConfig(page, config.replace(/"num_hidden_layers":\s*28/, '"num_hidden_layers": 27'));
  await page.waitForFunction(() => /&ms=27_/.test(location.hash));
  await page.close();
});

test('a pasted MoE FP8 config prices in measured as the CLI prices the config itself, and its link too', async () => {
  // The page keeps what the measured mode reads (experts, top-k, the FP8 format and the modules
  // it leaves in BF16), not the shape alone, which priced this MoE as a dense BF16 model; and a
  // config with a preset's shape and notes but other experts is not that preset.
  const text = readFileSync(path.join(root, 'data/silicon/model_configs/Qwen--Qwen3-235B-A22B-FP8_config.json'), 'utf8')
    .replace(/"num_experts_per_tok":\s*8/, '"num_experts_per_tok": 4');
  assert.match(text, /"num_experts_per_tok": 4/);
  const page = await openPage(env.browser, env.base);
  const before = await shownStepTime(page);
  await page.locator('details.config summary').click();
  await useConfig(page, text);
  const shown = await nextStepTime(page, before);
  assert.equal(await page.inputValue('#model-preset'), '__custom', 'not the preset qwen3-235b-a22b-fp8');
  const request = { ...await pageRequest(page), model: JSON.parse(text) };
  delete request.model_name;
  assert.equal(request.mode, 'measured');
  assert.equal(shown, cliStepTime(request));
  assert.match(await page.getByTestId('model-words').textContent(), /mixture of experts/);
  const again = await openPage(env.browser, page.url());
  assert.equal(await shownStepTime(again), shown, 'the link prices it the same');
  await closeWithoutErrors(again);
  await page.close();
});

test('a bad link stays in the address bar so it can be fixed', async () => {
  const bad = '#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=blis-v2&p=0.2048&d=512,-3';
  const page = await openPage(env.browser, `${env.base}${bad}`);
  await page.waitForSelector('#link-error [data-testid="error"]');
  await settle(page);
  assert.equal(new URL(page.url()).hash, bad);
  assert.match(await page.textContent('#link-error'), /decode rows.*fix the address/s);
  // Fixed in place (a hashchange), it prices.
  await page.evaluate(() => { location.hash = location.hash.replace(',-3', ',3'); });
  await page.waitForSelector('#link-error [data-testid="error"]', { state: 'detached' });
  assert.equal((await pageRequest(page)).step.decode_requests[1].progress_index, 3);
  // A bad link opened over edits keeps the edits.
  await page.getByLabel('Decode 1 KV length').fill('777');
  await settle(page);
  await page.evaluate((h) => { location.hash = h; }, bad);
  await page.waitForSelector('#link-error [data-testid="error"]');
  assert.equal((await pageRequest(page)).step.decode_requests[0].progress_index, 777);
  assert.match(await page.textContent('#link-error'), /Your step is still shown/);
  await page.close();
});

test('a compact link\'s error is one plain sentence: no label before its words, no JSON path after', async () => {
  const page = await openPage(env.browser, `${env.base}#v=1&m=llama-3.1-8b-instruct&g=H100&tp=abc&d=5`);
  await page.waitForSelector('#link-error [data-testid="error"]');
  assert.equal(await page.textContent('#link-error [data-testid="error"]'),
    'This link\'s step cannot be shown: the link\'s TP "abc" is not a whole number. The default step is shown ' +
    'below; fix the address or edit the step.');
  // A compact link the core refuses: the page's words, without "(at tp)".
  await page.evaluate(() => { location.hash = '#v=1&m=llama-3.1-8b-instruct&g=H100&tp=0&d=5'; });
  await page.waitForFunction(() => /TP degree must be at least 1/.test(document.querySelector('#link-error')
    ?.textContent ?? ''));
  assert.doesNotMatch(await page.textContent('#link-error'), /\(at tp\)/);
  // A #json= link keeps the path it can be fixed at.
  const json = encodeURIComponent(JSON.stringify({ model: 'llama-3.1-8b-instruct', tp: 0, step: {} }));
  await page.evaluate((j) => { location.hash = `#json=${j}`; }, json);
  await page.waitForFunction(() =>
    /TP degree must be at least 1 \(at tp\)\./.test(document.querySelector('#link-error')?.textContent ?? ''));
  await page.close();
});

test('"Apply fitted parameters" says what the fit was made from', async () => {
  const page = await openPage(env.browser, env.base);
  await openDetails(page, '#calibrate');
  await page.getByRole('button', { name: /bundled sample/ }).click();
  await page.waitForSelector('[data-testid="fit-source"]', { timeout: 120000 });
  const text = await page.textContent('[data-testid="fit-source"]');
  assert.match(text, /^Fitted on the bundled sample: 1,251 steps of llama-2-70b-hf at TP 4\./);
  assert.match(text, /The step shown is llama-3\.1-8b-instruct at TP 1/);
  await page.close();
});

test('opened from file:// the page says what to do instead of hanging', async () => {
  const page = await env.browser.newPage();
  await page.goto(`file://${path.join(root, 'index.html')}`);
  const note = page.locator('.file-note');
  await note.waitFor({ state: 'visible' });
  await page.waitForFunction(() => getComputedStyle(document.querySelector('.file-note')).opacity === '1');
  assert.match(await note.textContent(), /npm start/);
  await page.close();
  const served = await openPage(env.browser, env.base);
  assert.equal(await served.locator('.file-note').isVisible(), false);
  await served.close();
});
