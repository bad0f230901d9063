// SPDX-License-Identifier: Apache-2.0
// The accuracy ledger's measurements that contradict their own series (tools/validate-ledger.mjs
// contradictions): a measured TPOT that falls by more than a fifth while the clients grow 4x or
// more; and the runs with fewer requests in flight than clients (fewerInFlight: by Little's law,
// under half the requests decoding at once that the simulation keeps). Each rule on made-up runs,
// and the committed ledger against the rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { contradictions, decodingAtOnce, fewerInFlight, pricedAtEngineCap, ENGINE_DEFAULT_MAX_NUM_SEQS }
  from '../../tools/validate-ledger.mjs';

const run = (id, { clients, tpot, subset = 'M | H100 | bf16 | TP2', isl = 1024, osl = 1024, tp = 2, dp,
  status = 'priced' }) => ({
  id, subset, status, silicon_tpot_ms: tpot, silicon_ttft_ms: 100, tpot_ms: tpot, ttft_ms: 100,
  request: { tp, ...(dp ? { dp } : {}), workload: { input_tokens: isl, output_tokens: osl, concurrency: clients } },
});

test('a TPOT more than 20% below a run at a quarter of the clients or fewer contradicts it', () => {
  const runs = [
    run('a4', { clients: 4, tpot: 10 }),
    run('a8', { clients: 8, tpot: 5 }), // 2x the clients: not compared
    run('a16', { clients: 16, tpot: 7.9 }), // 4x, 21% lower: contradicts a4
    run('a17', { clients: 17, tpot: 8.1 }), // 19% lower: within the rule
    run('a64', { clients: 64, tpot: 9 }), // lower than a4 by 10%: within
    run('b16', { clients: 16, tpot: 2, isl: 2048 }), // other lengths: its own series
    run('c16', { clients: 16, tpot: 2, tp: 4 }), // other TP
    run('d16', { clients: 16, tpot: 2, dp: 2 }), // other layout
    run('e16', { clients: 16, tpot: 2, subset: 'M | H200 | bf16 | TP2' }), // other GPU
    run('u16', { clients: 16, tpot: 2, status: 'unsupported' }),
  ];
  const found = contradictions(runs);
  assert.deepEqual(found.map((c) => [c.run.id, c.other.id]), [['a16', 'a4']]);
  // the slowest of the runs with fewer clients is named
  const slower = [...runs, run('a2', { clients: 2, tpot: 12 })];
  assert.deepEqual(contradictions(slower).map((c) => [c.run.id, c.other.id]),
    [['a16', 'a2'], ['a17', 'a2'], ['a64', 'a2'], ['a8', 'a2']]);
});

test('a setup measured more than once stands at its median run: one odd repeat contradicts nothing', () => {
  // Kimi-K2.5 on eight H200s, 1,024 + 8,192 tokens: five runs at 16 clients measured ~16 ms, one
  // 64 ms; the three at 64 clients (~32 ms) are not below the series, the odd repeat is.
  const runs = [
    ...[16.35, 16.44, 16.0, 16.44, 16.0].map((tpot, i) => run(`c16-${i}`, { clients: 16, tpot })),
    run('c16-odd', { clients: 16, tpot: 63.98 }),
    ...[31.89, 31.81, 31.81].map((tpot, i) => run(`c64-${i}`, { clients: 64, tpot })),
  ];
  assert.deepEqual(contradictions(runs), []);
  // below the median run of the repeats (16.35 ms: the lower middle of six) by more than a fifth
  const fast = [...runs, run('c64-fast', { clients: 64, tpot: 12 })];
  assert.deepEqual(contradictions(fast).map((c) => [c.run.id, c.other.id]), [['c64-fast', 'c16-0']]);
});

test('the committed ledger marks exactly the runs the rule finds, and VALIDATION.md lists them', () => {
  const ledger = JSON.parse(readFileSync(fileURLToPath(new URL('../../docs/validation.json', import.meta.url)),
    'utf8'));
  const found = contradictions(ledger.runs);
  const marked = ledger.runs.filter((r) => r.contradicts).map((r) => [r.id, r.contradicts])
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
  assert.ok(marked.length > 0);
  assert.deepEqual(marked, found.map((c) => [c.run.id, c.other.id]));
  const md = readFileSync(fileURLToPath(new URL('../../docs/VALIDATION.md', import.meta.url)), 'utf8');
  const section = md.slice(md.indexOf('## Measurements that contradict their series'));
  for (const { run: r } of found) assert.ok(section.includes(`| ${r.id} |`), r.id);
});

