// SPDX-License-Identifier: Apache-2.0
// Where the page prices a step. One of at most BIG_STEP requests is priced on the page's
// thread, as it always was: a few milliseconds, inside the frame of the edit that asked (a
// 512-request edit is priced and drawn in that frame, and the first view waits for no
// worker). A bigger one is priced in a Web Worker (web/pricing-worker.js), kept between jobs:
// in the measured mode a 45,000-decode step took the page's thread for over a second per
// edit, its other modes and sweeps hundreds of milliseconds more. The callers ask
// `big(request)` and then price here, or post the job to the worker, whose jobs run one at a
// time in order. A newer edit calls cancel(): the jobs not done are refused with the error
// 'cancelled' (their callers drop them) and a worker still busy with one is ended, as the
// serving worker is, since a call into the module reads no message until it returns.
//
// `pricer.calc` is the page's module as every part of the page uses it, whose price() and
// sweepColumns() note a call of a big step in the performance timeline, as the worker's jobs
// are noted ('stepcalc:price', detail {what, requests, thread: 'page' | 'worker'}): the page
// tests check that a big step never reaches the page's thread (tests/web/big-measured.test.mjs).
import { StepCalcError } from '../wasm/stepcalc.js';

/**
 * Requests in a step above which it is priced in the worker. At 2,048 a measured step's
 * price and drawing take ~35 ms of the page's thread on the 2-core machine of BENCHMARKS.md.
 */
export const BIG_STEP = 2048;
/** JSON text longer than this (characters; ~2,000 or more rows) is checked by the core in the worker. */
export const BIG_TEXT = 100_000;

/** Requests the worker holds, so that a step's later jobs (its modes, its sweeps) do not send it again. */
export const HELD_REQUESTS = 4;

/** The requests in a request's step (0 for text or a request without a step). */
export const requestsOf = (request) => (request && typeof request === 'object'
  ? (request.step?.prefill_requests?.length ?? 0) + (request.step?.decode_requests?.length ?? 0) : 0);

/**
 * @typedef {{message: Record<string, any>, requests: number, start: number, resolve: (value: any) => void,
 *   reject: (error: any) => void}} Job
 */

/**
 * The pricer of the page's module `calc`; `baseUrl` is where the worker's module finds
 * wasm/dist (the page's `wasm/` folder).
 * @param {any} calc @param {string} baseUrl
 */
