// SPDX-License-Identifier: Apache-2.0
// The Model panel's Hugging Face box against a stubbed Hub (page.route: no request leaves the
// machine): a model id's config.json priced as `build/stepcalc price` prices the file, named
// after the id; hf_quant_config.json folded in; gated, missing, unreachable, not-JSON and
// oversized answers said in words with the model unchanged; a bad id never fetched; a slow
// answer overtaken by a newer id, or by a model picked meanwhile, never used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openPage, shownStepTime, nextStepTime, cliStepTime, pageRequest, root, startForTests, settle,
  closeWithoutErrors } from './helpers.mjs';
import { parseHubId } from '../../web/hf-model.js';

const env = startForTests();
const HUB = 'https://huggingface.co';
const configs = path.join(root, 'data/silicon/model_configs');
const read = (file) => readFileSync(path.join(configs, file), 'utf8');

/**
 * Opens the page with the Hub stubbed by `answer(url, route)` (it fulfils or aborts the route);
 * `page.hub` lists every URL the page asked the Hub for.
 */
async function withHub(answer) {
  const page = await openPage(env.browser, env.base);
  page.hub = [];
  await page.route(`${HUB}/**`, async (route) => {
    page.hub.push(route.request().url());
    await answer(route.request().url(), route);
  });
  return page;
}

/** Answers a file of the stubbed Hub. */
const json = (route, body, status = 200) =>
  route.fulfill({ status, contentType: 'application/json', body, headers: { 'access-control-allow-origin': '*' } });
const missing = (route) => json(route, '{"error":"Entry not found"}', 404);

/** Types `id` into the box and presses Enter. */
async function fetchId(page, id) {
  await page.fill('#hf-id', id);
  await page.press('#hf-id', 'Enter');
}

/** Waits for the box to be done with a fetch ('done', 'error', 'dropped'); returns its state. */
async function boxState(page, wanted) {
  await page.waitForFunction((w) => w.includes(document.querySelector('[data-testid="hf-status"]')?.dataset.state),
    wanted);
  return page.getAttribute('[data-testid="hf-status"]', 'data-state');
}

/** The error shown under the box. */
const boxError = (page) => page.locator('#model-panel .hub [data-testid="error"]').textContent();

/** The page's console problems, without Chromium's line for each 404 the stubbed Hub answered. */
const problems = (page) => page.problems.filter((p) => !/status of 404/.test(p));

