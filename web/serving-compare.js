// SPDX-License-Identifier: Apache-2.0
// The A/B comparison's serving figures (web/compare.js compares the step): with A pinned,
// A served with the Serving panel's workload beside B (the shown configuration, the serving
// runner's own result): TTFT and TPOT (mean and p90), throughput and cost, with the difference.
// A's simulation is the runner's (web/serving-runner.js, in its Web Worker), after B's own
// and before the curve; a new A, a new workload or Unpin ends it.
import { h, fill, fixed, int, deltaPct } from './dom.js';
import { toRequest } from './state.js';
import { fieldErrorWords } from './words.js';
import { ms } from './serving-charts.js';
import { workloadWords } from './serving-panel.js';
import { exportButtons } from './export-buttons.js';
import { aboutExport } from './export-about.js';

/**
 * The rows of a serving comparison: [{key, name, a, b, unit, better}] (`better`: 'lower' or
 * 'higher'; a figure one side lacks is null).
 */
export function servingRows(a, b) {
  const row = (key, name, get, unit, better) => ({ key, name, a: a ? get(a) ?? null : null,
    b: b ? get(b) ?? null : null, unit, better });
  return [
    row('ttft-mean', 'TTFT, mean', (r) => r.ttft_ms.mean, 'ms', 'lower'),
    row('ttft-p90', 'TTFT, p90', (r) => r.ttft_ms.p90, 'ms', 'lower'),
    row('tpot-mean', 'TPOT, mean', (r) => r.tpot_ms.mean, 'ms', 'lower'),
    row('tpot-p90', 'TPOT, p90', (r) => r.tpot_ms.p90, 'ms', 'lower'),
    row('tokens', 'Output tokens/s', (r) => r.throughput.output_tokens_per_s, 'tok/s', 'higher'),
    row('tokens-per-gpu', 'Output tokens/s per GPU', (r) => r.throughput.output_tokens_per_s_per_gpu, 'tok/s',
      'higher'),
    row('requests', 'Requests/s', (r) => r.throughput.requests_per_s, 'req/s', 'higher'),
    row('cost', '$ per million output tokens', (r) => r.cost?.usd_per_million_output_tokens, '$', 'lower'),
  ].filter((r) => r.a !== null || r.b !== null);
}

const value = (v, unit) => (v === null ? '—' : unit === 'ms' ? ms(v) : unit === '$' ? `$${fixed(v, 2)}`
  : unit === 'req/s' ? fixed(v, 2) : int(v));
const delta = (d, unit) => (d > 0 ? '+' : d < 0 ? '−' : '') + value(Math.abs(d), unit);

/** The measured kernel tables' version a state is priced with (its own, else its GPU's default). */
const kernelsOf = (calc, state) => state.kernels ||
  calc.catalogue().gpu_specs.find((g) => g.name === state.gpu)?.default_kernels || 'default';

/**
 * Shows A and B served with the workload in `root` (inside the comparison section) while A is
 * pinned; asks the runner to serve A.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} root
 * @param {import('./serving-runner.js').ServingRunner} runner
 */
