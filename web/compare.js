// SPDX-License-Identifier: Apache-2.0
// A/B comparison: the shown configuration pinned as A; anything changed afterwards is
// B; both priced, side by side, with the difference per phase and per operator. A is
// part of the share link (`a=`, the compact form of A's state).
import { deltaPct, deltaTime, fill, h, int, timeUs, withDocLinks } from './dom.js';
import { toRequest } from './state.js';
import { shapeFields } from './catalogue.js';
import { breakdownRows } from './charts.js';
import { contextLine } from './results.js';
import { exportButtons } from './export-buttons.js';
import { aboutExport, stepWords } from './export-about.js';

/**
 * The comparable parts of a result: [{key, group, name, us}] — the step, each bar of
 * the breakdown and its parts, and each operator when the mode reports them.
 */
export function partsOf(result) {
  const parts = [{ key: 'step', group: 'Step', name: 'step time', us: result.step_time_us }];
  for (const row of breakdownRows(result).slice(1)) {
    parts.push({ key: `${row.label}|`, group: row.label, name: 'total', us: row.total_s * 1e6 });
    if (row.segments.length > 1) for (const s of row.segments) parts.push({ key: `${row.label}|${s.name}`,
      group: row.label, name: s.name, us: s.s * 1e6 });
  }
  for (const op of result.measured?.operators || []) {
    parts.push({ key: `op|${op.scope}|${op.name}`, group: `Operator (${op.scope})`, name: op.name, us: op.time_us });
  }
  return parts;
}

/** What differs between two states, in words: ["TP 1 → 2", "mode blis-v2 → corrected", ...]. */
export function differences(a, b) {
  const out = [];
  const model = (s) => (typeof s.model === 'string' ? s.model : s.modelName || 'custom shape');
  if (JSON.stringify(a.model) !== JSON.stringify(b.model)) {
    const shape = typeof a.model === 'object' && typeof b.model === 'object'
      ? shapeFields().filter((k) => a.model[k] !== b.model[k]).map((k) => `${k} ${a.model[k]} → ${b.model[k]}`)
        .join(', ') : '';
    out.push(shape && model(a) === model(b) ? `model shape: ${shape}` : `model ${model(a)} → ${model(b)}`);
  }
  if (a.gpu !== b.gpu) out.push(`GPU ${a.gpu} → ${b.gpu}`);
  if (a.tp !== b.tp) out.push(`TP ${a.tp} → ${b.tp}`);
  if ((a.dp ?? 1) !== (b.dp ?? 1)) out.push(`DP ${a.dp ?? 1} → ${b.dp ?? 1}`);
  if ((a.ep ?? 1) !== (b.ep ?? 1)) out.push(`EP ${a.ep ?? 1} → ${b.ep ?? 1}`);
  if (a.mode !== b.mode) out.push(`mode ${a.mode} → ${b.mode}`);
  if (JSON.stringify(a.hw) !== JSON.stringify(b.hw)) out.push('hardware constants');
  if (JSON.stringify(a.corrected) !== JSON.stringify(b.corrected)) out.push('mode settings');
  const rows = (s) => `${int(s.prefill.length)} prefill, ${int(s.decode.length)} decode rows`;
  if (JSON.stringify(a.prefill) !== JSON.stringify(b.prefill) ||
    JSON.stringify(a.decode) !== JSON.stringify(b.decode)) {
    out.push(rows(a) === rows(b) ? 'the step\'s rows' : `step ${rows(a)} → ${rows(b)}`);
  }
  return out;
}

/** The comparison rows of two results: [{group, name, a, b}] (µs; null where one lacks it). */
export function compareRows(resultA, resultB) {
  const a = new Map(partsOf(resultA).map((p) => [p.key, p]));
  const b = new Map(partsOf(resultB).map((p) => [p.key, p]));
  const keys = [...new Set([...a.keys(), ...b.keys()])];
  return keys.map((k) => {
    const p = a.get(k) || b.get(k);
    return { group: p.group, name: p.name, a: a.get(k)?.us ?? null, b: b.get(k)?.us ?? null };
  });
}

/**
 * The pin control (in the result card) and the comparison section. The store's
 * `pinned` is A ({state}) or null; `priced(good)` draws the comparison for the shown
 * result, `rows()` are its values.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} controlRoot @param {HTMLElement} root
 */
