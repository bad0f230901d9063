// SPDX-License-Identifier: Apache-2.0
// Generators of tools/docs-blocks.mjs for tables and counts read from the catalogue, from
// results of the CLI and from the repository's data: the corrected mode's parameters, the
// GPUs and their measured kernel tables, the measured mode's figures from those tables,
// the size of the CSV sources of truth, and the bad-input contract (tests/data/bad-inputs.json).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { code, dataLines, int, table } from './docs-context.mjs';

/** @typedef {import('./docs-context.mjs').DocsContext} DocsContext */

/**
 * The CSV files under `dir`, recursively, sorted; `skip` names top-level folders left out.
 * @param {string} dir
 * @param {string[]} [skip]
 * @returns {string[]}
 */
function csvFiles(dir, skip = []) {
  return readdirSync(dir).sort().filter((name) => !skip.includes(name)).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return csvFiles(file);
    return name.endsWith('.csv') ? [file] : [];
  });
}

/** Files, data rows and bytes of `files`. @param {string[]} files */
function csvSize(files) {
  const texts = files.map((f) => readFileSync(f));
  return { files: files.length, rows: texts.reduce((s, t) => s + dataLines(t.toString('utf8')).length, 0),
    bytes: texts.reduce((s, t) => s + t.length, 0) };
}

/** A table cell: its text with `|` escaped. @param {string} text */
const cell = (text) => text.replace(/\|/g, '\\|');

