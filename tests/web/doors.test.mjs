// SPDX-License-Identifier: Apache-2.0
// Every door of the page is as strict as the core: a pasted or dropped config, JSON
// Import and a #json= link are checked by the core as written (repeated keys, unknown
// keys in rows, long ids, too many tags, a too-long config name), with the CLI's error
// path; the page works when served under "//"; a dropped config updates a focused
// shape field; a bad link opened over the user's step keeps that step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { openPage, shownStepTime, nextStepTime, cliStepTime, root, startForTests, settle, useConfig,
  closeWithoutErrors } from './helpers.mjs';

const env = startForTests();

const STEP = '"step":{"decode_requests":[{"progress_index":512}]}';
const CONFIG = '"hidden_size":512,"num_attention_heads":8,"torch_dtype":"bfloat16"';

/** The CLI's error for request text: {code, path}. */
function cliError(text) {
  const r = spawnSync(`${root}/build/stepcalc`, ['price', '-'], { input: text });
  const { error } = JSON.parse(r.stdout.toString());
  return error && { code: error.code, path: error.path };
}

const IMPORTS = [
  ['two tp keys', `{"model":"llama-3.1-8b-instruct","tp":1,"tp":8,${STEP}}`],
  ['a repeated key in a config', `{"model":{"num_hidden_layers":2,"num_hidden_layers":64,${CONFIG}},${STEP}}`],
  ['an unknown key in a decode row',
    '{"model":"llama-3.1-8b-instruct","step":{"decode_requests":[{"progress_index":5,"kv":9}]}}'],
  ['an unknown key in a prefill row',
    '{"model":"llama-3.1-8b-instruct","step":{"prefill_requests":' +
      '[{"progress_index":0,"num_new_prefill_tokens":5,"x":1}]}}'],
  ['an id of 5,000 characters', `{"model":"llama-3.1-8b-instruct","id":"${'i'.repeat(5000)}",${STEP}}`],
  ['100 tags', `{"model":"llama-3.1-8b-instruct","tags":[${Array(100).fill('"t"').join(',')}],${STEP}}`],
  ['a key repeated through an escape', `{"model":"llama-3.1-8b-instruct","tp":1,"t\\u0070":8,${STEP}}`],
  ['a number beyond 2^53',
    '{"model":"llama-3.1-8b-instruct","step":{"decode_requests":[{"progress_index":9007199254740993}]}}'],
  ['a model name of 2,000 bytes',
    `{"model":{"num_hidden_layers":2,${CONFIG}},"model_name":"${'n'.repeat(2000)}",${STEP}}`],
];

test('JSON Import refuses what the CLI refuses, naming the same path; the step is kept', async () => {
  const page = await openPage(env.browser, env.base);
  const before = await shownStepTime(page);
  await page.click('#io summary');
  const problems = [];
  for (const [label, text] of IMPORTS) {
    const expected = cliError(text);
    if (!expected) {
      problems.push(`${label}: the CLI prices it`);
      continue;
    }
    await page.fill('#request-json', text);
    await page.click('#import-json');
    await settle(page);
    const shown = await page.locator('#io [data-testid="error"]').allTextContents();
    if (shown.length !== 1) {
      problems.push(`${label}: ${shown.length} errors shown (CLI: ${expected.code} at ${expected.path})`);
    } else if (!shown[0].includes(`${expected.path}:`)) {
      problems.push(`${label}: "${shown[0].slice(0, 120)}" does not name ${expected.path}`);
    }
    if ((await shownStepTime(page)) !== before) problems.push(`${label}: the step changed`);
  }
  assert.deepEqual(problems, []);
  // A good import still works afterwards, and prices as the CLI does.
  const good = { model: 'llama-2-7b-hf', tp: 2, step: { decode_requests: [{ progress_index: 700 }] } };
  await page.fill('#request-json', JSON.stringify(good));
  await page.click('#import-json');
  await page.waitForFunction((us) => document.querySelector('[data-testid="step-time-us"]')
    .getAttribute('value') === us, String(cliStepTime(good)));
  assert.deepEqual(page.problems, []);
  await page.close();
});

