// SPDX-License-Identifier: Apache-2.0
// calc.serve in the JS module: every model preset on each of the first five GPUs (the measured
// mode, with each GPU's kernel packs loaded), progress and cancel, and the same figures as
// the native CLI for the same request.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import test from 'node:test';
import { load, StepCalcError } from '../../wasm/stepcalc.js';

const calc = await load();
const GPUS = ['H100', 'H200', 'B200', 'A100', 'L40S'];
const cli = new URL('../../build/stepcalc', import.meta.url).pathname;

const request = (model, gpu, tp, workload = {}) => ({
  model, gpu, tp, mode: 'measured',
  workload: { input_tokens: 512, output_tokens: 32, concurrency: 8, num_requests: 16, ...workload },
});

test('serve: every preset on every GPU, at the smallest TP of 1, 2, 4, 8 that fits', async () => {
  for (const gpu of GPUS) await calc.loadKernels(gpu);
  const unserved = [];
  let pairs = 0;
  for (const { name } of calc.presets().models) {
    for (const gpu of GPUS) {
      let served;
      let unmeasured = false;
      pairs += 1;
      for (const tp of [1, 2, 4, 8]) {
        try {
          served = calc.serve(request(name, gpu, tp));
          break;
        } catch (error) {
          assert.ok(error instanceof StepCalcError, `${name} ${gpu} tp ${tp}: ${error}`);
          // The checkpoint's weight format is not measured on this GPU's tables: refused at any TP.
          if (error.code === 'unsupported' && error.path === 'quantization') {
            assert.match(error.message, new RegExp(`not measured on ${gpu}`));
            unmeasured = true;
            break;
          }
          // Gated DeltaNet or Kimi delta attention layers, or DeepSeek sparse attention, where the GPU's
          // default tables measure none.
          if (error.code === 'unsupported' && error.path === 'kernels') {
            assert.match(error.message,
              new RegExp(`(Gated DeltaNet|DeepSeek sparse attention|Kimi delta attention) .* not measured on ${gpu}`));
            unmeasured = true;
            break;
          }
          assert.equal(error.code, 'does_not_fit', `${name} ${gpu} tp ${tp}: ${error.message}`);
          assert.equal(error.path, 'tp');
          assert.match(error.message, new RegExp(`does not fit at TP ${tp} on ${gpu}: weights [0-9.]+ GiB`));
        }
      }
      if (!served) {
        if (!unmeasured) unserved.push(`${name} on ${gpu}`);
        continue;
      }
      assert.equal(served.gpu, gpu);
      assert.equal(served.mode, 'measured');
      assert.ok(served.memory.fits && served.memory.kv_cache_tokens >= 544, `${name} ${gpu}`);
      for (const k of ['ttft_ms', 'tpot_ms', 'e2e_ms']) assert.ok(Number.isFinite(served[k].mean) && served[k].mean > 0,
        `${name} ${gpu} ${k}`);
      assert.ok(served.throughput.output_tokens_per_s > 0);
    }
  }
  // Only checkpoints larger than a node of the GPU stay unserved (DeepSeek-V3/R1, Kimi-K2.5,
  // Qwen3-235B in BF16 on 80 and 48 GB GPUs, GLM-5.2 on most): a minority of the pairs.
  assert.ok(unserved.length <= pairs / 4, unserved.join(', '));
  assert.ok(!unserved.some((u) => u.endsWith('on B200')), unserved.join(', '));
});

