// SPDX-License-Identifier: Apache-2.0
// npm run accuracy: rebuilds every measured step of data/calibration/*.csv, prices it
// in blis-v2, corrected (and corrected with each switch off in turn) and measured
// (with its CPU fit, held-out figures and per-operator ablation: accuracy-measured.mjs)
// through the native CLI, and writes docs/ACCURACY.md and docs/accuracy-predicted-vs-measured.svg.
// The CSV parsing and step reconstruction are web/calibration.js, shared with the
// page's calibrate panel. No dependencies beyond node. Usage: node tools/accuracy.mjs [--cli PATH]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseStepsCsv, rebuildStep, TARGET } from '../web/calibration.js';
import { fitCpuL1, heldOut, measuredReport, operatorAblation, requestsOf, withCpu } from './accuracy-measured.mjs';
import { SECTION_START as SERVING_SECTION } from './serving-accuracy.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cliArg = process.argv.indexOf('--cli');
const cli = cliArg > 0 ? process.argv[cliArg + 1] : process.env.STEPCALC_CLI || join(root, 'build', 'stepcalc');
const dataDir = join(root, 'data', 'calibration');
const docsDir = join(root, 'docs');

/** The corrected switches, from the core's catalogue (never retyped here). */
function switchNames() {
  const run = spawnSync(cli, ['catalogue'], { encoding: 'utf8' });
  if (run.error ||
    run.status !== 0) throw new Error(`cannot run ${cli} catalogue (build it first: cmake --build build)`);
  return JSON.parse(run.stdout).corrected.switches.map((s) => s.name);
}

function priceAllFull(requests) {
  const run = spawnSync(cli, ['price'], { input: JSON.stringify(requests), maxBuffer: 1 << 30, encoding: 'utf8' });
  if (run.error) throw new Error(`cannot run ${cli}: ${run.error.message} (build it first: cmake --build build)`);
  const results = JSON.parse(run.stdout);
  const failed = results.find((r) => r.error);
  if (failed) throw new Error(`pricing failed: ${JSON.stringify(failed.error)}`);
  return results;
}
const priceAll = (requests) => priceAllFull(requests).map((r) => r.step_time_us);

function stats(errors) {
  const abs = errors.map(Math.abs).sort((a, b) => a - b);
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const mid = abs.length >> 1;
  const median = abs.length % 2 ? abs[mid] : (abs[mid - 1] + abs[mid]) / 2;
  const p90 = abs[Math.min(abs.length - 1, Math.ceil(0.9 * abs.length) - 1)];
  return { n: errors.length, mape: 100 * mean(abs), median: 100 * median, bias: 100 * mean(errors), p90: 100 * p90 };
}
const statsOf = (predicted, measured) => stats(predicted.map((p, i) => (p - measured[i]) / measured[i]));

function groupsOf(row) {
  const kind = Number(row['batch.num_prefill_reqs']) > 0 ? 'mixed' : 'decode-only';
  return ['all', kind, `${row.workload}`, `${row.workload} / ${kind}`];
}
const GROUP_ORDER = (a, b) =>
  (a === 'all' ? -1 : b === 'all' ? 1 : a.split(' / ').length - b.split(' / ').length || a.localeCompare(b));

function table(rows, measured, predictions) {
  const byGroup = new Map();
  rows.forEach((row, i) => {
    for (const g of groupsOf(row)) {
      if (!byGroup.has(g)) byGroup.set(g, Object.fromEntries(Object.keys(predictions).map((m) => [m, []])));
      for (const [mode,
        p] of Object.entries(predictions)) byGroup.get(g)[mode].push((p[i] - measured[i]) / measured[i]);
    }
  });
  return [...byGroup.keys()].sort(GROUP_ORDER).map((g) => /** @type {{group: string} & Record<string, any>} */ ({
    group: g, ...Object.fromEntries(Object.entries(byGroup.get(g)).map(([m, e]) => [m, stats(e)])),
  }));
}

const f1 = (x) => x.toFixed(1), f2 = (x) => x.toFixed(2), sg = (x) => (x >= 0 ? '+' : '') + x.toFixed(2);

