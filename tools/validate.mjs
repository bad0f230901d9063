// SPDX-License-Identifier: Apache-2.0
// npm run validate: the public accuracy ledger (issue #22). Prices every measured vLLM run
// of data/silicon/vllm-public.csv with the native CLI's `stepcalc serve` under one protocol
// (tools/validate-ledger.mjs, PROTOCOL) and writes docs/validation.json (every run: its
// exact request, predicted and measured means, or why it is unsupported; per-subset
// figures), docs/VALIDATION.md and docs/validation-predicted-vs-measured.svg. Deterministic:
// rows in CSV order, subsets sorted, no timestamps. `--baseline` also rewrites
// docs/validation-baseline.json (the overall MAPEs `npm test` may not exceed by 1 point).
// Usage: node tools/validate.mjs [--baseline]
//        node tools/validate.mjs --data RUNS.csv --out DIR [--configs DIR]   (your own measured
//        runs, in the columns of data/silicon/vllm-public.csv: the same three files written to
//        DIR; the models' configs, where no preset or shipped config has them, from --configs or
//        the model_configs/ directory beside RUNS.csv, named as the source names them)
import { writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  ROOT, DATA, LEDGER, BASELINE, PROTOCOL, PROTOCOL_COLUMNS, readRows, readText, priceRows, spreadOf, overall,
  ttftError, tpotError, round2,
  contradictions, CONTRADICTION_DROP, CONTRADICTION_CLIENTS, fewerInFlight, IN_FLIGHT_SHARE,
  ENGINE_DEFAULT_MAX_NUM_SEQS, pricedAtEngineCap, repeats, MEASURED_WAVES,
} from './validate-ledger.mjs';
import { ALTERNATIVES_FILE, FIT_PART } from './validate-alternatives.mjs';

/** @typedef {import('./validate-ledger.mjs').Run} Run */

const USAGE = 'usage: node tools/validate.mjs [--baseline] | --data RUNS.csv --out DIR [--configs DIR]';
/**
 * The command line, read strictly: `--help` prints the usage, and any other argument than the
 * four options (one a flag, three with a value), or an option without its value, is a usage
 * error naming it, so a typo such as `--dta` or a forgotten file never falls through to
 * rewriting the public ledger in docs/.
 */
const ARGS = process.argv.slice(2);
if (ARGS.includes('--help') || ARGS.includes('-h')) {
  console.log(`${USAGE}\n  no options: prices the public runs (data/silicon/vllm-public.csv) and rewrites ` +
    'docs/VALIDATION.md, docs/validation.json and its plot; --baseline also moves docs/validation-baseline.json\n' +
    '  --data: your own measured runs (the columns they need: docs/SERVING.md, "How accurate"), written to --out; ' +
    'model configs the repository lacks from --configs or the model_configs/ beside RUNS.csv');
  process.exit(0);
}
for (let i = 0; i < ARGS.length; i++) {
  const valued = ['--data', '--out', '--configs'].includes(ARGS[i]);
  if (ARGS[i] !== '--baseline' && !valued) {
    console.error(`validate: unknown argument ${JSON.stringify(ARGS[i])}\n${USAGE}`);
    process.exit(2);
  }
  if (valued && (i + 1 >= ARGS.length || ARGS[i + 1].startsWith('--'))) {
    console.error(`validate: ${ARGS[i]} needs a value\n${USAGE}`);
    process.exit(2);
  }
  if (valued) i++;
}
/** The value after `flag` on the command line. @param {string} flag */
const option = (flag) => {
  const i = ARGS.indexOf(flag);
  return i >= 0 ? ARGS[i + 1] : undefined;
};
/**
 * Another CSV of measured runs (`--data`), written to `--out`; the public runs otherwise. Paths
 * are from the directory the command was typed in (npm runs scripts from the package's).
 */
const given = { data: option('--data'), out: option('--out'), configs: option('--configs') };
const half = (given.data === undefined) !== (given.out === undefined);
if (half || (given.data !== undefined && (!given.data || !given.out)) ||
    (given.configs !== undefined && (!given.configs || given.data === undefined))) {
  console.error(USAGE);
  process.exit(2);
}
const from = (/** @type {string | undefined} */ p) =>
  (p ? resolve(process.env.INIT_CWD ?? process.cwd(), p) : undefined);
const OTHER = from(given.data);
const OUT = from(given.out);
/**
 * Model configs for the runs of --data that no preset or shipped config has: --configs, else the
 * model_configs/ beside the CSV (where the source keeps them) if there is one.
 */
const CONFIG_DIRS = !OTHER ? [] : given.configs ? [/** @type {string} */ (from(given.configs))]
  : existsSync(join(dirname(OTHER), 'model_configs')) ? [join(dirname(OTHER), 'model_configs')] : [];