test('a model id: its config.json priced as the CLI prices the file, named after the id, in the link', async () => {
  const config = read('Qwen--Qwen3-32B_config.json').replace(/"num_hidden_layers":\s*64/, '"num_hidden_layers": 48');
  assert.match(config, /"num_hidden_layers": 48/, 'not a preset: 48 of Qwen3-32B\'s 64 layers');
  const page = await withHub((url, route) =>
    (url === `${HUB}/acme/Qwen3-Lite-48L/resolve/main/config.json` ? json(route, config) : missing(route)));
  const before = await shownStepTime(page);
  await fetchId(page, 'https://huggingface.co/acme/Qwen3-Lite-48L/tree/main');
  assert.equal(await boxState(page, ['done', 'error']), 'done', await page.textContent('#model-panel'));
  const shown = await nextStepTime(page, before);
  assert.deepEqual(page.hub, [`${HUB}/acme/Qwen3-Lite-48L/resolve/main/config.json`,
    `${HUB}/acme/Qwen3-Lite-48L/resolve/main/hf_quant_config.json`]);
  const request = await pageRequest(page);
  assert.equal(request.model_name, 'qwen3-lite-48l', 'the id\'s last segment, as a preset of that name');
  assert.equal(request.mode, 'measured');
  assert.equal(shown, cliStepTime({ ...request, model: JSON.parse(config) }));
  assert.match(page.url(), /#v=1&ms=48_5120_64_8_25600_151936_2&mx=.*&mn=qwen3-lite-48l&/);
  assert.match(await page.textContent('[data-testid="hf-status"]'), /Using the config\.json of acme\/Qwen3-Lite-48L/);
  assert.equal(await page.getAttribute('[data-testid="hf-status"] a', 'href'), `${HUB}/acme/Qwen3-Lite-48L`);
  assert.equal(await page.inputValue('#config-text'), config, 'the config box holds the config in use');
  // The link keeps it as a config model: reopened (no Hub), the same price.
  const again = await openPage(env.browser, page.url());
  assert.equal(await shownStepTime(again), shown);
  assert.equal((await pageRequest(again)).model_name, 'qwen3-lite-48l');
  await closeWithoutErrors(again);
  assert.deepEqual(problems(page), []);
  await page.close();
});

test('a Hub model keeps its id (org/Name, as written) in the link, and the Plan panel\'s vllm serve line names it',
  async () => {
    const config = read('Qwen--Qwen3-32B_config.json').replace(/"num_hidden_layers":\s*64/, '"num_hidden_layers": 48');
    const page = await withHub((url, route) =>
      (url === `${HUB}/acme/Qwen3-Lite-48L/resolve/main/config.json` ? json(route, config) : missing(route)));
    await fetchId(page, 'acme/Qwen3-Lite-48L');
    assert.equal(await boxState(page, ['done', 'error']), 'done', await page.textContent('#model-panel'));
    await settle(page);
    assert.match(page.url(), /&mn=qwen3-lite-48l&mh=acme%2FQwen3-Lite-48L&/);
    // Reopened from the link (no Hub): the plan of the page's model is served as the Hub id.
    const again = await openPage(env.browser, page.url());
    await again.click('#plan > summary');
    await again.getByTestId('plan-run').waitFor();
    const gpus = await again.locator('[data-testid^="plan-gpu-"]').evaluateAll((boxes) =>
      boxes.map((b) => b.getAttribute('data-testid')));
    for (const g of gpus) await again.getByTestId(g).setChecked(g === 'plan-gpu-H100');
    for (const t of [2, 4, 8]) await again.getByTestId(`plan-tp-${t}`).setChecked(false);
    await again.getByTestId('plan-tp-1').setChecked(true);
    await again.getByTestId('plan-run').click();
    await again.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#plan-body').dataset.run),
      null, { timeout: 60000 });
    assert.match(await again.getByTestId('plan-vllm').textContent(),
      /^vllm serve acme\/Qwen3-Lite-48L --tensor-parallel-size 1 /);
    await closeWithoutErrors(again);
    // Another model forgets it.
    await page.selectOption('#model-preset', 'qwen3-32b');
    await settle(page);
    assert.doesNotMatch(page.url(), /mh=/);
    assert.deepEqual(problems(page), []);
    await page.close();
  });

test('a ModelOpt checkpoint: hf_quant_config.json folded into quantization_config, priced as the CLI', async () => {
  const config = read('nvidia--Llama-3.1-70B-Instruct-FP8_config.json');
  const quant = read('nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant_config.json');
  const page = await withHub((url, route) => {
    if (url.endsWith('/nvidia/Llama-3.1-70B-Instruct-FP8/resolve/main/config.json')) return json(route, config);
    if (url.endsWith('/nvidia/Llama-3.1-70B-Instruct-FP8/resolve/main/hf_quant_config.json')) return json(route, quant);
    return missing(route);
  });
  await page.fill('#tp', '4');
  await settle(page);
  const before = await shownStepTime(page);
  await fetchId(page, 'nvidia/Llama-3.1-70B-Instruct-FP8');
  assert.equal(await boxState(page, ['done', 'error']), 'done');
  const shown = await nextStepTime(page, before);
  assert.match(await page.textContent('[data-testid="hf-status"]'), /hf_quant_config\.json \(ModelOpt\) folded/);
  // Folded as tools/validate-ledger.mjs folds it; the file's own config has the BF16 preset's shape.
  const folded = { ...JSON.parse(config),
    quantization_config: { quant_method: 'modelopt', ...JSON.parse(quant).quantization } };
  assert.deepEqual(JSON.parse(await page.inputValue('#config-text')), folded);
  assert.equal(await page.inputValue('#model-preset'), '__custom', 'not the BF16 preset llama-3.1-70b-instruct');
  const request = await pageRequest(page);
  assert.equal(request.tp, 4);
  assert.equal(shown, cliStepTime({ ...request, model: folded }));
  assert.notEqual(shown, cliStepTime({ ...request, model: JSON.parse(config) }), 'the fold changes the price');
  assert.match(await page.getByTestId('model-words').textContent(), /FP8 weights.*FP8 KV cache/);
  assert.deepEqual(problems(page), []);
  await page.close();
});

