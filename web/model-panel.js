// SPDX-License-Identifier: Apache-2.0
// The model: a preset picker, a Hugging Face model id whose config.json the browser fetches
// (web/hf-model.js), the shape fields (editing one makes a custom model), and a HuggingFace
// config.json pasted, opened or dropped onto the panel.
import { h, field, fixed, parseTyped } from './dom.js';
import { setFieldError, clearFieldError } from './errors.js';
import { shapeFields, MODE } from './catalogue.js';
import { trimConfig, matchingPreset } from './model-shape.js';
import { SHAPE_LABELS } from './words.js';
import { configFromText } from './intake.js';

const CUSTOM = '__custom';
const DTYPE_WORDS = { bf16: 'BF16', fp16: 'FP16', fp8: 'FP8', fp8_block: 'FP8 (block-scaled)', mxfp4: 'MXFP4',
  nvfp4: 'NVFP4', int4: 'INT4', int8: 'INT8' };
const DTYPE_BYTES = { bf16: 2, fp16: 2, fp8: 1, fp8_block: 1, int8: 1, mxfp4: 0.5, nvfp4: 0.5, int4: 0.5 };

/**
 * How the measured mode priced the model, from its operators (it reads the model's full
 * config: experts, latent attention, the weights' format), or null for another mode:
 * {features: ['mixture of experts', ...], dtype: 'fp8_block' | ..., words: 'FP8 (block-scaled)'}.
 */
