// SPDX-License-Identifier: Apache-2.0
// The Plan panel's inputs (docs/PLAN.md, docs/PAGE.md "Plan"): the model, the traffic, the
// latency targets, the candidate GPUs with their GPU-hour prices, the TP degrees to try and
// whether to try expert parallelism (a MoE model's);
// their compact form in the share link (`pl=`, kept by the first view as text and read
// here, so the first view carries no code of the planner's), and the plan request (the
// CLI's `stepcalc plan` format) built from them.
//
// Plan inputs: { model: a preset name, or '' for the page's model,
//                input, output, load: 'rate' | 'concurrency', rate, concurrency,
//                ttft, tpot, e2e (0: no target), percentile: 50 | 90 | 99,
//                gpus: [[name, $ per GPU-hour]] (the candidates, in the catalogue's order),
//                tp: [degrees], maxGpus, ep: try expert parallelism (MoE models; the core's default) }
// A field the user left invalid holds the typed text; the core then names its path.

/**
 * @typedef {{model: string, input: any, output: any, load: string, rate: any, concurrency: any,
 *   ttft: any, tpot: any, e2e: any, percentile: number, gpus: Array<[string, any]>, tp: number[],
 *   maxGpus: any, ep: boolean}} PlanInputs
 */

/** The TP degrees the panel offers (the planner's default search is 1, 2, 4, 8). */
export const TP_CHOICES = [1, 2, 4, 8];
/** The target percentiles the planner accepts. */
export const PERCENTILES = [50, 90, 99];

/**
 * A fresh panel's inputs: the question (1,000 in / 300 out at 2 requests/s; p90 TTFT
 * 1 s and TPOT 50 ms) on the page's model, every GPU of `prices` at its price.
 * @param {Record<string, number>} prices the default GPU-hour prices, by GPU
 * @returns {PlanInputs}
 */
export function defaultPlan(prices = {}) {
  return { model: '', input: 1000, output: 300, load: 'rate', rate: 2, concurrency: 32,
    ttft: 1000, tpot: 50, e2e: 0, percentile: 90, gpus: Object.entries(prices), tp: [...TP_CHOICES], maxGpus: 64,
    ep: true };
}

const fail = (message) => {
  throw Object.assign(new Error(message), { path: 'pl' });
};
const NUMBER = /^\d{1,9}(\.\d{1,6})?$/;
const NAME = /^[\w.-]{1,80}$/;

/** Whether every field of `p` holds a number (what the link can keep). */
export function planComplete(p) {
  const numbers = [p.input, p.output, p.rate, p.concurrency, p.ttft, p.tpot, p.e2e, p.maxGpus,
    ...p.gpus.map(([, usd]) => usd)];
  return numbers.every((v) => typeof v === 'number' && NUMBER.test(String(v)));
}

/**
 * `llama-3.1-70b-instruct_1000_300_r2_q90~t1000~p50~e0_H100*2.5~B200*5.5_1~2~4~8_x64`:
 * model ('' for the page's), input and output tokens, r<rate> or c<concurrency>, the
 * targets (0: none), GPUs with prices, TP degrees, the most GPUs, and `_ep0` at the end when
 * expert parallelism is not to be tried (links without it try it, as the core does). What `pl=` holds.
 * @param {PlanInputs} p
 */
export function encodePlan(p) {
  const load = p.load === 'concurrency' ? `c${p.concurrency}` : `r${p.rate}`;
  const targets = `q${p.percentile}~t${p.ttft || 0}~p${p.tpot || 0}~e${p.e2e || 0}`;
  return [p.model, p.input, p.output, load, targets, p.gpus.map(([g, usd]) => `${g}*${usd}`).join('~'),
    p.tp.join('~'), `x${p.maxGpus}`, ...(p.ep ? [] : ['ep0'])].join('_');
}

/**
 * The plan inputs of a `pl=` value; throws {path: 'pl', message} when malformed. GPUs are
 * names here: the core checks them when the plan runs.
 * @returns {PlanInputs}
 */
