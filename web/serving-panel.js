// SPDX-License-Identifier: Apache-2.0
// "Serving: does it fit, and how fast" (docs/SERVING.md): the workload inputs, the
// memory bar of the shown step's model, GPU and TP (weights, reserves and KV cache
// against the GPU's memory, "does not fit" in words), TTFT / TPOT / throughput / cost
// cards, and a latency-throughput curve over concurrency with the current point marked.
// The simulation of the workload is the serving runner's (web/serving-runner.js, in a Web
// Worker), shared with the summary strip; the curve's starts when the panel is first on
// screen; progress and Cancel here. Loaded (web/serving.js) after the first view; in an
// embed with `view=serving` it is the whole page.
import { h, svg, int, fixed, parseTyped, fill } from './dom.js';
import { niceTicks } from './charts.js';
import { exportButtons } from './export-buttons.js';
import { aboutExport } from './export-about.js';
import { fieldErrorWords } from './words.js';

const GIB = 2 ** 30;
const gib = (bytes) => `${fixed(bytes / GIB, 1)} GiB`;
/** A latency; null (nothing measured, e.g. TPOT when every request generates one token) is a dash. */
export const ms = (v) => (v === null ? '—' : v >= 100 ? `${int(v)} ms` : `${fixed(v, v >= 10 ? 1 : 2)} ms`);
const FIELDS = [
  ['input', 'Input tokens', 'workload.input_tokens'],
  ['output', 'Output tokens', 'workload.output_tokens'],
  ['load', 'Concurrency', 'workload.concurrency'],
  ['requests', 'Requests', 'workload.num_requests', ''],
  ['usd', '$ per GPU-hour', 'gpu_hour_usd', 'blank: no cost'],
];

const LATENCIES = ['ttft', 'tpot', 'itl', 'e2e'];
const STATS = ['mean', 'p50', 'p90', 'p99'];

/**
 * The serving results and curve for CSV: one line per simulated workload (the curve's
 * points, then this one), each latency's mean, p50, p90 and p99 (blank when nothing was
 * measured: TPOT when every request generates one token).
 */
export function servingCsv(points, main) {
  const line = (what, c, r) => [what, c ?? '', r.workload.request_rate ?? '', r.workload.num_requests,
    ...LATENCIES.flatMap((k) => STATS.map((s) => r[`${k}_ms`]?.[s] ?? '')), r.throughput.output_tokens_per_s,
    r.throughput.requests_per_s, r.cost?.usd_per_million_output_tokens ?? ''];
  const rows = points.filter((p) => p.result).sort((a, b) => a.concurrency - b.concurrency)
    .map((p) => line('curve', p.concurrency, p.result));
  if (main) rows.push(line('this workload', main.workload.concurrency, main));
  const head = ['run', 'concurrency', 'request_rate_per_s', 'requests',
    ...LATENCIES.flatMap((k) => STATS.map((s) => `${k}_${s}_ms`)), 'output_tokens_per_s', 'requests_per_s',
    'usd_per_million_output_tokens'];
  return { head, rows };
}

/**
 * A workload in words, for an export's context (no commas, so a CSV's `#` line needs no
 * quotes): "1000 input + 200 output tokens per request; 16 concurrent clients; 320 requests".
 */
