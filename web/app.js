// SPDX-License-Identifier: Apache-2.0
// The calculator page: loads the module, prices the linked (or default) step and shows
// its number first (in the measured mode once its GPU's kernel tables, preloaded by
// index.html, are in; while they load, the reference model's figure for the step, labelled:
// pricing.js), then, after that paint, builds the panels, reads docs/accuracy.json
// and loads the serving bundle; reprices on every edit (coalesced to one animation frame).
// The page's state lives in one store (store.js); this file wires the parts to it: pricing
// (pricing.js; a big step in the pricing worker, pricer.js), the number and what follows it
// (result-view.js), the address bar (address.js) and the panels.
import { load } from '../wasm/stepcalc.js';
import { $, int, nextPaint } from './dom.js';
import { FieldRegistry } from './errors.js';
import { useCatalogue } from './catalogue.js';
import { hardwareKeys } from './state.js';
import { createStore } from './store.js';
import { createPricing } from './pricing.js';
import { createPricer } from './pricer.js';
import { resultView } from './result-view.js';
import { addressBar, errorNote } from './address.js';
import { modelPanel } from './model-panel.js';
import { setupPanel } from './setup-panel.js';
import { stepEditor } from './step-editor.js';
import { ioPanel } from './io-panel.js';
import { breakdownCsv } from './charts.js';
import { exportButtons } from './export-buttons.js';
import { aboutExport } from './export-about.js';
import { modesSection } from './modes.js';
import { comparePanel } from './compare.js';
import { showSummary } from './summary-strip.js';

const embed = new URLSearchParams(location.search).get('embed') === '1';
const view = new URLSearchParams(location.search).get('view'); // 'serving', 'plan': an embed of that panel only

/**
 * The module, its facts and the store, with pricing, the result view and the address
 * bar subscribed to it. `panels.now` are told of each price in its frame, `panels.later`
 * in the follow-up tasks (they price more); both are empty until built. `contextOf()` is the
 * panels' context, made on its first call (after the first number: it parses the presets).
 */
async function setUp() {
  const baseUrl = new URL('wasm/', document.baseURI);
  // load() starts compiling the module off the page's thread before it returns; meanwhile this
  // thread makes the number's formatting, whose first use sets up the browser's (~10-15 ms, once;
  // it was on the first number's path: requestIdleCallback found no idle time before it).
  const loading = load({ baseUrl });
  int(0);
  const pricer = createPricer(await loading, baseUrl.href);
  const { calc } = pricer; // notes a big step priced on this thread (it should be in the worker)
  useCatalogue(calc.catalogue()); // throws when the page names a mode the core lacks
  hardwareKeys(); // the link's hardware keys against the core's fields: a mismatch stops here
  const store = createStore();
  const fields = new FieldRegistry($('#errors'));
  const results = resultView({ calc, pricer, embed });
  const pricing = createPricing({ calc, pricer, store, fields, results });
  const address = addressBar({ calc, pricer, store, embed, priceNow: pricing.priceNow });
  /** @type {{now: import('./store.js').Panel[], later: import('./store.js').Panel[]}} */
  const panels = { now: [], later: [] };
  store.subscribe((change, { good }) => {
    if (change === 'priced') {
      address.write();
      results.show(good);
      if (!embed) showSummary(good);
      for (const panel of panels.now) panel.priced?.(good);
      return;
    }
    results.cancel(); // the previous state's follow-up work is stale now
    pricer.cancel(); // and so are the pricing worker's jobs
    address.edited();
    if (change === 'replaced') for (const panel of [...panels.now, ...panels.later]) panel.render?.();
    pricing.reprice();
  });
  /** @type {import('./store.js').PanelContext | undefined} */
  let context;
  const contextOf = () => (context ??= Object.freeze({ calc, pricer, presets: calc.presets(), store, fields,
    fetchKernels: pricing.fetchKernels }));
  return { contextOf, pricing, results, address, panels };
}

/**
 * Builds the panels (after the first number is painted) and shows the priced state with them
 * in place: the first result again when it is still the state's, else the state priced now.
 */
function buildPanels({ contextOf, pricing, results, panels }) {
  const context = contextOf();
  panels.now.push(modelPanel(context, $('#model-panel')), setupPanel(context, $('#setup-panel')),
    stepEditor(context, $('#step-panel')), ioPanel(context, $('#share'), $('#io-panel')));
  panels.later.push(comparePanel(context, $('#compare-controls'), $('#compare')), modesSection(context, $('#modes')));
  results.followUp(panels.later);
  $('#breakdown').after(exportButtons({ name: 'stepcalc-breakdown', label: 'the breakdown',
    csv: () => breakdownCsv(context.store.good.result), chart: () => $('#breakdown svg.breakdown'),
    about: () => aboutExport({ what: 'breakdown', title: 'where the time goes', good: context.store.good,
      version: context.calc.version() }) }));
  for (const panel of [...panels.now, ...panels.later]) panel.render?.();
  const { store } = context;
  if (store.good && store.good.state === store.state) store.setGood(store.good);
  else pricing.priceNow();
}

/**
 * The Serving panel, the summary strip's serving figures and the A/B comparison's, one
 * simulation of the workload for all (web/serving.js, with its worker): a bundle of its own,
 * loaded by import().
 */
function loadServing(context) {
  return import('./serving.js')
    .then((m) => m.startServing(context, $('#serving-panel'),
      { view, strip: embed ? null : $('#summary'), compare: embed ? null : $('#compare') }))
    .catch((error) => $('#serving-panel').append(errorNote(`The serving panel did not load: ${error.message}`)));
}

/** A panel in a <details> whose code (a bundle of its own) loads when it is first open. */
function loadOnOpen(details, body, load, what) {
  const first = () => {
    if (!details.open) return;
    details.removeEventListener('toggle', first);
    load(body).catch((error) => body.replaceChildren(errorNote(`The ${what} panel did not load: ${error.message}`)));
  };
  details.addEventListener('toggle', first);
  first(); // opened before the page was ready for it
}

/** The Plan panel: opened at once by a link that holds a plan, and by `?embed=1&view=plan`. */
function loadPlanOnOpen(context) {
  if (view === 'plan' || context.store.state.plan) $('#plan').open = true;
  loadOnOpen($('#plan'), $('#plan-body'),
    (body) => import('./plan-panel.js').then((m) => m.planPanel(context, body, { view })), 'plan');
}

async function main() {
  const page = await setUp();
  window.addEventListener('hashchange', () => page.address.fromLocation(false));
  await page.address.fromLocation(true); // a big link is checked in the pricing worker first
  if (embed) {
    // The serving view simulates the priced step: once it is priced (else a price landing
    // after the first simulation started would serve, and redraw its cards, again).
    if (view === 'serving') await page.pricing.first;
    if (view === 'serving') loadServing(page.contextOf());
    if (view === 'plan') loadPlanOnOpen(page.contextOf());
    return;
  }
  await page.pricing.first; // the number (or why there is none) is on screen, its GPU's tables read first
  await nextPaint(); // build the panels after it has been painted
  buildPanels(page);
  const context = page.contextOf();
  loadServing(context); // after the first view: the strip's TTFT and TPOT come from it
  loadOnOpen($('#calibrate'), $('#calibrate-body'),
    (body) => import('./calibrate-panel.js').then((m) => m.calibratePanel(context, body)), 'calibration');
  loadPlanOnOpen(context);
}

document.documentElement.classList.add('ran'); // hides the "opened from a file?" note
document.body.classList.toggle('embed', embed);
main().catch((error) => {
  $('#headline').replaceChildren(errorNote(`The pricing module did not load: ${error.message}`));
});
