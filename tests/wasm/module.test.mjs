// SPDX-License-Identifier: Apache-2.0
// The Wasm module through its ES-module loader, under Node: the same numbers as the
// native CLI for every conformance case, errors as StepCalcError values, and a module
// that stays healthy after bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { transformSync } from 'esbuild';
import { load, price, StepCalcError } from '../../wasm/stepcalc.js';

const root = new URL('../../', import.meta.url);
const casesPath = new URL('tests/data/conformance-cases.json', root);
const cases = JSON.parse(readFileSync(casesPath, 'utf8'));
const cli = new URL('build/stepcalc', root).pathname;
const native = JSON.parse(execFileSync(cli, ['price', casesPath.pathname], { maxBuffer: 1 << 28 }));
const calc = await load();

const request = {
  model: 'llama-3.1-8b-instruct',
  tp: 1,
  step: {
    prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 2048 }],
    decode_requests: Array.from({ length: 64 }, (_, i) => ({ progress_index: 500 + 37 * i })),
  },
};

test('every conformance case prices to the reference integer, as natively', () => {
  assert.equal(cases.length, 160);
  cases.forEach((c, i) => {
    const result = calc.price(c);
    assert.equal(result.step_time_us, c.expected.step_time_us, c.id);
    assert.equal(result.step_time_us, native[i].step_time_us, c.id);
  });
});

test('the whole result object is identical to the native CLI output', () => {
  cases.forEach((c, i) => assert.deepEqual(calc.price(c), native[i], c.id));
});

test('the breakdown matches the reference breakdown field for field', () => {
  for (const c of cases) {
    const result = calc.price(c);
    assert.deepEqual(result.breakdown, c.expected.breakdown, c.id);
    assert.equal(result.attn_config_used, c.expected.attn_config_used, c.id);
  }
});

test('JSON text and objects price the same; the id is echoed', () => {
  const a = calc.price(request);
  const b = calc.price(JSON.stringify({ ...request, id: 'x-1' }));
  assert.equal(a.step_time_us, b.step_time_us);
  assert.equal(b.id, 'x-1');
  assert.equal(a.tokens.total, 2048 + 64);
});

test('errors are StepCalcError values with code and path', () => {
  const expectError = (input, code, path) => {
    assert.throws(() => calc.price(input), (e) => {
      assert.ok(e instanceof StepCalcError, 'is a StepCalcError');
      assert.ok(e instanceof Error);
      assert.equal(e.code, code);
      assert.equal(e.path, path);
      assert.ok(e.message.length > 10);
      return true;
    });
  };
  expectError('{"model": ', 'parse_error', '');
  expectError({ ...request, tp: 0 }, 'invalid_value', 'tp');
  expectError({ ...request, model: 'no-such-model' }, 'unknown_preset', 'model');
  expectError({ ...request, stpe: {} }, 'unknown_field', 'stpe');
  const bad = structuredClone(request);
  bad.step.decode_requests[3].progress_index = -1;
  expectError(bad, 'invalid_value', 'step.decode_requests[3].progress_index');
  expectError(null, 'type_error', 'request');
  expectError(42, 'type_error', 'request');
  const cyclic = {};
  cyclic.self = cyclic;
  expectError(cyclic, 'type_error', 'request');
});

test('a request priced by the module is the CLI\'s result for it', () => {
  // The bad-input catalogue's test (bad-inputs) checks the module after 1,000 refusals.
  const fromCli = JSON.parse(execFileSync(cli, ['price', '-'], { input: JSON.stringify(request) }).toString());
  assert.deepEqual(calc.price(request), fromCli);
});

