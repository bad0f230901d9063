// SPDX-License-Identifier: Apache-2.0
// The public accuracy ledger's shared parts (issue #22): the measured vLLM runs of
// data/silicon/vllm-public.csv, each mapped to the `stepcalc serve` request that prices it
// under one protocol, priced with the native CLI, and the fixed spread `npm test` re-prices.
// Used by tools/validate.mjs (writes docs/validation.json, docs/VALIDATION.md) and
// tools/validate-check.mjs (the regression check). No dependencies beyond node.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DATA = 'data/silicon/vllm-public.csv';
/** The CSV as copied (data/silicon/README.md); a changed file is refused. */
export const DATA_SHA256 = '26c0938ac8ae3b9c84d574d6e3afce82e1848362df62f3ce659b8fc4356f30da';
export const LEDGER = 'docs/validation.json';
export const BASELINE = 'docs/validation-baseline.json';
/** Runs `npm test` re-prices and compares exactly with the ledger. */
export const SPREAD_SIZE = 60;

/** The protocol's measured waves (num_requests = warm-up + MEASURED_WAVES x concurrency). */
export const MEASURED_WAVES = 10;

/** The one protocol every row is priced under (written into the ledger as is). */
export const PROTOCOL = {
  command: 'stepcalc serve',
  mode: 'measured',
  loop: 'closed, at the row\'s concurrency',
  num_requests: '12 x concurrency: 2 x concurrency of warm-up, then 10 x concurrency measured (a run whose 10 ' +
    'waves need more simulation work than one simulation may take measures as many waves as fit, at least one, ' +
    'and says so: fewer_measured in validation.json)',
  warmup_requests: '2 x concurrency, drained (warmup_drain): simulated and left out of every figure; the measured ' +
    'requests start once the last warm-up request has finished, all clients at once, as aiperf waits for every ' +
    'warm-up response before profiling (docs/SERVING.md, "Warm-up")',
  lengths: 'fixed: isl + 8 input tokens (the isl-token prompt in the chat template of one user message, as ' +
    'aiperf\'s chat endpoint sends it; 8 is the fewest template tokens of the six models\', Qwen3\'s), osl output ' +
    'tokens (docs/SERVING.md, "The validation protocol")',
  kv_cache: 'FP8 (kv_cache_dtype fp8) for the rows whose precision column is fp8 or fp4, as the checkpoint says ' +
    'otherwise (docs/SERVING.md, "The validation protocol")',
  engine: 'vLLM\'s defaults on the GPU (docs/SERVING.md)',
  kernels: 'the GPU\'s default measured tables (docs/KERNELS.md), whatever the row\'s vLLM version',
  seed: 1,
  compared: 'mean TTFT and mean TPOT; error = (predicted - measured) / measured',
  fitted: 'the API-server constant (api_overhead_ms) was scanned on the Llama-3.1-70B rows (the declared fit part) ' +
    'and is 0 ms: 5, 20 and 60 ms each raised their TTFT error (docs/VALIDATION.md, "Why this protocol"); the ' +
    'measured mode\'s two CPU terms were fitted on the Llama-2-70B H100 calibration steps (docs/ACCURACY.md); every ' +
    'other run is held out',
};

/**
 * The tokens a chat template adds around a prompt of one user message, which the ledger adds to every
 * row's isl. The runs' benchmark (aiperf, whose endpoint type AIConfigurator's generated benchmark sets
 * to `chat`, data/silicon/README.md) makes a prompt of isl tokens and sends it as a chat message; the
 * server applies the model's chat template, so the engine prefills more than isl. The fewest of the six
 * models' templates is Qwen3's: `<|im_start|>`, `user`, a newline before the message, `<|im_end|>`, a
 * newline, `<|im_start|>`, `assistant`, a newline after it, 8 tokens; templates with a default system
 * prompt (Llama 3.1's dates, gpt-oss's harmony header) add more, which the ledger does not guess.
 */
export const CHAT_TEMPLATE_TOKENS = 8;

/**
 * The CSV's `system` (lower-cased) -> stepcalc GPU: every GPU preset's `aic_system` (AIConfigurator's
 * name, `h100_sxm`) and its own name (`h100`, `rtx-pro-6000`), so that one's own runs may name either.
 */
const GPUS = /** @type {Record<string, string>} */ (Object.fromEntries(
  readdirSync(join(ROOT, 'presets', 'gpus')).filter((f) => f.endsWith('.json')).flatMap((f) => {
    const g = JSON.parse(readFileSync(join(ROOT, 'presets', 'gpus', f), 'utf8'));
    return [[g.aic_system, g.name], [g.name.toLowerCase(), g.name]];
  })));
/** @param {Row} row */
const gpuOf = (row) => GPUS[(row.system ?? '').trim().toLowerCase()];
/** CSV gemm_quant_mode -> request quantization. */
const QUANT = /** @type {Record<string, string>} */ ({
  '': 'none', bf16: 'none', float16: 'none', fp8: 'fp8', fp8_block: 'fp8', nvfp4: 'nvfp4', mxfp4: 'mxfp4',
  w4a16_mxfp4: 'mxfp4', int4_wo: 'int4', w4a16: 'int4',
});
/**
 * gemm_quant_mode and moe_quant_mode, as request values, that differ as labels yet name one request
 * for a checkpoint whose config says MXFP4 (gpt-oss): AIConfigurator calls its format nvfp4, and its
 * Hopper experts w4a16_mxfp4.
 */
