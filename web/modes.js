// Every mode priced side by side, and the switches and parameters of the corrected
// model, all read from presets().modes and the results' `corrected` object.
import { h, int, parseTyped } from './dom.js';
import { toRequest } from './state.js';

const EXPLAIN = {
  decode_harmonic_mean: 'Decode attention time is the sum of each request\'s own time, not total FLOPs at an arithmetic-mean MFU.',
  decode_attention_latency: 'Decode attention from the measured kernel latency instead of MFU rounded to 3 decimals.',
  prefill_attention_length: 'Prefill attention at each request\'s own length, not at a power-of-two bucket.',
  gemm_roofline: 'GEMM MFU is relative to the FP8 peak the table was measured at; priced as a roofline.',
  tp_allreduce: 'Adds the two NVLink all-reduces per layer that tensor parallelism needs.',
  cpu_overhead: 'CPU cost per step and per request instead of 100 us per layer.',
  fused_mixed_batch: 'A mixed step is one forward pass over all tokens, not max(prefill, decode).',
};

/** The comparison table: each mode priced on the same step, delta against the first. */
function compareTable(app, result) {
  const { state, presets, calc } = app;
  const rows = presets.modes.map((mode) => {
    if (mode === state.mode) return { mode, result };
    try {
      return { mode, result: calc.price(toRequest(state, mode)) };
    } catch (error) {
      return { mode, error: error.message };
    }
  });
  const ref = rows[0].result?.step_time_us;
  const overrides = state.corrected ? ' with your switches' : '';
  const table = h('table', { class: 'modes' },
    h('thead', {}, h('tr', {}, ['Mode', 'Step time (us)', 'Delta (us)', 'Delta'].map((t) => h('th', { scope: 'col', text: t })))),
    h('tbody', {}, rows.map(({ mode, result: r, error }, i) => {
      const delta = r && ref ? r.step_time_us - ref : null;
      const sign = delta > 0 ? '+' : '';
      return h('tr', { class: mode === state.mode ? 'current' : '' },
        h('th', { scope: 'row', text: mode + (mode === state.mode ? ` (shown${overrides})` : '') }),
        error ? h('td', { colspan: 3, text: error }) : [
          h('td', { class: 'num', text: int(r.step_time_us) }),
          h('td', { class: 'num', text: i === 0 || delta === null ? 'reference' : sign + int(delta) }),
          h('td', { class: 'num', text: i === 0 || delta === null ? '' : `${sign}${((100 * delta) / ref).toFixed(2)}%` }),
        ]);
    })));
  const note = rows.length < 2 && h('p', { class: 'muted',
    text: `This build has one mode, ${rows[0].mode}; other modes appear beside it when the module offers them.` });
  return { nodes: [table, note].filter(Boolean), settings: rows.map((r) => r.result?.corrected).find(Boolean) };
}

/** Switch and parameter controls, built once per set of names and refreshed in place. */
export function modesSection(app, root) {
  const table = h('div');
  const controls = h('div', { class: 'switches' });
  const summary = h('summary', { text: 'Switches and parameters' });
  const details = h('details', {}, summary, controls);
  root.append(table, details);
  let names = '';
  const boxes = new Map();
  const inputs = new Map();

  function edit(kind, name, value) {
    const current = app.state.corrected || {};
    app.state.corrected = { ...current, [kind]: { ...(current[kind] || {}), [name]: value } };
    app.changed();
  }
  function build(settings) {
    boxes.clear();
    inputs.clear();
    const switchList = Object.keys(settings.switches || {}).map((name) => {
      const box = h('input', { type: 'checkbox', name: `switch-${name}` });
      box.addEventListener('change', () => edit('switches', name, box.checked));
      boxes.set(name, box);
      return h('label', { class: 'switch' }, box, ' ', h('code', { text: name }), h('small', { text: ` ${EXPLAIN[name] || ''}` }));
    });
    const paramList = Object.keys(settings.params || {}).map((name) => {
      const input = h('input', { type: 'text', inputmode: 'decimal', 'data-kind': 'number', name: `param-${name}` });
      input.addEventListener('input', () => edit('params', name, parseTyped(input.value)));
      inputs.set(name, input);
      app.fields.add(`corrected.params.${name}`, input);
      return h('label', { class: 'field' }, h('span', { class: 'label', text: name }), input);
    });
    const reset = h('button', { type: 'button', text: 'Mode defaults', onclick: () => { app.state.corrected = null; app.changed(); } });
    summary.textContent = `Switches and parameters of the shown mode, ${app.state.mode} (${switchList.length} + ${paramList.length})`;
    controls.replaceChildren(h('h3', { text: 'Switches' }), ...switchList,
      h('h3', { text: 'Parameters' }), h('div', { class: 'grid' }, paramList), h('div', { class: 'actions' }, reset),
      h('small', { class: 'muted', text: 'Each switch fixes one documented weakness of the reference model; see docs/CORRECTED-MODE.md.' }));
  }

  /** Re-prices the other modes and refreshes the controls for `result`. */
  function render(result) {
    const { nodes, settings } = compareTable(app, result);
    table.replaceChildren(...nodes);
    details.hidden = !settings;
    if (!settings) {
      controls.replaceChildren();
      names = '';
      return;
    }
    const key = JSON.stringify([Object.keys(settings.switches || {}), Object.keys(settings.params || {}), app.state.mode]);
    if (key !== names) build(settings);
    names = key;
    const shown = result.corrected; // absent: the shown mode runs with every switch off
    for (const [name, box] of boxes) box.checked = !!shown?.switches?.[name];
    for (const [name, input] of inputs) {
      if (document.activeElement !== input) input.value = app.state.corrected?.params?.[name] ?? settings.params[name];
    }
  }
  return { render };
}