export function decodePlan(text) {
  const parts = String(text).split('_');
  if (parts.length !== 8 && parts.length !== 9) fail('The link\'s plan "pl" needs 8 or 9 parts separated by "_".');
  const num = (t, what) => {
    if (!NUMBER.test(t)) fail(`The link's plan ${what} "${t.slice(0, 12)}" is not a number.`);
    return Number(t);
  };
  const [model, input, output, load, targets, gpus, tp, maxGpus, ep = 'ep1'] = parts;
  const p = defaultPlan();
  if (model !== '' && !NAME.test(model)) fail('The link\'s plan model is not a preset name.');
  p.model = model;
  p.input = num(input, 'input tokens');
  p.output = num(output, 'output tokens');
  if (!/^[rc]/.test(load)) fail('The link\'s plan load must start with r (request rate) or c (concurrency).');
  p.load = load[0] === 'c' ? 'concurrency' : 'rate';
  if (p.load === 'rate') p.rate = num(load.slice(1), 'request rate');
  else p.concurrency = num(load.slice(1), 'concurrency');
  const t = /^q(\d+)~t([^~]+)~p([^~]+)~e([^~]+)$/.exec(targets);
  if (!t) fail('The link\'s plan targets must read q<percentile>~t<TTFT>~p<TPOT>~e<E2E>.');
  p.percentile = num(t[1], 'percentile');
  if (!PERCENTILES.includes(p.percentile)) fail('The link\'s plan percentile must be 50, 90 or 99.');
  [p.ttft, p.tpot, p.e2e] = [num(t[2], 'TTFT target'), num(t[3], 'TPOT target'), num(t[4], 'E2E target')];
  p.gpus = gpus === '' ? [] : gpus.split('~').slice(0, 64).map((g) => {
    const [name, usd, more] = g.split('*');
    if (more !== undefined || usd === undefined || !NAME.test(name)) {
      fail('The link\'s plan GPUs must read NAME*price.');
    }
    return [name, num(usd, `price of ${name}`)];
  });
  p.tp = tp === '' ? [] : tp.split('~').slice(0, 16).map((d) => num(d, 'TP degree'));
  if (!/^x/.test(maxGpus)) fail('The link\'s plan must end with x<most GPUs>.');
  p.maxGpus = num(maxGpus.slice(1), 'most GPUs');
  if (ep !== 'ep0' && ep !== 'ep1') fail('The link\'s plan expert parallelism must read ep0 or ep1.');
  p.ep = ep === 'ep1';
  return p;
}

/**
 * The plan request (docs/PLAN.md) of the inputs; `pageModel` (a preset name or a shape
 * object) stands in for model '', and `pageHubId` (the Hub id a config model was fetched by)
 * names it in the `vllm serve` line. Blank targets are left out; an empty GPU or TP list is
 * sent as it is, for the core to name. Expert parallelism not tried: `search.expert_parallel`
 * [false] (else the core's default, which tries a MoE model's TP with and without it).
 * @param {PlanInputs} p @param {any} pageModel @param {string} [pageHubId]
 */
export function planRequest(p, pageModel, pageHubId = '') {
  const workload = { input_tokens: p.input, output_tokens: p.output };
  if (p.load === 'concurrency') workload.concurrency = p.concurrency;
  else workload.request_rate = p.rate;
  const slo = {};
  for (const [key, v] of [['ttft_ms', p.ttft], ['tpot_ms', p.tpot], ['e2e_ms', p.e2e]]) {
    if (v !== 0 && v !== '') slo[key] = v;
  }
  slo.percentile = p.percentile;
  const request = {
    model: p.model || pageModel,
    gpus: p.gpus.map(([g]) => g),
    gpu_hour_usd: Object.fromEntries(p.gpus),
    workload, slo, search: { tp: p.tp, max_gpus: p.maxGpus },
  };
  if (!p.ep) request.search.expert_parallel = [false];
  if (!p.model && typeof pageModel === 'object' && pageHubId) request.hf_model = pageHubId;
  return request;
}

/**
 * The targets a candidate meets by its estimate but would miss were it as slow as the ledger's
 * runs like it measured (a negative bias: those estimates ran low; docs/VALIDATION.md): the
 * estimate over (1 + bias). A candidate's `validation` and `*_ms_at_percentile`, the plan's `slo`.
 * @param {any} c @param {any} slo
 * @returns {{metric: 'TTFT' | 'TPOT', estimate: number, atBias: number, bias: number, target: number}[]}
 */
export function targetsAtRisk(c, slo) {
  const v = c?.validation;
  if (!v || v.subset === null) return [];
  const out = [];
  for (const [metric, estimate, target, bias] of /** @type {const} */ ([
    ['TTFT', c.ttft_ms_at_percentile, slo?.ttft_ms, v.ttft_bias],
    ['TPOT', c.tpot_ms_at_percentile, slo?.tpot_ms, v.tpot_bias]])) {
    if (!(bias <= -1 && bias > -100 && target > 0 && estimate <= target)) continue;
    const atBias = estimate / (1 + bias / 100);
    if (atBias > target) out.push({ metric, estimate, atBias, bias, target });
  }
  return out;
}
