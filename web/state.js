// SPDX-License-Identifier: Apache-2.0
// The page state, its request (the CLI's JSON format) and its compact URL form.
//
// State: { model: preset name | shape object, modelName, gpu, kernels (measured table
//          version, '' for the GPU's default), hw: {overrides}, tp,
//          ep, dp (expert-parallel size and attention data-parallel ranks; 1 and 1 unless set),
//          mode, corrected: {switches, params} of the shown mode | null,
//          prefill: [[cached, new]], decode: [[kv, tokens]],
//          serving: the Serving panel's workload (web/serving-state.js) | undefined,
//          plan: the Plan panel's inputs in their link form (web/plan-state.js reads it) | undefined }
// A field the user left invalid holds the typed text; the core then names its path.

import { catalogue, shapeFields, defaultMode, MODE } from './catalogue.js';
import { encodeServing, decodeServing } from './serving-state.js';

/** The page's own limits; `rows` is the core's requests-per-step limit. */
export const LIMITS = {
  hashChars: 200000,
  jsonChars: 1 << 20,
  get rows() { return catalogue.limits.requests_per_step; },
};

/**
 * The link's keys of the core's hardware fields (catalogue.hardware_fields: TFlopsPeak,
 * BwPeakTBs, bwEfficiencyFactor, perLayerOverhead), by position. They are the link
 * format (docs/PAGE.md) and never change; a catalogue with another number of fields
 * fails here, loudly, rather than pair a key with the wrong field.
 */
const HW_LINK_KEYS = ['tf', 'bw', 'ef', 'oh'];
/** A Hub model id as the Hub allows it: organisation/name, each at most 96 of letters, digits, _ . - */
const HUB_ID = /^[\w.-]{1,96}\/[\w.-]{1,96}$/;

/** [[link key, hardware field]] for every hardware field the core accepts. */
export function hardwareKeys() {
  const fields = catalogue.hardware_fields;
  if (fields?.length !== HW_LINK_KEYS.length) {
    throw new Error(`The link format keeps ${HW_LINK_KEYS.length} hardware fields (${HW_LINK_KEYS.join(', ')}); ` +
      `the core's catalogue lists ${fields?.length ?? 'none'} (${fields?.join(', ') ?? ''}).`);
  }
  return HW_LINK_KEYS.map((key, i) => [key, fields[i]]);
}

/** The hardware fields the page edits: the core's, in its order. */
export const hardwareFields = () => hardwareKeys().map(([, field]) => field);

/**
 * The page's state (the header above says what each field holds). Fields a user typed
 * into hold the typed text while it is not a number.
 * @typedef {object} State
 * @property {any} model a preset name or a shape object
 * @property {string} modelName
 * @property {string} [hubId] the Hub id (org/Name) a config model was fetched by, for `vllm serve`
 * @property {string} gpu
 * @property {string} kernels
 * @property {Record<string, any>} hw
 * @property {any} tp
 * @property {any} [ep] expert-parallel size of the MoE layers (1: experts split by TP)
 * @property {any} [dp] attention data-parallel ranks (1: one engine)
 * @property {string} mode
 * @property {any} corrected
 * @property {any[][]} prefill
 * @property {any[][]} decode
 * @property {import('./serving-state.js').Serving} [serving]
 * @property {string} [plan]
 */

/**
 * A fresh page's state: the page starts in the measured mode (the most accurate).
 * @returns {State}
 */
export function defaultState() {
  return {
    model: 'llama-3.1-8b-instruct', modelName: '', gpu: 'H100', kernels: '', hw: {}, tp: 1, ep: 1, dp: 1,
    mode: MODE.measured,
    corrected: null, prefill: [[0, 2048]],
    decode: Array.from({ length: 64 }, (_, i) => [512 + 64 * i, 1]),
  };
}

/** The request for `state` in the CLI's format; `mode` overrides the state's mode. */
export function toRequest(state, mode = state.mode) {
  const req = { model: state.model };
  if (typeof state.model === 'object' && state.modelName) req.model_name = state.modelName;
  req.gpu = state.gpu;
  if (state.kernels) req.kernels = state.kernels;
  if (Object.keys(state.hw).length) req.hardware = { ...state.hw };
  req.tp = state.tp;
  // The layout beyond TP only when set, so a one-engine request reads as it always did.
  if ((state.ep ?? 1) !== 1) req.ep = state.ep;
  if ((state.dp ?? 1) !== 1) req.dp = state.dp;
  req.mode = mode;
  if (state.corrected && mode === state.mode) req.corrected = state.corrected;
  req.step = {
    prefill_requests: state.prefill.map(([c, n]) => ({ progress_index: c, num_new_prefill_tokens: n })),
    decode_requests: state.decode.map(([kv, n]) =>
      (n === 1 ? { progress_index: kv } : { progress_index: kv, num_new_decode_tokens: n })),
  };
  return req;
}

