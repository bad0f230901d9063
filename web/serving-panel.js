// SPDX-License-Identifier: Apache-2.0
// "Serving: does it fit, and how fast" (docs/SERVING.md): the workload inputs (the engine
// and workload details folded under them), the memory bar of the shown step's model, GPU and
// TP (weights, reserves and KV cache against the GPU's memory, "does not fit" in words),
// TTFT / TPOT / throughput / cost cards, and a latency curve over concurrency or over request
// rate, with the user's TTFT and TPOT targets drawn (web/serving-charts.js).
// The simulation of the workload is the serving runner's (web/serving-runner.js, in a Web
// Worker), shared with the summary strip; the curve's starts when the panel is first on
// screen; progress and Cancel here. Loaded (web/serving.js) after the first view; in an
// embed with `view=serving` it is the whole page.
import { h, svg, int, fixed, parseTyped, fill, docLink, withDocLinks } from './dom.js';
import { exportButtons } from './export-buttons.js';
import { aboutExport } from './export-about.js';
import { biasWords, fieldErrorWords, leftOutWords, ledgerErrorWords } from './words.js';
import { curveChart, misses, ms, rate, rateChart, ratePoint } from './serving-charts.js';
import { curveKind } from './serving-runner.js';
import { engineMemory } from './serving-state.js';

export { ms, curveChart };
const GIB = 2 ** 30;
const gib = (bytes) => `${fixed(bytes / GIB, 1)} GiB`;
/** The panel's inputs: [key, label, JSON path (or the page's own, for what the core never sees), hint]. */
const FIELDS = [
  ['input', 'Input tokens', 'workload.input_tokens'],
  ['output', 'Output tokens', 'workload.output_tokens'],
  ['load', 'Concurrency', 'workload.concurrency'],
  ['requests', 'Requests', 'workload.num_requests', ''],
  ['usd', '$ per GPU-hour', 'gpu_hour_usd', 'blank: no cost'],
  ['ttft', 'TTFT target (ms)', 'target.ttft', 'blank: none; a line on the curve'],
  ['tpot', 'TPOT target (ms)', 'target.tpot', 'blank: none; a line on the curve'],
];
/** The engine and workload details (folded): the hint under each says what blank means. */
const DETAILS = [
  ['seqs', 'Max running requests', 'engine.max_num_seqs'],
  ['budget', 'Token budget per step', 'engine.max_num_batched_tokens'],
  ['util', 'GPU memory utilization', 'engine.gpu_memory_utilization'],
  ['hit', 'Prefix-cache hit ratio', 'workload.prefix_cache_hit_ratio'],
  ['spreadPct', 'Spread (%)', 'spread'],
];
/** Fields whose blank is null (the core's default, or no target) rather than 0. */
const BLANK_NULL = new Set(['ttft', 'tpot', 'seqs', 'budget', 'util', 'hit', 'spreadPct']);
const SPREADS = [['fixed', 'Fixed lengths'], ['uniform', 'Uniform ±%'], ['normal', 'Normal, σ %'],
  ['exponential', 'Exponential']];

const LATENCIES = ['ttft', 'tpot', 'itl', 'e2e'];
const STATS = ['mean', 'p50', 'p90', 'p99'];

/** The user's targets ({ttft, tpot} in ms) that are numbers above 0; null for none (or one in error). */
export const targetsOf = (w) => ({ ttft: typeof w.ttft === 'number' && w.ttft > 0 ? w.ttft : null,
  tpot: typeof w.tpot === 'number' && w.tpot > 0 ? w.tpot : null });

/**
 * The serving results and curve for CSV: one line per simulated workload (the curve's
 * points, then this one), each latency's mean, p50, p90 and p99 (blank when nothing was
 * measured: TPOT when every request generates one token), whether it was overloaded, and
 * the targets it misses (`targets`: {ttft, tpot} in ms, null: none).
 */
export function servingCsv(points, main, targets = { ttft: null, tpot: null }) {
  const line = (what, c, r) => [what, c ?? '', r.workload.request_rate ?? '', r.workload.num_requests,
    ...LATENCIES.flatMap((k) => STATS.map((s) => r[`${k}_ms`]?.[s] ?? '')), r.throughput.output_tokens_per_s,
    r.throughput.requests_per_s, r.cost?.usd_per_million_output_tokens ?? '',
    r.steady_state ? String(r.steady_state.overloaded) : '',
    misses({ ttft: r.ttft_ms, tpot: r.tpot_ms }, targets).join('; ')];
  const rows = points.filter((p) => p.result && !p.own)
    .sort((a, b) => (a.concurrency ?? a.rate) - (b.concurrency ?? b.rate))
    .map((p) => line('curve', p.concurrency, p.result));
  if (main) rows.push(line('this workload', main.workload.concurrency, main));
  const head = ['run', 'concurrency', 'request_rate_per_s', 'requests',
    ...LATENCIES.flatMap((k) => STATS.map((s) => `${k}_${s}_ms`)), 'output_tokens_per_s', 'requests_per_s',
    'usd_per_million_output_tokens', 'overloaded', 'targets_missed'];
  return { head, rows };
}

