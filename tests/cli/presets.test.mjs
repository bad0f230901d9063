// SPDX-License-Identifier: Apache-2.0
// The model presets users ask for (issue 23): each prices a long prefill with decodes in
// `measured` and serves a workload on a GPU it fits on, through the native CLI; physics
// orders them (a 20B model is faster than a 120B one of the same family, FP8 weights read
// less than BF16 ones where decode is memory-bound).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = `${root}build/stepcalc`;
const run = (command, request) =>
  JSON.parse(execFileSync(cli, [command, '--kernels', `${root}build/kernels`, '-'],
    { input: JSON.stringify(request), maxBuffer: 1 << 26 }).toString().split('\n')[0]);

// Each with a GPU and TP it fits on.
const PRESETS = [
  ['gpt-oss-120b', 'H100', 1], ['gpt-oss-20b', 'H100', 1], ['deepseek-v3', 'H200', 8], ['deepseek-r1', 'H200', 8],
  ['kimi-k2.5', 'H200', 8], ['minimax-m2.5', 'H100', 4], ['qwen3-235b-a22b', 'H200', 4],
  ['qwen3-235b-a22b-fp8', 'H100', 4], ['llama-3.3-70b-instruct', 'H100', 2], ['qwen2.5-72b-instruct', 'H100', 2],
  ['gemma-3-27b-it', 'H100', 1],
];
const step = (model, gpu, tp, decodeOnly = false) => ({ model, gpu, tp, mode: 'measured',
  step: { prefill_requests: decodeOnly ? [] : [{ progress_index: 0, num_new_prefill_tokens: 4096 }],
    decode_requests: Array.from({ length: 8 }, (_, i) => ({ progress_index: 1000 + 100 * i })) } });

test('every preset is shipped with its source in presets/README.md', () => {
  const readme = readFileSync(`${root}presets/README.md`, 'utf8');
  for (const [name] of PRESETS) assert.match(readme, new RegExp(`\`${name.replace(/\./g, '\\.')}\``), name);
});

for (const [model, gpu, tp] of PRESETS) {
  test(`${model} prices and serves on ${tp} x ${gpu} in measured`, () => {
    const priced = run('price', step(model, gpu, tp));
    assert.ok(Number.isFinite(priced.step_time_us) && priced.step_time_us > 0, JSON.stringify(priced).slice(0, 300));
    assert.equal(priced.model.name ?? model, model);
    const served = run('serve', { model, gpu, tp, mode: 'measured',
      workload: { input_tokens: 1000, output_tokens: 200, concurrency: 8 } });
    assert.ok(served.ttft_ms?.mean > 0 && served.tpot_ms?.mean > 0, JSON.stringify(served).slice(0, 300));
    assert.ok(served.memory.fits);
  });
}

test('physics orders them: 20B before 120B, FP8 decode before BF16 on the same GPUs', () => {
  const t = (model, gpu, tp, decodeOnly) => run('price', step(model, gpu, tp, decodeOnly)).step_time_us;
  assert.ok(t('gpt-oss-20b', 'H100', 1) < t('gpt-oss-120b', 'H100', 1));
  assert.ok(t('qwen3-235b-a22b-fp8', 'H200', 4, true) < t('qwen3-235b-a22b', 'H200', 4, true));
});
