// stepcalc: the step-time calculator as an ES module, for pages, workers and Node 20.
//
//   import { load } from 'stepcalc';
//   const calc = await load();              // instantiates the Wasm module once
//   const result = calc.price({ model: 'llama-3.1-8b-instruct', step: { ... } });
//
// Every function takes and returns plain data (objects or JSON text); nothing needs
// freeing. Bad input throws a StepCalcError with `code` and `path`; the module keeps
// working afterwards. Types: stepcalc.d.ts.
import createStepcalcCore from './dist/stepcalc-core.js';

/** A refusal to price: `code` is a stable word, `path` the JSON path at fault. */
export class StepCalcError extends Error {
  constructor(code, path, message) {
    super(message);
    this.name = 'StepCalcError';
    this.code = code;
    this.path = path;
  }
}

const SWEEP_AXES = ['prefill_tokens', 'decode_batch', 'decode_kv', 'tp'];
const inNode = typeof process === 'object' && !!process.versions?.node && typeof window === 'undefined';
let instance;

async function instantiate(options) {
  const init = {};
  if (options.wasmBinary) {
    init.wasmBinary = options.wasmBinary;
  } else if (inNode) {
    // emcc 3.1.6 would fetch() a file path under Node: hand it the bytes instead.
    const { readFile } = await import('node:fs/promises');
    init.wasmBinary = await readFile(new URL('./dist/stepcalc-core.wasm', import.meta.url));
  } else {
    init.locateFile = (file) => new URL(`./dist/${file}`, import.meta.url).href;
  }
  return wrap(await createStepcalcCore(init));
}

/**
 * Instantiates the module once and returns the API; later calls return the same
 * promise. `options.wasmBinary` (bytes) skips fetching the .wasm file.
 */
export function load(options = {}) {
  if (!instance) {
    instance = instantiate(options);
    instance.catch(() => {
      instance = undefined; // a failed load may be retried
    });
  }
  return instance;
}

function toJson(request, path = 'request') {
  if (typeof request === 'string') return request;
  if (request === null || typeof request !== 'object') {
    throw new StepCalcError('type_error', path, `${path} must be an object or JSON text.`);
  }
  try {
    return JSON.stringify(request);
  } catch (error) {
    throw new StepCalcError('type_error', path, `${path} cannot be serialised as JSON: ${error.message}`);
  }
}

function unwrap(outcome) {
  if (!outcome.ok) throw new StepCalcError(outcome.code, outcome.path, outcome.message);
  return JSON.parse(outcome.json);
}

function wrap(core) {
  let presets;
  return Object.freeze({
    /** Prices one request; returns the result object (see docs/RESULT.md). */
    price: (request) => unwrap(core.price(toJson(request))),
    /** Prices an array of requests; failed elements are {error: {code, path, message}}. */
    priceAll(requests, { mode = '' } = {}) {
      if (!Array.isArray(requests)) throw new StepCalcError('type_error', 'requests', 'requests must be an array.');
      if (typeof mode !== 'string') throw new StepCalcError('type_error', 'mode', 'mode must be a string.');
      return unwrap(core.priceDocument(toJson(requests, 'requests'), mode));
    },
    /** Prices `request` once per value along `axis`; one point per value, in order. */
    sweep(request, axis, values) {
      if (!SWEEP_AXES.includes(axis)) {
        throw new StepCalcError('invalid_value', 'axis', `axis must be one of ${SWEEP_AXES.join(', ')}.`);
      }
      if (!Array.isArray(values) || values.some((v) => typeof v !== 'number')) {
        throw new StepCalcError('type_error', 'values', 'values must be an array of numbers.');
      }
      return unwrap(core.sweep(toJson(request), axis, values));
    },
    /** Model presets, GPUs with their constants, and mode names. */
    presets: () => (presets ??= JSON.parse(core.presets())),
    version: () => core.version(),
  });
}

/** One-shot helpers: each awaits load() first. */
export const price = async (request) => (await load()).price(request);
export const sweep = async (request, axis, values) => (await load()).sweep(request, axis, values);
export const presets = async () => (await load()).presets();
export const version = async () => (await load()).version();