const SAME_WHEN_MAPPED = new Set(['nvfp4 mxfp4', 'mxfp4 nvfp4']);
/**
 * CSV precision values whose runs cache K and V in FP8: NVIDIA's ModelOpt checkpoints of these runs declare
 * kv_cache_quant_algo FP8 in hf_quant_config.json (data/silicon/model_configs/), which vLLM applies with
 * --kv-cache-dtype auto since PR #29980, and the runs themselves held more KV than a 16-bit cache could
 * (docs/SERVING.md, "The validation protocol"). Sent as kv_cache_dtype, so checkpoints without such a file
 * (MiniMax-M2.5's own FP8) are priced the same way.
 */
const FP8_KV_PRECISIONS = new Set(['fp8', 'fp4']);
/**
 * HF id -> the shipped config (data/silicon/model_configs/) when no preset matches; by the
 * row's quantization (its gemm_quant_mode mapped) where the measured runs served a quantised checkpoint of the model
 * (NVIDIA's ModelOpt FP8/NVFP4 checkpoints: their config and hf_quant_config.json, which
 * say which modules are quantised and that the KV cache is FP8). Llama-3.1-70B NVFP4 has no
 * shipped checkpoint config: the BF16 config with quantization nvfp4 (every linear layer).
 */
const CONFIGS = /** @type {Record<string, string>} */ ({
  'MiniMaxAI/MiniMax-M2.5': 'MiniMaxAI--MiniMax-M2.5_config.json',
  'MiniMaxAI/MiniMax-M2.5 nvfp4': 'nvidia--MiniMax-M2.5-NVFP4_config.json',
  'Qwen/Qwen3-235B-A22B-FP8': 'Qwen--Qwen3-235B-A22B-FP8_config.json',
  'Qwen/Qwen3-32B': 'Qwen--Qwen3-32B_config.json',
  'meta-llama/Llama-3.1-70B': 'meta-llama--Meta-Llama-3.1-70B_config.json',
  'meta-llama/Llama-3.1-70B fp8': 'nvidia--Llama-3.1-70B-Instruct-FP8_config.json',
  // Shipped with the source's configs though no public run is of it (runs kept aside may be).
  'meta-llama/Llama-3.1-8B': 'meta-llama--Meta-Llama-3.1-8B_config.json',
  'moonshotai/Kimi-K2.5': 'moonshotai--Kimi-K2.5_config.json',
  'moonshotai/Kimi-K2.5 nvfp4': 'nvidia--Kimi-K2.5-NVFP4_config.json',
  'openai/gpt-oss-120b': 'openai--gpt-oss-120b_config.json',
});

/** @typedef {Record<string, string>} Row */
/**
 * @typedef {{id: string, subset: string, status: 'priced' | 'unsupported', reason?: string,
 *   request: Record<string, unknown> | null, ttft_ms: number | null, tpot_ms: number | null,
 *   silicon_ttft_ms: number, silicon_tpot_ms: number, cause_facts?: Record<string, unknown>, cause?: string,
 *   model_file?: string, fewer_measured?: {requests: number, why: string}}} Run
 */

/** @param {string} file */
export const readText = (file) => readFileSync(join(ROOT, file), 'utf8');

/**
 * The records of a CSV text (RFC 4180: fields separated by commas, a field in double quotes may hold
 * commas, line breaks and doubled quotes; records end with LF or CR LF); blank lines are skipped. A
 * quote left open is an error naming the record it opened in.
 * @param {string} text @param {string} name for errors @returns {string[][]}
 */
export function parseCsv(text, name) {
  /** @type {string[][]} */
  const records = [];
  let record = /** @type {string[]} */ ([]), field = '', quoted = false, opened = 0, line = 1;
  const end = () => {
    record.push(field);
    if (record.length > 1 || record[0].trim() !== '') records.push(record);
    record = [], field = '';
  };
  for (let i = 0; i < text.length; ++i) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') field += '"', ++i;
      else if (ch === '"') quoted = false;
      else field += ch, line += ch === '\n' ? 1 : 0;
    } else if (ch === '"' && field === '') {
      quoted = true, opened = line;
    } else if (ch === ',') {
      record.push(field), field = '';
    } else if (ch === '\n' || (ch === '\r' && text[i + 1] === '\n')) {
      if (ch === '\r') ++i;
      end(), ++line;
    } else {
      field += ch;
    }
  }
  if (quoted) throw new Error(`${name}: line ${opened} opens a quoted field that never closes`);
  if (field !== '' || record.length) end();
  return records;
}

/**
 * The rows of the public runs (DATA, whose copy is checked by its SHA-256) or of another CSV
 * in its columns (`file`: a path from the working directory; fields may be quoted, parseCsv; a row
 * with another number of cells than the header is refused). A CSV without the added `concurrency`
 * column gets it as DATA did:
 * `silicon_data_source`'s `silicon_concurrency=`, else `batch_size` (x `attention_dp_size`: clientsOfBatch).
 * @param {string} [file] @returns {Row[]}
 */
