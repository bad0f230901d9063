// SPDX-License-Identifier: Apache-2.0
// The machine and the model of it: GPU with every hardware constant editable, the
// tensor-parallel degree, the data-parallel ranks and expert parallelism (vLLM's
// --data-parallel-size and --enable-expert-parallel: the experts over TP x DP GPUs), and the
// step model's mode (its switches: modes.js).
import { h, field, fill, parseTyped, withDocLinks } from './dom.js';
import { hardwareFields } from './state.js';
import { HW_LABELS } from './words.js';
import { MODE } from './catalogue.js';

/** A GPU's device name ("NVIDIA B200 SXM 180GB"), shown under the select, or '' when it is the name. */
const gpuDevice = (presets, name) => {
  const spec = (presets.gpu_specs || []).find((g) => g.name === name);
  return spec?.device && spec.device !== name ? spec.device : '';
};

/**
 * Builds the panel into `root`.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} root
 * @returns {import('./store.js').Panel}
 */
export function setupPanel({ presets, store, fields }, root) {
  // Short option texts, the longer words under the select (a select cut "H100 (NVIDIA H1").
  const gpu = h('select', { id: 'gpu', 'aria-describedby': 'gpu-device' },
    presets.gpus.map((g) => h('option', { value: g.name, text: g.name })));
  const device = h('small', { id: 'gpu-device', 'data-testid': 'gpu-device' });
  // The measured kernel tables' version (vLLM release they were measured with), for
  // the modes that price from them; '' is the GPU's default.
  const kernels = h('select', { id: 'kernels', 'aria-describedby': 'kernels-hint' });
  const kernelsHint = h('small', { id: 'kernels-hint', 'data-testid': 'kernels-hint' });
  const kernelsField = h('label', { class: 'field' }, h('span', { class: 'label', text: 'Kernel tables' }), kernels,
    kernelsHint);
  const tp = field('TP degree', { id: 'tp', 'data-kind': 'number' }, 'tensor-parallel GPUs');
  const dp = field('DP ranks', { id: 'dp', 'data-kind': 'number' }, 'attention data-parallel engines');
  const ep = h('input', { type: 'checkbox', id: 'ep', 'data-testid': 'ep', 'aria-describedby': 'ep-hint' });
  const epHint = h('small', { id: 'ep-hint', 'data-testid': 'ep-hint' });
  const epField = h('div', { class: 'field' }, h('span', { class: 'label', text: 'Experts' }),
    h('label', { class: 'check' }, ep, ' expert parallel'), epHint);
  const mode = h('select', { id: 'mode' }, presets.modes.map((m) => h('option', { value: m, text: m })));
  const hw = {};
  const grid = h('div', { class: 'grid' });
  const HW_FIELDS = hardwareFields();
  for (const key of HW_FIELDS) {
    const [label, hint] = HW_LABELS[key];
    const { wrap, input } = field(label, { 'data-kind': 'number', inputmode: 'decimal', name: key }, hint);
    input.addEventListener('input', () => {
      const { [key]: old, ...others } = store.state.hw;
      const v = parseTyped(input.value);
      store.set({ hw: v === gpuPreset()?.[key] ? others : { ...others, [key]: v } });
      markEdited();
    });
    hw[key] = input;
    fields.add(`hardware.${key}`, input);
    grid.append(wrap);
  }
  const reset = h('button', { type: 'button', text: 'Reset constants' });
  // The constants above are the reference model's; the measured mode reads the GPU's
  // measured kernel tables and its datasheet bandwidth instead. In measured they are
  // folded away under a summary saying whose inputs they are; open in the other modes.
  const hwNote = h('p', { class: 'muted', 'data-testid': 'hw-note' });
  const hwSummary = h('summary', { 'data-testid': 'hw-summary' });
  const hwBox = /** @type {HTMLDetailsElement} */ (h('details',
    { class: 'hw-constants', id: 'hw-constants', open: true }, hwSummary, grid, hwNote, h('div', { class: 'actions' },
      reset)));
  let hwMode = ''; // the mode the box was last opened or closed for
  root.append(
    h('div', { class: 'grid' },
      h('label', { class: 'field' }, h('span', { class: 'label', text: 'GPU' }), gpu, device), tp.wrap, dp.wrap,
      epField,
      h('label', { class: 'field' }, h('span', { class: 'label', text: 'Mode' }), mode), kernelsField),
    hwBox);
  fields.add('gpu', gpu);
  fields.add('tp', tp.input);
  fields.add('dp', dp.input);
  fields.add('ep', ep);
  fields.add('mode', mode);
  fields.add('kernels', kernels);
  kernels.addEventListener('change', () => store.set({ kernels: kernels.value }));

  const gpuPreset = () => presets.gpus.find((g) => g.name === store.state.gpu);
  const markEdited = () => {
    for (const key of HW_FIELDS) hw[key].classList.toggle('edited', key in store.state.hw);
    reset.disabled = Object.keys(store.state.hw).length === 0;
  };

  gpu.addEventListener('change', () => {
    store.set({ gpu: gpu.value, kernels: '' });
    render();
  });
  /**
   * Expert parallelism as vLLM runs it: on, the experts are spread over every GPU of the
   * engine's ranks (ep = tp x dp); off, each expert is split over the TP x DP GPUs (ep 1;
   * vLLM's MoE tensor-parallel group). While TP or DP
   * hold no whole number yet, ep keeps its value.
   */
  const epFor = (on, t, d) => (!on ? 1 : Number.isInteger(t) && Number.isInteger(d) ? t * d : store.state.ep);
  /** One GPU per engine (TP x DP = 1): nothing to spread the experts over, so the box waits. */
  const oneGpu = (t, d) => t === 1 && d === 1;
  // What the box asks for, kept while the engine has one GPU (ep is 1 there either way), so
  // that raising TP or DP again spreads the experts as asked.
  let epWanted = (store.state.ep ?? 1) !== 1;
  tp.input.addEventListener('input', () => {
    const t = parseTyped(tp.input.value);
    store.set({ tp: t, ep: epFor(epWanted, t, store.state.dp ?? 1) });
    renderEp();
  });
  dp.input.addEventListener('input', () => {
    const d = parseTyped(dp.input.value);
    store.set({ dp: d, ep: epFor(epWanted, store.state.tp, d) });
    renderEp();
  });
  ep.addEventListener('change', () => {
    epWanted = ep.checked;
    store.set({ ep: epFor(ep.checked, store.state.tp, store.state.dp ?? 1) });
    render();
  });

  /** The box and its hint from the state (the wish kept while the engine has one GPU). */
  function renderEp() {
    const s = store.state;
    const single = oneGpu(s.tp, s.dp ?? 1);
    if (!single && Number.isInteger(s.tp) && Number.isInteger(s.dp ?? 1)) epWanted = (s.ep ?? 1) !== 1;
    ep.disabled = single;
    ep.checked = single ? epWanted : (s.ep ?? 1) !== 1;
    epHint.textContent = single ? 'MoE: one GPU (TP × DP = 1), no experts to spread: raise TP or DP'
      : ep.checked ? `MoE: EP ${s.ep}, the experts over TP × DP GPUs`
      : (s.dp ?? 1) !== 1 ? 'MoE: each expert split over TP × DP GPUs' : 'MoE: each expert split by TP';
  }
  mode.addEventListener('change', () => {
    store.set({ mode: mode.value });
    render();
  });
  reset.addEventListener('click', () => {
    store.set({ hw: {} });
    render();
  });

  /** Puts the state's machine and mode into the controls. */
  function render() {
    const s = store.state;
    if (![...gpu.options].some((o) => o.value === s.gpu)) gpu.append(h('option',
      { value: s.gpu, text: `${s.gpu} (unknown)` }));
    gpu.value = s.gpu;
    if (![...mode.options].some((o) => o.value === s.mode)) mode.append(h('option',
      { value: s.mode, text: `${s.mode} (unknown)` }));
    mode.value = s.mode;
    const spec = (presets.gpu_specs || []).find((g) => g.name === s.gpu);
    const versions = spec?.kernels || [];
    kernelsField.hidden = !versions.length;
    device.textContent = gpuDevice(presets, s.gpu);
    kernelsHint.textContent = `vLLM version measured${spec ? `; default: ${spec.default_kernels}` : ''}`;
    kernels.replaceChildren(h('option', { value: '', text: 'default' }),
      ...versions.map((v) => h('option', { value: v, text: v })));
    if (s.kernels &&
      !versions.includes(s.kernels)) kernels.append(h('option', { value: s.kernels, text: `${s.kernels} (unknown)` }));
    kernels.value = s.kernels || '';
    if (document.activeElement !== tp.input) tp.input.value = s.tp;
    if (document.activeElement !== dp.input) dp.input.value = s.dp ?? 1;
    renderEp();
    const base = gpuPreset() || {};
    for (const key of HW_FIELDS) {
      if (document.activeElement !== hw[key]) hw[key].value = s.hw[key] ?? base[key] ?? '';
      hw[key].placeholder = base[key] ?? '';
    }
    const measured = s.mode === MODE.measured;
    hwNote.textContent = measured
      ? 'These constants are the reference model\'s (blis-v2, corrected); measured does not use them: it reads ' +
        `${s.gpu}'s measured kernel tables and its datasheet HBM bandwidth.` : '';
    hwSummary.textContent = measured
      ? 'Hardware constants of the reference modes (blis-v2, corrected): not used in measured'
      : `Hardware constants (${s.mode} uses them)`;
    hwBox.classList.toggle('unused', measured);
    // Folded when the mode becomes measured, unfolded when it leaves it; as the user left it otherwise.
    if (measured !== (hwMode === MODE.measured) || !hwMode) hwBox.open = !measured;
    hwMode = s.mode;
    markEdited();
  }
  // Warnings that mean vLLM would refuse this TP degree are shown at the TP field too.
  const tpNote = h('p', { class: 'field-warning', 'data-testid': 'tp-warning', role: 'status' });
  tp.wrap.append(tpNote);
  function priced({ result }) {
    const refused = (result.warnings || []).filter((w) => /^tp_does_not_divide/.test(w.code));
    fill(tpNote, withDocLinks(refused.map((w) => w.message).join(' ')));
  }
  return { render, priced };
}
