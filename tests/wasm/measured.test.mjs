// SPDX-License-Identifier: Apache-2.0
// The measured mode through the JS module: kernel packs loaded per GPU, every operator
// in the result, sweeps, the request fields of the mode, and its errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load, StepCalcError } from '../../wasm/stepcalc.js';

const calc = await load();
const decodes = (n, kv) => Array.from({ length: n }, () => ({ progress_index: kv }));
const request = (extra = {}) => ({
  model: 'llama-2-70b-hf', tp: 4, mode: 'measured',
  step: { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 300 }], decode_requests: decodes(31, 600) },
  ...extra,
});

test('a measured price before the GPU\'s tables are loaded names what is missing', () => {
  assert.throws(() => calc.price(request({ gpu: 'L40S' })),
    (e) => e instanceof StepCalcError && e.code === 'kernels_not_loaded' && /L40S/.test(e.message));
});

test('measured mode lists every operator with its table cells and adds up', async () => {
  await calc.loadKernels('H100');
  const r = calc.price(request());
  assert.equal(r.mode, 'measured');
  const m = r.measured;
  assert.equal(m.gpu, 'H100');
  assert.equal(m.kernels, 'vllm-0.24.0');
  assert.equal(m.rows.tokens, 331);
  assert.equal(m.rows.padded_tokens, 336);  // vLLM's CUDA-graph size above 331
  const names = m.operators.map((o) => o.name);
  for (const n of ['qkv_proj', 'attention', 'o_proj', 'gate_up_proj', 'down_proj', 'attn_all_reduce', 'lm_head']) {
    assert.ok(names.includes(n), n);
  }
  const qkv = m.operators.find((o) => o.name === 'qkv_proj');
  assert.equal(qkv.n, (16 + 2 * 2) * 128);
  assert.equal(qkv.count, 80);
  assert.match(qkv.cells, /gemm\.csv/);
  const sum = m.operators.reduce((s, o) => s + o.time_us, 0);
  assert.ok(Math.abs(sum - m.gpu_time_us) < 1e-6 * m.gpu_time_us);
  assert.ok(Math.abs(r.breakdown.total_us_before_rounding - (m.gpu_time_us + m.cpu_time_us)) < 1e-6);
  assert.equal(r.step_time_us, Math.round(m.gpu_time_us + m.cpu_time_us));
  // The reference's per-phase GEMM terms are not this mode's: the phases carry none
  // (they were once seven zero-filled rows with a made-up table lookup).
  assert.ok(r.phases.prefill && r.phases.decode);
  assert.deepEqual(r.phases.prefill.buckets, []);
  assert.deepEqual(r.phases.decode.gemms, []);
  assert.deepEqual(r.phases.decode.attn_lookups, []);
});

test('FP8 weights and KV cache, and another GPU, change the measured price', async () => {
  await calc.loadKernels('B200');
  // A weight-bound decode step: FP8 weights read half the bytes. (At M >= 160 the H100
  // vllm-0.14.0 FP8 GEMM rows are measured slower than BF16, so a mixed step is not.)
  const decodeOnly = { prefill_requests: [], decode_requests: decodes(8, 600) };
  const base = calc.price(request({ model: 'llama-3.1-70b-instruct', tp: 1, step: decodeOnly }));
  const fp8 = calc.price(request({ model: 'llama-3.1-70b-instruct', tp: 1, step: decodeOnly, quantization: 'fp8',
    kv_cache_dtype: 'fp8' }));
  assert.ok(fp8.measured.gpu_time_us < 0.7 * base.measured.gpu_time_us);
  assert.equal(fp8.measured.kv_cache_dtype, 'fp8');
  assert.ok(fp8.measured.operators.find((o) => o.name === 'qkv_proj').dtype === 'fp8');
  const b200 = calc.price(request({ gpu: 'B200' }));
  assert.ok(b200.measured.gpu_time_us < calc.price(request()).measured.gpu_time_us);
  assert.throws(() => calc.price(request({ quantization: 'int3' })),
    (e) => e instanceof StepCalcError && e.code === 'invalid_value' && e.path === 'quantization');
  // No INT4 GEMM is measured (INT4 exists as fused-MoE kernels): refused, never priced as another precision.
  assert.throws(() => calc.price(request({ quantization: 'int4' })),
    (e) => e instanceof StepCalcError && e.code === 'unsupported' && e.path === 'quantization');
  // Expert parallelism splits experts: a dense model has none to split.
  assert.throws(() => calc.price(request({ ep: 2 })),
    (e) => e instanceof StepCalcError && e.code === 'invalid_value' && e.path === 'ep');
});

test('sweeps and priceAll work in measured mode; blis-v2 stays the default', async () => {
  await calc.loadKernels('H100');
  const points = calc.sweep(request(), 'decode_batch', [1, 16, 64]);
  assert.ok(points.every((p) => p.step_time_us > 0));
  assert.ok(points[2].step_time_us > points[0].step_time_us);
  const tp = calc.sweep(request(), 'tp', [1, 3, 8]);
  assert.equal(tp[1].error.path, 'tp');  // 64 heads do not split over 3 GPUs
  const { mode, ...plain } = request();
  assert.equal(calc.price(plain).mode, 'blis-v2');
  const all = calc.priceAll([plain], { mode: 'measured' });
  assert.equal(all[0].mode, 'measured');
  assert.ok(calc.presets().modes.includes('measured'));
});
