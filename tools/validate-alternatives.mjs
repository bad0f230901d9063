// SPDX-License-Identifier: Apache-2.0
// The evidence behind the ledger's protocol (issue #22): re-prices every run of
// data/silicon/vllm-public.csv under the chosen protocol (tools/validate-ledger.mjs) and under
// each reasonable alternative to one of its choices, and writes their TTFT and TPOT MAPE, over
// all priced runs and over the declared fit part (the Llama-3.1-70B rows) and the rest, to
// docs/validation-alternatives.json. tools/validate.mjs puts the table into docs/validation.json
// and docs/VALIDATION.md. Slow (each alternative is a whole ledger: ~1-5 min natively); run it when
// the protocol or the simulation changes, then `npm run validate`.
// Usage: node tools/validate-alternatives.mjs
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ROOT, CHAT_TEMPLATE_TOKENS, readRows, requestOf, serve, subsetOf, mape, bias, round2,
} from './validate-ledger.mjs';

export const ALTERNATIVES_FILE = 'docs/validation-alternatives.json';
/** The declared fit part: the only rows the API-server constant was scanned on. */
export const FIT_PART = 'meta-llama/Llama-3.1-70B';

/** @typedef {Record<string, any>} Req */
/** @typedef {{name: string, choice: string, change: (r: Req) => Req}} Alternative */

/** @param {Req} r @param {Record<string, unknown>} w @returns {Req} */
const workload = (r, w) => ({ ...r, workload: { ...r.workload, ...w } });
/** Concurrency of a request. @param {Req} r */
const c = (r) => /** @type {number} */ (r.workload.concurrency);
/** @param {Req} r @returns {Req} */
const withoutFp8Kv = (r) => {
  const { kv_cache_dtype: _kv, ...rest } = r;
  return rest;
};

/** @type {Alternative[]} */
export const ALTERNATIVES = [
  { name: 'chosen', choice: 'the protocol of docs/validation.json', change: (r) => r },
  { name: 'previous protocol', choice: 'all four: 20 x concurrency in all, 2 x of them a warm-up the clients go ' +
      'straight on from, the KV cache the checkpoint declares, prompts of isl tokens (the ledger before issue ' +
      '#22\'s TTFT work)',
  change: (r) => withoutFp8Kv(workload(r, { num_requests: 20 * c(r), warmup_drain: false,
    input_tokens: r.workload.input_tokens - CHAT_TEMPLATE_TOKENS })) },
  { name: 'KV cache as the checkpoint says', choice: 'KV cache (FP8 only where an hf_quant_config.json declares it)',
    change: withoutFp8Kv },
  { name: 'warm-up not drained', choice: 'warm-up', change: (r) => workload(r, { warmup_drain: false }) },
  ...[[0, 'prompt of isl tokens', 'input tokens: isl exactly (a completions endpoint: no chat template)'],
    [1, 'prompt of isl + 1 tokens', 'input tokens: one token more than isl (a tokenizer\'s BOS alone)'],
    [32, 'prompt of isl + 32 tokens', 'input tokens: a chat template with a short default system prompt']]
    .map(([extra, name, choice]) => ({ name: String(name), choice: String(choice),
      change: (/** @type {Req} */ r) => workload(r, {
        input_tokens: r.workload.input_tokens - CHAT_TEMPLATE_TOKENS + Number(extra) }) })),
  { name: '18 x concurrency measured', choice: 'request count (20 x concurrency in all)',
    change: (r) => workload(r, { num_requests: 20 * c(r) }) },
  { name: '50 x concurrency measured', choice: 'request count (AIConfigurator\'s benchmark generator)',
    change: (r) => workload(r, { num_requests: 52 * c(r) }) },
  ...[5, 20, 60].map((ms) => ({ name: `API server ${ms} ms per request`, choice: 'API-server constant',
    change: (/** @type {Req} */ r) => workload(r, { api_overhead_ms: ms }) })),
  { name: 'vLLM engine defaults', choice: 'engine: vLLM\'s own SchedulerConfig defaults, 2,048 tokens a step and ' +
      'at most 128 running requests (an engine made without `vllm serve`\'s defaults for large GPUs)',
  change: (r) => ({ ...r, engine: { ...(r.engine ?? {}), max_num_batched_tokens: 2048, max_num_seqs: 128 } }) },
  { name: 'at most 128 running requests', choice: 'engine: max_num_seqs 128 (SchedulerConfig\'s default) alone',
    change: (r) => ({ ...r, engine: { ...(r.engine ?? {}), max_num_seqs: 128 } }) },
  { name: '2,048 tokens a step', choice: 'engine: max_num_batched_tokens 2,048 (SchedulerConfig\'s default) alone',
    change: (r) => ({ ...r, engine: { ...(r.engine ?? {}), max_num_batched_tokens: 2048 } }) },
  { name: 'output lengths +-1% (diagnostic)', choice: 'not a protocol: what desynchronised clients would give',
    change: (r) => workload(r, { output_tokens: { distribution: 'normal', mean: r.workload.output_tokens,
      stddev: r.workload.output_tokens / 100, min: 1 } }) },
];

