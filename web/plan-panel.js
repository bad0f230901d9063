// SPDX-License-Identifier: Apache-2.0
// "Plan: the cheapest configuration that meets a latency target" (issue 24, docs/PLAN.md):
// the model, the traffic, the targets, the candidate GPUs with editable GPU-hour prices,
// the TP degrees to try and whether to try expert parallelism (MoE models); the plan runs
// in a Web Worker (web/plan-worker.js) with progress and Cancel; then the recommendation in
// one sentence, its `vllm serve` line with a Copy button, its headroom, the frontier plot
// (output tokens/s per GPU against tokens/s per user, the TPOT target's region shaded, the
// recommendation marked) and every candidate in a sortable table (its EP and DP too), each
// with "Open" (the page's model, GPU, TP, DP, EP and serving workload become the candidate's). A bundle of its
// own, loaded when the panel is first opened; the inputs are in the link (`pl=`,
// web/plan-state.js); `?embed=1&view=plan` shows the panel alone.
import { h, svg, fill, int, fixed, parseTyped, docLink, withDocLinks } from './dom.js';
import { niceTicks } from './charts.js';
import { MODE, useCatalogue } from './catalogue.js';
import { encodeHash } from './state.js';
import { defaultDetails, defaultServing, encodeDetails } from './serving-state.js';
import { fieldErrorWords, ledgerErrorWords } from './words.js';
import { PERCENTILES, TP_CHOICES, decodePlan, defaultPlan, encodePlan, planComplete, planRequest, targetsAtRisk }
  from './plan-state.js';
// The planner's default prices, the file core/plan/plan_defaults.cpp mirrors (bundled in).
import prices from '../presets/prices.json' with { type: 'json' };

/** A latency: "151 ms", "31.2 ms", "8.40 ms"; a dash when there is none. */
const ms = (v) => (typeof v !== 'number' ? '—' : v >= 100 ? `${int(v)} ms` : `${fixed(v, v >= 10 ? 1 : 2)} ms`);
const usd = (v) => (typeof v !== 'number' ? '—' : `$${fixed(v, 2)}`);
/** One candidate in words: "4 × H100, TP 4" (with DP, EP and the replicas when more than one). */
export const configWords = (c) => `${c.gpus_total} × ${c.gpu}, TP ${c.tp}${c.dp > 1 ? `, DP ${c.dp}` : ''}` +
  `${c.ep > 1 ? `, EP ${c.ep}` : ''}${c.replicas > 1 ? `, ${c.replicas} replicas` : ''}`;

/** Why candidates miss the target, as "the others" are counted: "3 do not fit in memory". */
const REASONS = {
  does_not_fit: 'do not fit in memory',
  invalid: 'are configurations vLLM refuses (e.g. a TP that does not divide the heads)',
  kv_bound: 'run out of KV cache (requests are preempted)',
  overload: 'are overloaded (the queue grows)',
  ttft: 'miss the TTFT target', tpot: 'miss the TPOT target', e2e: 'miss the end-to-end target',
  max_gpus: 'would need more than the most GPUs allowed',
};

/**
 * A target the recommendation meets by its estimate but not at the ledger's bias on runs like
 * it (targetsAtRisk), said beside it; null when there is none.
 */
function riskNote(c, slo) {
  const risks = targetsAtRisk(c, slo);
  if (!risks.length) return null;
  return h('p', { class: 'field-warning', 'data-testid': 'plan-risk', text: 'Runs like this measured slower than ' +
    `estimated: at the ledger's bias there, ${risks.map((r) => `${r.metric} ${ms(r.estimate)} would be ` +
      `${ms(r.atBias)} (estimated ${fixed(-r.bias, 0)}% low), over its ${ms(r.target)} target`).join('; ')}. ` +
    'Leave headroom, or measure it.' });
}

/** The accuracy ledger's error on runs like a candidate (docs/VALIDATION.md), in words. */
function validationNote(v) {
  return ledgerErrorWords(v) ?? 'no measured runs like this one';
}

/**
 * The frontier plot: every simulated candidate at (tokens/s per user, output tokens/s per
 * GPU), the frontier joined, the recommendation ringed, the TPOT target's region shaded
 * (tokens/s per user of at least 1000 / TPOT target: the axis is the median's, the target
 * holds at the plan's percentile, so it is a guide, the table says which meet it).
 * @param {any} result a PlanResult
 */