/**
 * A workload in words, for an export's context (no commas, so a CSV's `#` line needs no
 * quotes): "1000 input + 200 output tokens per request; 16 concurrent clients; 320 requests",
 * then the details set ("; at most 64 running requests; lengths uniform ±20%").
 */
export function workloadWords(w) {
  const details = [
    w.seqs != null && `at most ${w.seqs} running requests`,
    w.budget != null && `token budget ${w.budget} per step`,
    w.util != null && `GPU memory utilization ${w.util}`,
    w.hit != null && `prefix-cache hit ratio ${w.hit}`,
    w.spread && w.spread !== 'fixed' && `lengths ${w.spread}${w.spread === 'exponential' ? ''
      : ` ${w.spread === 'uniform' ? '±' : 'σ '}${w.spreadPct}%`}`,
  ].filter(Boolean);
  return `${w.input} input + ${w.output} output tokens per request; ` +
    (w.load === 'rate' ? `${w.rate} requests/s` : `${w.concurrency} concurrent clients`) +
    `; ${w.requests ? `${w.requests} requests` : 'default request count'}` +
    (w.usd ? `; $${w.usd} per GPU-hour` : '') + details.map((d) => `; ${d}`).join('');
}

/** The targets in words for an export's context ("TTFT 500 ms; TPOT 50 ms"), or null with none. */
export function targetWords(w) {
  const t = targetsOf(w);
  const words = [t.ttft !== null && `TTFT ${t.ttft} ms`, t.tpot !== null && `TPOT ${t.tpot} ms`].filter(Boolean);
  return words.length ? `${words.join('; ')} (mean and p90 held against each)` : null;
}

/** The memory bar's segments of a priced step's `memory` (bytes per GPU). */
export function memorySegments(m) {
  return [
    { key: 'weights', label: 'Weights', bytes: m.weights_bytes },
    { key: 'activations', label: 'Activations (profile run)', bytes: m.activation_bytes },
    { key: 'comm', label: 'NCCL buffers', bytes: m.non_torch_bytes },
    { key: 'kv', label: 'KV cache', bytes: Math.max(0, m.kv_cache_bytes) },
    { key: 'reserve', label: `Kept free (1 − ${fixed(m.gpu_memory_utilization, 2)})`, bytes: m.headroom_bytes },
  ];
}

function memoryBar(result) {
  const m = result.memory;
  if (!m) return h('p', { class: 'muted', text: 'No memory plan: the model\'s full shape is not known.' });
  const segments = memorySegments(m);
  const total = Math.max(m.gpu_memory_bytes, segments.reduce((a, s) => a + s.bytes, 0));
  const width = 100;
  let x = 0;
  const parts = segments.map((s) => `${s.label} ${gib(s.bytes)}`).join(', ');
  const bar = svg('svg', { class: 'memory-bar', viewBox: `0 0 ${width} 8`, preserveAspectRatio: 'none', role: 'img',
    'data-testid': 'memory-bar', 'aria-label': `Memory per GPU: ${parts}; capacity ${gib(m.gpu_memory_bytes)}` });
  for (const s of segments) {
    const w = (s.bytes / total) * width;
    bar.append(svg('rect', { x, y: 0, width: Math.max(0, w), height: 8, class: `mem-${s.key}`, 'data-segment': s.key },
      svg('title', {}, `${s.label}: ${gib(s.bytes)}`)));
    x += w;
  }
  const capacityX = (m.gpu_memory_bytes / total) * width;
  bar.append(svg('line', { x1: capacityX, x2: capacityX, y1: 0, y2: 8, class: 'mem-capacity' }));
  // The core's warning says "The model does not fit at TP 1 on H100: ..." itself: said once.
  const notFit = result.warnings?.find((w) => w.code === 'model_does_not_fit');
  const words = m.fits
    ? `Fits: the KV cache holds ${int(m.kv_cache_tokens)} tokens (${int(m.kv_cache_blocks)} blocks of ` +
      `${m.block_size}) per GPU after the weights and reserves, of ${gib(m.gpu_memory_bytes)} on each ${m.gpu}.`
    : notFit?.message ?? `Does not fit at TP ${m.tp} on ${m.gpu}: weights ${gib(m.weights_bytes)} and reserves ` +
      `leave no KV cache in ${gib(m.budget_bytes)}.`;
  return h('div', { class: 'memory' },
    bar,
    h('ul', { class: 'legend' },
      ...segments.map((s) => h('li', {}, h('span', { class: `swatch mem-${s.key}` }), `${s.label} ${gib(s.bytes)}`))),
    h('p', { class: m.fits ? 'fits' : 'field-error', 'data-testid': 'memory-fits', role: m.fits ? null : 'alert',
      text: words }));
}