export function measuredModel(result) {
  const ops = result.mode === MODE.measured ? result.measured?.operators : null;
  if (!ops?.length) return null;
  // The weights' format: the GEMMs' and experts' most common dtype (router and lm_head are kept in BF16).
  const count = new Map();
  for (const op of ops) {
    if ((op.kind === 'gemm' || op.kind === 'moe') && op.dtype && !/^(router|lm_head)$/.test(op.name)) {
      count.set(op.dtype, (count.get(op.dtype) || 0) + 1);
    }
  }
  const dtype = [...count].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  const features = [];
  if (ops.some((op) => op.kind === 'moe')) features.push('mixture of experts (its fused MoE kernels)');
  if (ops.some((op) => /^(kv_a_proj|kv_b_proj|q_a_proj)$/.test(op.name))) features.push('multi-head latent attention');
  return { features, dtype, words: dtype ? DTYPE_WORDS[dtype] || dtype.toUpperCase() : null };
}

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
  const name = h('p', { class: 'muted', 'aria-live': 'polite', 'data-testid': 'model-words' });
  let said = ''; // "This config is the preset X." after a config that is one
  let shown = null; // the last priced result
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
  // A Hugging Face model id: its config.json fetched from huggingface.co by this browser
  // (web/hf-model.js, a bundle of its own loaded on first use) and used as a pasted one.
  const hubInput = h('input', { id: 'hf-id', type: 'text', autocomplete: 'off', spellcheck: 'false',
    enterkeyhint: 'go', placeholder: 'Qwen/Qwen2.5-7B-Instruct or a huggingface.co link' });
  const hubStatus = h('small', { 'aria-live': 'polite', 'data-testid': 'hf-status' });
  const hubGo = h('button', { type: 'button', text: 'Fetch config.json' });
  const hub = h('div', { class: 'hub' },
    h('label', { class: 'field wide' }, h('span', { class: 'label', text: 'Hugging Face model id' }), hubInput),
    h('div', { class: 'actions' }, hubGo, hubStatus));
  root.append(pick, hub, grid, name, details);

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
    store.set({ model: { ...model, [key]: parseTyped(typed) }, modelName, hubId: '' });
    select.value = CUSTOM;
    showName();
  }

  /** A config's text checked by the core as written (intake.js): {config, name, shape}; throws its refusal. */
  function readConfig(raw, givenName) {
    const { config, name: configName } = configFromText(calc, raw, givenName);
    return { config, name: configName, shape: trimConfig(calc, config) };
  }

  /** Makes a checked config the model; `hubId` the Hub id it was fetched by ('' for any other config). */
  function useConfigModel({ config, name: configName, shape }, hubId = '') {
    clearFieldError(text);
    // A config that prices exactly as a preset does is that preset (same shape, notes and spec).
    const preset = matchingPreset(calc, presets, shape, config);
    store.set({ model: preset || shape, modelName: preset ? '' : configName, hubId: preset ? '' : hubId });
    render();
    said = preset ? `This config is the preset ${preset}. ` : '';
    showName();
  }

  /** A pasted, opened or dropped config (or one fetched from the Hub as `hubId`, named `givenName`). */
  function applyConfig(raw, givenName, hubId = '') {
    let checked;
    try {
      checked = readConfig(raw, givenName);
    } catch (error) {
      setFieldError(text, error.path ? `The config cannot be priced (${error.path}): ${error.message}` : error.message);
      details.open = true;
      return;
    }
    useConfigModel(checked, hubId);
  }

  let hubBox = null; // web/hf-model.js's box, once the box is first used
  function fetchFromHub() {
    hubBox ??= import('./hf-model.js').then((m) => m.hubBox({ input: hubInput, status: hubStatus, store,
      // The fetched config is used as a pasted one, and shown in the config box; a refusal leaves both as they were.
      apply: (raw, hubName, hubId) => {
        useConfigModel(readConfig(raw, hubName), hubId);
        text.value = raw;
      },
      edit: (raw, hubName, hubId) => {
        text.value = raw;
        details.open = true;
        applyConfig(raw, hubName, hubId);
        text.focus();
      } }));
    hubBox.then((box) => box.fetch(), (error) => {
      hubBox = null;
      setFieldError(hubInput, `The Hugging Face box did not load: ${error.message}`);
    });
  }
  hubGo.addEventListener('click', fetchFromHub);
  hubInput.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    fetchFromHub();
  });

  /** A model chosen another way: the box no longer says which config is in use. */
  const forgetHub = () => {
    hubStatus.textContent = '';
    delete hubStatus.dataset.state;
  };
  use.addEventListener('click', () => {
    forgetHub();
    applyConfig(text.value);
  });
  text.addEventListener('paste', () => setTimeout(() => {
    forgetHub();
    applyConfig(text.value);
  }, 0));
  const readFile = async (f) => {
    if (f.size > 4 << 20) return setFieldError(text, 'That file is larger than 4 MB; a config.json is a few KB.');
    text.value = await f.text();
    details.open = true;
    forgetHub();
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
    store.set({ model: select.value, modelName: '', hubId: '' });
    forgetHub();
    render();
  });

  /**
   * The model in words: in the measured mode how it prices the model (from the full
   * config), else the reference model's notes on what it ignores (priced as dense, ...).
   */
  function showName() {
    const m = store.state.model;
    const preset = typeof m === 'string' && presets.models.find((p) => p.name === m);
    const notes = preset ? preset.notes : [];
    const measured = shown && shown.mode === store.state.mode ? measuredModel(shown) : null;
    let words;
    if (measured) {
      const weights = shown.measured.weight_bytes_per_gpu;
      const parts = [...measured.features,
        `${measured.words ?? 'its'} weights${weights > 0
          ? `, ${fixed(weights / 2 ** 30, 1)} GiB per GPU at TP ${shown.tp ?? store.state.tp}` : ''}`,
        shown.measured.kv_cache_dtype ? `${String(shown.measured.kv_cache_dtype).toUpperCase()} KV cache` : null]
        .filter(Boolean);
      words = `${typeof m === 'string' ? `Preset ${m}` : `Custom shape: ${store.state.modelName || 'unnamed'}`}, ` +
        `as the measured mode prices it: ${parts.join('; ')}.`;
    } else {
      words = typeof m === 'string' ? (notes.join(' ') || `Preset ${m}, ${preset?.torch_dtype ?? ''}.`)
        : `Custom shape: ${store.state.modelName || 'unnamed'}.`;
    }
    name.textContent = said + words;
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
    said = '';
    showName();
  }
  /** Says what bytes/param does in the shown mode, and when it changes nothing. */
  function priced({ result }) {
    shown = result;
    showName();
    if (result.mode === MODE.measured) {
      // A quantized checkpoint's format comes from its config: the field's figure is the reference modes'.
      const measured = measuredModel(result);
      const typed = Number(shapeInputs.bytes_per_param.value);
      bytesNote.textContent = measured?.dtype && DTYPE_BYTES[measured.dtype] !== undefined &&
        DTYPE_BYTES[measured.dtype] !== typed
        ? `Measured reads the weights from the model's config: ${measured.words}, ${DTYPE_BYTES[measured.dtype]} ` +
          `byte${DTYPE_BYTES[measured.dtype] === 1 ? '' : 's'} per parameter; ${shapeInputs.bytes_per_param.value} ` +
          'here is the reference modes\' figure (blis-v2, corrected).'
        : 'Sets the weight bytes; 1 selects the FP8 kernels.';
      return;
    }
    const bound = result.corrected?.fused ? null : result.phases?.[result.bound];
    bytesNote.textContent = `In ${result.mode} it scales memory traffic only (GEMM speed is from the FP8 table)`
      + (bound?.bound_by === 'compute' ? ': this compute-bound step does not change.' : '.');
  }
  return { render, priced };
}
