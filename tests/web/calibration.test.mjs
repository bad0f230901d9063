// SPDX-License-Identifier: Apache-2.0
// web/calibration.js in node: CSV errors name line and column, the step rebuild is the
// one docs/ACCURACY.md describes, and the CPU fit recovers parameters the model itself
// was priced with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../../wasm/stepcalc.js';
import { parseStepsCsv, rebuildStep, fitCpuParams, linearityGapUs, errorStats, CPU_ZERO, TARGET, MAX_ROWS }
  from '../../web/calibration.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sample = readFileSync(path.join(root, 'data/calibration/h100-vllm-steps-llama-2-70b-tp4.csv'), 'utf8');
const [header, ...body] = sample.trim().split('\n');
const stepTimes = (results) => results.map((r) => {
  assert.ok(!r.error, JSON.stringify(r.error));
  return r.step_time_us;
});

test('the bundled file parses cleanly', () => {
  const { rows, lines, errors } = parseStepsCsv(sample);
  assert.deepEqual(errors, []);
  assert.equal(rows.length, 1251);
  assert.equal(lines[0], 2);
  assert.equal(rows[0].workload, 'general');
  assert.equal(rows[0][TARGET], '45448.7');
});

test('bad files get errors naming the line and column', () => {
  assert.match(parseStepsCsv('').errors[0], /empty/);
  assert.match(parseStepsCsv('\n \n').errors[0], /empty/);
  assert.match(parseStepsCsv(header).errors[0], /no steps/);
  const noTarget = header.replace(`,${TARGET}`, '');
  const missing = parseStepsCsv(`${noTarget}\n${body[0]}`);
  assert.deepEqual(missing.rows, []);
  assert.match(missing.errors[0], new RegExp(`^line 1: .*lacks the column ${TARGET}`));
  const cells = body[1].split(',');
  cells[12] = 'lots'; // kv.usage_gpu_ratio, column 13
  const bad = parseStepsCsv([header, body[0], cells.join(','), body[2].split(',').slice(0, 5).join(',')].join('\r\n'));
  assert.equal(bad.rows.length, 1);
  assert.deepEqual(bad.errors, ['line 3, column 13 (kv.usage_gpu_ratio): "lots" is not a number.',
    'line 4: 5 cells, but the header has 16 columns.']);
  const empty = parseStepsCsv(`${header}\n\n${body[0].replace(/^([^,]*),[^,]*,/, '$1,,')}`);
  assert.deepEqual(empty.errors, ['line 3, column 2 (model): empty.']);
  const many = parseStepsCsv([header, ...Array(MAX_ROWS + 1).fill(body[0])].join('\n'));
  assert.deepEqual(many.rows, []);
  assert.match(many.errors[0], /20001 steps; at most 20000/);
});

test('a row becomes the request docs/ACCURACY.md describes', () => {
  const { rows } = parseStepsCsv(sample);
  const mixed = rebuildStep(rows[0]); // 1522 prefill tokens over 4 requests, 13 decodes
  assert.equal(mixed.model, 'llama-2-70b-hf');
  assert.equal(mixed.gpu, 'H100');
  assert.equal(mixed.tp, 4);
  assert.deepEqual(mixed.step.prefill_requests.map((p) => [p.progress_index, p.num_new_prefill_tokens]),
    [[0, 381], [0, 381], [0, 380], [0, 380]]);
  // round(0.018114555427988233 * 31356 * 16 / 17) = 535 tokens each
  assert.deepEqual(mixed.step.decode_requests, Array(13).fill({ progress_index: 535, num_new_decode_tokens: 1 }));
  const decodeOnly = rebuildStep(rows[1]);
  assert.deepEqual(decodeOnly.step.prefill_requests, []);
  assert.deepEqual(decodeOnly.step.decode_requests, Array(32).fill({ progress_index: 565, num_new_decode_tokens: 1 }));
  assert.match(readFileSync(path.join(root, 'tools/accuracy.mjs'), 'utf8'), /from '\.\.\/web\/calibration\.js'/,
    'tools/accuracy.mjs uses this reconstruction');
});

test('an unknown model is an error for its row', () => {
  const row = { ...parseStepsCsv(sample).rows[0], model: 'gpt-9' };
  assert.throws(() => rebuildStep(row, { knownModels: ['llama-2-70b-hf'], line: 7 }),
    /^Error: line 7: model "gpt-9" is not a preset/);
  assert.equal(rebuildStep(row).model, 'gpt-9'); // without a list the core judges it
});

