// SPDX-License-Identifier: Apache-2.0
// The serve simulation of the page's current workload, run once and shared: the summary
// strip under the title (web/serving-summary.js) and the Serving panel (web/serving-panel.js)
// both show this runner's result, so a request is never simulated twice. It keeps the
// workload (the panel's fields, `serving` in the store's state when they are all numbers),
// builds the serving request from the store's priced request, and runs it in one Web Worker
// (web/serving-worker.js) kept between jobs, so the module and the GPU's kernel tables are
// loaded once. After the request's own result, one job at a time: the pinned A of an A/B
// comparison served with the same workload (while someone asks for it: web/serving-compare.js),
// then the latency curve (while someone wants it: the panel, once on screen), over concurrency
// or over request rate. A comparison asked for while the curve runs goes first; the curve
// then goes on with the points it lacks.
//
// Listeners get (event, run) with event one of:
//   'workload'  the store's workload replaced the one kept here (a link, an import, a plan opened)
//   'start'     a new request is being simulated (`run` is new: no result yet)
//   'curve'     the curve's simulations started (or went on) for the current request
//   'progress'  `run.share` (0..1 over the running job) moved
//   'result'    `run.result`, the serve result of `run.request`
//   'point'     a curve point arrived (`run.points`)
//   'compare'   `run.compare` changed: A's serve result, error, or a new A
//   'error'     `run.error` ({code, path, message}): the request cannot be served as it is
//   'done'      the jobs ended (the result, and the comparison and curve when asked for)
//   'cancelled' cancel() stopped the job; the same request does not run again until it changes
import {
  CURVE_CONCURRENCY, CURVE_RATE_MULTIPLES, decodeDetails, defaultDetails, defaultServing, encodeDetails, serveRequest,
} from './serving-state.js';

/**
 * @typedef {{concurrency?: number, rate?: number, own?: boolean, result?: any, error?: any}} Point
 * @typedef {{key: string, request: Record<string, any>, status: 'waiting' | 'running' | 'done' | 'error' |
 *   'cancelled', result: any, error: any}} Compare
 * @typedef {{key: string, request: Record<string, any> | null, stepRequest: Record<string, any>,
 *   workload: import('./serving-state.js').Workload, status: 'running' | 'done' | 'error' | 'cancelled',
 *   result: any, error: {code: string, path: string, message: string} | null, points: Point[],
 *   curve: null | 'running' | 'done' | 'cancelled', curveKind: 'concurrency' | 'rate', compare: Compare | null,
 *   share: number}} Run
 * @typedef {'workload' | 'start' | 'curve' | 'progress' | 'result' | 'point' | 'compare' | 'error' | 'done' |
 *   'cancelled'} RunEvent
 * @typedef {(event: RunEvent, run: Run | null) => void} RunListener
 * @typedef {ReturnType<typeof servingRunner>} ServingRunner
 */

/** The fields of the workload the link keeps as they are (the details go into `more`). */
const LINK_FIELDS = ['input', 'output', 'load', 'concurrency', 'rate', 'requests', 'usd'];
/** The details that must be a number or blank (null) for the workload to go into the link. */
const NUMERIC_DETAILS = ['seqs', 'budget', 'util', 'hit', 'spreadPct', 'ttft', 'tpot'];

/** The curve's axis for a workload: its own choice, else the load's kind. */
export const curveKind = (/** @type {Partial<import('./serving-state.js').Workload>} */ w) =>
  (w.curve === 'rate' || w.curve === 'concurrency' ? w.curve : w.load === 'rate' ? 'rate' : 'concurrency');

const pointKey = (/** @type {Point} */ p) => (p.concurrency !== undefined ? `c${p.concurrency}` : `r${p.rate}`);

/**
 * The curve's points for a run: over concurrency, one simulation per concurrency (the run's
 * own included, at the curve's request count); over request rate, multiples of the run's rate
 * (a closed loop: of the rate it achieved), the run's own result at 1x in an open loop.
 * @param {Run} run @returns {Point[]}
 */
