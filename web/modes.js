// Every mode the module offers, priced side by side, and the switches of a mode.
// Data-driven: the modes come from presets().modes; switches from presets() and the
// result when the core reports them (the "corrected" mode), so new modes light up
// without page changes.
import { h, int } from './dom.js';
import { toRequest } from './state.js';

const asList = (v) => (Array.isArray(v) ? v : v && typeof v === 'object' ? Object.entries(v).map(([name, x]) =>
  (x && typeof x === 'object' ? { name, ...x } : { name, on: x })) : []);
const item = (x) => (typeof x === 'string' ? { name: x } : x);

/** Switches a mode declares in presets(): presets.switches[mode] or presets[mode].switches. */
export function switchesFor(presets, mode) {
  const byMode = presets.switches && !Array.isArray(presets.switches) ? presets.switches[mode] : undefined;
  return asList(byMode ?? presets[mode]?.switches).map(item);
}

/** Checkboxes for the current mode's switches (none for a mode without them). */
export function switchControls(app) {
  const { state } = app;
  const list = switchesFor(app.presets, state.mode);
  return list.map(({ name, description, default: fallback }) => {
    const on = state.corrected?.switches?.[name] ?? !!fallback;
    const box = h('input', { type: 'checkbox', checked: on, name: `switch-${name}` });
    box.addEventListener('change', () => {
      const current = state.corrected && typeof state.corrected === 'object' ? state.corrected : {};
      state.corrected = { ...current, switches: { ...(current.switches || {}), [name]: box.checked } };
      app.changed();
    });
    return h('label', { class: 'switch' }, box, ` ${name}`, description && h('small', { text: ` ${description}` }));
  });
}

/** The mode comparison table plus what each switch of the result did. */
export function renderModes(app, result, root) {
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
  const table = h('table', { class: 'modes' },
    h('thead', {}, h('tr', {}, ['Mode', 'Step time (us)', 'Delta (us)', 'Delta'].map((t) => h('th', { scope: 'col', text: t })))),
    h('tbody', {}, rows.map(({ mode, result: r, error }) => {
      const delta = r && ref ? r.step_time_us - ref : null;
      const sign = delta > 0 ? '+' : '';
      return h('tr', { class: mode === state.mode ? 'current' : '' },
        h('th', { scope: 'row', text: mode + (mode === state.mode ? ' (shown)' : '') }),
        error ? h('td', { colspan: 3, text: error }) : [
          h('td', { class: 'num', text: int(r.step_time_us) }),
          h('td', { class: 'num', text: delta === null || mode === rows[0].mode ? 'reference' : sign + int(delta) }),
          h('td', { class: 'num', text: delta === null || mode === rows[0].mode ? '' : `${sign}${((100 * delta) / ref).toFixed(2)}%` }),
        ]);
    })));
  const note = rows.length < 2
    ? h('p', { class: 'muted', text: `This build has one mode, ${rows[0].mode}; other modes appear here beside it when the module offers them.` })
    : null;
  const explained = asList(result.switches ?? result.corrected?.switches).map(item).map((s) => {
    const on = s.on ?? s.enabled ?? s.value;
    const what = s.explanation ?? s.description ?? s.effect ?? '';
    return h('li', {}, h('strong', { text: s.name }), on === undefined ? '' : ` (${on ? 'on' : 'off'})`, what ? `: ${what}` : '');
  });
  root.replaceChildren(...[table, note, explained.length && h('ul', { class: 'switch-list' }, explained)].filter(Boolean));
}
