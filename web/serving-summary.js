// SPDX-License-Identifier: Apache-2.0
// The summary strip's serving figures: TTFT and TPOT (mean, p90, the accuracy ledger's
// error on measured runs like this), cost per million output tokens (or where to set a
// price) and the workload they are for, and its memory fit redrawn with the workload's
// engine settings, from the serving runner's simulation of the Serving
// panel's workload (web/serving-runner.js). An overloaded run says so instead of a number
// that only grows with the run; a request that cannot be served says why.
import { h, fill, fixed, int } from './dom.js';
import { ms, validationWords } from './serving-panel.js';
import { noFitWords, showSummary } from './summary-strip.js';
import { engineMemory } from './serving-state.js';

/** Moves the focus to the Serving panel's $ per GPU-hour field (it scrolls into view). */
function focusPrice(event) {
  const input = document.getElementById('serve-usd');
  if (!input) return;
  event.preventDefault();
  input.focus();
}

/** One latency of a serve result in the strip: `which` is 'ttft' or 'tpot'. */
function latency(item, r, which) {
  const x = r[`${which}_ms`];
  const st = r.steady_state;
  const overloaded = st?.overloaded === true;
  item.dataset.value = String(x.mean ?? '');
  item.dataset.p90 = String(x.p90 ?? '');
  item.classList.toggle('overloaded', overloaded);
  const ledger = validationWords(r.validation, which);
  const dd = item.querySelector('dd');
  if (x.count === 0) return fill(dd, h('strong', { text: '—' }), h('small', { text: 'none: one token per request' }));
  if (overloaded && which === 'ttft') {
    return fill(dd, h('strong', { class: 'no-fit', text: 'Overloaded' }),
      h('small', { text: `${fixed(st.offered_request_rate, 2)} requests/s sent, about ` +
        `${fixed(st.sustainable_request_rate, 2)} sustained: TTFT grows with the run (mean ${ms(x.mean)} in this ` +
        `one); ${ledger}` }));
  }
  fill(dd, h('strong', { text: ms(x.mean) }),
    h('small', { text: `${overloaded ? 'overloaded; ' : ''}mean; p90 ${ms(x.p90)}; ${ledger}` }));
}

/** Where the strip's serving figures stand when there is no result: `words` in place of each. */
function without(items, words, link) {
  for (const item of items) {
    delete item.dataset.value;
    delete item.dataset.p90;
    item.classList.remove('overloaded');
    fill(item.querySelector('dd'), h('strong', { text: '—' }), h('small', {}, words, link ? ' ' : null, link));
  }
}

/**
 * Shows the runner's result in the strip `root` (#summary, whose figures index.html lays
 * out). `root.dataset.serving` says where it is: 'running', 'done', 'error' or 'cancelled'.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} root
 * @param {import('./serving-runner.js').ServingRunner} runner
 */
export function servingSummary({ store, calc }, root, runner) {
  const [ttft, tpot, cost] = ['ttft', 'tpot', 'cost'].map((id) => /** @type {HTMLElement} */ (
    root.querySelector(`#sum-${id}`)));
  const workload = /** @type {HTMLElement} */ (root.querySelector('#sum-workload'));
  const toPanel = () => h('a', { href: '#serving-panel', text: 'Serving panel' });

  /** @param {import('./serving-runner.js').Run | null} run */
  function show(run) {
    if (!run) return;
    root.dataset.serving = run.status;
    const r = run.result;
    const w = run.workload;
    const load = w.load === 'rate' ? `${w.rate} requests/s` : `${w.concurrency} concurrent clients`;
    fill(workload, `TTFT, TPOT and cost for ${int(Number(w.input) || 0)} input and ${int(Number(w.output) || 0)} ` +
      `output tokens per request at ${load}${r ? `, ${int(r.workload.num_requests)} requests` : ''}, simulated ` +
      'step by step', run.status === 'running' ? ' (simulating…)' : '', '; change the workload in the ', toPanel(),
      '.');
    if (run.status === 'error') {
      if (store.good && noFitWords(engineMemory(calc, store.good, runner.workload))) {
        without([ttft, tpot], 'not served: the model does not fit');
        without([cost], 'nothing served');
      } else {
        without([ttft, tpot, cost], `not simulated: ${run.error?.message}`);
      }
      return;
    }
    if (!r) {
      if (run.status === 'cancelled') without([ttft, tpot, cost], 'cancelled in the', toPanel());
      else for (const item of [ttft, tpot, cost]) item.classList.add('pending');
      return;
    }
    for (const item of [ttft, tpot, cost]) item.classList.remove('pending');
    latency(ttft, r, 'ttft');
    latency(tpot, r, 'tpot');
    const usd = r.cost?.usd_per_million_output_tokens;
    cost.dataset.value = String(usd ?? '');
    fill(cost.querySelector('dd'), usd === undefined
      ? [h('a', { href: '#serve-usd', 'data-testid': 'summary-set-price', text: 'Set $/GPU-hour',
        onclick: focusPrice }), h('small', { text: 'for the cost per million output tokens' })]
      : [h('strong', { text: `$${fixed(usd, 2)}` }),
        h('small', { text: `per million output tokens at $${fixed(w.usd, 2)} per GPU-hour` })]);
  }

  /**
   * The step time and memory fit again, the fit with the engine settings of the workload the
   * runner simulates (the Serving panel's): the first view drew them with the default engine.
   */
  function showMemory() {
    if (store.good) showSummary(store.good, engineMemory(calc, store.good, runner.workload));
  }

  runner.subscribe((event, run) => {
    if (event === 'start' || event === 'workload' || event === 'error') showMemory();
    if (event !== 'progress' && event !== 'point') show(run);
  });
  // After the first view's drawing of each priced step (app.js subscribed first).
  store.subscribe((change) => { if (change === 'priced') showMemory(); });
  showMemory();
  show(runner.run);
}
