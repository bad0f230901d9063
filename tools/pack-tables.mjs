// SPDX-License-Identifier: Apache-2.0
// Generates the embedded data of the core from the repo's sources of truth:
//   bench_data/**/*.csv  -> a packed, lossless table blob (format: docs/TABLES.md)
//   presets/models/*.json -> model preset texts
//   presets/gpus/*.json   -> GPU constants (GpuPresetData; the folder next to presets/models)
// bench_data/aic/ (the measured kernel database) is packed separately, by pack-kernels.mjs.
// Usage: node tools/pack-tables.mjs BENCH_DIR PRESET_DIR OUT.cpp [OUT.bin]
// The .cpp is compiled into the core; the optional .bin is the bare blob (size reports).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { Writer } from './byte-writer.mjs';

const [benchDir, presetDir, outCpp, outBin] = process.argv.slice(2);
if (!benchDir || !presetDir || !outCpp) {
  console.error('usage: node tools/pack-tables.mjs BENCH_DIR PRESET_DIR OUT.cpp [OUT.bin]');
  process.exit(2);
}

function fail(msg) {
  console.error(`pack-tables: ${msg}`);
  process.exit(1);
}

function listCsv(dir, prefix = '') {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (rel === 'aic') continue;  // the measured kernel database: tools/pack-kernels.mjs
    if (entry.isDirectory()) out.push(...listCsv(path.join(dir, entry.name), rel));
    else if (entry.name.endsWith('.csv')) out.push(rel);
  }
  return out;
}

const NUMBER = /^-?(\d+)(?:\.(\d+))?$/;
const KIND = { delta: 0, text: 1, dict: 2, series: 3, ratio: 4, grid: 5 };
// Payloads are written after all headers, grouped by rank (keys, then kernel times,
// then MFUs) so that alike numbers sit together for gzip; a rank only depends on
// columns of a lower rank or earlier in its table, so the decoder can follow.
const RANK = { [KIND.delta]: 0, [KIND.dict]: 0, [KIND.series]: 1, [KIND.ratio]: 2 };

// A numeric column as integers at the column's largest decimal count. The decoded
// double is integer / 10^scale: both operands are exact doubles and the division is
// correctly rounded, so it equals the double the CSV text denotes (strtod, Number()).
function scaledColumn(rel, cells) {
  const scale = Math.max(0, ...cells.map((v) => (NUMBER.exec(v)[2] || '').length));
  const ints = cells.map((cell) => {
    const [, whole, frac = ''] = NUMBER.exec(cell);
    const n = Number(whole + frac.padEnd(scale, '0'));
    if (!Number.isSafeInteger(n)) fail(`${rel}: ${cell} too large to pack`);
    return cell.startsWith('-') ? -n : n;
  });
  const p = pow10(scale);
  return { scale, ints, values: ints.map((n) => n / p) };
}

// 10^n by repeated multiplication (exact up to 10^22), as the decoder computes it.
function pow10(n) {
  let p = 1;
  for (let i = 0; i < n; i += 1) p *= 10;
  return p;
}

const roundHalfUp = (x) => (Number.isFinite(x) && Math.abs(x) < 2 ** 52 ? Math.floor(x + 0.5) : 0);

function seriesPrediction(ints, x, r, same) {
  if (r >= 2 && same(r, r - 1) && same(r, r - 2) && x[r - 1] !== x[r - 2]) {
    return roundHalfUp(ints[r - 1] + ((ints[r - 1] - ints[r - 2]) * (x[r] - x[r - 1])) / (x[r - 1] - x[r - 2]));
  }
  if (r >= 1 && same(r, r - 1) && x[r - 1] !== 0) return roundHalfUp((ints[r - 1] * x[r]) / x[r - 1]);
  return 0;
}