test('a gated model (401): said in words, with the model page and how to paste the file instead', async () => {
  const page = await withHub((url, route) => route.fulfill({ status: 401, body: 'Access restricted',
    headers: { 'access-control-allow-origin': '*' } }));
  const link = page.url();
  const before = await shownStepTime(page);
  await fetchId(page, 'meta-llama/Llama-3.1-8B-Instruct');
  assert.equal(await boxState(page, ['done', 'error']), 'error');
  const error = await boxError(page);
  assert.match(error, /meta-llama\/Llama-3\.1-8B-Instruct is a gated or private model: huggingface\.co answered 401/);
  assert.match(error, /accept the licence .*download config\.json .*paste it in the config box below/);
  assert.equal(await page.getAttribute('#model-panel .hub [data-testid="error"] a', 'href'),
    `${HUB}/meta-llama/Llama-3.1-8B-Instruct`);
  assert.deepEqual(page.hub, [`${HUB}/meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json`]);
  await settle(page);
  assert.equal(page.url(), link, 'the model is unchanged');
  assert.equal(await shownStepTime(page), before);
  await page.close();
});

test('404, a network failure, not JSON, too large: each said, the model unchanged', async () => {
  const huge = `{"pad": "${'x'.repeat(1.2 * (1 << 20))}"}`;
  const page = await withHub((url, route) => {
    if (url.includes('/acme/gone/')) return missing(route);
    if (url.includes('/acme/offline/')) return route.abort('internetdisconnected');
    if (url.includes('/acme/html/')) return route.fulfill({ status: 200, contentType: 'text/html',
      body: '<!doctype html><title>Sign in</title>', headers: { 'access-control-allow-origin': '*' } });
    return json(route, huge);
  });
  const link = page.url();
  const before = await shownStepTime(page);
  const cases = [
    ['acme/gone', /No such model or no config\.json: huggingface\.co has no acme\/gone\/config\.json \(404\)/],
    ['acme/offline', /could not fetch config\.json of acme\/offline from huggingface\.co.*paste it in the config box/],
    ['acme/html', /not JSON for config\.json of acme\/html/],
    ['acme/huge', /config\.json of acme\/huge is larger than 1 MB/],
  ];
  for (const [id, words] of cases) {
    await fetchId(page, id);
    assert.equal(await boxState(page, ['done', 'error']), 'error', id);
    assert.match(await boxError(page), words, id);
  }
  await settle(page);
  assert.equal(page.url(), link);
  assert.equal(await shownStepTime(page), before);
  assert.equal(await page.inputValue('#config-text'), '', 'the config box is untouched');
  await page.close();
});

test('a config the core refuses: its words under the box, the model unchanged, and a button to edit it', async () => {
  const config = JSON.parse(read('Qwen--Qwen3-32B_config.json'));
  config.torch_dtype = 'float7';
  const page = await withHub((url, route) =>
    (url.endsWith('/config.json') ? json(route, JSON.stringify(config)) : missing(route)));
  const link = page.url();
  await fetchId(page, 'acme/no-dtype');
  assert.equal(await boxState(page, ['done', 'error']), 'error');
  assert.match(await boxError(page),
    /of acme\/no-dtype from huggingface\.co cannot be priced \(torch_dtype\): Unknown dtype 'float7'/);
  await settle(page);
  assert.equal(page.url(), link);
  assert.equal(await page.inputValue('#config-text'), '', 'the config box is untouched until asked');
  await page.getByRole('button', { name: 'Edit it in the config box' }).click();
  assert.deepEqual(JSON.parse(await page.inputValue('#config-text')), config);
  assert.equal(await page.isVisible('#config-text'), true);
  assert.match(await page.locator('details.config [data-testid="error"]').textContent(), /\(torch_dtype\)/);
  await page.close();
});