function card(label, value, detail, testid, raw) {
  return h('div', { class: 'serve-card', 'data-testid': testid, 'data-value': raw },
    h('span', { class: 'label', text: label }), h('strong', { text: value }), h('small', { text: detail }));
}

/**
 * The accuracy ledger's error beside a figure (docs/VALIDATION.md): the measured runs most
 * like this configuration, the mean absolute error there and which way it leant, or that
 * none was measured.
 */
export function validationWords(v, which) {
  if (!v || v.subset === null) return 'no measured runs like this';
  const mape = which === 'ttft' ? v.ttft_mape : v.tpot_mape;
  return `±${fixed(mape, 0)}% on ${int(v.runs)} measured runs like this` +
    biasWords(which === 'ttft' ? v.ttft_bias : v.tpot_bias) + leftOutWords(v);
}

/**
 * The ledger's error for an export's context (no commas): "TTFT ±33% (estimated 13% high there)
 * and TPOT ±11% (estimated 11% low there) on 30 measured runs like this: <subset>
 * (docs/VALIDATION.md)", or that none was measured.
 */
export function accuracyWords(v) {
  const words = ledgerErrorWords(v);
  return words ? `${words}: ${v.subset} (docs/VALIDATION.md)` : 'no measured runs like this (docs/VALIDATION.md)';
}

/**
 * An open loop the engine cannot keep up with (steady_state.overloaded): its latencies grow
 * with the run's length, so the cards say so first, with the rate the engine sustains.
 */
function overloadNote(r) {
  const st = r.steady_state;
  if (!st?.overloaded) return null;
  return h('p', { class: 'field-error', role: 'alert', 'data-testid': 'serve-overload',
    text: `Overloaded: ${fixed(st.offered_request_rate, 2)} requests/s sent, about ` +
      `${fixed(st.sustainable_request_rate, 2)} sustained; the queue grows by ${fixed(st.queue_growth_per_s, 2)} ` +
      'per second, so TTFT and E2E below grow with the length of the run. Lower the rate or add GPUs.' });
}

function cards(r) {
  const cost = r.cost?.usd_per_million_output_tokens;
  const v = r.validation;
  const overloaded = r.steady_state?.overloaded === true;
  return h('div', { class: 'serve-cards' },
    card('TTFT (time to first token)', ms(r.ttft_ms.mean),
      (overloaded ? 'overloaded: grows with the run; ' : '') +
      `mean; p50 ${ms(r.ttft_ms.p50)}, p90 ${ms(r.ttft_ms.p90)}, p99 ${ms(r.ttft_ms.p99)}; ` +
        validationWords(v, 'ttft'),
      'ttft', r.ttft_ms.mean),
    card('TPOT (time per output token)', ms(r.tpot_ms.mean), r.tpot_ms.count === 0
      ? 'none: every request generates one token'
      : `mean; p90 ${ms(r.tpot_ms.p90)}, p99 ${ms(r.tpot_ms.p99)}; ${validationWords(v, 'tpot')}`, 'tpot',
      r.tpot_ms.mean ?? ''),
    card('Throughput', `${int(r.throughput.output_tokens_per_s)} tok/s`,
      `output; ${int(r.throughput.output_tokens_per_s_per_gpu)} per GPU, ` +
        `${fixed(r.throughput.requests_per_s, 2)} requests/s` +
        (overloaded ? ` of ${fixed(r.steady_state.offered_request_rate, 2)} sent` : ''),
      'throughput', r.throughput.output_tokens_per_s),
    // A price set gives a cost, also $0 per output token when every output token comes from
    // the prefill (one output token per request): the GPU time is the prompts'.
    card('Cost', cost !== undefined ? `$${fixed(cost, 2)} / M output tokens` : 'no price set',
      cost !== undefined ? `$${fixed(r.cost.usd_per_million_input_tokens, 2)} / M input tokens` +
        (r.tpot_ms.count === 0 ? '; the GPU time is all prefill' : '') : 'set $ per GPU-hour',
      'cost', cost ?? ''));
}

