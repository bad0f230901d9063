// SPDX-License-Identifier: Apache-2.0
// The Serving panel's state: the workload a user sets (lengths, load, request count,
// GPU-hour price), its compact form in the share link (`sv=`), and the serving request
// (the CLI's format, docs/SERVING.md) built from it and the page's model, GPU, TP and mode.
//
// Serving state: { input, output, load: 'concurrency' | 'rate', concurrency, rate,
//                  requests (0: the default, 10 x concurrency), usd (0: no cost) }
// A field the user left invalid holds the typed text; the core then names its path.

/** Concurrencies of the latency-throughput curve (the current one is added). */
export const CURVE_CONCURRENCY = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/**
 * @typedef {{input: any, output: any, load: string, concurrency: any, rate: any, requests: any, usd: any}} Serving
 */

/** @returns {Serving} */
export function defaultServing() {
  return { input: 1024, output: 128, load: 'concurrency', concurrency: 8, rate: 4, requests: 0, usd: 0 };
}

const fail = (path, message) => {
  throw Object.assign(new Error(message), { path });
};
const NUMBER = /^\d{1,9}(\.\d{1,6})?$/;

/** `1024_128_c8_n0_u2.5` (or `r4` for a request rate): what `sv=` holds. */
export function encodeServing(s) {
  const load = s.load === 'rate' ? `r${s.rate}` : `c${s.concurrency}`;
  return `${s.input}_${s.output}_${load}_n${s.requests || 0}_u${s.usd || 0}`;
}

/** The serving state of an `sv=` value; throws {path: 'sv', message} when malformed. */
export function decodeServing(text) {
  const parts = String(text).split('_');
  if (parts.length !== 5) fail('sv', 'The link\'s serving workload "sv" needs 5 parts (in_out_c|r_n_u).');
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
  return s;
}

/** The workload object of the request; `concurrency` (a number) replaces the load for a curve point. */
export function workloadOf(s, concurrency) {
  const w = { input_tokens: s.input, output_tokens: s.output };
  if (concurrency !== undefined) {
    w.concurrency = concurrency;
    w.num_requests = Math.max(32, 3 * concurrency);
    return w;
  }
  if (s.load === 'rate') w.request_rate = s.rate;
  else w.concurrency = s.concurrency;
  if (s.requests !== 0) w.num_requests = s.requests;
  return w;
}

/** The serving request: `stepRequest` (the page's priced request) without its step, plus the workload. */
export function serveRequest(stepRequest, s, concurrency) {
  const { step, ...rest } = stepRequest;
  const r = { ...rest, workload: workloadOf(s, concurrency) };
  if (s.usd !== 0) r.gpu_hour_usd = s.usd;
  return r;
}