test('catalogue() and resolveModel() are the CLI\'s catalogue and resolve-model', () => {
  const catalogue = JSON.parse(execFileSync(cli, ['catalogue']).toString());
  assert.deepEqual(calc.catalogue(), catalogue);
  const mine = calc.catalogue();
  mine.modes.length = 0;
  assert.deepEqual(calc.catalogue(), catalogue, 'a fresh copy per call');
  for (const model of ['meta-llama/Llama-3.1-8B-Instruct', cases[0].model,
    { ...cases[0].model, num_local_experts: 8 }]) {
    const input = JSON.stringify(model);
    const fromCli = JSON.parse(execFileSync(cli, ['resolve-model', '-'], { input }).toString());
    assert.deepEqual(calc.resolveModel(model), fromCli, input);
  }
  assert.equal(calc.resolveModel('meta-llama/Llama-3.1-8B-Instruct').preset, 'llama-3.1-8b-instruct');
  assert.throws(() => calc.resolveModel({ hidden_size: 64 }),
    (e) => e instanceof StepCalcError && e.code === 'missing_field');
  assert.throws(() => calc.resolveModel(null), (e) => e instanceof StepCalcError && e.path === 'model');
  assert.throws(() => calc.resolveModel([1]), (e) => e instanceof StepCalcError && e.code === 'type_error');
});

test('priceAll keeps order and reports bad elements in place', () => {
  const out = calc.priceAll([request, { model: 'nope', step: {} }, request]);
  assert.equal(out.length, 3);
  assert.equal(out[0].step_time_us, out[2].step_time_us);
  assert.equal(out[1].error.code, 'unknown_preset');
  assert.equal(out[1].error.path, '[1].model');
  assert.throws(() => calc.priceAll('x'), StepCalcError);
});

test('sweep prices each variant; the current value reproduces price()', () => {
  const values = [1024, 2048, 4096];
  const points = calc.sweep(request, 'prefill_tokens', values);
  assert.deepEqual(points.map((p) => p.value), values);
  assert.equal(points[1].step_time_us, calc.price(request).step_time_us);
  assert.ok(points[0].step_time_us < points[2].step_time_us);
  const batch = calc.sweep(request, 'decode_batch', [1, 64, 512]);
  assert.equal(batch[1].step_time_us, calc.price(request).step_time_us);
  const tp = calc.sweep(request, 'tp', [1, 2, 0]);
  assert.equal(tp[2].error.path, 'values[2]');
  assert.throws(() => calc.sweep(request, 'width', [1]), (e) => e.path === 'axis');
  assert.throws(() => calc.sweep(request, 'tp', ['1']), (e) => e.path === 'values');
});

test('presets, version and the one-shot helpers', async () => {
  const p = calc.presets();
  const shipped = readdirSync(new URL('presets/models/', root)).filter((f) => f.endsWith('.json'));
  assert.equal(p.models.length, shipped.length);
  assert.ok(p.models.some((m) => m.name === 'llama-3.1-8b-instruct' && m.num_key_value_heads === 8));
  assert.equal(p.gpus[0].name, 'H100');
  assert.ok(p.modes.includes('blis-v2'));
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
  assert.equal(calc.version(), pkg.version);
  assert.equal(await load(), calc, 'load() returns the same instance');
  assert.equal((await price(request)).step_time_us, calc.price(request).step_time_us);
});

