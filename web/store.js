// SPDX-License-Identifier: Apache-2.0
// The page's state in one place: `state` (the step being edited, web/state.js),
// `pinned` (the A of an A/B comparison) and `good` (the last state that priced, with
// its request and result). Modules read them here and change them only through the
// setters, which freeze the states they store (a write from outside throws, and a state
// once stored never changes, so A and the priced state need no copies) and then tell
// every subscriber what changed:
//   'edited'   fields of the state changed; the control that changed them shows them
//   'replaced' the whole state changed (a link, an import, a fit applied): every panel
//              puts it into its controls again
//   'pinned'   A was pinned or unpinned
//   'priced'   `good` is new
// No DOM: tests/web/store.test.mjs runs it in node.
import { defaultState } from './state.js';

/**
 * @typedef {import('./state.js').State} State
 * @typedef {{state: State}} Pinned the A of a comparison
 * @typedef {{state: State, request: Record<string, any>, result: any, reference?: any, lookups?: number,
 *   token?: number}} Good a priced state; a big step priced in the pricing worker (web/pricer.js) also
 *   has `reference`, its summary in the reference mode (null when that refuses it), and `lookups`, the
 *   rows of its whole lookup table (its result's lookup lists are cut), written to CSV by the worker
 *   from the result it kept under `token`
 * @typedef {'edited' | 'replaced' | 'pinned' | 'priced'} Change
 * @typedef {(change: Change, store: Store) => void} Subscriber
 * @typedef {ReturnType<typeof createStore>} Store
 */

/**
 * What every panel returns: `render()` puts the store's state into its controls (when
 * the state was replaced), `priced(good)` shows what the last priced state says (a panel
 * priced in the follow-up tasks may return a promise: of its pricing in the pricing worker,
 * which the next task waits for). A panel has either or both.
 * @typedef {{render?: () => void, priced?: (good: Good) => void | Promise<void>}} Panel
 */

/**
 * What every panel is built with: the module, the pricer (web/pricer.js: whether a step is
 * priced in the pricing worker, and its jobs), its presets, the store, the registry of
 * inputs by JSON path (errors.js), and `fetchKernels(request, error)`, which loads the
 * measured kernel tables a `kernels_not_loaded` error asks for and reprices when they
 * are in (false when it will not try again).
 * @typedef {object} PanelContext
 * @property {any} calc
 * @property {ReturnType<typeof import('./pricer.js').createPricer>} pricer
 * @property {any} presets
 * @property {Store} store
 * @property {import('./errors.js').FieldRegistry} fields
 * @property {(request: Record<string, any>, error: any) => boolean} fetchKernels
 */

/** The fields a state has; set() refuses any other. */
const FIELDS = new Set([...Object.keys(defaultState()), 'serving', 'plan', 'hubId']);

/** `value` frozen with every object and array in it (already frozen parts are skipped). */
function freeze(value) {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) freeze(value[key]);
  return value;
}

/**
 * A store holding `state` (default: a fresh page's) and `pinned` (the A's state, or null).
 * @param {State} [state]
 * @param {State | null} [pinned]
 */
export function createStore(state = defaultState(), pinned = null) {
  /** @type {State} */
  let current = freeze(state);
  /** @type {Pinned | null} */
  let a = pinned ? freeze({ state: pinned }) : null;
  /** @type {Good | null} */
  let good = null;
  /** @type {Set<Subscriber>} */
  const subscribers = new Set();

  /** Tells every subscriber, in the order they subscribed. */
  function tell(/** @type {Change} */ change) {
    for (const fn of [...subscribers]) fn(change, store);
  }

  const store = {
    /** The step being edited (frozen: change it with set, setRow or replace). */
    get state() { return current; },
    /** The A of a comparison, {state}, or null. */
    get pinned() { return a; },
    /** The last state that priced, {state, request, result}, or null before the first. */
    get good() { return good; },

    /**
     * Sets fields of the state (`serving: undefined` removes the workload, `plan: undefined` the
     * plan's inputs): 'edited'.
     * @param {Partial<State>} fields
     */
    set(fields) {
      const unknown = Object.keys(fields).filter((key) => !FIELDS.has(key));
      if (unknown.length) throw new TypeError(`The page's state has no field ${unknown.join(', ')}.`);
      const next = { ...current, ...fields };
      for (const key of ['serving', 'plan']) if (next[key] === undefined) delete next[key];
      current = freeze(next);
      tell('edited');
    },

    /**
     * Sets value `k` of row `i` of the prefill or decode rows: 'edited'.
     * @param {'prefill' | 'decode'} rows @param {number} i @param {number} k @param {any} value
     */
    setRow(rows, i, k, value) {
      const list = current[rows];
      if (!Number.isInteger(i) || i < 0 || i >= list.length) throw new RangeError(`No ${rows} row ${i}.`);
      const row = list[i].slice();
      row[k] = value;
      const copy = list.slice();
      copy[i] = row;
      store.set({ [rows]: copy });
    },

    /**
     * Replaces the whole state, and A when `pinned` is given (a state, or null to drop
     * it): 'replaced'.
     * @param {State} state @param {State | null} [pinned]
     */
    replace(state, pinned) {
      current = freeze(state);
      if (pinned !== undefined) a = pinned ? freeze({ state: pinned }) : null;
      tell('replaced');
    },

    /**
     * Pins `state` as A (later edits make new states: A stays as it is), or unpins with
     * null: 'pinned'.
     * @param {State | null} state
     */
    setPinned(state) {
      a = state ? freeze({ state }) : null;
      tell('pinned');
    },

    /**
     * The state that priced (a state of this store), with its request and result: 'priced'.
     * @param {Good} priced
     */
    setGood(priced) {
      good = Object.freeze({ ...priced, state: freeze(priced.state) });
      tell('priced');
    },

    /**
     * Calls `fn(change, store)` after every change; returns the function that stops it.
     * @param {Subscriber} fn
     */
    subscribe(fn) {
      subscribers.add(fn);
      return () => { subscribers.delete(fn); };
    },
  };
  return store;
}
