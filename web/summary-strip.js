// SPDX-License-Identifier: Apache-2.0
// The summary strip under the title, the parts the first view draws: the step time (with
// "does not fit" beside it) and the memory fit, both from the priced step, in the number's
// frame. The serving figures (TTFT, TPOT, cost) come later from the serving bundle
// (web/serving-summary.js) into the same strip, which from then on draws the memory fit with
// the Serving panel's engine settings.
import { $, h, fill, fixed, int, timeUs } from './dom.js';

const gib = (bytes) => `${fixed(bytes / 2 ** 30, 1)} GiB`;

/**
 * Whether a priced step's model does not fit on its GPU at its TP (no KV cache is left
 * after the weights and reserves): "does not fit at TP 1 on H100", or null when it fits or
 * the memory is not known.
 */
export function noFitWords(result) {
  const m = result.memory;
  if (m ? m.fits : !result.warnings?.some((w) => w.code === 'model_does_not_fit')) return null;
  return m ? `does not fit at TP ${m.tp} on ${m.gpu}` : 'does not fit';
}

/** The memory fit of a priced step in words: {fits, head, rest} ("Fits:", "1,234 tokens of KV cache per GPU"). */
export function fitWords(result) {
  const m = result.memory;
  if (!m) return { fits: null, head: 'Not known:', rest: 'the model\'s full shape is not known' };
  if (m.fits) return { fits: true, head: 'Fits:', rest: `${int(m.kv_cache_tokens)} tokens of KV cache per GPU` };
  const usable = `${gib(m.budget_bytes)} usable per ${m.gpu}`;
  return { fits: false, head: `Does not fit at TP ${m.tp}:`, rest: m.weights_bytes > m.budget_bytes
    ? `weights ${gib(m.weights_bytes)} > ${usable}`
    : `weights ${gib(m.weights_bytes)} and activations leave no KV cache in the ${usable}` };
}

/**
 * Fills the strip's step time and memory fit from a priced state (`good`); the fit (and the
 * "does not fit" beside the step time) from `memory`, a result whose `memory` is that of the
 * Serving panel's engine settings (web/serving-state.js engineMemory) once the serving bundle
 * has loaded, else the step's own (the default engine's).
 */
export function showSummary(good, memory = good.result) {
  const { result } = good;
  const noFit = noFitWords(memory);
  fill($('#sum-step dd'),
    h('strong', { 'data-testid': 'summary-step-time', text: timeUs(result.step_time_us) }),
    noFit && h('span', { class: 'no-fit', 'data-testid': 'summary-no-fit', text: noFit }),
    h('small', { text: `${int(result.tokens.total)} token${result.tokens.total === 1 ? '' : 's'} in one step, ` +
      `mode ${result.mode}` }));
  const fit = fitWords(memory);
  const item = $('#sum-memory');
  item.dataset.fits = String(fit.fits);
  fill($('dd', item), h('strong', { class: fit.fits === false ? 'no-fit' : null, text: fit.head }), ` ${fit.rest}`);
}
