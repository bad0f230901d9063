// SPDX-License-Identifier: Apache-2.0
// The Serving panel's state: the workload a user sets (lengths, load, request count,
// GPU-hour price, and the engine and workload details), its compact form in the share link
// (`sv=`), and the serving request (the CLI's format, docs/SERVING.md) built from it and the
// page's model, GPU, TP and mode.
//
// Serving state: { input, output, load: 'concurrency' | 'rate', concurrency, rate,
//                  requests (0: the default, 10 x concurrency), usd (0: no cost),
//                  more: the details below in their link form ('' or absent: none set) }
// The details (web/serving-runner.js reads `more` into them; null: the core's default):
//   seqs (engine.max_num_seqs), budget (engine.max_num_batched_tokens),
//   util (engine.gpu_memory_utilization), hit (workload.prefix_cache_hit_ratio),
//   spread: 'fixed' | 'uniform' | 'normal' | 'exponential' and spreadPct (uniform: ± that
//   share of each length, as `vllm bench serve --random-range-ratio`; normal: its standard
//   deviation), ttft and tpot (targets in ms, drawn on the latency curve; null: none),
//   curve: 'concurrency' | 'rate' | '' (the curve's axis; '': the load's).
// The first view (web/state.js) keeps `more` as text; only the serving bundle reads it.
// A field the user left invalid holds the typed text; the core then names its path.

/** Concurrencies of the latency-throughput curve (the current one is added). */
export const CURVE_CONCURRENCY = [1, 2, 4, 8, 16, 32, 64, 128, 256];
/** Request rates of the latency curve over rate, as multiples of the workload's (its own is 1). */
export const CURVE_RATE_MULTIPLES = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 2];

/**
 * @typedef {{input: any, output: any, load: string, concurrency: any, rate: any, requests: any, usd: any,
 *   more?: string}} Serving
 * @typedef {{seqs: any, budget: any, util: any, hit: any, spread: string, spreadPct: any, ttft: any, tpot: any,
 *   curve: string}} Details
 * @typedef {Serving & Details} Workload the runner's workload: the link's fields and the details read
 */

/** @returns {Serving} */
export function defaultServing() {
  return { input: 1024, output: 128, load: 'concurrency', concurrency: 8, rate: 4, requests: 0, usd: 0 };
}

/** @returns {Details} */
export function defaultDetails() {
  return { seqs: null, budget: null, util: null, hit: null, spread: 'fixed', spreadPct: 10, ttft: null, tpot: null,
    curve: '' };
}

const fail = (path, message) => {
  throw Object.assign(new Error(message), { path });
};
const NUMBER = /^\d{1,9}(\.\d{1,6})?$/;

/** `1024_128_c8_n0_u2.5` (or `r4` for a request rate), then the details' text: what `sv=` holds. */
export function encodeServing(s) {
  const load = s.load === 'rate' ? `r${s.rate}` : `c${s.concurrency}`;
  return `${s.input}_${s.output}_${load}_n${s.requests || 0}_u${s.usd || 0}${s.more ? `_${s.more}` : ''}`;
}

/**
 * The serving state of an `sv=` value; throws {path: 'sv', message} when malformed. The
 * details after the first five parts are kept as text (`more`) for the serving bundle.
 */
export function decodeServing(text) {
  const parts = String(text).split('_');
  if (parts.length < 5) fail('sv', 'The link\'s serving workload "sv" needs 5 parts (in_out_c|r_n_u).');
  const num = (t, what) => {
    if (!NUMBER.test(t)) fail('sv', `The link's serving ${what} "${t.slice(0, 12)}" is not a number.`);
    return Number(t);
  };
  const [input, output, load, requests, usd] = parts;
  if (!/^[cr]/.test(load)) fail('sv', 'The link\'s serving load must start with c (concurrency) or r (request rate).');
  if (!/^n/.test(requests) || !/^u/.test(usd)) fail('sv', 'The link\'s serving workload is malformed.');
  const s = defaultServing();
  s.input = num(input, 'input tokens');
  s.output = num(output, 'output tokens');
  s.load = load[0] === 'r' ? 'rate' : 'concurrency';
  if (s.load === 'rate') s.rate = num(load.slice(1), 'request rate');
  else s.concurrency = num(load.slice(1), 'concurrency');
  s.requests = num(requests.slice(1), 'request count');
  s.usd = num(usd.slice(1), 'GPU-hour price');
  if (parts.length > 5) s.more = parts.slice(5).join('_');
  return s;
}

/** The details' keys in the link, each a letter and a number: `s64_b4096_g0.85_h0.3_t500_p50`. */
const DETAIL_KEYS = { s: 'seqs', b: 'budget', g: 'util', h: 'hit', t: 'ttft', p: 'tpot' };
/** The length spreads in the link (`lu20`: uniform ±20%, `ln10`: normal, σ 10%, `le`: exponential). */
const SPREAD_KEYS = { u: 'uniform', n: 'normal', e: 'exponential' };
const CURVE_KEYS = { c: 'concurrency', r: 'rate' };
const letterOf = (map, value) => Object.keys(map).find((k) => map[k] === value);