if (CONFIG_DIRS.length && !existsSync(CONFIG_DIRS[0])) {
  console.error(`validate: --configs ${given.configs}: no such directory`);
  process.exit(2);
}
const DATA_NAME = OTHER ?? DATA;
/** Where a file goes: the repository's docs/, or --out. @param {string} file a docs/ path */
const output = (file) => (OUT ? join(OUT, file.replace(/^docs\//, '')) : join(ROOT, file));
const SVG = 'docs/validation-predicted-vs-measured.svg';

/** Clients of a run, as the load buckets of byLoad: [least, most] (most Infinity: no bound). */
const LOAD_CLIENTS = /** @type {const} */ ([[1, 4], [5, 8], [9, 16], [17, 64], [65, 256], [257, Infinity]]);
/** Prompts up to this many tokens (the row's isl) are short in byLoad; longer ones long. */
const SHORT_PROMPT = 2048;
const SHORT_PROMPT_WORDS = SHORT_PROMPT.toLocaleString('en-US');

/**
 * The priced runs by load: clients (LOAD_CLIENTS) x prompt length (isl up to SHORT_PROMPT, or
 * longer), each bucket's n, MAPE and bias. Where a subset's error comes from: queueing grows with
 * clients, and whether prompts share a step depends on their length against the step's budget.
 * `rows`: the CSV rows the runs were priced from, in the same order (priceRows keeps it): the prompt
 * is the row's isl (a request's input tokens hold the chat template's too, or not: endpoint_type).
 * @param {Run[]} runs @param {import('./validate-ledger.mjs').Row[]} rows
 */
function byLoad(runs, rows) {
  return LOAD_CLIENTS.flatMap(([least, most]) => [true, false].map((short) => {
    const list = runs.filter((r, i) => r.status === 'priced' && req(r).workload.concurrency >= least &&
      req(r).workload.concurrency <= most && (Number(rows[i].isl) <= SHORT_PROMPT) === short);
    return { clients: most === Infinity ? `${least}+` : `${least}-${most}`,
      prompt: short ? `up to ${SHORT_PROMPT_WORDS}` : `over ${SHORT_PROMPT_WORDS}`, ...overall(list) };
  })).filter((b) => b.priced > 0);
}

/** A percentage of the ledger's, or "-" where no run was priced to give one. @param {number | null} v */
const percent = (v) => (v === null || v === undefined ? '-' : `${v}%`);

/** Subset figures: n, priced, MAPE and bias of TTFT and TPOT. @param {Run[]} runs */
function subsets(runs) {
  /** @type {Map<string, Run[]>} */
  const by = new Map();
  for (const r of runs) {
    if (!by.has(r.subset)) by.set(r.subset, []);
    by.get(r.subset)?.push(r);
  }
  return [...by.keys()].sort().map((key) => {
    const [model, gpu, precision, layout] = key.split(' | ');
    const list = by.get(key) ?? [];
    const reasons = [...new Set(list.filter((r) => r.status !== 'priced').map((r) => shortReason(r.reason ?? '')))];
    const why = reasons.length ? { unsupported: reasons } : {};
    const all = overall(list);
    return { key, model, gpu, precision, layout, ...all, ...why, ...besideEstimates(list, all.priced) };
  });
}

/**
 * The figures a serve or plan result carries for its nearest subset (`validation`): the subset's
 * priced runs less those with fewer requests in flight than clients (`fewer`, filled before the
 * subsets are), which measured a smaller load than their row says and so do not tell how an
 * estimate for that many clients errs. `left_out` counts them.
 * @param {Run[]} list a subset's runs
 * @param {number} priced how many of them were priced
 */
function besideEstimates(list, priced) {
  if (priced === 0) return {};
  const { runs: _, priced: shown, ...figures } = overall(list.filter((r) => !fewer.has(r.id)));
  return { beside_estimates: { priced: shown, left_out: priced - shown, ...figures } };
}

/** The reason without the run's own numbers (for a subset's summary). @param {string} reason */
const shortReason = (reason) => reason.split(': ').slice(0, 2).join(': ');

const req = (/** @type {Run} */ r) => /** @type {any} */ (r.request);
/** @type {Map<string, Run>} the runs contradicting their series (filled once priced), by id */
const contradicted = new Map();
/**
 * The runs with fewer requests in flight, by id: decoding at once, measured and simulated, and the
 * run re-priced with vLLM's engine-default cap on running requests (pricedAtEngineCap).
 * @type {Map<string, {measured: number, simulated: number, capped: {ttft_ms: number, tpot_ms: number}}>}
 */
const fewer = new Map();

/**
 * The runs whose measured TPOT falls as their clients grow, and the figures without them.
 * @param {Run[]} runs
 * @param {any[]} subs the subsets' figures (subsets())
 */
function contradictionSection(runs, subs) {
  const list = contradictions(runs);
  const capped = fewerInFlight(runs);
  if (!list.length && !capped.length) return [];
  const flagged = new Set([...list.map((c) => c.run.id), ...capped.map((c) => c.run.id)]);
  const rest = overall(runs.filter((r) => !flagged.has(r.id)));
  return [
    '## Measurements that contradict their series',
    '',
    `More clients put more requests in every decode step, so a setup's TPOT does not fall as its clients grow. ` +
      `In these ${list.length} priced runs the measured TPOT is more than ${100 * CONTRADICTION_DROP}% below ` +
      `that of a run of the same model, GPU, precision, layout and lengths at 1/${CONTRADICTION_CLIENTS} of the ` +
      'clients or fewer (the slowest such run is named; of a setup measured more than once, its median run, ' +
      'so one odd measurement among repeats does not stand for its setup). One run of each pair measured ' +
      'something its row does ' +
      'not say; the data cannot tell which (`contradicts` in validation.json names the other run).',
    '',
    '| run | clients | measured TPOT / TTFT ms | predicted TPOT ms | same setup at | ' +
      'its measured TPOT / TTFT ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...list.map(({ run: r, other: o }) => `| ${r.id} | ${req(r).workload.concurrency} | ` +
      `${r.silicon_tpot_ms.toFixed(2)} / ${r.silicon_ttft_ms.toFixed(0)} | ` +
      `${(/** @type {number} */ (r.tpot_ms)).toFixed(2)} | ${req(o).workload.concurrency} | ` +
      `${o.silicon_tpot_ms.toFixed(2)} / ${o.silicon_ttft_ms.toFixed(0)} |`),
    '',
    '### Fewer requests in flight than clients',
    '',
    'A closed loop keeps every client\'s request outstanding, so a run has as many requests in flight as ' +
      'clients. By Little\'s law the requests decoding at once are the clients times the share of a cycle a ' +
      'request spends decoding, (output tokens - 1) x TPOT / (TTFT + (output tokens - 1) x TPOT). The ' +
      'simulation has the engine\'s own limits (max_num_seqs, the KV cache), and in these ' +
      `${capped.length} runs the measured count is below ${100 * IN_FLIGHT_SHARE}% of the simulated one: their ` +
      'requests waited outside the engine, behind a cap on requests in flight their row does not record (the ' +
      'benchmark client\'s or the server\'s), so they measured fewer clients than they say (`in_flight` in ' +
      'validation.json).',
    '',
    `vLLM's own engine default is such a cap: an engine made without \`vllm serve\`'s defaults for large GPUs ` +
      `(1,024 running requests) runs at most ${ENGINE_DEFAULT_MAX_NUM_SEQS} (its SchedulerConfig's max_num_seqs, ` +
      'as the public calibration run\'s engine logged). The last column prices each run with that cap, a ' +
      `diagnostic (the ledger keeps the protocol's engine): ${capSummary(capped)}`,
    '',
    '| run | clients | measured TPOT / TTFT ms | predicted TPOT / TTFT ms | decoding at once, measured | simulated | ' +
      `at most ${ENGINE_DEFAULT_MAX_NUM_SEQS} running: predicted TPOT / TTFT ms (TTFT error) |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...capped.map(({ run: r, measured, simulated }) => {
      const c = /** @type {{ttft_ms: number, tpot_ms: number}} */ (fewer.get(r.id)?.capped);
      return `| ${r.id} | ${req(r).workload.concurrency} | ` +
        `${r.silicon_tpot_ms.toFixed(2)} / ${r.silicon_ttft_ms.toFixed(0)} | ` +
        `${(/** @type {number} */ (r.tpot_ms)).toFixed(2)} / ${(/** @type {number} */ (r.ttft_ms)).toFixed(0)} | ` +
        `${measured.toFixed(0)} | ${simulated.toFixed(0)} | ${c.tpot_ms.toFixed(2)} / ${c.ttft_ms.toFixed(0)} ` +
        `(${pct(c.ttft_ms / r.silicon_ttft_ms - 1)}) |`;
    }),
    '',
    `Both kinds stay in the ledger and in every figure above; nothing is fitted to them or left out. Over the ` +
      `other ${rest.priced} priced runs: TTFT MAPE ${percent(rest.ttft_mape)}, TPOT MAPE ${percent(rest.tpot_mape)}.`,
    '',
    ...besideSection(subs),
  ];
}

/**
 * stepcalc's accuracy targets for the serving ledger (issue #22's bars): the share of runs priced,
 * the overall TTFT and TPOT MAPE, every subset with at least SUBSET_MIN priced runs within its own
 * bars, and the step-level MAPE of the measured mode on the calibration steps.
 */
const TARGETS = /** @type {const} */ ({ priced_share: 95, ttft_mape: 25, tpot_mape: 10, subset_min: 10,
  subset_ttft_mape: 50, subset_tpot_mape: 20, step_mape: 3 });

/**
 * The ledger against TARGETS (`targets` in validation.json): each bar, the figure now and whether it
 * is met; the subsets over a bar; and where the overall MAPE comes from: each such subset's share of
 * it in points (its runs' absolute errors over all priced runs, so the shares of every subset add up
 * to the overall MAPE), and the share of the runs whose measurements contradict their rows.
 * @param {Run[]} runs @param {any[]} subs the subsets' figures (subsets())
 */
function targets(runs, subs) {
  const all = overall(runs);
  const priced = runs.filter((r) => r.status === 'priced');
  const n = priced.length;
  /** Points of the overall MAPE carried by some runs. @param {Run[]} list @param {(r: Run) => number} err */
  const points = (list, err) => (n ? round2(100 * list.reduce((t, r) => t + Math.abs(err(r)), 0) / n) : null);
  const judged = subs.filter((s) => s.priced >= TARGETS.subset_min);
  const over = judged.filter((s) => s.ttft_mape > TARGETS.subset_ttft_mape || s.tpot_mape > TARGETS.subset_tpot_mape)
    .map((s) => {
      const list = priced.filter((r) => r.subset === s.key);
      return { subset: s.key, priced: s.priced, ttft_mape: s.ttft_mape, tpot_mape: s.tpot_mape,
        ttft_points: points(list, ttftError), tpot_points: points(list, tpotError) };
    }).sort((a, b) => (b.tpot_points ?? 0) + (b.ttft_points ?? 0) - (a.tpot_points ?? 0) - (a.ttft_points ?? 0) ||
      (a.subset < b.subset ? -1 : 1));
  const flagged = priced.filter((r) => contradicted.has(r.id) || fewer.has(r.id));
  const step = OTHER ? null : JSON.parse(readText('docs/accuracy.json')).modes.measured.mape;
  const share = all.runs ? round2(100 * all.priced / all.runs) : 0;
  const bar = (/** @type {string} */ what, /** @type {string} */ limit, /** @type {number | string | null} */ now,
    /** @type {boolean} */ met) => ({ what, bar: limit, now, met });
  return {
    bars: [
      bar('runs priced', `>= ${TARGETS.priced_share}%`, share, share >= TARGETS.priced_share),
      bar('TTFT MAPE over the priced runs', `<= ${TARGETS.ttft_mape}%`, all.ttft_mape,
        all.ttft_mape !== null && all.ttft_mape <= TARGETS.ttft_mape),
      bar('TPOT MAPE over the priced runs', `<= ${TARGETS.tpot_mape}%`, all.tpot_mape,
        all.tpot_mape !== null && all.tpot_mape <= TARGETS.tpot_mape),
      bar(`subsets of ${TARGETS.subset_min} or more priced runs at TTFT MAPE <= ${TARGETS.subset_ttft_mape}% and ` +
        `TPOT MAPE <= ${TARGETS.subset_tpot_mape}%`, 'all', `${judged.length - over.length} of ${judged.length}`,
      over.length === 0),
      ...(step === null ? [] : [bar('step-time MAPE of the measured mode on the calibration steps',
        `<= ${TARGETS.step_mape}%`, step, step <= TARGETS.step_mape)]),
    ],
    over,
    flagged: { runs: flagged.length, ttft_points: points(flagged, ttftError),
      tpot_points: points(flagged, tpotError) },
  };
}

/** VALIDATION.md's section on the targets. @param {ReturnType<typeof targets>} t */
function targetSection(t) {
  const cell = (/** @type {number | string | null} */ v) => (typeof v === 'number' ? `${v}%` : v ?? '-');
  const pt = (/** @type {number | null} */ v) => (v === null ? '-' : v.toFixed(2));
  return [
    '## Against the targets',
    '',
    'What stepcalc aims at on this ledger, and where it stands (`targets` in validation.json):',
    '',
    '| target | bar | now | met |',
    '| --- | --- | ---: | --- |',
    ...t.bars.map((b) => `| ${b.what} | ${b.bar} | ${cell(b.now)} | ${b.met ? 'yes' : '**no**'} |`),
    '',
    ...(t.over.length ? [
      'The subsets over a bar, and how much of the overall MAPE each carries: its runs\' absolute errors ' +
        'summed over all priced runs, in points (every subset\'s points add up to the overall MAPE), the ' +
        'subsets carrying the most first.',
      '',
      '| model | GPU | precision | layout | priced | TTFT MAPE | TPOT MAPE | TTFT points | TPOT points |',
      '| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |',
      ...t.over.map((o) => `| ${o.subset} | ${o.priced} | ${pc(o.ttft_mape)} | ` +
        `${pc(o.tpot_mape)} | ${pt(o.ttft_points)} | ${pt(o.tpot_points)} |`),
      '',
    ] : []),
    ...(t.flagged.runs ? [`The ${t.flagged.runs} runs whose measurements contradict their rows (below, ` +
      '"Measurements that contradict their series") carry ' +
      `${pt(t.flagged.ttft_points)} points of the TTFT MAPE and ${pt(t.flagged.tpot_points)} of the TPOT MAPE.`,
    ''] : []),
  ];
}

/**
 * Setups measured more than once: the runs that repeat another's measurement exactly, and the
 * spread between different measurements of one setup (repeats()).
 * @param {Run[]} runs
 */
function repeatSection(runs) {
  const r = repeats(runs);
  if (!r.identical && !r.spread.setups) return [];
  const all = overall(runs);
  return [
    '## Repeated measurements',
    '',
    ...(r.identical ? [`${r.identical} priced runs repeat the measured TTFT and TPOT of an earlier run of the same ` +
      'model, GPU, precision, layout, lengths and clients exactly: one measurement listed under two ids (the first: ' +
      `${r.first_identical_pair?.join(' and ')}). They stay in every figure, as the data has them; over one run ` +
      `per measurement (${r.distinct.priced} runs) TTFT MAPE is ${percent(r.distinct.ttft_mape)} (bias ` +
      `${percent(r.distinct.ttft_bias)}) and TPOT MAPE ${percent(r.distinct.tpot_mape)} (bias ` +
      `${percent(r.distinct.tpot_bias)}), against ${percent(all.ttft_mape)} and ${percent(all.tpot_mape)} over ` +
      'every priced run.', ''] : []),
    ...(r.spread.setups ? [`${r.spread.setups} setups were measured two or more times with different results ` +
      `(${r.spread.runs} runs): each measurement lies, on average, ${percent(r.spread.ttft_deviation)} (TTFT) and ` +
      `${percent(r.spread.tpot_deviation)} (TPOT) from its setup's mean. That much error an estimate of the mean ` +
      'would show on them even if it were exact: the measurements\' own run-to-run spread (`repeats` in ' +
      'validation.json).', ''] : []),
  ];
}

