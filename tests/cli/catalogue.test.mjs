// SPDX-License-Identifier: Apache-2.0
// The bad-input catalogue through the native CLI (build/stepcalc price -): each bad
// input exits 2 with {"error": {code, path, message}} on stdout; each priced entry
// exits 0 with a result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { entriesFor, inputBytes } from '../support/bad-inputs.mjs';

const cli = fileURLToPath(new URL('../../build/stepcalc', import.meta.url));

function run(args, input) {
  const r = spawnSync(cli, args, { input, maxBuffer: 1 << 28, timeout: 30000 });
  assert.equal(r.error, undefined, `spawn: ${r.error}`);
  return { status: r.status, signal: r.signal, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}

test('the CLI exists (run scripts/build.sh first)', () => {
  assert.ok(existsSync(cli), cli);
});

const entries = entriesFor('cli');

test('the catalogue is not empty', () => assert.ok(entries.length >= 150, `${entries.length} entries`));

// Inputs above 1 MB go through a file: the CLI stops reading stdin after the 16 MiB
// limit, which would break the pipe under a writer that has more to send.
const scratch = mkdtempSync(join(tmpdir(), 'stepcalc-cli-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

function priceInput(bytes, command = 'price') {
  if (bytes.length <= 1 << 20) return run([command, '-'], bytes);
  const file = join(scratch, 'input.json');
  writeFileSync(file, bytes);
  return run([command, file]);
}

for (const entry of entries) {
  test(`cli: ${entry.name}`, () => {
    const r = priceInput(inputBytes(entry.input), entry.serve ? 'serve' : 'price');
    assert.equal(r.signal, null, `killed by ${r.signal}`);
    const out = JSON.parse(r.stdout);
    if (entry.code !== null) {
      assert.equal(r.status, 2, r.stdout.slice(0, 300));
      assert.deepEqual({ code: out.error?.code, path: out.error?.path }, { code: entry.code, path: entry.path });
      assert.ok(out.error.message.length > 0);
    } else {
      assert.equal(r.status, 0, r.stdout.slice(0, 300));
      assert.equal(out.error, undefined);
      if (entry.serve) assert.ok(out.ttft_ms.mean > 0);
      else assert.ok(Number.isInteger(out.step_time_us) && out.step_time_us >= 1);
      if (entry.warning) assert.ok(out.warnings.some((w) => w.code === entry.warning), `no warning ${entry.warning}`);
    }
  });
}

test('cli: a batch puts each error in its slot and exits 2', () => {
  const good = { model: 'llama-3.1-8b-instruct', step: { decode_requests: [{ progress_index: 512 }] } };
  const r = run(['price', '-'], JSON.stringify([good, { ...good, tp: 0 }, good]));
  assert.equal(r.status, 2);
  const out = JSON.parse(r.stdout);
  assert.equal(out.length, 3);
  assert.deepEqual(out[1].error.code, 'invalid_value');
  assert.equal(out[1].error.path, '[1].tp');
  assert.equal(out[0].step_time_us, out[2].step_time_us);
});

test('cli: an empty batch prices nothing and succeeds', () => {
  const r = run(['price', '-'], '[]');
  assert.equal(r.status, 0);
  assert.equal(r.stdout.trim(), '[]');
});

test('cli: an unreadable file is io_error, exit 2', () => {
  const r = run(['price', '/nonexistent/request.json']);
  assert.equal(r.status, 2);
  assert.equal(JSON.parse(r.stdout).error.code, 'io_error');
});

test('cli: sweep values that are not numbers are refused; bad points are errors in place', () => {
  const request = join(scratch, 'sweep.json');
  writeFileSync(request,
    JSON.stringify({ model: 'llama-3.1-8b-instruct', step: { decode_requests: [{ progress_index: 512 }] } }));
  const words = run(['sweep', 'tp', '1,two', request]);
  assert.equal(words.status, 2);
  assert.equal(JSON.parse(words.stdout).error.path, 'values');
  const points = run(['sweep', 'tp', '1,0,nan,inf,2', request]);
  assert.equal(points.status, 0);
  const out = JSON.parse(points.stdout);
  assert.deepEqual(out.map((p) => p.error?.code ?? 'ok'),
    ['ok', 'invalid_value', 'invalid_value', 'invalid_value', 'ok']);
  const axis = run(['sweep', 'heads', '1', request]);
  assert.equal(axis.status, 2);
  assert.equal(JSON.parse(axis.stdout).error.path, 'axis');
});

test('cli: a sweep that would price too many requests is refused before any point is priced', () => {
  const request = JSON.stringify({ model: 'llama-3.1-8b-instruct', step: {} });
  const { limits } = JSON.parse(run(['catalogue']).stdout);
  // 100 points of 65,536 requests: more than the sweep limit in all, each point within a step's.
  const values = Array(100).fill(limits.requests_per_step);
  assert.ok(values.length * limits.requests_per_step > limits.sweep_requests);
  // The bounded work is counted, not timed: a sweep answers one entry per priced point
  // (an array, errors in place), and this one answers with none, only the refusal.
  const r = run(['sweep', 'decode_batch', values.join(','), '-'], request);
  assert.equal(r.status, 2);
  const out = JSON.parse(r.stdout);
  assert.equal(Array.isArray(out), false, 'no point was priced');
  assert.deepEqual([out.error.code, out.error.path], ['too_many_requests', 'values']);
  assert.match(out.error.message, new RegExp(`more than ${limits.sweep_requests} requests`));
  // Within the limit the same sweep prices each point: one entry per value.
  const fits = run(['sweep', 'decode_batch', '1,2', '-'], request);
  assert.equal(fits.status, 0);
  assert.equal(JSON.parse(fits.stdout).length, 2);
});