/**
 * What the cards and the curve will take, shown until the first figures arrive: the panel
 * keeps its height, so what is below it does not move when they come (a click aimed at
 * the Calibrate panel under it landed elsewhere).
 */
function placeholders() {
  // The words of the cards with the figures left out, so that they wrap as the cards will.
  const shapes = [['TTFT (time to first token)', 'mean; p50 …, p90 …, p99 …; ±…% on … measured runs like this'],
    ['TPOT (time per output token)', 'mean; p90 …, p99 …; ±…% on … measured runs like this'],
    ['Throughput', 'output; … per GPU, … requests/s'], ['Cost', '$… / M input tokens']];
  return h('div', { 'aria-hidden': 'true', 'data-testid': 'serve-pending' }, h('div', { class: 'serve-cards' },
    ...shapes.map(([label, detail]) => card(label, '…', detail))),
    h('p', { class: 'muted', text: '… requests, … engine steps simulated …' }));
}

/**
 * The GPUs a serve result ran on: "4 × H100", or with data-parallel ranks "2 ranks of 2 × H100
 * (one rank simulated, ...)": serve simulates one rank (docs/SERVING.md, "Layouts").
 */
function gpusWords(result, request) {
  const dp = Number(request?.dp ?? 1);
  return dp > 1 ? `${dp} ranks of ${result.tp} × ${result.gpu} (one rank simulated, the clients spread over them)`
    : `${result.tp} × ${result.gpu}`;
}

/** The room the curve of `kind` will take, until it is drawn. */
function curvePlaceholder(kind) {
  return [h('div', { class: `serve-curve-pending${kind === 'rate' ? ' rate' : ''}`, 'aria-hidden': 'true' }),
    h('details', { 'aria-hidden': 'true' }, h('summary', { text: 'The curve\'s values' }))];
}

const CURVE_TITLES = { concurrency: 'Latency and throughput over concurrency',
  rate: 'Latency over request rate' };

/**
 * Builds the panel into `root`; it shows the runner's simulation (web/serving-runner.js) of
 * the store's priced request with the workload typed here. `root.dataset.run` says where the
 * latest simulation is: 'running', 'done', 'cancelled' or 'error'.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} root
 * @param {{view?: string, runner: import('./serving-runner.js').ServingRunner}} options
 */
