// SPDX-License-Identifier: Apache-2.0
// Detail levels and batch entry points through the loader: every summary (the JSON
// path and the loader's summary path without JSON) equals the full result's headline
// on all public conformance cases in every mode; priceMany, sweepColumns and sweep2d
// hold exactly the points priced one at a time; input the summary path cannot take
// (odd items, toJSON, unknown keys) gets the JSON path's answer or error. Full results of
// plain requests come without writing the step as JSON, and equal the JSON path's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { load, StepCalcError } from '../../wasm/stepcalc.js';

const cases = JSON.parse(readFileSync(new URL('../data/conformance-cases.json', import.meta.url), 'utf8'));
const calc = await load();
const catalogue = calc.presets().warning_codes;

/** The summary a full result implies (docs/RESULT.md, "Summary detail"). */
function summaryOf(full) {
  const seen = new Set(full.warnings.map((w) => w.code));
  for (const code of seen) assert.ok(catalogue.includes(code), `${code} is in the catalogue`);
  return {
    ...(full.id !== undefined ? { id: full.id } : {}), mode: full.mode, detail: 'summary',
    step_time_us: full.step_time_us, total_us: full.breakdown.total_us_before_rounding, bound: full.bound,
    prefill_s: full.phases.prefill?.time_s ?? 0, decode_s: full.phases.decode?.time_s ?? 0,
    overhead_us: full.overhead_us, warning_codes: catalogue.filter((c) => seen.has(c)),
  };
}

await calc.loadKernels('H100'); // the measured mode's tables
const modes = [undefined, 'blis-v2', 'corrected', 'measured'];

/** calc.price's result, or the StepCalcError it throws (a case a mode cannot price). */
const attempt = (f) => {
  try {
    return f();
  } catch (error) {
    if (!(error instanceof StepCalcError)) throw error;
    return { code: error.code, path: error.path };
  }
};
const withMode = (c, mode) => (mode ? { ...c, mode } : c);

test('summary detail equals the full result (or its error) on all 160 cases in every mode (both paths)', () => {
  assert.equal(cases.length, 160);
  for (const mode of modes) {
    for (const c of cases) {
      const r = withMode(c, mode);
      const full = attempt(() => calc.price(r));
      const want = full.code ? full : summaryOf(full);
      assert.deepEqual(attempt(() => calc.price(r, { detail: 'summary' })), want, `${c.id} ${mode} (object)`);
      assert.deepEqual(attempt(() => calc.price(JSON.stringify(r), { detail: 'summary' })), want,
        `${c.id} ${mode} (JSON text)`);
      assert.deepEqual(attempt(() => calc.price({ ...r, detail: 'summary' })), { ...want },
        `${c.id} ${mode} (request field)`);
    }
  }
});

test('priceMany: one column entry per request, equal to the full results', () => {
  for (const mode of modes) {
    const many = calc.priceMany(cases, mode ? { mode } : undefined);
    assert.equal(many.length, 160);
    assert.ok(many.step_time_us instanceof Float64Array);
    cases.forEach((c, i) => {
      const full = attempt(() => calc.price(withMode(c, mode)));
      if (full.code) {
        assert.ok(Number.isNaN(many.step_time_us[i]));
        assert.deepEqual(many.errors.find((e) => e.index === i)?.code, full.code, `${c.id} ${mode}`);
        return;
      }
      const s = summaryOf(full);
      assert.equal(many.step_time_us[i], s.step_time_us);
      assert.equal(many.total_us[i], s.total_us);
      assert.equal(many.prefill_s[i], s.prefill_s);
      assert.equal(many.decode_s[i], s.decode_s);
      assert.equal(many.overhead_us[i], s.overhead_us);
      assert.equal(many.bound[i], s.bound);
      assert.deepEqual([...many.warning_codes[i]], s.warning_codes);
    });
  }
  const bad = calc.priceMany([cases[0], { model: 'nope', step: {} }]);
  assert.ok(Number.isNaN(bad.step_time_us[1]));
  assert.equal(bad.bound[1], null);
  assert.deepEqual(bad.errors.map((e) => [e.index, e.code]), [[1, 'unknown_preset']]);
});