// Every encoding that fits the column: {kind, head, body}.
function candidates(column, decoded, header) {
  const { scale, ints } = column;
  const make = (kind, writeHead, writeBody) => {
    const head = new Writer();
    const body = new Writer();
    head.byte(kind);
    head.byte(scale);
    writeHead(head);
    writeBody(body);
    return { kind, head: head.bytes, body: body.bytes };
  };
  const out = [make(KIND.delta, () => {}, (w) => w.deltas(ints))];
  const dict = [...new Set(ints)].sort((a, b) => a - b);
  if (dict.length <= 64) {
    out.push(make(KIND.dict, (w) => (w.varint(dict.length), w.deltas(dict)),
      (w) => ints.forEach((v) => w.varint(dict.indexOf(v)))));
  }
  const numericBefore = decoded.map((d, i) => (d ? i : -1)).filter((i) => i >= 0);
  // Series: a row predicted from the previous rows with the same key columns, by
  // linear extrapolation along an axis column (kernel time grows ~linearly with size).
  for (const axis of numericBefore) {
    const keys = numericBefore.filter((i) => i !== axis);
    const x = decoded[axis].values;
    const same = (a, b) => keys.every((k) => decoded[k].ints[a] === decoded[k].ints[b]);
    out.push(make(KIND.series, (w) => (w.varint(axis), w.varint(keys.length), keys.forEach((k) => w.varint(k))),
      (w) => ints.forEach((v, r) => w.zigzag(v - seriesPrediction(ints, x, r, same)))));
  }
  // Ratio: MFU = work / latency / P, rounded, with work a product of earlier columns.
  const latency = header.indexOf('latency_us');
  const work = { m: ['m', 'k', 'n'], batch_size: ['batch_size', 'kv_len'], seq_len: ['seq_len', 'seq_len'] };
  const basis = Object.keys(work).find((k) => header.includes(k));
  if (latency >= 0 && decoded[latency] && basis && work[basis].every((n) => decoded[header.indexOf(n)])) {
    const factors = work[basis].map((n) => header.indexOf(n));
    const product = (r) => factors.reduce((acc, f) => acc * decoded[f].values[r], 1);
    const lat = decoded[latency].values;
    // P (work per second at MFU 1) from the row of largest MFU; the decoder computes
    // it the same way from that row's numbers, so only the row and its MFU are stored.
    const top = ints.reduce((b, v, r) => (v > ints[b] && lat[r] > 0 ? r : b), 0);
    const P = product(top) / lat[top] / (ints[top] / pow10(scale));
    if (Number.isFinite(P) && P > 0 && ints[top] > 0) {
      const writeHead = (w) => {
        w.varint(latency);
        w.varint(factors.length);
        factors.forEach((f) => w.varint(f));
        w.varint(top);
        w.varint(ints[top]);
      };
      out.push(make(KIND.ratio, writeHead,
        (w) => ints.forEach((v, r) => w.zigzag(v - roundHalfUp((product(r) / lat[r] / P) * pow10(scale))))));
    }
  }
  return out;
}

// Key columns whose rows list a sorted grid (e.g. batch_size x kv_len) are stored as
// their axes plus one presence bit per grid cell, in lexicographic order of `order`.
function findGrid(rel, header, rows) {
  const keys = header
    .map((name, c) => c)
    .filter((c) => !['latency_us', 'mfu'].includes(header[c]) && rows.every((r) => NUMBER.test(r[c])));
  const orders = permutations(keys).filter((o) => o.length > 0);
  for (const order of orders) {
    const cols = Object.fromEntries(order.map((c) => [c, scaledColumn(rel, rows.map((r) => r[c]))]));
    const tuples = rows.map((_, r) => order.map((c) => cols[c].ints[r]));
    const less = (a, b) => {
      const i = a.findIndex((v, j) => v !== b[j]);
      return i >= 0 && a[i] < b[i];
    };
    if (!tuples.every((t, i) => i === 0 || less(tuples[i - 1], t))) continue;
    const axes = order.map((c) => [...new Set(cols[c].ints)].sort((a, b) => a - b));
    const cells = axes.reduce((n, a) => n * a.length, 1);
    if (cells > 8 * rows.length) continue;
    const present = new Set(tuples.map((t) => t.join(',')));
    const bits = [];
    const walk = (prefix, depth) => {
      if (depth === order.length) return bits.push(present.has(prefix.join(',')) ? 1 : 0);
      for (const v of axes[depth]) walk([...prefix, v], depth + 1);
    };
    walk([], 0);
    const bitmap = [];
    for (let i = 0; i < bits.length; i += 8) bitmap.push(bits.slice(i, i + 8).reduce((b, bit, j) => b | (bit << j), 0));
    order.forEach((c, i) => (cols[c].axis = axes[i]));
    return { order, columns: cols, bitmap };
  }
  return { order: [], columns: {}, bitmap: [] };
}

function permutations(list) {
  if (list.length <= 1) return [list];
  return list.flatMap((x, i) => permutations([...list.slice(0, i), ...list.slice(i + 1)]).map((p) => [x, ...p]));
}