export function readRows(file) {
  const name = file ?? DATA;
  const text = file === undefined ? readText(DATA) : readFileSync(file, 'utf8');
  if (file === undefined) {
    const sha = createHash('sha256').update(text).digest('hex');
    if (sha !== DATA_SHA256)
      throw new Error(`${DATA}: SHA-256 ${sha}, expected ${DATA_SHA256} (data/silicon/README.md)`);
  }
  const [head = [], ...lines] = parseCsv(text.replace(/^\uFEFF/, ''), name);
  const names = head.map((h) => h.trim());
  for (const column of ['id', 'model_path', 'system', 'isl', 'osl', 'silicon_ttft_ms', 'silicon_tpot_ms'])
    if (!names.includes(column)) throw new Error(`${name}: no column ${column} (data/silicon/README.md lists them)`);
  return lines.map((cells, i) => {
    if (cells.length !== names.length)
      throw new Error(`${name}: row ${i + 2} has ${cells.length} cells, the header ${names.length}`);
    const row = Object.fromEntries(cells.map((v, j) => [names[j], v]));
    if (!names.includes('concurrency'))
      row.concurrency = /silicon_concurrency=(\d+)/.exec(row.silicon_data_source ?? '')?.[1] ?? clientsOfBatch(row);
    return row;
  });
}

/**
 * The clients of a row that records only AIConfigurator's `batch_size`, which counts one attention
 * data-parallel rank's requests: batch_size x attention_dp_size (every public row with both columns and
 * `silicon_concurrency=` agrees); '' without a batch size.
 * @param {Row} row
 */
export function clientsOfBatch(row) {
  const batch = Number(row.batch_size), dp = Number(row.attention_dp_size || 1);
  return (row.batch_size ?? '') === '' || !Number.isFinite(batch) || !(dp >= 1) ? (row.batch_size ?? '')
    : String(batch * dp);
}

/** The presets the core ships, by name. @returns {Set<string>} */
function presetNames() {
  const out = JSON.parse(run(['presets'], '').stdout);
  return new Set(out.models.map((/** @type {{name: string}} */ m) => m.name));
}

let presets = /** @type {Set<string> | null} */ (null);

/** Where the public runs' configs are (data/silicon/README.md). */
export const SHIPPED_CONFIGS = join(ROOT, 'data', 'silicon', 'model_configs');
/** The name of NVIDIA's ModelOpt checkpoint of a model, by the row's quantization (nvidia/<name>-FP8). */
const MODELOPT_SUFFIX = /** @type {Record<string, string>} */ ({ fp8: 'FP8', nvfp4: 'NVFP4' });

/**
 * The config files a row's model may have under the source's naming (its model_configs/): the
 * quantised checkpoint NVIDIA published (`nvidia--<name>-FP8_config.json`, `-NVFP4`) where the
 * row runs that precision, and the model's own (`<org>--<name>_config.json`).
 * @param {Row} row @returns {{checkpoint: string[], base: string[]}}
 */
function configNames(row) {
  const [org, ...rest] = row.model_path.split('/');
  const name = rest.join('--');
  const suffix = MODELOPT_SUFFIX[QUANT[row.gemm_quant_mode] ?? ''];
  return {
    checkpoint: suffix && name ? [`nvidia--${name}-${suffix}_config.json`] : [],
    base: name ? [`${org}--${name}_config.json`] : [],
  };
}

/**
 * The first of `names` in the first of `dirs` that has it, as a path.
 * @param {string[]} dirs @param {string[]} names
 */
const findConfig = (dirs, names) => {
  for (const dir of dirs) for (const name of names) if (existsSync(join(dir, name))) return join(dir, name);
  return undefined;
};

/**
 * The model of a row: a quantised checkpoint's config where the row runs one (the ledger's map,
 * else by the source's naming in `dirs`), else the preset whose name is the HF id's last segment
 * (as the core matches ids), else the model's config (the map, else by name in `dirs`). A config
 * without a dtype gets bfloat16 (the unquantized dtype of these checkpoints; their configs leave it out).
 * @param {Row} row @param {string[]} dirs the shipped configs' directory, then the caller's
 */
function modelOf(row, dirs) {
  presets ??= presetNames();
  const name = row.model_path.split('/').pop()?.toLowerCase() ?? '';
  const names = configNames(row);
  const mapped = (/** @type {string | undefined} */ f) => (f ? join(SHIPPED_CONFIGS, f) : undefined);
  const checkpoint = mapped(CONFIGS[`${row.model_path} ${QUANT[row.gemm_quant_mode] ?? row.gemm_quant_mode}`]) ??
    findConfig(dirs, names.checkpoint);
  if (presets.has(name) && !checkpoint) return { model: name, file: undefined };
  const path = checkpoint ?? mapped(CONFIGS[row.model_path]) ?? findConfig(dirs, names.base);
  if (!path) return null;
  const file = basename(path);
  const config = JSON.parse(readFileSync(path, 'utf8'));
  if (config.torch_dtype === undefined && config.dtype === undefined && config.text_config === undefined)
    config.torch_dtype = 'bfloat16';
  // ModelOpt keeps its quantisation in hf_quant_config.json; vLLM reads it as quant_method "modelopt".
  const hfQuant = path.replace(/_config\.json$/, '_hf_quant_config.json');
  if (existsSync(hfQuant)) {
    // {producer, quantization: {quant_algo, kv_cache_quant_algo, ...}}
    const q = JSON.parse(readFileSync(hfQuant, 'utf8'));
    config.quantization_config = { quant_method: 'modelopt', ...(q.quantization ?? q) };
  }
  return { model: config, file };
}

/**
 * A row's layout as the request's tp, ep and dp. AIConfigurator's layouts keep tp x attention
 * DP = moe_tp x moe_ep; a row that leaves attention_dp_size empty while its MoE spans more
 * GPUs than tp_size (Qwen3-235B on H200: tp 1, moe_tp 2) ran that many data-parallel ranks,
 * the experts sliced over them as vLLM does without --enable-expert-parallel.
 * @param {Row} row
 */
