// SPDX-License-Identifier: Apache-2.0
// The page's words and number format, in node: the core's errors rewritten from JSON
// paths into field labels, numbers typed the way people type them, one time format,
// and chart ticks that are round and never overlap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { biasWords, inUserWords, labelFor, ledgerErrorWords, leftOutWords } from '../../web/words.js';
import { bandEdges } from '../../web/serving-charts.js';
import { parseNumber, time, timeUs, deltaTime } from '../../web/dom.js';
import { niceTicks, spacedLabels } from '../../web/charts.js';

test('core errors read as field labels, 1-based, without the JSON path', () => {
  assert.equal(inUserWords('step.decode_requests[0].progress_index',
    'step.decode_requests[0].progress_index must not be negative.'),
    'Decode row 1: KV length must not be negative.');
  assert.equal(inUserWords('step.prefill_requests[11].num_new_prefill_tokens',
    'num_new_prefill_tokens must be at least 1.'),
    'Prefill row 12: new tokens must be at least 1.');
  assert.equal(inUserWords('tp', 'tp must be at least 1.'), 'TP degree must be at least 1.');
  assert.equal(inUserWords('hardware.TFlopsPeak', 'TFlopsPeak must be a positive finite number.'),
    'Peak TFLOP/s must be a positive finite number.');
  assert.equal(inUserWords('model.num_key_value_heads',
    'num_key_value_heads (16) must divide num_attention_heads (8).'),
    'Model: KV heads (16) must divide attention heads (8).');
  for (const [path, message] of [['step.decode_requests[3].progress_index', 'must be a whole number'],
    ['tp', 'tp is wrong']]) {
    assert.ok(!inUserWords(path, message).includes('step.') && !inUserWords(path, message).includes('progress_index'));
  }
  assert.equal(labelFor('__proto__'), null, 'inherited names are no labels');
  assert.equal(inUserWords('model.__proto__', '__proto__ is not allowed.'), 'Model: __proto__ is not allowed.');
  assert.equal(inUserWords('somewhere.else', 'As the core said.'), 'As the core said.');
});

test('numbers are read as typed: grouping commas, underscores, spaces; nothing else', () => {
  for (const [text, value] of [['1,000', 1000], [' 2048 ', 2048], ['1_000_000', 1e6], ['12,345.5', 12345.5],
    ['0.82', 0.82], ['1e3', 1000], ['-4', -4]]) {
    assert.equal(parseNumber(text), value, text);
  }
  for (const text of ['1,5', '1,00', '12x', '', ' ', '0x10', 'Infinity', '1,000,00',
    'NaN']) assert.ok(Number.isNaN(parseNumber(text)), text);
});

test('one time format: µs below a millisecond, ms above, grouping, a sign for differences', () => {
  assert.equal(timeUs(55011), '55.0 ms');
  assert.equal(timeUs(3200), '3.20 ms');
  assert.equal(timeUs(930), '930 µs');
  assert.equal(timeUs(12.34), '12.3 µs');
  assert.equal(timeUs(123456), '123 ms');
  assert.equal(time(2.5), '2.50 s');
  assert.equal(deltaTime(-0.00093), '−930 µs');
  assert.equal(deltaTime(0.004273), '+4.27 ms');
});

test('nice ticks are 1, 2, 2.5 or 5 times a power of ten and cover the maximum', () => {
  for (const max of [1272, 636, 55011, 0.9, 7, 99999, 1e6 + 1]) {
    const ticks = niceTicks(max, 4);
    const step = ticks[1] - ticks[0];
    const mantissa = step / 10 ** Math.floor(Math.log10(step));
    assert.ok([1, 2, 2.5, 5].some((m) => Math.abs(m - mantissa) < 1e-9), `${max}: step ${step}`);
    assert.equal(ticks[0], 0);
    assert.ok(ticks[ticks.length - 1] >= max && ticks.length <= 7, `${max}: ${ticks}`);
  }
  assert.deepEqual(niceTicks(1272, 4), [0, 500, 1000, 1500]);
});