const files = listCsv(benchDir);
if (files.length === 0) fail(`no CSV files under ${benchDir}`);
const head = new Writer();
const payloads = [];
head.raw(Buffer.from('SCT4'));
let csvBytes = 0;
const parsed = files.map((rel) => {
  const raw = fs.readFileSync(path.join(benchDir, rel), 'utf8');
  csvBytes += Buffer.byteLength(raw);
  const lines = raw.split(/\r?\n/).filter((l) => l.length > 0);
  const header = lines[0].split(',');
  const rows = lines.slice(1).map((l) => l.split(','));
  rows.forEach((r, i) => {
    if (r.length !== header.length) fail(`${rel}: row ${i + 2} has ${r.length} fields, header ${header.length}`);
  });
  return { rel, header, rows };
});
// Distinct CSV headers ("schemas") are written once; each table names its schema.
const schemas = [...new Set(parsed.map((p) => p.header.join(',')))];
head.varint(schemas.length);
for (const schema of schemas) {
  const names = schema.split(',');
  head.varint(names.length);
  names.forEach((n) => head.text(n));
}
head.varint(files.length);
parsed.forEach(({ rel, header, rows }, t) => {
  head.text(rel.replace(/\.csv$/, ''));
  head.varint(schemas.indexOf(header.join(',')));
  head.varint(rows.length);
  const grid = findGrid(rel, header, rows);
  head.varint(grid.order.length);
  for (const c of grid.order) {
    const { scale, axis } = grid.columns[c];
    head.varint(c);
    head.byte(scale);
    head.varint(axis.length);
    head.deltas(axis);
  }
  head.raw(grid.bitmap);
  const decoded = []; // per column: { ints, values, scale }, null for text
  header.forEach((name, c) => {
    if (grid.columns[c]) {
      head.byte(KIND.grid);
      decoded.push(grid.columns[c]);
      return;
    }
    const cells = rows.map((r) => r[c]);
    if (!cells.every((v) => NUMBER.test(v))) {
      if (!cells.every((v) => v === cells[0])) fail(`${rel}: text column ${name} is not constant`);
      head.byte(KIND.text);
      head.text(cells[0] ?? '');
      decoded.push(null);
      return;
    }
    const column = scaledColumn(rel, cells);
    // Keep the candidate that compresses best: the blob travels gzipped in the .wasm.
    const cost = (k) => zlib.deflateRawSync(Buffer.from(k.body), { level: 9 }).length + k.head.length;
    const best = candidates(column, decoded, header).reduce((a, b) => (cost(b) < cost(a) ? b : a));
    head.raw(best.head);
    payloads.push({ rank: RANK[best.kind], table: t, column: c, body: best.body });
    decoded.push(column);
  });
});
payloads.sort((a, b) => a.rank - b.rank || a.table - b.table || a.column - b.column);
const blob = Buffer.from([...head.bytes, ...payloads.flatMap((p) => p.body)]);


