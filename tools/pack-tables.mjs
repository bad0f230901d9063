// Generates the embedded data of the core from the repo's sources of truth:
//   bench_data/**/*.csv  -> a packed, lossless table blob (format: docs/TABLES.md)
//   presets/models/*.json -> model preset texts
// Usage: node tools/pack-tables.mjs BENCH_DIR PRESET_DIR OUT.cpp [OUT.bin]
// The .cpp is compiled into the core; the optional .bin is the bare blob (size reports).
import fs from 'node:fs';
import path from 'node:path';

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
    if (entry.isDirectory()) out.push(...listCsv(path.join(dir, entry.name), rel));
    else if (entry.name.endsWith('.csv')) out.push(rel);
  }
  return out;
}

const bytes = [];
const varint = (v) => {
  if (!Number.isSafeInteger(v) || v < 0) fail(`varint out of range: ${v}`);
  while (v >= 0x80) {
    bytes.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  bytes.push(v);
};
const zigzag = (v) => varint(v >= 0 ? 2 * v : -2 * v - 1);
const text = (s) => {
  const b = Buffer.from(s, 'utf8');
  varint(b.length);
  bytes.push(...b);
};

const NUMBER = /^-?(\d+)(?:\.(\d+))?$/;
const files = listCsv(benchDir);
if (files.length === 0) fail(`no CSV files under ${benchDir}`);
bytes.push(...Buffer.from('SCT1'));
varint(files.length);
let csvBytes = 0;
for (const rel of files) {
  const raw = fs.readFileSync(path.join(benchDir, rel), 'utf8');
  csvBytes += Buffer.byteLength(raw);
  const lines = raw.split(/\r?\n/).filter((l) => l.length > 0);
  const header = lines[0].split(',');
  const rows = lines.slice(1).map((l) => l.split(','));
  rows.forEach((r, i) => {
    if (r.length !== header.length) fail(`${rel}: row ${i + 2} has ${r.length} fields, header ${header.length}`);
  });
  text(rel.replace(/\.csv$/, ''));
  varint(header.length);
  varint(rows.length);
  header.forEach((name, c) => {
    text(name);
    const cells = rows.map((r) => r[c]);
    if (!cells.every((v) => NUMBER.test(v))) {
      if (!cells.every((v) => v === cells[0])) fail(`${rel}: text column ${name} is not constant`);
      bytes.push(1);
      text(cells[0] ?? '');
      return;
    }
    // Numeric column: scaled to integers with the column's largest decimal count,
    // then delta-coded. value = integer / 10^scale reproduces strtod(cell) exactly
    // because both operands are exact doubles and the division is correctly rounded.
    const scale = Math.max(0, ...cells.map((v) => (NUMBER.exec(v)[2] || '').length));
    const scaled = cells.map((cell) => {
      const [, whole, frac = ''] = NUMBER.exec(cell);
      const n = Number(whole + frac.padEnd(scale, '0'));
      if (!Number.isSafeInteger(n)) fail(`${rel}: ${cell} too large to pack`);
      return cell.startsWith('-') ? -n : n;
    });
    // Key columns (few distinct values) go as a sorted dictionary plus one index per
    // row; measured columns as deltas from the previous row.
    const dict = [...new Set(scaled)].sort((a, b) => a - b);
    const useDict = dict.length <= 64 && dict.length * 4 < scaled.length;
    bytes.push(useDict ? 2 : 0, scale);
    const deltas = (values) => values.reduce((prev, v) => (zigzag(v - prev), v), 0);
    if (useDict) {
      varint(dict.length);
      deltas(dict);
      for (const v of scaled) varint(dict.indexOf(v));
    } else {
      deltas(scaled);
    }
  });
}
const blob = Buffer.from(bytes);

// Only the config keys the core reads are embedded (the full configs stay in
// presets/models/); this keeps the Wasm module small.
const MODEL_KEYS = new Set([
  'num_hidden_layers', 'hidden_size', 'num_attention_heads', 'num_key_value_heads', 'num_kv_heads',
  'multi_query_group_num', 'intermediate_size', 'ffn_hidden_size', 'torch_dtype', 'dtype', 'vocab_size',
  'head_dim', 'num_local_experts', 'n_routed_experts', 'num_experts', 'num_experts_per_tok', 'kv_lora_rank',
  'sliding_window', 'use_sliding_window', 'moe_intermediate_size', 'text_config',
]);
function keepModelKeys(config) {
  const out = {};
  for (const [key, value] of Object.entries(config)) {
    if (!MODEL_KEYS.has(key)) continue;
    out[key] = key === 'text_config' && value && typeof value === 'object' ? keepModelKeys(value) : value;
  }
  return out;
}

const presets = fs
  .readdirSync(presetDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => {
    const json = JSON.parse(fs.readFileSync(path.join(presetDir, f), 'utf8'));
    return { name: f.replace(/\.json$/, ''), json: JSON.stringify(keepModelKeys(json)) };
  });

const hex = [...blob].map((b) => `0x${b.toString(16).padStart(2, '0')}`);
const lines = [];
for (let i = 0; i < hex.length; i += 16) lines.push(`    ${hex.slice(i, i + 16).join(',')},`);
const cString = (s) => JSON.stringify(s); // JSON string escapes are valid C++ escapes here (ASCII input)
for (const p of presets) if (/[^\x20-\x7e]/.test(p.json)) fail(`preset ${p.name} has non-ASCII text`);

const cpp = `// GENERATED by tools/pack-tables.mjs from bench_data/ and presets/models/. Do not edit.
// ${files.length} CSV files, ${csvBytes} bytes of CSV -> ${blob.length} bytes packed.
#include <cstddef>
#include <cstdint>

#include "embedded_data.h"

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

}  // namespace stepcalc::embedded
`;
fs.mkdirSync(path.dirname(outCpp), { recursive: true });
const previous = fs.existsSync(outCpp) ? fs.readFileSync(outCpp, 'utf8') : '';
if (previous !== cpp) fs.writeFileSync(outCpp, cpp);
if (outBin) fs.writeFileSync(outBin, blob);
