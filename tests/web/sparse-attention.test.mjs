// SPDX-License-Identifier: Apache-2.0
// DeepSeek-V3.2 (DeepSeek sparse attention) on the page: offered in the model select, priced in
// the measured mode as the CLI prices it, its attention read from the DSA module tables, and the
// dsa pack fetched for it only (DeepSeek-V3, dense MLA, does not fetch it; neither fetches gdn).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, shownStepTime, cliStepTime, pageRequest, startForTests } from './helpers.mjs';

const env = startForTests();
const link = (model) => `#v=1&m=${model}&g=H200&tp=8&mode=measured&p=0.2048&d=1000~100*16`;
const packsOf = (page) => page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name)
  .filter((n) => n.endsWith('.bin')).map((n) => n.replace(/.*\//, '')));

test('DeepSeek-V3.2 prices in measured on H200 TP 8 from the DSA tables; only it fetches the dsa pack', async () => {
  const page = await openPage(env.browser, `${env.base}${link('deepseek-v3.2')}`);
  const options = await page.$$eval('#model-preset option', (os) => os.map((o) => o.value));
  assert.ok(options.includes('deepseek-v3.2'), options.join());
  assert.equal(await page.inputValue('#mode'), 'measured');
  const request = await pageRequest(page);
  assert.equal(request.model, 'deepseek-v3.2');
  assert.equal(await shownStepTime(page), cliStepTime(request));
  const packs = await packsOf(page);
  assert.ok(packs.includes('h200-vllm-0.24.0-dsa.bin'), packs.join());
  assert.ok(!packs.includes('h200-vllm-0.24.0-gdn.bin'), packs.join());
  await page.waitForSelector('table.lookups', { state: 'attached' });
  const lookups = await page.$$eval('table.lookups tbody tr', (trs) => trs.map((tr) => tr.textContent));
  for (const table of ['dsa_decode', 'dsa_prefill']) {
    assert.ok(lookups.some((t) => t.includes(`${table}.csv lines`)), lookups.join('\n'));
  }
  assert.ok(!lookups.some((t) => t.includes('mla_decode.csv')), lookups.join('\n'));
  assert.deepEqual(page.problems, []);
  await page.close();

  const v3 = await openPage(env.browser, `${env.base}${link('deepseek-v3')}`);
  assert.equal(await shownStepTime(v3), cliStepTime(await pageRequest(v3)));
  const v3packs = await packsOf(v3);
  assert.ok(v3packs.includes('h200-vllm-0.24.0-mla.bin'), v3packs.join());
  assert.ok(!v3packs.some((p) => p.endsWith('-dsa.bin') || p.endsWith('-gdn.bin')), v3packs.join());
  assert.deepEqual(v3.problems, []);
  await v3.close();
});