/**
 * The figures beside an estimate (a result's `validation`) where they are not the subset's
 * own: the runs with fewer requests in flight than clients left out.
 * @param {any[]} subs the subsets' figures (subsets())
 */
function besideSection(subs) {
  const changed = subs.filter((s) => s.beside_estimates?.left_out > 0);
  if (!changed.length) return [];
  const pair = (/** @type {number | null} */ mape, /** @type {number | null} */ b) =>
    (mape === null ? '-' : `${pc(mape)} (${pc(b)})`);
  return [
    '### The error beside an estimate',
    '',
    'A serve or plan result carries the figures of the subset nearest its request (`validation`, ' +
      'docs/SERVING.md, "How accurate") over that subset\'s priced runs less those with fewer requests in ' +
      'flight than clients: they measured a smaller load than their row says, so they do not tell how an ' +
      'estimate for that many clients errs (`beside_estimates` in validation.json; the result\'s ' +
      '`runs_left_out` counts them). The subsets whose figures that changes:',
    '',
    '| model | GPU | precision | layout | runs | left out | TTFT MAPE (bias) | TPOT MAPE (bias) | ' +
      'every priced run: TTFT MAPE (bias) | TPOT MAPE (bias) |',
    '| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...changed.map((s) => {
      const b = s.beside_estimates;
      return `| ${s.model} | ${s.gpu} | ${s.precision} | ${s.layout} | ${b.priced} | ${b.left_out} | ` +
        `${pair(b.ttft_mape, b.ttft_bias)} | ` +
        `${pair(b.tpot_mape, b.tpot_bias)} | ${pair(s.ttft_mape, s.ttft_bias)} | ${pair(s.tpot_mape, s.tpot_bias)} |`;
    }),
    '',
  ];
}