export function workloadWords(w) {
  return `${w.input} input + ${w.output} output tokens per request; ` +
    (w.load === 'rate' ? `${w.rate} requests/s` : `${w.concurrency} concurrent clients`) +
    `; ${w.requests ? `${w.requests} requests` : 'default request count'}` +
    (w.usd ? `; $${w.usd} per GPU-hour` : '');
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
 * like this configuration and the mean absolute error there, or that none was measured.
 */
export function validationWords(v, which) {
  if (!v || v.subset === null) return 'no measured runs like this';
  const mape = which === 'ttft' ? v.ttft_mape : v.tpot_mape;
  return `±${fixed(mape, 0)}% on ${int(v.runs)} measured runs like this`;
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

function curvePlaceholder() {
  return [h('h3', { text: 'Latency and throughput over concurrency' }),
    h('div', { class: 'serve-curve-pending', 'aria-hidden': 'true' }),
    h('details', { 'aria-hidden': 'true' }, h('summary', { text: 'The curve\'s values' }))];
}

/** The latency-throughput curve: output tokens/s against mean TPOT, one point per concurrency. */
export function curveChart(points, current, width = 520, height = 220, band = null) {
  const pad = { l: 56, r: 24, t: 10, b: 42 }; // r: room for half the last tick label ("3,000")
  const all = current ? [...points, current] : points;
  const spread = band ? band.mape / 100 : 0;
  const xTicks = niceTicks(Math.max(...all.map((p) => p.x)), 4);
  const yTicks = niceTicks(Math.max(...all.map((p) => p.y)) * (1 + spread), 4);
  const X = (x) => pad.l + (x / (xTicks[xTicks.length - 1] || 1)) * (width - pad.l - pad.r);
  const Y = (y) => pad.t + (1 - y / (yTicks[yTicks.length - 1] || 1)) * (height - pad.t - pad.b);
  const chart = svg('svg', { class: 'line serve-curve', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
    'data-testid': 'serve-curve',
    'aria-label': `Mean TPOT against output throughput for concurrency ${points.map((p) => p.c).join(', ')}` });
  for (const t of yTicks) {
    chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: Y(t), y2: Y(t), class: 'grid' }),
      svg('text', { x: pad.l - 5, y: Y(t) + 4, 'text-anchor': 'end', class: 'tick y-tick' },
        fixed(t, t < 10 && t % 1 ? 1 : 0)));
  }
  for (const t of xTicks) {
    chart.append(svg('text', { x: X(t), y: height - pad.b + 15, 'text-anchor': 'middle', class: 'tick x-tick' },
      int(t)));
  }
  chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: height - pad.b, y2: height - pad.b, class: 'axis' }),
    svg('text', { x: pad.l + (width - pad.l - pad.r) / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis-title' },
      'Output tokens/s'),
    svg('text', { x: 12, y: pad.t + (height - pad.t - pad.b) / 2, 'text-anchor': 'middle', class: 'axis-title',
      transform: `rotate(-90 12 ${pad.t + (height - pad.t - pad.b) / 2})` }, 'Mean TPOT (ms)'),
    ...(band ? [svg('path', { class: 'band', 'data-testid': 'serve-band',
      d: [...points.map((p, i) => `${i ? 'L' : 'M'}${X(p.x).toFixed(1)},${Y(p.y * (1 + spread)).toFixed(1)}`),
        ...[...points].reverse().map((p) => `L${X(p.x).toFixed(1)},${Y(Math.max(0, p.y * (1 - spread))).toFixed(1)}`),
        'Z'].join('') },
    svg('title', {}, `±${fixed(band.mape, 0)}%: the TPOT error on ${int(band.runs)} measured runs like this`))] : []),
    svg('path', { class: 'curve',
      d: points.map((p, i) => `${i ? 'L' : 'M'}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join('') }));
  for (const p of points) {
    chart.append(svg('circle', { cx: X(p.x), cy: Y(p.y), r: 3, class: 'point', 'data-concurrency': p.c },
      svg('title', {}, `concurrency ${p.c}: ${int(p.x)} tok/s, TPOT ${ms(p.y)}`)));
  }
  if (current) {
    chart.append(svg('circle',
      { cx: X(current.x), cy: Y(current.y), r: 6, class: 'now', 'data-testid': 'curve-current' },
      svg('title', {}, `this workload: ${int(current.x)} tok/s, TPOT ${ms(current.y)}`)));
  }
  return chart;
}

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
  for (const [key, label, path, hint] of FIELDS) {
    const input = h('input',
      { type: 'text', inputmode: 'decimal', autocomplete: 'off', spellcheck: 'false', 'data-testid': `serve-${key}`,
      'data-path': path, id: `serve-${key}` });
    inputs[key] = input;
    form.append(h('label', { class: 'field' }, key === 'load' ? loadKind : h('span', { class: 'label', text: label }),
      input, key === 'requests' ? requestsHint : key === 'load' ? loadHint : hint && h('small', { text: hint })));
  }
  const progress = h('progress',
    { max: 1, value: 0, 'data-testid': 'serve-progress', 'aria-label': 'Simulation progress' });
  const status = h('span', { class: 'status', role: 'status', 'data-testid': 'serve-status' });
  const cancel = h('button', { type: 'button', text: 'Cancel', 'data-testid': 'serve-cancel', disabled: true });
  const errors = h('div', { 'data-testid': 'serve-errors' });
  const memory = h('div');
  const results = h('div', { 'data-testid': 'serve-results' });
  const curve = h('div', { class: 'serve-curve-wrap' });
  let points = [];
  let main = null;
  let curvePending = !runner.run?.result; // no figures yet: placeholders keep their room
  if (curvePending) {
    results.append(placeholders());
    curve.append(...curvePlaceholder());
  }
  const exports = exportButtons({ name: 'stepcalc-serving', label: 'the serving results',
    csv: () => servingCsv(points, main),
    chart: () => curve.querySelector('svg.serve-curve'),
    about: () => aboutExport({ what: 'serving', title: 'serving results and latency-throughput curve',
      good: store.good, version: calc.version(),
      extra: [['workload', workloadWords(runner.run?.workload ?? local)]] }) });
  root.append(h('p',
    { class: 'muted',
    text: 'The shown model, GPU, TP and mode serving a workload: vLLM\'s scheduler simulated step by step ' +
      '(docs/SERVING.md).' }),
    form, h('div', { class: 'actions' }, progress, cancel, status), errors, memory, results, curve, exports);

  const show = () => {
    loadKind.value = local.load;
    inputs.load.setAttribute('data-path', local.load === 'rate' ? 'workload.request_rate' : 'workload.concurrency');
    showRequestsHint();
    showLoadName();
    const text = { input: local.input, output: local.output,
      load: local.load === 'rate' ? local.rate : local.concurrency,
      requests: local.requests || '', usd: local.usd || '' };
    for (const [k, v] of Object.entries(text)) if (document.activeElement !== inputs[k]) inputs[k].value = String(v);
  };
  show();

  // Cancel stops the runner's job; the cancelled request is not started again by the next
  // repricing of the step, only by an edit that changes it.
  cancel.addEventListener('click', () => runner.cancel());

  const showError = (error) => {
    for (const input of Object.values(inputs)) input.removeAttribute('aria-invalid');
    const target = Object.values(inputs).find((i) => i.getAttribute('data-path') === error.path);
    target?.setAttribute('aria-invalid', 'true');
    const label = target ? FIELDS.find(([k]) => inputs[k] === target)[1] : '';
    const text = label && local.load === 'rate' && target === inputs.load ? 'Request rate' : label;
    // A model that does not fit is said once, by the memory bar above (the core's words).
    errors.replaceChildren(h('p', { class: 'field-error', role: 'alert', 'data-testid': 'serve-error',
      text: error.code === 'does_not_fit'
        ? 'Not simulated: the model does not fit (see the memory per GPU above).'
        : fieldErrorWords(error, text) }));
  };

  const drawCurve = () => {
    const good = points.filter((p) => p.result)
      .map((p) => ({ c: p.concurrency, x: p.result.throughput.output_tokens_per_s, y: p.result.tpot_ms.mean }))
      .filter((p) => Number.isFinite(p.y)).sort((a, b) => a.c - b.c);
    const current = main && Number.isFinite(main.tpot_ms.mean)
      ? { x: main.throughput.output_tokens_per_s, y: main.tpot_ms.mean } : null;
    if (!good.length) {
      // Until the first curve (it runs once the panel is on screen) its room is kept.
      const coming = runner.run && runner.run.status !== 'error' && runner.run.curve !== 'done';
      if (!(curvePending && coming)) curve.replaceChildren();
      return;
    }
    curvePending = false;
    // The band: the accuracy ledger's TPOT error on the measured runs most like this (issue 22).
    const v = main?.validation;
    const band = v && v.subset !== null ? { mape: v.tpot_mape, runs: v.runs } : null;
    curve.replaceChildren(h('h3', { text: 'Latency and throughput over concurrency' }),
      curveChart(good, current, Math.min(640, Math.max(300, root.clientWidth - 30)), 220, band),
      h('details', {}, h('summary', { text: 'The curve\'s values' }), h('table', { 'data-testid': 'serve-curve-table' },
        h('thead', {},
          h('tr', {}, ...['Concurrency', 'Output tok/s', 'Mean TTFT', 'Mean TPOT'].map((t) => h('th', { text: t })))),
        h('tbody', {},
          ...points.filter((p) => p.result).sort((a, b) => a.concurrency - b.concurrency).map((p) => h('tr', {},
          h('td', { text: int(p.concurrency) }), h('td', { text: int(p.result.throughput.output_tokens_per_s) }),
          h('td', { text: ms(p.result.ttft_ms.mean) }), h('td', { text: ms(p.result.tpot_ms.mean) })))))));
  };

  const showResult = () => {
    errors.replaceChildren();
    for (const input of Object.values(inputs)) input.removeAttribute('aria-invalid');
    const preemptions = main.scheduler?.preemptions
      ? `${int(main.scheduler.preemptions)} preemptions` : 'no preemption';
    fill(results, overloadNote(main), cards(main), h('p', { class: 'muted', 'data-testid': 'serve-summary',
      text: `${int(main.workload.num_requests)} requests, ${int(main.steps)} engine steps simulated in ` +
        `${main.mode} on ${main.tp} × ${main.gpu}; ${preemptions}.` }),
    ...main.warnings.filter((w) => w.code !== 'model_does_not_fit' && w.code !== 'serving_overload')
      .map((w) => h('p', { class: 'field-warning', text: w.message })));
  };

  /** Progress, status and Cancel from the run's state. */
  const showState = (run) => {
    const state = run.status === 'error' ? 'error' : run.status === 'cancelled' || run.curve === 'cancelled'
      ? 'cancelled' : runner.busy ? 'running' : 'done';
    root.dataset.run = state;
    cancel.disabled = !runner.busy;
    progress.value = state === 'done' ? 1 : run.share;
    status.textContent = { error: '', cancelled: 'Cancelled.', done: 'Done.',
      running: `Simulating${run.status === 'done' ? ' the curve' : ''}… ${Math.round(run.share * 100)}%` }[state];
  };

  /** Everything the run holds (a panel built after the run started catches up here too). */
  const showRun = (event, run) => {
    if (event === 'workload') { // a link, an import or a plan set it
      Object.assign(local, runner.workload);
      show();
      return;
    }
    if (!run) return;
    if (event !== 'progress') {
      points = run.points;
      main = run.result;
      if (run.status === 'error') {
        showError(run.error);
        results.replaceChildren();
        curve.replaceChildren();
      } else if (main && event !== 'point') {
        showResult();
      }
      // A new request keeps the last figures on screen until its own arrive.
      if (main || event !== 'start') drawCurve();
    }
    showState(run);
  };
  runner.subscribe(showRun);
  if (runner.run) showRun('result', runner.run);

  const edited = () => {
    local.load = loadKind.value;
    const read = (k) =>
      (inputs[k].value.trim() === '' && (k === 'requests' || k === 'usd') ? 0 : parseTyped(inputs[k].value));
    local.input = read('input');
    local.output = read('output');
    local[local.load === 'rate' ? 'rate' : 'concurrency'] = read('load');
    local.requests = read('requests');
    local.usd = read('usd');
    inputs.load.setAttribute('data-path', local.load === 'rate' ? 'workload.request_rate' : 'workload.concurrency');
    showRequestsHint();
    showLoadName();
    runner.setWorkload(local); // the link keeps the last workload whose fields are all numbers
  };
  for (const input of Object.values(inputs)) input.addEventListener('input', edited);
  loadKind.addEventListener('change', () => {
    inputs.load.value = String(loadKind.value === 'rate' ? local.rate : local.concurrency);
    edited();
  });

  const priced = (good) => {
    memory.replaceChildren(h('h3', { text: 'Memory per GPU' }), memoryBar(good.result));
  };
  store.subscribe((change, { good }) => { if (change === 'priced') priced(good); });
  if (store.good) priced(store.good);
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