const CONFIGS = [
  ['a repeated num_hidden_layers', `{"num_hidden_layers":2,"num_hidden_layers":64,${CONFIG}}`, 'num_hidden_layers'],
  ['a repeated key in text_config',
    `{"text_config":{"num_hidden_layers":2,"num_hidden_layers":3},"num_hidden_layers":2,${CONFIG}}`,
    'text_config.num_hidden_layers'],
  ['a _name_or_path of 1,025 bytes', `{"_name_or_path":"${'p'.repeat(1025)}","num_hidden_layers":2,${CONFIG}}`,
    '_name_or_path'],
  ['a name of 2,000 bytes', `{"name":"${'é'.repeat(1000)}","num_hidden_layers":2,${CONFIG}}`, 'name'],
  ['a config that smuggles request fields', `{"num_hidden_layers":2,${CONFIG}},"tp":8,"x":{`, ''],
];

test('a pasted config is checked by the core as written and refused with its field', async () => {
  const page = await openPage(env.browser, env.base);
  const before = await shownStepTime(page);
  await page.locator('details.config summary').click();
  for (const [label, text, field] of CONFIGS) {
    await useConfig(page, text);
    const shown = await page.locator('.config [data-testid="error"]').allTextContents();
    assert.equal(shown.length, 1, `${label}: no error`);
    if (field) assert.ok(shown[0].includes(`(${field})`),
      `${label}: "${shown[0].slice(0, 160)}" does not name ${field}`);
    await settle(page);
    assert.equal(await shownStepTime(page), before, `${label}: the step changed`);
    assert.equal(await page.locator('#errors [data-testid="error"]').count(), 0,
      `${label}: a reprice failed afterwards`);
  }
  // A name at the limit is taken, and every reprice after it works.
  await useConfig(page, `{"_name_or_path":"${'p'.repeat(1024)}","num_hidden_layers":2,${CONFIG}}`);
  await nextStepTime(page, before);
  await page.fill('#tp', '2');
  await settle(page);
  await closeWithoutErrors(page);
});

test('a config dropped while a shape field has focus updates that field', async () => {
  const page = await openPage(env.browser, env.base);
  await page.focus('input[name="hidden_size"]');
  await page.evaluate((text) => {
    const data = new DataTransfer();
    data.items.add(new File([text], 'config.json', { type: 'application/json' }));
    document.querySelector('#model-panel')
      .dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, `{"num_hidden_layers":3,${CONFIG}}`);
  await page.waitForFunction(() => document.querySelector('input[name="num_hidden_layers"]').value === '3');
  assert.equal(await page.evaluate(() => document.activeElement.name), 'hidden_size', 'the field kept its focus');
  assert.equal(await page.inputValue('input[name="hidden_size"]'), '512');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('served under "//", the page prices, rewrites its URL in place and links to itself', async () => {
  const base = env.base.replace(/\/$/, '//');
  const page = await openPage(env.browser, `${base}index.html`);
  await page.fill('#tp', '2');
  await page.waitForFunction(() => location.hash.includes('tp=2'));
  const url = new URL(page.url());
  assert.equal(url.origin, new URL(env.base).origin);
  assert.equal(url.pathname, '//index.html');
  const request = { model: 'llama-3.1-8b-instruct', tp: 2, step: { decode_requests: [{ progress_index: 512 }] } };
  const embed = await openPage(env.browser,
    `${base}index.html?embed=1#json=${encodeURIComponent(JSON.stringify(request))}`);
  assert.equal(await shownStepTime(embed), cliStepTime(request));
  const full = new URL(await embed.getAttribute('#open-full', 'href'), embed.url());
  assert.equal(`${full.origin}${full.pathname}${full.search}`, `${url.origin}//index.html`);
  assert.deepEqual([...page.problems, ...embed.problems], []);
  await page.close();
  await embed.close();
});

test('a bad link opened over an edited step keeps the step and offers the link\'s own', async () => {
  const page = await openPage(env.browser, env.base);
  await page.fill('#tp', '2');
  await page.waitForFunction(() => location.hash.includes('tp=2'));
  const edited = await shownStepTime(page);
  await page.evaluate(() => { location.hash = '#v=1&m=llama-3.1-8b-instruct&tp=0&d=7'; });
  await page.waitForSelector('#link-error [data-testid="error"]');
  assert.equal(await shownStepTime(page), edited, 'the edited step is kept');
  assert.equal(await page.inputValue('#tp'), '2');
  assert.match(await page.textContent('#link-error'), /Your step is still shown/);
  await page.click('#link-error button');
  await settle(page);
  assert.equal(await page.inputValue('#tp'), '0', 'the link\'s step is shown, its error marked');
  assert.equal(await page.getAttribute('#tp', 'aria-invalid'), 'true');
  assert.equal(await shownStepTime(page), edited, 'the last good result stays while the field is wrong');
  assert.deepEqual(page.problems, []);
  await page.close();
});
