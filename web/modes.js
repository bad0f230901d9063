// SPDX-License-Identifier: Apache-2.0
// Every mode priced side by side, and the switches and parameters of the corrected
// model, all read from presets().modes and the results' `corrected` object.
import { h, int, parseTyped, timeUs, deltaTime, deltaPct, docLink, withDocLinks } from './dom.js';
import { toRequest } from './state.js';
import { catalogue, MODE } from './catalogue.js';
import { accuracyFacts } from './results.js';

/** The core's one-line description of a corrected switch, or of a mode. */
const explain = (name) => catalogue.corrected.switches.find((s) => s.name === name)?.description ?? '';
const describeMode = (name) => catalogue.modes.find((m) => m.name === name)?.description ?? '';

// Each mode's page of docs (web/dist/docs/<page>.html, rendered from docs/).
const MODE_DOCS = { [MODE.reference]: 'REFERENCE-MODEL', [MODE.corrected]: 'CORRECTED-MODE',
  [MODE.measured]: 'MEASURED-MODE' };
let accuracy; // docs/accuracy.json (npm run accuracy), read once for the page (results.js)

/** The modes in words, the measured error of each and which is the most accurate. */
function modesExplained(modes) {
  const list = h('dl', { class: 'mode-list' });
  const note = h('p', { class: 'muted', 'data-testid': 'accuracy' });
  const fill = (acc) => {
    list.replaceChildren(...modes.flatMap((mode) => {
      const text = describeMode(mode);
      const doc = MODE_DOCS[mode];
      const a = acc?.modes?.[mode];
      return [h('dt', {}, h('code', { text: mode }), a ? ` · ${a.mape.toFixed(2)}% mean error` : ''),
        h('dd', {}, withDocLinks(text), // the core's words name their document: a link to its page
          doc ? [' ', docLink(doc, 'How it works')] : null)];
    }));
    const ranked = modes.filter((m) => acc?.modes?.[m]).sort((a, b) => acc.modes[a].mape - acc.modes[b].mape);
    note.replaceChildren(...(ranked.length ? [`Most accurate: `, h('strong', { text: ranked[0] }),
      `. Mean absolute error against ${int(acc.steps)} measured vLLM steps (${acc.setup}; ${acc.fitted}). `,
      docLink('ACCURACY', 'Accuracy in detail')] : []));
  };
  fill(accuracy);
  if (!accuracy) {
    accuracyFacts().then((acc) => {
      accuracy = acc;
      fill(acc);
    });
  }
  return h('div', {}, list, note);
}

/** Each mode priced on the priced `good` step: [{mode, result} | {mode, error}]. */
function modeRows(calc, presets, { state, result }) {
  return presets.modes.map((mode) => {
    if (mode === state.mode) return { mode, result };
    try {
      return { mode, result: calc.price(toRequest(state, mode)) };
    } catch (error) {
      return { mode, error: error.message };
    }
  });
}

/**
 * modeRows of a big step, priced in the pricing worker at summary detail (the table shows
 * the step time); each result's `corrected` (the switches and parameters the controls show,
 * which do not depend on the step's rows) comes from the mode priced with no rows, here.
 * The worker holds the step's request: each mode is sent as the change to it, as toRequest
 * makes it (another mode than the state's has no `corrected`).
 * @param {ReturnType<typeof import('./pricer.js').createPricer>} pricer
 */
function modeRowsInWorker(calc, pricer, presets, { state, request, result }) {
  return Promise.all(presets.modes.map(async (mode) => {
    if (mode === state.mode) return { mode, result };
    const patch = { mode, corrected: undefined };
    try {
      const summary = await pricer.summary(request, patch);
      let settings;
      try {
        settings = calc.price({ ...request, ...patch, step: {} }).corrected;
      } catch {
        settings = undefined;
      }
      return { mode, result: { step_time_us: summary.step_time_us, corrected: settings } };
    } catch (error) {
      if (error.code === 'cancelled') throw error;
      return { mode, error: error.message };
    }
  }));
}