test('sweepColumns equals sweep; sweep2d equals pricing each point', () => {
  const request = cases.find((c) => c.tags.includes('bench:b'));
  const values = Array.from({ length: 50 }, (_, i) => 16 + 331 * i);
  const cols = calc.sweepColumns(request, 'prefill_tokens', values);
  const points = calc.sweep(request, 'prefill_tokens', values);
  points.forEach((p, i) => {
    assert.equal(cols.step_time_us[i], p.step_time_us);
    assert.equal(cols.total_us[i], p.total_us);
    assert.equal(cols.bound[i], p.bound);
  });
  const grid = calc.sweep2d({ model: 'llama-3.1-8b-instruct', step: {} },
    { axis: 'decode_kv', values: [128, 4096, 30000] }, { axis: 'decode_batch', values: [1, 16] });
  assert.equal(grid.length, 6);
  assert.equal(grid.width, 3);
  assert.equal(grid.height, 2);
  const alone = calc.price({
    model: 'llama-3.1-8b-instruct',
    step: { decode_requests: Array.from({ length: 16 }, () => ({ progress_index: 4096 })) },
  });
  assert.equal(grid.step_time_us[4], alone.step_time_us);
  assert.equal(grid.total_us[4], alone.breakdown.total_us_before_rounding);
  assert.throws(() => calc.sweep2d(request, { axis: 'tp', values: [1] }, { axis: 'tp', values: [2] }),
    (e) => e instanceof StepCalcError && e.path === 'axis_y');
});

test('input the summary path cannot take gets exactly the JSON path answer or error', () => {
  const base = { id: 'x', model: 'llama-3.1-8b-instruct', step: { decode_requests: [{ progress_index: 100 }] } };
  const odd = [
    { ...base, step: { decode_requests: [{ progress_index: 100, extra: 1 }] } },
    { ...base, step: { decode_requests: [{ progress_index: 1.5 }] } },
    { ...base, step: { decode_requests: [{ progress_index: -1 }] } },
    { ...base, step: { decode_requests: [{ progress_index: 100, num_new_decode_tokens: undefined }] } },
    { ...base, step: { prefill_requests: [{ progress_index: 0 }] } },
    { ...base, step: { decode_requests: [[100]] } },
    { ...base, step: { decode_requests: [{ progress_index: 100, toJSON: () => ({ progress_index: 7 }) }] } },
    { ...base, step: [] },
    { ...base, step: { other: [] } },
    { ...base, model: 'nope' },
    { ...base, tp: 0 },
    { ...base, model: { hidden_size: 4096, num_attention_heads: 32, num_hidden_layers: 2, intermediate_size: NaN } },
    { ...base, step: { decode_requests: [{ progress_index: 1e9 }] } },
  ];
  for (const r of odd) {
    let want;
    try {
      want = calc.price(JSON.stringify(r), { detail: 'summary' });
    } catch (e) {
      want = e;
    }
    let got;
    try {
      got = calc.price(r, { detail: 'summary' });
    } catch (e) {
      got = e;
    }
    if (want instanceof Error) {
      assert.ok(got instanceof StepCalcError, JSON.stringify(r.step));
      assert.deepEqual([got.code, got.path], [want.code, want.path]);
    } else {
      assert.deepEqual(got, want);
    }
  }
  assert.throws(() => calc.price(base, { detail: 'brief' }), (e) => e.path === 'detail');
});

test('the summary path survives many distinct setups (slot reuse) and big steps (memory growth)', () => {
  for (let tp = 1; tp <= 40; tp++) {
    const r = { model: 'llama-2-70b-hf', tp: 1 + (tp % 8), step: { decode_requests: [{ progress_index: tp * 100 }] } };
    assert.deepEqual(calc.price(r, { detail: 'summary' }), summaryOf(calc.price(r)));
  }
  const big = { model: 'llama-3.1-8b-instruct',
    step: { decode_requests: Array.from({ length: 60000 }, (_, i) => ({ progress_index: i })) } };
  assert.deepEqual(calc.price(big, { detail: 'summary' }), summaryOf(calc.price(big)));
  const small = { model: 'llama-3.1-8b-instruct', step: { decode_requests: [{ progress_index: 5 }] } };
  assert.deepEqual(calc.price(small, { detail: 'summary' }), summaryOf(calc.price(small)));
});

test('summaries name the bound with the catalogue\'s bounds, each of them as the full result names it', () => {
  const { bounds } = calc.catalogue();
  assert.deepEqual([...bounds].sort(), ['decode', 'overhead', 'prefill']);
  const base = { model: 'llama-3.1-8b-instruct', mode: 'blis-v2' };
  const steps = { overhead: {}, prefill: { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 8192 }] },
    decode: { decode_requests: [{ progress_index: 4096 }] } };
  const requests = bounds.map((bound) => ({ ...base, step: steps[bound] }));
  const many = calc.priceMany(requests);
  requests.forEach((r, i) => {
    assert.equal(calc.price(r).bound, bounds[i], 'full');
    assert.equal(calc.price(r, { detail: 'summary' }).bound, bounds[i], 'summary path');
    assert.equal(many.bound[i], bounds[i], 'columns');
  });
});

