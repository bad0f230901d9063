// SPDX-License-Identifier: Apache-2.0
// The calculator page: loads the module, prices the linked (or default) step and shows
// its number first, then builds the panels; reprices on every edit (coalesced to one
// animation frame). The URL holds the priced state, except while it holds a link that
// could not be shown, which stays as it was so it can be fixed.
import { load } from '../wasm/stepcalc.js';
import { $, h, timeUs } from './dom.js';
import { FieldRegistry } from './errors.js';
import { useCatalogue, MODE } from './catalogue.js';
import { defaultState, toRequest, encodeHash, clone, hardwareKeys } from './state.js';
import { stateFromHash, stateFromRequest } from './link.js';
import { requestFromText } from './intake.js';
import { modelPanel } from './model-panel.js';
import { setupPanel } from './setup-panel.js';
import { stepEditor } from './step-editor.js';
import { ioPanel } from './io-panel.js';
import { headline, contextLine, renderDetails } from './results.js';
import { breakdownChart, breakdownCsv } from './charts.js';
import { exportButtons } from './export-buttons.js';
import { sweepTasks } from './sweeps.js';
import { modesSection } from './modes.js';
import { comparePanel } from './compare.js';
import { renderRoofline } from './roofline.js';
import { inUserWords } from './words.js';

const DENSE_PARTS = ['gemm-bf16', 'attention-bf16', 'allreduce'];
const embed = new URLSearchParams(location.search).get('embed') === '1';
const view = new URLSearchParams(location.search).get('view'); // 'serving': an embed of the Serving panel only
const nextPaint = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

// Chart widths come from a ResizeObserver, so drawing after an edit never forces a
// layout to measure them; only the very first draw reads the width once.
const widths = new Map();
const widthOf = (el) => Math.max(260, Math.floor(widths.get(el) ?? (el.clientWidth || 600)));

function errorNote(text) {
  return h('p', { class: 'field-error', 'data-testid': 'error', role: 'alert', text });
}