test('the fit recovers CPU parameters the model was priced with, and the CPU term is linear', async () => {
  const calc = await load();
  const { rows } = parseStepsCsv(sample);
  const requests = rows.filter((_, i) => i % 5 === 0).map((row) => rebuildStep(row));
  const truth = { cpu_step_us: 1234, cpu_per_request_us: 21 };
  const priced = (params) =>
    stepTimes(calc.priceAll(requests.map((r) => ({ ...r, corrected: { params } })), { mode: 'corrected' }));
  const synthetic = priced(truth);
  const base = priced(CPU_ZERO);
  // Results are whole microseconds: two roundings allow up to 1 us.
  assert.ok(linearityGapUs(synthetic, base, requests, truth) <= 1);
  const fitted = fitCpuParams(synthetic, base, requests);
  assert.ok(Math.abs(fitted.cpu_step_us / truth.cpu_step_us - 1) < 0.01, JSON.stringify(fitted));
  assert.ok(Math.abs(fitted.cpu_per_request_us / truth.cpu_per_request_us - 1) < 0.01, JSON.stringify(fitted));
});

test('the fit keeps both parameters >= 0 and refits the other alone', () => {
  const requests = [1, 2, 3, 4].map((n) => ({ step: { prefill_requests: [], decode_requests: Array(n).fill({}) } }));
  // measured - base = 100 - 10 n: the free fit wants a negative per-request cost
  const fit = fitCpuParams([1000, 1000, 1000, 1000], [910, 920, 930, 940], requests);
  assert.equal(fit.cpu_per_request_us, 0);
  assert.ok(fit.cpu_step_us > 60 && fit.cpu_step_us < 80, JSON.stringify(fit));
  const below = fitCpuParams([1000, 1000], [1100, 1200], requests.slice(0, 2));
  assert.deepEqual(below, { cpu_step_us: 0, cpu_per_request_us: 0 });
});

test('error statistics are in percent', () => {
  const s = errorStats([110, 90, 100, 130], [100, 100, 100, 100]);
  assert.deepEqual(Object.keys(s), ['n', 'mape', 'median_ape', 'bias']);
  assert.equal(s.n, 4);
  assert.ok(Math.abs(s.mape - 12.5) < 1e-9);
  assert.ok(Math.abs(s.median_ape - 10) < 1e-9);
  assert.ok(Math.abs(s.bias - 7.5) < 1e-9);
});

test('a row is never expanded beyond the core\'s request limit; counts must be whole', async () => {
  const { limits } = (await load()).catalogue();
  const at = header.split(',').indexOf('batch.num_decode_reqs');
  const withDecodes = (n) => body[1].split(',').map((c, i) => (i === at ? n : c)).join(',');
  const options = { maxRequestsPerStep: limits.requests_per_step, maxRequestsInFile: limits.sweep_requests };
  // body[1] is a decode-only step: its decode count is its request count.
  const csv = [header, body[0], withDecodes('30000000'), withDecodes('2.5'), withDecodes('-1'), withDecodes('65536'),
    withDecodes('65537')].join('\n');
  const { rows, errors } = parseStepsCsv(csv, options);
  assert.equal(rows.length, 2, 'the first row and the one at the limit');
  assert.deepEqual(errors, [
    `line 3, column ${at + 1} (batch.num_decode_reqs): 30000000 requests in one step; a step holds at most 65536 ` +
      `(prefill + decode).`,
    `line 4, column ${at + 1} (batch.num_decode_reqs): "2.5" is not a whole number of requests.`,
    `line 5, column ${at + 1} (batch.num_decode_reqs): "-1" is not a whole number of requests.`,
    `line 7, column ${at + 1} (batch.num_decode_reqs): 65537 requests in one step; a step holds at most 65536 ` +
      `(prefill + decode).`,
  ]);
  const row = Object.fromEntries(header.split(',').map((h, i) => [h, withDecodes('30000000').split(',')[i]]));
  assert.throws(() => rebuildStep(row, { maxRequests: limits.requests_per_step, line: 9 }),
    /^Error: line 9: batch\.num_decode_reqs: 30000000 requests/);
  assert.throws(() => rebuildStep({ ...row, 'batch.num_decode_reqs': '2.5' }), /not a whole number/);
  // All the file's steps together are bounded too (each is priced four times).
  const many = parseStepsCsv([header, ...Array(100).fill(withDecodes('60000'))].join('\n'), options);
  assert.deepEqual(many.rows, []);
  assert.match(many.errors[0], /requests in all; at most 4194304 are priced/);
});
