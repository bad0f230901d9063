// SPDX-License-Identifier: Apache-2.0
// The page starts in the `measured` mode with the reference model's figure beside it,
// offers every GPU (their kernel tables fetched on first use), and plots every
// operator of the step on the GPU's roofline. Each figure is checked against the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { breakdownRows } from '../../web/charts.js';
import { openPage, shownStepTime, nextStepTime, cliStepTime, pageRequest, root, startForTests,
  MEASURED_NUMBER } from './helpers.mjs';

const env = startForTests();

const cliResult = (request) =>
  JSON.parse(execFileSync(path.join(root, 'build/stepcalc'), ['price'], { input: JSON.stringify(request) }).toString());

test('a fresh page prices the default step in measured mode, the reference beside it', async () => {
  const page = await openPage(env.browser, env.base);
  assert.equal(await page.inputValue('#mode'), 'measured');
  const request = await pageRequest(page);
  assert.equal(request.mode, 'measured');
  assert.equal(await shownStepTime(page), cliStepTime(request));
  const reference = cliStepTime({ ...request, mode: 'blis-v2' });
  assert.notEqual(reference, cliStepTime(request)); // the two models differ on this step
  assert.equal(Number(await page.getAttribute('[data-testid="reference"] data', 'value')), reference);
  assert.match(await page.textContent('[data-testid="reference"]'),
    /Reference model \(blis-v2\).*measured is [\d.]+% (lower|higher)/);
  // The reference model's hardware constants say that measured does not use them, and
  // the breakdown groups vLLM's operators: the GEMMs and attention add up to the GPU time.
  assert.match(await page.textContent('[data-testid="hw-note"]'), /measured does not use them/);
  const bars = await page.$$eval('svg.breakdown', (svgs) => svgs[0].getAttribute('aria-label') || '');
  assert.match(bars, /GPU forward pass \(measured kernels\)/);
  const result = cliResult(request);
  const pass = breakdownRows(result).find((r) => r.label.startsWith('GPU forward pass'));
  const sum = pass.segments.reduce((a, x) => a + x.s, 0);
  assert.ok(Math.abs(sum - result.measured.gpu_time_us * 1e-6) < 1e-9, `${sum} vs ${result.measured.gpu_time_us} us`);
  assert.deepEqual(['qkv', 'o', 'gate_up', 'down', 'attn'].filter((k) => !pass.segments.some((x) => x.key === k)), []);
  // Only the dense parts of the H100 tables were fetched for a dense BF16 model.
  const packs = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name)
    .filter((n) => n.endsWith('.bin')).map((n) => n.replace(/.*\//, '')).sort());
  assert.deepEqual(packs,
    ['h100-vllm-0.24.0-allreduce.bin', 'h100-vllm-0.24.0-attention-bf16.bin', 'h100-vllm-0.24.0-gemm-bf16.bin']);
  // The lookup table lists every operator with the table cells it was read from.
  await page.waitForSelector('table.lookups', { state: 'attached' }); // in a closed <details>
  const lookups = await page.$$eval('table.lookups tbody tr', (trs) => trs.map((tr) => tr.textContent));
  assert.ok(lookups.some((t) => /^qkv_proj \(per layer ×32\).*gemm\.csv lines/.test(t)),
    lookups.slice(0, 5).join('\n'));
  assert.ok(lookups.some((t) => /^attention .*decode length .*decode_attention\.csv lines/.test(t)));
  // Only the operators vLLM runs: none of the reference model's per-phase GEMM rows.
  assert.ok(!lookups.some((t) => /^(Decode|Prefill)\b.*GEMM/.test(t)),
    lookups.filter((t) => /GEMM/.test(t)).join('\n'));
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('links and requests without a mode keep the request format\'s default, blis-v2', async () => {
  const page = await openPage(env.browser, `${env.base}#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&p=0.512&d=`);
  assert.equal(await page.inputValue('#mode'), 'blis-v2');
  assert.equal(await page.locator('[data-testid="reference"]').count(), 0);
  await page.close();
});

test('the GPU choice prices each GPU from its own tables, loaded on first use', async () => {
  const page = await openPage(env.browser, env.base);
  let before = await shownStepTime(page);
  const seen = {};
  for (const gpu of ['B200', 'A100', 'H200', 'L40S']) {
    await page.selectOption('#gpu', gpu);
    const shown = await nextStepTime(page, before);
    const request = await pageRequest(page);
    assert.equal(request.gpu, gpu);
    assert.equal(shown, cliStepTime(request), gpu);
    seen[gpu] = shown;
    before = shown;
  }
  const h100 = cliStepTime({ ...(await pageRequest(page)), gpu: 'H100' });
  assert.ok(seen.B200 < h100 && seen.A100 > h100, JSON.stringify({ h100, ...seen }));
  // A MoE model needs the MoE part: fetched when the step asks for it.
  await page.selectOption('#gpu', 'H100');
  await page.selectOption('#model-preset', 'mixtral-8x7b-v0.1');
  await page.waitForFunction(() => document.querySelector('[data-testid="context"]')?.textContent.includes('mixtral'));
  const request = await pageRequest(page);
  await page.waitForFunction((t) =>
    document.querySelector('[data-testid="step-time-us"]')?.getAttribute('value') === String(t),
    cliStepTime(request));
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the roofline plots every operator with FLOPs under the GPU\'s roofs, the slowest marked', async () => {
  const page = await openPage(env.browser, env.base);
  await page.waitForSelector('svg.roofline');
  const request = await pageRequest(page);
  const ops = cliResult(request).measured.operators.filter((o) => o.flops > 0 && o.bytes > 0 && o.time_us > 0);
  const points = await page.$$eval('svg.roofline .point', (els) => els.map((e) => e.getAttribute('data-name')));
  assert.equal(points.length, ops.length);
  const slowest = ops.reduce((a, b) => (b.time_us > a.time_us ? b : a));
  assert.equal(await page.getAttribute('svg.roofline .slowest', 'data-name'),
    slowest.name + (slowest.scope && slowest.scope !== 'layer' ? ` (${slowest.scope})` : ''));
  // No operator beats its roof (the table's "Of its roof" column stays at or below 100%).
  const shares = await page.$$eval('#roofline table tbody tr td:nth-child(4)',
    (tds) => tds.map((td) => parseFloat(td.textContent)));
  assert.equal(shares.length, ops.length);
  assert.ok(shares.every((s) => s > 0 && s <= 100), shares.join(' '));
  // Another mode has no operators: the section hides.
  await page.selectOption('#mode', 'blis-v2');
  await page.waitForFunction(() => document.querySelector('#roofline')?.closest('section').hidden);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('in measured, the reference modes\' hardware constants are folded away under a summary saying so', async () => {
  const page = await openPage(env.browser, env.base);
  await page.locator('#hw-constants').waitFor();
  const summary = page.getByTestId('hw-summary');
  assert.equal(await summary.textContent(),
    'Hardware constants of the reference modes (blis-v2, corrected): not used in measured');
  for (const key of ['TFlopsPeak', 'BwPeakTBs', 'bwEfficiencyFactor', 'perLayerOverhead']) {
    assert.equal(await page.locator(`input[name="${key}"]`).isVisible(), false, `${key} shown in measured`);
  }
  // The modes that use them show them, and say so.
  await page.selectOption('#mode', 'blis-v2');
  await page.locator('input[name="TFlopsPeak"]').waitFor();
  assert.equal(await summary.textContent(), 'Hardware constants (blis-v2 uses them)');
  await page.selectOption('#mode', 'measured');
  await page.locator('input[name="TFlopsPeak"]').waitFor({ state: 'hidden' });
  // Opened by hand they stay open, with the note on what measured reads instead.
  await summary.click();
  await page.locator('input[name="TFlopsPeak"]').waitFor();
  assert.match(await page.textContent('[data-testid="hw-note"]'), /measured does not use them/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('glm-5.2-fp8 in measured: the model in the measured mode\'s words (experts, MLA, FP8), not the reference\'s',
  async () => {
    const page = await openPage(env.browser, `${env.base}#v=1&m=glm-5.2-fp8&g=H100&tp=8&mode=measured&d=1000`);
    const request = await pageRequest(page);
    const result = cliResult(request);
    assert.equal(await shownStepTime(page), result.step_time_us);
    const words = page.getByTestId('model-words');
    await page.waitForFunction(() =>
      /as the measured mode prices it/.test(document.querySelector('[data-testid="model-words"]')?.textContent));
    const text = await words.textContent();
    const gib = (result.measured.weight_bytes_per_gpu / 2 ** 30).toFixed(1);
    assert.equal(text, 'Preset glm-5.2-fp8, as the measured mode prices it: mixture of experts (its fused MoE ' +
      `kernels); multi-head latent attention; FP8 (block-scaled) weights, ${gib} GiB per GPU at TP 8; BF16 KV cache.`);
    assert.doesNotMatch(text, /dense model|ignored/);
    assert.equal(await page.getByTestId('bytes-note').textContent(), 'Measured reads the weights from the model\'s ' +
      'config: FP8 (block-scaled), 1 byte per parameter; 2 here is the reference modes\' figure (blis-v2, corrected).');
    // In the reference mode, the reference model's notes again.
    await page.selectOption('#mode', 'blis-v2');
    await page.waitForFunction(() =>
      /prices it as a dense model/.test(document.querySelector('[data-testid="model-words"]')?.textContent));
    assert.match(await page.getByTestId('bytes-note').textContent(), /In blis-v2 it scales memory traffic only/);
    // A dense BF16 model in measured: its weights as the field says, the usual note.
    await page.selectOption('#mode', 'measured');
    await page.selectOption('#model-preset', 'llama-3.1-8b-instruct');
    await page.waitForFunction(() => /^Preset llama-3\.1-8b-instruct, as the measured mode prices it: BF16 weights/
      .test(document.querySelector('[data-testid="model-words"]')?.textContent));
    assert.equal(await page.getByTestId('bytes-note').textContent(),
      'Sets the weight bytes; 1 selects the FP8 kernels.');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

test('GPUs without NVLink say so under the number when the all-reduce takes much of the step', async () => {
  const link = (gpu, tp) => `${env.base}#v=1&m=llama-3.1-8b-instruct&g=${gpu}&tp=${tp}&mode=measured&d=512*64`;
  const page = await openPage(env.browser, link('L40S', 4));
  const note = page.getByTestId('pcie-note');
  await note.waitFor();
  // The share the note gives is the CLI's: communication over the GPU time of the same request.
  const result = JSON.parse(execFileSync(path.join(root, 'build/stepcalc'),
    ['price', '--kernels', path.join(root, 'build/kernels'), '-'],
    { input: JSON.stringify(await pageRequest(page)) }).toString().split('\n')[0]);
  const share = result.measured.totals_us.communication / result.measured.gpu_time_us;
  assert.ok(share >= 0.2);
  assert.match(await note.textContent(), new RegExp(`^L40S GPUs talk over PCIe \\(32 GB/s each way, no NVLink\\): ` +
    `the all-reduce takes ${(share * 100).toFixed(1)}% of this step's GPU time`));
  // NVLink (H100) and one GPU (no all-reduce): no note.
  for (const [gpu, tp] of [['H100', 4], ['L40S', 1]]) {
    await page.goto(link(gpu, tp));
    await page.waitForFunction((g) => document.querySelector('#context')?.textContent.includes(g), gpu);
    await page.getByTestId('step-time-us').waitFor();
    assert.equal(await page.getByTestId('pcie-note').count(), 0, `${gpu} TP ${tp}`);
  }
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a link refused only once its GPU\'s tables are in says why in the headline, not "Loading…"', async () => {
  // gpt-oss's MXFP4 experts are not measured on A100 (vllm-0.14.0): the core refuses after the packs load.
  const page = await openPageRaw(`${env.base}#v=1&m=gpt-oss-20b&g=A100&tp=1&mode=measured&p=0.2048&d=512~64*64`);
  const error = page.getByTestId('headline-error');
  await error.waitFor();
  assert.match(await error.textContent(), /^Not priced: .*mxfp4 fused MoE is not measured on A100/);
  assert.equal(await page.textContent('#stale'), 'Nothing priced yet: fix the marked field.');
  assert.doesNotMatch(await page.textContent('#headline'), /Loading/);
  // The document the core's words name is a link, as everywhere on the page.
  assert.equal(await error.getByRole('link', { name: 'docs/KERNELS.md' }).getAttribute('href'),
    'web/dist/docs/KERNELS.html');
  // Choosing a GPU that measures it prices, and the headline is the number again.
  await page.goto(`${env.base}#v=1&m=gpt-oss-20b&g=H100&tp=1&mode=measured&p=0.2048&d=512~64*64`);
  await page.waitForSelector(MEASURED_NUMBER); // (not the reference model's figure shown first)
  assert.equal(await page.getByTestId('headline-error').count(), 0);
  assert.equal(await page.textContent('#stale'), '');
  await page.close();
});

/** A page at `url` without waiting for a priced step (openPage waits for one). */
async function openPageRaw(url) {
  const page = await env.browser.newPage();
  await page.goto(url);
  return page;
}
