// SPDX-License-Identifier: Apache-2.0
// --kernels DIR: packs are read by name when a request first needs them, regular files
// only, with a size cap checked before reading; every refusal is the CLI's usual error
// (JSON on stdout, one line on stderr, exit 2). Nothing hangs on a FIFO or reads
// /dev/zero without end, and a blis-v2 request reads no pack at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = `${root}build/stepcalc`;
const packs = `${root}build/kernels`;
const gemm = 'h100-vllm-0.24.0-gemm-bf16.bin';
const measured = { model: 'llama-3.1-8b-instruct', mode: 'measured',
  step: { decode_requests: [{ progress_index: 512 }] } };

/** The CLI on `request` with --kernels `dir`, killed (and failing the test) after 60 s. */
const price = (dir, request = measured) => {
  const r = spawnSync(cli, ['--kernels', dir, 'price', '-'], { input: JSON.stringify(request), encoding: 'utf8',
    timeout: 60000 });
  assert.equal(r.signal, null, `stepcalc did not finish: ${r.signal}`);
  return r;
};

/** A directory holding copies of the H100 default packs, with `gemm` replaced by `make(path)`. */
function dirWith(make) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kernels-'));
  for (const f of fs.readdirSync(packs)) if (f.startsWith('h100-vllm-0.24.0-')) fs.copyFileSync(path.join(packs, f),
    path.join(dir, f));
  fs.rmSync(path.join(dir, gemm));
  make(path.join(dir, gemm));
  return dir;
}

const refused = (r, code, pattern, at = 'gpu') => {
  assert.equal(r.status, 2, r.stdout + r.stderr);
  const error = JSON.parse(r.stdout).error;
  assert.equal(error.code, code);
  assert.equal(error.path, at);  // the request's GPU needed the file; the directory itself: kernels
  assert.match(error.message, pattern);
  assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, r.stderr);
};

test('the packs of a directory price as the build directory does', () => {
  const dir = dirWith((p) => fs.copyFileSync(path.join(packs, gemm), p));
  try {
    const r = price(dir);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, price(packs).stdout);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});

test('a directory, a FIFO or a device in a pack\'s name is refused as not a regular file', () => {
  const makers = [(p) => fs.mkdirSync(p), (p) => execFileSync('mkfifo', [p]), (p) => fs.symlinkSync('/dev/zero', p)];
  for (const make of makers) {
    const dir = dirWith(make);
    try {
      refused(price(dir), 'io_error', /is not a regular file/);
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  }
});

test('a pack larger than the cap is refused before it is read (a sparse 3 GB file)', () => {
  const dir = dirWith((p) => {
    const fd = fs.openSync(p, 'w');
    fs.ftruncateSync(fd, 3 * 2 ** 30);
    fs.closeSync(fd);
  });
  try {
    refused(price(dir), 'too_large', /over the limit/);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});

test('a blis-v2 request reads no pack; a missing directory is an error as JSON', () => {
  const dir = dirWith((p) => execFileSync('mkfifo', [p]));  // would hang or fail if read
  try {
    const r = price(dir, { ...measured, mode: 'blis-v2' });
    assert.equal(r.status, 0, r.stderr);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
  refused(price(path.join(os.tmpdir(), 'no-such-kernel-dir-stepcalc')), 'io_error', /not a directory/, 'kernels');
});