export function curvePoints(run) {
  const { workload } = run;
  if (run.curveKind === 'rate') {
    const own = workload.load === 'rate';
    const center = own ? workload.rate : run.result?.throughput?.requests_per_s;
    if (typeof center !== 'number' || !(center > 0)) return [];
    return CURVE_RATE_MULTIPLES.map((m) => (m === 1 && own ? { rate: center, own: true }
      : { rate: Number((center * m).toPrecision(3)) }));
  }
  const own = workload.load === 'concurrency' ? [workload.concurrency] : [];
  return [...new Set([...CURVE_CONCURRENCY, ...own])].filter((c) => Number.isInteger(c) && c > 0)
    .sort((a, b) => a - b).map((c) => ({ concurrency: c }));
}

/**
 * The runner's workload of the store's serving state, and the error of details in the link
 * the page cannot read ({path: 'sv', message}; the details then take their defaults).
 * @param {import('./serving-state.js').Serving | undefined} serving
 */
function fromStore(serving) {
  const base = { ...defaultServing(), ...defaultDetails(), ...(serving ?? {}) };
  try {
    return { workload: { ...base, ...decodeDetails(serving?.more) }, error: null };
  } catch (error) {
    return { workload: base, error: { code: 'invalid_value', path: error.path ?? 'sv', message: error.message } };
  }
}

/**
 * A runner over the page's store. Nothing runs before start(), so its listeners can
 * subscribe first.
 * @param {{store: import('./store.js').Store, calc?: any}} context
 */
