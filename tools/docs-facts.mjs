// SPDX-License-Identifier: Apache-2.0
// Generators of tools/docs-blocks.mjs for figures in sentences and examples: what the CLI
// answers for the page's default step, the conformance run, the catalogue's counts and
// names, and the accuracy summary that `npm run accuracy` writes (docs/accuracy.json).
import { CPU_ZERO, TARGET, errorStats, fitCpuParams, parseStepsCsv, rebuildStep } from '../web/calibration.js';
import { DENSE_PARTS } from '../web/kernel-parts.js';
import { code, count, int, list, pct, time, timeUs } from './docs-context.mjs';
import { CHAT_TEMPLATE_TOKENS, readRows, requestOf } from './validate-ledger.mjs';

/** @typedef {import('./docs-context.mjs').DocsContext} DocsContext */

const CALIBRATION = 'data/calibration/h100-vllm-steps-llama-2-70b-tp4.csv';

/** A JSON value on one line, spaced as people write it: { "a": 1, "b": [ 2 ] }. @param {unknown} v */
const compact = (v) => JSON.stringify(v, null, 1).replace(/\n\s*/g, ' ');

/**
 * An object with one top-level field per line; a long value is wrapped after its commas
 * (the objects shown hold no ", " inside strings), its lines aligned under its first.
 * @param {Record<string, unknown>} obj
 */
function fieldLines(obj, width = 88) {
  const lines = Object.entries(obj).map(([k, v]) => {
    const head = `  ${JSON.stringify(k)}: `;
    const out = [head];
    for (const piece of compact(v).split(/(?<=, )/)) {
      const last = out.length - 1;
      if (out[last].length + piece.length > width && out[last].trim()) out.push(' '.repeat(head.length + 2));
      out[out.length - 1] += piece;
    }
    return out.map((l) => l.trimEnd()).join('\n');
  });
  return `{\n${lines.join(',\n')}\n}`;
}

/** The page's default step in words: one 2,048-token prefill chunk beside 64 decodes (KV 512 to 4,544). */
function stepInWords(/** @type {any} */ state) {
  const parts = [];
  const prefill = /** @type {number[][]} */ (state.prefill);
  if (prefill.length === 1) {
    const [cached, fresh] = prefill[0];
    parts.push(`one ${int(fresh)}-token prefill chunk${cached ? ` after ${int(cached)} cached tokens` : ''}`);
  } else if (prefill.length) {
    parts.push(`${count(prefill.length)} prefill chunks (${int(prefill.reduce((s, [, n]) => s + n, 0))} new tokens)`);
  }
  const kv = /** @type {number[][]} */ (state.decode).map(([k]) => k);
  if (kv.length) {
    const lo = Math.min(...kv), hi = Math.max(...kv);
    parts.push(`${count(kv.length)} decode${kv.length === 1 ? '' : 's'} (KV ${lo === hi ? int(lo) : `${int(lo)} to ${
      int(hi)}`})`);
  }
  return parts.length ? list(parts, 'beside') : 'an empty step';
}

/**
 * The ledger's runs of one configuration (docs/validation.json): the first one's serve request with its
 * model config (tools/validate-ledger.mjs), its priced figures, and the measured mean TTFT over all.
 * @param {DocsContext} ctx @param {string} model @param {string} precision @param {string} gpu
 * @param {number} tp @param {number} isl @param {number} osl @param {number} c
 */
function ledgerExample(ctx, model, precision, gpu, tp, isl, osl, c) {
  const ledger = ctx.readJson('docs/validation.json');
  const runs = ledger.runs.filter((/** @type {any} */ r) => r.status === 'priced' &&
    r.subset === `${model} | ${gpu} | ${precision} | TP${tp}` &&
    r.request.workload.input_tokens === isl + CHAT_TEMPLATE_TOKENS &&
    r.request.workload.output_tokens === osl && r.request.workload.concurrency === c);
  if (!runs.length)
    throw new Error(`docs/validation.json has no ${model} ${precision} ${gpu} TP${tp} ${isl}+${osl} c${c}`);
  const row = readRows().find((w) => w.id === runs[0].id);
  const mapped = row && requestOf(row);
  if (!mapped || !('request' in mapped)) throw new Error(`${runs[0].id} has no request`);
  const { id: _id, ...request } = mapped.request;
  const ms = runs.map((/** @type {any} */ r) => r.silicon_ttft_ms / 1000);
  const lo = Math.min(...ms), hi = Math.max(...ms);
  const name = model.split('/')[1];
  return {
    request, run: runs[0],
    what: `${int(c)} clients of ${name} ${precision.toUpperCase()} at ${int(isl)} + ${int(osl)} tokens on ` +
      `${tp === 1 ? 'one' : count(tp)} ${gpu}${tp === 1 ? '' : 's'}`,
    measured: lo === hi ? time(lo) : `${time(lo)} to ${time(hi)} over ${count(runs.length)} runs`,
  };
}

