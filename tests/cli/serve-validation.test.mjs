// SPDX-License-Identifier: Apache-2.0
// A serve result's `validation` is the ledger subset nearest the request (docs/VALIDATION.md)
// with its figures as docs/validation.json has them: the runs, the MAPE and the bias (the
// signed mean error: which way the estimates erred on runs like this one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ledger = JSON.parse(readFileSync(`${root}docs/validation.json`, 'utf8'));
const serve = (request) => {
  const r = spawnSync(`${root}build/stepcalc`, ['serve', '-'], { input: JSON.stringify(request), cwd: root,
    encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
};
const workload = { input_tokens: 64, output_tokens: 4, concurrency: 1 };

/** A subset's figures over its priced runs but those with fewer requests in flight than clients, from its runs. */
function besideEstimates(key) {
  const runs = ledger.runs.filter((r) => r.subset === key && r.status === 'priced');
  const kept = runs.filter((r) => !r.in_flight);
  const figure = (f, abs) => Math.round(100 * (100 * kept.reduce((a, r) => a + (abs ? Math.abs(f(r)) : f(r)), 0) /
    kept.length)) / 100;
  const ttft = (r) => r.ttft_ms / r.silicon_ttft_ms - 1, tpot = (r) => r.tpot_ms / r.silicon_tpot_ms - 1;
  return { runs: kept.length, runs_left_out: runs.length - kept.length, ttft_mape: figure(ttft, true),
    tpot_mape: figure(tpot, true), ttft_bias: figure(ttft, false), tpot_bias: figure(tpot, false) };
}

test('the nearest subset\'s runs, MAPE and bias, as the committed ledger has them', () => {
  for (const [request, key] of [
    [{ model: 'qwen3-32b', gpu: 'H100', tp: 4, workload }, 'Qwen/Qwen3-32B | H100 | bf16 | TP4'],
    [{ model: 'kimi-k2.5', gpu: 'H200', tp: 8, workload }, 'moonshotai/Kimi-K2.5 | H200 | int4_wo | TP8'],
    [{ model: 'minimax-m2.5', gpu: 'H100', tp: 4, ep: 16, dp: 4, mode: 'measured', workload },
      'MiniMaxAI/MiniMax-M2.5 | H100 | fp8 | TP4 EP16 DP4'],
  ]) {
    const v = serve(request).validation;
    const s = ledger.subsets.find((x) => x.key === key);
    assert.ok(s, key);
    assert.equal(v.subset, key);
    // No run of these measured a smaller load than its row says: the subset's own figures.
    assert.equal(v.runs, s.priced, key);
    assert.equal(v.runs_left_out, 0, key);
    for (const f of ['ttft_mape', 'tpot_mape', 'ttft_bias', 'tpot_bias']) assert.equal(v[f], s[f], `${key}: ${f}`);
    const { subset: _s, gpu: _g, precision: _p, moe: _m, tp: _t, ...figures } = v;
    assert.deepEqual(figures, besideEstimates(key), key);
    // a bias is a mean of the errors whose absolute values the MAPE averages
    assert.ok(Math.abs(v.ttft_bias) <= v.ttft_mape && Math.abs(v.tpot_bias) <= v.tpot_mape, key);
  }
});

test('runs that measured fewer requests in flight than clients are not the error beside an estimate', () => {
  // gpt-oss-120b on four H100s: three of its 26 runs had 512 clients yet decoded ~100 requests at
  // once (docs/VALIDATION.md); their TPOTs, far below the same setup's at 64 clients, made the
  // subset's TPOT MAPE 85% with a bias of +75%, which no load of the others comes near.
  const key = 'openai/gpt-oss-120b | H100 | mxfp4 | TP4';
  const v = serve({ model: 'gpt-oss-120b', gpu: 'H100', tp: 4, mode: 'measured', workload }).validation;
  const s = ledger.subsets.find((x) => x.key === key);
  assert.equal(v.subset, key);
  assert.equal(s.priced, 26);
  const expected = besideEstimates(key);
  assert.equal(expected.runs_left_out, 3);
  for (const f of ['runs', 'runs_left_out', 'ttft_mape', 'tpot_mape', 'ttft_bias', 'tpot_bias'])
    assert.equal(v[f], expected[f], f);
  assert.deepEqual(s.beside_estimates, { priced: expected.runs, left_out: expected.runs_left_out,
    ttft_mape: expected.ttft_mape, ttft_bias: expected.ttft_bias, tpot_mape: expected.tpot_mape,
    tpot_bias: expected.tpot_bias });
  assert.ok(v.tpot_mape < 25 && s.tpot_mape > 80, `${v.tpot_mape} beside, ${s.tpot_mape} over every run`);
});

test('no measured runs like this: no figures either', () => {
  const v = serve({ model: 'qwen3-32b', gpu: 'A100', tp: 4, workload }).validation;
  assert.deepEqual(v, { subset: null, note: 'no measured runs like this' });
});