export function servingRunner({ store, calc }) {
  let { workload, error: linkError } = fromStore(store.state.serving);
  let seen = store.state.serving; // the store's workload last taken into `workload` (or put there)
  /** @type {Set<RunListener>} */
  const listeners = new Set();
  /** @type {Worker | null} */
  let worker = null;
  let busy = false; // the worker is running a job
  /** @type {'main' | 'compare' | 'curve' | null} */
  let kind = null; // the running job's kind
  let job = 0;
  let wantCurve = false;
  let started = false;
  /** @type {Record<string, any> | null} */
  let pinnedRequest = null; // the pinned A's step request, served with the workload for a comparison
  /** @type {Run | null} */
  let run = null;
  let timer = 0;

  const tell = (/** @type {RunEvent} */ event) => { for (const fn of [...listeners]) fn(event, run); };

  function stop() {
    worker?.terminate();
    worker = null;
    busy = false;
    kind = null;
    job++; // a message of the stopped job still queued is not counted
  }

  /** Starts a job of `what` for the current run (ending any job still running: it cannot read messages). */
  function post(/** @type {'main' | 'compare' | 'curve'} */ what, /** @type {Record<string, any>} */ message) {
    if (busy) stop();
    // A new worker gets the page's compiled module and the kernel packs it has read.
    const share = worker ? undefined : calc?.forWorker();
    worker ??= new Worker(new URL('./serving-worker.js', import.meta.url), { type: 'module' });
    busy = true;
    kind = what;
    const id = ++job;
    const mine = /** @type {Run} */ (run);
    const compare = mine.compare;
    mine.share = 0;
    worker.onmessage = ({ data }) => {
      // A message of a job that was cancelled or replaced may still be queued: only the current job's count.
      if (data.id !== id || id !== job) return;
      if (data.type === 'progress') {
        mine.share = data.share;
        tell('progress');
      } else if (data.type === 'result' && what === 'compare' && compare) {
        Object.assign(compare, { result: data.result, status: 'done' });
        tell('compare');
      } else if (data.type === 'result') {
        mine.result = data.result;
        mine.status = 'done';
        tell('result');
      } else if (data.type === 'error') {
        busy = false;
        kind = null;
        if (what === 'compare' && compare) {
          Object.assign(compare, { error: data.error, status: 'error' });
          tell('compare');
        } else {
          mine.error = data.error;
          mine.status = 'error';
          tell('error');
        }
        if (!next()) tell('done');
      } else if (data.type === 'point') {
        mine.points.push({ ...data.point, result: data.result, error: data.error });
        tell('point');
      } else if (data.type === 'done') {
        busy = false;
        kind = null;
        mine.share = 1;
        if (what === 'curve' && remaining(mine).length === 0) mine.curve = 'done';
        if (!next()) tell('done');
      }
    };
    worker.onerror = (event) => {
      if (id !== job) return;
      stop();
      const error = { code: 'worker', path: '',
        message: `The simulation worker failed: ${event.message ?? 'unknown error'}` };
      if (what === 'compare' && compare) {
        Object.assign(compare, { status: 'error', error });
        tell('compare');
        return;
      }
      if (what === 'curve') mine.curve = 'cancelled';
      else Object.assign(mine, { status: 'error', error });
      tell('error');
    };
    worker.postMessage({ id, baseUrl: new URL('wasm/', document.baseURI).href, share, ...message });
  }

  /** The curve's points the run still lacks. */
  function remaining(/** @type {Run} */ r) {
    const done = new Set(r.points.map(pointKey));
    return curvePoints(r).filter((p) => !p.own && !done.has(pointKey(p)));
  }

  /** The comparison wanted for the current run: A's serve request with the workload, or null. */
  function wantedCompare() {
    if (!pinnedRequest || !run) return null;
    try {
      const request = serveRequest(pinnedRequest, run.workload);
      return { key: JSON.stringify(request), request };
    } catch {
      return null; // the workload's own error is the run's
    }
  }

  /** Brings the run's comparison in line with the pinned A; true when it changed. */
  function syncCompare() {
    if (!run) return false;
    const want = wantedCompare();
    if ((want?.key ?? null) === (run.compare?.key ?? null)) return false;
    if (busy && kind === 'compare') stop();
    run.compare = want ? { ...want, status: 'waiting', result: null, error: null } : null;
    return true;
  }

  /**
   * Starts the next job the current run wants, when none is running: A for the comparison,
   * then the curve's missing points. True when one started.
   */
  function next() {
    if (busy || !run || run.status === 'running' || run.status === 'cancelled') return false;
    if (run.compare?.status === 'waiting' && run.compare.key === run.key && run.status === 'done') {
      Object.assign(run.compare, { status: 'done', result: run.result }); // A is this very request
      tell('compare');
    }
    if (run.compare?.status === 'waiting') {
      run.compare.status = 'running';
      post('compare', { request: run.compare.request, curve: [] });
      tell('compare');
      return true;
    }
    if (!wantCurve || run.status !== 'done' || (run.curve !== null && run.curve !== 'running')) return false;
    const own = curvePoints(run).find((p) => p.own);
    if (own && !run.points.some((p) => p.own)) run.points.push({ ...own, result: run.result });
    const jobs = remaining(run);
    if (!jobs.length) {
      const told = run.curve === null;
      run.curve = 'done';
      if (told) tell('curve');
      return false;
    }
    run.curve = 'running';
    post('curve', { request: null,
      curve: jobs.map((point) => ({ point, request: serveRequest(run.stepRequest, run.workload, point) })) });
    tell('curve');
    return true;
  }

  /** An error of the workload the page finds itself (a link's details, the spread): no simulation. */
  function failed(/** @type {string} */ key, /** @type {any} */ error, stepRequest) {
    if (run?.key === key) return;
    if (busy) stop();
    run = { key, request: null, stepRequest, workload: { ...workload }, status: 'error', result: null,
      error: { code: error.code ?? 'invalid_value', path: error.path ?? '', message: error.message }, points: [],
      curve: null, curveKind: curveKind(workload), compare: null, share: 0 };
    tell('start');
    tell('error');
  }

  /**
   * Simulates the store's priced request with the workload, unless that very request is
   * the current run (then its axis and targets follow the workload and the next job starts).
   */
  function update() {
    clearTimeout(timer);
    const { good } = store;
    if (!started || !good) return;
    const serving = store.state.serving;
    if (serving && serving !== seen) { // a link, an import or a plan set the workload
      ({ workload, error: linkError } = fromStore(serving));
      seen = serving;
      tell('workload');
    }
    if (linkError) return failed(`link:${linkError.message}`, linkError, good.request);
    let request;
    try {
      request = serveRequest(good.request, workload);
    } catch (error) {
      return failed(`page:${error.message}:${JSON.stringify(workload)}`, error, good.request);
    }
    const key = JSON.stringify(request);
    if (run?.key === key) {
      Object.assign(run.workload, { ttft: workload.ttft, tpot: workload.tpot, curve: workload.curve });
      const axis = curveKind(workload);
      if (axis !== run.curveKind) { // the curve's axis changed: its points are another curve's
        if (busy && kind === 'curve') stop();
        Object.assign(run, { curveKind: axis, points: [], curve: run.curve === 'cancelled' ? 'cancelled' : null });
        tell('curve');
      }
      if (syncCompare()) {
        if (busy && kind === 'curve' && run.compare) stop(); // A first; the curve goes on after it
        tell('compare');
      }
      next();
      return;
    }
    run = { key, request, stepRequest: good.request, workload: { ...workload }, status: 'running', result: null,
      error: null, points: [], curve: null, curveKind: curveKind(workload), compare: null, share: 0 };
    syncCompare();
    post('main', { request, curve: [] });
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
    /** The running job's kind: 'main' (the request's own), 'compare' (the pinned A), 'curve', or null. */
    get job() { return kind; },

    /** Starts simulating (and keeps doing so after every price). */
    start() {
      started = true;
      update();
    },

    /**
     * The workload as typed (fields may hold text the core will name): simulated after a
     * pause in typing, kept in the store (and so the link) when every field is a number.
     * @param {import('./serving-state.js').Workload} typed
     */
    setWorkload(typed) {
      Object.assign(workload, typed);
      linkError = null; // the details typed replace a link's that could not be read
      const numbers = LINK_FIELDS.every((k) => k === 'load' || typeof workload[k] === 'number') &&
        NUMERIC_DETAILS.every((k) => workload[k] === null || typeof workload[k] === 'number');
      if (numbers) {
        const serving = /** @type {import('./serving-state.js').Serving} */ (
          Object.fromEntries(LINK_FIELDS.map((k) => [k, workload[k]])));
        const more = encodeDetails(workload);
        store.set({ serving: more ? { ...serving, more } : serving });
        seen = store.state.serving;
      }
      clearTimeout(timer);
      timer = setTimeout(update, 250);
    },

    /** Whether the curve is wanted (the panel is on screen); it runs after the request's own result. */
    wantCurve(on = true) {
      wantCurve = on;
      next();
    },

    /**
     * Serves the pinned A's step request (null: no comparison) with the workload, after the
     * request's own result and before the curve; a new A ends A's simulation still running.
     * @param {Record<string, any> | null} stepRequest
     */
    compareWith(stepRequest) {
      pinnedRequest = stepRequest;
      if (!syncCompare()) return;
      if (busy && kind === 'curve' && run?.compare) stop(); // A first; the curve goes on after it
      tell('compare');
      next();
    },

    /** Stops the running job; the request it was for is not simulated again until it changes. */
    cancel() {
      if (!busy || !run) return;
      stop();
      if (run.status === 'running') run.status = 'cancelled';
      if (run.curve === 'running') run.curve = 'cancelled';
      if (run.compare?.status === 'running') run.compare.status = 'cancelled';
      tell('cancelled');
    },

    /** Calls `fn(event, run)` after every change; returns the function that stops it. */
    subscribe(/** @type {RunListener} */ fn) {
      listeners.add(fn);
      return () => { listeners.delete(fn); };
    },
  };
}