test('tick labels are thinned until none overlaps, keeping the first and the last', () => {
  const xs = [0, 20, 40, 60, 80, 300];
  const keep = spacedLabels(xs, ['128', '256', '512', '1k', '2k', '32k']);
  assert.equal(keep[0], 0);
  assert.equal(keep[keep.length - 1], 5);
  for (let i = 1; i < keep.length; i++) assert.ok(xs[keep[i]] - xs[keep[i - 1]] >= 30, `${keep}`);
});

test('an export\'s context and file name; CSV numbers to 6 significant digits', async () => {
  const { aboutExport, slug, stepWords } = await import('../../web/export-about.js');
  const { csvNumber, csvText } = await import('../../web/export.js');
  const good = { state: { model: 'llama-3.1-70b-instruct', modelName: '', gpu: 'H100', kernels: '', tp: 4,
    prefill: [[0, 2048]], decode: [[512], [576]] }, result: { mode: 'measured' } };
  const about = aboutExport({ what: 'serving', title: 'serving results', good, version: '0.1.0',
    extra: [['workload', '1000 input + 200 output tokens per request']], link: 'http://x/#v=1',
    now: new Date('2026-11-26T09:30:12Z') });
  assert.equal(about.file, 'stepcalc-llama-3.1-70b-instruct-H100-tp4-serving');
  assert.deepEqual(about.lines, [['stepcalc version', '0.1.0'], ['exported', '2026-11-26 09:30 UTC'],
    ['model', 'llama-3.1-70b-instruct'], ['GPU', 'H100 (kernel tables default)'], ['TP', '4'], ['mode', 'measured'],
    ['step', '1 prefill row (2048 new tokens); 2 decode rows'],
    ['workload', '1000 input + 200 output tokens per request'], ['link', 'http://x/#v=1']]);
  assert.equal(stepWords({ prefill: [], decode: [] }), 'no rows');
  assert.equal(slug('My Model (edited)/../x'), 'my-model-edited-.-x');
  assert.equal(aboutExport({ what: 'a-b', title: 't', good: { state: { ...good.state, model: { hidden_size: 1 },
    modelName: 'Qwen/Qwen3 "odd", name' }, result: { mode: 'blis-v2' } }, version: '0.1.0', link: '' }).file,
  'stepcalc-qwen-qwen3-odd-name-H100-tp4-a-b');
  assert.deepEqual([0.1 + 0.2, 55012.34567, 123456.7, 1.5e-7, 42, -0.000123456789, NaN].map(csvNumber),
    ['0.3', '55012.3', '123457', '1.5e-7', '42', '-0.000123457', '']);
  assert.equal(csvText({ head: ['a', 'b'], rows: [[1 / 3, 'x,y']] }, { title: 'T', lines: [['k', 'v, w']] }),
    '# T\r\n"# k: v, w"\r\na,b\r\n0.333333,"x,y"\r\n');
});

test('serve and plan errors in a panel\'s words: the label for the path, bounds as people say them', async () => {
  const { fieldErrorWords } = await import('../../web/words.js');
  const say = (path, message, label) => fieldErrorWords({ path, message }, label);
  assert.equal(say('workload.request_rate', 'workload.request_rate must be a finite number >= 1e-09.', 'Request rate'),
    'Request rate must be a number above 0.');
  assert.equal(say('workload.concurrency', 'workload.concurrency must be in [1, 4096].', 'Concurrency'),
    'Concurrency must be from 1 to 4,096.');
  assert.equal(say('workload.concurrency', 'workload.concurrency exceeds the limit of 10000.', 'Concurrency'),
    'Concurrency must be at most 10,000.');
  assert.equal(say('workload.concurrency', 'workload.concurrency must be an integer, not a string.', 'Concurrency'),
    'Concurrency must be a whole number.');
  assert.equal(say('gpu_hour_usd', 'gpu_hour_usd must be a finite number >= 0.', '$ per GPU-hour'),
    '$ per GPU-hour must be a number of at least 0.');
  assert.equal(say('search.tp', 'Give at least one TP degree', 'TP degrees'),
    'TP degrees: Give at least one TP degree.');
  // No field owns it: the path says where, once.
  assert.equal(say('workload.warmup_requests', 'workload.warmup_requests must be in [0, 10].', ''),
    'workload.warmup_requests must be from 0 to 10.');
  assert.equal(say('engine.max_num_seqs', 'Too small.', ''), 'Too small (engine.max_num_seqs).');
  assert.equal(say('', 'Something else.', ''), 'Something else.');
  // The engine's settings: a message that starts with the setting's own name, the others in words.
  assert.equal(say('engine.max_num_batched_tokens',
    'max_num_batched_tokens (1000) must be at least max_num_seqs (2000), as vLLM requires.', 'Token budget per step'),
  'Token budget per step (1000) must be at least the max running requests (2000), as vLLM requires.');
  assert.equal(say('engine.gpu_memory_utilization', 'engine.gpu_memory_utilization must be a finite number >= 0.01.',
    'GPU memory utilization'), 'GPU memory utilization must be a number of at least 0.01.');
  assert.equal(say('workload.input_tokens', 'workload.input_tokens must exceed workload.prefix_cache_hit_ratio x 2.',
    'Input tokens'), 'Input tokens must exceed the prefix-cache hit ratio x 2.');
});

