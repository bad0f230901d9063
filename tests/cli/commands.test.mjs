// SPDX-License-Identifier: Apache-2.0
// The CLI's commands beside price: every error is one line for people on stderr plus
// its JSON object on stdout (exit 2); catalogue and resolve-model; the README's example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = `${root}build/stepcalc`;
const run = (args, input = '') => {
  const r = spawnSync(cli, args, { input, cwd: root, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

const request = { model: 'llama-2-7b-hf', step: { decode_requests: [{ progress_index: 512 }] } };

test('a validation error: JSON on stdout, one line on stderr, exit 2', () => {
  for (const [input, code, path] of [
    [{ ...request, tp: 0 }, 'invalid_value', 'tp'],
    [{ ...request, mode: 'nope' }, 'unknown_mode', 'mode'],
    [{ ...request, corrected: { params: { gemm_table_peak_tflops: 1e300 } } }, 'out_of_range',
      'corrected.params.gemm_table_peak_tflops'],
  ]) {
    const r = run(['price', '-'], JSON.stringify(input));
    assert.equal(r.status, 2, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).error.code, code);
    assert.equal(JSON.parse(r.stdout).error.path, path);
    const lines = r.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], new RegExp(`^stepcalc: ${path.replace(/[.[\]]/g, '\\$&')}: .+ \\[${code}\\]$`));
  }
});

test('a parse error and an array with bad elements say so on stderr too', () => {
  const parse = run(['price', '-'], '{');
  assert.equal(parse.status, 2);
  assert.equal(JSON.parse(parse.stdout).error.code, 'parse_error');
  assert.match(parse.stderr, /^stepcalc: .+ \[parse_error\]\n$/);
  const mixed = run(['price', '-'], JSON.stringify([request, { ...request, mode: 'x' }, { ...request, tp: 0 }]));
  assert.equal(mixed.status, 2);
  assert.equal(JSON.parse(mixed.stdout).length, 3);
  assert.match(mixed.stderr, /^stepcalc: \[1\]\.mode: .+ \[unknown_mode\] \(and 1 more failed\)\n$/);
  const fine = run(['price', '-'], JSON.stringify(request));
  assert.equal(fine.status, 0);
  assert.equal(fine.stderr, '');
});

test('catalogue and resolve-model', () => {
  const catalogue = JSON.parse(run(['catalogue']).stdout);
  assert.ok(catalogue.modes.some((m) => m.name === 'corrected'));
  const resolved = run(['resolve-model', '-'], '"meta-llama/Llama-2-7b-hf"');
  assert.equal(resolved.status, 0, resolved.stderr);
  assert.equal(JSON.parse(resolved.stdout).preset, 'llama-2-7b-hf');
  const bad = run(['resolve-model', '-'], '{"hidden_size": 64}');
  assert.equal(bad.status, 2);
  assert.equal(JSON.parse(bad.stdout).error.code, 'missing_field');
  assert.match(bad.stderr, /\[missing_field\]\n$/);
});

test("the README's sweep example runs on the shipped examples/request.json", () => {
  const r = run(['sweep', 'decode_batch', '1,8,64,256', 'examples/request.json']);
  assert.equal(r.status, 0, r.stderr);
  const points = JSON.parse(r.stdout);
  assert.deepEqual(points.map((p) => p.value), [1, 8, 64, 256]);
  assert.ok(points.every((p) => p.step_time_us > 0));
});