export function servingCompare({ store, calc }, root, runner) {
  const body = h('div', { class: 'compare-serving', 'data-testid': 'compare-serving' });
  let rows = [];
  root.append(body);
  const exports = exportButtons({ name: 'stepcalc-a-b-serving', label: 'the A/B serving comparison',
    csv: () => ({ head: ['figure', 'unit', 'a', 'b', 'b_minus_a'],
      rows: rows.map((r) => [r.name, r.unit, r.a ?? '', r.b ?? '', r.a === null || r.b === null ? '' : r.b - r.a]) }),
    about: () => aboutExport({ what: 'a-b-serving', title: 'A/B comparison served (B is the step described here)',
      good: store.good, version: calc.version(),
      extra: [['workload', workloadWords(runner.run?.workload ?? runner.workload)]] }) });

  /** Asks the runner for A (or for none). */
  const ask = () => runner.compareWith(store.pinned ? toRequest(store.pinned.state) : null);

  const notServed = (who, error) => (error.code === 'does_not_fit'
    ? `${who} is not served: the model does not fit at its TP on its GPU.`
    : `${who} cannot be served with this workload: ${fieldErrorWords(error, '')}`);

  function show() {
    const run = runner.run;
    if (!store.pinned || !run) {
      rows = [];
      body.dataset.state = 'none';
      return fill(body);
    }
    const a = run.compare, b = run;
    const w = run.workload;
    const heading = h('h3', { text: 'Serving the Serving panel\'s workload' });
    const words = h('p', { class: 'muted', 'data-testid': 'compare-serving-workload',
      text: `${int(Number(w.input) || 0)} input and ${int(Number(w.output) || 0)} output tokens per request at ` +
        `${w.load === 'rate' ? `${w.rate} requests/s` : `${w.concurrency} concurrent clients`}, A and B each ` +
        'simulated step by step; change it in the Serving panel.' });
    const states = [a?.status, b.status];
    body.dataset.state = states.includes('running') || states.includes('waiting') || !a ? 'running'
      : states.includes('cancelled') ? 'cancelled' : 'done';
    const kernels = [kernelsOf(calc, store.pinned.state), store.good ? kernelsOf(calc, store.good.state) : ''];
    const measured = store.pinned.state.mode === 'measured' || store.good?.state.mode === 'measured';
    const kernelNote = measured && store.good && kernels[0] !== kernels[1]
      ? h('p', { 'data-testid': 'compare-kernels', text: `Kernel tables: A ${kernels[0]}, B ${kernels[1]} (the ` +
        'measured figures of each come from its own version).' }) : null;
    const notes = [];
    if (b.status === 'error') notes.push(notServed('B', b.error));
    if (a?.status === 'error') notes.push(notServed('A', a.error));
    for (const [who, r] of [['A', a?.result], ['B', b.result]]) {
      if (r?.steady_state?.overloaded) notes.push(`${who} is overloaded at this rate: its TTFT grows with the run.`);
    }
    if (body.dataset.state === 'cancelled') {
      notes.push('Cancelled in the Serving panel; change the workload to run it.');
    }
    rows = a?.result || b.result ? servingRows(a?.result ?? null, b.result) : [];
    const pending = body.dataset.state === 'running'
      ? h('p', { class: 'muted', 'data-testid': 'compare-serving-pending',
        text: `Simulating ${b.status === 'running' ? 'B' : 'A'} with this workload…` }) : null;
    fill(body, heading, words, kernelNote, pending,
      ...notes.map((text) => h('p', { class: 'field-warning', text })),
      rows.length ? h('table', { class: 'compare', 'data-testid': 'compare-serving-table' },
        h('thead', {}, h('tr', {},
          ['', 'A', 'B', 'B − A', ''].map((t, i) => h('th', { scope: 'col', class: i ? 'num' : '', text: t })))),
        h('tbody', {}, rows.map((r) => {
          const d = r.a === null || r.b === null ? null : r.b - r.a;
          const worse = d !== null && (r.better === 'lower' ? d > 0 : d < 0);
          return h('tr', { 'data-figure': r.key },
            h('th', { scope: 'row', text: r.name }),
            h('td', { class: 'num', 'data-value': r.a ?? '', text: value(r.a, r.unit) }),
            h('td', { class: 'num', 'data-value': r.b ?? '', text: value(r.b, r.unit) }),
            h('td', { class: `num${worse ? ' worse' : ''}`, text: d === null ? '' : delta(d, r.unit) }),
            h('td', { class: `num${worse ? ' worse' : ''}`, text: d === null || !r.a ? '' : deltaPct(d / r.a) }));
        }))) : null,
      rows.length ? exports : null);
  }

  store.subscribe((change) => {
    if (change === 'pinned' || change === 'priced') {
      ask();
      show();
    }
  });
  runner.subscribe((event) => { if (event !== 'progress' && event !== 'point') show(); });
  ask();
  show();
}