test('the ledger\'s bias in words: which way the estimates erred on runs like this', () => {
  assert.equal(biasWords(-10.94), ' (estimated 11% low there)');
  assert.equal(biasWords(90.43), ' (estimated 90% high there)');
  assert.equal(biasWords(0.4), '');
  assert.equal(biasWords(-0.4), '');
  assert.equal(biasWords(undefined), '');
});

test('the runs a ledger figure leaves out are said beside it', () => {
  // gpt-oss-120b on four H100s: 23 runs counted, 3 that measured fewer clients than they say left out.
  const v = { subset: 'openai/gpt-oss-120b | H100 | mxfp4 | TP4', runs: 23, runs_left_out: 3, ttft_mape: 19.49,
    ttft_bias: -5.68, tpot_mape: 17.06, tpot_bias: 5.8 };
  assert.equal(leftOutWords(v), '; 3 more measured fewer clients than their rows say and are left out');
  assert.equal(ledgerErrorWords(v), 'TTFT ±19% (estimated 6% low there) and TPOT ±17% (estimated 6% high there) ' +
    'on 23 measured runs like this (3 more left out: they measured fewer clients than their rows say)');
  // none left out: nothing said (a result without the field, as before it existed, alike)
  for (const w of [{ ...v, runs_left_out: 0 }, { ...v, runs_left_out: undefined }]) {
    assert.equal(leftOutWords(w), '');
    assert.ok(ledgerErrorWords(w)?.endsWith('on 23 measured runs like this'));
  }
  assert.ok(!ledgerErrorWords(v)?.includes(','), 'no commas: exports put it in a CSV header line');
});

test('the band: where a measured value lies when the estimate errs as on the runs like it', () => {
  // errors are relative to the measured value: (y - measured) / measured in [-u, o]
  const close = (a, b) => Math.abs(a - b) < 1e-12;
  // erring both ways alike (bias 0): +-m, the measured value in [y / (1 + m), y / (1 - m)]
  let e = bandEdges(10, 38);
  assert.ok(close(e.lo, 10 / 1.38) && close(e.hi, 10 / 0.62), JSON.stringify(e));
  for (const m of [5, 38, 75]) {
    e = bandEdges(10, m, 0);
    for (const measured of [e.lo, e.hi]) assert.ok(close(Math.abs((10 - measured) / measured), m / 100));
  }
  // every run 38% low (bias -38): above the estimate only, reaching 10 / 0.62 (10 x 1.38 fell short of it)
  e = bandEdges(10, 38, -38);
  assert.ok(close(e.lo, 10) && close(e.hi, 10 / 0.62) && e.hi > 10 * 1.38, JSON.stringify(e));
  // mostly high (MAPE 85, bias 75): down to y / 1.85, up only by the 10% the low side reached
  e = bandEdges(10, 85, 75);
  assert.ok(close(e.lo, 10 / 1.85) && close(e.hi, 10 / 0.9), JSON.stringify(e));
  // low side of 100% or more: open above
  assert.equal(bandEdges(10, 100).hi, Infinity);
  assert.equal(bandEdges(10, 120, -60).hi, Infinity);
  assert.equal(bandEdges(10, 100).lo, 5);
});