/**
 * What the engine-default cap does to the runs with fewer requests in flight: how many of them
 * it prices within 10% of their measured TTFT (their queue outside the engine), and how many of
 * the others contradict their series.
 * @param {{run: Run}[]} capped
 */
function capSummary(capped) {
  const near = capped.filter(({ run: r }) => {
    const c = fewer.get(r.id)?.capped;
    return c && Math.abs(c.ttft_ms / r.silicon_ttft_ms - 1) <= 0.1;
  });
  const words = (/** @type {Run[]} */ list) => list.map((r) => `${r.id} (TTFT ${r.silicon_ttft_ms.toFixed(0)} ms ` +
    `measured, ${(/** @type {any} */ (fewer.get(r.id))).capped.ttft_ms.toFixed(0)} ms)`).join(', ');
  const others = capped.filter((c) => !near.includes(c));
  return `it prices ${near.length} of the ${capped.length} runs' TTFT within 10% of the measured one` +
    (near.length ? ` (${words(near.map((c) => c.run))})` : '') +
    (others.length ? `; the other ${others.length} stay off, ` +
      `${others.filter((c) => contradicted.has(c.run.id)).length} of them runs whose TPOT contradicts their ` +
      'series (above).' : '.');
}

/** What the result itself says about a run's miss. @param {Run} r */
function causeOf(r) {
  const f = /** @type {any} */ (r.cause_facts);
  const w = /** @type {any} */ (r.request).workload;
  const t = ttftError(r), p = tpotError(r);
  const out = [];
  if (Math.abs(t) >= Math.abs(p)) {
    if (t > 0 && f.preemptions > 0)
      out.push(`TTFT over: the simulated KV cache ran out (${f.preemptions} preemptions; the preempted requests ` +
        'recompute their prompts and new prompts wait), which the measured run did not show in its TTFT');
    else if (t > 0 && w.concurrency > 1 && 2 * w.input_tokens <= f.max_num_batched_tokens)
      out.push(`TTFT over: the simulated clients move in lockstep (docs/SERVING.md, "Lockstep"): prompts of ` +
        `${w.input_tokens} tokens sent together are prefilled together, up to ` +
        `${Math.min(w.concurrency, Math.floor(f.max_num_batched_tokens / w.input_tokens))} in a step ` +
        `(TTFT p50 ${f.ttft_p50_ms.toFixed(0)} ms), the measured clients do not`);
    else if (t > 0)
      out.push(`TTFT over: new prompts queue behind ${f.mean_running.toFixed(0)} running requests' steps`);
    else out.push('TTFT under: the measured first token waits for more than the simulated queue and prefill ' +
      '(API server, tokenization, scheduling not modelled)');
  } else {
    out.push(`TPOT ${p > 0 ? 'over' : 'under'}: the decode step of ~${f.mean_running.toFixed(0)} running requests ` +
      `is priced ${p > 0 ? 'slower' : 'faster'} than measured`);
  }
  const other = contradicted.get(r.id);
  if (other) {
    out.push(`the measured TPOT contradicts the same setup's at ${req(other).workload.concurrency} clients ` +
      `(${other.silicon_tpot_ms.toFixed(2)} ms; "Measurements that contradict their series")`);
  }
  const inFlight = fewer.get(r.id);
  if (inFlight) {
    out.push(`the measured run decoded ~${inFlight.measured.toFixed(0)} requests at once of its ${w.concurrency} ` +
      `clients, the simulation ~${inFlight.simulated.toFixed(0)} ("Fewer requests in flight than clients")`);
  }
  if (f.preemptions > 0 && !out[0].includes('preemptions')) out.push(`${f.preemptions} KV-cache preemptions`);
  if (r.fewer_measured) {
    out.push(`${r.fewer_measured.requests} measured requests, not the protocol's ${MEASURED_WAVES * w.concurrency} ` +
      '(more simulation work than one simulation may take; the first, synchronised wave weighs more)');
  }
  if (f.warnings.length) out.push(`warnings: ${f.warnings.join(', ')}`);
  return out.join('; ');
}