test('serve: the module gives the native CLI\'s figures for the same request',
  { skip: !existsSync(cli) && 'no native build' }, () => {
  for (const r of [
    { model: 'qwen3-32b', tp: 4,
      workload: { input_tokens: 1024, output_tokens: 64, concurrency: 16, num_requests: 48 } },
    request('llama-3.1-8b-instruct', 'L40S', 1, { request_rate: 4, concurrency: undefined, seed: 7 }),
    // A drained warm-up (the default): the measured wave starts at once.
    { model: 'qwen3-32b', tp: 4,
      workload: { input_tokens: 4096, output_tokens: 32, concurrency: 8, num_requests: 48, warmup_requests: 16 } },
  ]) {
    const native = JSON.parse(execFileSync(cli, ['serve', '-'], { input: JSON.stringify(r) }).toString());
    const wasm = calc.serve(r);
    assert.ok(native.steps > 0);
    assert.equal(wasm.steps, native.steps);
    for (const k of ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2e_ms']) assert.deepEqual(wasm[k], native[k], k);
    assert.deepEqual(wasm.memory, native.memory);
  }
});

test('serve: bit-identical to the native CLI over seeds and all three modes (rate mode, spread lengths)',
  { skip: !existsSync(cli) && 'no native build' }, async () => {
  const requests = [];
  for (const mode of ['blis-v2', 'corrected', 'measured'])
    for (let seed = 1; seed <= 10; ++seed)
      requests.push({ model: 'llama-3.1-8b-instruct', mode, tp: 1, workload: {
        input_tokens: { distribution: 'normal', mean: 900, stddev: 300, min: 16, max: 4000 },
        output_tokens: { distribution: 'exponential', mean: 120, min: 2, max: 600 },
        request_rate: 12, num_requests: 60, seed } });
  // One CLI call for the 30 (a document of requests), every result whole against the module's.
  const native = JSON.parse(execFileSync(cli, ['serve', '-'], { input: JSON.stringify(requests) }).toString());
  requests.forEach((r, i) => assert.deepEqual(calc.serve(r), native[i], `${r.mode} seed ${r.workload.seed}`));
});

test('serve: progress rises to 1; returning false cancels; a throwing callback cancels and rethrows', () => {
  const r = { model: 'llama-3.1-8b-instruct',
    workload: { input_tokens: 256, output_tokens: 512, concurrency: 8, num_requests: 64 } };
  const shares = [];
  calc.serve(r, { onProgress: (s) => { shares.push(s); } });
  assert.ok(shares.length >= 2, `${shares.length} progress calls`);
  assert.ok(shares.every((s, i) => s >= 0 && s <= 1 && (i === 0 || s >= shares[i - 1])));
  let calls = 0;
  assert.throws(() => calc.serve(r, { onProgress: () => ++calls < 2 }),
    (e) => e instanceof StepCalcError && e.code === 'cancelled');
  assert.equal(calls, 2);
  const boom = new Error('boom');
  assert.throws(() => calc.serve(r, { onProgress: () => { throw boom; } }), (e) => e === boom);
  assert.throws(() => calc.serve(r, { onProgress: 3 }), (e) => e.code === 'type_error' && e.path === 'onProgress');
  // The instance still serves after a cancel.
  assert.ok(calc.serve(r).ttft_ms.mean > 0);
});

test('serve: a call into the module from onProgress is refused (reentrant), and the module keeps working', () => {
  const r = { model: 'llama-3.1-8b-instruct',
    workload: { input_tokens: 256, output_tokens: 512, concurrency: 8, num_requests: 64 } };
  const step = { model: 'llama-3.1-8b-instruct', step: { decode_requests: [{ progress_index: 100 }] } };
  const seen = [];
  for (const inner of [() => calc.serve(r), () => calc.price(step), () => calc.sweep(step, 'decode_batch', [1, 2])]) {
    assert.throws(() => calc.serve(r, { onProgress: () => { inner(); } }), (e) => {
      seen.push(e.code);
      return e instanceof StepCalcError && e.code === 'reentrant' && /onProgress/.test(e.message);
    });
  }
  assert.deepEqual(seen, ['reentrant', 'reentrant', 'reentrant']);
  // Plain calls afterwards (the third one trapped when re-entry was let through).
  for (let i = 0; i < 4; i++) assert.ok(calc.price(step).step_time_us > 0);
  assert.ok(calc.serve(r).ttft_ms.mean > 0);
});