export function createPricer(calc, baseUrl) {
  /** @type {Worker | null} */
  let worker = null;
  /** The files of the kernel packs the worker was given. */
  let packs = new Set();
  /**
   * The requests the worker holds, each sent once with its number: the worker keeps the last
   * HELD_REQUESTS it was sent, as this does (messages arrive in order, so both forget the same).
   * @type {Map<object, number>}
   */
  let held = new Map();
  let heldCount = 0;
  /** @type {Job | null} */
  let running = null;
  /** @type {Job[]} */
  const queue = [];
  let ids = 0;

  const note = (what, requests, thread, start) =>
    performance.measure('stepcalc:price', { start, detail: { what, requests, thread } });

  /** `calc[method]`, noting a call of a big step (which the page should have sent to the worker). */
  const noted = (method) => (request, ...rest) => {
    const requests = requestsOf(request);
    if (requests <= BIG_STEP) return calc[method](request, ...rest);
    const start = performance.now();
    try {
      return calc[method](request, ...rest);
    } finally {
      note(method, requests, 'page', start);
    }
  };

  function stop() {
    worker?.terminate();
    worker = null;
  }

  /** Whether the page has read kernel packs since the worker was given its own. */
  function lacksPacks() {
    return Object.keys(calc.forWorker().kernelPacks).some((file) => !packs.has(file));
  }

  /** Posts the next job when the worker is free; a worker lacking packs the page has is replaced. */
  function next() {
    if (running || !queue.length) return;
    const job = /** @type {Job} */ (queue.shift());
    running = job;
    if (worker && lacksPacks()) stop();
    let share;
    if (!worker) {
      share = calc.forWorker();
      packs = new Set(Object.keys(share.kernelPacks));
      held = new Map();
      worker = new Worker(new URL('./pricing-worker.js', import.meta.url), { type: 'module' });
      worker.onmessage = ({ data }) => {
        const done = running;
        if (!done || data.id !== done.message.id) return; // a job cancelled meanwhile
        running = null;
        note(done.message.job, done.requests, 'worker', done.start);
        if (data.ok) done.resolve(data.value);
        else done.reject(data.error);
        next();
      };
      worker.onerror = (event) => {
        event.preventDefault();
        const failed = running;
        running = null;
        stop();
        const message = `The pricing worker failed: ${event.message ?? 'unknown error'}`;
        failed?.reject({ code: 'worker', path: '', message });
        next();
      };
    }
    job.start = performance.now();
    const { request, ...message } = job.message;
    worker.postMessage({ ...message, ...hold(request), baseUrl, share });
  }

  /** The fields naming `request` in a job's message: its number, and itself when the worker lacks it. */
  function hold(request) {
    if (!request || typeof request !== 'object') return { request }; // JSON text: never held
    let n = held.get(request);
    if (n !== undefined) return { requestId: n };
    n = ++heldCount;
    held.set(request, n);
    if (held.size > HELD_REQUESTS) held.delete(held.keys().next().value);
    return { requestId: n, request };
  }

  /**
   * A job for the worker: a promise of its value, rejected with the core's error
   * ({code, path, message}) or with code 'cancelled'. `id` names the job (and, for 'price',
   * the result the worker keeps).
   * @param {string} job @param {Record<string, any>} fields
   */
  function post(job, fields, id = ++ids) {
    return new Promise((resolve, reject) => {
      queue.push({ message: { id, job, ...fields }, requests: requestsOf(fields.request), start: 0, resolve, reject });
      next();
    });
  }

  return {
    calc: Object.freeze({ ...calc, price: noted('price'), sweepColumns: noted('sweepColumns') }),
    /** Whether `request`'s step is priced in the worker. */
    big: (request) => requestsOf(request) > BIG_STEP,
    /** Whether JSON `text` is checked by the core in the worker. */
    bigText: (text) => typeof text === 'string' && text.length > BIG_TEXT,
    /**
     * The result of `request` with its lookup lists cut (web/lookups.js), `lookups` the
     * rows of its whole lookup table, `token` for lookupsCsv, and `reference`: the summary
     * of the same step in the mode `reference` names, when it does (null when that refuses it).
     * @param {Record<string, any>} request @param {{reference?: string | null}} [options]
     * @returns {Promise<{result: any, lookups: number, reference: any, token: number}>}
     */
    price: (request, { reference = null } = {}) => {
      const token = ++ids;
      return post('price', { request, reference }, token).then((value) => ({ ...value, token }));
    },
    /**
     * calc.price({...request, ...patch}, {detail: 'summary'}) in the worker; `request` may be
     * JSON text (the core checks it as written).
     * @param {Record<string, any> | string} request @param {Record<string, any>} [patch]
     */
    summary: (request, patch = undefined) => post('summary', { request, patch }),
    /** calc.sweepColumns in the worker. */
    sweep: (request, axis, values) => post('sweep', { request, axis, values }),
    /** The CSV records of the whole lookup table of the result `price` gave with `token` (of `request`). */
    lookupsCsv: (request, token) => post('lookups-csv', { request, token }),
    /** Refuses every job not done with 'cancelled', ending the worker when it is busy with one. */
    cancel() {
      const dropped = [...(running ? [running] : []), ...queue.splice(0)];
      if (running) stop();
      running = null;
      const error = new StepCalcError('cancelled', '', 'A newer edit replaced this step before it was priced.');
      for (const job of dropped) job.reject(error);
    },
  };
}