export function servingPanel({ store, calc }, root, { view, runner }) {
  if (view === 'serving') {
    document.body.classList.add('view-serving');
    root.classList.remove('full-only');
  }
  root.hidden = false;
  // The panel's own stylesheet (web/serving-panel.css, built beside this bundle).
  document.head.append(h('link', { rel: 'stylesheet', href: new URL('./serving-panel.css', import.meta.url).href }));
  const local = runner.workload;
  const inputs = {};
  // Short option texts (a longer one was cut off in the select); the load input is named
  // after the choice (a select inside its <label> gave it no accessible name) and its unit
  // is under it.
  const loadKind = h('select', { 'aria-label': 'Load', 'data-testid': 'serve-load-kind' },
    h('option', { value: 'concurrency', text: 'Concurrency' }), h('option', { value: 'rate', text: 'Request rate' }));
  const loadHint = h('small', { 'data-testid': 'serve-load-hint' });
  const form = h('div', { class: 'serve-inputs' });
  // What a blank request count means: the core's default, 10 x concurrency (at least 32) for
  // clients; at a request rate, passes of 64 to 4,096 until the figures settle.
  const requestsHint = h('small');
  const showLoadName = () => {
    const rate = local.load === 'rate';
    inputs.load.setAttribute('aria-label', rate ? 'Request rate (requests per second)' : 'Concurrency (clients)');
    loadHint.textContent = rate ? 'requests per second' : 'clients sending one request at a time';
  };
  const showRequestsHint = () => {
    requestsHint.textContent = local.load === 'rate' ? 'blank: until the figures settle (64 to 4,096)'
      : 'blank: 10 × concurrency, at least 32';
  };
  const input = (key, path) => {
    inputs[key] = h('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off', spellcheck: 'false',
      'data-testid': `serve-${key}`, 'data-path': path, id: `serve-${key}` });
    return inputs[key];
  };
  for (const [key, label, path, hint] of FIELDS) {
    form.append(h('label', { class: 'field' }, key === 'load' ? loadKind : h('span', { class: 'label', text: label }),
      input(key, path),
      key === 'requests' ? requestsHint : key === 'load' ? loadHint : hint && h('small', { text: hint })));
  }
  // The engine and workload details, folded: blank is the core's default, said in the hint
  // (the value the last simulation on this GPU used for it, once there is one).
  const spread = h('select', { 'aria-label': 'Length spread', 'data-testid': 'serve-spread' },
    SPREADS.map(([value, text]) => h('option', { value, text })));
  const hints = {};
  const detailsForm = h('div', { class: 'serve-inputs' });
  for (const [key, label, path] of DETAILS) {
    hints[key] = h('small', { 'data-testid': `serve-${key}-hint` });
    if (key === 'spreadPct') {
      detailsForm.append(h('label', { class: 'field' }, h('span', { class: 'label', text: 'Length spread' }), spread,
        h('small', { text: 'of input and output lengths' })));
    }
    detailsForm.append(h('label', { class: 'field' }, h('span', { class: 'label', text: label }), input(key, path),
      hints[key]));
  }
  const detailsSummary = h('summary', { text: 'Engine and workload details' });
  const details = h('details', { class: 'serve-details', 'data-testid': 'serve-details' }, detailsSummary,
    detailsForm);
  /**
   * What blank means for the shown model, GPU, TP and mode: the engine the core runs and its
   * prefix-cache hit (a one-request simulation echoes them; under a millisecond), by GPU
   * (vLLM's defaults depend on the GPU alone), null when it cannot be served.
   */
  const defaults = new Map();
  const defaultsOf = () => {
    const good = store.good;
    if (!good) return null;
    const { step, engine, ...rest } = good.request;
    const key = JSON.stringify(rest);
    if (!defaults.has(key)) {
      let found = null;
      try {
        const one = { input_tokens: 1, output_tokens: 1, concurrency: 1, num_requests: 1 };
        const r = calc.serve({ ...rest, workload: one });
        found = { seqs: r.engine.max_num_seqs, budget: r.engine.max_num_batched_tokens,
          util: r.engine.gpu_memory_utilization, hit: r.workload.prefix_cache_hit_ratio };
      } catch {
        // Not served (a model that does not fit, tables not loaded yet): the hint says it in words.
      }
      defaults.set(key, found);
    }
    return defaults.get(key);
  };
  const showHints = () => {
    const gpu = store.good?.request.gpu ?? '';
    const d = defaultsOf() ?? {};
    const onGpu = (k) => `blank: vLLM's default${d[k] !== undefined ? `, ${int(d[k])} on ${gpu}` : ' on the GPU'}`;
    const plain = (k, what) => `blank: ${d[k] ?? what}`;
    hints.seqs.textContent = `max_num_seqs; ${onGpu('seqs')}`;
    hints.budget.textContent = `max_num_batched_tokens; ${onGpu('budget')}`;
    hints.util.textContent = `share of the GPU's memory vLLM takes; ${plain('util', 'vLLM\'s default')}`;
    hints.hit.textContent = `share of each prompt already in the prefix cache, 0 to 1; ${plain('hit', 'none')}`;
    hints.spreadPct.textContent = {
      fixed: 'not used: every request has the lengths above',
      uniform: 'each length drawn from ±this share (vllm bench serve\'s --random-range-ratio)',
      normal: 'standard deviation as a share of each length',
      exponential: 'not used: lengths drawn with the means above' }[local.spread] ?? '';
    inputs.spreadPct.disabled = local.spread === 'fixed' || local.spread === 'exponential';
    const set = DETAILS.filter(([k]) => k !== 'spreadPct' && local[k] !== null).length +
      (local.spread !== 'fixed' ? 1 : 0);
    detailsSummary.textContent = `Engine and workload details${set ? ` (${set} set)` : ''}`;
  };

  const progress = h('progress',
    { max: 1, value: 0, 'data-testid': 'serve-progress', 'aria-label': 'Simulation progress' });
  const status = h('span', { class: 'status', role: 'status', 'data-testid': 'serve-status' });
  const cancel = h('button', { type: 'button', text: 'Cancel', 'data-testid': 'serve-cancel', disabled: true });
  const serveError = h('div');
  const targetError = h('div');
  const errors = h('div', { 'data-testid': 'serve-errors' }, serveError, targetError);
  const memory = h('div');
  const results = h('div', { 'data-testid': 'serve-results' });
  const curveTitle = h('h3', { text: CURVE_TITLES[curveKind(local)] });
  const curveAxis = h('select', { 'aria-label': 'Curve over', 'data-testid': 'serve-curve-kind' },
    h('option', { value: 'concurrency', text: 'Over concurrency' }),
    h('option', { value: 'rate', text: 'Over request rate' }));
  const curve = h('div');
  const curveWrap = h('div', { class: 'serve-curve-wrap' },
    curveTitle, h('label', { class: 'serve-curve-axis' }, curveAxis), curve);
  let points = [];
  let main = null;
  let shownMain = null; // the result whose cards are on screen
  let shownKind = curveKind(local); // the axis of the points shown
  let curvePending = !runner.run?.result; // no figures yet: placeholders keep their room
  if (curvePending) {
    results.append(placeholders());
    curve.append(...curvePlaceholder(shownKind));
  }
  const exports = exportButtons({ name: 'stepcalc-serving', label: 'the serving results',
    csv: () => servingCsv(points, main, targetsOf(local)),
    chart: () => curve.querySelector('svg.serve-curve'),
    about: () => aboutExport({ what: 'serving', good: store.good, version: calc.version(),
      title: `serving results and ${shownKind === 'rate' ? 'latency curve over request rate'
        : 'latency-throughput curve'}`,
      extra: [['workload', workloadWords({ ...(runner.run?.workload ?? local), ttft: local.ttft, tpot: local.tpot })],
        .../** @type {[string, string][]} */ (targetWords(local) ? [['targets', targetWords(local)]] : []),
        .../** @type {[string, string][]} */ (main ? [['accuracy', accuracyWords(main.validation)]] : [])] }) });
  const intro = h('p', { class: 'muted' },
    'The shown model, GPU, TP and mode serving a workload: vLLM\'s scheduler simulated step by step (',
    docLink('SERVING', 'how it is simulated'), ').');
  const actions = h('div', { class: 'actions' }, progress, cancel, status);
  // Embedded alone (view=serving, 480 x 440 in the README), the answer comes first: the
  // cards (or the error in their place), then the memory, then the inputs that made them.
  if (view === 'serving') root.append(errors, results, actions, memory, intro, form, details, curveWrap, exports);
  else root.append(intro, form, details, actions, errors, memory, results, curveWrap, exports);

  const show = () => {
    loadKind.value = local.load;
    spread.value = local.spread;
    curveAxis.value = curveKind(local);
    inputs.load.setAttribute('data-path', local.load === 'rate' ? 'workload.request_rate' : 'workload.concurrency');
    showRequestsHint();
    showLoadName();
    showHints();
    const blank = (v) => (v === null || v === undefined ? '' : v);
    const text = { input: local.input, output: local.output,
      load: local.load === 'rate' ? local.rate : local.concurrency,
      requests: local.requests || '', usd: local.usd || '', ttft: blank(local.ttft), tpot: blank(local.tpot),
      seqs: blank(local.seqs), budget: blank(local.budget), util: blank(local.util), hit: blank(local.hit),
      spreadPct: blank(local.spreadPct) };
    for (const [k, v] of Object.entries(text)) if (document.activeElement !== inputs[k]) inputs[k].value = String(v);
    // A link's details are shown: set ones unfold the fold.
    if (DETAILS.some(([k]) => k !== 'spreadPct' && local[k] !== null) || local.spread !== 'fixed') details.open = true;
  };
  show();

  // Cancel stops the runner's job; the cancelled request is not started again by the next
  // repricing of the step, only by an edit that changes it.
  cancel.addEventListener('click', () => runner.cancel());

  /** The label of the input `target` as the error should say it. */
  const labelOf = (target) => {
    if (!target) return '';
    if (target === inputs.load) return local.load === 'rate' ? 'Request rate' : 'Concurrency';
    return [...FIELDS, ...DETAILS].find(([k]) => inputs[k] === target)[1];
  };
  const showError = (error) => {
    for (const input of Object.values(inputs)) if (!input.dataset.path.startsWith('target.')) {
      input.removeAttribute('aria-invalid');
    }
    // The field whose path the error names, or one the path is inside (a length's distribution).
    const owner = (i) => error.path === i.dataset.path || String(error.path).startsWith(`${i.dataset.path}.`);
    const target = Object.values(inputs).find(owner);
    target?.setAttribute('aria-invalid', 'true');
    if (target && details.contains(target)) details.open = true;
    // A model that does not fit is said once, by the memory bar above (the core's words).
    fill(serveError, h('p', { class: 'field-error', role: 'alert', 'data-testid': 'serve-error' },
      withDocLinks(error.code === 'does_not_fit'
        ? 'Not simulated: the model does not fit (see the memory per GPU above).'
        : fieldErrorWords(error, labelOf(target)))));
  };

  /** The targets typed: numbers above 0 or blank; another value is named under the fields, and drawn as none. */
  const checkTargets = () => {
    const bad = ['ttft', 'tpot'].filter((k) => local[k] !== null && !(typeof local[k] === 'number' && local[k] > 0));
    for (const k of ['ttft', 'tpot']) {
      if (bad.includes(k)) inputs[k].setAttribute('aria-invalid', 'true');
      else inputs[k].removeAttribute('aria-invalid');
    }
    fill(targetError, ...bad.map((k) => h('p', { class: 'field-error', role: 'alert', 'data-testid': 'target-error',
      text: fieldErrorWords({ path: `target.${k}`, message: `target.${k} must be a number above 0.` },
        labelOf(inputs[k])) })));
  };

  const valuesTable = (head, rows) => h('details', {}, h('summary', { text: 'The curve\'s values' }),
    h('table', { class: 'values-table', 'data-testid': 'serve-curve-table' },
      h('thead', {}, h('tr', {}, ...head.map((t) => h('th', { text: t })))),
      h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((t) => h('td', { text: t })))))));

  const drawConcurrency = () => {
    const good = points.filter((p) => p.result && p.concurrency !== undefined)
      .map((p) => ({ c: p.concurrency, x: p.result.throughput.output_tokens_per_s, y: p.result.tpot_ms.mean }))
      .filter((p) => Number.isFinite(p.y)).sort((a, b) => a.c - b.c);
    if (!good.length) return false;
    const current = main && Number.isFinite(main.tpot_ms.mean)
      ? { x: main.throughput.output_tokens_per_s, y: main.tpot_ms.mean } : null;
    // The band: the accuracy ledger's TPOT error on the measured runs most like this (issue 22).
    const v = main?.validation;
    const band = v && v.subset !== null ? { mape: v.tpot_mape, bias: v.tpot_bias, runs: v.runs } : null;
    fill(curve, curveChart(good, current, Math.min(640, Math.max(300, root.clientWidth - 30)), 220, band,
      targetsOf(local).tpot),
    valuesTable(['Concurrency', 'Output tok/s', 'Mean TTFT', 'Mean TPOT'],
      points.filter((p) => p.result && p.concurrency !== undefined).sort((a, b) => a.concurrency - b.concurrency)
        .map((p) => [int(p.concurrency), int(p.result.throughput.output_tokens_per_s), ms(p.result.ttft_ms.mean),
          ms(p.result.tpot_ms.mean)])));
    return true;
  };

  const drawRate = () => {
    const good = points.filter((p) => p.result && p.rate !== undefined).map(ratePoint).sort((a, b) => a.rate - b.rate);
    if (!good.length) return false;
    const targets = targetsOf(local);
    const anyTarget = targets.ttft !== null || targets.tpot !== null;
    const v = main?.validation;
    const banded = v && v.subset !== null;
    fill(curve, rateChart(good, targets, Math.min(640, Math.max(300, root.clientWidth - 30)), v ?? null),
      h('p', { class: 'muted', 'data-testid': 'serve-curve-legend',
        text: 'Solid: mean; dashed: p90; ringed: this workload; ×: overloaded (the queue grows, so latency grows ' +
          'with the run); ' + (banded ? 'shaded: where the measured mean lies at the error on measured runs like ' +
            'this; ' : '') + (anyTarget ? 'red: above its target line.' : 'set a TTFT or TPOT target to draw it.') }),
      valuesTable(['Request rate', 'Served req/s', 'Output tok/s', 'Mean TTFT', 'p90 TTFT', 'Mean TPOT', 'p90 TPOT',
        'Overloaded', 'Targets'], good.map((p) => {
        const missed = misses(p, targets);
        return [`${rate(p.rate)}${p.own ? ' (this)' : ''}`, fixed(p.requests, 2), int(p.tokens), ms(p.ttft.mean),
          ms(p.ttft.p90), ms(p.tpot.mean), ms(p.tpot.p90), p.overloaded ? 'yes' : 'no',
          !anyTarget ? '—' : missed.length ? `missed: ${missed.join(', ')}` : 'met'];
      })));
    return true;
  };

  const drawCurve = () => {
    curveTitle.textContent = CURVE_TITLES[shownKind];
    if (shownKind === 'rate' ? drawRate() : drawConcurrency()) {
      curvePending = false;
      return;
    }
    // Until the first curve (it runs once the panel is on screen) its room is kept.
    const run = runner.run;
    const coming = run && run.status !== 'error' && run.curve !== 'done' && run.curve !== 'cancelled';
    if (!(curvePending && coming)) fill(curve, coming ? curvePlaceholder(shownKind) : null);
  };

  const showResult = () => {
    shownMain = main;
    fill(serveError);
    for (const input of Object.values(inputs)) if (!input.dataset.path.startsWith('target.')) {
      input.removeAttribute('aria-invalid');
    }
    const preemptions = main.scheduler?.preemptions
      ? `${int(main.scheduler.preemptions)} preemptions` : 'no preemption';
    fill(results, overloadNote(main), cards(main), h('p', { class: 'muted', 'data-testid': 'serve-summary',
      text: `${int(main.workload.num_requests)} requests, ${int(main.steps)} engine steps simulated in ` +
        `${main.mode} on ${gpusWords(main, runner.run?.request)}; ${preemptions}.` }),
    ...main.warnings.filter((w) => w.code !== 'model_does_not_fit' && w.code !== 'serving_overload')
      .map((w) => h('p', { class: 'field-warning' }, withDocLinks(w.message))));
  };

  /** Progress, status and Cancel from the run's state. */
  const showState = (run) => {
    const state = run.status === 'error' ? 'error' : run.status === 'cancelled' || run.curve === 'cancelled'
      ? 'cancelled' : runner.busy ? 'running' : 'done';
    root.dataset.run = state;
    cancel.disabled = !runner.busy;
    progress.value = state === 'done' ? 1 : run.share;
    const what = { curve: ' the curve', compare: ' A for the comparison' }[runner.job] ?? '';
    status.textContent = { error: '', cancelled: 'Cancelled.', done: 'Done.',
      running: `Simulating${what}… ${Math.round(run.share * 100)}%` }[state];
  };

  /** Everything the run holds (a panel built after the run started catches up here too). */
  const showRun = (event, run) => {
    if (event === 'workload') { // a link, an import or a plan set it
      Object.assign(local, runner.workload);
      show();
      checkTargets();
      return;
    }
    if (!run) return;
    if (event !== 'progress') {
      points = run.points;
      main = run.result;
      if (run.status === 'error') {
        showError(run.error);
        results.replaceChildren();
        shownMain = null;
        curve.replaceChildren();
      } else if (main && event !== 'point' && event !== 'curve' && event !== 'compare' && main !== shownMain) {
        showResult(); // once per result: a run's later events ('done') leave its cards as they are
      }
      // A new request keeps the last figures on screen until its own arrive.
      if (main || event !== 'start') {
        shownKind = run.curveKind;
        if (run.status !== 'error') drawCurve();
      }
      showHints();
    }
    showState(run);
  };
  runner.subscribe(showRun);
  if (runner.run) showRun('result', runner.run);

  const edited = () => {
    local.load = loadKind.value;
    local.spread = spread.value;
    local.curve = curveAxis.value === (local.load === 'rate' ? 'rate' : 'concurrency') ? '' : curveAxis.value;
    const read = (k) => {
      const typed = inputs[k].value.trim();
      if (typed === '') return BLANK_NULL.has(k) ? null : k === 'requests' || k === 'usd' ? 0 : typed;
      return parseTyped(typed);
    };
    local.input = read('input');
    local.output = read('output');
    local[local.load === 'rate' ? 'rate' : 'concurrency'] = read('load');
    for (const k of ['requests', 'usd', 'ttft', 'tpot', 'seqs', 'budget', 'util', 'hit', 'spreadPct']) {
      local[k] = read(k);
    }
    inputs.load.setAttribute('data-path', local.load === 'rate' ? 'workload.request_rate' : 'workload.concurrency');
    showRequestsHint();
    showLoadName();
    showHints();
    checkTargets();
    drawCurve(); // the targets' lines at once; a new curve comes with the simulation
    drawMemory();
    runner.setWorkload(local); // the link keeps the last workload whose fields are all numbers
  };
  for (const input of Object.values(inputs)) input.addEventListener('input', edited);
  spread.addEventListener('change', edited);
  curveAxis.addEventListener('change', edited);
  loadKind.addEventListener('change', () => {
    inputs.load.value = String(loadKind.value === 'rate' ? local.rate : local.concurrency);
    // The curve follows the load unless the user picked its axis.
    if (!local.curve) curveAxis.value = loadKind.value === 'rate' ? 'rate' : 'concurrency';
    edited();
  });

  /**
   * The memory bar of the shown model, GPU and TP; with engine settings typed, of the engine
   * they make (the budget and utilization change the KV cache), priced with an empty step.
   */
  const drawMemory = () => {
    if (!store.good) return;
    fill(memory, h('h3', { text: 'Memory per GPU' }), memoryBar(engineMemory(calc, store.good, local)));
  };
  store.subscribe((change) => {
    if (change !== 'priced') return;
    drawMemory();
    showHints();
  });
  drawMemory();
  checkTargets();
  // The curve (nine more simulations) runs once the panel is on screen; the runner's own
  // request runs anyway, for the summary strip.
  if (view === 'serving') runner.wantCurve();
  else {
    const seen = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      seen.disconnect();
      runner.wantCurve();
    });
    seen.observe(root);
  }
  return { cancel: () => cancel.click() };
}
