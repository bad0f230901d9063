// SPDX-License-Identifier: Apache-2.0
// What an export is of: its title, the context it was made in (stepcalc's version, the
// date, the model, GPU, TP, mode, the step or the workload, the page's link) and a file
// name that says it ("stepcalc-llama-3.1-70b-instruct-H100-tp4-serving.csv"). The CSV
// files carry the context as `#` lines above the header, the SVG and PNG files as a
// header above the chart (web/export.js). No DOM: tests/web/words.test.mjs runs it in node.

/**
 * @typedef {{title: string, lines: [string, string][], file: string}} About
 * `lines`: [label, value] pairs in order; `file`: the file name without extension.
 */

/** The model's name as the page shows it: the preset, the config's name, or "custom model shape". */
export const modelName = (state) =>
  (typeof state.model === 'string' ? state.model : state.modelName || 'custom model shape');

/** A piece of a file name: lower-case words, digits, dots and dashes only ("Llama 3 (edited)" -> "llama-3-edited"). */
export const slug = (text, keepCase = false) => {
  const s = String(text).normalize('NFKD').replace(/[^\w.-]+/g, '-').replace(/_/g, '-').replace(/\.{2,}/g, '.')
    .replace(/-{2,}/g, '-').replace(/^[-.]+|[-.]+$/g, '').slice(0, 60);
  return keepCase ? s : s.toLowerCase();
};

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The step of a priced state in words: "1 prefill row (2048 new tokens); 64 decode rows"
 * (no commas: a CSV's `#` line needs no quotes).
 */
export function stepWords(state) {
  const prefill = state.prefill || [], decode = state.decode || [];
  const newTokens = prefill.reduce((a, r) => a + (Number(r[1]) || 0), 0);
  const parts = [];
  if (prefill.length) parts.push(`${plural(prefill.length, 'prefill row')} (${plural(newTokens, 'new token')})`);
  if (decode.length) parts.push(plural(decode.length, 'decode row'));
  return parts.join('; ') || 'no rows';
}

/**
 * The About of one export of the priced state `good` ({state, result}).
 * @param {{what: string, title: string, good: {state: any, result: any}, version: string,
 *   extra?: [string, string][], link?: string, now?: Date}} options
 * `what`: the file name's last part ("breakdown"); `extra`: lines after the step's
 * (the workload); `link`: the page's address (default: location.href when there is one).
 * @returns {About}
 */
export function aboutExport({ what, title, good, version, extra = [], link, now = new Date() }) {
  const { state, result } = good;
  const model = modelName(state);
  /** @type {[string, string][]} */
  const lines = [
    ['stepcalc version', version || 'unknown'],
    ['exported', `${now.toISOString().slice(0, 16).replace('T', ' ')} UTC`],
    ['model', model],
    ['GPU', state.gpu + (result.mode === 'measured' ? ` (kernel tables ${state.kernels || 'default'})` : '')],
    ['TP', String(state.tp)],
    ['mode', result.mode],
    ['step', stepWords(state)],
    ...extra,
  ];
  const address = link ?? (typeof location === 'undefined' ? '' : location.href);
  if (address) lines.push(['link', address]);
  return { title: `stepcalc: ${title}`, lines,
    file: ['stepcalc', slug(model), slug(state.gpu, true), `tp${slug(String(state.tp))}`, slug(what)]
      .filter(Boolean).join('-') };
}
