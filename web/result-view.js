// SPDX-License-Identifier: Apache-2.0
// The priced state on screen: the step time, its context line and the sticky bar, and
// the breakdown chart, all in the edit's frame; everything else (the panels that price
// more, such as the other modes and A of a comparison, the roofline, the lookup table,
// each sweep: many more pricings and rows) follows as separate tasks, so input between
// them is handled at once and a newer edit cancels the rest. For a big step those tasks
// post their pricing to the pricing worker (web/pricer.js) and the next task waits for it.
import { $, h, timeUs } from './dom.js';
import { MODE, catalogue } from './catalogue.js';
import { headline, accuracyFacts, accuracyLine, contextLine, renderDetails, referenceFirstLine } from './results.js';
import { noFitWords } from './summary-strip.js';
import { breakdownChart } from './charts.js';
import { sweepTasks } from './sweeps.js';
import { renderRoofline } from './roofline.js';
import { aboutExport } from './export-about.js';

/** The GPU's specification in the core's catalogue (interconnect, peaks), or undefined. */
const gpuSpec = (name) => (catalogue.gpu_specs || []).find((g) => g.name === name);

/**
 * @param {{calc: any, pricer: ReturnType<typeof import('./pricer.js').createPricer>,
 *   embed: boolean}} options `embed`: only the number and the bars that bind, no follow-up work.
 */