function svgPlot(measured, predictions) {
  const W = 640, H = 640, pad = 64, all = [...measured, ...Object.values(predictions).flat()];
  const lo = Math.floor(Math.min(...all) / 5) * 5, hi = Math.ceil(Math.max(...all) / 10) * 10;  // ms, log axes
  const frac = (ms) => Math.log(ms / lo) / Math.log(hi / lo);
  const x = (ms) => pad + frac(ms) * (W - 2 * pad);
  const y = (ms) => H - pad - frac(ms) * (H - 2 * pad);
  const colors = { 'blis-v2': '#d62728', corrected: '#1f77b4', measured: '#2ca02c' };
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
      'font-family="sans-serif" font-size="12">',
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="24" text-anchor="middle" font-size="15">` +
      `Predicted vs measured step cycle (${measured.length} steps, Llama-2-70B TP4, H100)</text>`];
  const ticks = [5, 7.5, 10, 12.5, 15, 17.5, 20, 25, 30, 40, 50, 75, 100, 150, 200].filter((t) => t >= lo && t <= hi);
  for (const t of ticks) {
    out.push(`<line x1="${x(t)}" y1="${y(lo)}" x2="${x(t)}" y2="${y(hi)}" stroke="#eee"/>`,
      `<line x1="${x(lo)}" y1="${y(t)}" x2="${x(hi)}" y2="${y(t)}" stroke="#eee"/>`,
      `<text x="${x(t)}" y="${H - pad + 16}" text-anchor="middle">${t}</text>`,
      `<text x="${pad - 6}" y="${y(t) + 4}" text-anchor="end">${t}</text>`);
  }
  out.push(`<rect x="${pad}" y="${pad}" width="${W - 2 * pad}" height="${H - 2 * pad}" fill="none" stroke="#333"/>`,
    `<line x1="${x(lo)}" y1="${y(lo)}" x2="${x(hi)}" y2="${y(hi)}" stroke="#333" stroke-dasharray="4 3"/>`,
    `<text x="${W / 2}" y="${H - 20}" text-anchor="middle">measured cycle (ms, log scale)</text>`,
    `<text transform="translate(18 ${H / 2}) rotate(-90)" text-anchor="middle">predicted step time (ms, log ` +
      `scale)</text>`);
  for (const [mode, p] of Object.entries(predictions)) {
    out.push(`<g fill="${colors[mode]}" fill-opacity="0.35">`);
    p.forEach((v, i) =>
      out.push(`<circle cx="${x(measured[i] / 1000).toFixed(1)}" cy="${y(v / 1000).toFixed(1)}" r="2.2"/>`));
    out.push('</g>');
  }
  Object.keys(predictions).forEach((mode, k) => {
    out.push(`<circle cx="${pad + 16}" cy="${pad + 18 + 18 * k}" r="5" fill="${colors[mode]}"/>`,
      `<text x="${pad + 28}" y="${pad + 22 + 18 * k}">${mode}</text>`);
  });
  out.push(`<text x="${pad + 16}" y="${pad + 22 + 18 * Object.keys(predictions).length}">dashed: y = x</text>`,
    '</svg>');
  return out.join('\n') + '\n';
}

function main() {
  const files = readdirSync(dataDir).filter((f) => f.endsWith('.csv')).sort();
  const rows = files.flatMap((f) => {
    const { rows: steps, errors } = parseStepsCsv(readFileSync(join(dataDir, f), 'utf8'));
    if (errors.length) throw new Error(`${f}: ${errors.slice(0, 5).join(' ')}`);
    return steps;
  });
  const requests = rows.map((row) => rebuildStep(row));
  const measured = rows.map((r) => Number(r[TARGET]));
  const measuredResults = priceAllFull(requests.map((r) => ({ ...r, mode: 'measured' })));
  const predictions = {
    'blis-v2': priceAll(requests.map((r) => ({ ...r, mode: 'blis-v2' }))),
    corrected: priceAll(requests.map((r) => ({ ...r, mode: 'corrected' }))),
    measured: measuredResults.map((r) => r.step_time_us),
  };
  const gpu = measuredResults.map((r) => r.measured.gpu_time_us);
  const counts = requests.map(requestsOf);
  const fit = fitCpuL1(measured, gpu, counts);
  const used = measuredResults[0].measured.cpu;
  const measuredSection = {
    fit, used, fitStats: statsOf(withCpu(gpu, counts, fit), measured),
    heldOut: heldOut(rows, measured, gpu, counts, statsOf),
    ablation: operatorAblation(measuredResults, measured, statsOf),
  };
  const SWITCHES = switchNames();
  const ablation = SWITCHES.map((name) => {
    const p = priceAll(requests.map((r) => ({ ...r, mode: 'corrected', corrected: { switches: { [name]: false } } })));
    return { name, ...table(rows, measured, { off: p })[0].off };
  });
  const lone = SWITCHES.map((name) => {
    const p = priceAll(requests.map((r) => ({ ...r, mode: 'blis-v2', corrected: { switches: { [name]: true } } })));
    return { name, ...table(rows, measured, { on: p })[0].on };
  });
  const t = table(rows, measured, predictions);
  mkdirSync(docsDir, { recursive: true });
  // The serving section (tools/serving-accuracy.mjs) is kept as it is.
  const previous = existsSync(join(docsDir, 'ACCURACY.md')) ? readFileSync(join(docsDir, 'ACCURACY.md'), 'utf8') : '';
  const serving = previous.includes(SERVING_SECTION) ? `\n${previous.slice(previous.indexOf(SERVING_SECTION))}` : '';
  writeFileSync(join(docsDir, 'ACCURACY.md'), report(files, rows, t, ablation, lone, measuredSection) + serving);
  writeFileSync(join(docsDir, 'accuracy-predicted-vs-measured.svg'), svgPlot(measured.map((m) => m / 1000),
    Object.fromEntries(Object.entries(predictions).map(([m, p]) => [m, p.map((v) => v / 1000)]))));
  writeFileSync(join(docsDir, 'accuracy.json'), accuracySummary(files, requests, t));
  for (const r of t) {
    console.log(`${r.group.padEnd(22)} blis-v2 ${f2(r['blis-v2'].mape)}%  corrected ${f2(r.corrected.mape)}%  ` +
      `measured ${f2(r.measured.mape)}% (bias ${sg(r.measured.bias)})`);
  }
  console.log(`measured CPU terms: core ${used.step_us} + ${used.per_request_us}/request; ` +
    `MAPE fit on this file ${f1(fit.step_us)} + ${f2(fit.per_request_us)}/request`);
}

/**
 * docs/accuracy.json: the overall error of each mode, which the page shows beside
 * the modes (so the figures are written once, here).
 */
function accuracySummary(files, requests, t) {
  const all = t[0];
  const modes = Object.fromEntries(Object.entries(all).filter(([, v]) => v && typeof v === 'object' && 'mape' in v)
    .map(([mode, v]) =>
      [mode, { mape: Number(v.mape.toFixed(2)), median_ape: Number(v.median.toFixed(2)),
      bias: Number(v.bias.toFixed(2)) }]));
  const models = [...new Set(requests.map((r) => r.model))].join(', ');
  const tps = [...new Set(requests.map((r) => r.tp))].join(', ');
  return `${JSON.stringify({
    generated_by: 'npm run accuracy (tools/accuracy.mjs)', data: files.map((f) => `data/calibration/${f}`),
      steps: requests.length,
    setup: `${models}, TP ${tps}, H100`,
      fitted: 'the corrected and measured modes\' two CPU terms each were fitted on these steps', modes,
  }, null, 1)}\n`;
}

function report(files, rows, t, ablation, lone, measuredSection) {
  const all = t[0];
  const lines = [
    '# Accuracy against measured engine steps',
    '',
    '_Generated by `npm run accuracy` (tools/accuracy.mjs); do not edit by hand._',
    '',
    `Data: ${files.map((f) => `\`data/calibration/${f}\``).join(', ')} (${rows.length} real vLLM 0.15.1 steps,`,
    'Llama-2-70B, TP 4, H100; provenance in `data/calibration/PROVENANCE.md`). The number predicted',
    'is `cycle_us_to_next_step_start`. Errors are (predicted - measured) / measured: MAPE is the mean',
    'absolute percentage error, "median" the median absolute percentage error, bias the mean signed',
    'error (positive: the model overestimates), p90 the 90th percentile of the absolute error.',
    '',
    `Overall: blis-v2 ${f2(all['blis-v2'].mape)}% MAPE, corrected ${f2(all.corrected.mape)}% MAPE, ` +
      `measured ${f2(all.measured.mape)}% MAPE (bias ${sg(all.measured.bias)}%).`,
    '',
    '| steps | n | blis-v2 MAPE | median | bias | p90 | corrected MAPE | median | bias | p90 ' +
      '| measured MAPE | median | bias | p90 |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...t.map((r) => `| ${r.group} | ${r['blis-v2'].n} | ` + ['blis-v2', 'corrected', 'measured']
      .map((m) => `${f2(r[m].mape)} | ${f2(r[m].median)} | ${sg(r[m].bias)} | ${f2(r[m].p90)}`).join(' | ') + ' |'),
    '',
    '![predicted vs measured](accuracy-predicted-vs-measured.svg)',
    '',
    '## How a step is rebuilt from the aggregate columns',
    '',
    'The file records totals per step, not each request. Each row becomes one request:',
    '',
    '- model: the preset of the `model` column (`llama-2-70b` -> `llama-2-70b-hf`), `tp` from the row, GPU H100',
    '  with the reference defaults.',
    '- decode: `batch.num_decode_reqs` requests, each holding `round(kv.usage_gpu_ratio *',
    '  kv.blocks_total_gpu * 16 / queue.running_depth)` tokens (the cache split evenly over the running',
    '  requests; blocks hold 16 tokens).',
    '- prefill: `batch.prefill_tokens` split evenly over `batch.num_prefill_reqs` requests (the remainder',
    '  one token each to the first ones), no cached prefix (`progress_index` 0).',
    '- The scheduler time (`schedule_call_us`) and queue depths are not inputs: a user predicting a step',
    '  does not have them.',
    '',
    'Only 2 of the mixed steps carry more than 100 prefill tokens; the file mostly judges decode-heavy',
    'steps. Long-prompt behaviour is judged by the other models kept aside.',
    '',
    '## Each switch\'s effect',
    '',
    'Corrected mode with one switch turned off (left), and blis-v2 with only that switch turned on',
    '(right), overall MAPE / bias over all steps. Rationale and sources: docs/CORRECTED-MODE.md.',
    '',
    `| switch | corrected without it | bias | blis-v2 with only it | bias |`,
    '| --- | ---: | ---: | ---: | ---: |',
    `| (none: corrected / blis-v2 as they are) | ${f2(all.corrected.mape)} | ${sg(all.corrected.bias)} ` +
      `| ${f2(all['blis-v2'].mape)} | ${sg(all['blis-v2'].bias)} |`,
    ...ablation.map((a, i) =>
      `| ${a.name} | ${f2(a.mape)} | ${sg(a.bias)} | ${f2(lone[i].mape)} | ${sg(lone[i].bias)} |`),
    '',
    'On this file `decode_harmonic_mean` and `prefill_attention_length` change nothing by',
    'construction: the reconstruction gives every decode request the same KV length (the harmonic and',
    'arithmetic means then agree) and almost no step has a prefill chunk long enough for its attention',
    'to matter. They are kept for steps with mixed KV lengths and long prompts (tests/core/test_corrected.cpp).',
    '',
    '## What was fitted',
    '',
    'Only `cpu_step_us` (1700) and `cpu_per_request_us` (14) were fitted, on this file (least squares',
    'on relative error, rounded). Every other parameter is a public figure (docs/CORRECTED-MODE.md).',
    '',
    ...measuredReport(measuredSection, { f1, f2, sg }),
  ];
  return lines.join('\n');
}

main();