class StateError extends Error {
  constructor(path, message) {
    super(message);
    this.path = path;
  }
}
const fail = (path, message) => { throw new StateError(path, message); };
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function rows(list, path, keys, defaults) {
  if (list === undefined) return [];
  if (!Array.isArray(list)) fail(path, `${path} must be an array.`);
  if (list.length > LIMITS.rows) fail(path, `${path} has more than ${LIMITS.rows} rows.`);
  return list.map((item, i) => {
    if (!isObject(item)) fail(`${path}[${i}]`, `${path}[${i}] must be an object.`);
    return keys.map((key, k) => {
      const v = item[key] ?? defaults[k];
      if (typeof v !== 'number') fail(`${path}[${i}].${key}`, `${path}[${i}].${key} must be a number.`);
      return v;
    });
  });
}

/**
 * State from a request object (CLI format). A config object stays as given; the
 * caller trims it with the core (see model-panel.js). Throws {path, message}.
 */
export function fromRequest(req) {
  if (!isObject(req)) fail('request', 'The request must be a JSON object.');
  // Fields the core accepts that the page does not edit yet are refused, not dropped.
  const notEdited = ['quantization', 'kv_cache_dtype'];
  for (const key of Object.keys(req)) {
    if (!/** @type {string[]} */ (catalogue.request_fields).includes(key)) fail(key, `Unknown field "${key}".`);
    if (notEdited.includes(key)) fail(key,
      `The page does not edit "${key}" yet; price this request with the CLI or calc.price().`);
  }
  const s = defaultState();
  if (typeof req.model !== 'string' && !isObject(req.model)) fail('model',
    'model must be a preset name or a config object.');
  s.model = req.model;
  s.modelName = typeof req.model_name === 'string' ? req.model_name : '';
  if (req.gpu !== undefined) s.gpu = String(req.gpu);
  if (req.kernels !== undefined) s.kernels = String(req.kernels);
  if (req.hardware !== undefined) {
    if (!isObject(req.hardware)) fail('hardware', 'hardware must be an object.');
    for (const key of hardwareFields()) if (req.hardware[key] !== undefined) s.hw[key] = req.hardware[key];
  }
  if (req.tp !== undefined) s.tp = req.tp;
  if (req.ep !== undefined) s.ep = req.ep;
  if (req.dp !== undefined) s.dp = req.dp;
  s.mode = req.mode !== undefined ? String(req.mode) : defaultMode(); // the request format's default
  if (req.corrected !== undefined) s.corrected = req.corrected;
  if (!isObject(req.step)) fail('step', 'step must be an object.');
  s.prefill = rows(req.step.prefill_requests, 'step.prefill_requests', ['progress_index', 'num_new_prefill_tokens'],
    [undefined, undefined]);
  s.decode = rows(req.step.decode_requests, 'step.decode_requests', ['progress_index', 'num_new_decode_tokens'],
    [undefined, 1]);
  if (s.prefill.length + s.decode.length > LIMITS.rows) fail('step',
    `A step may hold at most ${LIMITS.rows} requests.`);
  return s;
}

// ---- compact URL form (docs/PAGE.md): #v=1&m=<preset>|ms=<shape>&g=H100&tp=1&mode=..&p=<runs>&d=<runs>

/** Rows of equal-width integer tuples as runs: `first[~delta][*count]`, comma-separated. */
export function encodeRuns(tuples) {
  const out = [];
  for (let i = 0; i < tuples.length;) {
    const first = tuples[i];
    const delta = i + 1 < tuples.length ? tuples[i + 1].map((v, k) => v - first[k]) : first.map(() => 0);
    let n = 1;
    while (i + n < tuples.length && tuples[i + n].every((v, k) => v === first[k] + n * delta[k])) n++;
    const flat = delta.every((d) => d === 0);
    if (n < 3 && !flat) n = 1;
    out.push(first.join('.') + (n > 1 && !flat ? `~${delta.join('.')}` : '') + (n > 1 ? `*${n}` : ''));
    i += n;
  }
  return out.join(',');
}