// The module now also carries the kernel-pack decoder, the measured estimator and the serving
// simulation (134 KB gzipped when the limit was set at 140 KB, from 92 KB). The serving entry
// point (calc.serve) is what links the scheduler simulation, the workload parser and the
// serving result in: until it was bound they were dropped as unreferenced (main's module was
// 135.5 KB); with it 152 KB, hence 160 KB. The summary kernel, the batch entry points as typed
// columns and the loader's summary path (issue 15) add 10 KB (167 KB): 170 KB. Issues 21-27's
// first round (mode enum, kernel-set resolution asked of the core, precision-outlier guard, pack
// checksums, packs read by name, context checks, MoE checks) took it to 173.0 KB: 176 KB. What a
// user waits for is the page's first view (<= 200 KB gzipped with the default GPU's tables,
// BENCHMARKS.md); issue 25 trades bytes for speed there. Issue 22's ledger (workload warm-up, the
// ep/dp/quantization refusals, the per-subset validation summary in serve results) adds 1.9 KB
// (176.5 KB): 178 KB. Its precisions (a weight format per module group, each format's tables and
// stand-ins, the checkpoints' quantization configs, MoE shapes per dtype in the catalogue) add
// 3.6 KB (180.1 KB): 181 KB. Its expert-parallel and data-parallel layouts (request checks, the
// dispatch operator, the multi-node collective, the per-rank workload) 1.5 KB (181.6 KB): 182 KB.
// Issue 23's five more GPUs (their constants, aliases and kernel-set catalogue, 12 sets in all)
// 3.2 KB (184.8 KB): 185 KB.
// Issue 24's planner (calc.plan: the plan request's reader and checks, the search over candidates
// with its unloaded floor, replica count and rate bisection, the result writer, the loader's plan())
// adds 14.5 KB (199.3 KB; by stubbing: the request reader ~7 KB, the search and result ~8 KB): 200 KB.
// Issue 25 moves the planner to a module of its own (wasm/dist/stepcalc-plan.*, read on the first
// calc.plan, tests/wasm/plan.test.mjs), out of what the first view loads: 183.4 KB. Its speed
// (the step pricing at -O2, the measured mode and serving inlined, an -Os link, bulk memory;
// CMakeLists.txt and BENCHMARKS.md say what each costs) spends 15.5 KB of that: 198.9 KB. Issue 27's
// serving checks (the pricing's step-independent warnings in serve results, the chunked-prefill
// refusal, length fields a distribution does not read, null latency statistics) add 0.7 KB: 199.6 KB.
// Issue 26's steady state (open-loop passes until settled, overload, the steady window) adds 3.2 KB;
// simdjson.cpp without its document-stream parser (tools/simdjson-one-document.mjs) wins 3.0 KB: 199.2 KB.
// Issue 27's work bound (least-work refusal, a bound shared by a document, progress by work): 0.6 KB: 199.8 KB.
// Built without RTTI (the core uses none; Embind's runtime without it too): -0.9 KB: 198.9 KB.
// Issue 23's hybrid KV allocator and windowed attention for sliding-window models: +0.7 KB: 199.6 KB.
// From here the loader counts as the page ships it, minified in web/dist/app.js (esbuild, as
// scripts/build-page.mjs): 4.7 KB instead of 9.3 KB with its comments, with the loader compiling
// the module itself so that the page's workers are handed it (calc.forWorker; +0.6 KB as source)
// and the GPU presets' source text kept once (presets JSON only; -0.2 KB): 195.4 KB. Issue 23's eleven
// model presets (gpt-oss, DeepSeek-V3/R1, Kimi-K2.5, ...) and the linear-attention refusal: +1.4 KB: 196.7 KB.
// Its four GPUs with constants only, priced from a sibling's tables scaled by the datasheets: +1.2 KB: 197.9 KB.
// Issue 24/25's lookup memo (a serving simulation asks the same shapes step after step; the planner
// 2.2 s -> 1.4 s natively, 3.3 s -> 2.0 s in Wasm) spends 1.4 KB of it: 199.3 KB. Issue 25's JSON call
// (no printf: -1.5 KB; the writer's buffer, the reader, writer and simdjson inlined: +0.2 KB): 198.1 KB.
// Issue 25's serving memos (decode terms, operator times by row counts): +1.3 KB: 199.4 KB.
// Issue 23's gated DeltaNet (Qwen3-Next: its config and preset, the GDN lookups, operators, hybrid
// allocator and state blocks, the kernel sets' gdn part) +3.2 KB; the kernel sets' parts written from
// the compiled-in structs rather than carried again as JSON text (their sizes were two thirds of that
// text gzipped) -2.8 KB: 199.8 KB.
// The ledger's summary by the ledger's own precisions and with its expert- and data-parallel subsets
// (13 more rows), its MAPEs kept as hundredths of a percent and its sizes as bytes: +0.1 KB: 199.9 KB.
// A MoE model's dp ranks without expert parallelism (the experts sliced over tp x dp, the refusal of
// widths tp x dp does not divide in place of the refusal of the layout): +0.05 KB: 199.99 KB.
// Every table read over its monotone envelope (the GEMM rule, no longer GEMM's only): -6 B; MiniMax-M2's
// QK-norm all-reduce +0.07 KB; parse errors in our words, not simdjson's table of texts: -0.87 KB; the
// envelope along batch too: +0.27 KB: 199.45 KB; the MLA/DSA modules' FP8-KV guard: +0.14 KB: 199.59 KB;
// along GEMM's k too: 199.60 KB. The ledger subsets' bias (which way runs like a request erred) beside
// their MAPE: +0.27 KB: 199.87 KB. Their figures without the runs that measured fewer requests in
// flight than clients, and how many (`runs_left_out`): +0.05 KB: 199.92 KB. MXFP4 experts without a
// topk_softmax beside their monolithic kernel: +0.01 KB: 199.93 KB.
test('module size: .wasm + loader + glue gzipped stay under 200 KB', () => {
  const files = ['wasm/stepcalc.js', 'wasm/dist/stepcalc-core.js', 'wasm/dist/stepcalc-core.wasm'];
  const shipped = (f) => (f === 'wasm/stepcalc.js'
    ? transformSync(readFileSync(new URL(f, root), 'utf8'), { minify: true, format: 'esm' }).code
    : readFileSync(new URL(f, root)));
  const sizes = files.map((f) => gzipSync(shipped(f), { level: 9 }).length);
  const total = sizes.reduce((a, b) => a + b, 0);
  console.log(`gzipped: ${files.map((f, i) => `${f} ${sizes[i]} B`).join(', ')}; total ${total} B`);
  assert.ok(total < 200_000, `total ${total} B`);
});