export function layoutOf(row) {
  const tp = Number(row.tp_size || 1), ep = Number(row.moe_ep_size || 1);
  if (row.attention_dp_size !== '' && row.attention_dp_size !== undefined)
    return { tp, ep, dp: Number(row.attention_dp_size || 1) };
  const moeGpus = Number(row.moe_tp_size || 1) * ep;
  return { tp, ep, dp: moeGpus > tp && moeGpus % tp === 0 ? moeGpus / tp : 1 };
}

/** The subset a row belongs to: model x GPU x precision x layout. @param {Row} row */
export function subsetOf(row) {
  const { ep, dp } = layoutOf(row);
  const layout = `TP${row.tp_size || '?'}` + (ep > 1 ? ` EP${ep}` : '') + (dp > 1 ? ` DP${dp}` : '');
  // AIConfigurator labels gpt-oss's MXFP4 checkpoint nvfp4; the subset names what runs.
  const precision = row.model_path.startsWith('openai/gpt-oss') ? 'mxfp4'
    : expertsOnly(row) || row.gemm_quant_mode || 'bf16';
  const gpu = gpuOf(row) ?? row.system;
  const mode = modeOf(row);
  return `${row.model_path} | ${gpu} | ${precision} | ${mode === 'agg' ? layout : mode}`;
}

/** gemm_quant_mode labels of 16-bit GEMMs. */
const SIXTEEN_BIT = new Set(['', 'bf16', 'float16']);

/**
 * Where a row's labels differ: its moe_quant_mode when the GEMMs are 16-bit and only the experts are
 * quantised (a checkpoint such as gpt-oss's or Kimi-K2.5's INT4 may be labelled so; priced only if the
 * checkpoint's config says the same, requestOf), null when they differ otherwise; undefined when they agree.
 * @param {Row} row @returns {string | null | undefined}
 */
function expertsOnly(row) {
  const asRequest = (/** @type {string} */ label) => QUANT[label] ?? label;
  if (!row.moe_quant_mode || asRequest(row.moe_quant_mode) === asRequest(row.gemm_quant_mode ?? '')) return undefined;
  const moe = asRequest(row.moe_quant_mode);
  return SIXTEEN_BIT.has(row.gemm_quant_mode ?? '') && moe !== 'none' && QUANT[row.moe_quant_mode] !== undefined
    ? row.moe_quant_mode : null;
}

/**
 * The format a checkpoint's config quantises its weights in, as a request's `quantization`
 * (mxfp4, int4, nvfp4, fp8), or undefined.
 * @param {Record<string, any>} config
 */
function checkpointFormat(config) {
  const q = config.quantization_config ?? config.text_config?.quantization_config;
  if (!q) return undefined;
  if (q.quant_method === 'mxfp4' || q.quant_method === 'fp8') return q.quant_method;
  if (q.quant_method === 'modelopt') return { NVFP4: 'nvfp4', FP8: 'fp8' }[String(q.quant_algo)];
  const w = Object.values(q.config_groups ?? {})[0]?.weights;  // compressed-tensors
  if (w?.num_bits === 4) return w.type === 'int' ? 'int4' : w.type === 'float' ? 'nvfp4' : undefined;
  return w?.num_bits === 8 && w.type === 'float' ? 'fp8' : undefined;
}

/** A row's engine mode: `agg` (one engine), `disagg`, ...; a CSV without the column, or an empty cell: `agg`. */
const modeOf = (/** @type {Row} */ row) => row.mode || 'agg';

/**
 * The serve request of a row under PROTOCOL, or the reason the tool cannot even write one.
 * `configs`: more directories of model configs, searched after the shipped one for a model
 * neither the ledger's map nor a preset has (the source's naming: `<org>--<name>_config.json`).
 * @param {Row} row @param {{configs?: string[]}} [options]
 * @returns {{request: Record<string, any>, model_file?: string} | {reason: string}}
 */
