// SPDX-License-Identifier: Apache-2.0
// Issue 23: every GPU AIConfigurator measured vLLM on is a `gpu` value: each prices a dense
// decode, a long prefill and a MoE decode in the measured mode from its own tables, serves
// a small model, and answers to AIConfigurator's system name. A GPU with datasheet constants
// only (kernels_from) prices from its sibling's tables, scaled, and says so.
import assert from 'node:assert/strict';
import test from 'node:test';
import { load } from '../../wasm/stepcalc.js';

const calc = await load();
const gpus = calc.presets().gpu_specs;

const step = (kind) => (kind === 'prefill'
  ? { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 8192 }], decode_requests: [] }
  : { prefill_requests: [], decode_requests: Array.from({ length: 32 }, () => ({ progress_index: 2048 })) });

test('every GPU prices a dense decode, a long prefill and a MoE decode from its own tables', async () => {
  assert.ok(gpus.length >= 10);
  for (const g of gpus) {
    const loaded = await calc.loadKernels(g.name);
    assert.equal(loaded.version, g.default_kernels, g.name);
    const price = (model, kind) => calc.price({ model, gpu: g.name, mode: 'measured', tp: 1, step: step(kind) });
    const decode = price('llama-3.1-8b-instruct', 'decode');
    const prefill = price('llama-3.1-8b-instruct', 'prefill');
    const moe = price('qwen3-30b-a3b', 'decode');
    const tables = g.kernels_from ?? g.name;
    for (const [what, r] of [['decode', decode], ['prefill', prefill], ['moe', moe]]) {
      assert.equal(r.measured.gpu, tables, `${g.name} ${what}`);
      assert.equal(r.warnings.some((w) => w.code === 'gpu_tables_scaled'), !!g.kernels_from, `${g.name} ${what}`);
      assert.equal(r.measured.kernels, g.default_kernels, `${g.name} ${what}`);
      assert.ok(r.measured.gpu_time_us > 0 && Number.isFinite(r.measured.gpu_time_us), `${g.name} ${what}`);
    }
    assert.ok(prefill.measured.gpu_time_us > decode.measured.gpu_time_us, `${g.name}: 8k prefill > 32 decodes`);
    // The GPU's own GEMM rows: the table cells the result names are its own file's.
    const qkv = decode.measured.operators.find((o) => o.name === 'qkv_proj');
    assert.match(qkv.cells, new RegExp(`bench_data/aic/${tables.toLowerCase()}/`), g.name);
  }
});

test('the GPUs AIConfigurator names by system are found by that name too', async () => {
  for (const g of gpus) {
    await calc.loadKernels(g.aic_system);
    const r = calc.price({ model: 'llama-3.1-8b-instruct', gpu: g.aic_system, mode: 'measured', step: step('decode') });
    assert.equal(r.measured.gpu, g.kernels_from ?? g.name);
  }
});

test('every GPU serves a small model', async () => {
  for (const g of gpus) {
    await calc.loadKernels(g.name);
    const served = calc.serve({ model: 'llama-3.1-8b-instruct', gpu: g.name, mode: 'measured', workload:
      { input_tokens: 512, output_tokens: 32, concurrency: 4, num_requests: 8 } });
    assert.ok(served.memory.fits, g.name);
    assert.ok(served.tpot_ms.mean > 0 && served.ttft_ms.mean > 0, g.name);
  }
});