test('full results without the step\'s JSON equal the JSON path\'s on all 160 cases in every mode', () => {
  for (const mode of modes) {
    for (const c of cases) {
      const r = withMode(c, mode);
      const viaText = attempt(() => calc.price(JSON.stringify(r)));
      assert.deepEqual(attempt(() => calc.price(r)), viaText, `${c.id} ${mode}`);
      assert.deepEqual(attempt(() => calc.price(r, { detail: 'full' })), viaText, `${c.id} ${mode} (option)`);
    }
  }
});

test('a full result of a plain request does not write its step as JSON; odd input gets the JSON path', () => {
  const request = cases.find((c) => c.tags.includes('bench:c'));
  const stringify = JSON.stringify;
  let steps = 0;
  JSON.stringify = function (value, ...rest) {
    const step = value?.step;
    if (step && (step.decode_requests?.length || step.prefill_requests?.length)) steps++;
    return stringify.call(this, value, ...rest);
  };
  let got;
  try {
    calc.price(request);
    got = calc.price(request);
  } finally {
    JSON.stringify = stringify;
  }
  assert.equal(steps, 0, 'the step was written as JSON');
  assert.deepEqual(got, calc.price(JSON.stringify(request)));
  const base = { id: 'y', model: 'llama-3.1-8b-instruct', mode: 'corrected',
    step: { decode_requests: [{ progress_index: 100 }] } };
  const odd = [
    { ...base, step: { decode_requests: [{ progress_index: 100, num_new_decode_tokens: 4 }] } },
    { ...base, step: { decode_requests: [{ progress_index: 100, num_new_decode_tokens: 1 }] } },
    { ...base, step: { decode_requests: [{ progress_index: 1e9 }] } },
    { ...base, step: { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 200000 }] } },
    { ...base, step: { decode_requests: [{ progress_index: 100, toJSON: () => ({ progress_index: 7 }) }] } },
    { ...base, tp: 3 },
    { ...base, model: 'nope' },
    { ...base, mode: 'measured', gpu: 'H100' },
    { ...base, mode: 'measured', gpu: 'B300' },
  ];
  for (const r of odd) {
    assert.deepEqual(attempt(() => calc.price(r)), attempt(() => calc.price(JSON.stringify(r))), JSON.stringify(r));
  }
});

test('a summary without JSON has the JSON path\'s keys in the JSON path\'s order, with and without an id', () => {
  const base = { model: 'llama-3.1-8b-instruct', step: { decode_requests: [{ progress_index: 100 }] } };
  for (const r of [base, { id: 'z', ...base }, { ...base, mode: 'measured' }]) {
    assert.equal(JSON.stringify(calc.price(r, { detail: 'summary' })),
      JSON.stringify(calc.price(JSON.stringify(r), { detail: 'summary' })), JSON.stringify(r));
  }
});

test('a large full result parses its attention lookups when first read, equal to the JSON path\'s in every way', () => {
  const c = cases.find((x) => x.tags.includes('bench:c'));
  // An id holding the text the loader looks for: inside a string its quotes are escaped.
  for (const request of [c, { ...c, id: '"attn_lookups":[],"gemms":[' }]) {
    const viaText = calc.price(JSON.stringify(request));
    const got = calc.price(request);
    const held = Object.getOwnPropertyDescriptor(got.phases.decode, 'attn_lookups');
    assert.equal(typeof held.get, 'function', 'the lookups are parsed on first read');
    assert.ok(held.enumerable);
    assert.equal(JSON.stringify(got), JSON.stringify(viaText), 'same keys in the same order, same values');
    assert.ok(got.phases.decode.attn_lookups.length > 100);
    assert.equal(got.phases.decode.attn_lookups, got.phases.decode.attn_lookups, 'parsed once');
    assert.deepEqual(structuredClone(got), viaText);
    got.phases.decode.attn_lookups = [];
    assert.deepEqual(got.phases.decode.attn_lookups, []);
  }
  // A small step's are parsed at once.
  const small = cases.find((x) => x.tags.includes('bench:a'));
  const smallLookups = Object.getOwnPropertyDescriptor(calc.price(small).phases.decode, 'attn_lookups');
  assert.equal(smallLookups.get, undefined);
});