export function comparePanel({ calc, pricer, store, fetchKernels }, controlRoot, root) {
  const status = h('span', { class: 'muted', 'aria-live': 'polite' });
  const pin = h('button', { type: 'button', 'data-testid': 'pin-a', text: 'Pin as A to compare' });
  const unpin = h('button', { type: 'button', 'data-testid': 'unpin-a', text: 'Unpin A' });
  const swap = h('button', { type: 'button', text: 'Make the shown step A' });
  controlRoot.append(h('div', { class: 'actions compare-actions' }, pin, swap, unpin, status));
  const body = h('div');
  root.append(body, exportButtons({ name: 'stepcalc-a-b', label: 'the A/B comparison', csv: () => ({
    head: ['bar', 'part', 'a_us', 'b_us', 'b_minus_a_us'],
    rows: api.rows().map((r) => [r.group, r.name === 'total' ? '' : r.name, r.a ?? '', r.b ?? '',
      r.a === null || r.b === null ? '' : r.b - r.a]),
  }), about: () => aboutExport({ what: 'a-b', title: 'A/B comparison (B is the step described here)',
    good: store.good, version: calc.version(),
    extra: store.pinned && cached?.result
      ? [['A', `${contextLine(store.pinned.state, cached.result)} · ${stepWords(store.pinned.state)}`]] : [] }) }));
  let cacheKey = '', cached = null;

  const pinShown = () => store.setPinned(store.good.state);
  pin.addEventListener('click', pinShown);
  swap.addEventListener('click', pinShown);
  unpin.addEventListener('click', () => store.setPinned(null));

  /** What pricing A's `request` gave, {result} or {error}, or {loading} while its GPU's tables load. */
  function outcome(request, result, error) {
    if (result) return { result };
    // A's GPU tables are fetched like the shown step's; the page reprices when in.
    if (error.code === 'kernels_not_loaded' && fetchKernels(request, error)) return { loading: true };
    return { error: error.message };
  }

  /**
   * A priced, from the cache while A's request is the same; a big A (web/pricer.js) is priced
   * in the pricing worker: then {pending}, the promise of A priced.
   */
  function priceA() {
    const request = toRequest(store.pinned.state);
    const key = JSON.stringify(request);
    if (key !== cacheKey) {
      cacheKey = key;
      if (pricer.big(request)) {
        const pending = pricer.price(request).then(({ result }) => ({ result, error: null }),
          (error) => ({ result: null, error })).then(({ result, error }) => {
          if (cacheKey !== key) return null; // A changed meanwhile
          if (error?.code === 'cancelled') {
            cacheKey = ''; // a newer edit: priced again when the comparison is drawn next
            return null;
          }
          cached = outcome(request, result, error);
          if (cached.loading) cacheKey = '';
          return cached;
        });
        cached = { pending };
      } else {
        try {
          cached = outcome(request, calc.price(request), null);
        } catch (error) {
          cached = outcome(request, null, error);
        }
        if (cached.loading) cacheKey = '';
      }
    }
    return cached;
  }

  /**
   * Redraws the controls and the comparison for the shown `good` ({state, result}); with a
   * big A still in the worker, returns the promise of the comparison drawn.
   */
  function priced(good) {
    const pinned = !!store.pinned;
    pin.hidden = pinned;
    swap.hidden = unpin.hidden = !pinned;
    root.closest('section').hidden = !pinned;
    status.textContent = pinned ? 'A is pinned: change anything, the comparison is below.' : '';
    if (!pinned) return body.replaceChildren();
    const a = priceA();
    if (a.pending) {
      fill(body, h('p', { class: 'muted', text: 'Pricing A…' }));
      return a.pending.then((done) => {
        if (done && store.good === good) draw(good, done);
      });
    }
    return draw(good, a);
  }

  function draw(good, a) {
    if (a.loading) return fill(body, h('p',
      { class: 'muted', text: `Loading the kernel tables of A's GPU…` }));
    if (a.error) return fill(body, h('p',
      { class: 'field-error', 'data-testid': 'error' }, withDocLinks(`A cannot be priced: ${a.error}`)));
    const diff = differences(store.pinned.state, good.state);
    const kernels = [a.result, good.result].map((r) => r.measured?.kernels);
    if (kernels[0] && kernels[1] && kernels[0] !== kernels[1]) diff.push(`kernel tables ${kernels.join(' → ')}`);
    const rows = compareRows(a.result, good.result);
    const cell = (us) => (us === null ? '—' : timeUs(us));
    fill(body, 
      h('p', { class: 'compare-context' }, h('strong', { text: 'A ' }), contextLine(store.pinned.state, a.result),
        h('br'),
        h('strong', { text: 'B ' }), `${contextLine(good.state, good.result)} (shown)`),
      h('p', { 'data-testid': 'compare-diff' },
        diff.length ? `What changed: ${diff.join('; ')}.` : 'A and B are the same: change anything to compare.'),
      h('table', { class: 'compare', 'data-testid': 'compare-table' },
        h('thead', {},
          h('tr', {},
          ['', 'A', 'B', 'B − A', ''].map((t, i) => h('th', { scope: 'col', class: i ? 'num' : '', text: t })))),
        h('tbody', {}, rows.map((r) => h('tr', { class: r.name === 'total' || r.group === 'Step' ? 'total' : 'part' },
          h('th', { scope: 'row', text: r.name === 'total' || r.group === 'Step' ? r.group : r.name }),
          h('td', { class: 'num', text: cell(r.a) }), h('td', { class: 'num', text: cell(r.b) }),
          h('td', { class: 'num', text: r.a === null || r.b === null ? '' : deltaTime((r.b - r.a) * 1e-6) }),
          h('td', { class: 'num', text: r.a && r.b !== null ? deltaPct((r.b - r.a) / r.a) : '' }))))));
    body.dataset.stepA = String(a.result.step_time_us);
  }
  const api = { priced,
    rows: () => (store.pinned && cached?.result && store.good ? compareRows(cached.result, store.good.result) : []) };
  return api;
}
