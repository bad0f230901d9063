// SPDX-License-Identifier: Apache-2.0
// calc.plan in the JS module (issue 24): the native CLI's result for the same request, the
// recommendation re-served alone meeting the target, progress, cancel (onProgress false,
// an aborted signal) and the re-entrancy guard; the planner as a module of its own, read on the
// first plan() (issue 25).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import test from 'node:test';
import { load, StepCalcError } from '../../wasm/stepcalc.js';

const calc = await load();
const cli = new URL('../../build/stepcalc', import.meta.url).pathname;

const request = {
  model: 'llama-3.1-8b-instruct', gpus: ['H100', 'L40S'], search: { tp: [1, 2] },
  workload: { input_tokens: 512, output_tokens: 64, request_rate: 6 }, slo: { ttft_ms: 400, tpot_ms: 30 },
};

test('plan: the recommendation meets the target when served alone, and names its TP', async () => {
  const result = await calc.plan(request);
  assert.equal(result.candidates.length, 4);
  const best = result.recommended;
  assert.ok(best);
  assert.ok(best.vllm_serve.includes(`--tensor-parallel-size ${best.tp} `));
  for (const c of result.candidates) if (c.meets_slo) assert.ok(c.cost_per_hour_usd >= best.cost_per_hour_usd);
  const served = calc.serve(best.serve_request);
  assert.ok(served.ttft_ms.p90 <= 400 && served.tpot_ms.p90 <= 30);
});

/** a and b equal, numbers within 1e-12 relative (the cost split's libm may differ in the last bit). */
const near = (a, b, path = '') => {
  if (typeof a === 'number' && typeof b === 'number') {
    assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a)), `${path}: ${a} vs ${b}`);
  } else if (a && b && typeof a === 'object') {
    assert.deepEqual(Object.keys(a), Object.keys(b), path);
    for (const k of Object.keys(a)) near(a[k], b[k], `${path}.${k}`);
  } else {
    assert.equal(a, b, path);
  }
};

test('plan: the module gives the native CLI\'s result', { skip: !existsSync(cli) && 'no native build' }, async () => {
  const native = JSON.parse(execFileSync(cli, ['plan', '-'], { input: JSON.stringify(request) }).toString());
  near(await calc.plan(request), native);
});

test('plan: a MoE model\'s expert- and data-parallel layouts, as natively; the candidate served alone',
  { skip: !existsSync(cli) && 'no native build' }, async () => {
  const moe = { model: 'qwen3-30b-a3b', gpus: ['H200'], search: { tp: [1, 2], dp: [1, 2], expert_parallel: [true] },
    workload: { input_tokens: 1000, output_tokens: 300, request_rate: 8 }, slo: { ttft_ms: 1000, tpot_ms: 50 } };
  const result = await calc.plan(moe);
  near(result, JSON.parse(execFileSync(cli, ['plan', '-'], { input: JSON.stringify(moe) }).toString()));
  assert.deepEqual(result.candidates.map((c) => [c.tp, c.ep, c.dp]), [[1, 1, 1], [1, 2, 2], [2, 2, 1], [2, 4, 2]]);
  for (const c of result.candidates) assert.equal(c.gpus_total, c.replicas * c.tp * c.dp);
  const c = result.candidates[3];
  const best = result.recommended;
  assert.ok(best);
  const served = calc.serve({ ...best.serve_request });
  const chosen = result.candidates[best.candidate];
  assert.equal(served.tpot_ms.p90, chosen.tpot_ms.p90);
  assert.equal(served.ttft_ms.p90, chosen.ttft_ms.p90);
  assert.equal(c.memory.weights_bytes < result.candidates[0].memory.weights_bytes, true, 'experts split over 4 GPUs');
});

