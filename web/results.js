// SPDX-License-Identifier: Apache-2.0
// The priced step in words and tables: the headline (step time, tokens, what binds),
// every table lookup with its provenance (web/lookups.js makes the rows), and the warnings.
import { docLink, fill, h, int, pct, time, timeUs, withDocLinks } from './dom.js';
import { exportButtons } from './export-buttons.js';
import { MODE } from './catalogue.js';
import { noFitWords } from './summary-strip.js';
import { MAX_SHOWN_LOOKUPS, lookupTable, lookupsCsv, provenance } from './lookups.js';

const MAX_LOOKUP_ROWS = 100; // more on request: a long table slows every reprice
const MORE_LOOKUP_ROWS = 500; // added per "Show more"
const MAX_SHOWN_WARNINGS = 50;

/** What is priced, in one line: model, GPU, TP (DP and EP when set) and mode. */
export function contextLine(state, result) {
  const model = typeof state.model === 'string' ? state.model : state.modelName || 'custom model shape';
  const layout = `TP ${state.tp}${(state.dp ?? 1) !== 1 ? ` · DP ${state.dp}` : ''}` +
    `${(state.ep ?? 1) !== 1 ? ` · EP ${state.ep}` : ''}`;
  return `${model} on ${state.gpu} · ${layout} · mode ${result.mode}`;
}

/**
 * The headline: the step time, its tokens, what binds it; `reference` (the blis-v2
 * result of the same step, or null) is shown beside another mode's figure.
 */
export function headline(result, reference = null, accuracy = null, gpu = null) {
  const t = result.tokens;
  const fused = result.corrected?.fused;
  const phaseText = (name) => {
    const p = result.phases?.[name];
    if (!p) return null;
    const role = fused ? 'priced on its own for comparison' : result.bound === name
      ? 'binds the step' : 'hidden under the other phase';
    return h('li', {}, h('strong', { text: name === 'prefill' ? 'Prefill' : 'Decode' }),
      ` ${p.bound_by}-bound (compute ${time(p.compute_s)}, memory ${time(p.memory_s)}), ${role}.`);
  };
  const bound = fused
    ? 'one fused forward pass over all tokens' : { prefill: 'the prefill phase', decode: 'the decode phase',
    overhead: 'CPU overhead (no GPU work)' }[result.bound] || result.bound;
  const us = result.step_time_us;
  // A model that does not fit on the GPU at this TP is said beside the number, not only in the warnings.
  const noFit = noFitWords(result);
  return h('div', { class: 'headline' },
    h('p', { class: 'big' }, h('data', { 'data-testid': 'step-time-us', value: us, text: timeUs(us) }),
      us >= 1000 ? h('span', { class: 'exact', text: ` ${int(us)} µs` }) : null,
      noFit ? h('span', { class: 'no-fit', 'data-testid': 'headline-no-fit', text: noFit }) : null),
    h('p', {},
      `${int(t.total)} token${t.total === 1 ? '' : 's'} (${int(t.prefill)} prefill + ${int(t.decode)} decode) · `,
      h('strong', { text: int(result.tokens_per_s) }), ' tokens/s'),
    result.bound === 'overhead'
      ? h('p', { text: `No GPU work: the step is its CPU overhead, ${time(result.overhead_us * 1e-6)}.` })
      : h('p', {}, 'Bound by ', h('strong', { text: bound }),
        `; CPU overhead ${time(result.overhead_us * 1e-6)} is added on top.`),
    h('ul', { class: 'phases' }, phaseText('prefill'), phaseText('decode')),
    reference ? referenceLine(result, reference) : null,
    linkLine(result, gpu),
    accuracyLine(result.mode, accuracy));
}

/**
 * GPUs without NVLink (`gpu`'s interconnect is PCIe) whose collectives take a fifth or more
 * of a measured step's GPU time: said under the number, with the link's bandwidth.
 */
export function linkLine(result, gpu) {
  const m = result.measured;
  if (!m || gpu?.interconnect !== 'PCIe' || !(m.gpu_time_us > 0)) return null;
  const share = m.totals_us.communication / m.gpu_time_us;
  if (!(share >= 0.2)) return null;
  return h('p', { class: 'field-warning', 'data-testid': 'pcie-note',
    text: `${gpu.name} GPUs talk over PCIe (${int(gpu.nvlink_bw_bytes_per_s / 1e9)} GB/s each way, no NVLink): ` +
      `the all-reduce takes ${pct(share)} of this step's GPU time. Fewer GPUs per engine (a lower TP) or ` +
      'NVLink GPUs spend less on it.' });
}

/** @type {Promise<any> | undefined} */
let accuracyRead;
/**
 * docs/accuracy.json (`npm run accuracy`, 0.5 KB), read once for the whole page (the headline's
 * line and the modes section both show it); null when it cannot be read.
 */
export const accuracyFacts = () => (accuracyRead ??= fetch('docs/accuracy.json')
  .then((r) => (r.ok ? r.json() : null)).catch(() => null));

/**
 * This mode's step-time error on the public calibration steps (docs/accuracy.json, `npm run
 * accuracy`), or nothing until that file is read; the one setup with measured step traces.
 */
export function accuracyLine(mode, accuracy) {
  const a = accuracy?.modes?.[mode];
  if (!a) return null;
  return h('p', { class: 'muted', 'data-testid': 'step-accuracy' },
    `Checked: ${mode} misses measured vLLM step times by ${a.mape.toFixed(2)}% on average over ` +
    `${int(accuracy.steps)} steps of ${accuracy.setup}, the one setup with public step traces; other setups are ` +
    'not checked step by step. ',
    docLink('ACCURACY', 'Accuracy'));
}

