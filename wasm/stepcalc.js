// SPDX-License-Identifier: Apache-2.0
// stepcalc: the step-time calculator as an ES module, for pages, workers and Node 20.
//
//   import { load } from 'stepcalc';
//   const calc = await load();              // instantiates the Wasm module once
//   const result = calc.price({ model: 'llama-3.1-8b-instruct', step: { ... } });
//   await calc.loadKernels('B200');         // measured kernel tables, fetched once
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

const inNode = typeof process === 'object' && !!process.versions?.node && typeof window === 'undefined';
/** Decodes the modules' JSON results (Outcome.json: a view of the result's UTF-8 bytes in module memory). */
const utf8 = new TextDecoder();
let instance;
// Kernel pack bytes by URL, shared by every instance and every concurrent loadKernels.
const packCache = new Map();

/** The bytes of one kernel pack: read from disk under Node, fetched in a browser. */
function readPack(url) {
  const key = String(url);
  if (!packCache.has(key)) {
    const promise = (async () => {
      if (inNode && url.protocol === 'file:') {
        const { readFile } = await import('node:fs/promises');
        return new Uint8Array(await readFile(url));
      }
      const response = await fetch(url);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return new Uint8Array(await response.arrayBuffer());
    })();
    packCache.set(key, promise);
    promise.catch(() => packCache.delete(key)); // a failed read may be retried
  }
  return packCache.get(key);
}