test('plan: progress, cancel by onProgress or signal, and no re-entry', async () => {
  const shares = [];
  await calc.plan(request, { onProgress: (s) => void shares.push(s) });
  assert.ok(shares.length > 4 && shares.at(-1) === 1);
  assert.ok(shares.every((s, i) => i === 0 || s >= shares[i - 1]));
  await assert.rejects(calc.plan(request, { onProgress: () => false }),
    (e) => e instanceof StepCalcError && e.code === 'cancelled');
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(calc.plan(request, { signal: controller.signal }), (e) => e.code === 'cancelled');
  let inner;
  await calc.plan(request, { onProgress: () => {
    try {
      calc.presets();
      calc.price({ model: 'llama-2-7b-hf', step: { decode_requests: [{ progress_index: 8 }] } });
    } catch (error) {
      inner ??= error;
    }
    return false;
  } }).catch(() => {});
  assert.equal(inner?.code, 'reentrant');
  await assert.rejects(calc.plan({ ...request, slo: { percentile: 90 } }),
    (e) => e.code === 'missing_field' && e.path === 'slo');
});

// Issue 25: the planner is a module of its own (dist/stepcalc-plan.*), loaded by the first plan().
test('plan: the first-view module has no planner; the planner\'s module has it', async () => {
  const { default: createCore } = await import('../../wasm/dist/stepcalc-core.js');
  const { default: createPlan } = await import('../../wasm/dist/stepcalc-plan.js');
  const read = (f) => readFileSync(new URL(`../../wasm/dist/${f}`, import.meta.url));
  const core = await createCore({ wasmBinary: read('stepcalc-core.wasm') });
  const planner = await createPlan({ wasmBinary: read('stepcalc-plan.wasm') });
  assert.equal(core.plan, undefined);
  assert.equal(typeof core.price, 'function');
  assert.equal(typeof planner.plan, 'function');
  // Its own kernel registry: given no packs, it has no measured tables and recommends nothing.
  const outcome = planner.plan(JSON.stringify(request), null);
  assert.ok(outcome.ok, outcome.message);
  assert.equal(JSON.parse(new TextDecoder().decode(outcome.json)).recommended, null); // a view of module memory
  assert.ok((await calc.plan(request)).recommended);
});

/** Runs `body` (an ES module's text) in a fresh node process and returns its stdout as JSON. */
const fresh = (body) => JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', body],
  { cwd: new URL('../../', import.meta.url), stdio: ['ignore', 'pipe', 'pipe'] }).toString());

test('plan: the planner\'s module is read on the first plan() only, and a bad one spoils only plan()', () => {
  const out = fresh(`
    import { load } from './wasm/stepcalc.js';
    const calc = await load({ planWasmBinary: new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]) });
    const before = calc.price({ model: 'llama-2-7b-hf', step: { decode_requests: [{ progress_index: 8 }] } });
    const request = ${JSON.stringify(request)};
    const errors = [];
    for (let i = 0; i < 2; ++i) await calc.plan(request).catch((e) => errors.push([e.name, e.code]));
    const after = calc.price({ model: 'llama-2-7b-hf', step: { decode_requests: [{ progress_index: 8 }] } });
    console.log(JSON.stringify({ before: before.step_time_us, after: after.step_time_us, errors }));
  `);
  assert.ok(out.before > 0);
  assert.equal(out.after, out.before);
  assert.deepEqual(out.errors, [['StepCalcError', 'io_error'], ['StepCalcError', 'io_error']]);
});

test('plan: tables loaded with loadKernels before the first plan() reach the planner\'s module', async () => {
  // A fresh process: H100's packs go to the first-view module before the planner's module
  // exists, so plan()'s own loadKernels('H100') finds them loaded and adds nothing; they must
  // still reach the planner (without them it recommends nothing). The result is this
  // process's, whose planner got them through plan()'s own loads.
  const h100 = { ...request, gpus: ['H100'] };
  const out = fresh(`
    import { load } from './wasm/stepcalc.js';
    const calc = await load();
    await calc.loadKernels('H100');
    console.log(JSON.stringify(await calc.plan(${JSON.stringify(h100)})));
  `);
  assert.ok(out.recommended);
  assert.deepEqual(out, await calc.plan(h100));
});