/**
 * What the figure shown first is (web/result-view.js provisional): the reference model's, in the
 * place of the reference line, until `gpu`'s measured tables are in (or, `failed`, did not load).
 */
export const referenceFirstLine = (gpu, failed = false) => h('p', { class: 'reference',
  'data-testid': 'reference-first' }, `Reference model (${MODE.reference}) figure: the measured kernel tables for ` +
  `${gpu} ${failed ? 'did not load' : 'are loading'}.`);

function referenceLine(result, reference) {
  const ratio = result.step_time_us / reference.step_time_us - 1;
  const diff = Math.abs(ratio) < 0.0005 ? 'the same' : `${pct(Math.abs(ratio))} ${ratio < 0 ? 'lower' : 'higher'}`;
  return h('p', { class: 'reference', 'data-testid': 'reference' }, `Reference model (${MODE.reference}): `,
    h('data', { value: reference.step_time_us, text: timeUs(reference.step_time_us) }), `; ${result.mode} is ${diff}.`);
}

/** One row of the lookup table (web/lookups.js lookupTable). */
function lookupRow(r) {
  const p = provenance(r.lookup);
  return h('tr', {}, h('th', { scope: 'row', text: r.where }),
    h('td', { class: 'num', 'data-label': 'Shape', text: r.shape }),
    h('td', { class: 'num', 'data-label': 'MFU', text: r.mfu === undefined ? '' : pct(r.mfu) }),
    h('td', { class: 'num', 'data-label': 'Time', text: r.s === null ? '' : time(r.s) }),
    h('td', { 'data-label': 'Provenance' },
      p.how && h('span', { class: `how how-${p.how.replace(/\W/g, '')}`, text: p.how }), ` ${p.detail}`,
      r.extra && h('em', { text: ` ${r.extra}` })));
}

/**
 * The lookup table and the core's warnings (the page adds none of its own). `cut` is given
 * for a result whose lookup lists were cut to the rows the table can show (a big step priced
 * in the pricing worker, web/lookups.js cutLookups): {total}, the rows of the whole result,
 * and csv(), their CSV as the worker writes it.
 * @param {{total: number, csv: () => Promise<{records: string}>} | null} [cut]
 */
export function renderDetails(result, root, about = undefined, cut = null) {
  let limit = Math.min(Number(root.dataset.lookupRows) || MAX_LOOKUP_ROWS, MAX_SHOWN_LOOKUPS);
  const table = lookupTable(result, limit); // only the rows shown are made
  const total = cut?.total ?? table.total;
  const body = h('tbody', {}, table.rows.map(lookupRow));
  // "Show more" adds the next rows to the table: drawing it again from its first row took
  // most of a second at 2,000 rows. The button stays (and keeps the focus) while there are more.
  const shown = h('span');
  const more = h('button', { type: 'button', class: 'link', onclick: () => {
    const next = Math.min(limit + MORE_LOOKUP_ROWS, MAX_SHOWN_LOOKUPS);
    root.dataset.lookupRows = String(next);
    body.append(...lookupTable(result, next).rows.slice(limit).map(lookupRow));
    limit = next;
    count();
  } });
  const note = h('p', { class: 'muted' });
  function count() {
    note.hidden = total <= limit;
    if (note.hidden) return note.replaceChildren();
    shown.textContent = `First ${int(limit)} of ${int(total)} lookups shown. `;
    if (limit >= MAX_SHOWN_LOOKUPS) {
      return note.replaceChildren(shown, 'The rest are in the result JSON (stepcalc price).');
    }
    more.textContent = `Show ${int(Math.min(MORE_LOOKUP_ROWS, MAX_SHOWN_LOOKUPS - limit, total - limit))} more`;
    if (note.lastChild !== more) note.replaceChildren(shown, more);
  }
  count();
  const warnings = result.warnings || [];
  const previous = /** @type {HTMLDetailsElement | null} */ (root.querySelector('details.lookup-details'));
  const lookupsOpen = previous?.open ?? false;
  fill(root,
    h('details', { open: true }, h('summary', {}, h('h2', { text: `Warnings (${warnings.length})` })),
      h('ul', { class: 'warnings' },
        warnings.slice(0, MAX_SHOWN_WARNINGS).map((w) => h('li', { title: w.code }, withDocLinks(w.message))),
        warnings.length > MAX_SHOWN_WARNINGS
          ? h('li', { text: `and ${int(warnings.length - MAX_SHOWN_WARNINGS)} more` }) : null),
      !warnings.length ? h('p', { class: 'muted', text: 'None: every lookup hit measured data.' }) : null),
    // Closed until opened (dozens of rows made the page several screens taller); it stays
    // as the user left it across repricing.
    h('details', { class: 'lookup-details', open: lookupsOpen },
      h('summary', {}, h('h2', { text: `Every table lookup (${int(total)})` })),
      exportButtons({ name: 'stepcalc-lookups', label: 'the lookup table', csv: cut?.csv ?? (() => lookupsCsv(result)),
        about }),
      h('div', {}, h('table', { class: 'lookups' },
        h('thead', {},
          h('tr', {}, ['Where', 'Shape', 'MFU', 'Time', 'Provenance'].map((t) => h('th', { scope: 'col', text: t })))),
        body)),
      note,
      h('p',
        { class: 'muted',
        text: 'Times are for all layers. Shape is M×K×N for GEMMs. "table cell": read as measured; "interpolated": ' +
          'between measured rows; "clamped": outside the measured range, the edge value is used; "fallback": no ' +
          'measurement applies, a default is used; "modelled" (measured mode\'s small kernels): bytes over the ' +
          'effective HBM bandwidth plus a launch floor.' })));
}