/** The compiled core (dist/stepcalc-core.wasm): given, compiled from bytes, or fetched. */
async function compileCore(options, base) {
  const given = options.wasmModule;
  if (given !== undefined) {
    if (given instanceof WebAssembly.Module) return given;
    throw new StepCalcError('type_error', 'options.wasmModule', 'options.wasmModule must be a WebAssembly.Module.');
  }
  const file = new URL('./dist/stepcalc-core.wasm', import.meta.url);
  if (options.wasmBinary || inNode) {
    // (emcc 3.1.6 would fetch() a file path under Node.)
    return WebAssembly.compile(options.wasmBinary ?? await (await import('node:fs/promises')).readFile(file));
  }
  const url = new URL('dist/stepcalc-core.wasm', base);
  // Compiled as it downloads, started before load() returns (no wait for the page's thread); a
  // response that is not ok or not application/wasm is fetched again: compiled from its bytes or refused.
  try {
    return await WebAssembly.compileStreaming(fetch(url));
  } catch { /* below */ }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${response.url}`);
  return WebAssembly.compile(await response.arrayBuffer());
}

async function instantiate(options, drop) {
  // A bundler moves this file: `baseUrl` (the folder that holds dist/) says where
  // the module's files are; without it they sit beside this file.
  const base = new URL(options.baseUrl ?? '.', import.meta.url);
  const kernelsUrl = options.kernelsUrl ? new URL(String(options.kernelsUrl).replace(/\/?$/, '/'), import.meta.url)
    : new URL('dist/kernels/', base);
  // Packs another instance read (calc.forWorker()), kept as if read here.
  for (const [file, bytes] of Object.entries(options.kernelPacks ?? {})) {
    const key = String(new URL(file, kernelsUrl));
    if (!packCache.has(key)) packCache.set(key, Promise.resolve(new Uint8Array(bytes)));
  }
  // Compiled here and instantiated through emcc's hook, so that a Worker can be handed
  // the compiled module (calc.forWorker()) instead of fetching and compiling it again.
  const wasmModule = await compileCore(options, base);
  let failed;
  const failure = new Promise((_, reject) => { failed = reject; });
  const init = {
    instantiateWasm(imports, receive) {
      WebAssembly.instantiate(wasmModule, imports).then((made) => receive(made, wasmModule), failed);
      return {};
    },
  };
  const core = await Promise.race([createStepcalcCore(init), failure]);
  return wrap(core, drop, kernelsUrl, () => instantiatePlanner(options, base), wasmModule);
}

/**
 * The planner's module (dist/stepcalc-plan.{js,wasm}: the core with core/plan, built for
 * speed), instantiated on the first plan() so that the first view does not load it. Found
 * as the first-view module is: beside this file under Node, under `baseUrl` in a browser.
 */
async function instantiatePlanner(options, base) {
  const init = {};
  if (options.planWasmBinary) {
    init.wasmBinary = options.planWasmBinary;
  } else if (inNode) {
    const { readFile } = await import('node:fs/promises');
    init.wasmBinary = await readFile(new URL('./dist/stepcalc-plan.wasm', import.meta.url));
  } else {
    init.locateFile = (file) => new URL(`dist/${file}`, base).href;
  }
  // A URL, not a literal path: a bundler leaves the planner's glue out of the page's script.
  const glue = inNode ? new URL('./dist/stepcalc-plan.js', import.meta.url) : new URL('dist/stepcalc-plan.js', base);
  /** @type {typeof import('./dist/stepcalc-plan.js')} */
  const { default: createStepcalcPlan } = await import(glue.href);
  return createStepcalcPlan(init);
}

/**
 * Instantiates the module once and returns the API; later calls return the same
 * promise. `options.wasmBinary` (bytes) skips fetching the .wasm file (`options.planWasmBinary`
 * the planner's, dist/stepcalc-plan.wasm, read on the first plan() otherwise); `options.baseUrl`
 * (the folder holding `dist/`, relative to this file or absolute) locates it when this
 * file was bundled elsewhere; `options.kernelsUrl` is where loadKernels finds the packs
 * (default dist/kernels/ there). An instance that ever traps is dropped: the next
 * load() makes a fresh one.
 */
export function load(options = {}) {
  if (options === null || typeof options !== 'object') {
    return Promise.reject(new StepCalcError('type_error', 'options', 'options must be an object.'));
  }
  if (!instance) {
    const promise = instantiate(options, () => {
      if (instance === promise) instance = undefined;
    });
    instance = promise;
    promise.catch(() => {
      if (instance === promise) instance = undefined; // a failed load may be retried
    });
  }
  return instance;
}

/**
 * Whether `text` is at most `limit` bytes as UTF-8 (what Embind copies), without
 * encoding it: every UTF-16 unit is at least one byte and at most three.
 */
function fitsUtf8(text, limit) {
  if (text.length > limit) return false;
  if (text.length * 3 <= limit) return true;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3; // a surrogate pair: 3 + 1 = 4
    if (c >= 0xdc00 && c <= 0xdfff && i > 0 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800) bytes -= 2;
  }
  return bytes <= limit;
}

function wrap(core, drop, kernelsUrl, instantiatePlannerCore, wasmModule) {
  // The core's facts (limits, sweep axes, ...), read once, never retyped here.
  const catalogueText = core.catalogue();
  // bounds: the names of the bound numbers summary columns hold, in the core's order.
  const { limits, bounds } = JSON.parse(catalogueText);
  const sweepAxes = JSON.parse(catalogueText).sweep.axes.map((/** @type {{name: string}} */ a) => a.name);
  let presetsText;
  let broken = null;
  let serving = false; // inside core.serve: every other call into the core is refused
  const packsAdded = new Map(); // file -> bytes given to this instance (the planner's module gets them too)
  /** @type {Promise<{core: any, packs: Set<string>}> | undefined} */
  let planner; // the planner's module, loaded by the first plan()
  const presetsOnce = () => JSON.parse((presetsText ??= call(() => core.presets())));

  /** Loads the packs of a GPU and version (docs/KERNELS.md); see stepcalc.d.ts. */
  async function loadKernels(gpu, version, parts) {
    if (typeof gpu !== 'string') throw new StepCalcError('type_error', 'gpu', 'gpu must be a string.');
    if (version !== undefined && version !== null && typeof version !== 'string') {
      throw new StepCalcError('type_error', 'kernels', 'version must be a string.');
    }
    // The core resolves the name (any case, aliases) and the version (default when absent).
    const set = call(() => core.kernelSet(gpu, version ?? ''));
    const names = set.parts.map((p) => p.name);
    if (parts !== undefined && (!Array.isArray(parts) || parts.some((p) => !names.includes(p)))) {
      throw new StepCalcError('invalid_value', 'parts', `parts must be a list of: ${names.join(', ')}.`);
    }
    const chosen = set.parts.filter((p) => !parts || parts.includes(p.name));
    const bytes = await Promise.all(chosen.map(async (p) => {
      try {
        return await readPack(new URL(p.file, kernelsUrl));
      } catch (error) {
        throw new StepCalcError('io_error', 'gpu', `Cannot read the kernel pack ${p.file} for ${set.gpu} ` +
          `${set.version} from ${kernelsUrl.href} (${String(error?.message ?? error).slice(0, 200)}).`);
      }
    }));
    chosen.forEach((p, i) => {
      if (packsAdded.has(p.file)) return;
      try {
        call(() => core.addKernelPack(bytes[i]));
      } catch (error) {
        // Bytes the core refused (e.g. an HTML page served with 200) are not kept: the
        // next call fetches them again.
        packCache.delete(String(new URL(p.file, kernelsUrl)));
        throw error;
      }
      packsAdded.set(p.file, bytes[i]);
    });
    return { gpu: set.gpu, version: set.version,
      parts: set.parts.filter((p) => packsAdded.has(p.file)).map((p) => p.name) };
  }

  /** The planner's module, instantiated once (a failed load is retried by the next plan()). */
  function plannerModule() {
    if (!planner) {
      const loaded = (plannerCore) => ({ core: plannerCore, packs: new Set() });
      const promise = instantiatePlannerCore().then(loaded, (error) => {
        throw new StepCalcError('io_error', '', 'Cannot load the planner\'s module (dist/stepcalc-plan.js, .wasm): ' +
          `${String(error?.message ?? error).slice(0, 200)}.`);
      });
      planner = promise;
      promise.catch(() => {
        if (planner === promise) planner = undefined;
      });
    }
    return planner;
  }

  /** The JSON text of a request or list, refused here if the core would refuse its size. */
  function toJson(request, path = 'request') {
    let text = request;
    if (typeof request !== 'string') {
      if (request === null || typeof request !== 'object') {
        throw new StepCalcError('type_error', path, `${path} must be an object or JSON text.`);
      }
      try {
        text = JSON.stringify(request);
      } catch (error) {
        if (error instanceof RangeError) text = null; // longer than a string can be
        else throw new StepCalcError('type_error', path, `${path} cannot be serialised as JSON: ${error.message}`);
      }
    }
    if (text === null || !fitsUtf8(text, limits.document_bytes)) {
      throw new StepCalcError('too_large', '',
        `The JSON document is longer than the limit of ${limits.document_bytes} bytes.`);
    }
    return text;
  }

  /**
   * Runs one core call. A trap (RuntimeError, an abort, out of memory) leaves the
   * instance unusable: it is dropped, this and every later call on it throws
   * StepCalcError 'internal_error', and load() makes a fresh one.
   */
  function guard(run) {
    if (broken) throw new StepCalcError('internal_error', '', broken);
    if (serving) {
      // The core is inside a simulation (this is a call from serve()'s onProgress): it
      // is not re-entrant, and going in again corrupted its heap.
      throw new StepCalcError('reentrant', '', 'The module is running serve(); call it from onProgress only after ' +
        'serve() returns (e.g. setTimeout), or cancel with return false.');
    }
    try {
      return run();
    } catch (error) {
      const why = String(error?.message ?? error).slice(0, 200);
      broken = `The pricing module failed (${error?.name ?? 'error'}: ${why}) ` +
        'and was discarded; load() again for a fresh one.';
      drop();
      throw new StepCalcError('internal_error', '', broken);
    }
  }

  function call(run) {
    const outcome = guard(run);
    if (outcome && typeof outcome === 'object' && 'ok' in outcome && !('json' in outcome)) {
      if (!outcome.ok) throw new StepCalcError(outcome.code, outcome.path, outcome.message);
      return outcome;
    }
    if (outcome && typeof outcome === 'object' && 'ok' in outcome) {
      if (!outcome.ok) throw new StepCalcError(outcome.code, outcome.path, outcome.message);
      return JSON.parse(utf8.decode(outcome.json));
    }
    return outcome;
  }

  // A long core call (serve, plan) given report(share): false when aborted or onProgress says
  // false; an exception in onProgress cancels (it must not unwind through Wasm), then rethrown.
  function withProgress(onProgress, signal, run) {
    /** @type {{error: any} | undefined} */
    let thrown;
    const report = (share) => {
      if (signal?.aborted) return false;
      if (!onProgress) return true;
      try {
        return onProgress(share) !== false;
      } catch (error) {
        thrown = { error };
        return false;
      }
    };
    try {
      return call(() => {
        serving = true;
        try {
          return run(report);
        } finally {
          serving = false;
        }
      });
    } catch (error) {
      if (thrown) throw thrown.error;
      throw error;
    }
  }

  const modeOption = (options) => {
    if (options === undefined) return '';
    if (options === null || typeof options !== 'object') {
      throw new StepCalcError('type_error', 'options', 'options must be an object.');
    }
    const { mode = '' } = options;
    if (typeof mode !== 'string') throw new StepCalcError('type_error', 'mode', 'mode must be a string.');
    if (!fitsUtf8(mode, limits.string_bytes)) {
      throw new StepCalcError('out_of_range', 'mode', `mode is longer than ${limits.string_bytes} bytes.`);
    }
    return mode;
  };

  /** The detail option as the binding's number: 0 the request's own, 1 summary, 2 full. */
  const detailOption = (options) => {
    if (options === undefined || options === null || options.detail === undefined) return 0;
    if (options.detail === 'summary') return 1;
    if (options.detail === 'full') return 2;
    throw new StepCalcError('invalid_value', 'detail', 'detail must be "summary" or "full".');
  };
  const summaries = summaryPath(core, limits, bounds, guard, () => presetsOnce().warning_codes);
  const checkValues = (values, path) => {
    if (!Array.isArray(values) && !ArrayBuffer.isView(values)) {
      throw new StepCalcError('type_error', path, `${path} must be an array of numbers.`);
    }
    if (/** @type {ArrayLike<number>} */ (values).length > limits.sweep_points) {
      throw new StepCalcError('out_of_range', path, `A sweep may have at most ${limits.sweep_points} points.`);
    }
    if (Array.prototype.some.call(values, (v) => typeof v !== 'number')) {
      throw new StepCalcError('type_error', path, `${path} must be an array of numbers.`);
    }
    return Float64Array.from(/** @type {ArrayLike<number>} */ (values));
  };
  const columns = (run) => summaries.columns(call(run));

  return Object.freeze({
    /**
     * Prices one request; returns the result object (docs/RESULT.md), at
     * `options.detail` ('summary' or 'full'; default the request's own, full).
     */
    price: (request, options) => {
      const detail = detailOption(options);
      if (detail === 1 || (detail === 0 && request?.detail === 'summary')) {
        const fast = summaries.price(request);
        if (fast) return fast;
      } else {
        const full = summaries.full(request);
        if (full) return full;
      }
      const text = toJson(request);
      return call(() => (detail ? core.priceAt(text, detail) : core.price(text)));
    },
    /** Prices an array of requests; failed elements are {error: {code, path, message}}. */
    priceAll(requests, options) {
      if (!Array.isArray(requests)) throw new StepCalcError('type_error', 'requests', 'requests must be an array.');
      const mode = modeOption(options);
      const detail = detailOption(options);
      const text = toJson(requests, 'requests');
      return call(() => (detail ? core.priceDocumentAt(text, mode, detail) : core.priceDocument(text, mode)));
    },
    /** Summaries of many requests as columns (typed arrays), one entry per request. */
    priceMany(requests, options) {
      if (!Array.isArray(requests)) throw new StepCalcError('type_error', 'requests', 'requests must be an array.');
      const mode = modeOption(options);
      const text = toJson(requests, 'requests');
      return columns(() => core.priceMany(text, mode));
    },
    /** A sweep at summary detail as columns: one entry per value of `axis`. */
    sweepColumns(request, axis, values) {
      const v = checkValues(values, 'values');
      const text = toJson(request);
      return columns(() => core.sweepColumns(text, axis, v));
    },
    /**
     * A 2-D sweep for heat maps: entry i * x.values.length + j is y.values[i] on y.axis
     * with x.values[j] on x.axis.
     */
    sweep2d(request, x, y) {
      if (!x || !y || typeof x !== 'object' || typeof y !== 'object') {
        throw new StepCalcError('type_error', 'axis', 'x and y must be {axis, values}.');
      }
      const xs = checkValues(x.values, 'values_x');
      const ys = checkValues(y.values, 'values_y');
      if (xs.length * ys.length > limits.sweep_points) {
        throw new StepCalcError('out_of_range', 'values', `A sweep may have at most ${limits.sweep_points} points.`);
      }
      const text = toJson(request);
      const grid = columns(() => core.sweep2d(text, String(x.axis), xs, String(y.axis), ys));
      return Object.freeze({ ...grid, width: xs.length, height: ys.length });
    },
    /** Prices `request` once per value along `axis`; one point per value, in order. */
    sweep(request, axis, values) {
      if (!sweepAxes.includes(axis)) {
        throw new StepCalcError('invalid_value', 'axis', `axis must be one of ${sweepAxes.join(', ')}.`);
      }
      if (!Array.isArray(values)) throw new StepCalcError('type_error', 'values',
        'values must be an array of numbers.');
      if (values.length > limits.sweep_points) {
        throw new StepCalcError('out_of_range', 'values', `A sweep may have at most ${limits.sweep_points} points.`);
      }
      if (values.some((v) => typeof v !== 'number')) {
        throw new StepCalcError('type_error', 'values', 'values must be an array of numbers.');
      }
      const text = toJson(request);
      return call(() => core.sweep(text, axis, values));
    },
    /**
     * Serving estimate of a request with a `workload` (or an array of them: results or
     * {error} in order). `options.onProgress(share)` is called with the finished share
     * (0..1) every few hundred engine steps; returning false cancels (StepCalcError
     * 'cancelled'). `options.mode` overrides each request's mode. See docs/SERVING.md.
     */
    serve(request, options) {
      const mode = modeOption(options);
      const onProgress = options?.onProgress;
      if (onProgress !== undefined && typeof onProgress !== 'function') {
        throw new StepCalcError('type_error', 'onProgress', 'onProgress must be a function.');
      }
      const text = toJson(request, Array.isArray(request) ? 'requests' : 'request');
      return withProgress(onProgress, undefined, (report) => core.serve(text, mode, onProgress ? report : null));
    },
    /**
     * Deployment plan (docs/PLAN.md): loads the measured tables of every candidate GPU (and, on
     * the first call, the planner's module, dist/stepcalc-plan.*), then serves each
     * configuration in the measured mode and recommends the cheapest that meets `request.slo`.
     * `options.onProgress(share)` gets the share of candidates done; returning false, or
     * aborting `options.signal`, cancels (StepCalcError 'cancelled').
     */
    async plan(request, options) {
      const onProgress = options?.onProgress;
      if (onProgress !== undefined && typeof onProgress !== 'function') {
        throw new StepCalcError('type_error', 'onProgress', 'onProgress must be a function.');
      }
      const signal = options?.signal;
      if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean')) {
        throw new StepCalcError('type_error', 'signal', 'signal must be an AbortSignal.');
      }
      const cancelled = () => new StepCalcError('cancelled', '', 'The plan was cancelled.');
      const text = toJson(request, 'request');
      if (broken) throw new StepCalcError('internal_error', '', broken);
      const plannerReady = plannerModule(); // fetched while the tables load
      const parsed = JSON.parse(text);
      const gpus = Array.isArray(parsed?.gpus) && parsed.gpus.every((g) => typeof g === 'string')
        ? parsed.gpus
        : presetsOnce().gpu_specs.filter((g) => g.kernels.length > 0).map((g) => g.name);
      if (signal?.aborted) throw cancelled();
      // Every GPU's tables at once (the reads are shared and each pack is decoded as it
      // arrives): one GPU after another, ten GPUs took about 1.3 s of a cold plan in the page.
      await Promise.all(gpus.map(async (gpu) => {
        try {
          await loadKernels(gpu);
        } catch (error) {
          // An unknown name is the core's error to give, with its field path.
          if (!(error instanceof StepCalcError) || error.code !== 'unknown_gpu') throw error;
        }
      }));
      if (signal?.aborted) throw cancelled();
      const { core: plannerCore, packs } = await plannerReady;
      if (signal?.aborted) throw cancelled();
      // Every pack this instance was given, also to the planner's module (its own registry).
      for (const [file, bytes] of packsAdded) {
        if (packs.has(file)) continue;
        call(() => plannerCore.addKernelPack(bytes));
        packs.add(file);
      }
      return withProgress(onProgress, signal, (report) => plannerCore.plan(text, report));
    },
    /** Model presets, GPUs with their constants, kernel tables, and mode names: a fresh copy per call. */
    presets: () => presetsOnce(),
    /**
     * Loads the measured kernel tables of `gpu` ('H100', 'H200', 'B200', 'A100', 'L40S') at
     * `version` (default: the GPU's default), all parts or those listed. Reads each pack
     * once per page or process; concurrent calls share the reads.
     */
    loadKernels: (gpu, version, parts) => loadKernels(gpu, version, parts),
    /**
     * What a Worker's load() takes to start without fetching or compiling again: the
     * compiled module and the kernel packs read so far (structured-cloneable, for postMessage).
     */
    forWorker: () => ({ wasmModule, kernelPacks: Object.fromEntries(packsAdded) }),
    /**
     * The facts the core owns (modes, corrected switches and parameters, sweep axes,
     * request fields, model-config notes, dtypes, GPUs, limits): a fresh copy per call.
     */
    catalogue: () => JSON.parse(catalogueText),
    /** A preset name or config object resolved to the model the core prices, with its notes. */
    resolveModel(model) {
      if (typeof model !== 'string' && (model === null || typeof model !== 'object' || Array.isArray(model))) {
        throw new StepCalcError('type_error', 'model', 'model must be a preset name or a config object.');
      }
      const text = toJson(typeof model === 'string' ? JSON.stringify(model) : model, 'model');
      return call(() => core.resolveModel(text));
    },
    version: () => call(() => core.version()),
  });
}

/**
 * Prices without the step's JSON: a request's pricing inputs (all but its step) are parsed
 * once into one of the module's slots; each call writes only the step's lengths into the
 * module and reads eight numbers back (a summary) or the result's JSON (full detail). Used
 * only when the result is certain to equal the JSON path's: a plain request and step (no toJSON, items with exactly the
 * known keys, whole numbers in range) whose pricing inputs, compared field by field,
 * are those of a prepared slot; anything else takes the JSON path.
 */
function summaryPath(core, limits, bounds, guard, codeNames) {
  const slotCount = core.slotCount();
  const slots = [];
  let last = null;
  let clock = 0;
  let stepBuffer = new Int32Array(0);
  let results = new Float64Array(0);
  const keys = new WeakMap();
  const keysOf = (o) => keys.get(o) ?? (keys.set(o, Object.keys(o)), keys.get(o));
  /** An object JSON.stringify writes as {...} from its own keys: not null, not an array, no toJSON. */
  const plain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && v.toJSON === undefined;

  /**
   * True when JSON.stringify(value) equals JSON.stringify(snap) (snap parsed from JSON); `skip` compares the
   * key only.
   */
  function same(value, snap, skip) {
    if (snap === null || typeof snap !== 'object') return value === snap;
    if (value === null || typeof value !== 'object' || value.toJSON !== undefined) return false;
    if (Array.isArray(snap) !== Array.isArray(value)) return false;
    if (Array.isArray(snap)) {
      if (value.length !== snap.length) return false;
      for (let i = 0; i < snap.length; i++) if (!same(value[i], snap[i])) return false;
      return true;
    }
    const k = keysOf(snap);
    let i = 0;
    for (const key in value) {
      if (key !== k[i] || (key !== skip && !same(value[key], snap[key]))) return false;
      i++;
    }
    return i === k.length;
  }

  function slotFor(request) {
    if (last && same(request, last.snap, 'step')) return last;
    let json;
    try {
      json = JSON.stringify({ ...request, step: {} });
    } catch {
      return null;
    }
    let entry = slots.find((e) => e.json === json);
    if (!entry) {
      if (json.length * 3 > limits.document_bytes) return null;
      let slot = slots.length;
      if (slot >= slotCount) {
        const oldest = slots.reduce((a, b) => (a.used <= b.used ? a : b));
        slot = oldest.slot;
        slots.splice(slots.indexOf(oldest), 1);
      }
      const outcome = guard(() => core.prepare(slot, json));
      if (!outcome.ok) return null;
      entry = { json, slot, snap: JSON.parse(json), head: JSON.parse(utf8.decode(outcome.json)) };
      slots.push(entry);
    }
    entry.used = ++clock;
    last = entry;
    return entry;
  }

  const whole = (v) => Number.isInteger(v) && v >= 0 && v <= limits.tokens;
  /** How many keys a step item has (for...in, as JSON.stringify would see them, without an array). */
  function keyCount(item) {
    let keys = 0;
    // eslint-disable-next-line no-unused-vars -- only the keys' number matters
    for (const key in item) keys++;
    return keys;
  }

  /**
   * Writes the step's lengths into the module; false when it is not plain (or, for a full
   * result, which counts every decode's new tokens, when a decode's are not 1).
   */
  function writeStep(step, counts, full) {
    if (!plain(step)) return false;
    let prefill = [];
    let decode = [];
    for (const key in step) {
      const list = step[key];
      if (!Array.isArray(list) || /** @type {any} */ (list).toJSON !== undefined) return false;
      if (key === 'prefill_requests') prefill = list;
      else if (key === 'decode_requests') decode = list;
      else return false;
    }
    const np = prefill.length;
    const nd = decode.length;
    if (np + nd > limits.requests_per_step) return false;
    if (stepBuffer.length < 2 * np + nd) stepBuffer = guard(() => core.stepView(2 * np + nd));
    const b = stepBuffer;
    for (let i = 0; i < np; i++) {
      const item = prefill[i];
      if (!plain(item) || keyCount(item) !== 2) return false;
      const p = item.progress_index;
      const n = item.num_new_prefill_tokens;
      if (!whole(p) || !whole(n)) return false;
      b[2 * i] = p;
      b[2 * i + 1] = n;
    }
    for (let i = 0; i < nd; i++) {
      const item = decode[i];
      if (!plain(item)) return false;
      const p = item.progress_index;
      const n = item.num_new_decode_tokens;
      if (keyCount(item) !== (n === undefined ? 1 : 2) || !whole(p) || (n !== undefined && !whole(n))) return false;
      if (full && n !== undefined && n !== 1) return false;
      b[2 * np + i] = p;
    }
    counts[0] = np;
    counts[1] = nd;
    return true;
  }

  let catalogue;
  const codesOf = (low, high) => {
    const names = (catalogue ??= codeNames());
    const out = [];
    for (let c = 0; c < names.length; c++) if ((c < 32 ? low >>> c : high >>> (c - 32)) & 1) out.push(names[c]);
    return out;
  };
  const counts = [0, 0];

  return {
    /** The summary of `request` without JSON, or undefined (take the JSON path). */
    price(request) {
      if (!plain(request)) return undefined;
      const entry = slotFor(request);
      if (!entry || !writeStep(request.step, counts)) return undefined;
      if (guard(() => core.priceSlot(entry.slot, counts[0], counts[1])) !== 0) return undefined;
      if (results.length === 0) results = guard(() => core.resultView()); // new after memory growth
      const r = results;
      const { head } = entry;
      // Two literals rather than {...head, ...}: spreading into a literal with more keys after it
      // took most of a summary's time in V8 (6 of its 8 us in Node 20).
      const step_time_us = r[0], total_us = r[1], bound = bounds[r[5]], prefill_s = r[2], decode_s = r[3];
      const overhead_us = r[4], warning_codes = codesOf(r[6], r[7]);
      return 'id' in head
        ? { id: head.id, mode: head.mode, detail: 'summary', step_time_us, total_us, bound, prefill_s, decode_s,
          overhead_us, warning_codes }
        : { mode: head.mode, detail: 'summary', step_time_us, total_us, bound, prefill_s, decode_s, overhead_us,
          warning_codes };
    },
    /**
     * The full result of `request` without the step's JSON (the slot's request with the step
     * written into the module; the result still comes as JSON), or undefined (take the JSON
     * path, which also words any error).
     */
    full(request) {
      if (!plain(request)) return undefined;
      const entry = slotFor(request);
      if (!entry || !writeStep(request.step, counts, true)) return undefined;
      const outcome = guard(() => core.priceSlotFull(entry.slot, counts[0], counts[1]));
      return outcome.ok ? parseFull(utf8.decode(outcome.json)) : undefined;
    },
    /** The binding's columns as the API's: bound names and warning codes per entry. */
    columns(c) {
      const sets = new Map();
      const warning_codes = Array.from(c.warnings_low, (low, i) => {
        const high = c.warnings_high[i];
        const key = high * 4294967296 + low;
        if (!sets.has(key)) sets.set(key, Object.freeze(codesOf(low, high)));
        return sets.get(key);
      });
      return Object.freeze({
        length: c.step_time_us.length, step_time_us: c.step_time_us, total_us: c.total_us, prefill_s: c.prefill_s,
        decode_s: c.decode_s, overhead_us: c.overhead_us, bound: Array.from(c.bound, (b) => bounds[b] ?? null),
        warning_codes, errors: c.errors,
      });
    },
  };
}

const LOOKUPS = '"attn_lookups":[';
/**
 * A full result, its decode's attention lookups (one object per KV length: most of a large
 * step's text) parsed when first read. In the result's JSON the key is the decode's only
 * `"attn_lookups":[` (a quote inside a string is escaped) and its array ends at the decode's
 * following `],"gemms":`; a short array is parsed at once.
 */
function parseFull(text) {
  const at = text.indexOf(LOOKUPS);
  const start = at + LOOKUPS.length - 1; // its '['
  const end = at < 0 ? -1 : text.indexOf('],"gemms":', start);
  if (end - start < 4096) return JSON.parse(text);
  const result = JSON.parse(text.slice(0, start + 1) + text.slice(end));
  const decode = result.phases.decode;
  /** @type {string | undefined} */
  let list = text.slice(start, end + 1); // dropped once parsed (a slice keeps the whole text alive)
  let lookups;
  Object.defineProperty(decode, 'attn_lookups', { enumerable: true, configurable: true,
    get: () => {
      if (list !== undefined) lookups = JSON.parse(list), list = undefined;
      return lookups;
    },
    set: (v) => { lookups = v, list = undefined; } });
  return result;
}

/** One-shot helpers: each awaits load() first. */
export const price = async (request, options) => (await load()).price(request, options);
export const serve = async (request, options) => (await load()).serve(request, options);
export const plan = async (request, options) => (await load()).plan(request, options);
export const sweep = async (request, axis, values) => (await load()).sweep(request, axis, values);
export const presets = async () => (await load()).presets();
export const catalogue = async () => (await load()).catalogue();
export const resolveModel = async (model) => (await load()).resolveModel(model);
export const version = async () => (await load()).version();
export const loadKernels = async (gpu, version, parts) => (await load()).loadKernels(gpu, version, parts);
