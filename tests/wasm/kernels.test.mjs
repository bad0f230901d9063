// SPDX-License-Identifier: Apache-2.0
// loadKernels: the measured kernel packs read from disk (Node) or fetched (any URL),
// once per file however many calls ask; unknown names and bad packs as StepCalcError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { load, StepCalcError } from '../../wasm/stepcalc.js';

const dist = new URL('../../wasm/dist/kernels/', import.meta.url);
const calc = await load();

/** A local server of the packs; `served` counts requests per file, `truncate` damages one. */
async function packServer(truncate = '') {
  const served = new Map();
  const server = http.createServer((req, res) => {
    const file = req.url.slice(1);
    served.set(file, (served.get(file) ?? 0) + 1);
    let bytes;
    try {
      bytes = readFileSync(new URL(file, dist));
    } catch {
      res.writeHead(404).end();
      return;
    }
    if (file === truncate) bytes = bytes.subarray(0, bytes.length >> 1);
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, served, close: () => server.close() };
}

test('presets list every GPU with its versions and every pack with its size and coverage', () => {
  const { gpu_specs: gpus, kernels } = calc.presets();
  assert.deepEqual(gpus.map((g) => g.name).sort(),
    ['A100', 'A100-PCIe', 'A30', 'B200', 'B300', 'B60', 'GB200', 'GB300', 'H100', 'H100-PCIe', 'H200', 'L4', 'L40S',
      'RTX-PRO-6000']);
  assert.equal(kernels.length, 12);  // the constants-only GPUs have no sets of their own
  assert.equal(gpus.find((g) => g.name === 'L4').kernels_from, 'L40S');
  assert.equal(gpus.find((g) => g.name === 'H100').kernels_from, undefined);
  assert.equal(gpus.find((g) => g.name === 'B300').aic_system, 'b300_sxm');
  const h100 = kernels.find((k) => k.gpu === 'H100' && k.default);
  assert.equal(h100.version, 'vllm-0.24.0');  // chosen by the accuracy ledger (docs/KERNELS.md)
  assert.deepEqual(h100.coverage.attention_head_dims, [64, 128, 192, 256, 512]);
  assert.ok(h100.coverage.mla);
  assert.ok(h100.parts.every((p) => readFileSync(new URL(p.file, dist)).length === p.bytes));
  const a100 = kernels.find((k) => k.gpu === 'A100');
  // Mixtral's experts (hidden 4096, 14,336 wide, 8 experts, top-2), measured with power-law routing only.
  assert.ok(a100.coverage.moe_shapes.bf16.some((s) => s.join() === '4096,14336,8,2'));
  // Per experts' dtype: gpt-oss's MXFP4 experts (hidden 2880, 128 experts, top-4) on H100.
  assert.ok(h100.coverage.moe_shapes.mxfp4.some((s) => s.join() === '2880,2880,128,4'));
  assert.ok(a100.parts.some((p) => p.name === 'moe'));
});

test('loadKernels reads a GPU\'s default tables from disk and reports the parts loaded', async () => {
  const loaded = await calc.loadKernels('b200');
  assert.equal(loaded.gpu, 'B200');
  assert.equal(loaded.version, 'vllm-0.24.0');
  assert.deepEqual(loaded.parts.sort(),
    ['allreduce', 'attention-bf16', 'attention-fp8', 'dsa', 'gdn', 'gemm-bf16', 'gemm-fp8', 'gemm-fp8_block',
      'gemm-nvfp4', 'kda', 'mla', 'moe', 'moe-fp8_block', 'moe-int4', 'moe-mxfp4', 'moe-nvfp4']);
  const some = await calc.loadKernels('H100', 'vllm-0.24.0', ['gemm-bf16', 'allreduce']);
  assert.deepEqual(some.parts.sort(), ['allreduce', 'gemm-bf16']);
  // A GPU without tables of its own loads its sibling's; pricing on it scales them and says so.
  const l4 = await calc.loadKernels('l4');
  assert.equal(l4.gpu, 'L40S');
  const step = { decode_requests: Array.from({ length: 8 }, () => ({ progress_index: 2000 })) };
  const onL4 = calc.price({ model: 'llama-3.1-8b-instruct', gpu: 'L4', mode: 'measured', step });
  const onL40S = calc.price({ model: 'llama-3.1-8b-instruct', gpu: 'L40S', mode: 'measured', step });
  assert.ok(onL4.step_time_us > onL40S.step_time_us);
  assert.ok(onL4.warnings.some((w) => w.code === 'gpu_tables_scaled' && w.message.includes('L40S')));
});

test('unknown GPUs, versions and parts are refused with the choices', async () => {
  await assert.rejects(calc.loadKernels('H800'), (e) => e instanceof StepCalcError && e.code === 'unknown_gpu' &&
    e.message.includes('A100, A100-PCIe, A30, B200, B300, B60, GB200, GB300, H100, H100-PCIe, H200, L4, L40S, ' +
      'RTX-PRO-6000'));
  await assert.rejects(calc.loadKernels('A100', 'vllm-0.24.0'), (e) => e.code === 'unknown_kernels' &&
    e.path === 'kernels' && e.message.includes('vllm-0.14.0'));
  await assert.rejects(calc.loadKernels('A100', undefined, ['moe-nvfp4']), (e) => e.code === 'invalid_value');
  await assert.rejects(calc.loadKernels(42), (e) => e.code === 'type_error');
});

test('concurrent loads over HTTP share one read per file', async () => {
  const server = await packServer();
  try {
    const fresh = await load.call(null, {}); // the shared instance; a second module below
    assert.ok(fresh);
    const { load: loadAgain } = await import(`../../wasm/stepcalc.js?second=${Date.now()}`);
    const other = await loadAgain({ kernelsUrl: server.url });
    const results = await Promise.all([other.loadKernels('L40S'), other.loadKernels('l40s'),
      other.loadKernels('L40S')]);
    const all = calc.presets().kernels.find((k) => k.gpu === 'L40S' && k.default).parts.length;
    assert.ok(all >= 6);
    results.forEach((r) => assert.equal(r.parts.length, all));
    assert.ok(server.served.size >= all);
    for (const [file, count] of server.served) assert.equal(count, 1, file);
  } finally {
    server.close();
  }
});

test('a damaged or missing pack is an error naming the GPU, and the module keeps working', async () => {
  const server = await packServer('a100-vllm-0.14.0-attention-bf16.bin');
  try {
    const { load: loadAgain } = await import(`../../wasm/stepcalc.js?third=${Date.now()}`);
    const other = await loadAgain({ kernelsUrl: server.url });
    await assert.rejects(other.loadKernels('A100'), (e) => e.code === 'corrupt_kernels' && e.message.includes('A100'));
    const missing = await loadAgain({ kernelsUrl: `${server.url}nowhere/` });
    assert.equal(missing, other);  // one instance per module: the URL of the first load holds
    const { load: loadThird } = await import(`../../wasm/stepcalc.js?fourth=${Date.now()}`);
    const lost = await loadThird({ kernelsUrl: `${server.url}nowhere/` });
    await assert.rejects(lost.loadKernels('H200'), (e) => e.code === 'io_error' && e.message.includes('H200'));
    assert.equal(other.price({ model: 'llama-3.1-8b-instruct', step: { decode_requests: [{ progress_index: 9 }] } })
      .mode,
      'blis-v2');
  } finally {
    server.close();
  }
});

test('loadKernels resolves names and versions as the core prices them: same set, same refusals', async () => {
  const loaded = await calc.loadKernels('h200', '', ['allreduce']);
  const { gpu_specs: gpus } = calc.presets();
  const h200 = gpus.find((g) => g.name === 'H200');
  assert.deepEqual(loaded, { gpu: 'H200', version: h200.default_kernels, parts: ['allreduce'] });
  // An unknown GPU or version: the loader refuses as the core does (the version's
  // message word for word; a price names the GPU's constants too).
  for (const [gpu, version] of [['Z900', undefined], ['H100', 'vllm-9.9.9']]) {
    const request = { model: 'llama-3.1-8b-instruct', mode: 'measured', gpu, step: {} };
    if (version) request.kernels = version;
    let priced;
    try {
      calc.price(request);
    } catch (error) {
      priced = error;
    }
    await assert.rejects(calc.loadKernels(gpu, version), (error) => {
      assert.ok(error instanceof StepCalcError);
      assert.equal(error.code, priced.code);
      assert.equal(error.path, priced.path);
      if (version) assert.equal(error.message, priced.message);
      else assert.equal(error.message, `Unknown GPU 'Z900'; known: ${gpus.map((g) => g.name).join(', ')}.`);
      return true;
    });
  }
});

test('a pack refused by the core (an HTML page served with 200) is not cached: a retry fetches it again', async () => {
  const html = 'a100-vllm-0.14.0-gemm-bf16.bin';
  let fallbacks = 1;  // the first request for `html` gets a web server's fallback page
  const served = new Map();
  const server = http.createServer((req, res) => {
    const file = req.url.slice(1);
    served.set(file, (served.get(file) ?? 0) + 1);
    if (file === html && fallbacks-- > 0) {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><body>Not here</body></html>');
      return;
    }
    res.writeHead(200).end(readFileSync(new URL(file, dist)));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { load: loadFresh } = await import(`../../wasm/stepcalc.js?html=${Date.now()}`);
    const fresh = await loadFresh({ kernelsUrl: `http://127.0.0.1:${server.address().port}/` });
    await assert.rejects(fresh.loadKernels('A100', '', ['gemm-bf16']), (e) => e.code === 'corrupt_kernels');
    const loaded = await fresh.loadKernels('A100', '', ['gemm-bf16']);
    assert.deepEqual(loaded.parts, ['gemm-bf16']);
    assert.equal(served.get(html), 2);
  } finally {
    server.close();
  }
});