/** The accuracy summary `npm run accuracy` wrote. @param {DocsContext} ctx */
const accuracy = (ctx) => ctx.readJson('docs/accuracy.json');

/** @type {Record<string, (ctx: DocsContext) => string>} */
/** docs/PLAN.md's first example: the issue's question over three GPUs at the prices given. */
const PLAN_EXAMPLE = {
  model: 'llama-3.1-70b-instruct',
  gpus: ['H100', 'H200', 'B200'],
  gpu_hour_usd: { H100: 2.5, H200: 3.5, B200: 5.5 },
  workload: { input_tokens: 1000, output_tokens: 300, request_rate: 2 },
  slo: { ttft_ms: 1000, tpot_ms: 50, percentile: 90 },
};

export const facts = {
  /** docs/PLAN.md's example: the command, and what `stepcalc plan` answers to it. */
  'plan-example': (ctx) => {
    const r = ctx.json(['plan', '-'], PLAN_EXAMPLE);
    if (r.error || !r.recommended) throw new Error(`the plan example has no answer: ${JSON.stringify(r.error)}`);
    // One field a line, spaced as a person writes JSON.
    const fields = Object.entries(PLAN_EXAMPLE).map(([k, v]) =>
      `"${k}": ${JSON.stringify(v).replace(/([,:])(?=["{\d])/g, '$1 ')}`);
    const last = fields.length - 1;
    const echo = fields.map((f, i) => `${i ? '       ' : "echo '{"}${f}${i < last ? ',' : "}' | build/stepcalc plan"}`);
    return ['```sh', ...echo, '```', '',
      `gives (${int(r.search.candidates)} candidates, ${int(r.search.simulations)} simulations) \`"summary": ` +
      `"${r.recommended.summary}"\` and \`${r.recommended.vllm_serve}\`. The figures are the estimate's, not ` +
      'measurements: each carries `validation`, the accuracy ledger\'s error on runs like it.'].join('\n');
  },

  /** The public conformance cases, every one passing (a failing case is an error, not a count). */
  'conformance-cases': (ctx) => {
    const out = ctx.cli(['conformance', 'tests/data/conformance-cases.json']);
    const m = /(\d+) passed, (\d+) failed/.exec(out);
    if (!m) throw new Error(`unexpected conformance output: ${out.slice(0, 200)}`);
    if (m[2] !== '0') throw new Error(`${m[2]} conformance cases fail`);
    return int(Number(m[1]));
  },

  /** The corrected mode's error against the reference's, from docs/accuracy.json. */
  'accuracy-corrected': (ctx) => {
    const a = accuracy(ctx);
    return `${int(a.steps)} real vLLM steps (${a.setup}): ${a.modes.corrected.mape.toFixed(2)}% mean absolute ` +
      `error against the reference's ${a.modes['blis-v2'].mape.toFixed(2)}%`;
  },

  /** Every GPU the core knows, by name. */
  'gpu-names': (ctx) => list(ctx.catalogue().gpu_specs.map((/** @type {any} */ g) => g.name)),

  /** The GPUs measured on vLLM tables of their own. */
  'measured-gpu-names': (ctx) => list(ctx.catalogue().gpu_specs.filter((/** @type {any} */ g) => !g.kernels_from)
    .map((/** @type {any} */ g) => g.name)),

  /** The GPUs with datasheet constants only, each with the GPU whose tables are scaled to it. */
  'scaled-gpu-names': (ctx) => list(ctx.catalogue().gpu_specs.filter((/** @type {any} */ g) => g.kernels_from)
    .map((/** @type {any} */ g) => `${g.name} (from ${g.kernels_from})`)),

  /** The `gpu` values a request may name, the default first. */
  'gpu-choices': (ctx) => {
    const c = ctx.catalogue();
    const others = c.gpu_specs.map((/** @type {any} */ g) => g.name).filter((/** @type {string} */ n) =>
      n !== c.request_defaults.gpu);
    return list([`${code(c.request_defaults.gpu)} (default)`, ...others.map(code)], 'or');
  },

  /** How many model presets the build carries (presets/models/). */
  'preset-count': (ctx) => int(ctx.presets().models.length),

  /** The README tour's first view: the page's default state priced by the CLI. */
  'tour-first-view': (ctx) => {
    const { state, request } = ctx.page();
    const r = ctx.price(request);
    const bound = r.bound === 'overhead' ? 'the CPU overhead alone (no GPU work)'
      : `the ${r.bound} phase (${r.phases[r.bound].bound_by}-bound)`;
    return `${code(state.model)} on ${state.gpu} at TP ${state.tp} in the ${code(r.mode)} mode, ` +
      `${stepInWords(state)}: **${int(r.step_time_us)} µs**, bound by ${bound}, of which ` +
      `${time(r.overhead_us * 1e-6)} is CPU overhead.`;
  },

  /** The page's line comparing its default mode with the reference, for the default step. */
  'page-reference-line': (ctx) => {
    const { request } = ctx.page();
    const shown = ctx.price(request, ['--detail', 'summary']);
    const reference = ctx.price({ ...request, mode: 'blis-v2' }, ['--detail', 'summary']);
    const ratio = shown.step_time_us / reference.step_time_us - 1;
    const diff = Math.abs(ratio) < 0.0005 ? 'the same' : `${pct(Math.abs(ratio))} ${ratio < 0 ? 'lower' : 'higher'}`;
    return `Reference model (blis-v2): ${timeUs(reference.step_time_us)}; ${shown.mode} is ${diff}.`;
  },

  /**
   * index.html's preloads of the kernel packs the page's default state prices with (its GPU's
   * default tables, the dense parts web/kernel-parts.js loads first), fetched beside the module
   * instead of after it.
   */
  'pack-preloads': (ctx) => {
    const { state } = ctx.page();
    if (state.mode !== 'measured') return '';
    const set = ctx.catalogue().kernels.find((/** @type {any} */ k) => k.gpu === state.gpu && k.default);
    return set.parts.filter((/** @type {any} */ p) => DENSE_PARTS.includes(p.name))
      .map((/** @type {any} */ p) => `<link rel="preload" href="wasm/dist/kernels/${p.file}" as="fetch" ` +
        'crossorigin="anonymous">').join('\n');
  },

  /** The compact link of the page's default state. */
  'page-default-link': (ctx) => `\`\`\`text\n#${ctx.page().hash}\n\`\`\``,

  /** A summary result: the page's default step at summary detail. */
  'result-summary-example': (ctx) => {
    const { request } = ctx.page();
    const r = ctx.price({ id: 'r1', ...request }, ['--detail', 'summary']);
    return `The page's default step (\`web/state.js\`) with \`"id": "r1"\`, \`stepcalc price --detail summary\`:\n\n` +
      `\`\`\`json\n${fieldLines(r)}\n\`\`\``;
  },

  /** The `corrected` object of a real corrected-mode result (a mixed step, so `fused` is set). */
  'corrected-result-example': (ctx) => {
    const request = { model: 'llama-2-70b-hf', tp: 4, mode: 'corrected', step: {
      prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 512 }],
      decode_requests: [{ progress_index: 700 }, { progress_index: 9000 }] } };
    const c = ctx.price(request).corrected;
    const fused = c.fused && { ...c.fused, gemms: [`${count(c.fused.gemms.length)} GEMMs as in phases`] };
    const { prefill_requests: prefill, decode_requests: decode } = request.step;
    return `\`stepcalc price\` of ${code(request.model)} at TP ${request.tp} in the \`corrected\` mode, with one ` +
      `${int(prefill[0].num_new_prefill_tokens)}-token prefill chunk and decodes at KV ` +
      `${list(decode.map((d) => int(d.progress_index)))}:\n\n\`\`\`json\n"corrected": ${fieldLines({ ...c, fused })}` +
      `\n\`\`\``;
  },

  /** How many switches and parameters the corrected mode has (the catalogue's). */
  'corrected-switch-count': (ctx) => count(ctx.catalogue().corrected.switches.length),
  'corrected-param-count': (ctx) => count(ctx.catalogue().corrected.params.length),

  /** The measured mode's two CPU terms in the core (a result's `measured.cpu`). */
  'measured-cpu-terms': (ctx) => {
    const cpu = ctx.price({ model: 'llama-3.1-8b-instruct', mode: 'measured', step: {
      decode_requests: [{ progress_index: 1 }] } }).measured.cpu;
    return `${int(cpu.step_us)} us per step and ${int(cpu.per_request_us)} us per request`;
  },

  /** stepcalc's KV-cache blocks for the public calibration run against the blocks vLLM logged there. */
  'serving-memory-check': (ctx) => {
    const { rows } = parseStepsCsv(ctx.read(CALIBRATION));
    const logged = [...new Set(rows.map((r) => Number(r['kv.blocks_total_gpu'])))];
    if (logged.length !== 1) throw new Error(`kv.blocks_total_gpu is not one value: ${logged.slice(0, 3)}`);
    const m = ctx.price({ model: 'llama-2-70b-hf', tp: 4, gpu: 'H100', step: {},
      engine: { max_num_batched_tokens: 2048, max_num_seqs: 128 } }).memory;
    const gib = (/** @type {number} */ b) => `${(b / 2 ** 30).toFixed(2)} GiB`;
    const error = m.kv_cache_blocks / logged[0] - 1;
    return `\`kv.blocks_total_gpu\` = ${int(logged[0])}. The formula gives ` +
      `**${int(m.kv_cache_blocks)} (${error >= 0 ? '+' : '−'}${pct(Math.abs(error))})**, with nothing fitted: ` +
      `weights ${gib(m.weights_bytes)}, activations ${gib(m.activation_bytes)}, NCCL ${gib(m.non_torch_bytes)}, ` +
      `budget ${gib(m.budget_bytes)}`;
  },

  /** The validation ledger at a glance (docs/validation.json): what it prices and its overall error. */
  'validation-headline': (ctx) => {
    const v = JSON.parse(ctx.read('docs/validation.json'));
    const priced = v.runs.filter((/** @type {any} */ r) => r.status === 'priced');
    const names = (/** @type {(r: any) => string} */ f) => [...new Set(priced.map(f))].sort();
    const gpus = names((r) => r.request.gpu), models = names((r) => r.request.model_name);
    const o = v.overall;
    const bar = (/** @type {string} */ what) => v.targets.bars.find((/** @type {any} */ b) => b.what === what);
    const ttft = bar('TTFT MAPE over the priced runs'), tpot = bar('TPOT MAPE over the priced runs');
    const met = ttft.met && tpot.met ? 'both met' : !ttft.met && !tpot.met ? 'neither met'
      : ttft.met ? 'the TTFT one met, the TPOT one not' : 'the TPOT one met, the TTFT one not';
    return `${int(o.priced)} of ${int(o.runs)} measured vLLM serving runs (${models.length} models on ` +
      `${list(gpus)}) priced: mean TTFT off by **${o.ttft_mape}%** (MAPE) and mean TPOT by **${o.tpot_mape}%** ` +
      `(targets ${ttft.bar.replace('<= ', '')} and ${tpot.bar.replace('<= ', '')}: ${met})`;
  },

  /** The validation ledger's protocol against its alternatives (docs/validation-alternatives.json). */
  'validation-protocol': (ctx) => {
    const alt = JSON.parse(ctx.read('docs/validation-alternatives.json'));
    const by = (/** @type {string} */ name) => {
      const a = alt.alternatives.find((/** @type {{name: string}} */ x) => x.name === name);
      if (!a) throw new Error(`docs/validation-alternatives.json has no "${name}"`);
      return a.all;
    };
    const t = (/** @type {string} */ name) => `${by(name).ttft_mape}%`;
    const chosen = by('chosen'), before = by('previous protocol');
    return `over its ${chosen.priced} priced runs, TTFT MAPE **${chosen.ttft_mape}%** and TPOT MAPE ` +
      `**${chosen.tpot_mape}%** (the previous protocol: ${before.ttft_mape}% and ${before.tpot_mape}%). One choice ` +
      `changed at a time, TTFT MAPE becomes ${t('KV cache as the checkpoint says')} with the KV cache the ` +
      `checkpoint declares, ${t('warm-up not drained')} with a warm-up the clients go straight on from, ` +
      `${t('18 x concurrency measured')} or ${t('50 x concurrency measured')} with 18 or 50 x concurrency ` +
      `measured requests, ${t('API server 5 ms per request')}, ${t('API server 20 ms per request')} or ` +
      `${t('API server 60 ms per request')} with an API server of 5, 20 or 60 ms per request, and ` +
      `${t('vLLM engine defaults')} or ${t('2,048 tokens a step')} with vLLM's own engine defaults (2,048 tokens a ` +
      `step and at most 128 running requests) or their token budget alone, and ${t('prompt of isl tokens')}, ` +
      `${t('prompt of isl + 1 tokens')} or ${t('prompt of isl + 32 tokens')} with prompts of exactly isl tokens, ` +
      `one token more or 32 more`;
  },

  /**
   * Why the fp8/fp4 rows get an FP8 KV cache: two runs that a 16-bit cache would preempt, each
   * served both ways, against their measured TTFTs (every run of that configuration).
   */
  'validation-kv-evidence': (ctx) => {
    const told = [
      ledgerExample(ctx, 'meta-llama/Llama-3.1-70B', 'nvfp4', 'B200', 1, 1024, 8192, 64),
      ledgerExample(ctx, 'MiniMaxAI/MiniMax-M2.5', 'fp8', 'B200', 2, 8192, 1024, 64),
    ].map((x) => {
      const { kv_cache_dtype: _kv, ...without } = x.request;
      const fp8 = ctx.json(['serve', '-'], x.request), bf16 = ctx.json(['serve', '-'], without);
      if (fp8.error || bf16.error) throw new Error(`serve refused ${x.what}`);
      return { ...x, fp8, bf16 };
    });
    const s = (/** @type {number} */ ms) => time(ms / 1000);
    const [a, b] = told;
    const sentence = (/** @type {typeof a} */ x) => `${x.what} preempt ${int(x.bf16.scheduler.preemptions)} ` +
      `times in the simulation and wait ${s(x.bf16.ttft_ms.mean)} for a first token (measured: ${x.measured})`;
    const fp8Preempts = [a, b].map((x) => x.fp8.scheduler.preemptions);
    return `${sentence(a)}, and ${sentence(b)}; with the FP8 cache ${fp8Preempts.every((n) => n === 0)
      ? 'neither preempts' : `they preempt ${list(fp8Preempts.map(int))} times`} and they wait ` +
      `${s(a.fp8.ttft_ms.mean)} and ${s(b.fp8.ttft_ms.mean)}`;
  },

  /** Runs that run out of KV even with the FP8 cache, and whose measured TTFTs show the queue too. */
  'validation-kv-queued': (ctx) => {
    const runs = [128, 256].map((c) => {
      const x = ledgerExample(ctx, 'MiniMaxAI/MiniMax-M2.5', 'fp8', 'B200', 2, 8192, 1024, c);
      const r = ctx.json(['serve', '-'], x.request);
      if (r.error || !(r.scheduler.preemptions > 0)) throw new Error(`${x.what} no longer preempts`);
      return { ...x, r };
    });
    return `MiniMax-M2.5 FP8 on two B200s at 8,192 + 1,024 tokens with ${list(runs.map((x) =>
      int(x.request.workload.concurrency)))} clients: ${list(runs.map((x) => x.measured))} measured, ` +
      `${list(runs.map((x) => time(x.r.ttft_ms.mean / 1000)))} simulated, after ` +
      `${list(runs.map((x) => int(x.r.scheduler.preemptions)))} preemptions`;
  },

  /** The lockstep example: short prompts at low concurrency, simulated against measured. */
  'validation-lockstep-example': (ctx) => {
    const xs = [1, 2].map((tp) => ledgerExample(ctx, 'meta-llama/Llama-3.1-70B', 'fp8', 'B200', tp, 1024, 1024, 8));
    return `Llama-3.1-70B FP8 on one or two B200s, 1,024 + 1,024 tokens at 8 clients: ` +
      `${list(xs.map((x) => time(x.run.ttft_ms / 1000)))} simulated, ${list(xs.map((x) => x.measured))} measured`;
  },

  /** What output lengths spread by 1% (a diagnostic) do to the fit part and the held-out runs. */
  'validation-desync-diagnostic': (ctx) => {
    const alt = JSON.parse(ctx.read('docs/validation-alternatives.json'));
    const by = (/** @type {string} */ name) => alt.alternatives.find((/** @type {{name: string}} */ x) =>
      x.name === name);
    const chosen = by('chosen'), spread = by('output lengths +-1% (diagnostic)');
    if (!chosen || !spread) throw new Error('docs/validation-alternatives.json lacks the chosen or the diagnostic row');
    const p = (/** @type {number} */ x) => `${Math.round(x)}%`;
    return `take the ${alt.fit_part} runs' TTFT error from ${p(chosen.fit_part.ttft_mape)} to ` +
      `${p(spread.fit_part.ttft_mape)}, but the other runs' from ${p(chosen.held_out.ttft_mape)} to ` +
      `${p(spread.held_out.ttft_mape)}, with a bias of ${p(spread.held_out.ttft_bias)}`;
  },

  /** Which table version the serving ledger finds closer, per GPU and figure (docs/kernel-versions.json). */
  'kernel-version-verdict': (ctx) => {
    const k = ctx.readJson('docs/kernel-versions.json');
    // A GPU no ledger run was measured on has no figures to weigh (H100-PCIe): said, not ranked.
    const measured = (/** @type {any} */ g) => g.versions.every((/** @type {any} */ v) =>
      typeof v.ttft_mape === 'number' && typeof v.tpot_mape === 'number');
    const gpus = k.gpus.filter(measured);
    const none = k.gpus.filter((/** @type {any} */ g) => !measured(g)).map((/** @type {any} */ g) => g.gpu);
    const parts = [];
    for (const figure of ['ttft', 'tpot']) {
      const closer = gpus.map((/** @type {any} */ g) => {
        const best = [...g.versions].sort((a, b) => a[`${figure}_mape`] - b[`${figure}_mape`])[0];
        return `${best.version.replace('vllm-', '')} on ${g.gpu}`;
      });
      parts.push(`${figure.toUpperCase()} is closer with ${list(closer)}`);
    }
    return parts.join('; ') + (none.length ? ` (no measured runs on ${list(none)})` : '');
  },

  /** The page's calibration panel on the bundled sample: its fit and the errors it shows. */
  'page-calibration-fit': (ctx) => {
    const { rows } = parseStepsCsv(ctx.read(CALIBRATION));
    const requests = rows.map((row) => rebuildStep(row));
    const measured = rows.map((r) => Number(r[TARGET]));
    const times = (/** @type {string} */ mode, /** @type {object | null} */ params) => {
      const batch = requests.map((r) => (params ? { ...r, corrected: { params } } : r));
      return ctx.json(['price', '--mode', mode, '--detail', 'summary', '-'], batch).map((/** @type {any} */ r) => {
        if (r.error) throw new Error(`${r.error.path}: ${r.error.message}`);
        return r.step_time_us;
      });
    };
    const base = times('corrected', CPU_ZERO);
    const raw = fitCpuParams(measured, base, requests);
    const round1 = (/** @type {number} */ x) => Math.round(x * 10) / 10;
    const fit = { cpu_step_us: round1(raw.cpu_step_us), cpu_per_request_us: round1(raw.cpu_per_request_us) };
    const mape = (/** @type {number[]} */ predicted) => `${errorStats(predicted, measured).mape.toFixed(2)}%`;
    const defaults = Object.fromEntries(ctx.catalogue().corrected.params.map((/** @type {any} */ p) =>
      [p.name, p.default]));
    return `On the bundled sample (${int(rows.length)} steps) it gives \`cpu_step_us=${fit.cpu_step_us}\`, ` +
      `\`cpu_per_request_us=${fit.cpu_per_request_us}\` (the shipped defaults are ${defaults.cpu_step_us} and ` +
      `${defaults.cpu_per_request_us}): MAPE ${mape(times('blis-v2', null))} (blis-v2), ` +
      `${mape(times('corrected', null))} (corrected, defaults), ${mape(times('corrected', fit))} (corrected, fitted).`;
  },
};
