// SPDX-License-Identifier: Apache-2.0
// Prices the store's state: at most once per animation frame however many edits came
// in (reprice), or at once (priceNow: a link just applied). A state that prices becomes
// the store's `good`; one that does not gets its errors under their fields and the last
// good result is kept, marked stale. A GPU's measured kernel tables are fetched on
// first use and the state is priced again when they are in. A big step is priced in the
// pricing worker (web/pricer.js): its last result stays on screen, dimmed, until the new
// one arrives, and a reply for a state edited since is never shown. `first` settles when the
// first price is on screen (its number, or why there is none): the page builds the rest after it.
// Before a fresh page's first price in the measured mode, while its GPU's tables load, the
// reference model's figure for the step is shown in its place, labelled (result-view.js provisional).
import { $, h, nextPaint, withDocLinks } from './dom.js';
import { toRequest } from './state.js';
import { inUserWords } from './words.js';
import { referenceFirstLine } from './results.js';
import { partsToLoad } from './kernel-parts.js';
import { MODE, catalogue } from './catalogue.js';

/**
 * @param {{calc: any, pricer: ReturnType<typeof import('./pricer.js').createPricer>,
 *   store: import('./store.js').Store, fields: import('./errors.js').FieldRegistry,
 *   results: {provisional: (state: any, request: any, reference: any) => void}}} parts
 */