/** The details of a workload in their link form ('' when none is set); numbers only (a typed text is not kept). */
export function encodeDetails(/** @type {Details} */ d) {
  const out = [];
  for (const [k, name] of Object.entries(DETAIL_KEYS)) if (typeof d[name] === 'number') out.push(`${k}${d[name]}`);
  if (d.spread !== 'fixed' && letterOf(SPREAD_KEYS, d.spread)) {
    out.push(`l${letterOf(SPREAD_KEYS, d.spread)}${d.spread === 'exponential' ? '' : d.spreadPct}`);
  }
  if (d.curve) out.push(`x${letterOf(CURVE_KEYS, d.curve)}`);
  return out.join('_');
}

/** The details of an `sv=` value's text after its five parts; throws {path: 'sv', message} naming the bad part. */
export function decodeDetails(text) {
  const d = defaultDetails();
  for (const part of text ? String(text).split('_') : []) {
    const key = part[0], rest = part.slice(1);
    const bad = () => fail('sv', `The link's serving detail "${part.slice(0, 12)}" is not one the page knows.`);
    const num = (t) => (NUMBER.test(t) ? Number(t) : bad());
    if (Object.hasOwn(DETAIL_KEYS, key)) d[DETAIL_KEYS[key]] = num(rest);
    else if (key === 'l' && Object.hasOwn(SPREAD_KEYS, rest[0])) {
      d.spread = SPREAD_KEYS[rest[0]];
      if (d.spread !== 'exponential') d.spreadPct = num(rest.slice(1));
      else if (rest.length > 1) bad();
    } else if (key === 'x' && Object.hasOwn(CURVE_KEYS, rest)) d.curve = CURVE_KEYS[rest];
    else bad();
  }
  return d;
}

/**
 * A request length with the workload's spread: the number itself when fixed (or when it is
 * not a whole number of tokens: the core then names the field), else the core's distribution.
 */
export function lengthOf(tokens, /** @type {Partial<Details>} */ d) {
  if (!d.spread || d.spread === 'fixed' || !Number.isInteger(tokens) || tokens < 1) return tokens;
  if (d.spread === 'exponential') return { distribution: 'exponential', mean: tokens };
  const pct = d.spreadPct;
  if (typeof pct !== 'number' || !(pct >= 0 && pct <= 100)) {
    fail('spread', 'spread must be a number from 0 to 100 (percent of each length).');
  }
  const width = (tokens * pct) / 100;
  return d.spread === 'uniform'
    ? { distribution: 'uniform', min: Math.max(1, Math.round(tokens - width)),
      max: Math.max(1, Math.round(tokens + width)) }
    : { distribution: 'normal', mean: tokens, stddev: Math.round(width * 1e3) / 1e3 };
}

/**
 * The workload object of the request; `point` replaces the load for a curve point:
 * {concurrency} (a closed loop of 3 x concurrency requests, at least 32) or {rate} (an open
 * loop, with the workload's request count).
 * @param {Serving & Partial<Details>} s @param {{concurrency?: number, rate?: number}} [point]
 */
export function workloadOf(s, point) {
  const w = { input_tokens: lengthOf(s.input, s), output_tokens: lengthOf(s.output, s) };
  if (point?.concurrency !== undefined) {
    w.concurrency = point.concurrency;
    w.num_requests = Math.max(32, 3 * point.concurrency);
  } else {
    if (point?.rate !== undefined) w.request_rate = point.rate;
    else if (s.load === 'rate') w.request_rate = s.rate;
    else w.concurrency = s.concurrency;
    if (s.requests !== 0) w.num_requests = s.requests;
  }
  if (s.hit !== null && s.hit !== undefined) w.prefix_cache_hit_ratio = s.hit;
  return w;
}

/**
 * The serving request: `stepRequest` (the page's priced request) without its step, plus the
 * workload, the engine settings set and the price. Throws {path, message} for a detail the
 * page checks itself (the spread).
 * @param {Record<string, any>} stepRequest @param {Serving & Partial<Details>} s
 * @param {{concurrency?: number, rate?: number}} [point]
 */
export function serveRequest(stepRequest, s, point) {
  const { step, ...rest } = stepRequest;
  const r = /** @type {Record<string, any>} */ ({ ...rest, workload: workloadOf(s, point) });
  const engine = engineOf(s);
  if (engine) r.engine = engine;
  if (s.usd !== 0) r.gpu_hour_usd = s.usd;
  return r;
}

/** The request's `engine` object of the details set (null when none is). */
export function engineOf(/** @type {Partial<Details>} */ s) {
  const engine = {};
  for (const [key, field] of [['seqs', 'max_num_seqs'], ['budget', 'max_num_batched_tokens'],
    ['util', 'gpu_memory_utilization']]) if (s[key] !== null && s[key] !== undefined) engine[field] = s[key];
  return Object.keys(engine).length ? engine : null;
}

/**
 * A priced state's result whose `memory` is that of the engine the workload `w` sets (its
 * token budget and GPU memory utilization change the KV cache): the step's request priced with
 * an empty step and that engine; `good.result` itself when `w` sets none, or sets one in error
 * (the simulation names it at its field). The Serving panel's memory bar and the summary
 * strip's memory fit both read it, so they say the same.
 * @param {any} calc @param {{request: Record<string, any>, result: any}} good @param {Partial<Details>} w
 */
export function engineMemory(calc, good, w) {
  const engine = engineOf(w);
  if (!engine) return good.result;
  try {
    return calc.price({ ...good.request, step: {}, engine });
  } catch {
    return good.result;
  }
}