/** @type {Record<string, (ctx: DocsContext) => string>} */
export const tables = {
  /** The corrected mode's parameters, from the catalogue. */
  'corrected-params': (ctx) => table(['name', 'default', 'unit', 'accepted', 'what it is'],
    ctx.catalogue().corrected.params.map((/** @type {any} */ p) =>
      [code(p.name), p.default, p.unit, `${p.min} .. ${int(p.max)}`, cell(p.description)]),
    [false, true]),

  /** Every GPU with its device name and measured kernel tables, from the catalogue. */
  'kernel-gpus': (ctx) => table(['GPU', 'device (as measured)', 'vLLM tables', 'default'],
    ctx.catalogue().gpu_specs.map((/** @type {any} */ g) =>
      [g.name, g.device,
        g.kernels_from ? `${g.kernels_from}'s, scaled (none measured on this GPU)` : g.kernels.join(', '),
        g.default_kernels])),

  /** The measured mode's constants from each GPU's tables, read from real results. */
  'measured-table-figures': (ctx) => {
    const c = ctx.catalogue();
    const model = 'llama-3.1-8b-instruct';
    const rows = c.kernels.map((/** @type {any} */ k) => {
      const r = ctx.price({ model, gpu: k.gpu, kernels: k.version, mode: 'measured', step: {
        decode_requests: [{ progress_index: 100 }] } });
      const f = r.measured.constants;
      const spec = c.gpu_specs.find((/** @type {any} */ g) => g.name === k.gpu);
      return [k.gpu, k.version, (spec.hbm_bw_bytes_per_s / 1e12).toFixed(2), (f.hbm_bytes_per_s / 1e12).toFixed(2),
        f.launch_floor_us.toFixed(2), f.decode_fixed_us.toFixed(1), f.prefill_fixed_us.toFixed(1)];
    }).sort((/** @type {string[]} */ a, /** @type {string[]} */ b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1));
    return `From \`measured.constants\` of a result (${code(model)}, TP 1; the attention fixed costs depend ` +
      `on the model's heads):\n\n${table(['GPU', 'kernels', 'datasheet HBM TB/s', 'effective TB/s',
      'launch floor us', 'decode fixed us', 'prefill fixed us'], rows, [false, false, true, true, true, true, true])}`;
  },

  /**
   * The physics checks of issue 22 on every GPU and version that measures the formats: how
   * much faster Llama-3.1-70B runs at TP 4 in FP8 than BF16 (and NVFP4 than FP8), priced.
   */
  'kernel-physics': (ctx) => {
    const c = ctx.catalogue();
    const model = 'llama-3.1-70b-instruct';
    const decode = { decode_requests: [{ progress_index: 1024 }] };
    const prefill = { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 4096 }] };
    const gpu = (/** @type {any} */ k, /** @type {string} */ q, /** @type {object} */ step) => ctx.price({ model,
      gpu: k.gpu, kernels: k.version, mode: 'measured', tp: 4, quantization: q, step }).measured.gpu_time_us;
    const ratio = (/** @type {any} */ k, /** @type {string} */ hi, /** @type {string} */ lo, /** @type {object} */ s) =>
      (gpu(k, hi, s) / gpu(k, lo, s)).toFixed(2);
    const rows = c.kernels.filter((/** @type {any} */ k) => k.coverage.gemm_dtypes.includes('fp8'))
      .map((/** @type {any} */ k) => {
        const fp4 = k.coverage.gemm_dtypes.includes('nvfp4');
        return [k.gpu, k.version + (k.default ? ' (default)' : ''), ratio(k, 'none', 'fp8', decode),
          ratio(k, 'none', 'fp8', prefill), fp4 ? ratio(k, 'fp8', 'nvfp4', decode) : '-',
          fp4 ? ratio(k, 'fp8', 'nvfp4', prefill) : '-'];
      }).sort((/** @type {string[]} */ a, /** @type {string[]} */ b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1));
    return `GPU time of ${code(model)} at TP 4, one step, measured mode: a batch-1 decode at 1,024 cached ` +
      'tokens and a 4,096-token prefill (the ratio of the higher precision\'s time to the lower\'s; `npm test` ' +
      `requires 1.3-2.5 and 1.2-2.2 for FP8 on H100's default tables, and NVFP4 faster than FP8 on B200):\n\n${
      table(['GPU', 'kernels', 'decode BF16 / FP8', 'prefill BF16 / FP8', 'decode FP8 / NVFP4',
        'prefill FP8 / NVFP4'], rows, [false, false, true, true, true, true])}`;
  },

  /**
   * Which kernel sets measure gated DeltaNet (the `gdn` part), and Qwen3-Next-80B-A3B priced on
   * each at TP 4 (one step's GPU time, measured mode): 64 decodes and one 8,192-token prefill.
   */
  'linear-attention-coverage': (ctx) => {
    const model = 'qwen3-next-80b-a3b-instruct';
    const ms = (/** @type {any} */ k, /** @type {object} */ step) =>
      (ctx.price({ model, gpu: k.gpu, kernels: k.version, mode: 'measured', tp: 4, step }).measured.gpu_time_us / 1000)
        .toFixed(2);
    const decode = { decode_requests: Array.from({ length: 64 }, () => ({ progress_index: 4096 })) };
    const prefill = { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 8192 }] };
    const rows = ctx.catalogue().kernels.map((/** @type {any} */ k) => [k.gpu,
      k.version + (k.default ? ' (default)' : ''), k.coverage.gdn ? 'yes' : 'no',
      k.coverage.gdn ? ms(k, decode) : '-', k.coverage.gdn ? ms(k, prefill) : '-'])
      .sort((/** @type {string[]} */ a, /** @type {string[]} */ b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1));
    return `The \`gdn\` part of each kernel set, and ${code(model)} priced with it at TP 4 (GPU time of one step, ` +
      'measured mode: 64 decodes at 4,096 cached tokens; one 8,192-token prefill; `-` where the tables measure no ' +
      `linear attention, which is refused):\n\n${table(['GPU', 'kernels', 'gated DeltaNet', 'decode x 64, ms',
      'prefill 8,192, ms'], rows, [false, false, false, true, true])}`;
  },

  /**
   * Which kernel sets measure DeepSeek sparse attention (the `dsa` part), and DeepSeek-V3.2 priced on
   * each at TP 8 (one step's GPU time, measured mode), beside DeepSeek-V3 (dense MLA, the same shape):
   * 64 decodes at 2,048 and at 65,536 cached tokens, and one 16,384-token prefill.
   */
  'sparse-attention-coverage': (ctx) => {
    const ms = (/** @type {string} */ model, /** @type {any} */ k, /** @type {object} */ step) =>
      (ctx.price({ model, gpu: k.gpu, kernels: k.version, mode: 'measured', tp: 8, step }).measured.gpu_time_us / 1000)
        .toFixed(2);
    const decode = (/** @type {number} */ kv) =>
      ({ decode_requests: Array.from({ length: 64 }, () => ({ progress_index: kv })) });
    const prefill = { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 16384 }] };
    const rows = ctx.catalogue().kernels.filter((/** @type {any} */ k) => k.coverage.dsa).map((/** @type {any} */ k) =>
      [k.gpu, k.version + (k.default ? ' (default)' : ''), ms('deepseek-v3.2', k, decode(2048)),
        ms('deepseek-v3.2', k, decode(65536)), ms('deepseek-v3', k, decode(65536)), ms('deepseek-v3.2', k, prefill),
        ms('deepseek-v3', k, prefill)])
      .sort((/** @type {string[]} */ a, /** @type {string[]} */ b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1));
    const none = ctx.catalogue().kernels.filter((/** @type {any} */ k) => !k.coverage.dsa)
      .map((/** @type {any} */ k) => `${k.gpu} ${k.version}`).sort().join(', ');
    return 'The kernel sets with the `dsa` part, and `deepseek-v3.2` priced with it at TP 8 beside `deepseek-v3` ' +
      '(dense MLA, the same shape otherwise) on the same tables (GPU time of one step, measured mode, ms: 64 decodes ' +
      `at 2,048 and 65,536 cached tokens; one 16,384-token prefill):\n\n${table(['GPU', 'kernels',
      'V3.2 decode x 64 at 2,048', 'V3.2 decode x 64 at 65,536', 'V3 decode x 64 at 65,536', 'V3.2 prefill 16,384',
      'V3 prefill 16,384'], rows, [false, false, true, true, true, true, true])}\n\nWithout the part (DeepSeek-V3.2 ` +
      `refused in measured): ${none}.`;
  },

  /**
   * Which kernel sets measure Kimi delta attention (the `kda` part), and Kimi-Linear-48B-A3B priced on
   * each at TP 2 (one step's GPU time, measured mode): 64 decodes at 4,096 and at 65,536 cached tokens,
   * one 8,192-token prefill, and the KDA layers' share of each; its KV cache at TP 2.
   */
  'kda-coverage': (ctx) => {
    const model = 'kimi-linear-48b-a3b';
    const run = (/** @type {any} */ k, /** @type {object} */ step) =>
      ctx.price({ model, gpu: k.gpu, kernels: k.version, mode: 'measured', tp: 2, step, detail: 'full' });
    const decode = (/** @type {number} */ kv) =>
      ({ decode_requests: Array.from({ length: 64 }, () => ({ progress_index: kv })) });
    const prefill = { prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 8192 }] };
    const kda = (/** @type {any} */ r) => r.measured.operators.filter((/** @type {any} */ o) =>
      String(o.name).startsWith('kda_') && o.kind === 'linear_attention').reduce((a, o) => a + o.time_us, 0);
    const cell = (/** @type {any} */ r) => `${(r.measured.gpu_time_us / 1000).toFixed(2)} (${
      (100 * kda(r) / r.measured.gpu_time_us).toFixed(0)}%)`;
    const sets = ctx.catalogue().kernels.filter((/** @type {any} */ k) => k.coverage.kda);
    const rows = sets.map((/** @type {any} */ k) => {
      const d = run(k, decode(4096));
      return [k.gpu, k.version + (k.default ? ' (default)' : ''), cell(d), cell(run(k, decode(65536))),
        cell(run(k, prefill)), int(d.memory.block_size), int(d.memory.kv_cache_tokens)];
    }).sort((/** @type {string[]} */ a, /** @type {string[]} */ b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1));
    const none = ctx.catalogue().kernels.filter((/** @type {any} */ k) => !k.coverage.kda)
      .map((/** @type {any} */ k) => `${k.gpu} ${k.version}`).sort().join(', ');
    return `The kernel sets with the \`kda\` part, and ${code(model)} priced with it at TP 2 (GPU time of one step, ` +
      'measured mode, ms, with the KDA kernels\' share: 64 decodes at 4,096 and 65,536 cached tokens; one ' +
      '8,192-token prefill; the hybrid cache\'s block size and KV tokens at vLLM\'s default utilization 0.9):\n\n' +
      `${table(['GPU', 'kernels', 'decode x 64 at 4,096', 'decode x 64 at 65,536', 'prefill 8,192', 'block size',
        'KV tokens'], rows, [false, false, true, true, true, true, true])}\n\nWithout the part (Kimi-Linear ` +
      `refused in measured): ${none}.`;
  },

  /** Qwen3-Next's KV cache and states as vLLM's hybrid allocator sizes them (docs/SERVING.md). */
  'linear-attention-memory': (ctx) => {
    const model = 'qwen3-next-80b-a3b-instruct';
    const gib = (/** @type {number} */ b) => (b / 2 ** 30).toFixed(1);
    const rows = [['H100', 4], ['H200', 2], ['B200', 1], ['B200', 2]].map(([gpu, tp]) => {
      const m = ctx.price({ model, gpu, tp, mode: 'measured', step: { decode_requests: [{ progress_index: 1 }] } })
        .memory;
      return [String(gpu), String(tp), gib(m.weights_bytes), (m.state_bytes_per_layer / 1024).toFixed(0),
        (m.state_bytes_per_request / 2 ** 20).toFixed(1), String(m.block_size), int(m.page_bytes),
        `${m.kv_full_groups} + ${m.kv_state_groups}`, int(m.kv_cache_blocks), int(m.kv_cache_tokens)];
    });
    return `${code(model)} at vLLM's default \`gpu_memory_utilization\` 0.9 (\`stepcalc price\`'s \`memory\`):\n\n${
      table(['GPU', 'TP', 'weights GiB', 'state KiB per layer', 'state MiB per request', 'block size', 'page bytes',
        'groups (attention + state)', 'blocks', 'KV tokens'], rows,
      [false, true, true, true, true, true, true, false, true, true])}`;
  },

  /** The ledger priced under each table version of a GPU (docs/kernel-versions.json). */
  'kernel-version-ledger': (ctx) => {
    const data = ctx.readJson('docs/kernel-versions.json');
    const pct = (/** @type {number | null} */ x) => (x === null ? '-' : `${x.toFixed(1)}%`);
    const rows = data.gpus.flatMap((/** @type {any} */ g) => g.versions.map((/** @type {any} */ v) => [g.gpu,
      v.version + (v.version === g.default ? ' (default)' : ''), `${v.priced} of ${g.runs}`, String(g.common),
      pct(v.ttft_mape), pct(v.tpot_mape)]));
    const every = data.gpus.every((/** @type {any} */ g) => g.runs < g.per_gpu);
    return `${every ? 'Every measured run of the ledger' : 'A spread of the ledger\'s measured runs'} on each GPU ` +
      `with several table versions, priced under each (${code('tools/kernel-versions.mjs')}, the ledger's ` +
      `protocol; the errors are over the runs every version prices):\n\n${
      table(['GPU', 'kernels', 'runs priced', 'compared', 'TTFT MAPE', 'TPOT MAPE'], rows,
        [false, false, true, true, true, true])}`;
  },

  /** The reference's CSV tables (bench_data/ without aic/): rows, files and bytes. */
  'reference-tables-csv': (ctx) => {
    const s = csvSize(csvFiles(path.join(ctx.root, 'bench_data'), ['aic']));
    return `${int(s.rows)} measured rows in ${int(s.files)} files, ${int(s.bytes)} bytes`;
  },

  /** Data rows of the measured kernel database's CSV files (bench_data/aic/). */
  'aic-csv-rows': (ctx) => int(csvSize(csvFiles(path.join(ctx.root, 'bench_data/aic'))).rows),

  /** NCCL's memory reserve per GPU at TP 1, 2, 4 and 8 (presets/gpus/, through the catalogue). */
  'nccl-reserves': (ctx) => {
    /** @type {Map<string, string[]>} */
    const groups = new Map();
    for (const g of ctx.catalogue().gpu_specs) {
      const mib = g.nccl_mem_bytes.map((/** @type {number} */ b) => int(b / 2 ** 20)).join(' / ');
      groups.set(mib, [...(groups.get(mib) ?? []), g.name]);
    }
    const each = [...groups].map(([mib, gpus]) => `${mib} MiB${groups.size > 1 ? ` (${gpus.join(', ')})` : ''}`);
    return `${each.join('; ')} at TP 1 / 2 / 4 / 8`;
  },

  /** Every entry of tests/data/bad-inputs.json: the error (or "priced") it must give, where. */
  'bad-inputs': (ctx) => table(['Input', 'Error', 'Path', 'Layers'],
    ctx.readJson('tests/data/bad-inputs.json').entries.map((/** @type {any} */ e) => [
      cell(e.name),
      e.code ? code(e.code) : e.warning ? `priced + ${code(e.warning)}` : 'priced',
      !e.code ? '' : e.path === '' ? '(document)' : code(cell(e.path)),
      e.layers ? e.layers.join(', ') : 'all',
    ])),
};
