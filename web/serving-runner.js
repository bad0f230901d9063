// SPDX-License-Identifier: Apache-2.0
// The serve simulation of the page's current workload, run once and shared: the summary
// strip under the title (web/serving-summary.js) and the Serving panel (web/serving-panel.js)
// both show this runner's result, so a request is never simulated twice. It keeps the
// workload (the panel's fields, `serving` in the store's state when they are all numbers),
// builds the serving request from the store's priced request, and runs it in one Web Worker
// (web/serving-worker.js) kept between jobs, so the module and the GPU's kernel tables are
// loaded once. The latency-throughput curve (more simulations) runs only while someone
// wants it (the panel, once on screen), after the current request's own result.
//
// Listeners get (event, run) with event one of:
//   'workload'  the store's workload replaced the one kept here (a link, an import, a plan opened)
//   'start'     a new request is being simulated (`run` is new: no result yet)
//   'curve'     the curve's simulations started for the current request
//   'progress'  `run.share` (0..1 over the running job) moved
//   'result'    `run.result`, the serve result of `run.request`
//   'point'     a curve point arrived (`run.points`)
//   'error'     `run.error` ({code, path, message}): the request cannot be served as it is
//   'done'      the job ended (the result, and the curve when it was asked for)
//   'cancelled' cancel() stopped the job; the same request does not run again until it changes
import { CURVE_CONCURRENCY, defaultServing, serveRequest } from './serving-state.js';

/**
 * @typedef {{key: string, request: Record<string, any>, stepRequest: Record<string, any>,
 *   workload: import('./serving-state.js').Serving, status: 'running' | 'done' | 'error' | 'cancelled',
 *   result: any, error: {code: string, path: string, message: string} | null,
 *   points: {concurrency: number, result?: any, error?: any}[],
 *   curve: null | 'running' | 'done' | 'cancelled', share: number}} Run
 * @typedef {'workload' | 'start' | 'curve' | 'progress' | 'result' | 'point' | 'error' | 'done' |
 *   'cancelled'} RunEvent
 * @typedef {(event: RunEvent, run: Run | null) => void} RunListener
 * @typedef {ReturnType<typeof servingRunner>} ServingRunner
 */

/** The curve's jobs for a run: one simulation per concurrency, the run's own included. */
function curveJobs(/** @type {Run} */ run) {
  const { workload, stepRequest } = run;
  const own = workload.load === 'concurrency' ? [workload.concurrency] : [];
  return [...new Set([...CURVE_CONCURRENCY, ...own])].filter((c) => Number.isInteger(c) && c > 0)
    .sort((a, b) => a - b).map((c) => ({ concurrency: c, request: serveRequest(stepRequest, workload, c) }));
}

/**
 * A runner over the page's store. Nothing runs before start(), so its listeners can
 * subscribe first.
 * @param {{store: import('./store.js').Store, calc?: any}} context
 */