/**
 * The runs with attention data parallelism (dp > 1) beside the runs of the same model, GPU,
 * precision, lengths and clients served by one engine of the same TP (dp 1): what the
 * measured figures say about the layout, next to what the simulation predicts.
 * @param {Run[]} runs
 */
function dataParallel(runs) {
  const priced = runs.filter((r) => r.status === 'priced');
  const head = (/** @type {string} */ subset) => subset.split(' | ').slice(0, 3).join(' | ');
  const twinKey = (/** @type {Run} */ r) => {
    const q = req(r), w = q.workload;
    return [head(r.subset), q.tp, w.input_tokens, w.output_tokens, w.concurrency].join(' ');
  };
  /** @type {Map<string, Run[]>} */
  const single = new Map();
  for (const r of priced) {
    if ((req(r).dp ?? 1) !== 1) continue;
    const k = twinKey(r);
    if (!single.has(k)) single.set(k, []);
    single.get(k)?.push(r);
  }
  const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  /** @type {Map<string, {n: number, measured: number[], predicted: number[], twins: number, same: number}>} */
  const by = new Map();
  // The same measurement: a twin's TTFT and TPOT both within this share of the run's.
  const SAME = 0.001;
  const near = (/** @type {number} */ a, /** @type {number} */ b) => Math.abs(a / b - 1) < SAME;
  for (const r of priced) {
    const q = req(r);
    if ((q.dp ?? 1) <= 1) continue;
    const twins = single.get(twinKey(r)) ?? [];
    if (!twins.length) continue;
    const k = `${head(r.subset)} | TP${q.tp} EP${q.ep} DP${q.dp}`;
    if (!by.has(k)) by.set(k, { n: 0, measured: [], predicted: [], twins: 0, same: 0 });
    const e = /** @type {{n: number, measured: number[], predicted: number[], twins: number, same: number}} */ (
      by.get(k));
    const twinTpot = mean(twins.map((t) => t.silicon_tpot_ms));
    e.n += 1;
    e.twins += twins.length;
    if (twins.some((t) => near(t.silicon_ttft_ms, r.silicon_ttft_ms) && near(t.silicon_tpot_ms, r.silicon_tpot_ms)))
      e.same += 1;
    e.measured.push(r.silicon_tpot_ms / twinTpot);
    e.predicted.push(/** @type {number} */ (r.tpot_ms) / twinTpot);
  }
  if (!by.size) return [];
  const median = (/** @type {number[]} */ xs) => {
    const v = [...xs].sort((a, b) => a - b);
    return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  };
  return [
    '## Attention data parallelism: what the runs show',
    '',
    'A layout with dp ranks (vLLM `--data-parallel-size` with expert parallelism) spreads the clients over its ' +
      'ranks, each rank an engine of tp GPUs, so its decode steps are smaller than those of one engine of tp GPUs ' +
      'serving all the clients (docs/SERVING.md, "Layouts"). Each row puts the runs of a data-parallel layout beside ' +
      'the ledger\'s runs of the same model, GPU, precision, lengths and clients on one engine of the same TP (its ' +
      'twins), as the ratio of mean TPOTs (median over the layout\'s runs). Where the measured ratio is near 1, the ' +
      'run measured what one engine serving every client measures, and the simulation, which splits the clients, ' +
      'is under; the ledger prices such runs as their layout says all the same. "The same measurement" counts the ' +
      `runs whose measured TTFT and TPOT both equal a twin's to ${100 * SAME}%: one measurement under two layouts' ` +
      'names, which cannot have measured both.',
    '',
    '| model | GPU | precision | layout | runs with twins | twin runs | measured TPOT / twins\' | ' +
      'predicted TPOT / twins\' measured | the same measurement |',
    '| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...[...by.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, e]) => {
      const [model, gpu, precision, layout] = k.split(' | ');
      return `| ${model} | ${gpu} | ${precision} | ${layout} | ${e.n} | ${e.twins} | ` +
        `${median(e.measured).toFixed(2)} | ${median(e.predicted).toFixed(2)} | ${e.same} |`;
    }),
    '',
  ];
}

