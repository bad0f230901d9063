// SPDX-License-Identifier: Apache-2.0
// The step as rows: prefill rows (cached prefix, new tokens) and decode rows (KV
// length), each editable, removable and duplicable, in two keyboard grids
// (row-grid.js), plus the bulk actions a person pricing a scheduler step needs.
import { h, field, parseTyped, int } from './dom.js';
import { setFieldError, clearFieldError } from './errors.js';
import { LIMITS } from './state.js';
import { catalogue } from './catalogue.js';
import { rowGrid } from './row-grid.js';

const P = 'step.prefill_requests';
const D = 'step.decode_requests';

/** A whole number in [min, max] from an input, or an inline error and null. */
function wholeNumber(input, min, max) {
  const v = parseTyped(input.value);
  if (!Number.isInteger(v) || v < min || v > max) {
    setFieldError(input, `Enter a whole number from ${int(min)} to ${int(max)}.`);
    return null;
  }
  clearFieldError(input);
  return v;
}

/**
 * Builds the panel into `root`.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} root
 * @returns {import('./store.js').Panel}
 */
export function stepEditor({ store, fields }, root) {
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' });
  const button = (text, onclick, props = {}) => h('button', { type: 'button', text, onclick, ...props });

  // Bulk actions.
  const dN = field('Count', { value: '32', 'data-bulk': 'decode-count' });
  const dKv = field('KV length', { value: '2048', 'data-bulk': 'decode-kv' });
  const dTo = field('to KV (optional)', { value: '', 'data-bulk': 'decode-kv-to', placeholder: 'same' });
  const addDecodes = button('Add decodes', () => {
    const n = wholeNumber(dN.input, 1, LIMITS.rows);
    const from = wholeNumber(dKv.input, 0, catalogue.limits.tokens);
    const to = dTo.input.value.trim() === '' ? from : wholeNumber(dTo.input, 0, catalogue.limits.tokens);
    if (n === null || from === null || to === null) return;
    if (!room(n)) return setFieldError(dN.input, `A step holds at most ${int(LIMITS.rows)} requests.`);
    const added = Array.from({ length: n }, (_, i) => [n === 1
      ? from : Math.round(from + ((to - from) * i) / (n - 1)), 1]);
    edit({ decode: [...decodes(), ...added] });
  });
  const pT = field('Prompt tokens', { value: '16384', 'data-bulk': 'prefill-total' });
  const pC = field('Chunk size', { value: '2048', 'data-bulk': 'prefill-chunk' }, 'max_num_batched_tokens');
  const pK = field('This step runs chunk', { value: '1', 'data-bulk': 'prefill-index' });
  const pPre = field('Prefix cache hit', { value: '0', 'data-bulk': 'prefill-prefix' }, 'tokens already cached');
  const chunkNote = h('small', { class: 'muted', 'aria-live': 'polite' });
  // vLLM's chunked prefill schedules one chunk of a long prompt per step: the row
  // added is the chunk this step runs, the prompt before it counted as cached.
  function chunkRow() {
    const total = wholeNumber(pT.input, 1, catalogue.limits.tokens);
    const chunk = wholeNumber(pC.input, 1, catalogue.limits.tokens);
    const prefix = wholeNumber(pPre.input, 0, catalogue.limits.tokens);
    if (total === null || chunk === null || prefix === null) return null;
    if (prefix >= total) return setFieldError(pPre.input, 'The cached part must be shorter than the prompt.'), null;
    const chunks = Math.ceil((total - prefix) / chunk);
    const k = wholeNumber(pK.input, 1, chunks);
    if (k === null) return null;
    const cached = prefix + (k - 1) * chunk;
    return { row: [cached, Math.min(chunk, total - cached)], chunks, k };
  }
  function describeChunk() {
    const c = chunkRow();
    chunkNote.textContent = c
      ? `Adds 1 row: chunk ${int(c.k)} of ${int(c.chunks)}, ${int(c.row[1])} new tokens after a cached prefix of ` +
        `${int(c.row[0])}. ` +
        'vLLM runs one chunk of a long prompt per step; the other chunks are other steps.' : '';
  }
  for (const f of [pT, pC, pK, pPre]) f.input.addEventListener('input', describeChunk);
  const addPrefill = button('Add this step\'s chunk', () => {
    const c = chunkRow();
    if (!c) return;
    if (!room(1)) return setFieldError(pT.input, `A step holds at most ${int(LIMITS.rows)} requests.`);
    edit({ prefill: [...prefills(), c.row] });
  });

  /** @typedef {'prefill' | 'decode'} Rows */
  const cell = (/** @type {Rows} */ rows, path, k, key, what) => (row, i) => {
    const input = h('input',
      { type: 'text', inputmode: 'numeric', 'data-kind': 'number', value: row[k], 'aria-label': `${what(i)}` });
    input.addEventListener('input', () => {
      store.setRow(rows, i, k, parseTyped(input.value));
      summarise();
    });
    fields.add(`${path}[${i}].${key}`, input);
    return input;
  };
  /** `list` with a copy of row `i` after it. */
  const duplicated = (list, i) => [...list.slice(0, i + 1), [...list[i]], ...list.slice(i + 1)];
  const actions = (/** @type {Rows} */ rows, what) => [
    { title: 'Copy', className: 'row-actions',
      cell: (row, i) => h('button', { type: 'button', class: 'icon', text: 'dup',
      'aria-label': `Duplicate ${what} ${i + 1}`, title: 'Duplicate',
        onclick: () => room(1) && edit({ [rows]: duplicated(store.state[rows], i) }) }) },
    { title: 'Remove', className: 'row-actions',
      cell: (row, i) => h('button', { type: 'button', class: 'icon', text: '×',
      'aria-label': `Remove ${what} ${i + 1}`, title: 'Remove',
        onclick: () => edit({ [rows]: store.state[rows].filter((_, j) => j !== i) }) }) },
  ];
  const prefills = () => store.state.prefill;
  const decodes = () => store.state.decode;
  const prefillGrid = rowGrid({ label: 'Prefill rows', empty: 'No prefill rows.', page: 10, columns: [
    { title: 'Cached prefix', cell: cell('prefill', P, 0, 'progress_index', (i) => `Prefill ${i + 1} cached prefix`) },
    { title: 'New tokens',
      cell: cell('prefill', P, 1, 'num_new_prefill_tokens', (i) => `Prefill ${i + 1} new tokens`) },
    ...actions('prefill', 'prefill')], moreNote: 'Edit the rest with the bulk actions or as JSON.' });
  const decodeGrid = rowGrid({ label: 'Decode rows', empty: 'No decode rows.', page: 20, columns: [
    { title: 'KV length', cell: cell('decode', D, 0, 'progress_index', (i) => `Decode ${i + 1} KV length`) },
    ...actions('decode', 'decode')], moreNote: 'Edit the rest with the bulk actions or as JSON.' });

  root.append(summary,
    h('details', { class: 'bulk', open: true },
      h('summary', {}, h('h3', { text: 'Add N decodes at KV L (or spread over a KV range)' })),
      h('div', { class: 'grid' }, dN.wrap, dKv.wrap, dTo.wrap), h('div', { class: 'actions' }, addDecodes)),
    h('details', { class: 'bulk', open: true },
      h('summary', {}, h('h3', { text: 'Add this step\'s chunk of a long prompt' })),
      h('div', { class: 'grid' }, pT.wrap, pC.wrap, pPre.wrap, pK.wrap), h('div', { class: 'actions' }, addPrefill),
        chunkNote),
    h('div', { class: 'actions' },
      button('Clear prefills', () => edit({ prefill: [] })),
      button('Clear decodes', () => edit({ decode: [] })),
      button('Duplicate all decodes', () => {
        if (room(decodes().length)) edit({ decode: [...decodes(), ...decodes().map((r) => [...r])] });
      })),
    h('h3', { text: 'Prefill rows' }), prefillGrid.root,
    h('h3', { text: 'Decode rows' }), decodeGrid.root);
  describeChunk();

  /** Sets the rows in `change` and shows them. */
  function edit(change) {
    store.set(change);
    render();
  }
  const room = (n) => prefills().length + decodes().length + n <= LIMITS.rows;

  // Only valid values are summed or ranged: a typo shows as an error under its field,
  // never as a number here.
  // One pass over the rows without copies: it runs on every keystroke in a row, and a step
  // may hold 65,536 of them.
  function summarise() {
    const { prefill, decode } = store.state;
    const valid = (v) => Number.isInteger(v) && v >= 0;
    let bad = 0, newTokens = 0, kvs = 0, kvSum = 0, low = Infinity, high = -Infinity;
    for (const row of prefill) {
      if (!row.every(valid)) bad++;
      if (valid(row[1])) newTokens += row[1];
    }
    for (const row of decode) {
      if (!row.every(valid)) bad++;
      const kv = row[0];
      if (!valid(kv)) continue;
      kvs++;
      kvSum += kv;
      if (kv < low) low = kv;
      if (kv > high) high = kv;
    }
    const kvText = kvs ? `, KV ${int(low)}–${int(high)} (mean ${int(kvSum / kvs)})` : '';
    summary.textContent = `${int(prefill.length)} prefill row${prefill.length === 1 ? '' : 's'} ` +
      `(${int(newTokens)} new tokens) · `
      + `${int(decode.length)} decode${decode.length === 1 ? '' : 's'}${kvText}`
      + (bad ? ` · ${int(bad)} row${bad === 1 ? '' : 's'} with an error, not counted` : '');
  }

  /** Rebuilds the rows from the state. */
  function render() {
    prefillGrid.render(prefills());
    decodeGrid.render(decodes());
    summarise();
  }
  return { render };
}