test('Embind names a type by its address as emcc\'s printf writes "%p" (the module\'s own siprintf)', async () => {
  // wasm/bindings.cpp replaces the siprintf of Embind's __getTypeName, the module's only printf:
  // the texts must be musl's (as emcc 3.1.6 built it: no leading zeros, a null pointer "0").
  const { default: createStepcalcCore } = await import('../../wasm/dist/stepcalc-core.js');
  const core = await createStepcalcCore({ wasmBinary: readFileSync(new URL('wasm/dist/stepcalc-core.wasm', root)) });
  const typeName = (address) => {
    const at = core.___getTypeName(address);
    const text = Buffer.from(core.HEAPU8.subarray(at, core.HEAPU8.indexOf(0, at))).toString();
    core._free(at);
    return text;
  };
  assert.deepEqual([0x1234, 0xfedcba98 | 0, 0, 0x10, 8, 0x7fffffff].map(typeName),
    ['0x1234', '0xfedcba98', '0', '0x10', '0x8', '0x7fffffff']);
});

test('forWorker() hands over the compiled module and the packs read; load() takes them', async () => {
  const calc = await load();
  await calc.loadKernels('H100', undefined, ['gemm-bf16', 'attention-bf16', 'allreduce']);
  const share = calc.forWorker();
  assert.ok(share.wasmModule instanceof WebAssembly.Module);
  const files = Object.keys(share.kernelPacks);
  assert.ok(files.some((f) => /gemm-bf16\.bin$/.test(f)));
  assert.ok(files.every((f) => share.kernelPacks[f] instanceof Uint8Array));
  // A second copy of the loader (as a Worker has) whose kernel folder does not exist: the
  // packs must come from the share, and the module is not read again.
  const fresh = await import(`../../wasm/stepcalc.js?share=${Date.now()}`);
  const other = await fresh.load({ ...share, kernelsUrl: 'file:///nonexistent-stepcalc-kernels/' });
  await other.loadKernels('H100', undefined, ['gemm-bf16', 'attention-bf16', 'allreduce']);
  const request = { model: 'llama-3.1-8b-instruct', gpu: 'H100', mode: 'measured',
    step: { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 512 }], decode_requests: [] } };
  assert.deepEqual(other.price(request), calc.price(request));
  await assert.rejects(other.loadKernels('H100', undefined, ['moe']), (e) => e.code === 'io_error');
  const bad = await import(`../../wasm/stepcalc.js?bad=${Date.now()}`);
  await assert.rejects(bad.load({ wasmModule: new Uint8Array(8) }),
    (e) => e instanceof bad.StepCalcError && e.path === 'options.wasmModule');
});