// Only the config keys the core reads are embedded (the full configs stay in
// presets/models/); this keeps the Wasm module small. The first line is what the
// reference model reads, the rest what the ModelSpec reads (core/io/model_spec_config.cpp).
const MODEL_KEYS = new Set([
  'num_hidden_layers', 'hidden_size', 'num_attention_heads', 'num_key_value_heads', 'num_kv_heads',
  'multi_query_group_num', 'intermediate_size', 'ffn_hidden_size', 'torch_dtype', 'dtype', 'vocab_size',
  'head_dim', 'num_local_experts', 'n_routed_experts', 'num_experts', 'num_experts_per_tok', 'kv_lora_rank',
  'sliding_window', 'use_sliding_window', 'moe_intermediate_size', 'text_config',
  'architectures', 'model_type', 'tie_word_embeddings', 'hidden_act', 'hidden_activation', 'use_qk_norm',
  'qk_norm_type', 'vision_config',
  'quantization_config', 'moe_topk', 'first_k_dense_replace', 'moe_layer_freq', 'interleave_moe_layer_step',
  'decoder_sparse_step', 'mlp_only_layers', 'n_shared_experts', 'shared_expert_intermediate_size',
  'intermediate_size_mlp', 'q_lora_rank', 'qk_nope_head_dim', 'qk_rope_head_dim', 'v_head_dim',
  'attention_chunk_size', 'index_topk', 'index_n_heads', 'index_head_dim', 'num_nextn_predict_layers',
  'max_position_embeddings', 'n_positions', 'max_seq_len', 'seq_length', 'max_sequence_length', 'model_max_length',
  'rope_scaling', 'layer_types', 'sliding_window_pattern',
  'attn_output_gate', 'full_attention_interval', 'linear_num_key_heads', 'linear_num_value_heads',
  'linear_key_head_dim', 'linear_value_head_dim', 'linear_conv_kernel_dim', 'linear_attn_config',
  'num_experts_per_token', 'num_shared_experts',
]);
// linear_attn_config (Kimi delta attention): what check_kda and read_linear read.
const KDA_KEYS = new Set(['kda_layers', 'num_heads', 'head_dim', 'short_conv_kernel_size']);
// rope_scaling: what the context length's scaling reads (read_context in model_spec_config.cpp).
const ROPE_KEYS = new Set(['rope_type', 'type', 'factor', 'original_max_position_embeddings']);
// quantization_config: the method and weight format only; module lists (hundreds of
// names, one per layer) keep one entry per pattern, layer numbers written as N.
const QUANT_KEYS = new Set(['quant_method', 'quant_algo', 'config_groups', 'weight_block_size', 'fmt']);
const MODULE_LISTS = new Set(['ignore', 'modules_to_not_convert', 'ignored_layers']);
function keepQuantKeys(q) {
  const out = {};
  for (const [key, value] of Object.entries(q)) {
    if (QUANT_KEYS.has(key)) out[key] = value;
    else if (MODULE_LISTS.has(key) && Array.isArray(value))
      out[key] = [...new Set(value.map((name) => String(name).replace(/\d+/g, 'N')))].sort();
  }
  return out;
}
function keepModelKeys(config) {
  const out = {};
  for (const [key, value] of Object.entries(config)) {
    if (!MODEL_KEYS.has(key)) continue;
    const isObject = value && typeof value === 'object' && !Array.isArray(value);
    if (key === 'text_config' && isObject) out[key] = keepModelKeys(value);
    else if (key === 'quantization_config' && isObject) out[key] = keepQuantKeys(value);
    else if (key === 'vision_config') out[key] = {};  // only its presence is read
    else if (key === 'linear_attn_config' && isObject) {
      out[key] = Object.fromEntries(Object.entries(value).filter(([k]) => KDA_KEYS.has(k)));
    }
    else if (key === 'rope_scaling' && isObject) {
      out[key] = Object.fromEntries(Object.entries(value).filter(([k]) => ROPE_KEYS.has(k)));
    }
    else out[key] = value;
  }
  return out;
}

/**
 * The fields of `struct NAME` in declaration order, read from the header under core/ that
 * declares it. Every field must be a `double` with a default (`double name = 0;`): a
 * field of another type, or a struct that cannot be found, fails the build here instead
 * of shifting the generated values into the wrong fields.
 */
function structFields(name) {
  const coreDir = fileURLToPath(new URL('../core/', import.meta.url));
  const declaration = new RegExp(`^struct ${name} \\{\\n([\\s\\S]*?)^\\};`, 'm');
  const headers = fs.readdirSync(coreDir, { recursive: true }).map(String).filter((f) => f.endsWith('.h')).sort();
  const found = headers.map((f) => ({ f, m: declaration.exec(fs.readFileSync(path.join(coreDir, f), 'utf8')) }))
    .filter(({ m }) => m);
  if (found.length !== 1) fail(`struct ${name} is declared in ${found.length} headers under core/ (expected 1)`);
  const [{ f, m }] = found;
  const members = m[1].split('\n').map((line) => line.replace(/\/\/.*$/, '').trim()).filter(Boolean);
  return members.map((member) => {
    const field = /^double (\w+) = [^;]+;$/.exec(member);
    if (!field) fail(`core/${f}: ${name} member "${member}" is not "double name = value;"`);
    return field[1];
  });
}

const presets = fs
  .readdirSync(presetDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => {
    const json = JSON.parse(fs.readFileSync(path.join(presetDir, f), 'utf8'));
    return { name: f.replace(/\.json$/, ''), json: JSON.stringify(keepModelKeys(json)) };
  });