export function requestOf(row, options = {}) {
  for (const column of ['silicon_ttft_ms', 'silicon_tpot_ms']) {
    const measured = Number(row[column]);
    if ((row[column] ?? '') === '' || !Number.isFinite(measured) || measured <= 0)
      return { reason: `${column} ${JSON.stringify(row[column] ?? '')}: no measured time to compare with` };
  }
  const mode = modeOf(row);
  if (mode === 'disagg')
    return { reason: 'mode disagg: disaggregated prefill and decode engines are not simulated (one engine only)' };
  if (mode !== 'agg') return { reason: `mode ${mode}: neither agg (one engine) nor disagg` };
  if (row.backend && row.backend !== 'vllm') return { reason: `backend ${row.backend}: stepcalc prices vLLM engines` };
  if (Number(row.pp_size || 1) > 1)
    return { reason: `pp_size ${row.pp_size}: pipeline parallelism is not simulated (one stage per engine)` };
  // Labels of one format (fp8 and fp8_block, say) are the same request; compared as mapped.
  const differs = `moe_quant_mode ${row.moe_quant_mode} differs from gemm_quant_mode ` +
    `${row.gemm_quant_mode || '(none)'}: a request runs one quantization, or its checkpoint's own`;
  const experts = expertsOnly(row);
  const labels = `${QUANT[row.gemm_quant_mode ?? ''] ?? ''} ${QUANT[row.moe_quant_mode] ?? ''}`;
  if (experts === null && !SAME_WHEN_MAPPED.has(labels)) return { reason: differs };
  for (const column of ['isl', 'osl', 'concurrency']) {
    const n = wholeCell(row, column, 1);
    if (typeof n !== 'number') return n;
  }
  const gpu = gpuOf(row);
  if (!gpu) return { reason: `system ${row.system} is not a GPU stepcalc knows` };
  const dirs = [SHIPPED_CONFIGS, ...(options.configs ?? [])];
  const model = modelOf(row, dirs);
  if (!model) {
    const names = configNames(row);
    const where = dirs.map((d) => (d === SHIPPED_CONFIGS ? 'data/silicon/model_configs/' : d)).join(', ');
    return { reason: `no preset or config for ${row.model_path}: looked for ` +
      `${[...names.checkpoint, ...names.base].join(' or ') || 'a config'} in ${where}` };
  }
  let quantization = QUANT[experts ?? row.gemm_quant_mode ?? ''];
  if (quantization === undefined) return { reason: `gemm_quant_mode ${row.gemm_quant_mode} has no request value` };
  // AIConfigurator labels gpt-oss's MXFP4 checkpoint nvfp4; the checkpoint says what runs.
  const config = typeof model.model === 'object' ? model.model
    : JSON.parse(readText(`presets/models/${model.model}.json`));
  const quant = config.quantization_config?.quant_method;
  if (quantization === 'nvfp4' && quant === 'mxfp4') quantization = 'mxfp4';
  // Labels that differ (nvfp4 GEMMs, w4a16_mxfp4 experts) are one request only where the checkpoint makes them so.
  if (experts === null && quant !== 'mxfp4') return { reason: differs };
  // 16-bit GEMMs beside quantised experts: the checkpoint's own split, when its config quantises in that format.
  if (experts !== undefined && checkpointFormat(config) !== quantization) return { reason: differs };
  const own = ownProtocol(row);
  if ('reason' in own) return own;
  const c = Number(row.concurrency);
  const kv = own.kv_cache_dtype ?? (FP8_KV_PRECISIONS.has(row.precision) ? 'fp8' : undefined);
  const warmup = own.warmup_requests ?? 2 * c;
  const request = {
    id: row.id, model: model.model, model_name: row.model_path, gpu, mode: PROTOCOL.mode,
    ...layoutOf(row),
    quantization, ...(kv !== undefined ? { kv_cache_dtype: kv } : {}),
    workload: {
      input_tokens: Number(row.isl) + (own.endpoint_type === 'completions' ? 0 : CHAT_TEMPLATE_TOKENS),
      output_tokens: Number(row.osl), concurrency: c,
      num_requests: warmup + (own.measured_requests ?? MEASURED_WAVES * c), warmup_requests: warmup, warmup_drain: true,
      seed: PROTOCOL.seed,
    },
    ...(own.engine ? { engine: own.engine } : {}),
  };
  return { request, model_file: model.file };
}

/**
 * Columns a CSV of one's own runs may add to say how they were measured, each overriding the
 * protocol for its row where the cell is not empty (the public CSV has none of them):
 * the benchmark's `measured_requests` (its request count, after the warm-up) and
 * `warmup_requests`, `endpoint_type` (`chat`: the prompt in a chat template, as the protocol;
 * `completions`: isl tokens exactly), the server's `kv_cache_dtype` and its engine flags
 * `max_num_seqs`, `max_num_batched_tokens`, `gpu_memory_utilization`.
 */
export const PROTOCOL_COLUMNS = ['measured_requests', 'warmup_requests', 'endpoint_type', 'kv_cache_dtype',
  'max_num_seqs', 'max_num_batched_tokens', 'gpu_memory_utilization'];

/**
 * A cell as a whole number of at least `least`, or the reason naming its column (an empty cell is not one).
 * @param {Row} row @param {string} column @param {number} least @returns {number | {reason: string}}
 */
function wholeCell(row, column, least) {
  const n = Number((row[column] ?? '').trim() || NaN);
  return Number.isInteger(n) && n >= least ? n
    : { reason: `${column} ${JSON.stringify(row[column] ?? '')}: not a whole number of at least ${least}` };
}

/**
 * A row's own protocol columns (PROTOCOL_COLUMNS) as request values, or the reason one cannot be read.
 * @param {Row} row
 * @returns {{measured_requests?: number, warmup_requests?: number, endpoint_type?: string,
 *   kv_cache_dtype?: string, engine?: Record<string, number>} | {reason: string}}
 */
function ownProtocol(row) {
  /** @type {Record<string, any>} */
  const out = {};
  const cell = (/** @type {string} */ column) => (row[column] ?? '').trim();
  const bad = (/** @type {string} */ column, /** @type {string} */ what) =>
    ({ reason: `${column} ${JSON.stringify(row[column])}: ${what}` });
  for (const column of ['measured_requests', 'warmup_requests', 'max_num_seqs', 'max_num_batched_tokens']) {
    if (cell(column) === '') continue;
    const n = wholeCell(row, column, column === 'warmup_requests' ? 0 : 1);
    if (typeof n !== 'number') return n;
    if (column.startsWith('max_')) (out.engine ??= {})[column] = n;
    else out[column] = n;
  }
  if (cell('gpu_memory_utilization') !== '') {
    const u = Number(cell('gpu_memory_utilization'));
    if (!(u > 0 && u <= 1)) return bad('gpu_memory_utilization', 'not a fraction in (0, 1]');
    (out.engine ??= {}).gpu_memory_utilization = u;
  }
  if (cell('endpoint_type') !== '') {
    if (!['chat', 'completions'].includes(cell('endpoint_type')))
      return bad('endpoint_type', 'not chat or completions');
    out.endpoint_type = cell('endpoint_type');
  }
  if (cell('kv_cache_dtype') !== '') out.kv_cache_dtype = cell('kv_cache_dtype');  // the core checks the name
  return out;
}

