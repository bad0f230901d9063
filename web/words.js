// SPDX-License-Identifier: Apache-2.0
// The page's words for the request's fields: labels shown beside inputs, and the
// core's errors rewritten from JSON paths into them ("step.decode_requests[0].
// progress_index must not be negative" -> "Decode row 1: KV length must not be
// negative."). The API and CLI keep the JSON path; only the page says it this way.
import { fixed } from './dom.js';

/** Labels of the model's shape fields, as the model panel shows them. */
export const SHAPE_LABELS = {
  num_hidden_layers: 'Layers', hidden_size: 'Hidden size', num_attention_heads: 'Attention heads',
  num_key_value_heads: 'KV heads', intermediate_size: 'FFN size', vocab_size: 'Vocabulary',
  bytes_per_param: 'Bytes / param', torch_dtype: 'dtype', head_dim: 'Head dim',
};

/** Labels and hints of the hardware constants. */
export const HW_LABELS = {
  TFlopsPeak: ['Peak TFLOP/s', 'dense BF16'],
  BwPeakTBs: ['Peak HBM TB/s', ''],
  bwEfficiencyFactor: ['Bandwidth efficiency', 'fraction of peak reached'],
  perLayerOverhead: ['CPU overhead / layer (µs)', ''],
};

const ROW_FIELDS = {
  prefill_requests: ['Prefill row', { progress_index: 'cached prefix', num_new_prefill_tokens: 'new tokens' }],
  decode_requests: ['Decode row', { progress_index: 'KV length', num_new_decode_tokens: 'new tokens' }],
};
const TOP = { tp: 'TP degree', gpu: 'GPU', mode: 'Mode', model: 'Model', step: 'The step', kernels: 'Kernel tables' };

/** map[key] for the map's own keys only (a path may say "__proto__"). */
const own = (map, key) => (Object.hasOwn(map, key) ? map[key] : undefined);
const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * The words for a JSON path: {where, field} ("Decode row 1", "KV length"), or null
 * for a path the page has no label for.
 */
export function labelFor(path) {
  if (typeof path !== 'string' || !path) return null;
  let m = /^step\.(prefill_requests|decode_requests)\[(\d+)\](?:\.(\w+))?$/.exec(path);
  if (m) {
    const [row, fields] = ROW_FIELDS[m[1]];
    return { where: `${row} ${Number(m[2]) + 1}`, field: m[3] ? own(fields, m[3]) || m[3] : '' };
  }
  m = /^model\.(\w+)$/.exec(path);
  if (m) return { where: 'Model', field: own(SHAPE_LABELS, m[1]) || m[1] };
  m = /^hardware\.(\w+)$/.exec(path);
  if (m) return { where: '', field: own(HW_LABELS, m[1])?.[0] || m[1] };
  m = /^corrected\.(params|switches)\.(\w+)$/.exec(path);
  if (m) return { where: m[1] === 'params' ? 'Parameter' : 'Switch', field: m[2] };
  if (own(TOP, path)) return { where: '', field: TOP[path] };
  return null;
}

/** One of the core's errors ({path, message}) in the page's words. */
export function inUserWords(path, message) {
  const label = labelFor(path);
  if (!label) return message;
  let rest = message.trim();
  const leaf = /(\w+)$/.exec(path)?.[1];
  let replaced = false;
  for (const prefix of [path, leaf]) {
    if (prefix && rest.startsWith(`${prefix} `)) {
      rest = rest.slice(prefix.length + 1);
      replaced = true;
      break;
    }
  }
  if (!/[.!?]$/.test(rest)) rest += '.';
  // Config names inside the sentence become their labels too.
  rest = rest.replace(/\b(num_\w+|hidden_size|intermediate_size|vocab_size|bytes_per_param)\b/g,
    (key) =>
      (own(SHAPE_LABELS, key) ? SHAPE_LABELS[key].toLowerCase().replace(/^kv/, 'KV').replace(/^ffn/, 'FFN') : key));
  if (!label.field) return replaced ? `${label.where} ${rest}` : `${label.where}: ${rest}`;
  const subject = replaced ? `${label.field} ${rest}` : `${label.field}: ${rest}`;
  return label.where ? `${label.where}: ${subject}` : capital(subject);
}

/**
 * A serve or plan error in a panel's words (the Serving and Plan panels): `label` ("Request
 * rate") in place of the JSON path it starts with, bounds as people say them ("must be a
 * number above 0", "from 1 to 4,096"), the workload's other paths in words. The path stays,
 * in brackets, only when there is no `label` (no field of the panel owns the error: the
 * path then says where it is).
 * @param {{path?: string, message: string}} error @param {string} label
 */
