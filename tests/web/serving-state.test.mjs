// SPDX-License-Identifier: Apache-2.0
// The Serving panel's workload in the link (`sv=`) and the serving request it builds,
// in node: round trips, refusals naming `sv`, and the request as the CLI takes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../wasm/stepcalc.js';
import { useCatalogue } from '../../web/catalogue.js';
import { defaultState, toRequest, encodeHash, decodeHash } from '../../web/state.js';
import {
  decodeDetails, defaultDetails, defaultServing, encodeDetails, encodeServing, decodeServing, lengthOf, serveRequest,
  workloadOf,
} from '../../web/serving-state.js';

const calc = await load();
useCatalogue(calc.catalogue());
await calc.loadKernels('H100'); // the page's default mode is measured

test('the serving workload survives the link, closed and open loop', () => {
  const closed = { ...defaultServing(), input: 2048, output: 64, concurrency: 16, usd: 2.5 };
  const open = { ...defaultServing(), load: 'rate', rate: 3.25, requests: 500 };
  for (const serving of [closed, open]) {
    const s = { ...defaultState(), serving };
    const hash = encodeHash(s);
    assert.match(hash, /&sv=/);
    assert.deepEqual(decodeHash(`#${hash}`).state.serving, serving);
  }
  assert.equal(encodeServing(closed), '2048_64_c16_n0_u2.5');
  assert.equal(encodeServing(open), '1024_128_r3.25_n500_u0');
  assert.ok(!encodeHash(defaultState()).includes('sv='), 'no workload set: no sv');
});

test('a malformed sv is refused with the path sv', () => {
  for (const bad of ['1024_128_c8', '1024_128_x8_n0_u0', '1e3_128_c8_n0_u0', '1024_-1_c8_n0_u0', '1024_128_c8_0_u0']) {
    assert.throws(() => decodeServing(bad), (e) => e.path === 'sv', bad);
    assert.throws(() => decodeHash(`#v=1&m=qwen3-32b&sv=${bad}`), (e) => e.path === 'sv', bad);
  }
});

test('the serving request is the page\'s request without its step, with the workload; the CLI\'s format', () => {
  const s = { ...defaultState(), model: 'qwen3-32b', tp: 4 };
  const r = serveRequest(toRequest(s), { ...defaultServing(), usd: 3 });
  assert.equal(r.step, undefined);
  assert.deepEqual(r.workload, { input_tokens: 1024, output_tokens: 128, concurrency: 8 });
  assert.equal(r.gpu_hour_usd, 3);
  assert.ok(calc.serve(r).ttft_ms.mean > 0);
  assert.deepEqual(workloadOf(defaultServing(), { concurrency: 64 }),
    { input_tokens: 1024, output_tokens: 128, concurrency: 64, num_requests: 192 });
  const rate = serveRequest(toRequest(s), { ...defaultServing(), load: 'rate', rate: 2, requests: 40 });
  assert.deepEqual(rate.workload, { input_tokens: 1024, output_tokens: 128, request_rate: 2, num_requests: 40 });
  assert.ok(calc.serve(rate).throughput.requests_per_s > 0);
});

test('the engine and workload details and the targets follow the five parts of sv; older links still read', () => {
  const details = { ...defaultDetails(), seqs: 64, budget: 4096, util: 0.85, hit: 0.3, spread: 'normal', spreadPct: 15,
    ttft: 500, tpot: 40.5, curve: 'rate' };
  const more = encodeDetails(details);
  assert.equal(more, 's64_b4096_g0.85_h0.3_t500_p40.5_ln15_xr');
  const serving = { ...defaultServing(), more };
  const hash = encodeHash({ ...defaultState(), serving });
  assert.match(hash, /&sv=1024_128_c8_n0_u0_s64_b4096_g0\.85_h0\.3_t500_p40\.5_ln15_xr(&|$)/);
  const back = decodeHash(`#${hash}`).state.serving;
  assert.deepEqual(back, serving, 'the first view keeps the details as text');
  assert.deepEqual(decodeDetails(back.more), details);
  // Exponential has no share; nothing set writes nothing.
  assert.equal(encodeDetails({ ...defaultDetails(), spread: 'exponential' }), 'le');
  assert.equal(encodeDetails(defaultDetails()), '');
  // A link made before the details: five parts, no `more`, the details' defaults.
  const old = decodeServing('2048_64_c16_n0_u2.5');
  assert.equal(old.more, undefined);
  assert.deepEqual(decodeDetails(old.more), defaultDetails());
  for (const bad of ['zz', 's', 'sabc', 'lq10', 'le5', 'xq', 'g1e3']) {
    assert.throws(() => decodeDetails(bad), (e) => e.path === 'sv' && e.message.includes(bad.slice(0, 12)), bad);
  }
});

test('a length spread becomes the core\'s distribution; the engine and the prefix hit go into the request', () => {
  const s = { ...defaultServing(), ...defaultDetails(), input: 1000, output: 100 };
  assert.equal(lengthOf(1000, s), 1000);
  assert.deepEqual(lengthOf(1000, { ...s, spread: 'uniform', spreadPct: 25 }),
    { distribution: 'uniform', min: 750, max: 1250 });
  assert.deepEqual(lengthOf(3, { ...s, spread: 'uniform', spreadPct: 100 }),
    { distribution: 'uniform', min: 1, max: 6 });
  assert.deepEqual(lengthOf(1000, { ...s, spread: 'normal', spreadPct: 10 }),
    { distribution: 'normal', mean: 1000, stddev: 100 });
  assert.deepEqual(lengthOf(1000, { ...s, spread: 'exponential' }), { distribution: 'exponential', mean: 1000 });
  // A length that is not a whole number stays as typed, for the core to name.
  assert.equal(lengthOf('12x', { ...s, spread: 'uniform', spreadPct: 10 }), '12x');
  for (const pct of [null, -1, 101, 'abc']) {
    assert.throws(() => lengthOf(1000, { ...s, spread: 'uniform', spreadPct: pct }), (e) => e.path === 'spread');
  }
  const r = serveRequest(toRequest({ ...defaultState(), model: 'qwen3-32b', tp: 4 }),
    { ...s, seqs: 32, util: 0.8, hit: 0.5, spread: 'uniform', spreadPct: 10 });
  assert.deepEqual(r.engine, { max_num_seqs: 32, gpu_memory_utilization: 0.8 });
  assert.deepEqual(r.workload, { input_tokens: { distribution: 'uniform', min: 900, max: 1100 },
    output_tokens: { distribution: 'uniform', min: 90, max: 110 }, concurrency: 8, prefix_cache_hit_ratio: 0.5 });
  assert.ok(calc.serve(r).ttft_ms.mean > 0, 'the core takes it');
  assert.equal(serveRequest(toRequest(defaultState()), s).engine, undefined, 'no details: no engine');
  // A curve point over request rate: an open loop at that rate, the workload's request count.
  assert.deepEqual(workloadOf({ ...s, requests: 300 }, { rate: 2.5 }),
    { input_tokens: 1000, output_tokens: 100, request_rate: 2.5, num_requests: 300 });
});