test('a run decoding under half the requests at once that its simulation does had fewer in flight than clients', () => {
  // 512 clients, 1,024 output tokens: 1,023 x 5 ms decoding per cycle.
  assert.equal(decodingAtOnce(512, 1024, 1023 * 5, 5), 256);
  const at = (id, ttft, simTtft, { clients = 512, status = 'priced' } = {}) => ({
    id, subset: 'M | H100 | bf16 | TP2', status, silicon_tpot_ms: 5, silicon_ttft_ms: ttft, tpot_ms: 5,
    ttft_ms: simTtft, request: { tp: 2, workload: { input_tokens: 1024, output_tokens: 1024, concurrency: clients } },
  });
  const runs = [
    at('capped', 20000, 300), // ~104 decoding at once measured, ~483 simulated
    at('queued-too', 20000, 15000), // the simulation queues as much (the engine's own limit): not flagged
    at('near', 5500, 300), // 247 of 483: just above half
    at('far', 6000, 300), // 235 of 483: below half
    at('open', 20000, 300, { clients: 0 }), // an open loop has no clients to compare
    at('unsupported', 20000, 300, { status: 'unsupported' }),
  ];
  const found = fewerInFlight(runs);
  assert.deepEqual(found.map((f) => f.run.id), ['capped', 'far']);
  assert.ok(Math.abs(found[0].measured - decodingAtOnce(512, 1024, 20000, 5)) < 1e-9);
});

test('the committed ledger marks exactly the runs with fewer in flight, and VALIDATION.md lists them', () => {
  const ledger = JSON.parse(readFileSync(fileURLToPath(new URL('../../docs/validation.json', import.meta.url)),
    'utf8'));
  const found = fewerInFlight(ledger.runs);
  assert.ok(found.length > 0);
  const marked = ledger.runs.filter((r) => r.in_flight).map((r) => r.id).sort();
  assert.deepEqual(marked, found.map((f) => f.run.id));
  const md = readFileSync(fileURLToPath(new URL('../../docs/VALIDATION.md', import.meta.url)), 'utf8');
  const section = md.slice(md.indexOf('### Fewer requests in flight than clients'));
  for (const { run: r } of found) assert.ok(section.includes(`| ${r.id} |`), r.id);
});

test('each run with fewer in flight carries its re-pricing at vLLM\'s engine-default cap, as the CLI gives it', () => {
  const ledger = JSON.parse(readFileSync(fileURLToPath(new URL('../../docs/validation.json', import.meta.url)),
    'utf8'));
  const key = `at_most_${ENGINE_DEFAULT_MAX_NUM_SEQS}_running`;
  const marked = ledger.runs.filter((r) => r.in_flight);
  assert.ok(marked.length > 0);
  // the committed requests name a model config by reference ($model) where it is not a preset
  const full = marked.map((r) => ({ ...r, request: { ...r.request, model: typeof r.request.model === 'object'
    ? ledger.models[r.request.model.$model] : r.request.model } }));
  const priced = pricedAtEngineCap(full);
  marked.forEach((r, i) => {
    assert.equal(r.in_flight[key].ttft_ms, Math.round(priced[i].ttft_ms * 10) / 10, r.id);
    assert.equal(r.in_flight[key].tpot_ms, Math.round(priced[i].tpot_ms * 100) / 100, r.id);
    // the cap holds requests back: never a shorter wait for the first token than without it
    assert.ok(priced[i].ttft_ms >= r.ttft_ms, r.id);
  });
  const md = readFileSync(fileURLToPath(new URL('../../docs/VALIDATION.md', import.meta.url)), 'utf8');
  assert.ok(md.includes(`at most ${ENGINE_DEFAULT_MAX_NUM_SEQS} running: predicted TPOT / TTFT ms`));
});