export function servingRunner({ store, calc }) {
  const workload = { ...defaultServing(), ...(store.state.serving ?? {}) };
  let seen = store.state.serving; // the store's workload last taken into `workload` (or put there)
  /** @type {Set<RunListener>} */
  const listeners = new Set();
  /** @type {Worker | null} */
  let worker = null;
  let busy = false; // the worker is running a job
  let job = 0;
  let wantCurve = false;
  let started = false;
  /** @type {Run | null} */
  let run = null;
  let timer = 0;

  const tell = (/** @type {RunEvent} */ event) => { for (const fn of [...listeners]) fn(event, run); };

  function stop() {
    worker?.terminate();
    worker = null;
    busy = false;
  }

  /** Starts a job for the current run (ending any job still running: it cannot read messages). */
  function post(/** @type {Record<string, any>} */ message) {
    if (busy) stop();
    // A new worker gets the page's compiled module and the kernel packs it has read.
    const share = worker ? undefined : calc?.forWorker();
    worker ??= new Worker(new URL('./serving-worker.js', import.meta.url), { type: 'module' });
    busy = true;
    const id = ++job;
    const mine = /** @type {Run} */ (run);
    const withCurve = message.curve.length > 0;
    worker.onmessage = ({ data }) => {
      // A message of a job that was cancelled or replaced may still be queued: only the current job's count.
      if (data.id !== id || id !== job) return;
      if (data.type === 'progress') {
        mine.share = data.share;
        tell('progress');
      } else if (data.type === 'result') {
        mine.result = data.result;
        mine.status = 'done';
        tell('result');
      } else if (data.type === 'error') {
        busy = false;
        mine.error = data.error;
        mine.status = 'error';
        if (mine.curve === 'running') mine.curve = null;
        tell('error');
      } else if (data.type === 'point') {
        mine.points.push({ concurrency: data.concurrency, result: data.result, error: data.error });
        tell('point');
      } else if (data.type === 'done') {
        busy = false;
        mine.share = 1;
        if (withCurve) mine.curve = 'done';
        if (!curveIfWanted()) tell('done');
      }
    };
    worker.onerror = (event) => {
      if (id !== job) return;
      stop();
      mine.status = 'error';
      mine.error = { code: 'worker', path: '',
        message: `The simulation worker failed: ${event.message ?? 'unknown error'}` };
      tell('error');
    };
    worker.postMessage({ id, baseUrl: new URL('wasm/', document.baseURI).href, share, ...message });
  }

  /** Runs the curve of the current request when it is wanted and not run yet; true when it started. */
  function curveIfWanted() {
    if (!wantCurve || !run || run.status !== 'done' || run.curve !== null || busy) return false;
    run.curve = 'running';
    run.share = 0;
    post({ request: null, curve: curveJobs(run) });
    tell('curve');
    return true;
  }

  /**
   * Simulates the store's priced request with the workload, unless that very request is
   * the current run (then at most its curve starts).
   */
  function update() {
    clearTimeout(timer);
    const { good } = store;
    if (!started || !good) return;
    const serving = store.state.serving;
    if (serving && serving !== seen) { // a link, an import or a plan set the workload
      Object.assign(workload, serving);
      seen = serving;
      tell('workload');
    }
    const request = serveRequest(good.request, workload);
    const key = JSON.stringify(request);
    if (run?.key === key) {
      curveIfWanted();
      return;
    }
    run = { key, request, stepRequest: good.request, workload: { ...workload }, status: 'running', result: null,
      error: null, points: [], curve: wantCurve ? 'running' : null, share: 0 };
    post({ request, curve: wantCurve ? curveJobs(run) : [] });
    tell('start');
  }

  // After a price, once the frame that shows it has been painted: the simulation (a worker
  // started, a request copied to it) never delays the number on screen, the first above all.
  let frame = 0;
  store.subscribe((change) => {
    if (change !== 'priced' || frame) return;
    frame = requestAnimationFrame(() => setTimeout(() => {
      frame = 0;
      update();
    }, 0));
  });

  return {
    /** The current run (null before the first). */
    get run() { return run; },
    /** The workload the runner simulates (a copy). */
    get workload() { return { ...workload }; },
    /** A job is running. */
    get busy() { return busy; },

    /** Starts simulating (and keeps doing so after every price). */
    start() {
      started = true;
      update();
    },

    /**
     * The workload as typed (fields may hold text the core will name): simulated after a
     * pause in typing, kept in the store (and so the link) when every field is a number.
     * @param {import('./serving-state.js').Serving} typed
     */
    setWorkload(typed) {
      Object.assign(workload, typed);
      if (['input', 'output', 'concurrency', 'rate', 'requests', 'usd'].every((k) => typeof workload[k] === 'number')) {
        store.set({ serving: { ...workload } });
        seen = store.state.serving;
      }
      clearTimeout(timer);
      timer = setTimeout(update, 250);
    },

    /** Whether the curve is wanted (the panel is on screen); it runs after the request's own result. */
    wantCurve(on = true) {
      wantCurve = on;
      curveIfWanted();
    },

    /** Stops the running job; the request it was for is not simulated again until it changes. */
    cancel() {
      if (!busy || !run) return;
      stop();
      job++;
      if (run.status === 'running') run.status = 'cancelled';
      if (run.curve === 'running') run.curve = 'cancelled';
      tell('cancelled');
    },

    /** Calls `fn(event, run)` after every change; returns the function that stops it. */
    subscribe(/** @type {RunListener} */ fn) {
      listeners.add(fn);
      return () => { listeners.delete(fn); };
    },
  };
}