const pct = (/** @type {number} */ x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;
const num = (/** @type {number | null} */ x) => (x === null ? '-' : x.toFixed(1));
const pc = (/** @type {number | null} */ x) => (x === null ? '-' : `${x.toFixed(1)}%`);

/** Log-log predicted vs measured, TTFT and TPOT side by side. @param {Run[]} priced */
function svg(priced) {
  const W = 360, H = 360, pad = 48;
  /** @param {string} title @param {number[][]} pts @param {number} x0 */
  const panel = (title, pts, x0) => {
    const vals = pts.flat().filter((v) => v > 0);
    const lo = Math.floor(Math.log10(Math.min(...vals))), hi = Math.ceil(Math.log10(Math.max(...vals)));
    const s = (/** @type {number} */ v) => (Math.log10(v) - lo) / (hi - lo) * (W - 2 * pad);
    const parts = [`<g transform="translate(${x0},0)">`,
      `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${title}</text>`,
      `<rect x="${pad}" y="${pad}" width="${W - 2 * pad}" height="${H - 2 * pad}" fill="none" stroke="#888"/>`,
      `<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${pad}" stroke="#bbb" stroke-dasharray="4 3"/>`];
    for (let e = lo; e <= hi; ++e) {
      const x = pad + s(10 ** e), y = H - pad - s(10 ** e);
      parts.push(`<text x="${x.toFixed(1)}" y="${H - pad + 16}" text-anchor="middle" font-size="10">${10 ** e}</text>`,
        `<text x="${pad - 4}" y="${(y + 3).toFixed(1)}" text-anchor="end" font-size="10">${10 ** e}</text>`);
    }
    parts.push(`<text x="${W / 2}" y="${H - 8}" text-anchor="middle" font-size="11">measured, ms</text>`,
      `<text x="12" y="${H / 2}" font-size="11" transform="rotate(-90 12 ${H / 2})" text-anchor="middle">` +
      'predicted, ms</text>');
    for (const [m, p] of pts)
      parts.push(`<circle cx="${(pad + s(m)).toFixed(1)}" cy="${(H - pad - s(p)).toFixed(1)}" r="2" ` +
        'fill="#1f6feb" fill-opacity="0.5"/>');
    parts.push('</g>');
    return parts.join('\n');
  };
  return [`<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${H}" font-family="sans-serif">`,
    '<rect width="100%" height="100%" fill="white"/>',
    panel('Mean TTFT', priced.map((r) => [r.silicon_ttft_ms, /** @type {number} */ (r.ttft_ms)]), 0),
    panel('Mean TPOT', priced.map((r) => [r.silicon_tpot_ms, /** @type {number} */ (r.tpot_ms)]), W),
    '</svg>', ''].join('\n');
}

/** The step-level figures on the public calibration steps, from docs/accuracy.json. */
function stepFigures() {
  const a = JSON.parse(readText('docs/accuracy.json'));
  return [
    `Data: ${a.data.join(', ')}, ${a.steps} steps (${a.setup}); ${a.fitted}. From docs/accuracy.json ` +
      '(`npm run accuracy`; docs/ACCURACY.md).',
    '',
    '| mode | step-time MAPE | median APE | bias |',
    '| --- | ---: | ---: | ---: |',
    ...Object.entries(a.modes).map(([m, f]) => `| ${m} | ${f.mape}% | ${f.median_ape}% | ${f.bias}% |`),
  ];
}

/**
 * The protocol's evidence: docs/validation-alternatives.json (tools/validate-alternatives.mjs), or null when
 * it has not been generated.
 * @returns {{fit_part: string, alternatives: {name: string, choice: string, all: Figures, fit_part: Figures,
 *   held_out: Figures}[]} | null}
 */
function alternatives() {
  return !OTHER && existsSync(join(ROOT, ALTERNATIVES_FILE)) ? JSON.parse(readText(ALTERNATIVES_FILE)) : null;
}
/** @typedef {{priced: number, ttft_mape: number, ttft_bias: number, tpot_mape: number, tpot_bias: number}} Figures */

/** The evidence table for VALIDATION.md. @param {ReturnType<typeof alternatives>} alt */
function evidence(alt) {
  if (OTHER) return ['The protocol was chosen on the public runs: the repository\'s docs/VALIDATION.md, this section.'];
  if (!alt) return ['_docs/validation-alternatives.json is missing: run `node tools/validate-alternatives.mjs`._'];
  return [
    `Each row re-prices every run with one choice of the protocol changed (\`node tools/validate-alternatives.mjs\`, ` +
      `written to [validation-alternatives.json](validation-alternatives.json)); the fit part is the ${alt.fit_part} ` +
      'rows, the only ones the API-server constant was scanned on. TTFT and TPOT: MAPE (bias) in percent.',
    '',
    '| protocol | choice changed | priced | TTFT all | TTFT fit part | TTFT held out | TPOT all |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...alt.alternatives.map((a) => `| ${a.name} | ${a.choice} | ${a.all.priced} | ` +
      `${a.all.ttft_mape} (${a.all.ttft_bias}) | ${a.fit_part.ttft_mape} | ${a.held_out.ttft_mape} | ` +
      `${a.all.tpot_mape} (${a.all.tpot_bias}) |`),
  ];
}