/**
 * Prices the mapped rows under one alternative: each distinct request once.
 * @param {{subset: string, measured: {ttft: number, tpot: number}, request: Req}[]} runs
 * @param {Alternative} alt
 */
function priceUnder(runs, alt) {
  const requests = runs.map((r) => alt.change({ ...r.request, id: undefined }));
  const keys = requests.map((q) => JSON.stringify(q));
  const unique = [...new Set(keys)];
  /** @type {Map<string, any>} */
  const results = new Map();
  const byKey = new Map(requests.map((q, i) => [keys[i], q]));
  for (let i = 0; i < unique.length; i += 16) {
    const part = unique.slice(i, i + 16);
    serve(part.map((k) => byKey.get(k))).forEach((/** @type {any} */ res, j) => results.set(part[j], res));
  }
  /** @param {(r: typeof runs[number]) => boolean} keep */
  const figures = (keep) => {
    const t = [], p = [];
    runs.forEach((r, i) => {
      const res = results.get(keys[i]);
      if (!keep(r) || !res || res.error) return;
      t.push(res.ttft_ms.mean / r.measured.ttft - 1);
      p.push(res.tpot_ms.mean / r.measured.tpot - 1);
    });
    return { priced: t.length, ttft_mape: round2(mape(t)), ttft_bias: round2(bias(t)), tpot_mape: round2(mape(p)),
      tpot_bias: round2(bias(p)) };
  };
  return { name: alt.name, choice: alt.choice, all: figures(() => true),
    fit_part: figures((r) => r.subset.startsWith(FIT_PART)), held_out: figures((r) => !r.subset.startsWith(FIT_PART)) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // It takes no arguments; any (a --help, a flag meant for validate.mjs) gets the usage rather
  // than eight minutes of re-pricing and a rewritten docs/validation-alternatives.json.
  if (process.argv.length > 2) {
    const help = ['--help', '-h'].includes(process.argv[2]);
    (help ? console.log : console.error)('usage: node tools/validate-alternatives.mjs (no arguments): re-prices ' +
      `every public run under each alternative protocol and writes ${ALTERNATIVES_FILE}`);
    process.exit(help ? 0 : 2);
  }
  const runs = readRows().flatMap((row) => {
    const mapped = requestOf(row);
    return 'request' in mapped ? [{ subset: subsetOf(row), request: /** @type {Req} */ (mapped.request),
      measured: { ttft: Number(row.silicon_ttft_ms), tpot: Number(row.silicon_tpot_ms) } }] : [];
  });
  const out = [];
  for (const alt of ALTERNATIVES) {
    const started = Date.now();
    const row = priceUnder(runs, alt);
    out.push(row);
    console.log(`${alt.name}: TTFT MAPE ${row.all.ttft_mape}% (fit part ${row.fit_part.ttft_mape}%, held out ` +
      `${row.held_out.ttft_mape}%), TPOT MAPE ${row.all.tpot_mape}%, ${row.all.priced} priced; ` +
      `${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  writeFileSync(join(ROOT, ALTERNATIVES_FILE), `${JSON.stringify({
    generated_by: 'node tools/validate-alternatives.mjs', fit_part: FIT_PART, alternatives: out }, null, 1)}\n`);
}
