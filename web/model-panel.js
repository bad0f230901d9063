// SPDX-License-Identifier: Apache-2.0
// The model: a preset picker, the shape fields (editing one makes a custom model),
// and a HuggingFace config.json pasted, opened or dropped onto the panel.
import { h, field, parseTyped } from './dom.js';
import { setFieldError, clearFieldError } from './errors.js';
import { shapeFields, MODE } from './catalogue.js';
import { trimConfig, matchingPreset } from './model-shape.js';
import { SHAPE_LABELS } from './words.js';
import { configFromText } from './intake.js';

const CUSTOM = '__custom';

/**
 * Builds the panel into `root`.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} root
 * @returns {import('./store.js').Panel}
 */
export function modelPanel({ calc, presets, store, fields }, root) {
  const select = h('select', { id: 'model-preset' },
    presets.models.map((m) => h('option', { value: m.name, text: m.name })),
    h('option', { value: CUSTOM, text: 'Custom shape' }));
  const pick = h('label', { class: 'field wide' }, h('span', { class: 'label', text: 'Model' }), select);
  const name = h('p', { class: 'muted', 'aria-live': 'polite' });
  const shapeInputs = {};
  const bytesNote = h('small', { 'data-testid': 'bytes-note' });
  const grid = h('div', { class: 'grid' });
  for (const key of shapeFields()) {
    const { wrap, input } = field(SHAPE_LABELS[key], { 'data-kind': 'number', name: key });
    if (key === 'bytes_per_param') {
      input.inputMode = 'decimal';
      wrap.append(bytesNote);
    }
    input.addEventListener('input', () => editShape(key, input.value));
    shapeInputs[key] = input;
    fields.add(`model.${key}`, input);
    grid.append(wrap);
  }
  fields.add('model', select);

  const text = h('textarea', { id: 'config-text', rows: 5, spellcheck: 'false',
    placeholder: '{ "num_hidden_layers": 32, "hidden_size": 4096, ... }', 'aria-label': 'config.json text' });
  const file = h('input', { type: 'file', accept: '.json,application/json', 'aria-label': 'Open a config.json file' });
  const use = h('button', { type: 'button', text: 'Use this config' });
  const configBlock = h('div', { class: 'block' }, text);
  const details = h('details', { class: 'config' },
    h('summary', { text: 'Paste, open or drop a HuggingFace config.json' }),
    configBlock, h('div', { class: 'actions' }, use, file));
  root.append(pick, grid, name, details);

  function presetShape(presetName) {
    const p = presets.models.find((m) => m.name === presetName);
    return p && Object.fromEntries(shapeFields().map((k) => [k, p[k]]));
  }

  function editShape(key, typed) {
    let { model, modelName } = store.state;
    if (typeof model === 'string') {
      const base = presetShape(model);
      if (!base) return;
      modelName = `${model} (edited)`;
      model = base;
    }
    store.set({ model: { ...model, [key]: parseTyped(typed) }, modelName });
    select.value = CUSTOM;
    showName();
  }

  /** A pasted, opened or dropped config: checked by the core as written (intake.js). */
  function applyConfig(raw) {
    let config;
    let configName;
    let shape;
    try {
      ({ config, name: configName } = configFromText(calc, raw));
      shape = trimConfig(calc, config);
    } catch (error) {
      setFieldError(text, error.path ? `The config cannot be priced (${error.path}): ${error.message}` : error.message);
      details.open = true;
      return;
    }
    clearFieldError(text);
    // A config that prices exactly as a preset does is that preset (same shape, same notes).
    const preset = matchingPreset(calc, presets, shape, config);
    store.set({ model: preset || shape, modelName: preset ? '' : configName });
    render();
    name.textContent = preset ? `This config is the preset ${preset}. ${name.textContent}` : name.textContent;
  }

  use.addEventListener('click', () => applyConfig(text.value));
  text.addEventListener('paste', () => setTimeout(() => applyConfig(text.value), 0));
  const readFile = async (f) => {
    if (f.size > 4 << 20) return setFieldError(text, 'That file is larger than 4 MB; a config.json is a few KB.');
    text.value = await f.text();
    details.open = true;
    applyConfig(text.value);
  };
  file.addEventListener('change', () => file.files[0] && readFile(file.files[0]));
  root.addEventListener('dragover', (e) => { e.preventDefault(); root.classList.add('drop'); });
  root.addEventListener('dragleave', () => root.classList.remove('drop'));
  root.addEventListener('drop', (e) => {
    e.preventDefault();
    root.classList.remove('drop');
    const f = e.dataTransfer?.files?.[0];
    if (f) readFile(f);
  });
  select.addEventListener('change', () => {
    if (select.value === CUSTOM) {
      if (typeof store.state.model === 'string') editShape('num_hidden_layers', shapeInputs.num_hidden_layers.value);
      return;
    }
    store.set({ model: select.value, modelName: '' });
    render();
  });

  function showName() {
    const m = store.state.model;
    const preset = typeof m === 'string' && presets.models.find((p) => p.name === m);
    const notes = preset ? preset.notes : [];
    name.textContent = typeof m === 'string' ? (notes.join(' ') || `Preset ${m}, ${preset?.torch_dtype ?? ''}.`)
      : `Custom shape: ${store.state.modelName || 'unnamed'}.`;
  }

  /** Puts the state's model into the controls. */
  function render() {
    const m = store.state.model;
    const known = typeof m === 'string' && presets.models.some((p) => p.name === m);
    if (typeof m === 'string' && !known) select.append(h('option', { value: m, text: `${m} (unknown preset)` }));
    select.value = typeof m === 'string' ? m : CUSTOM;
    const shape = typeof m === 'string' ? presetShape(m) || {} : m;
    // Every field, the focused one too: render() runs when the model is replaced (a
    // preset picked, a config dropped, a link or an import), never while typing.
    for (const key of shapeFields()) shapeInputs[key].value = shape[key] ?? '';
    showName();
  }
  /** Says what bytes/param does in the shown mode, and when it changes nothing. */
  function priced({ result }) {
    if (result.mode === MODE.measured) {
      bytesNote.textContent = 'Sets the weight bytes; 1 selects the FP8 kernels.';
      return;
    }
    const bound = result.corrected?.fused ? null : result.phases?.[result.bound];
    bytesNote.textContent = `In ${result.mode} it scales memory traffic only (GEMM speed is from the FP8 table)`
      + (bound?.bound_by === 'compute' ? ': this compute-bound step does not change.' : '.');
  }
  return { render, priced };
}