export function resultView({ calc, pricer, embed }) {
  // Chart widths come from a ResizeObserver, so drawing after an edit never forces a
  // layout to measure them; only the very first draw reads the width once.
  const widths = new Map();
  const widthOf = (el) => Math.max(260, Math.floor(widths.get(el) ?? (el.clientWidth || 600)));
  const drawn = { breakdown: 0, sweeps: 0 }; // the widths the charts were drawn at
  /** @type {import('./store.js').Panel[] | null} panels priced in follow-up tasks; null until they are built */
  let later = null;
  /** @type {import('./store.js').Good | null} */
  let good = null;
  let secondary = 0;
  let pending = [];
  let secondaryStart = 0;
  let round = 0; // counts the cancels: a task's worker reply after one starts nothing

  function runSecondary() {
    secondary = 0;
    const task = pending.shift();
    if (!task) return;
    const started = performance.now();
    const mine = round;
    const waiting = task(); // a promise when the task's pricing went to the pricing worker
    performance.measure('stepcalc:secondary-task', { start: started });
    const next = () => {
      if (mine !== round) return;
      if (pending.length) secondary = setTimeout(runSecondary, 0);
      else performance.measure('stepcalc:secondary', { start: secondaryStart });
    };
    if (waiting instanceof Promise) waiting.then(next);
    else next();
  }

  /** Drops the follow-up work not done yet (the state it was for is stale). */
  function cancel() {
    clearTimeout(secondary);
    pending = [];
    round++;
  }

  function renderCharts() {
    if (!good) return;
    drawn.breakdown = widthOf($('#breakdown'));
    $('#breakdown').replaceChildren(breakdownChart(good.result, drawn.breakdown, { bindingOnly: embed }));
    cancel();
    if (embed || !later) return;
    const { request, state, result, lookups, token } = good;
    secondaryStart = performance.now();
    drawn.sweeps = widthOf($('#sweeps'));
    const spec = gpuSpec(state.gpu);
    const priced = good;
    const version = calc.version();
    /** The About of an export of this priced state (web/export-about.js). */
    const about = (what, title) => () => aboutExport({ what, title, good: priced, version });
    pending = [...later.map((panel) => () => panel.priced(priced)),
      () => renderRoofline(result, spec, $('#roofline'), drawn.sweeps, about('roofline', 'roofline of the step')),
      () => renderDetails(result, $('#details'), about('lookups', 'every table lookup'),
        lookups === undefined ? null : { total: lookups, csv: () => pricer.lookupsCsv(request, token) }),
      ...sweepTasks({ calc, pricer }, request, state, result, $('#sweeps'), drawn.sweeps, about)];
    secondary = setTimeout(runSecondary, 0);
  }

  // Beside any other mode, the reference model's figure for the same step (it prices
  // every GPU from the H100 tables, so it may refuse what the shown mode accepts); the
  // pricing worker gives it with a big step's result.
  // The first number's at full detail: a summary names its warnings from the presets, whose JSON
  // (~10 ms on the page's thread) the first view does not need yet.
  let shown = false;
  /** @type {{state: any, reference: any} | null} the reference figure shown first (provisional) */
  let first = null;
  function referenceOf({ state, request, reference }) {
    if (reference !== undefined) return reference;
    if (request.mode === MODE.reference) return null;
    if (first?.state === state) {
      shown = true;
      return first.reference; // priced (at full detail) for the figure shown first
    }
    const detail = shown ? { detail: 'summary' } : undefined;
    shown = true;
    try {
      return calc.price({ ...request, mode: MODE.reference, corrected: undefined }, detail);
    } catch {
      return null;
    }
  }

  // The step-level error of each mode (docs/accuracy.json, 0.5 KB): read once, after the first
  // number (followUp), with the panels; the headline gains its line, under the number, when it
  // arrives (not in an embed, whose 480 x 440 holds the number and the bars that bind).
  let accuracy = null;
  function readAccuracy() {
    accuracyFacts().then((a) => {
      accuracy = a;
      if (!good || !a) return;
      const line = accuracyLine(good.result.mode, a);
      const old = document.querySelector('#headline [data-testid="step-accuracy"]');
      if (line && !old) $('#headline .headline')?.append(line);
    });
  }

  /** Shows `priced` (the store's good): the number now, the rest in follow-up tasks. */
  function show(priced) {
    good = priced;
    const { state, result } = priced;
    const context = contextLine(state, result);
    $('#context').textContent = context;
    const noFit = noFitWords(result);
    $('#sticky').replaceChildren(h('strong', { text: timeUs(result.step_time_us) }), noFit ? ` ${noFit}` : '',
      ` · ${context}`);
    $('#headline').replaceChildren(headline(result, referenceOf(priced), accuracy, gpuSpec(state.gpu)));
    renderCharts();
  }

  /**
   * Before the first number of a step in the measured mode, while its GPU's kernel tables load
   * (web/pricing.js): `reference`, the reference model's result for the step, labelled as such in
   * the place of the measured headline's reference line, the rest in the measured headline's
   * lines, so that nothing moves when show() puts the measured figure in its place. The context
   * line is the state's (mode measured); the breakdown waits for the measured result.
   */
  function provisional(state, request, reference) {
    first = { state, reference };
    const context = contextLine(state, request);
    $('#context').textContent = context;
    $('#sticky').replaceChildren(h('strong', { text: timeUs(reference.step_time_us) }),
      ` ${MODE.reference} reference, measured loading · ${context}`);
    const view = headline(reference, null, null, gpuSpec(state.gpu));
    const number = /** @type {Element} */ (view.querySelector('[data-testid="step-time-us"]'));
    number.setAttribute('data-first', 'reference');
    // Beside the number, where the measured one has its exact microseconds: whose figure it is.
    if (number.nextElementSibling?.classList.contains('exact')) number.nextElementSibling.remove();
    number.after(h('span', { class: 'exact', text: ` ${MODE.reference} reference figure` }));
    view.append(referenceFirstLine(state.gpu));
    $('#headline').replaceChildren(view);
  }

  /**
   * From now on the `panels` (each with priced(good)) are priced in the follow-up tasks too, and
   * the headline has its accuracy line (called once the first number is on screen).
   */
  function followUp(panels) {
    later = panels;
    if (!embed) readAccuracy();
  }

  const observer = new ResizeObserver((entries) => {
    for (const entry of entries) widths.set(entry.target, Math.floor(entry.contentRect.width));
    if (drawn.breakdown !== widthOf($('#breakdown')) ||
      (later && drawn.sweeps !== widthOf($('#sweeps')))) renderCharts();
  });
  observer.observe($('#breakdown'));
  observer.observe($('#sweeps'));

  return { show, provisional, cancel, followUp };
}
