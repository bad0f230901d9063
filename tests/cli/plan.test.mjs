// SPDX-License-Identifier: Apache-2.0
// stepcalc plan (issue 24): the recommendation, re-served alone with `stepcalc serve` at
// its per-replica rate, meets the target; no cheaper candidate meets it; its vllm serve
// line names its TP; the default prices are presets/prices.json's; bad input exits 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs, { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = `${root}build/stepcalc`;
const run = (args, input = '') => {
  const r = spawnSync(cli, args, { input, cwd: root, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

const plan = {
  model: 'qwen3-32b', gpus: ['H100', 'A100', 'L40S'],
  workload: { input_tokens: 1000, output_tokens: 200, request_rate: 3 },
  slo: { ttft_ms: 800, tpot_ms: 40, percentile: 90 },
};

test('plan: the recommendation meets the target when served alone; nothing cheaper meets it', () => {
  const r = run(['plan', '-'], JSON.stringify(plan));
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  const best = result.recommended;
  assert.ok(best, 'a recommendation');
  assert.match(best.vllm_serve, new RegExp(`^vllm serve Qwen/Qwen3-32B --tensor-parallel-size ${best.tp} `));
  for (const c of result.candidates) {
    if (c.meets_slo) assert.ok(c.cost_per_hour_usd >= best.cost_per_hour_usd, `${c.gpu} TP ${c.tp}`);
    else assert.ok(typeof c.reason === 'string' && c.reason_message.length > 0);
  }
  const served = run(['serve', '-'], JSON.stringify(best.serve_request));
  assert.equal(served.status, 0, served.stderr);
  const s = JSON.parse(served.stdout);
  assert.equal(s.tp, best.tp);
  assert.ok(s.ttft_ms.p90 <= plan.slo.ttft_ms && s.tpot_ms.p90 <= plan.slo.tpot_ms, JSON.stringify(s.ttft_ms));
  assert.ok(Math.abs(best.serve_request.workload.request_rate * best.replicas - plan.workload.request_rate) < 1e-9);
  assert.ok(best.headroom.request_rate >= plan.workload.request_rate);
  assert.ok(result.frontier.length > 0 && result.frontier.every((i) => result.candidates[i].ttft_ms));
});

test('plan: a MoE model\'s expert- and data-parallel layouts; the candidate served alone gives its figures', () => {
  const moe = { model: 'qwen3-30b-a3b', gpus: ['H200'], gpu_hour_usd: 4,
    workload: { input_tokens: 1000, output_tokens: 300, request_rate: 8 }, slo: { ttft_ms: 1000, tpot_ms: 50 } };
  // The default search: TP with and without expert parallelism (TP 1 once: its ep is 1 either way).
  const defaults = run(['plan', '-'], JSON.stringify({ ...moe, search: { tp: [1, 2] } }));
  assert.equal(defaults.status, 0, defaults.stderr);
  assert.deepEqual(JSON.parse(defaults.stdout).candidates.map((c) => [c.tp, c.ep, c.dp]),
    [[1, 1, 1], [2, 1, 1], [2, 2, 1]]);
  // TP 1 x DP 2 with expert parallelism: 2 GPUs a replica.
  const r = run(['plan', '-'], JSON.stringify({ ...moe, search: { tp: [1], dp: [2], expert_parallel: [true] } }));
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  const best = result.recommended;
  assert.ok(best, 'a recommendation');
  const c = result.candidates[best.candidate];
  assert.deepEqual([c.tp, c.ep, c.dp, c.gpus_total, c.cost_per_hour_usd], [1, 2, 2, 2 * c.replicas, 8 * c.replicas]);
  assert.deepEqual([best.ep, best.dp], [2, 2]);
  assert.match(best.vllm_serve,
    /^vllm serve Qwen\/Qwen3-30B-A3B --tensor-parallel-size 1 --data-parallel-size 2 --enable-expert-parallel /);
  assert.deepEqual([best.serve_request.tp, best.serve_request.ep, best.serve_request.dp], [1, 2, 2]);
  const served = run(['serve', '-'], JSON.stringify(best.serve_request));
  assert.equal(served.status, 0, served.stderr);
  const s = JSON.parse(served.stdout);
  for (const key of ['ttft_ms', 'tpot_ms', 'e2e_ms']) {
    for (const stat of ['mean', 'p50', 'p90', 'p99']) assert.equal(s[key][stat], c[key][stat], `${key}.${stat}`);
  }
  assert.equal(s.throughput.output_tokens_per_s * c.replicas, c.throughput.output_tokens_per_s);
  assert.equal(s.throughput.output_tokens_per_s_per_gpu, c.throughput.output_tokens_per_s_per_gpu);
});

test('plan: default prices are presets/prices.json\'s', () => {
  const prices = JSON.parse(readFileSync(`${root}presets/prices.json`, 'utf8')).gpu_hour_usd;
  const r = run(['plan', '-'], JSON.stringify({ ...plan, gpus: undefined, search: { tp: [8] },
    slo: { e2e_ms: 1e6 } }));
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  assert.deepEqual(result.gpu_hour_usd, prices);
  assert.match(result.prices_source, /assumptions/);
});

test('plan: bad input is one line on stderr and the error JSON, exit 2', () => {
  for (const [input, code, path] of [
    [{ ...plan, slo: { ttft_ms: -1 } }, 'invalid_value', 'slo.ttft_ms'],
    [{ ...plan, search: { tp: [1], bogus: 1 } }, 'unknown_field', 'search.bogus'],
    [{ ...plan, workload: { input_tokens: 10, output_tokens: 10 } }, 'missing_field', 'workload.concurrency'],
    [{ ...plan, search: { engine: [{ max_num_seqs: 0 }] } }, 'invalid_value', 'search.engine[0].max_num_seqs'],
    [{ ...plan, search: { dp: [1, 2] } }, 'invalid_value', 'search.dp[1]'], // a dense model: replicas
    [{ ...plan, model: 'qwen3-30b-a3b', search: { expert_parallel: ['yes'] } }, 'type_error',
      'search.expert_parallel[0]'],
  ]) {
    const r = run(['plan', '-'], JSON.stringify(input));
    assert.equal(r.status, 2, r.stderr);
    const error = JSON.parse(r.stdout).error;
    assert.equal(error.code, code, error.message);
    assert.equal(error.path, path);
    assert.equal(r.stderr.split('\n').filter(Boolean).length, 1);
  }
});

test('plan --threads N: the candidates on N threads, the same document as one after another; bad N named', () => {
  const input = JSON.stringify({ ...plan, search: { tp: [1, 2, 4] } });
  const one = run(['plan', '--threads', '1', '-'], input);
  assert.equal(one.status, 0, one.stderr);
  assert.ok(JSON.parse(one.stdout).search.candidates >= 6);
  for (const n of ['2', '5']) assert.equal(run(['plan', '--threads', n, '-'], input).stdout, one.stdout);
  assert.equal(run(['plan', '-'], input).stdout, one.stdout); // the default: the CPU's cores
  for (const bad of ['0', '65', 'two', '']) {
    const r = run(['plan', '--threads', bad, '-'], input);
    assert.equal(r.status, 2, r.stderr);
    const error = JSON.parse(r.stdout).error;
    assert.equal(error.code, 'invalid_value');
    assert.equal(error.path, '--threads');
  }
});

test('plan --threads N with a pack that cannot be read: the same document as one thread (its error kept)', () => {
  const packs = `${root}build/kernels`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-kernels-'));
  try {
    for (const f of fs.readdirSync(packs)) {
      if (/^(h100-vllm-0\.24\.0|a100-vllm-0\.14\.0)-/.test(f)) fs.copyFileSync(path.join(packs, f), path.join(dir, f));
    }
    fs.rmSync(path.join(dir, 'a100-vllm-0.14.0-gemm-bf16.bin'));
    fs.mkdirSync(path.join(dir, 'a100-vllm-0.14.0-gemm-bf16.bin')); // not a regular file: an error, not absent
    const input = JSON.stringify({ ...plan, gpus: ['H100', 'A100'], search: { tp: [2, 4] } });
    const one = run(['--kernels', dir, 'plan', '--threads', '1', '-'], input);
    assert.equal(one.status, 0, one.stderr);
    const a100 = JSON.parse(one.stdout).candidates.find((c) => c.gpu === 'A100');
    assert.match(a100.reason_message, /regular file/);
    assert.equal(run(['--kernels', dir, 'plan', '--threads', '2', '-'], input).stdout, one.stdout);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});