async function main() {
  const calc = await load({ baseUrl: new URL('wasm/', document.baseURI) });
  useCatalogue(calc.catalogue()); // throws when the page names a mode the core lacks
  hardwareKeys(); // the link's hardware keys against the core's fields: a mismatch stops here
  const app = { calc, presets: calc.presets(), state: defaultState(), pinned: null,
    fields: new FieldRegistry($('#errors')), embed,
    listeners: [] }; // listeners: called with {state, request, result} after each priced edit (the Serving panel)
  let scheduled = false;
  let good = null; // {state, request, result} of the last priced state
  let firstDone = false;
  let keepLink = false; // the address holds a link that could not be shown: leave it

  const linkError = $('#link-error');
  /** The link's error; with `offer` (the link's own state), a button that shows it anyway. */
  function showLinkError(message, offer) {
    const note = message ? errorNote(message) : '';
    if (note && offer) {
      note.append(' ', h('button', { type: 'button', text: 'Show the link\'s step anyway', onclick: () => {
        keepLink = false;
        showLinkError('');
        app.state = offer;
        renderPanels();
        update();
      } }));
    }
    linkError.replaceChildren(note);
  }

  // The step time and breakdown render in the edit's frame; everything else (other
  // modes, the lookup table, each sweep: many more pricings and rows) follows as
  // separate tasks, so input between them is handled at once and a newer edit cancels
  // the rest.
  let secondary = 0;
  let pending = [];
  let secondaryStart = 0;
  let panels = null; // built after the first number is on screen
  function runSecondary() {
    secondary = 0;
    const task = pending.shift();
    if (!task) return;
    const started = performance.now();
    task();
    performance.measure('stepcalc:secondary-task', { start: started });
    if (pending.length) secondary = setTimeout(runSecondary, 0);
    else performance.measure('stepcalc:secondary', { start: secondaryStart });
  }
  function cancelSecondary() {
    clearTimeout(secondary);
    pending = [];
  }
  const drawn = { breakdown: 0, sweeps: 0 }; // the widths the charts were drawn at
  function renderCharts() {
    if (!good) return;
    drawn.breakdown = widthOf($('#breakdown'));
    $('#breakdown').replaceChildren(breakdownChart(good.result, drawn.breakdown, { bindingOnly: embed }));
    cancelSecondary();
    if (embed || !panels) return;
    const { request, state, result } = good;
    secondaryStart = performance.now();
    drawn.sweeps = widthOf($('#sweeps'));
    const spec = (app.presets.gpu_specs || []).find((g) => g.name === state.gpu);
    pending = [() => panels.compare.render(good), () => renderRoofline(result, spec, $('#roofline'), drawn.sweeps),
      () => panels.modes.render(result), () => renderDetails(result, $('#details')),
      ...sweepTasks(calc, request, state, result, $('#sweeps'), drawn.sweeps)];
    secondary = setTimeout(runSecondary, 0);
  }

  function writeUrl() {
    const hash = `#${encodeHash(app.state, app.pinned?.state)}`;
    const here = new URL(document.URL);
    if (!keepLink && hash !== here.hash) {
      here.hash = hash;
      history.replaceState(null, '', here.href);
    }
    const full = new URL(document.URL);
    full.search = '';
    full.hash = hash;
    $('#open-full').href = full.href;
    panels?.io.render();
  }

  function update() {
    scheduled = false;
    const started = performance.now();
    const request = toRequest(app.state);
    const errors = app.fields.typedErrors();
    let result = null;
    try {
      result = calc.price(/** @type {any} */ (request));
    } catch (error) {
      if (error.code === 'kernels_not_loaded' && !errors.length && fetchKernels(request, error)) return;
      if (!errors.some((e) => e.path === error.path)) errors.push({ path: error.path, message: error.message });
    }
    app.fields.show(errors.map((e) => ({ path: e.path, message: inUserWords(e.path, e.message) })));
    $('#results').classList.toggle('stale', !result);
    $('#stale').textContent = result ? '' : 'Showing the last good result: fix the marked field to update it.';
    if (!result) return;
    good = { state: clone(app.state), request, result };
    app.good = good;
    const context = contextLine(app.state, result);
    $('#context').textContent = context;
    $('#sticky').replaceChildren(h('strong', { text: timeUs(result.step_time_us) }), ` · ${context}`);
    $('#headline').replaceChildren(headline(result, referenceOf(request)));
    panels?.list.forEach((p) => p.priced?.(result));
    app.listeners.forEach((listener) => listener(good));
    renderCharts();
    writeUrl();
    performance.measure('stepcalc:update', { start: started });
    if (!firstDone) {
      firstDone = true;
      performance.mark('stepcalc:first-result');
    }
  }

  // Beside any other mode, the reference model's figure for the same step (it prices
  // every GPU from the H100 tables, so it may refuse what the shown mode accepts).
  function referenceOf(request) {
    if (request.mode === MODE.reference) return null;
    try {
      return calc.price({ ...request, mode: MODE.reference, corrected: undefined });
    } catch {
      return null;
    }
  }

  // A GPU's measured kernel tables are fetched on first use and the step is priced
  // again when they are in: first the parts a dense BF16 model needs (GEMM, attention,
  // all-reduce: ~19 KB gzipped on an H100), then, if the step still needs more (MoE,
  // MLA, FP8), every part of that version. A refusal after that is shown as the error it is.
  const fetching = new Map(); // gpu|version -> {tries, busy}
  function fetchKernels(request, error) {
    const key = `${request.gpu}|${request.kernels ?? ''}`;
    const entry = fetching.get(key) ?? { tries: 0, busy: false };
    fetching.set(key, entry);
    if (entry.busy) return true; // priced again when the load in flight is done
    if (entry.tries >= 2) return false;
    entry.tries += 1;
    entry.busy = true;
    $('#stale').textContent = `Loading the measured kernel tables for ${request.gpu}…`;
    const set = calc.presets().kernels.find((k) => k.gpu.toUpperCase() === String(request.gpu).toUpperCase() &&
      (request.kernels ? k.version === request.kernels : k.default));
    const dense = set?.parts.map((p) => p.name).filter((n) => DENSE_PARTS.includes(n));
    calc.loadKernels(request.gpu, request.kernels, entry.tries === 1 && dense?.length ? dense : undefined)
      .then(() => {
        entry.busy = false;
        reprice();
      }, (failure) => {
        entry.busy = false;
        app.fields.show([{ path: failure.path || error.path || 'gpu', message: failure.message }]);
        $('#stale').textContent = `The kernel tables for ${request.gpu} did not load.`;
      });
    return true;
  }
  app.fetchKernels = fetchKernels;

  // The previous state's follow-up work is stale now: drop it so the next frame
  // prices this state without waiting behind it.
  function reprice() {
    cancelSecondary();
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(update);
    }
  }
  app.changed = () => {
    keepLink = false;
    showLinkError('');
    reprice();
  };
  const renderPanels = () => panels?.list.forEach((p) => p.render());
  app.renderPanels = renderPanels;
  /** Imports request JSON text, checked by the core as written (intake.js); throws StepCalcError. */
  app.loadText = (text) => {
    app.state = stateFromRequest(calc, requestFromText(calc, text).request);
    renderPanels();
    app.changed();
  };

  /** Applies the location's link: a good one replaces the state, a bad one only says why. */
  function fromLocation(first) {
    const { state, pinned, error, offer } = stateFromHash(calc, location.hash);
    if (error) {
      keepLink = true;
      const next = embed ? 'The page that embeds it needs to fix its link.'
        : first ? 'The default step is shown below; fix the address or edit the step.'
          : 'Your step is still shown; fix the address or go on editing.';
      showLinkError(`${error} ${next}`, !embed && offer);
      if (embed) {
        // An embed shows what its link asks for or nothing: no other step's number.
        $('#headline').replaceChildren();
        $('#context').textContent = '';
        document.body.classList.add('broken');
        return;
      }
      if (!first) return;
      app.state = defaultState();
      app.pinned = null;
    } else {
      keepLink = false;
      showLinkError('');
      document.body.classList.remove('broken');
      app.state = state ?? defaultState();
      app.pinned = pinned ? { state: pinned } : null;
    }
    renderPanels();
    update();
  }

  fromLocation(true);
  window.addEventListener('hashchange', () => fromLocation(false));
  const observer = new ResizeObserver((entries) => {
    for (const entry of entries) widths.set(entry.target, Math.floor(entry.contentRect.width));
    if (drawn.breakdown !== widthOf($('#breakdown')) ||
      (panels && drawn.sweeps !== widthOf($('#sweeps')))) renderCharts();
  });
  observer.observe($('#breakdown'));
  observer.observe($('#sweeps'));
  // The Serving panel (and its worker) loads after the first view, or at once as an embed's only view.
  const servingPanel = () => import('./serving-panel.js')
    .then((m) => m.servingPanel(app, $('#serving-panel'), { view }))
    .catch((error) => $('#serving-panel').append(errorNote(`The serving panel did not load: ${error.message}`)));
  if (embed) {
    if (view === 'serving') servingPanel();
    return;
  }

  // The number is on screen: build the panels after it has been painted.
  await nextPaint();
  const list = [modelPanel(app, $('#model-panel')), setupPanel(app, $('#setup-panel')),
    stepEditor(app, $('#step-panel'))];
  $('#breakdown').after(exportButtons({ name: 'stepcalc-breakdown', label: 'the breakdown',
    csv: () => breakdownCsv(good.result), chart: () => $('#breakdown svg.breakdown') }));
  panels = { list, io: ioPanel(app, $('#share'), $('#io-panel')), modes: modesSection(app, $('#modes')),
    compare: comparePanel(app, $('#compare-controls'), $('#compare')) };
  renderPanels();
  update();
  servingPanel();

  // The calibration panel (and its fitting code) loads when first opened.
  $('#calibrate')?.addEventListener('toggle', function loadCalibration(event) {
    if (!event.target.open) return;
    event.target.removeEventListener('toggle', loadCalibration);
    import('./calibrate-panel.js').then((m) => m.calibratePanel(app, $('#calibrate-body'))).catch((error) => {
      $('#calibrate-body').replaceChildren(errorNote(`The calibration panel did not load: ${error.message}`));
    });
  });
}

document.documentElement.classList.add('ran'); // hides the "opened from a file?" note
document.body.classList.toggle('embed', embed);
main().catch((error) => {
  $('#headline').replaceChildren(errorNote(`The pricing module did not load: ${error.message}`));
});