/** JSON with every object's keys sorted: the same for equal values built in any order. @param {unknown} x */
const canonical = (x) => JSON.stringify(x, (_k, v) => (v && typeof v === 'object' && !Array.isArray(v)
  ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));

/**
 * The runs of a ledger whose stored request is not the one the protocol now writes for its row: a
 * protocol or mapping edit without `npm run validate`. Their ids; a run missing from `rows` is one.
 * @param {{runs: {id: string, request: any}[], models?: Record<string, unknown>}} ledger @param {Row[]} rows
 */
export function staleRequests(ledger, rows) {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ledger.runs.filter((r) => {
    if (!r.request) return false;
    const row = byId.get(r.id);
    const mapped = row && requestOf(row);
    if (!mapped || !('request' in mapped)) return true;
    const file = r.request.model?.$model;
    const stored = file ? { ...r.request, model: ledger.models?.[file] } : r.request;
    return canonical(stored) !== canonical(mapped.request);
  }).map((r) => r.id);
}

/** @param {string[]} args @param {string} input */
export function run(args, input) {
  const cli = process.env.STEPCALC_CLI || join(ROOT, 'build', 'stepcalc');
  const r = spawnSync(cli, args, { input, maxBuffer: 1 << 28, encoding: 'utf8' });
  if (r.error) throw new Error(`cannot run ${cli}: ${r.error.message} (build it first: bash scripts/build.sh)`);
  return r;
}

/**
 * Prices requests with `stepcalc serve`, one call each (the requests of one document share
 * one bound on simulation work, docs/INPUT.md); each result or error in its slot.
 * @param {object[]} requests
 */
export function serve(requests) {
  return requests.map((request) => JSON.parse(run(['serve', '-'], JSON.stringify(request)).stdout));
}

/**
 * Prices every row: a row the tool cannot map or the core refuses is `unsupported` with the
 * reason (the core's error as `code at path: message`); never a guess.
 * @param {Row[]} rows @param {(done: number) => void} [progress]
 * @param {{configs?: string[]}} [options] as requestOf's @returns {Run[]}
 */
export function priceRows(rows, progress, options = {}) {
  const runs = rows.map((row) => {
    const mapped = requestOf(row, options);
    /** @type {Run} */
    const r = {
      id: row.id, subset: subsetOf(row), status: 'unsupported', request: 'request' in mapped ? mapped.request : null,
      ttft_ms: null, tpot_ms: null,
      silicon_ttft_ms: Number(row.silicon_ttft_ms), silicon_tpot_ms: Number(row.silicon_tpot_ms),
    };
    if ('reason' in mapped) r.reason = mapped.reason;
    else if (mapped.model_file) r.model_file = mapped.model_file;
    return r;
  });
  const todo = runs.filter((r) => r.request !== null);
  const chunk = 16;
  for (let i = 0; i < todo.length; i += chunk) {
    const part = todo.slice(i, i + chunk);
    serve(part.map((r) => r.request)).forEach((/** @type {any} */ result, j) => settle(part[j], result));
    progress?.(Math.min(i + chunk, todo.length));
  }
  for (const r of todo) if (r.status !== 'priced') fewerWaves(r);
  return runs;
}

/**
 * A run the core refuses as too much simulation work for the protocol's MEASURED_WAVES measured waves
 * (a thousand clients of 8,192-token outputs, say) is priced with as many waves as fit, at least one,
 * and says so (`fewer_measured`: the measured requests used and why), rather than left unsupported.
 * A row that set its own measured_requests keeps the core's refusal: the count is its own.
 * @param {Run} r
 */
function fewerWaves(r) {
  const q = /** @type {any} */ (r.request), w = q.workload;
  const tooLarge = /^too_large at workload\.num_requests/.test(r.reason ?? '');
  if (!tooLarge || !w.concurrency || w.num_requests !== w.warmup_requests + MEASURED_WAVES * w.concurrency) return;
  for (let waves = MEASURED_WAVES - 1; waves >= 1; waves--) {
    const request = { ...q, workload: { ...w, num_requests: w.warmup_requests + waves * w.concurrency } };
    const [result] = serve([request]);
    if (result.error?.code === 'too_large' && result.error.path === 'workload.num_requests') continue;
    const why = `the protocol's ${MEASURED_WAVES * w.concurrency} measured requests: ` +
      String(r.reason).replace(/^too_large at workload\.num_requests: /, '').replace(/; use fewer .*$/, '');
    r.request = request;
    delete r.reason;
    settle(r, result);
    if (r.status === 'priced') r.fewer_measured = { requests: waves * w.concurrency, why };
    return;
  }
}

/** @param {Run} r @param {any} result */
function settle(r, result) {
  if (result.error) {
    r.status = 'unsupported';
    // A document of several requests prefixes paths with the request's index: dropped here.
    const strip = (/** @type {string} */ text) => text.replace(/\[\d+\]\.?/g, '');
    r.reason = `${result.error.code} at ${strip(result.error.path) || '(request)'}: ${strip(result.error.message)}`;
    return;
  }
  r.status = 'priced';
  r.ttft_ms = result.ttft_ms.mean;
  r.tpot_ms = result.tpot_ms.mean;
  r.cause_facts = {
    ttft_p50_ms: result.ttft_ms.p50, ttft_p99_ms: result.ttft_ms.p99, steps: result.steps,
    max_num_batched_tokens: result.engine.max_num_batched_tokens,
    mean_running: result.scheduler.mean_running, preemptions: result.scheduler.preemptions,
    warnings: (result.warnings ?? []).map((/** @type {{code: string}} */ w) => w.code),
  };
}

