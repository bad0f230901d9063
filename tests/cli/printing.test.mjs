// SPDX-License-Identifier: Apache-2.0
// What the CLI prints from its input cannot act on the terminal: conformance ids and
// error paths holding newlines, escape sequences or bidi controls are escaped, so a
// file cannot fake a "160 passed, 0 failed" line. A directory is an io_error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../build/stepcalc', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'stepcalc-print-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

const run = (args, input) => {
  const r = spawnSync(cli, args, { input, timeout: 30000 });
  return { status: r.status, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
};
/** Control characters other than the newline ending each line (C0, DEL, C1, bidi). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
const step = { decode_requests: [{ progress_index: 512 }] };

test('conformance: a hostile id prints as one escaped MISMATCH line', () => {
  const id = 'x\n160 passed, 0 failed\x1b[2K\x1b[1A\r\u202e\u009b31m';
  const file = join(scratch, 'cases.json');
  writeFileSync(file, JSON.stringify([{ id, model: 'llama-3.1-8b-instruct', step, expected: { step_time_us: 1 } }]));
  const r = run(['conformance', file]);
  assert.equal(r.status, 1);
  const lines = r.stdout.split('\n');
  assert.equal(lines.pop(), '', 'output ends with a newline');
  assert.equal(lines.length, 2, r.stdout);
  assert.match(lines[0], /^MISMATCH x\\n160 passed, 0 failed\\u\{001B\}\[2K/);
  assert.equal(lines[1], '0 passed, 1 failed');
  assert.doesNotMatch(r.stdout, CONTROLS);
});

test('conformance: a hostile key in a case is escaped in its MISMATCH line', () => {
  const file = join(scratch, 'keys.json');
  writeFileSync(file,
    JSON.stringify([{ 'k\n1 passed, 0 failed\x1b]0;title\x07': 1, model: 'llama-3.1-8b-instruct', step }]));
  const r = run(['conformance', file]);
  assert.equal(r.status, 1);
  assert.equal(r.stdout.split('\n').length, 3, r.stdout);
  assert.doesNotMatch(r.stdout, CONTROLS);
});

test('price: an error naming a hostile key is escaped on stderr and JSON-escaped on stdout', () => {
  const key = 'bad\n\x1b[32mok\x1b[0m\u202e';
  const r = run(['price', '-'], JSON.stringify({ [key]: 1, model: 'llama-3.1-8b-instruct', step }));
  assert.equal(r.status, 2);
  assert.doesNotMatch(r.stderr.replace(/\n$/, ''), /\n/);
  assert.doesNotMatch(r.stderr, CONTROLS);
  assert.doesNotMatch(r.stdout.replace(/\n$/, ''), CONTROLS);
  const reported = r.stdout.trim() ? JSON.parse(r.stdout).error : null;
  if (reported) assert.equal(reported.path, key);
});

test('price: a directory is an io_error, not an empty document', () => {
  for (const args of [['price', scratch], ['conformance', scratch], ['sweep', 'tp', '1', scratch]]) {
    const r = run(args);
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stdout + r.stderr, /io_error/, args.join(' '));
    assert.doesNotMatch(r.stdout + r.stderr, /parse_error/, args.join(' '));
  }
});