test('a bad id is an error naming the field, and nothing is fetched', async () => {
  const page = await withHub((url, route) => missing(route));
  for (const [typed, words] of [
    ['', /Hugging Face model id: type one/],
    ['not a valid id!', /Hugging Face model id: "not a valid id!" is not a model id/],
    ['org/name/extra', /is not a model id/],
    ['acme/bad--name', /is not a model id/],
    [`acme/${'a'.repeat(97)}`, /is not a model id.*at most 96 characters/],
    ['https://example.com/acme/model', /is a link to another site/],
    ['https://huggingface.co/datasets/acme/data', /is not a link to a model page/],
  ]) {
    await fetchId(page, typed);
    assert.equal(await boxState(page, ['invalid', 'done', 'error']), 'invalid', typed);
    assert.match(await boxError(page), words, typed);
  }
  await settle(page);
  assert.deepEqual(page.hub, [], 'no request reached the Hub');
  await page.close();
});

test('the id parser takes ids and huggingface.co links, and names the model after the id', () => {
  for (const [typed, id] of [
    ['Qwen/Qwen2.5-7B-Instruct', 'Qwen/Qwen2.5-7B-Instruct'],
    ['  https://huggingface.co/Qwen/Qwen2.5-7B-Instruct  ', 'Qwen/Qwen2.5-7B-Instruct'],
    ['huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json', 'Qwen/Qwen2.5-7B-Instruct'],
    ['https://hf.co/openai/gpt-oss-20b?x=1#files', 'openai/gpt-oss-20b'],
    ['gpt2', 'gpt2'],
  ]) assert.equal(parseHubId(typed).id, id, typed);
  assert.equal(parseHubId('Qwen/Qwen2.5-7B-Instruct').name, 'qwen2.5-7b-instruct');
});

test('a slow answer is dropped: overtaken by a newer id (aborted), or by a model picked meanwhile', async () => {
  const first = read('Qwen--Qwen3-32B_config.json').replace(/"num_hidden_layers":\s*64/, '"num_hidden_layers": 40');
  const second = read('Qwen--Qwen3-32B_config.json').replace(/"num_hidden_layers":\s*64/, '"num_hidden_layers": 36');
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  let asked;
  const seen = new Promise((resolve) => { asked = resolve; });
  const page = await withHub(async (url, route) => {
    if (url.endsWith('/acme/slow/resolve/main/config.json')) {
      asked();
      await held;
      return json(route, first).catch(() => {}); // the page aborted it: there is nothing to answer
    }
    if (url.endsWith('/acme/quick/resolve/main/config.json')) return json(route, second);
    return missing(route);
  });
  const failed = [];
  page.on('requestfailed', (r) => failed.push(r.url()));
  await fetchId(page, 'acme/slow');
  await seen;
  await fetchId(page, 'acme/quick'); // typing aborts the slow fetch; Enter fetches the new id
  assert.equal(await boxState(page, ['done', 'error']), 'done');
  assert.match(page.url(), /&ms=36_.*&mn=quick&/);
  release();
  await settle(page);
  assert.ok(failed.includes(`${HUB}/acme/slow/resolve/main/config.json`), 'the slow fetch was aborted');
  assert.match(page.url(), /&ms=36_.*&mn=quick&/, 'the newer id stays');
  assert.match(await page.textContent('[data-testid="hf-status"]'), /Using the config\.json of acme\/quick/);

  // A model picked while an answer is on its way wins over the answer.
  let releaseLate;
  const late = new Promise((resolve) => { releaseLate = resolve; });
  await page.unroute(`${HUB}/**`);
  await page.route(`${HUB}/**`, async (route) => {
    if (route.request().url().endsWith('/config.json')) {
      await late;
      return json(route, first);
    }
    return missing(route);
  });
  await fetchId(page, 'acme/late');
  await page.waitForFunction(() => document.querySelector('[data-testid="hf-status"]').dataset.state === 'fetching');
  await page.selectOption('#model-preset', 'qwen3-14b');
  await page.waitForFunction(() => /&m=qwen3-14b&/.test(location.hash));
  releaseLate();
  assert.equal(await boxState(page, ['dropped', 'done', 'error']), 'dropped');
  assert.match(await page.textContent('[data-testid="hf-status"]'), /Not used: the model was changed/);
  await settle(page);
  assert.match(page.url(), /&m=qwen3-14b&/);
  await page.close();
});