export function decodeRuns(text, width, key) {
  const tuples = [];
  if (!text) return tuples;
  if (text.split(',', LIMITS.rows + 1).length > LIMITS.rows) fail(key, `The link holds more than ${LIMITS.rows} rows.`);
  const num = (t) => {
    if (!/^-?\d{1,10}$/.test(t)) fail(key, `The link's "${key}" holds a bad number "${t.slice(0, 20)}".`);
    return Number(t);
  };
  for (const run of text.split(',')) {
    const m = /^([^~*]+)(?:~([^*]+))?(?:\*(\d{1,6}))?$/.exec(run);
    if (!m) fail(key, `The link's "${key}" is malformed near "${run.slice(0, 20)}".`);
    const first = m[1].split('.').map(num);
    const delta = m[2] ? m[2].split('.').map(num) : first.map(() => 0);
    if (first.length !== width || delta.length !== width) fail(key,
      `The link's "${key}" needs ${width} numbers per row.`);
    const n = m[3] ? Number(m[3]) : 1;
    if (tuples.length + n > LIMITS.rows) fail(key, `The link holds more than ${LIMITS.rows} rows.`);
    for (let j = 0; j < n; j++) tuples.push(first.map((v, k) => v + j * delta[k]));
  }
  return tuples;
}

const validRow = (row) => row.every((v) => Number.isInteger(v) && v >= 0);

/**
 * The compact hash for a state whose fields all hold numbers (a priced state), with
 * `pinned` (the A of an A/B comparison, a state too) as `a=<its own compact hash>`.
 */
export function encodeHash(s, pinned = null) {
  const q = [['v', '1']];
  if (typeof s.model === 'string') q.push(['m', s.model]);
  else {
    q.push(['ms', shapeFields().map((k) => s.model[k] ?? '').join('_')]);
    const notes = Object.keys(s.model).filter((k) => !/** @type {string[]} */ (shapeFields()).includes(k));
    if (notes.length) q.push(['mx', JSON.stringify(Object.fromEntries(notes.map((k) => [k, s.model[k]])))]);
    if (s.modelName) q.push(['mn', s.modelName]);
    if (s.hubId) q.push(['mh', s.hubId]);
  }
  q.push(['g', s.gpu]);
  if (s.kernels) q.push(['k', s.kernels]);
  for (const [short, long] of hardwareKeys()) if (s.hw[long] !== undefined) q.push([short, String(s.hw[long])]);
  q.push(['tp', String(s.tp)]);
  if ((s.ep ?? 1) !== 1) q.push(['ep', String(s.ep)]);
  if ((s.dp ?? 1) !== 1) q.push(['dp', String(s.dp)]);
  q.push(['mode', s.mode]);
  if (s.corrected) q.push(['cr', JSON.stringify(s.corrected)]);
  q.push(['p', encodeRuns(s.prefill)]);
  if (s.decode.every(([, n]) => n === 1)) q.push(['d', encodeRuns(s.decode.map(([kv]) => [kv]))]);
  else q.push(['dt', encodeRuns(s.decode)]);
  if (s.serving) q.push(['sv', encodeServing(s.serving)]);
  if (s.plan) q.push(['pl', s.plan]);
  if (pinned) q.push(['a', encodeHash(pinned)]);
  return q.map(([k, v]) => `${k}=${encodeURIComponent(v).replace(/%2C/g, ',')}`).join('&');
}

function parseJson(text, key) {
  if (text.length > LIMITS.jsonChars) fail(key, 'The JSON in the link is too large.');
  try {
    return JSON.parse(text);
  } catch (error) {
    return fail(key, `The JSON in the link does not parse: ${error.message}`);
  }
}

/**
 * Reads a location hash. Returns null (no state in it), {state, pinned?} (compact form) or
 * {request, text} (a `#json=` request, for fromRequest, and its text as written).
 * Throws {path, message} on bad input.
 */