/**
 * @param {Run[]} runs @param {ReturnType<typeof subsets>} subs @param {Run[]} spread
 * @param {ReturnType<typeof byLoad>} loads @param {ReturnType<typeof targets>} aims the ledger against its targets
 */
function markdown(runs, subs, spread, loads, aims) {
  const all = overall(runs);
  const fit = overall(runs.filter((r) => r.subset.startsWith(FIT_PART)));
  const held = overall(runs.filter((r) => !r.subset.startsWith(FIT_PART)));
  const priced = runs.filter((r) => r.status === 'priced');
  const miss = (/** @type {Run} */ r) => Math.max(Math.abs(ttftError(r)), Math.abs(tpotError(r)));
  const worst = [...priced].sort((a, b) => miss(b) - miss(a) || (a.id < b.id ? -1 : 1)).slice(0, 10);
  /** @type {Record<string, number>} */
  const refused = {};
  for (const r of runs.filter((x) => x.status !== 'priced')) {
    const k = shortReason(r.reason ?? '');
    refused[k] = (refused[k] ?? 0) + 1;
  }
  return [
    '# Validation: the public accuracy ledger',
    '',
    '_Generated by `npm run validate` (tools/validate.mjs); do not edit by hand. Every run, its exact request and ' +
      'its figures: [validation.json](validation.json)._',
    '',
    `Data: \`${DATA_NAME}\`, ${runs.length} measured vLLM serving runs (` +
      `${[...new Set(runs.map((r) => r.subset.split(' | ')[1]))].sort().join(', ')}` +
      `${OTHER ? '' : '; provenance in `data/silicon/README.md`'}). ` +
      'Each run is priced with `stepcalc serve` under one protocol:',
    '',
    ...Object.entries(protocol).map(([k, v]) => `- ${k.replace(/_/g, ' ')}: ${v}`),
    '',
    `**Runs priced: ${all.priced} of ${all.runs} (${(100 * all.priced / all.runs).toFixed(1)}%).** ` +
      'The rest are `unsupported`, each with the core\'s error as its reason, or the tool\'s where a row says ' +
      'what no request can (disaggregated engines, pipeline stages, another backend, MoE and GEMM precisions ' +
      'that differ); none is priced as something else.',
    '',
    `**Over the priced runs: TTFT MAPE ${percent(all.ttft_mape)}, bias ${percent(all.ttft_bias)}; ` +
      `TPOT MAPE ${percent(all.tpot_mape)}, bias ${percent(all.tpot_bias)}.** The one serving constant (the API ` +
      `server's time per ` +
      `request) was scanned on the fit part, the ${fit.priced} priced ${FIT_PART} runs ` +
      `(TTFT MAPE ${percent(fit.ttft_mape)}, ` +
      `TPOT ${percent(fit.tpot_mape)}), and left at 0 ms; the other ${held.priced} are held out ` +
      `(TTFT MAPE ${percent(held.ttft_mape)}, bias ${percent(held.ttft_bias)}; ` +
      `TPOT MAPE ${percent(held.tpot_mape)}, bias ${percent(held.tpot_bias)}).`,
    '',
    'Why runs are unsupported:',
    '',
    '| reason | runs |',
    '| --- | ---: |',
    ...Object.entries(refused).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k, n]) => `| ${k} | ${n} |`),
    '',
    '## Per subset (model x GPU x precision x layout)',
    '',
    '| model | GPU | precision | layout | n | priced | TTFT MAPE | TTFT bias | TPOT MAPE | TPOT bias |',
    '| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...subs.map((s) => `| ${s.model} | ${s.gpu} | ${s.precision} | ${s.layout} | ${s.runs} | ${s.priced} | ` +
      `${pc(s.ttft_mape)} | ${pc(s.ttft_bias)} | ${pc(s.tpot_mape)} | ${pc(s.tpot_bias)} |`),
    '',
    'MAPE and bias in percent of the measured mean; `-`: no run of the subset could be priced.',
    '',
    ...targetSection(aims),
    '## By load (clients x prompt length)',
    '',
    `Every priced run by its clients and its prompt (isl tokens, up to ${SHORT_PROMPT_WORDS} or longer), over ` +
      'all subsets: where the estimates err with load rather than with the model or GPU. `by_load` in ' +
      'validation.json.',
    '',
    '| clients | prompt tokens | runs | TTFT MAPE | TTFT bias | TPOT MAPE | TPOT bias |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...loads.map((/** @type {any} */ b) => `| ${b.clients} | ${b.prompt} | ${b.priced} | ` +
      `${pc(b.ttft_mape)} | ${pc(b.ttft_bias)} | ${pc(b.tpot_mape)} | ${pc(b.tpot_bias)} |`),
    '',
    '## The 10 worst runs',
    '',
    'By the larger of the two absolute errors; the cause is what the run\'s own result shows.',
    '',
    '| run | TTFT measured / predicted ms | error | TPOT measured / predicted ms | error | cause |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    ...worst.map((r) => `| ${r.id} | ${r.silicon_ttft_ms.toFixed(1)} / ${num(r.ttft_ms)} | ${pct(ttftError(r))} | ` +
      `${r.silicon_tpot_ms.toFixed(2)} / ${(/** @type {number} */ (r.tpot_ms)).toFixed(2)} | ${pct(tpotError(r))} | ` +
      `${causeOf(r)} |`),
    '',
    ...contradictionSection(runs, subs),
    ...repeatSection(runs),
    ...dataParallel(runs),
    '## Why this protocol: the alternatives',
    '',
    ...evidence(alternatives()),
    '',
    '## Predicted against measured',
    '',
    `![Predicted against measured mean TTFT and TPOT, log-log, the ${priced.length} priced runs]` +
      '(validation-predicted-vs-measured.svg)',
    '',
    '## Step level: the public calibration steps',
    '',
    ...stepFigures(),
    '',
    '## The regression check',
    '',
    `\`npm test\` (tools/validate-check.mjs) re-prices ${spread.length} of the priced runs, taken round-robin over ` +
      'the subsets, the cheapest of each first, and fails if any predicted mean differs from validation.json, or if ' +
      'the overall TTFT or TPOT MAPE in validation.json is more than 1 point above docs/validation-baseline.json. ' +
      'Regenerate with `npm run validate` whenever an estimate changes; `node tools/validate.mjs --baseline` moves ' +
      'the baseline (say why in the commit).',
    '',
  ].join('\n');
}