const gzipped = zlib.gzipSync(blob, { level: 9 }).length;
const hex = [...blob].map((b) => `0x${b.toString(16).padStart(2, '0')}`);
const lines = [];
for (let i = 0; i < hex.length; i += 16) lines.push(`    ${hex.slice(i, i + 16).join(',')},`);
const cString = (s) => JSON.stringify(s); // JSON string escapes are valid C++ escapes here (ASCII input)
for (const p of presets) if (/[^\x20-\x7e]/.test(p.json)) fail(`preset ${p.name} has non-ASCII text`);

// GPU constants, compiled in as data (the core reads no JSON for them).
const gpuDir = path.join(presetDir, '..', 'gpus');
// GpuConstants is filled by aggregate initialisation, by position: its fields and their
// order are read from the header that declares the struct, and each value is looked up
// in presets/gpus/<gpu>.json by that name, so neither list is typed here again.
const GPU_FIELDS = structFields('GpuConstants');
const gpuJson = [];  // presets().gpu_specs, written verbatim by the core
const GPU_JSON_FIELDS = ['name', 'device', 'memory_bytes', 'hbm_bw_bytes_per_s', 'bf16_tflops', 'fp8_tflops',
  'int8_tflops',
  'interconnect', 'nvlink_bw_bytes_per_s', 'pcie_bw_bytes_per_s', 'inter_node_bw_bytes_per_s', 'gpus_per_node',
  'other_mem_bytes', 'nccl_mem_bytes', 'aic_system', 'kernels_from', 'kernels',
  'default_kernels', 'source'];
// By name ("a100" before "a100-pcie": a plain sort of the file names puts '-' before '.').
const byName = (/** @type {string} */ a, /** @type {string} */ b) =>
  (a.replace(/\.json$/, '') < b.replace(/\.json$/, '') ? -1 : 1);
const gpus = fs.existsSync(gpuDir) ? fs.readdirSync(gpuDir).filter((f) => f.endsWith('.json')).sort(byName).map((f) => {
  const g = JSON.parse(fs.readFileSync(path.join(gpuDir, f), 'utf8'));
  gpuJson.push(Object.fromEntries(GPU_JSON_FIELDS.map((k) => [k, g[k]])));
  const num = (v, what) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) fail(`presets/gpus/${f}: ${what} is not a number`);
    return Number.isInteger(v) ? `${v}.0` : String(v);
  };
  const nccl = g.nccl_mem_bytes;
  if (!Array.isArray(nccl) ||
    nccl.length !== 4) fail(`presets/gpus/${f}: nccl_mem_bytes needs 4 numbers (TP 1, 2, 4, 8)`);
  const fields = [
    cString(g.name), cString(g.device), cString(g.interconnect),
    `{${GPU_FIELDS.map((k) => num(g[k], k)).join(', ')}}`,
    `{${nccl.map((v, i) => num(v, `nccl_mem_bytes[${i}]`)).join(', ')}}`,
    cString(g.kernels.join(',')), cString(g.default_kernels), cString(g.aic_system ?? ''),
    cString(g.kernels_from ?? ''),
  ];
  return `    {${fields.join(', ')}},`;
}) : [];


const cpp = `// GENERATED by tools/pack-tables.mjs from bench_data/ and presets/models/. Do not edit.
// ${files.length} CSV files, ${csvBytes} bytes of CSV -> ${blob.length} bytes packed (${gzipped} gzipped).
#include <cstddef>
#include <cstdint>

#include "kernels/embedded_data.h"

namespace stepcalc::embedded {

const uint8_t kTablesBlob[] = {
${lines.join('\n')}
};
const size_t kTablesBlobSize = sizeof(kTablesBlob);
const size_t kTablesCsvBytes = ${csvBytes};

const PresetText kModelPresets[] = {
${presets.map((p) => `    {${cString(p.name)}, ${cString(p.json)}},`).join('\n')}
};
const size_t kModelPresetCount = ${presets.length};

const GpuPresetData kGpuPresets[] = {
${gpus.join('\n')}
};
const size_t kGpuPresetCount = ${gpus.length};
const char* const kGpuPresetsJson = ${cString(JSON.stringify(gpuJson))};

}  // namespace stepcalc::embedded
`;
fs.mkdirSync(path.dirname(outCpp), { recursive: true });
const previous = fs.existsSync(outCpp) ? fs.readFileSync(outCpp, 'utf8') : '';
if (previous !== cpp) fs.writeFileSync(outCpp, cpp);
if (outBin) fs.writeFileSync(outBin, blob);
