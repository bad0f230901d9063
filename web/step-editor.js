// The step as rows: prefill rows (cached prefix, new tokens) and decode rows (KV
// length), each editable, removable and duplicable, plus the bulk actions a person
// pricing a scheduler step needs.
import { h, field, parseTyped, int } from './dom.js';
import { setFieldError, clearFieldError } from './errors.js';
import { LIMITS } from './state.js';

const SHOWN_DECODES = 300;
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

export function stepEditor(app, root) {
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' });
  const prefillBody = h('tbody');
  const decodeBody = h('tbody');
  const more = h('p', { class: 'muted' });
  const table = (caption, heads, body) => h('div', { class: 'rows' }, h('table', { class: 'rows-table' },
    h('caption', { text: caption }),
    h('thead', {}, h('tr', {}, heads.map((t) => h('th', { scope: 'col', text: t })))), body));

  // Bulk actions.
  const dN = field('Count', { value: '32', 'data-bulk': 'decode-count' });
  const dKv = field('KV length', { value: '2048', 'data-bulk': 'decode-kv' });
  const dTo = field('to KV (optional)', { value: '', 'data-bulk': 'decode-kv-to', placeholder: 'same' });
  const addDecodes = h('button', { type: 'button', text: 'Add decodes' });
  const pT = field('Prompt tokens', { value: '8192', 'data-bulk': 'prefill-total' });
  const pC = field('Chunk size', { value: '2048', 'data-bulk': 'prefill-chunk' });
  const pPre = field('Cached prefix', { value: '0', 'data-bulk': 'prefill-prefix' });
  const addPrefill = h('button', { type: 'button', text: 'Add prefill chunks' });
  const button = (text, onclick) => h('button', { type: 'button', text, onclick });

  root.append(summary,
    h('div', { class: 'bulk' }, h('h3', { text: 'Add N decodes with KV L (or a KV range)' }),
      h('div', { class: 'grid' }, dN.wrap, dKv.wrap, dTo.wrap), h('div', { class: 'actions' }, addDecodes)),
    h('div', { class: 'bulk' }, h('h3', { text: 'Add a prefill of T tokens in chunks of C' }),
      h('div', { class: 'grid' }, pT.wrap, pC.wrap, pPre.wrap), h('div', { class: 'actions' }, addPrefill),
      h('small', { class: 'muted', text: 'One row per chunk; each chunk\'s cached prefix is the tokens before it.' })),
    h('div', { class: 'actions' },
      button('Clear prefills', () => edit(() => { app.state.prefill = []; })),
      button('Clear decodes', () => edit(() => { app.state.decode = []; })),
      button('Duplicate all decodes', () => edit(() => {
        if (app.state.prefill.length + 2 * app.state.decode.length <= LIMITS.rows) app.state.decode.push(...app.state.decode.map((r) => [...r]));
      }))),
    table('Prefill rows', ['#', 'Cached prefix', 'New tokens', ''], prefillBody),
    table('Decode rows', ['#', 'KV length', ''], decodeBody), more);

  function edit(change) {
    change();
    render();
    app.changed();
  }
  const room = (n) => app.state.prefill.length + app.state.decode.length + n <= LIMITS.rows;

  addDecodes.addEventListener('click', () => {
    const n = wholeNumber(dN.input, 1, LIMITS.rows);
    const from = wholeNumber(dKv.input, 0, 1e9);
    const to = dTo.input.value.trim() === '' ? from : wholeNumber(dTo.input, 0, 1e9);
    if (n === null || from === null || to === null) return;
    if (!room(n)) return setFieldError(dN.input, `A step holds at most ${int(LIMITS.rows)} requests.`);
    edit(() => {
      for (let i = 0; i < n; i++) app.state.decode.push([n === 1 ? from : Math.round(from + ((to - from) * i) / (n - 1)), 1]);
    });
  });
  addPrefill.addEventListener('click', () => {
    const total = wholeNumber(pT.input, 1, 1e9);
    const chunk = wholeNumber(pC.input, 1, 1e9);
    const prefix = wholeNumber(pPre.input, 0, 1e9);
    if (total === null || chunk === null || prefix === null) return;
    if (!room(Math.ceil(total / chunk))) return setFieldError(pC.input, `That makes more than ${int(LIMITS.rows)} rows; use larger chunks.`);
    edit(() => {
      for (let done = 0; done < total; done += chunk) app.state.prefill.push([prefix + done, Math.min(chunk, total - done)]);
    });
  });

  function cell(path, list, i, k, label) {
    const input = h('input', { type: 'text', inputmode: 'numeric', 'data-kind': 'number', value: list[i][k], 'aria-label': label });
    input.addEventListener('input', () => {
      list[i][k] = parseTyped(input.value);
      summarise();
      app.changed();
    });
    app.fields.add(path, input);
    return h('td', {}, input);
  }
  function rowButtons(list, i, what) {
    return h('td', { class: 'row-actions' },
      h('button', { type: 'button', class: 'icon', 'aria-label': `Duplicate ${what} ${i + 1}`, title: 'Duplicate', text: 'dup',
        onclick: () => room(1) && edit(() => list.splice(i + 1, 0, [...list[i]])) }),
      h('button', { type: 'button', class: 'icon', 'aria-label': `Remove ${what} ${i + 1}`, title: 'Remove', text: '×',
        onclick: () => edit(() => list.splice(i, 1)) }));
  }

  // Only valid values are summed or ranged: a typo shows as an error under its field,
  // never as a number here.
  function summarise() {
    const { prefill, decode } = app.state;
    const valid = (v) => Number.isInteger(v) && v >= 0;
    const nums = (rows, k) => rows.map((r) => r[k]).filter(valid);
    const bad = [...prefill, ...decode].filter((r) => !r.every(valid)).length;
    const newTokens = nums(prefill, 1).reduce((a, b) => a + b, 0);
    const kv = nums(decode, 0);
    const kvText = kv.length ? `, KV ${int(Math.min(...kv))}–${int(Math.max(...kv))} (mean ${int(kv.reduce((a, b) => a + b, 0) / kv.length)})` : '';
    summary.textContent = `${int(prefill.length)} prefill row${prefill.length === 1 ? '' : 's'} (${int(newTokens)} new tokens) · `
      + `${int(decode.length)} decode${decode.length === 1 ? '' : 's'}${kvText}`
      + (bad ? ` · ${int(bad)} row${bad === 1 ? '' : 's'} with an error, not counted` : '');
  }

  /** Rebuilds the rows from the state. */
  function render() {
    const { prefill, decode } = app.state;
    prefillBody.replaceChildren(...prefill.map((row, i) => h('tr', {}, h('td', { class: 'idx', text: i + 1 }),
      cell(`${P}[${i}].progress_index`, prefill, i, 0, `Prefill ${i + 1} cached prefix`),
      cell(`${P}[${i}].num_new_prefill_tokens`, prefill, i, 1, `Prefill ${i + 1} new tokens`),
      rowButtons(prefill, i, 'prefill'))));
    if (!prefill.length) prefillBody.append(h('tr', {}, h('td', { colspan: 4, class: 'muted', text: 'No prefill rows.' })));
    decodeBody.replaceChildren(...decode.slice(0, SHOWN_DECODES).map((row, i) => h('tr', {},
      h('td', { class: 'idx', text: i + 1 }),
      cell(`${D}[${i}].progress_index`, decode, i, 0, `Decode ${i + 1} KV length`),
      rowButtons(decode, i, 'decode'))));
    if (!decode.length) decodeBody.append(h('tr', {}, h('td', { colspan: 3, class: 'muted', text: 'No decode rows.' })));
    more.textContent = decode.length > SHOWN_DECODES
      ? `Showing the first ${SHOWN_DECODES} of ${int(decode.length)} decode rows; all are priced. Edit the rest with the bulk actions or JSON.` : '';
    summarise();
  }
  return { render };
}
