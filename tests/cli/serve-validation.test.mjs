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
    assert.equal(v.runs, s.priced, key);
    for (const f of ['ttft_mape', 'tpot_mape', 'ttft_bias', 'tpot_bias']) assert.equal(v[f], s[f], `${key}: ${f}`);
    // a bias is a mean of the errors whose absolute values the MAPE averages
    assert.ok(Math.abs(v.ttft_bias) <= v.ttft_mape && Math.abs(v.tpot_bias) <= v.tpot_mape, key);
  }
});

test('no measured runs like this: no figures either', () => {
  const v = serve({ model: 'qwen3-32b', gpu: 'A100', tp: 4, workload }).validation;
  assert.deepEqual(v, { subset: null, note: 'no measured runs like this' });
});