export function frontierChart(result, width = 560, height = 260) {
  const pad = { l: 62, r: 16, t: 12, b: 44 };
  const points = result.candidates.map((c, i) => ({ c, i,
    x: c.throughput?.output_tokens_per_s_per_user, y: c.throughput?.output_tokens_per_s_per_gpu }))
    .filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const tpot = result.slo.tpot_ms;
  const xSlo = tpot ? 1000 / tpot : 0;
  const xTicks = niceTicks(Math.max(xSlo, ...points.map((p) => p.x)) * 1.05, 5);
  const yTicks = niceTicks(Math.max(...points.map((p) => p.y)) * 1.05, 4);
  const xMax = xTicks[xTicks.length - 1];
  const yMax = yTicks[yTicks.length - 1];
  const X = (x) => pad.l + (x / xMax) * (width - pad.l - pad.r);
  const Y = (y) => pad.t + (1 - y / yMax) * (height - pad.t - pad.b);
  const rec = result.recommended;
  const meets = points.filter((p) => p.c.meets_slo).length;
  const chart = svg('svg', { class: 'line plan-frontier', width, height, viewBox: `0 0 ${width} ${height}`,
    role: 'img', 'data-testid': 'plan-frontier',
    'aria-label': `Output tokens/s per GPU against tokens/s per user for ${points.length} simulated ` +
      `configurations, ${meets} meeting the target` +
      (rec ? `; recommended ${configWords(result.candidates[rec.candidate])}` : '; none recommended') +
      (xSlo ? `; the TPOT target's region, from ${fixed(xSlo, 1)} tokens/s per user, is shaded` : '') +
      '. Every value is in the candidates table.' });
  if (xSlo) {
    chart.append(svg('rect', { class: 'slo-region', 'data-testid': 'plan-slo-region', x: X(xSlo), y: pad.t,
      width: Math.max(0, X(xMax) - X(xSlo)), height: height - pad.t - pad.b },
    svg('title', {}, `TPOT target ${ms(tpot)}: at least ${fixed(xSlo, 1)} tokens/s per user`)),
    svg('text', { x: X(xMax) - 4, y: pad.t + 12, 'text-anchor': 'end', class: 'slo-label' }, 'TPOT target met'));
  }
  for (const t of yTicks) {
    chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: Y(t), y2: Y(t), class: 'grid' }),
      svg('text', { x: pad.l - 5, y: Y(t) + 4, 'text-anchor': 'end', class: 'tick y-tick' }, int(t)));
  }
  for (const t of xTicks) {
    chart.append(svg('text', { x: X(t), y: height - pad.b + 15, 'text-anchor': 'middle', class: 'tick x-tick' },
      fixed(t, t % 1 ? 1 : 0)));
  }
  const midY = pad.t + (height - pad.t - pad.b) / 2;
  chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: height - pad.b, y2: height - pad.b, class: 'axis' }),
    svg('text', { x: pad.l + (width - pad.l - pad.r) / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis-title' },
      'Tokens/s per user (1000 / median TPOT)'),
    svg('text', { x: 12, y: midY, 'text-anchor': 'middle', class: 'axis-title', transform: `rotate(-90 12 ${midY})` },
      'Output tokens/s per GPU'));
  const frontier = result.frontier.map((i) => points.find((p) => p.i === i)).filter(Boolean)
    .sort((a, b) => a.x - b.x);
  if (frontier.length > 1) {
    chart.append(svg('path', { class: 'frontier', 'data-testid': 'plan-frontier-line',
      d: frontier.map((p, k) => `${k ? 'L' : 'M'}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join('') }));
  }
  for (const p of points) {
    chart.append(svg('circle', { cx: X(p.x), cy: Y(p.y), r: 4, class: p.c.meets_slo ? 'meets' : 'misses',
      'data-candidate': p.i },
    svg('title', {}, `${configWords(p.c)}: ${int(p.y)} output tokens/s per GPU, ${fixed(p.x, 1)} per user; ` +
      (p.c.meets_slo ? 'meets the target' : p.c.reason_message))));
  }
  const best = rec && points.find((p) => p.i === rec.candidate);
  if (best) {
    chart.append(svg('circle', { cx: X(best.x), cy: Y(best.y), r: 9, class: 'recommended',
      'data-testid': 'plan-recommended-point' }, svg('title', {}, `Recommended: ${rec.summary}`)));
  }
  const legend = h('ul', { class: 'legend plan-legend', 'aria-hidden': 'true' },
    h('li', {}, h('span', { class: 'mark meets' }), 'meets the target'),
    h('li', {}, h('span', { class: 'mark misses' }), 'misses it'),
    frontier.length > 1 && h('li', {}, h('span', { class: 'mark frontier' }), 'frontier (no other is better on both)'),
    best && h('li', {}, h('span', { class: 'mark recommended' }), 'recommended'),
    xSlo && h('li', {}, h('span', { class: 'mark slo' }), `TPOT target: ≥ ${fixed(xSlo, 1)} tokens/s per user`));
  const caption = h('figcaption', { class: 'muted', text: 'Each point is one candidate (one replica\'s figures). ' +
    (xSlo ? `The shaded region is where the median TPOT meets the TPOT target; the target holds at ` +
      `p${result.slo.percentile}, so the table says which candidates meet it.`
      : 'No TPOT target: nothing is shaded.') });
  return h('figure', { class: 'plan-chart' }, chart, legend, caption);
}

/**
 * The candidates' columns: a title, the value sorted by (undefined sorts last either way),
 * the cell's text.
 */
function columns(pct) {
  const lat = (key) => (c) => c[`${key}_ms_at_percentile`];
  return [
    { key: 'config', title: 'Configuration', value: (c, i) => i, text: (c) => configWords(c) },
    { key: 'meets', title: 'Meets the target', value: (c) => (c.meets_slo ? 0 : 1), text: null },
    { key: 'gpus', title: 'GPUs', num: true, value: (c) => c.gpus_total, text: (c) => int(c.gpus_total) },
    { key: 'ep', title: 'EP', num: true, value: (c) => c.ep, text: (c) => int(c.ep) },
    { key: 'dp', title: 'DP', num: true, value: (c) => c.dp, text: (c) => int(c.dp) },
    { key: 'cost', title: 'Cost per hour', num: true, value: (c) => c.cost_per_hour_usd,
      text: (c) => usd(c.cost_per_hour_usd) },
    { key: 'usd_m', title: '$ per M tokens', num: true, value: (c) => c.usd_per_million_tokens_blended,
      text: (c) => usd(c.usd_per_million_tokens_blended) },
    { key: 'ttft', title: `TTFT ${pct}`, num: true, value: lat('ttft'), text: (c) => ms(lat('ttft')(c)) },
    { key: 'tpot', title: `TPOT ${pct}`, num: true, value: lat('tpot'), text: (c) => ms(lat('tpot')(c)) },
    { key: 'per_gpu', title: 'Output tok/s per GPU', num: true, value: (c) => c.throughput?.output_tokens_per_s_per_gpu,
      text: (c) => (c.throughput ? int(c.throughput.output_tokens_per_s_per_gpu) : '—') },
  ];
}

/** Candidate indices sorted by column `key` (`dir` 1 ascending, -1 descending); ties keep search order. */
export function sortCandidates(candidates, key, dir, pct = 'p90') {
  const col = columns(pct).find((c) => c.key === key);
  return candidates.map((c, i) => ({ i, v: col.value(c, i) })).sort((a, b) => {
    const na = typeof a.v !== 'number';
    const nb = typeof b.v !== 'number';
    if (na || nb) return na === nb ? a.i - b.i : na ? 1 : -1;
    return (a.v - b.v) * dir || a.i - b.i;
  }).map((x) => x.i);
}

/**
 * Builds the panel into `root` (inside the collapsed `<details id="plan">` of index.html).
 * `root.dataset.run` says where the latest plan is: 'running', 'done', 'cancelled' or 'error'.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} root @param {{view?: string}} [options]
 */
export function planPanel({ calc, presets, store }, root, { view } = {}) {
  useCatalogue(calc.catalogue()); // this bundle's copy of the catalogue (encodeHash reads it)
  const embed = document.body.classList.contains('embed');
  if (view === 'plan') {
    document.body.classList.add('view-plan');
    root.closest('section')?.classList.remove('full-only');
  }
  // The panel's own stylesheet (web/plan-panel.css, built beside this bundle).
  document.head.append(h('link', { rel: 'stylesheet', href: new URL('./plan-panel.css', import.meta.url).href }));

  /** GPUs with measured tables of their own: the planner's candidates (not those scaled from a sibling's). */
  const gpuNames = presets.gpu_specs.filter((g) => g.kernels?.length && !g.kernels_from).map((g) => g.name).sort();
  const defaults = /** @type {Record<string, number>} */ (prices.gpu_hour_usd);
  const fresh = () => defaultPlan(Object.fromEntries(gpuNames.map((g) => [g, defaults[g] ?? ''])));
  /** Each GPU's price as typed, also for GPUs not checked (the link keeps the checked ones). */
  const price = Object.fromEntries(gpuNames.map((g) => [g, defaults[g] ?? '']));
  let local = fresh();
  let linkError = '';
  /** The `pl=` this panel last wrote or read: a replaced state with another one comes from outside. */
  let written = '';
  const fromState = () => {
    linkError = '';
    written = store.state.plan ?? '';
    if (!store.state.plan) return fresh();
    try {
      const p = decodePlan(store.state.plan);
      // Only what the panel offers (GPUs with measured tables, TP 1 to 8) can be asked again.
      const left = [...p.gpus.map(([g]) => g).filter((g) => !gpuNames.includes(g)),
        ...p.tp.filter((t) => !TP_CHOICES.includes(t)).map((t) => `TP ${t}`)];
      if (left.length) {
        linkError = `This link's plan names ${left.join(', ')}, which the panel does not offer: left out.`;
      }
      p.gpus = p.gpus.filter(([g]) => gpuNames.includes(g));
      p.tp = p.tp.filter((t) => TP_CHOICES.includes(t));
      for (const [g, v] of p.gpus) price[g] = v;
      return p;
    } catch (error) {
      linkError = `This link's plan cannot be shown: ${error.message} The panel shows its defaults.`;
      return fresh();
    }
  };
  local = fromState();

  // ---- the inputs
  const input = (key, label, path, hint, props = {}) => {
    const el = h('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off', spellcheck: 'false',
      'data-testid': `plan-${key}`, 'data-path': path, 'data-label': label, ...props });
    return { el, wrap: h('label', { class: 'field' }, h('span', { class: 'label', text: label }), el,
      hint && h('small', { text: hint })) };
  };
  const model = h('select', { 'data-testid': 'plan-model', 'data-path': 'model', 'data-label': 'Model',
    'aria-describedby': 'plan-model-hint' });
  const modelHint = h('small', { id: 'plan-model-hint', 'data-testid': 'plan-model-hint' });
  const modelNames = presets.models.map((m) => m.name);
  const inTokens = input('input', 'Input tokens', 'workload.input_tokens', 'per request');
  const outTokens = input('output', 'Output tokens', 'workload.output_tokens', 'per request');
  const loadKind = h('select', { 'aria-label': 'Load', 'data-testid': 'plan-load-kind' },
    h('option', { value: 'rate', text: 'Requests/s' }), h('option', { value: 'concurrency', text: 'Concurrency' }));
  const load = input('load', 'Request rate', 'workload.request_rate', '', { 'aria-label': 'Request rate' });
  const ttft = input('ttft', 'TTFT target (ms)', 'slo.ttft_ms', 'blank: none');
  const tpot = input('tpot', 'TPOT target (ms)', 'slo.tpot_ms', 'blank: none');
  const e2e = input('e2e', 'E2E target (ms)', 'slo.e2e_ms', 'end to end; blank: none');
  const percentile = h('select', { 'data-testid': 'plan-percentile', 'data-path': 'slo.percentile',
    'data-label': 'Percentile' }, PERCENTILES.map((p) => h('option', { value: p, text: `p${p}` })));
  const maxGpus = input('max-gpus', 'Most GPUs', 'search.max_gpus', 'replicas × TP', { inputmode: 'numeric' });
  const gpuBoxes = {};
  const gpuPrices = {};
  const gpuSet = h('fieldset', { class: 'plan-fieldset', 'data-path': 'gpus', 'data-label': 'GPUs' },
    h('legend', { text: 'GPUs to try, at $ per GPU-hour' }));
  const gpuGrid = h('div', { class: 'plan-gpus' });
  for (const g of gpuNames) {
    gpuBoxes[g] = h('input', { type: 'checkbox', 'data-testid': `plan-gpu-${g}`, id: `plan-gpu-${g}` });
    gpuPrices[g] = h('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off', spellcheck: 'false',
      'data-testid': `plan-usd-${g}`, 'data-path': `gpu_hour_usd.${g}`, 'data-label': `${g} $ per GPU-hour`,
      'aria-label': `${g}: $ per GPU-hour` });
    gpuGrid.append(h('div', { class: 'plan-gpu' },
      h('label', { for: `plan-gpu-${g}` }, gpuBoxes[g], ` ${g}`), h('span', { 'aria-hidden': 'true', text: '$' }),
      gpuPrices[g]));
  }
  gpuSet.append(gpuGrid, h('small', { text: `Default prices: ${prices.source.replace(/ Edit them here.*$/, '')}` }));
  const tpBoxes = {};
  const epBox = h('input', { type: 'checkbox', 'data-testid': 'plan-ep', 'data-path': 'search.expert_parallel',
    'data-label': 'Expert parallelism' });
  const tpSet = h('fieldset', { class: 'plan-fieldset', 'data-path': 'search.tp', 'data-label': 'TP degrees' },
    h('legend', { text: 'Tensor-parallel degrees to try' }),
    ...TP_CHOICES.map((t) => {
      tpBoxes[t] = h('input', { type: 'checkbox', 'data-testid': `plan-tp-${t}` });
      return h('label', { class: 'plan-check' }, tpBoxes[t], `TP ${t}`);
    }), maxGpus.wrap,
    h('label', { class: 'plan-check', title: 'A MoE model\'s experts split over the TP GPUs (EP = TP, ' +
      '--enable-expert-parallel) as well as by TP; nothing for a dense model' }, epBox,
    'Try expert parallelism (MoE models)'));
  const form = h('div', { class: 'plan-form' },
    h('div', { class: 'plan-inputs' },
      h('label', { class: 'field model' }, h('span', { class: 'label', text: 'Model' }), model, modelHint),
      inTokens.wrap, outTokens.wrap,
      h('label', { class: 'field' }, loadKind, load.el),
      ttft.wrap, tpot.wrap, e2e.wrap,
      h('label', { class: 'field' }, h('span', { class: 'label', text: 'Targets hold at' }), percentile,
        h('small', { text: 'of the requests' }))),
    gpuSet, tpSet);
  const run = h('button', { type: 'button', class: 'primary', text: 'Plan', 'data-testid': 'plan-run' });
  const cancel = h('button', { type: 'button', text: 'Cancel', 'data-testid': 'plan-cancel', disabled: true });
  const progress = h('progress', { max: 1, value: 0, 'data-testid': 'plan-progress', 'aria-label': 'Plan progress' });
  const status = h('span', { class: 'status', role: 'status', 'data-testid': 'plan-status' });
  const errors = h('div', { 'data-testid': 'plan-errors' });
  const results = h('div', { class: 'plan-results', 'data-testid': 'plan-results' });
  root.append(h('p', { class: 'muted' }, 'The cheapest configuration that meets a latency target: every GPU × ' +
    'TP (× expert parallelism for a MoE model) candidate served in the measured mode, vLLM\'s scheduler ' +
    'simulated step by step (', docLink('PLAN'), '). ' +
    'Estimates, not measurements.'), form, h('div', { class: 'actions' }, run, progress, cancel, status),
  errors, results);

  /** The page's model's name (the first model choice; it follows the Model panel). */
  const pageModelName = () => {
    const { model: m, modelName } = store.state;
    return typeof m === 'string' ? m : modelName || 'custom shape';
  };
  /** Under the model choice: which model the page's is (the select itself says only "The page's model"). */
  const showModelHint = () => {
    modelHint.textContent = `the page's model: ${pageModelName()}`;
  };

  /** Puts `local` into the controls (those being typed in keep their text). */
  function show() {
    model.replaceChildren(h('option', { value: '', text: 'The page\'s model' }),
      ...modelNames.map((m) => h('option', { value: m, text: m })));
    if (local.model && !modelNames.includes(local.model)) {
      model.append(h('option', { value: local.model, text: `${local.model} (unknown)` }));
    }
    model.value = local.model;
    showModelHint();
    loadKind.value = local.load;
    const rate = local.load === 'rate';
    load.el.setAttribute('data-path', rate ? 'workload.request_rate' : 'workload.concurrency');
    load.el.setAttribute('data-label', rate ? 'Request rate' : 'Concurrency');
    load.el.setAttribute('aria-label', rate ? 'Request rate' : 'Concurrency');
    percentile.value = String(local.percentile);
    const text = [[inTokens.el, local.input], [outTokens.el, local.output],
      [load.el, rate ? local.rate : local.concurrency],
      [ttft.el, local.ttft || ''], [tpot.el, local.tpot || ''], [e2e.el, local.e2e || ''], [maxGpus.el, local.maxGpus],
      ...gpuNames.map((g) => [gpuPrices[g], price[g]])];
    for (const [el, v] of text) if (document.activeElement !== el) el.value = String(v);
    const checked = new Set(local.gpus.map(([g]) => g));
    for (const g of gpuNames) gpuBoxes[g].checked = checked.has(g);
    for (const t of TP_CHOICES) tpBoxes[t].checked = local.tp.includes(t);
    epBox.checked = local.ep;
    if (linkError) showError({ path: '', message: linkError });
  }

  /** Reads the controls into `local`; the link keeps it when every field holds a number. */
  function edited() {
    results.classList.toggle('plan-stale', Boolean(shown)); // the result is the last plan's, not these inputs'
    const read = (el, blank) => (el.value.trim() === '' && blank !== undefined ? blank : parseTyped(el.value));
    local.model = model.value;
    local.load = loadKind.value;
    local.input = read(inTokens.el);
    local.output = read(outTokens.el);
    if (local.load === 'rate') local.rate = read(load.el);
    else local.concurrency = read(load.el);
    local.ttft = read(ttft.el, 0);
    local.tpot = read(tpot.el, 0);
    local.e2e = read(e2e.el, 0);
    local.percentile = Number(percentile.value);
    local.maxGpus = read(maxGpus.el);
    for (const g of gpuNames) price[g] = read(gpuPrices[g], '');
    local.gpus = gpuNames.filter((g) => gpuBoxes[g].checked).map((g) => [g, price[g]]);
    local.tp = TP_CHOICES.filter((t) => tpBoxes[t].checked);
    local.ep = epBox.checked;
    if (planComplete(local)) {
      linkError = '';
      written = encodePlan(local);
      if (written !== store.state.plan) store.set({ plan: written });
    }
  }
  form.addEventListener('input', (event) => { if (event.target !== loadKind) edited(); });
  loadKind.addEventListener('change', () => {
    local.load = loadKind.value; // the field shows this load's own value
    load.el.value = String(local.load === 'rate' ? local.rate : local.concurrency);
    show();
    edited();
  });

  // ---- errors: the field the core names, in the page's words; nothing typed is replaced
  const pathOwners = () => [...form.querySelectorAll('[data-path]')];
  function showError(error) {
    for (const el of pathOwners()) el.removeAttribute('aria-invalid');
    const at = (p) => error.path === p || error.path.startsWith(`${p}.`) || error.path.startsWith(`${p}[`);
    // The most specific control naming the path (gpu_hour_usd.H100 before gpus).
    const owner = pathOwners().filter((el) => at(el.getAttribute('data-path')))
      .sort((a, b) => b.getAttribute('data-path').length - a.getAttribute('data-path').length)[0] ??
      (error.path === 'slo' ? ttft.el : error.path === 'search' ? gpuSet : null);
    owner?.setAttribute('aria-invalid', 'true');
    const label = owner?.getAttribute('data-label');
    // The field's label and a plain sentence; the JSON path only when no field owns the error.
    errors.replaceChildren(h('p', { class: 'field-error', role: 'alert', 'data-testid': 'plan-error' },
      withDocLinks(fieldErrorWords(error, label))));
  }
  const clearErrors = () => {
    errors.replaceChildren();
    for (const el of pathOwners()) el.removeAttribute('aria-invalid');
  };

  // ---- running the plan in a worker
  let worker = null;
  let job = 0;
  /** The last plan shown: {result, request, inputs}. */
  let shown = null;
  let sort = { key: 'cost', dir: 1 };
  const stop = () => {
    worker?.terminate();
    worker = null;
  };
  const idle = () => {
    run.disabled = false;
    cancel.disabled = true;
  };
  cancel.addEventListener('click', () => {
    stop(); // the module is busy in one call: ending the worker is what stops it
    job++;
    idle();
    progress.value = 0;
    root.dataset.run = 'cancelled';
    status.textContent = 'Cancelled.';
  });

  function start() {
    edited();
    const request = planRequest(local, store.state.model, store.state.hubId);
    const inputs = structuredClone(local);
    const id = ++job;
    // A new worker gets the page's compiled module and the kernel packs it has read.
    const share = worker ? undefined : calc.forWorker();
    worker ??= new Worker(new URL('./plan-worker.js', import.meta.url), { type: 'module' });
    run.disabled = true;
    cancel.disabled = false;
    progress.value = 0;
    root.dataset.run = 'running';
    status.textContent = 'Planning…';
    results.classList.add('plan-stale');
    worker.onmessage = ({ data }) => {
      if (data.id !== id || id !== job) return; // a cancelled or replaced plan's message
      if (data.type === 'progress') {
        progress.value = data.share;
        status.textContent = `Planning… ${Math.round(data.share * 100)}%`;
        return;
      }
      idle();
      if (data.type === 'error') {
        showError(data.error);
        root.dataset.run = 'error';
        status.textContent = '';
        return;
      }
      clearErrors();
      progress.value = 1;
      shown = { result: data.result, request, inputs };
      showResult();
      root.dataset.run = 'done';
      status.textContent = `Done: ${int(data.result.search.candidates)} candidates, ` +
        `${int(data.result.search.simulations)} simulations.`;
    };
    worker.onerror = (event) => {
      stop();
      idle();
      showError({ path: '', message: `The plan's worker failed: ${event.message ?? 'unknown error'}` });
      root.dataset.run = 'error';
    };
    worker.postMessage({ id, baseUrl: new URL('wasm/', document.baseURI).href, share, request });
  }
  run.addEventListener('click', start);
  form.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && event.target instanceof HTMLInputElement && event.target.type === 'text' &&
      !run.disabled) start();
  });

  // ---- the result
  const copyStatus = h('span', { class: 'status', role: 'status', 'data-testid': 'plan-copy-status' });
  async function copy(code) {
    try {
      await navigator.clipboard.writeText(code.textContent);
      copyStatus.textContent = 'Copied.';
    } catch {
      getSelection()?.selectAllChildren(code);
      copyStatus.textContent = 'Copying is blocked here: the line is selected, copy it with the keyboard.';
    }
  }

  function recommendation(result) {
    const rec = result.recommended;
    const pct = `p${result.slo.percentile}`;
    if (!rec) {
      const closest = result.closest;
      const counts = new Map();
      result.candidates.forEach((c, i) => {
        if (!c.meets_slo && i !== closest?.candidate) counts.set(c.reason, (counts.get(c.reason) ?? 0) + 1);
      });
      const others = [...counts].map(([reason, n]) => `${int(n)} ${REASONS[reason] ?? reason}`);
      return [h('p', { class: 'plan-sentence field-warning', 'data-testid': 'plan-none', role: 'status' },
        h('strong', { text: 'Nothing meets the target. ' }),
        closest ? withDocLinks(`Closest: ${configWords(result.candidates[closest.candidate])}. ` +
          closest.reason_message) : 'No candidate could be simulated.'),
      others.length ? h('p', { 'data-testid': 'plan-others', text: `The others: ${others.join('; ')}.` }) : null];
    }
    const c = result.candidates[rec.candidate];
    const code = h('code', { 'data-testid': 'plan-vllm', text: rec.vllm_serve });
    const served = result.workload.request_rate !== undefined
      ? `the asked ${fixed(result.workload.request_rate, result.workload.request_rate % 1 ? 2 : 0)} requests/s`
      : 'the rate its clients send';
    return [
      h('p', { class: 'plan-sentence' }, 'Recommended: ',
        h('strong', { 'data-testid': 'plan-summary', 'data-candidate': rec.candidate, text: rec.summary }), '.'),
      h('div', { class: 'plan-vllm' }, code,
        h('button', { type: 'button', text: 'Copy', 'data-testid': 'plan-copy',
          'aria-label': 'Copy the vllm serve line', onclick: () => copy(code) }), copyStatus),
      rec.replicas > 1 ? h('p', { class: 'muted', text: `Run it on each of ${rec.replicas} replicas behind a load ` +
        'balancer that splits the requests evenly.' }) : null,
      h('p', { 'data-testid': 'plan-headroom', text: `Headroom: it meets the target up to ` +
        `${fixed(rec.headroom.request_rate, 2)} requests/s, ${fixed(rec.headroom.ratio, 2)} × ${served}. ` +
        `${pct} TTFT ${ms(c.ttft_ms_at_percentile)}, TPOT ${ms(c.tpot_ms_at_percentile)}, ` +
        `end-to-end ${ms(c.e2e_ms_at_percentile)}.` }),
      h('p', { class: 'muted' },
        `Estimates of the measured mode, not measurements: ${validationNote(c.validation)} (`,
        docLink('VALIDATION'), ').'),
      riskNote(c, result.slo),
    ];
  }

  function table(result) {
    const pct = `p${result.slo.percentile}`;
    const cols = columns(pct);
    const order = sortCandidates(result.candidates, sort.key, sort.dir, pct);
    const rec = result.recommended?.candidate;
    const head = cols.map((col) => {
      const active = sort.key === col.key;
      return h('th', { scope: 'col', class: col.num ? 'num' : null, 'data-sort': col.key,
        'aria-sort': active ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none' },
      h('button', { type: 'button', class: 'sort', text: col.title + (active ? (sort.dir > 0 ? ' ▲' : ' ▼') : ''),
        onclick: () => {
          sort = { key: col.key, dir: active ? -sort.dir : 1 };
          showResult(`th[data-sort="${col.key}"] button`);
        } }));
    });
    const rows = order.map((i) => {
      const c = result.candidates[i];
      const cells = cols.map((col) => {
        if (col.key === 'meets') {
          const risks = c.meets_slo ? targetsAtRisk(c, result.slo) : [];
          return h('td', { 'data-reason': c.reason }, c.meets_slo
            ? ['yes', risks.length ? h('small', { class: 'reason', 'data-testid': 'plan-row-risk',
              text: `by its estimate; not at the ledger's bias on runs like it (${risks.map((r) =>
                `${r.metric} ${ms(r.atBias)}`).join(', ')})` }) : null]
            : ['no', h('small', { class: 'reason' }, withDocLinks(c.reason_message))]);
        }
        return h('td', { class: col.num ? 'num' : null, text: col.text(c) });
      });
      return h('tr', { 'data-candidate': i, class: i === rec ? 'recommended' : null }, ...cells,
        h('td', {}, h('button', { type: 'button', text: 'Open', 'data-testid': 'plan-open',
          'aria-label': `Open ${configWords(c)} in the step and serving views`, onclick: () => openCandidate(i) })));
    });
    return h('div', { class: 'plan-table-wrap' }, h('table', { class: 'plan-table', 'data-testid': 'plan-table' },
      h('caption', { text: `Every candidate (${int(result.candidates.length)}); the recommended one in bold. ` +
        'Sort by a column\'s title.' }),
      h('thead', {}, h('tr', {}, ...head, h('th', { scope: 'col', text: 'Show' }))), h('tbody', {}, ...rows)));
  }

  /** Draws the last plan; `focus` (a selector) gets the focus back after a re-sort. */
  function showResult(focus) {
    if (!shown) return;
    const { result } = shown;
    results.classList.remove('plan-stale');
    const simulated = result.candidates.some((c) => c.throughput);
    fill(results, ...recommendation(result),
      simulated ? frontierChart(result, Math.min(640, Math.max(300, root.clientWidth - 20))) : null,
      table(result),
      h('p', { class: 'muted', 'data-testid': 'plan-search',
        text: `${int(result.search.candidates)} candidates, ${int(result.search.simulations)} simulations of ` +
          `${int(result.search.requests_per_simulation)} requests each. Prices: ${result.prices_source}.` }));
    if (focus) /** @type {HTMLElement | null} */ (results.querySelector(focus))?.focus();
  }

  /** The page's model, GPU, TP, DP, EP and serving workload become candidate `i`'s (measured mode, as planned). */
  function openCandidate(i) {
    const { result, request, inputs } = shown;
    const c = result.candidates[i];
    const s = store.state;
    const rw = c.replica_workload;
    const round = (v) => Math.round(v * 1e6) / 1e6; // what the link's serving workload keeps
    // The engine and workload details as the plan served them (vLLM's defaults), its targets as the curve's lines.
    const { more, ...kept } = s.serving ?? {};
    const targets = encodeDetails({ ...defaultDetails(), ttft: request.slo?.ttft_ms ?? null,
      tpot: request.slo?.tpot_ms ?? null });
    const serving = { ...defaultServing(), ...kept, input: inputs.input, output: inputs.output,
      load: rw?.concurrency ? 'concurrency' : 'rate', requests: rw?.num_requests ?? 0, usd: c.gpu_hour_usd,
      ...(targets ? { more: targets } : {}) };
    if (rw?.concurrency) serving.concurrency = rw.concurrency;
    else serving.rate = round(rw?.request_rate ?? inputs.rate);
    const next = { ...s, gpu: c.gpu, kernels: '', tp: c.tp, ep: c.ep ?? 1, dp: c.dp ?? 1, mode: MODE.measured,
      serving };
    if (typeof request.model === 'string') Object.assign(next, { model: request.model, modelName: '' });
    if (embed) {
      const full = new URL(document.URL);
      full.search = '';
      full.hash = encodeHash(next, store.pinned?.state);
      window.open(full.href, '_blank', 'noopener');
      return;
    }
    store.replace(next);
    status.textContent = `Opened ${configWords(c)} in the step and serving views.`;
    document.getElementById('results')?.scrollIntoView({ block: 'start' });
  }

  store.subscribe((change) => {
    // A link replaced the state: its plan inputs, unless the panel wrote them (then what is
    // typed stays, also text that is not a number yet). A state with no plan (an imported
    // request, a link of a step alone) says nothing about the plan: the inputs stay.
    if (change === 'priced') showModelHint();
    if (change !== 'replaced') return;
    const plan = store.state.plan ?? '';
    if (plan && plan !== written && !root.contains(document.activeElement)) local = fromState();
    show(); // the page's model may have changed
  });
  show();
  root.dataset.run = 'idle';
  // A link that holds a plan (or the embed of one) shows its result, as it was shared.
  if ((store.state.plan && !linkError) || view === 'plan') start();
  return { start, cancel: () => cancel.click() };
}
