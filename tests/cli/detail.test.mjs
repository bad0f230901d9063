// SPDX-License-Identifier: Apache-2.0
// Detail levels through the native CLI: `price --detail summary` gives, for every
// public conformance case in every mode, exactly the full result's headline; sweep2d
// prints a heat map's points as columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../build/stepcalc', import.meta.url));
const casesFile = fileURLToPath(new URL('../data/conformance-cases.json', import.meta.url));

function run(args, input) {
  const r = spawnSync(cli, args, { input, maxBuffer: 1 << 28, timeout: 60000 });
  assert.equal(r.error, undefined, `spawn: ${r.error}`);
  return { status: r.status, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}

/** The distinct warning codes of a full result, in the catalogue's order. */
function codesOf(full, catalogue) {
  const seen = new Set(full.warnings.map((w) => w.code));
  for (const code of seen) assert.ok(catalogue.includes(code), `code ${code} is in the catalogue`);
  return catalogue.filter((c) => seen.has(c));
}

test('cli: --detail summary equals the full result on all conformance cases, every mode', () => {
  const catalogue = JSON.parse(run(['presets']).stdout).warning_codes;
  assert.ok(catalogue.length >= 20);
  for (const mode of [[], ['--mode', 'blis-v2'], ['--mode', 'corrected']]) {
    const full = JSON.parse(run(['price', ...mode, casesFile]).stdout);
    const summary = JSON.parse(run(['price', ...mode, '--detail', 'summary', casesFile]).stdout);
    assert.equal(full.length, 160);
    assert.equal(summary.length, 160);
    for (let i = 0; i < full.length; i++) {
      const f = full[i];
      const s = summary[i];
      const where = `${f.id} ${mode.join(' ')}`;
      assert.deepEqual(s, {
        id: f.id, mode: f.mode, detail: 'summary', step_time_us: f.step_time_us,
        total_us: f.breakdown.total_us_before_rounding, bound: f.bound,
        prefill_s: f.phases.prefill?.time_s ?? 0, decode_s: f.phases.decode?.time_s ?? 0,
        overhead_us: f.overhead_us, warning_codes: codesOf(f, catalogue),
      }, where);
    }
  }
});

test('cli: --detail must be full or summary', () => {
  const r = run(['price', '--detail', 'brief', casesFile]);
  assert.equal(r.status, 2);
  assert.equal(JSON.parse(r.stdout).error.path, 'detail');
});

test('cli: sweep2d prints the points as columns, row-major, errors in place', () => {
  const request = JSON.stringify({ model: 'llama-3.1-8b-instruct',
    step: { decode_requests: [{ progress_index: 10 }] } });
  const r = run(['sweep2d', 'decode_kv', '1024,4096,-1', 'decode_batch', '1,64'], request);
  assert.equal(r.status, 0, r.stderr);
  const grid = JSON.parse(r.stdout);
  assert.equal(grid.step_time_us.length, 6);
  assert.deepEqual(grid.errors.map((e) => [e.index, e.path]), [[2, 'values_x[2]'], [5, 'values_x[2]']]);
  assert.equal(grid.step_time_us[2], null);
  // Point (batch 64, KV 4096) equals pricing that step alone.
  const alone = JSON.parse(run(['price', '-'], JSON.stringify({
    model: 'llama-3.1-8b-instruct',
      step: { decode_requests: Array.from({ length: 64 }, () => ({ progress_index: 4096 })) },
  })).stdout);
  assert.equal(grid.step_time_us[4], alone.step_time_us);
  assert.equal(grid.total_us[4], alone.breakdown.total_us_before_rounding);
  const same = run(['sweep2d', 'tp', '1', 'tp', '2'], request);
  assert.equal(same.status, 2);
  assert.equal(JSON.parse(same.stdout).error.path, 'axis_y');
});
