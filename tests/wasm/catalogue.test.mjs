// SPDX-License-Identifier: Apache-2.0
// The bad-input catalogue through the Wasm module's loader under Node: each bad input
// throws a StepCalcError with the catalogue's code and path, each priced entry gives
// a result; then 1,000 bad inputs in a row leave the module pricing exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { load, StepCalcError } from '../../wasm/stepcalc.js';
import { entriesFor, inputText } from '../support/bad-inputs.mjs';

const calc = await load();
const cases = JSON.parse(readFileSync(new URL('../data/conformance-cases.json', import.meta.url), 'utf8'));
const entries = entriesFor('wasm');

/** The StepCalcError that `fn` throws (fails if it returns or throws anything else). */
function thrown(fn) {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof StepCalcError, `not a StepCalcError: ${error?.stack ?? error}`);
    return error;
  }
  assert.fail('no error was thrown');
}

test('the catalogue is not empty', () => assert.ok(entries.length >= 150, `${entries.length} entries`));

for (const entry of entries) {
  test(`wasm: ${entry.name}`, () => {
    const text = inputText(entry.input);
    const run = entry.serve ? () => calc.serve(text) : () => calc.price(text);
    if (entry.code !== null) {
      const error = thrown(run);
      assert.deepEqual({ code: error.code, path: error.path }, { code: entry.code, path: entry.path });
      assert.ok(error.message.length > 0);
      return;
    }
    const result = run();
    if (entry.serve) assert.ok(result.ttft_ms.mean > 0);
    else assert.ok(Number.isInteger(result.step_time_us) && result.step_time_us >= 1);
    if (entry.warning) assert.ok(result.warnings.some((w) => w.code === entry.warning), `no warning ${entry.warning}`);
  });
}

test('wasm: the loader refuses what cannot become JSON, with a StepCalcError', () => {
  const cyclic = { model: 'llama-3.1-8b-instruct', step: {} };
  cyclic.self = cyclic;
  assert.equal(thrown(() => calc.price(cyclic)).code, 'type_error');
  assert.equal(thrown(() => calc.price({ model: 'llama-3.1-8b-instruct', tp: 1n, step: {} })).code, 'type_error');
  assert.equal(thrown(() => calc.price(undefined)).code, 'type_error');
  assert.equal(thrown(() => calc.price(42)).path, 'request');
  // NaN and Infinity become null through JSON.stringify: a type error, never a NaN result.
  const nan = thrown(() => calc.price({ model: 'llama-3.1-8b-instruct', tp: NaN, step: {} }));
  assert.deepEqual([nan.code, nan.path], ['type_error', 'tp']);
  const lone = thrown(() => calc.price('{"model":"llama\ud800","step":{}}'));
  assert.equal(lone.code, 'parse_error');
});

test('wasm: sweeps with hostile values give errors in place, never NaN', () => {
  const request = { model: 'llama-3.1-8b-instruct', step: { decode_requests: [{ progress_index: 512 }] } };
  const points = calc.sweep(request, 'decode_kv', [NaN, Infinity, -1, 0.5, 1e300, 512]);
  assert.deepEqual(points.map((p) => p.error?.code ?? 'ok'),
    ['invalid_value', 'invalid_value', 'invalid_value', 'invalid_value', 'invalid_value', 'ok']);
  assert.ok(Number.isInteger(points[5].step_time_us));
  const tooMuch = thrown(() => calc.sweep({ ...request, step: {} }, 'decode_batch', Array(100).fill(65536)));
  assert.deepEqual([tooMuch.code, tooMuch.path], ['too_many_requests', 'values']);
});

test('wasm: after 1,000 bad inputs in a row the module still prices a conformance case exactly', () => {
  const reference = cases[0];
  const before = calc.price(reference).step_time_us;
  assert.equal(before, reference.expected.step_time_us);
  const bad = entries.filter((e) => e.code !== null && !e.serve && inputText(e.input).length < 100000);
  for (let i = 0; i < 1000; i++) {
    const entry = bad[i % bad.length];
    const error = thrown(() => calc.price(inputText(entry.input)));
    assert.equal(error.code, entry.code);
  }
  for (const c of cases.slice(0, 20)) assert.equal(calc.price(c).step_time_us, c.expected.step_time_us, c.id);
  const big = entries.find((e) => e.name === '10^6 decode requests');
  for (let i = 0; i < 3; i++) assert.equal(thrown(() => calc.price(inputText(big.input))).code, 'too_large');
  assert.equal(calc.price(reference).step_time_us, before);
});
