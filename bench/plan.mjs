// SPDX-License-Identifier: Apache-2.0
// The planner's speed (issue 24): the question (Llama-3.1-70B, 2 req/s, 1,000 tokens
// in / 300 out, p90 TTFT <= 1 s, TPOT <= 50 ms) over the default search (every GPU with
// measured tables x TP 1, 2, 4, 8), natively through `stepcalc plan` (wall time, packs read
// from disk included) and in Wasm through calc.plan (tables loaded before timing). Prints the
// medians of a few runs; never a timed test. Alone: node bench/plan.mjs
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { timedCli } from './serving.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const planBenchRequest = {
  model: 'llama-3.1-70b-instruct',
  workload: { input_tokens: 1000, output_tokens: 300, request_rate: 2 },
  slo: { ttft_ms: 1000, tpot_ms: 50, percentile: 90 },
};
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];

// Issue 27: the longest plans the bounds admit (docs/INPUT.md, "Plans"): a MoE model's default
// search (answered), the same model's with 1,000 and 500 output tokens (refused at the work bound
// after running up to it), gpt-oss-20b's default search (answered nearest the bounds), and one of
// small batches (a low rate, long outputs: refused at the step bound; within the work bound alone it
// ran ~10 million steps): wall seconds of `stepcalc plan`, one run each.
/** The bound plans' question: `model`, `input` + `output` tokens at `rate` req/s, p90 TTFT <= 2 s, TPOT <= 50 ms. */
const question = (model, input, output, rate) => ({
  model, workload: { input_tokens: input, output_tokens: output, request_rate: rate },
  slo: { ttft_ms: 2000, tpot_ms: 50, percentile: 90 } });
export const boundPlanRequests = {
  'gpt-oss-120b, 1,000 + 300 tokens at 2 req/s (answered)': question('gpt-oss-120b', 1000, 300, 2),
  'gpt-oss-120b, 1,000 + 1,000 tokens at 2 req/s (refused at the bound)': question('gpt-oss-120b', 1000, 1000, 2),
  // More simulations to the bound than the 1,000-token search (~700 against ~400): the slowest per
  // unit of work of the searches refused at the work bound found (session 17).
  'gpt-oss-120b, 1,000 + 500 tokens at 2 req/s (refused at the bound)': question('gpt-oss-120b', 1000, 500, 2),
  // The preset whose default search (this question) comes nearest the bounds: 94% of the steps.
  'gpt-oss-20b, 1,000 + 300 tokens at 2 req/s (answered, nearest the bounds of the presets)':
    question('gpt-oss-20b', 1000, 300, 2),
  'gpt-oss-120b, 100 + 2,000 tokens at 0.05 req/s (small batches, refused at the step bound)':
    question('gpt-oss-120b', 100, 2000, 0.05),
};

/**
 * Wall seconds and outcome of `stepcalc plan` on boundPlanRequests, on the machine's cores (the
 * CLI's default) and on one thread (`--threads 1`): the same outcome, checked.
 */
export function runBoundPlans() {
  const out = {};
  for (const [label, request] of Object.entries(boundPlanRequests)) {
    const { seconds, result } = timedCli('plan', request);
    const one = timedCli('plan', request, undefined, ['--threads', '1']);
    if (JSON.stringify(one.result) !== JSON.stringify(result))
      throw new Error(`bench/plan: ${label}: one thread and the default threads differ`);
    const bound = /(\d+ engine steps|\d+ units)/.exec(result.error?.message ?? '')?.[1];
    out[label] = { seconds, one_thread_seconds: one.seconds, threads: os.availableParallelism(),
      outcome: result.error?.code ?? 'answered', simulations: result.search?.simulations, ...(bound ? { bound } : {}) };
  }
  return out;
}

/** Median wall ms of `stepcalc plan` and of calc.plan, with the search's counts. */
export async function runPlanBench({ repeats = 3 } = {}) {
  const cli = path.join(root, 'build/stepcalc');
  const input = JSON.stringify(planBenchRequest);
  const native = [], oneThread = [];
  let result;
  for (let i = 0; i < repeats; ++i) {
    let t = performance.now();
    result = JSON.parse(execFileSync(cli, ['plan', '-'], { input }).toString());
    native.push(performance.now() - t);
    t = performance.now();
    execFileSync(cli, ['plan', '--threads', '1', '-'], { input });
    oneThread.push(performance.now() - t);
  }
  const { load } = await import(pathToFileURL(path.join(root, 'wasm/stepcalc.js')).href);
  const calc = await load();
  await calc.plan({ ...planBenchRequest, search: { tp: [8] } }); // loads every GPU's tables
  const wasm = [];
  for (let i = 0; i < repeats; ++i) {
    const t = performance.now();
    await calc.plan(planBenchRequest);
    wasm.push(performance.now() - t);
  }
  return { nativeMs: median(native), nativeOneThreadMs: median(oneThread), threads: os.availableParallelism(),
    wasmMs: median(wasm), search: result.search,
    recommended: result.recommended?.summary ?? null };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await runPlanBench();
  console.log(`plan: ${r.search.candidates} candidates, ${r.search.simulations} simulations of ` +
    `${r.search.requests_per_simulation} requests; native ${r.nativeMs.toFixed(0)} ms, ` +
    `Wasm (node) ${r.wasmMs.toFixed(0)} ms; recommended: ${r.recommended}`);
}