export function createPricing({ calc, pricer, store, fields, results }) {
  let frame = 0; // the animation frame a reprice waits for, or 0
  let firstDone = false;
  /** @type {(value?: any) => void} */
  let firstShown = () => {};
  /** Resolves once the first price is shown: its result, or its errors (no kernel tables on their way). */
  const first = new Promise((resolve) => { firstShown = resolve; });
  const fetching = new Map(); // gpu|version -> {tries, busy}
  /** @type {import('./state.js').State | null} the state the worker is pricing */
  let asking = null;

  /** Prices the state now (a reprice waiting for its frame is dropped). */
  function priceNow() {
    cancelAnimationFrame(frame);
    frame = 0;
    const started = performance.now();
    const { state } = store;
    const request = toRequest(state);
    if (!store.good && request.mode === MODE.measured && tablesFirst(state, request)) return; // priced when in
    if (pricer.big(request)) {
      inWorker(state, request, started);
      return;
    }
    asking = null;
    busy(false);
    let result = null;
    let failure = null;
    try {
      result = calc.price(/** @type {any} */ (request));
    } catch (error) {
      failure = error;
    }
    settle({ state, request, result }, failure, started);
  }

  /** The pricing worker's job for a big step; the store gets its result if the state is still the one shown. */
  function inWorker(state, request, started) {
    if (asking === state) return; // its job is on its way
    if (store.good?.state === state) {
      // Priced already (the panels were just built, or A was pinned): shown again, not priced again.
      store.setGood(store.good);
      return;
    }
    asking = state;
    busy(true);
    const reference = request.mode === MODE.reference ? null : MODE.reference;
    pricer.price(request, { reference }).then(({ result, lookups, reference: ref, token }) => {
      if (asking !== state) return;
      asking = null;
      busy(false);
      settle({ state, request, result, reference: ref, lookups, token }, null, started);
    }, (error) => {
      if (asking !== state) return;
      asking = null;
      if (error.code === 'cancelled') return; // a newer edit is being priced
      busy(false);
      settle({ state, request, result: null }, error, started);
    });
  }

  /** Marks the shown result as being replaced by the worker's (dimmed, and busy for screen readers). */
  let shownBusy = false;
  function busy(on) {
    if (on === shownBusy) return;
    shownBusy = on;
    $('#results').classList.toggle('pricing', on);
    $('#headline').setAttribute('aria-busy', String(on));
  }

  /**
   * Shows what pricing `priced.state` gave: its result (the store's new good), or `failure`
   * (the core's error, {code, path, message}) under its field with the last good result kept.
   * @param {import('./store.js').Good} priced @param {any} failure @param {number} started
   */
  function settle(priced, failure, started) {
    const { request, result } = priced;
    const errors = fields.typedErrors();
    if (failure) {
      if (failure.code === 'kernels_not_loaded' && !errors.length && fetchKernels(request, failure)) return;
      if (!errors.some((e) => e.path === failure.path)) errors.push({ path: failure.path, message: failure.message });
    }
    const words = errors.map((e) => ({ path: e.path, message: inUserWords(e.path, e.message) }));
    fields.show(words);
    $('#results').classList.toggle('stale', !result);
    $('#summary')?.classList.toggle('stale', !result); // the strip's figures are the last good state's too
    // Before anything was priced (a link refused once its GPU's tables are in) there is no last
    // good result: the headline says why instead of "Loading the pricing module…".
    const none = !result && !store.good;
    $('#stale').textContent = result ? '' : none ? 'Nothing priced yet: fix the marked field.'
      : 'Showing the last good result: fix the marked field to update it.';
    if (none && words.length) {
      $('#headline').replaceChildren(h('p', { class: 'field-error', role: 'alert', 'data-testid': 'headline-error' },
        'Not priced: ', ...withDocLinks(words[0].message)));
    }
    if (!result) {
      firstShown();
      return;
    }
    store.setGood(priced); // everything shown of it is drawn by the store's subscribers
    performance.measure('stepcalc:update', { start: started });
    if (!firstDone) {
      firstDone = true;
      performance.mark('stepcalc:first-result');
    }
    firstShown();
  }

  /**
   * Before the first price in the measured mode: starts loading its GPU's dense tables (those
   * index.html preloads for the default step), so that the first call prices instead of failing
   * for them; false when they are loading or loaded already, or the catalogue has no such set
   * (the price then says why). Meanwhile the reference model's figure for the step (priced without
   * tables) is shown, labelled, and painted before the tables are read (decoding the default step's
   * holds the page's thread ~30 ms); not for a big step (priced in the worker).
   */
  function tablesFirst(state, request) {
    if (fetching.has(`${request.gpu}|${request.kernels ?? ''}`)) return false;
    if (!partsToLoad(catalogue.kernels, request.gpu, request.kernels, 1)) return false;
    let reference = null;
    if (!pricer.big(request)) {
      try {
        reference = calc.price({ ...request, mode: MODE.reference, corrected: undefined });
      } catch { /* no figure first: the headline's "Loading…" stays */ }
    }
    if (!fetchKernels(request, { message: '' }, !!reference)) return false;
    if (reference) {
      results.provisional(state, request, reference);
      $('#stale').textContent = ''; // (a link refused before this one said why there)
      busy(true); // dimmed, and busy for screen readers, until the measured figure replaces it
    }
    return true;
  }

  /** Prices the state in the next animation frame, once for all the edits before it. */
  function reprice() {
    if (!frame) frame = requestAnimationFrame(priceNow);
  }

  /**
   * Loads the tables `error` (kernels_not_loaded) asks for, then reprices; false when
   * two loads did not help (the error is then shown as it is). `referenceFirst`: the reference
   * figure shown meanwhile says they are loading, and they are read once it is painted.
   * @param {any} request @param {any} error @param {boolean} [referenceFirst]
   */
  function fetchKernels(request, error, referenceFirst = false) {
    const key = `${request.gpu}|${request.kernels ?? ''}`;
    const entry = fetching.get(key) ?? { tries: 0, busy: false };
    fetching.set(key, entry);
    if (entry.busy) return true; // priced again when the load in flight is done
    if (entry.tries >= 2) return false;
    entry.tries += 1;
    entry.busy = true;
    // Before the first number, in the headline's "Loading…" (nothing moves when the number replaces it).
    const words = `Loading the measured kernel tables for ${request.gpu}…`;
    const loading = store.good ? null : $('#headline > p.muted');
    if (loading) loading.textContent = words;
    else if (!referenceFirst && !$('[data-testid="reference-first"]')) $('#stale').textContent = words; // (its line)
    const parts = partsToLoad(catalogue.kernels, request.gpu, request.kernels, entry.tries, error.message);
    const load = () => calc.loadKernels(request.gpu, request.kernels, parts);
    (referenceFirst ? nextPaint().then(load) : load())
      .then(() => {
        entry.busy = false;
        // The first number at once (nothing on screen waits for its frame); an edit's in the next frame.
        if (store.good) reprice();
        else priceNow();
      }, (failure) => {
        entry.busy = false;
        fields.show([{ path: failure.path || error.path || 'gpu', message: failure.message }]);
        $('#stale').textContent = `The kernel tables for ${request.gpu} did not load.`;
        busy(false);
        $('[data-testid="reference-first"]')?.replaceWith(referenceFirstLine(request.gpu, true));
        firstShown();
      });
    return true;
  }

  return { priceNow, reprice, fetchKernels, first };
}
