// SPDX-License-Identifier: Apache-2.0
// The Serving panel's workload in the link (`sv=`) and the serving request it builds,
// in node: round trips, refusals naming `sv`, and the request as the CLI takes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../wasm/stepcalc.js';
import { useCatalogue } from '../../web/catalogue.js';
import { defaultState, toRequest, encodeHash, decodeHash } from '../../web/state.js';
import { defaultServing, encodeServing, decodeServing, serveRequest, workloadOf } from '../../web/serving-state.js';

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
  assert.deepEqual(workloadOf(defaultServing(), 64),
    { input_tokens: 1024, output_tokens: 128, concurrency: 64, num_requests: 192 });
  const rate = serveRequest(toRequest(s), { ...defaultServing(), load: 'rate', rate: 2, requests: 40 });
  assert.deepEqual(rate.workload, { input_tokens: 1024, output_tokens: 128, request_rate: 2, num_requests: 40 });
  assert.ok(calc.serve(rate).throughput.requests_per_s > 0);
});