export function decodeHash(hash) {
  const text = hash.replace(/^#/, '');
  if (!text) return null;
  if (text.length > LIMITS.hashChars) fail('url', `The link is longer than ${LIMITS.hashChars} characters.`);
  const params = new Map();
  for (const part of text.split('&')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    try {
      params.set(key, decodeURIComponent(eq < 0 ? '' : part.slice(eq + 1)));
    } catch {
      fail(key, `The link's "${key.slice(0, 20)}" is not valid percent-encoding.`);
    }
  }
  if (params.has('json')) return { request: parseJson(params.get('json'), 'json'), text: params.get('json') };
  if (!params.has('v')) {
    // An anchor (#calibrate) is no state; settings without the format are said, not dropped.
    const settings = ['m', 'ms', 'g', 'k', 'tp', 'ep', 'dp', 'mode', 'cr', 'p', 'd', 'dt', 'sv', 'pl', 'a',
      ...hardwareKeys().map(([k]) => k)];
    const named = settings.filter((k) => params.has(k) && text.includes(`${k}=`));
    if (named.length) fail('v', `The link names no format (v=1), so its settings (${named.join(', ')}) were not ` +
      'applied; a link the page made starts with #v=1.');
    return null;
  }
  if (params.get('v') !== '1') fail('v', `This link was made by a newer page (format ${params.get('v').slice(0, 8)}).`);
  const s = defaultState();
  if (params.has('ms')) {
    const values = params.get('ms').split('_');
    if (values.length !== shapeFields().length) fail('ms',
      `The link's model shape needs ${shapeFields().length} numbers.`);
    const extra = params.has('mx') ? parseJson(params.get('mx'), 'mx') : {};
    if (!isObject(extra)) fail('mx', 'The model notes in the link must be an object.');
    s.model = { ...extra };
    shapeFields().forEach((k, i) => {
      if (values[i] !== '') s.model[k] = Number(values[i]);
      if (Number.isNaN(s.model[k])) fail('ms', `The link's ${k} is not a number.`);
    });
    s.modelName = params.get('mn') ?? '';
    if (params.has('mh')) {
      s.hubId = params.get('mh') ?? '';
      if (!HUB_ID.test(s.hubId)) fail('mh', 'The link\'s Hub id must read organisation/name.');
    }
  } else if (params.has('m')) s.model = params.get('m');
  if (params.has('g')) s.gpu = params.get('g');
  if (params.has('k')) s.kernels = params.get('k');
  for (const [short, long] of hardwareKeys()) {
    if (!params.has(short)) continue;
    const v = Number(params.get(short));
    if (!Number.isFinite(v)) fail(short, `The link's hardware value "${short}" is not a number.`);
    s.hw[long] = v;
  }
  if (params.has('tp')) {
    const tp = params.get('tp') ?? '';
    if (!/^\d{1,10}$/.test(tp)) fail('tp', `The link's TP "${tp.slice(0, 20)}" is not a whole number.`);
    s.tp = Number(tp);
  }
  for (const [key, words] of [['ep', 'expert-parallel size'], ['dp', 'data-parallel ranks']]) {
    if (!params.has(key)) continue;
    const v = params.get(key) ?? '';
    if (!/^\d{1,10}$/.test(v)) fail(key, `The link's ${words} "${v.slice(0, 20)}" is not a whole number.`);
    s[key] = Number(v);
  }
  s.mode = params.get('mode') ?? defaultMode(); // links without one keep the request format's default
  if (params.has('cr')) {
    s.corrected = parseJson(params.get('cr'), 'cr');
    if (!isObject(s.corrected)) fail('cr', 'The mode settings in the link must be an object.');
  }
  // A link that names no step rows (an embed naming only model, GPU and TP) prices the
  // page's default step; one that names either list keeps exactly the rows it names.
  if (params.has('p') || params.has('d') || params.has('dt')) {
    s.prefill = decodeRuns(params.get('p'), 2, 'p');
    s.decode = params.has('dt')
      ? decodeRuns(params.get('dt'), 2, 'dt') : decodeRuns(params.get('d'), 1, 'd').map(([kv]) => [kv, 1]);
  }
  if (!s.prefill.every(validRow)) fail('p', 'The link holds a negative token count in its prefill rows.');
  if (!s.decode.every(validRow)) fail(params.has('dt') ? 'dt' : 'd',
    'The link holds a negative token count in its decode rows.');
  if (params.has('sv')) s.serving = decodeServing(params.get('sv'));
  if (params.get('pl')) s.plan = params.get('pl'); // read (and checked) by the Plan panel
  if (!params.has('a')) return { state: s };
  // The pinned A: a compact state of its own, one level deep.
  let a;
  try {
    a = decodeHash(`#${params.get('a')}`);
  } catch (error) {
    fail('a', `The pinned A in the link: ${error.message}`);
  }
  if (!a?.state || a.pinned) fail('a', 'The pinned A in the link must be one step in the compact form.');
  return { state: s, pinned: a.state };
}