export function fieldErrorWords(error, label) {
  const path = error.path || '';
  let rest = String(error.message).trim();
  let subject = '';
  const leaf = /\.(\w+)$/.exec(path)?.[1];
  if (path && rest.startsWith(`${path} `)) {
    rest = rest.slice(path.length + 1);
    subject = label || path;
  } else if (label && leaf && (rest.startsWith(`${leaf} `))) { // "max_num_seqs (2000) must be ..."
    rest = rest.slice(leaf.length + 1);
    subject = label;
  }
  const number = (text) => {
    const v = Number(text);
    return Number.isFinite(v) && Math.abs(v) >= 1e-3 ? v.toLocaleString('en-US') : text;
  };
  rest = rest
    .replace(/must be a finite number >= ([\d.e+-]*\d)/, (all, lo) =>
      (Number(lo) > 0 && Number(lo) < 1e-3 ? 'must be a number above 0' : `must be a number of at least ${number(lo)}`))
    .replace(/must be in \[([\d.e+-]*\d), ([\d.e+-]*\d)\]/,
      (all, lo, hi) => `must be from ${number(lo)} to ${number(hi)}`)
    .replace(/must be in \(0, ([\d.e+-]*\d)\]/, (all, hi) => `must be above 0 and at most ${number(hi)}`)
    .replace(/exceeds the limit of ([\d.e+-]*\d)/, (all, hi) => `must be at most ${number(hi)}`)
    .replace(/must be an integer, not an? \w+/, 'must be a whole number')
    .replace(/must be a number, not an? \w+/, 'must be a number')
    .replace(/\bworkload\.(\w+)|\bgpu_hour_usd\b/g, (all, key) =>
      ({ input_tokens: 'the input tokens', output_tokens: 'the output tokens', concurrency: 'the concurrency',
        request_rate: 'the request rate', num_requests: 'the request count',
        prefix_cache_hit_ratio: 'the prefix-cache hit ratio' })[key] ??
        (key ? all : 'the $ per GPU-hour'))
    .replace(/\b(?:engine\.)?(max_num_seqs|max_num_batched_tokens|gpu_memory_utilization)\b/g, (all, key) =>
      ({ max_num_seqs: 'the max running requests',
        max_num_batched_tokens: 'the token budget per step',
        gpu_memory_utilization: 'the GPU memory utilization' })[key]);
  if (!/[.!?]$/.test(rest)) rest += '.';
  const text = subject ? `${subject} ${rest}` : label ? `${label}: ${rest}` : rest;
  return label || !path || subject ? text : `${text.replace(/\.$/, '')} (${path}).`;
}

/**
 * Which way the estimates erred on the measured runs like a configuration (the accuracy
 * ledger's bias, in percent: docs/VALIDATION.md): " (estimated 11% low there)", or nothing
 * where it rounds to 0%.
 */
export function biasWords(bias) {
  const b = Math.round(bias ?? 0);
  return b === 0 ? '' : ` (estimated ${Math.abs(b)}% ${b < 0 ? 'low' : 'high'} there)`;
}

/**
 * The accuracy ledger's error on the measured runs like a configuration (a result's
 * `validation`), both figures with the way each leant: "TTFT ±33% (estimated 13% high there)
 * and TPOT ±11% (estimated 11% low there) on 30 measured runs like this" (no commas: exports put
 * it in a CSV's header line); null where no run like it was measured.
 */
export function ledgerErrorWords(v) {
  if (!v || v.subset === null) return null;
  const left = v.runs_left_out ?? 0;
  return `TTFT ±${fixed(v.ttft_mape, 0)}%${biasWords(v.ttft_bias)} and TPOT ±${fixed(v.tpot_mape, 0)}%` +
    `${biasWords(v.tpot_bias)} on ${v.runs} measured runs like this` +
    (left > 0 ? ` (${left} more left out: they measured fewer clients than their rows say)` : '');
}

/**
 * The subset's runs its figures leave out (a result's `validation.runs_left_out`: runs that
 * measured fewer requests in flight than clients, docs/VALIDATION.md), said after a card's
 * figure: "; 3 more measured fewer clients than their rows say and are left out", or nothing.
 */
export function leftOutWords(v) {
  const left = v?.runs_left_out ?? 0;
  return left > 0 ? `; ${left} more measured fewer clients than their rows say and are left out` : '';
}