/** One run per line, so a re-pricing shows as a diff of the runs it changed. */
function ledgerText(/** @type {Record<string, unknown>} */ ledger) {
  const { runs, subsets: subs, ...head } = ledger;
  const lines = Object.entries(head).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  const list = (/** @type {string} */ name, /** @type {unknown} */ items) =>
    `  "${name}": [\n${(/** @type {object[]} */ (items)).map((x) => `    ${JSON.stringify(x)}`).join(',\n')}\n  ]`;
  lines.push(list('subsets', subs), list('runs', runs));
  return `{\n${lines.join(',\n')}\n}\n`;
}

/**
 * Config models are written once under `models`; a run's request names its config as
 * {"$model": file} (tools/validate-check.mjs puts it back before re-pricing).
 * @param {Run[]} runs
 */
function compactModels(runs) {
  /** @type {Record<string, unknown>} */
  const models = {};
  const out = runs.map((r) => {
    const { cause_facts: _facts, model_file: _file, ...rest } = r;
    const req = /** @type {any} */ (r.request);
    if (!req || typeof req.model !== 'object' || !r.model_file) return rest;
    models[r.model_file] = req.model;
    return { ...rest, request: { ...req, model: { $model: r.model_file } } };
  });
  return { models, runs: out };
}

/** @type {import('./validate-ledger.mjs').Row[]} */
let rows = [];
try {
  rows = readRows(OTHER);
} catch (e) {
  console.error(`validate: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
if (!rows.length) {
  console.error(`validate: ${DATA_NAME} has no runs (a header line only)`);
  process.exit(2);
}
/** The protocol as written, and which of a CSV's own protocol columns its rows fill (none in the public CSV). */
const protocol = (() => {
  const filled = PROTOCOL_COLUMNS.map((c) => /** @type {[string, number]} */ (
    [c, rows.filter((r) => (r[c] ?? '').trim() !== '').length])).filter(([, n]) => n > 0);
  return filled.length === 0 ? PROTOCOL : { ...PROTOCOL, own_columns: 'the CSV\'s own ' +
    filled.map(([c, n]) => `${c} (${n} ${n === 1 ? 'row' : 'rows'})`).join(', ') +
    ' override the choices above for the rows that fill them (docs/SERVING.md, "How accurate")' };
})();
const started = Date.now();
// Progress rewrites one line on a terminal; a log (CI, a redirect) gets no carriage-return runs.
const tty = process.stderr.isTTY === true;
const runs = priceRows(rows, (n) => { if (tty) process.stderr.write(`\rvalidate: ${n} requests priced`); },
  { configs: CONFIG_DIRS });
if (tty) process.stderr.write('\n');
for (const { run: r, other } of contradictions(runs)) contradicted.set(r.id, other);
{
  const capped = fewerInFlight(runs);
  const repriced = pricedAtEngineCap(capped.map((c) => c.run));
  capped.forEach(({ run: r, measured, simulated }, i) => fewer.set(r.id, { measured, simulated, capped: repriced[i] }));
}
const subs = subsets(runs);
const loads = byLoad(runs, rows);
const spread = spreadOf(runs);
const round1 = (/** @type {number} */ x) => Math.round(x * 10) / 10;
const withCause = runs.map((r) => {
  if (r.status !== 'priced') return r;
  const other = contradicted.get(r.id), inFlight = fewer.get(r.id);
  const inFlightField = inFlight
    ? { in_flight: { measured: round1(inFlight.measured), simulated: round1(inFlight.simulated),
      [`at_most_${ENGINE_DEFAULT_MAX_NUM_SEQS}_running`]: { ttft_ms: round1(inFlight.capped.ttft_ms),
        tpot_ms: Math.round(inFlight.capped.tpot_ms * 100) / 100 } } } : {};
  return { ...r, cause: causeOf(r), ...(other ? { contradicts: other.id } : {}), ...inFlightField };
});
const { models, runs: compact } = compactModels(withCause);
const aims = targets(runs, subs);
const ledger = {
  generated_by: 'npm run validate (tools/validate.mjs)',
  data: DATA_NAME,
  ...(CONFIG_DIRS.length ? { model_configs: CONFIG_DIRS } : {}),
  protocol,
  protocol_alternatives: alternatives(),
  overall: overall(runs),
  targets: aims,
  spread: spread.map((r) => r.id),
  models,
  subsets: subs,
  by_load: loads,
  repeats: repeats(runs),
  runs: compact,
};
if (OUT) mkdirSync(OUT, { recursive: true });
writeFileSync(output(LEDGER), ledgerText(ledger));
writeFileSync(output('docs/VALIDATION.md'), markdown(runs, subs, spread, loads, aims));
writeFileSync(output(SVG), svg(runs.filter((r) => r.status === 'priced')));
const all = overall(runs);
if (!OTHER && (process.argv.includes('--baseline') || !existsSync(join(ROOT, BASELINE))))
  writeFileSync(join(ROOT, BASELINE), `${JSON.stringify({ ttft_mape: all.ttft_mape, tpot_mape: all.tpot_mape,
    priced: all.priced }, null, 2)}\n`);
console.log(`validate: ${all.priced} of ${all.runs} runs priced; ` +
  `TTFT MAPE ${percent(all.ttft_mape)} (bias ${percent(all.ttft_bias)}), ` +
  `TPOT MAPE ${percent(all.tpot_mape)} (bias ${percent(all.tpot_bias)}); ` +
  `${((Date.now() - started) / 1000).toFixed(0)} s. ` +
  `Wrote ${[LEDGER, 'docs/VALIDATION.md', SVG].map((f) => (OUT ? output(f) : f)).join(', ')}.`);
