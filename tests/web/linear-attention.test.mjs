// SPDX-License-Identifier: Apache-2.0
// Qwen3-Next (gated DeltaNet beside gated full attention) on the page: offered in the model
// select like every preset, priced in the measured mode as the CLI prices it, its DeltaNet
// operators in the lookup table with their GDN table cells, the linear-attention pack fetched,
// and the reference modes' refusal shown without a page error.
// Kimi-Linear (Kimi delta attention beside MLA) likewise, from the kda pack, fetched for it only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, shownStepTime, cliStepTime, pageRequest, startForTests } from './helpers.mjs';

const env = startForTests();
const LINK = '#v=1&m=qwen3-next-80b-a3b-instruct&g=H100&tp=4&mode=measured&p=0.2048&d=1000~100*16';

test('Qwen3-Next prices in measured on H100 TP 4, its DeltaNet kernels read from the GDN tables', async () => {
  const page = await openPage(env.browser, `${env.base}${LINK}`);
  const options = await page.$$eval('#model-preset option', (os) => os.map((o) => o.value));
  assert.ok(options.includes('qwen3-next-80b-a3b-instruct'), options.join());
  assert.equal(await page.inputValue('#mode'), 'measured');
  const request = await pageRequest(page);
  assert.equal(request.model, 'qwen3-next-80b-a3b-instruct');
  assert.equal(await shownStepTime(page), cliStepTime(request));
  // The linear-attention part was fetched (only a model with DeltaNet layers needs it).
  const packs = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name)
    .filter((n) => n.endsWith('.bin')).map((n) => n.replace(/.*\//, '')));
  assert.ok(packs.includes('h100-vllm-0.24.0-gdn.bin'), packs.join());
  await page.waitForSelector('table.lookups', { state: 'attached' });
  const lookups = await page.$$eval('table.lookups tbody tr', (trs) => trs.map((tr) => tr.textContent));
  for (const [op, table] of [['gdn_delta_rule_decode', 'gdn_decode'], ['gdn_delta_rule_prefill', 'gdn_prefill'],
    ['gdn_conv1d_decode', 'gdn_conv_decode'], ['gdn_conv1d_prefill', 'gdn_conv_prefill']]) {
    assert.ok(lookups.some((t) => t.startsWith(op) && t.includes(`${table}.csv lines`)),
      `${op}: ${lookups.filter((t) => t.startsWith('gdn')).join('\n')}`);
  }
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('Kimi-Linear prices in measured on H200 TP 2 from the kda tables; only it fetches the kda pack', async () => {
  const packsOf = (page) => page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name)
    .filter((n) => n.endsWith('.bin')).map((n) => n.replace(/.*\//, '')));
  const page = await openPage(env.browser,
    `${env.base}#v=1&m=kimi-linear-48b-a3b&g=H200&tp=2&mode=measured&p=0.2048&d=1000~100*16`);
  const options = await page.$$eval('#model-preset option', (os) => os.map((o) => o.value));
  assert.ok(options.includes('kimi-linear-48b-a3b'), options.join());
  const request = await pageRequest(page);
  assert.equal(request.model, 'kimi-linear-48b-a3b');
  assert.equal(await shownStepTime(page), cliStepTime(request));
  const packs = await packsOf(page);
  assert.ok(packs.includes('h200-vllm-0.24.0-kda.bin'), packs.join());
  assert.ok(packs.includes('h200-vllm-0.24.0-mla.bin'), packs.join());
  assert.ok(!packs.some((p) => p.endsWith('-gdn.bin') || p.endsWith('-dsa.bin')), packs.join());
  await page.waitForSelector('table.lookups', { state: 'attached' });
  const lookups = await page.$$eval('table.lookups tbody tr', (trs) => trs.map((tr) => tr.textContent));
  for (const [op, table] of [['kda_decode', 'kda_decode'], ['kda_prefill', 'kda_prefill']]) {
    assert.ok(lookups.some((t) => t.startsWith(op) && t.includes(`${table}.csv lines`)),
      `${op}: ${lookups.filter((t) => t.startsWith('kda')).join('\n')}`);
  }
  assert.deepEqual(page.problems, []);
  await page.close();
  // Qwen3-Next (gated DeltaNet) does not fetch the kda pack.
  const qwen = await openPage(env.browser, `${env.base}${LINK}`);
  await shownStepTime(qwen);
  assert.ok(!(await packsOf(qwen)).some((p) => p.endsWith('-kda.bin')));
  await qwen.close();
});