/** The comparison table of modeRows: each mode's step time, delta against the first. */
function compareTable(rows, { state }) {
  const ref = rows[0].result?.step_time_us;
  const overrides = state.corrected ? ' with your switches' : '';
  const table = h('table', { class: 'modes' },
    h('thead', {},
      h('tr', {},
      ['Mode', 'Step time', 'Difference',
      ''].map((t, i) => h('th', { scope: 'col', class: i ? 'num' : '', text: t })))),
    h('tbody', {}, rows.map(({ mode, result: r, error }, i) => {
      const delta = r && ref ? r.step_time_us - ref : null;
      return h('tr', { class: mode === state.mode ? 'current' : '' },
        h('th', { scope: 'row', text: mode + (mode === state.mode ? ` (shown${overrides})` : '') }),
        error ? h('td', { colspan: 3 }, withDocLinks(error)) : [
          h('td', { class: 'num', text: timeUs(r.step_time_us) }),
          h('td', { class: 'num', text: i === 0 || delta === null ? 'reference' : deltaTime(delta * 1e-6) }),
          h('td', { class: 'num', text: i === 0 || delta === null ? '' : deltaPct(delta / ref) }),
        ]);
    })));
  const note = rows.length < 2 && h('p', { class: 'muted',
    text: `This build has one mode, ${rows[0].mode}; other modes appear beside it when the module offers them.` });
  return { nodes: [table, note].filter(Boolean), settings: rows.map((r) => r.result?.corrected).find(Boolean) };
}

/**
 * Every mode priced side by side, and the switch and parameter controls of the shown
 * mode, built once per set of names and refreshed in place.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} root
 * @returns {import('./store.js').Panel}
 */
export function modesSection({ calc, pricer, presets, store, fields }, root) {
  const table = h('div');
  root.append(modesExplained(presets.modes));
  const controls = h('div', { class: 'switches' });
  const summary = h('summary', { text: 'Switches and parameters' });
  const details = h('details', {}, summary, controls);
  root.append(table, details);
  let names = '';
  const boxes = new Map();
  const inputs = new Map();

  function edit(kind, name, value) {
    const current = store.state.corrected || {};
    store.set({ corrected: { ...current, [kind]: { ...(current[kind] || {}), [name]: value } } });
  }
  function build(settings) {
    boxes.clear();
    inputs.clear();
    const switchList = Object.keys(settings.switches || {}).map((name) => {
      const box = h('input', { type: 'checkbox', name: `switch-${name}` });
      box.addEventListener('change', () => edit('switches', name, box.checked));
      boxes.set(name, box);
      return h('label', { class: 'switch' }, box, ' ', h('code', { text: name }),
        h('small', { text: ` ${explain(name)}` }));
    });
    const paramList = Object.keys(settings.params || {}).map((name) => {
      const input = h('input', { type: 'text', inputmode: 'decimal', 'data-kind': 'number', name: `param-${name}` });
      input.addEventListener('input', () => edit('params', name, parseTyped(input.value)));
      inputs.set(name, input);
      fields.add(`corrected.params.${name}`, input);
      return h('label', { class: 'field' }, h('span', { class: 'label', text: name }), input);
    });
    const reset = h('button',
      { type: 'button', text: 'Mode defaults', onclick: () => store.set({ corrected: null }) });
    summary.textContent = `Switches and parameters of the shown mode, ${store.state.mode} ` +
      `(${switchList.length} + ${paramList.length})`;
    controls.replaceChildren(h('h3', { text: 'Switches' }), ...switchList,
      h('h3', { text: 'Parameters' }), h('div', { class: 'grid' }, paramList), h('div', { class: 'actions' }, reset),
      h('small', { class: 'muted' },
        'Each switch fixes one documented weakness of the reference model; see ', docLink('CORRECTED-MODE'), '.'));
  }

  /**
   * Re-prices the other modes and refreshes the controls for the priced `good`; for a big
   * step, when the pricing worker has priced them (the promise of that).
   */
  function priced(good) {
    if (!pricer.big(good.request)) return show(good, modeRows(calc, presets, good));
    return modeRowsInWorker(calc, pricer, presets, good).then((rows) => show(good, rows), (error) => {
      if (error.code !== 'cancelled') throw error; // cancelled: a newer edit is being priced
    });
  }

  function show(good, rows) {
    const { result } = good;
    const { nodes, settings } = compareTable(rows, good);
    table.replaceChildren(...nodes);
    details.hidden = !settings;
    if (!settings) {
      controls.replaceChildren();
      names = '';
      return;
    }
    const key = JSON.stringify([Object.keys(settings.switches || {}), Object.keys(settings.params || {}),
      store.state.mode]);
    if (key !== names) build(settings);
    names = key;
    const shown = result.corrected; // absent: the shown mode runs with every switch off
    for (const [name, box] of boxes) box.checked = !!shown?.switches?.[name];
    const typed = store.state.corrected?.params;
    for (const [name, input] of inputs) {
      if (document.activeElement !== input) input.value = typed?.[name] ?? settings.params[name];
    }
  }
  return { priced };
}
