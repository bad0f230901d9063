// The calculator page: loads the module, builds the panels, and reprices on every
// edit (coalesced to one animation frame). The URL always holds the priced state.
import { load } from '../wasm/stepcalc.js';
import { $, h } from './dom.js';
import { FieldRegistry } from './errors.js';
import { defaultState, toRequest, fromRequest, encodeHash, decodeHash, clone } from './state.js';
import { modelPanel, trimConfig, configName } from './model-panel.js';
import { setupPanel } from './setup-panel.js';
import { stepEditor } from './step-editor.js';
import { ioPanel } from './io-panel.js';
import { headline, renderDetails } from './results.js';
import { breakdownChart } from './charts.js';
import { sweepTasks } from './sweeps.js';
import { modesSection } from './modes.js';

const embed = new URLSearchParams(location.search).get('embed') === '1';
const widthOf = (el) => Math.max(260, Math.floor(el.clientWidth || 600));

async function main() {
  const calc = await load();
  const app = { calc, presets: calc.presets(), state: defaultState(), fields: new FieldRegistry($('#errors')) };
  let scheduled = false;
  let good = null; // {state, request, result} of the last priced state
  let firstDone = false;

  /** A state from a request object (CLI format); config models are trimmed by the core. */
  function stateFromRequest(request) {
    const s = fromRequest(request);
    if (typeof s.model === 'object') {
      s.modelName = s.modelName || configName(s.model);
      s.model = trimConfig(calc, s.model);
    }
    return s;
  }

  /** The state the location hash asks for, or the defaults and why. */
  function stateFromHash() {
    try {
      const decoded = decodeHash(location.hash);
      if (!decoded) return { state: defaultState() };
      if (decoded.text !== undefined) {
        // The core checks a #json= request as written, before the page keeps only the
        // fields it shows: unknown fields, repeated keys, ids, tags and numbers that
        // JSON.parse would round are errors here exactly as in the CLI.
        const checked = calc.price(decoded.text);
        const preset = checked.model.source.match(/^preset:(.*)$/);
        if (preset && typeof decoded.request.model === 'string') decoded.request.model = preset[1];
      }
      const s = decoded.state ? decoded.state : stateFromRequest(decoded.request);
      if (decoded.state && typeof s.model === 'object') s.model = trimConfig(calc, s.model);
      calc.price(toRequest(s));
      return { state: s };
    } catch (error) {
      const where = error.path ? `${error.path}: ` : '';
      return { state: defaultState(), error: `This link's step cannot be shown (${where}${error.message}) The default step is shown instead.` };
    }
  }

  const linkError = $('#link-error');
  function showLinkError(message) {
    linkError.replaceChildren(message ? h('p', { class: 'field-error', 'data-testid': 'error', role: 'alert', text: message }) : '');
  }

  const panels = embed ? [] : [
    modelPanel(app, $('#model-panel')),
    setupPanel(app, $('#setup-panel')),
    stepEditor(app, $('#step-panel')),
  ];
  const io = embed ? null : ioPanel(app, $('#share'), $('#io-panel'));
  const modes = embed ? null : modesSection(app, $('#modes'));

  // The step time and breakdown render in the edit's frame; the other modes, the
  // lookup table and each sweep (many more pricings and rows) follow as separate
  // tasks, so input between them is handled at once and a newer edit cancels the rest.
  let secondary = 0;
  let pending = [];
  let secondaryStart = 0;
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
  function renderCharts() {
    if (!good) return;
    $('#breakdown').replaceChildren(breakdownChart(good.result, widthOf($('#breakdown'))));
    clearTimeout(secondary);
    pending = [];
    if (embed) return;
    const { request, state, result } = good;
    secondaryStart = performance.now();
    pending = [() => modes.render(result), () => renderDetails(result, $('#details')),
      ...sweepTasks(calc, request, state, result, $('#sweeps'), widthOf($('#sweeps')))];
    secondary = setTimeout(runSecondary, 0);
  }

  function writeUrl() {
    const hash = `#${encodeHash(app.state)}`;
    if (hash !== location.hash) history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
    $('#open-full').href = `${location.pathname}${hash}`;
    io?.render();
  }

  function update() {
    scheduled = false;
    const started = performance.now();
    const request = toRequest(app.state);
    const errors = app.fields.typedErrors();
    let result = null;
    try {
      result = calc.price(request);
    } catch (error) {
      if (!errors.some((e) => e.path === error.path)) errors.push({ path: error.path, message: error.message });
    }
    app.fields.show(errors);
    $('#results').classList.toggle('stale', !result);
    $('#stale').textContent = result ? '' : 'Showing the last good result: fix the marked field to update it.';
    if (!result) return;
    good = { state: clone(app.state), request, result };
    $('#headline').replaceChildren(headline(result));
    renderCharts();
    writeUrl();
    performance.measure('stepcalc:update', { start: started });
    if (!firstDone) {
      firstDone = true;
      performance.mark('stepcalc:first-result');
    }
  }

  app.changed = () => {
    showLinkError('');
    // The previous state's follow-up work is stale now: drop it so the next frame
    // prices this edit without waiting behind it.
    clearTimeout(secondary);
    pending = [];
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(update);
    }
  };
  const renderPanels = () => panels.forEach((p) => p.render());
  app.renderPanels = renderPanels;
  // The calibration panel (and its fitting code) loads when first opened.
  $('#calibrate')?.addEventListener('toggle', function loadCalibration(event) {
    if (!event.target.open) return;
    event.target.removeEventListener('toggle', loadCalibration);
    import('./calibrate-panel.js').then((m) => m.calibratePanel(app, $('#calibrate-body'))).catch((error) => {
      $('#calibrate-body').replaceChildren(h('p', { class: 'field-error', 'data-testid': 'error', role: 'alert',
        text: `The calibration panel did not load: ${error.message}` }));
    });
  });
  app.load = async (request) => {
    app.state = stateFromRequest(request);
    renderPanels();
    app.changed();
  };

  function fromLocation() {
    const { state, error } = stateFromHash();
    app.state = state;
    renderPanels();
    update();
    showLinkError(error);
  }
  window.addEventListener('hashchange', fromLocation);
  let lastWidth = 0;
  new ResizeObserver(() => {
    const w = widthOf($('#breakdown'));
    if (w !== lastWidth) {
      lastWidth = w;
      renderCharts();
    }
  }).observe($('#breakdown'));
  fromLocation();
}

document.body.classList.toggle('embed', embed);
main().catch((error) => {
  $('#headline').replaceChildren(h('p', { class: 'field-error', 'data-testid': 'error', role: 'alert',
    text: `The pricing module did not load: ${error.message}` }));
});