/**
 * The spread `npm test` re-prices: priced runs taken round-robin over the subsets (sorted by
 * name), the cheapest first in each (fewest simulated tokens: num_requests x (isl + osl),
 * then id), until SPREAD_SIZE. Deterministic given the ledger.
 * @param {Run[]} runs @returns {Run[]}
 */
export function spreadOf(runs) {
  const cost = (/** @type {Run} */ r) => {
    const w = /** @type {any} */ (r.request).workload;
    return w.num_requests * (w.input_tokens + w.output_tokens);
  };
  /** @type {Map<string, Run[]>} */
  const bySubset = new Map();
  for (const r of runs.filter((x) => x.status === 'priced')) {
    if (!bySubset.has(r.subset)) bySubset.set(r.subset, []);
    bySubset.get(r.subset)?.push(r);
  }
  const queues = [...bySubset.keys()].sort().map((k) =>
    (bySubset.get(k) ?? []).sort((a, b) => cost(a) - cost(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  const out = [];
  for (let round = 0; out.length < SPREAD_SIZE && queues.some((q) => q.length > round); ++round)
    for (const q of queues) if (q.length > round && out.length < SPREAD_SIZE) out.push(q[round]);
  return out;
}

/** @param {number[]} errors fractions @returns {number} percent */
export const mape = (errors) => (100 * errors.reduce((s, e) => s + Math.abs(e), 0)) / errors.length;
/** @param {number[]} errors fractions @returns {number} percent */
export const bias = (errors) => (100 * errors.reduce((s, e) => s + e, 0)) / errors.length;
/** @param {Run} r */
export const ttftError = (r) => /** @type {number} */ (r.ttft_ms) / r.silicon_ttft_ms - 1;
/** @param {Run} r */
export const tpotError = (r) => /** @type {number} */ (r.tpot_ms) / r.silicon_tpot_ms - 1;
/** Rounds a figure for the ledger's summaries (the runs keep every digit). @param {number} x */
export const round2 = (x) => Math.round(x * 100) / 100;

/** Overall figures of a set of runs (priced ones only). @param {Run[]} runs */
export function overall(runs) {
  const priced = runs.filter((r) => r.status === 'priced');
  const t = priced.map(ttftError), p = priced.map(tpotError);
  return {
    runs: runs.length, priced: priced.length,
    ttft_mape: priced.length ? round2(mape(t)) : null, ttft_bias: priced.length ? round2(bias(t)) : null,
    tpot_mape: priced.length ? round2(mape(p)) : null, tpot_bias: priced.length ? round2(bias(p)) : null,
  };
}

/**
 * A run's series: its subset, layout and lengths (its setup but for the clients), as the checks of
 * the measurements against each other (repeats, contradictions) group runs.
 * @param {Run} r
 */
function seriesKey(r) {
  const q = /** @type {any} */ (r.request), w = q.workload;
  return [r.subset, q.tp ?? 1, q.ep ?? 1, q.dp ?? 1, w.input_tokens, w.output_tokens].join(' ');
}

/**
 * What the measurements say of themselves where one setup (model, GPU, precision, layout,
 * lengths and clients) was measured more than once. `identical`: the priced runs that repeat an
 * earlier run's measured TTFT and TPOT exactly (one measurement listed under two ids), with the
 * first such pair and the figures over one run per measurement (`distinct`). `spread`: over the
 * setups with two or more different measurements, each measurement's mean absolute deviation
 * from its setup's mean, in percent, the run-to-run spread a perfect estimate of the mean would
 * still show as error.
 * @param {Run[]} runs
 */
export function repeats(runs) {
  /** @type {Map<string, Run[]>} distinct measurements per setup, in CSV order */
  const setups = new Map();
  /** @type {Run[]} */
  const identical = [];
  /** @type {[string, string] | null} */
  let pair = null;
  for (const r of runs) {
    if (r.status !== 'priced') continue;
    const key = `${seriesKey(r)} ${/** @type {any} */ (r.request).workload.concurrency}`;
    const seen = setups.get(key) ?? [];
    const same = seen.find((o) => o.silicon_ttft_ms === r.silicon_ttft_ms && o.silicon_tpot_ms === r.silicon_tpot_ms);
    if (same) {
      identical.push(r);
      pair ??= [same.id, r.id];
    } else {
      seen.push(r);
      setups.set(key, seen);
    }
  }
  const repeated = [...setups.values()].filter((list) => list.length > 1);
  const deviation = (/** @type {(r: Run) => number} */ f) => {
    let sum = 0, n = 0;
    for (const list of repeated) {
      const mean = list.reduce((a, r) => a + f(r), 0) / list.length;
      for (const r of list) { sum += Math.abs(f(r) / mean - 1); n++; }
    }
    return n ? round2((100 * sum) / n) : null;
  };
  const ids = new Set(identical.map((r) => r.id));
  return {
    identical: identical.length, first_identical_pair: pair,
    distinct: overall(runs.filter((r) => r.status === 'priced' && !ids.has(r.id))),
    spread: { setups: repeated.length, runs: repeated.reduce((a, l) => a + l.length, 0),
      ttft_deviation: deviation((r) => r.silicon_ttft_ms), tpot_deviation: deviation((r) => r.silicon_tpot_ms) },
  };
}

// A run's measured TPOT may not fall by more than this share while its clients grow by
// CONTRADICTION_CLIENTS times or more (the same model, GPU, precision, layout and lengths):
// more clients put more requests in every decode step, so each step takes longer.
export const CONTRADICTION_DROP = 0.2;
export const CONTRADICTION_CLIENTS = 4;

/**
 * The priced runs whose measured TPOT contradicts their own series: below (1 - DROP) x the
 * measured TPOT of the same setup at 1 / CLIENTS of their concurrency or fewer (a setup measured
 * more than once: its median run). Each with that run (of the slowest such setup). One of the
 * pair measured something other than what its row says; which one, the data cannot tell.
 * Sorted by id.
 * @param {Run[]} runs
 * @returns {{run: Run, other: Run}[]}
 */
export function contradictions(runs) {
  const req = (/** @type {Run} */ r) => /** @type {any} */ (r.request);
  /** @type {Map<string, Run[]>} */
  const series = new Map();
  for (const r of runs) {
    if (r.status !== 'priced') continue;
    const k = seriesKey(r);
    if (!series.has(k)) series.set(k, []);
    series.get(k)?.push(r);
  }
  const out = [];
  for (const list of series.values()) {
    // A setup measured more than once stands at its median run (the lower middle one of an even
    // count): one odd measurement among repeats does not make the series contradict itself.
    /** @type {Map<number, Run>} */
    const median = new Map();
    for (const c of new Set(list.map((r) => req(r).workload.concurrency))) {
      const same = list.filter((r) => req(r).workload.concurrency === c)
        .sort((a, b) => a.silicon_tpot_ms - b.silicon_tpot_ms || (a.id < b.id ? -1 : 1));
      median.set(c, same[Math.floor((same.length - 1) / 2)]);
    }
    for (const r of list) {
      const c = req(r).workload.concurrency;
      const fewer = [...median.entries()].filter(([k]) => k * CONTRADICTION_CLIENTS <= c).map(([, m]) => m);
      if (!fewer.length) continue;
      const other = fewer.reduce((a, b) => (b.silicon_tpot_ms > a.silicon_tpot_ms ? b : a));
      if (r.silicon_tpot_ms < (1 - CONTRADICTION_DROP) * other.silicon_tpot_ms) out.push({ run: r, other });
    }
  }
  return out.sort((a, b) => (a.run.id < b.run.id ? -1 : 1));
}

// A closed loop keeps each client's request outstanding all the time, so the requests a run has
// in flight are its clients. By Little's law the share of a client's cycle its request spends
// decoding, (osl - 1) x TPOT / (TTFT + (osl - 1) x TPOT), times the clients, is how many were
// decoding at once. A run whose measured count is below IN_FLIGHT_SHARE of the simulated one (the
// simulation has the engine's own limits: max_num_seqs, the KV cache) had fewer requests in
// flight than its clients: a cap its row does not record (the client's or the server's).
export const IN_FLIGHT_SHARE = 0.5;

/**
 * vLLM's running-request cap when an engine is made without `vllm serve`'s defaults for large
 * GPUs (1,024): its SchedulerConfig's own default, max_num_seqs 128 (as the public calibration
 * run's engine logged, docs/SERVING.md). A cap of that kind holds requests outside the batch.
 */
export const ENGINE_DEFAULT_MAX_NUM_SEQS = 128;

/**
 * Each run re-priced with the running requests capped at ENGINE_DEFAULT_MAX_NUM_SEQS (a
 * diagnostic for the runs with fewer requests in flight than clients): mean TTFT and TPOT, ms.
 * @param {Run[]} runs @returns {{ttft_ms: number, tpot_ms: number}[]}
 */
export function pricedAtEngineCap(runs) {
  return serve(runs.map((r) => {
    const q = /** @type {any} */ (r.request);
    return { ...q, id: undefined, engine: { ...(q.engine ?? {}), max_num_seqs: ENGINE_DEFAULT_MAX_NUM_SEQS } };
  })).map((/** @type {any} */ res) => ({ ttft_ms: res.ttft_ms.mean, tpot_ms: res.tpot_ms.mean }));
}

/**
 * Requests decoding at once by Little's law from mean TTFT and TPOT (ms), over `clients`.
 * @param {number} clients @param {number} outputTokens @param {number} ttftMs @param {number} tpotMs
 */
export function decodingAtOnce(clients, outputTokens, ttftMs, tpotMs) {
  const decoding = (outputTokens - 1) * tpotMs;
  return clients * decoding / (ttftMs + decoding);
}

/**
 * The priced closed-loop runs that decoded fewer requests at once than their clients allow:
 * measured below IN_FLIGHT_SHARE of simulated (decodingAtOnce). Each with both counts, by id.
 * @param {Run[]} runs
 * @returns {{run: Run, measured: number, simulated: number}[]}
 */
export function fewerInFlight(runs) {
  const out = [];
  for (const r of runs) {
    const w = /** @type {any} */ (r.request)?.workload;
    if (r.status !== 'priced' || !(w?.concurrency > 0) || !(w.output_tokens > 1)) continue;
    const measured = decodingAtOnce(w.concurrency, w.output_tokens, r.silicon_ttft_ms, r.silicon_tpot_ms);
    const simulated = decodingAtOnce(w.concurrency, w.output_tokens, /** @type {number} */ (r.ttft_ms),
      /** @type {number} */ (r.tpot_ms));
    if (measured < IN_FLIGHT_SHARE * simulated) out.push({ run: r, measured, simulated });
  }
  return out.sort((a, b) => (a.run.id < b.run.id ? -1 : 1));
}
